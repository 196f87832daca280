// linkemd: the DPDK data plane of linkem. See options.hpp for the command line.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "linkem/dataplane/dataplane.hpp"
#include "linkem/dataplane/eal.hpp"
#include "options.hpp"
#include "stats_output.hpp"

namespace {

using namespace linkem;
using namespace linkem::linkemd;
using Clock = std::chrono::steady_clock;

void log(const std::string& msg) {
    std::fprintf(stderr, "linkemd: %s\n", msg.c_str());
}

// Re-reads --config and applies it with the same flags on top; a bad file changes nothing.
void reload(const CommandLine& cl, const Options& running, dp::Dataplane& dp) {
    if (cl.config.empty()) {
        log("SIGHUP: no --config file to re-read; nothing changed");
        return;
    }
    try {
        const Options next = build_options(cl);
        const dp::DataplaneConfig& a = running.dataplane;
        const dp::DataplaneConfig& b = next.dataplane;
        if (a.port_a != b.port_a || a.port_b != b.port_b || a.layout != b.layout ||
            a.burst != b.burst || (next.mbufs_given && a.mbufs != b.mbufs))
            log("SIGHUP: ports, lcores, burst and mbufs need a restart; those changes are "
                "ignored");
        const std::uint64_t gen = dp.apply(b.link);
        if (dp.wait_applied(gen, std::chrono::seconds(2)))
            log("SIGHUP: " + cl.config + " applied (generation " + std::to_string(gen) + ")");
        else
            log("SIGHUP: " + cl.config + " published (generation " + std::to_string(gen) +
                "), not yet acknowledged by the data plane");
    } catch (const std::exception& e) {
        log(std::string("SIGHUP: config not applied, nothing changed: ") + e.what());
    }
}

// Warnings worth one line each, once: the pool or the emulator buffer running full.
struct Warnings {
    bool nombuf[2] = {false, false};
    bool full[2] = {false, false};
    std::optional<bool> link_up[2];

    void check(const dp::DataplaneStats& s, const dp::Dataplane& dp) {
        for (unsigned p = 0; p < s.ports; ++p) {
            if (link_up[p] && *link_up[p] != s.port[p].link_up)
                log("port " + s.port[p].name + ": link " + (s.port[p].link_up ? "up" : "down"));
            link_up[p] = s.port[p].link_up;
        }
        for (unsigned p = 0; p < s.ports; ++p)
            if (!nombuf[p] && s.port[p].rx_nombuf > 0) {
                nombuf[p] = true;
                log("warning: port " + s.port[p].name +
                    ": the mempool ran dry (rx_nombuf); packets are lost before the emulator; "
                    "raise --mbufs");
            }
        const dp::LinkConfig link = dp.link();
        for (unsigned d = 0; d < s.directions; ++d)
            if (!full[d] && s.dir[d].counters.drops_buffer_full > 0) {
                full[d] = true;
                const std::uint64_t user =
                    d == 0 ? link.a_to_b.buffer_limit_packets : link.b_to_a.buffer_limit_packets;
                const std::string dir = d == 0 ? "a_to_b" : "b_to_a";
                if (s.dir[d].buffer_limit < user)
                    log("warning: " + dir + ": the emulator holds " +
                        std::to_string(s.dir[d].buffer_limit) +
                        " packets, all the mempool allows; more are dropped as buffer_full; "
                        "raise --mbufs");
                else
                    log("warning: " + dir + ": buffer_limit_packets (" + std::to_string(user) +
                        ") reached; more are dropped as buffer_full");
            }
    }
};

int run(const CommandLine& cl, const Options& o) {
    // Block the signals before the EAL creates its threads (they inherit the mask), so
    // they all reach the main thread's sigtimedwait() and nothing runs in a handler.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    // A reader of --stats-json that goes away must not kill us before the ports are stopped.
    signal(SIGPIPE, SIG_IGN);

    const dp::DataplaneConfig& dc = o.dataplane;
    const unsigned n_dirs = dc.port_b.empty() ? 1 : 2;
    dp::EalOptions eo;
    eo.worker_lcores = dp::worker_lcores_needed(dc.layout, n_dirs);
    eo.memory_mib = dp::eal_memory_mib(dc.mbufs);
    for (const std::string& port : {dc.port_a, dc.port_b})
        if (!port.empty()) {
            const dp::PortSpec spec = dp::resolve_port(port, "port");
            if (spec.pci) eo.pci_devices.push_back(spec.name);
        }
    eo.raw_args = o.eal_args;

    dp::Eal eal(eo);
    dp::Dataplane dataplane(eal, dc);
    log("a_to_b seed " + std::to_string(dataplane.seed(0)) +
        (n_dirs == 2 ? ", b_to_a seed " + std::to_string(dataplane.seed(1)) : std::string()));
    dataplane.start();

    StatsPrinter printer(o.stats_json);
    Warnings warnings;
    const auto start = Clock::now();
    const auto interval = std::chrono::nanoseconds(o.stats_interval);
    auto next_stats = start + interval;
    for (;;) {
        auto now = Clock::now();
        auto wake = now + std::chrono::milliseconds(200);
        if (o.stats_interval > 0) wake = std::min(wake, next_stats);
        if (o.duration) wake = std::min(wake, start + std::chrono::nanoseconds(*o.duration));
        const auto wait = std::max<Clock::duration>(wake - now, Clock::duration::zero());
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
        timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
        const int sig = sigtimedwait(&sigs, nullptr, &ts);
        if (sig == SIGINT || sig == SIGTERM) {
            log(std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ", stopping");
            break;
        }
        if (sig == SIGHUP) reload(cl, o, dataplane);
        now = Clock::now();
        if (o.duration && now - start >= std::chrono::nanoseconds(*o.duration)) break;
        const dp::DataplaneStats s = dataplane.stats();
        warnings.check(s, dataplane);
        if (o.stats_interval > 0 && now >= next_stats) {
            printer.print(s, false);
            next_stats += interval;
            if (next_stats <= now) next_stats = now + interval;
        }
    }
    dataplane.stop();
    printer.print(dataplane.stats(), true);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::optional<CommandLine> cl;
    Options options;
    try {
        cl = parse_command_line(argc, argv);
        if (!cl) return 0;
        options = build_options(*cl);
    } catch (const UsageError& e) {
        log(e.what());
        return 2;
    }
    if (options.print_config) {
        std::cout << to_json(options).dump(2) << "\n";
        return 0;
    }
    try {
        return run(*cl, options);
    } catch (const linkem::ParamError& e) {
        log(e.what());
        return 2;
    } catch (const std::exception& e) {
        log(e.what());
        return 1;
    }
}
