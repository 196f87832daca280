// linkemd: the DPDK data plane of linkem. See options.hpp for the command line and
// docs/protocol.md for the control and telemetry sockets.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "linkem/malloc_policy.hpp"
#include "linkem/units.hpp"

#include "controller.hpp"
#include "generator.hpp"
#include "linkem/capture_flags.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/dataplane/eal.hpp"
#include "linkem/dataplane/virtual_port.hpp"
#include "monitor.hpp"
#include "options.hpp"
#include "port_claim.hpp"
#include "server.hpp"
#include "stats_output.hpp"

namespace {

using namespace linkem;
using namespace linkem::linkemd;
using Clock = std::chrono::steady_clock;

void log(const std::string& msg) {
    std::fprintf(stderr, "linkemd: %s\n", msg.c_str());
}

// Blocks the signals before the EAL creates its threads (they inherit the mask); the main
// loop reads them from the returned signalfd next to the control socket, so nothing runs in
// a handler and a signal wakes the loop at once.
int block_signals() {
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    // A reader of --stats-json that goes away must not kill us before the ports are stopped.
    signal(SIGPIPE, SIG_IGN);
    const int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd < 0) throw std::runtime_error("signalfd failed");
    return sfd;
}

dp::EalOptions eal_options(const Options& o, const dp::DataplaneConfig& dc, unsigned n_dirs,
                           bool virt) {
    dp::EalOptions eo;
    eo.worker_lcores = dp::worker_lcores_needed(dc.workers, n_dirs);
    eo.memory_mib = dp::eal_memory_mib(dc.mbufs);
    for (const std::string& port : {dc.port_a, dc.port_b})
        if (!port.empty() && !virt) {
            const dp::PortSpec spec = dp::resolve_port(port, "port");
            if (spec.pci) eo.pci_devices.push_back(spec.name);
        }
    eo.raw_args = o.eal_args;
    return eo;
}

// The virtual ports of the built-in traffic generator, as dc's ports.
void open_virtual_ports(dp::Eal& eal, const Options& o, unsigned n_dirs, dp::DataplaneConfig& dc,
                        std::optional<dp::VirtualPort>& virt_a,
                        std::optional<dp::VirtualPort>& virt_b) {
    const unsigned queues = dp::queues_per_port(dc.workers);
    virt_a.emplace(eal, "lk_a", 8192, 16383, dp::VirtualPort::FramePool::rx_queue, queues);
    dc.port_a = virt_a->name();
    if (n_dirs == 2) {
        virt_b.emplace(eal, "lk_b", 8192, 16383, dp::VirtualPort::FramePool::rx_queue, queues);
        dc.port_b = virt_b->name();
    }
    log("virtual ports " + dc.port_a + (n_dirs == 2 ? " and " + dc.port_b : std::string()) +
        ": the built-in traffic generator " +
        (o.traffic.running
             ? "sends " + format_rate(o.traffic.spec.rate_bps) + " of " +
                   std::string(to_string(o.traffic.spec.pattern)) + " traffic, " +
                   std::to_string(o.traffic.spec.frame_bytes) + " B frames, " + "in each direction"
             : "is stopped (set_traffic starts it)"));
}

void start_control_server(const Options& o, Controller& controller, const std::string& instance_id,
                          std::optional<control::Server>& server) {
    control::ServerOptions so;
    so.control = o.control.control;
    so.telemetry = o.control.telemetry;
    so.curve_secret = o.control.curve_secret;
    so.curve_allow = o.control.curve_allow;
    so.insecure_listen = o.control.insecure_listen;
    server.emplace(
        so, controller, instance_id, [] { return dp::now_ns(); }, log);
    controller.attach(&*server);
    log("control on " + server->control_endpoint() + ", telemetry on " +
        server->telemetry_endpoint() + " (instance " + instance_id + ")");
}

// The main thread once the data plane runs: it waits on the control socket (if any) and the
// signalfd, and does the periodic work: the controller's tick, the monitor's check once a
// second, a --stats-interval line, the allocator's free memory handed back once a minute.
// Until a signal, a shutdown request or --duration.
class MainLoop {
  public:
    MainLoop(const Options& o, int sfd, dp::Dataplane& dataplane, Controller& controller,
             control::Server* server)
        : o_(o),
          sfd_(sfd),
          dataplane_(dataplane),
          controller_(controller),
          server_(server),
          printer_(o.stats_json),
          start_(Clock::now()),
          interval_(o.stats_interval),
          next_stats_(start_ + interval_),
          next_check_(start_),
          next_tick_(start_),
          next_trim_(start_ + kReturnFreeMemoryEvery) {}

    void run() {
        for (;;) {
            wait(Clock::now());
            bool stop = read_signals();
            if (controller_.shutdown_requested()) stop = true;
            const auto now = Clock::now();
            if (o_.duration && now - start_ >= std::chrono::nanoseconds(*o_.duration)) stop = true;
            if (stop) return;
            periodic(now);
        }
    }

    // After run() (and the traffic generator stopped): the data plane stopped, and its final
    // counters printed and published.
    void stop_dataplane() {
        dataplane_.stop();
        const dp::DataplaneStats final_stats = dataplane_.stats();
        // The last check: a stall or a full buffer since the one before (up to 1 s) is still
        // said.
        for (const proto::Event& e : monitor_.check(final_stats, dataplane_.link()))
            controller_.event(e);
        const capture::Status cap = dataplane_.capture_status();
        printer_.print(final_stats, true, &cap);
        controller_.publish_final(final_stats);
    }

  private:
    // Until the next periodic work is due (at most 200 ms), or a request or a signal comes.
    void wait(Clock::time_point now) {
        auto wake = std::min({now + std::chrono::milliseconds(200), next_check_, next_tick_});
        if (o_.stats_interval > 0) wake = std::min(wake, next_stats_);
        if (o_.duration) wake = std::min(wake, start_ + std::chrono::nanoseconds(*o_.duration));
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
            std::max<Clock::duration>(wake - now, Clock::duration::zero()));
        if (server_) {
            server_->serve(wait, sfd_);
        } else {
            pollfd p{sfd_, POLLIN, 0};
            ::poll(&p, 1, static_cast<int>(wait.count()));
        }
    }

    // The signals received: SIGHUP reloads the configuration; true for SIGINT or SIGTERM.
    bool read_signals() {
        bool stop = false;
        signalfd_siginfo si;
        while (read(sfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
            if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
                log(std::string("received ") + (si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM") +
                    ", stopping");
                stop = true;
            } else if (si.ssi_signo == SIGHUP) {
                controller_.reload("SIGHUP");
            }
        }
        return stop;
    }

    void periodic(Clock::time_point now) {
        if (now >= next_tick_) next_tick_ = controller_.tick(now);
        if (now >= next_check_) {
            for (const proto::Event& e : monitor_.check(dataplane_.stats(), dataplane_.link()))
                controller_.event(e);
            next_check_ = now + std::chrono::seconds(1);
        }
        if (now >= next_trim_) {
            return_free_memory();
            next_trim_ = now + kReturnFreeMemoryEvery;
        }
        if (o_.stats_interval > 0 && now >= next_stats_) {
            const capture::Status cap = dataplane_.capture_status();
            printer_.print(dataplane_.stats(), false, &cap);
            next_stats_ += interval_;
            if (next_stats_ <= now) next_stats_ = now + interval_;
        }
    }

    const Options& o_;
    const int sfd_;
    dp::Dataplane& dataplane_;
    Controller& controller_;
    control::Server* const server_;
    StatsPrinter printer_;
    Monitor monitor_;
    const Clock::time_point start_;
    const std::chrono::nanoseconds interval_;
    Clock::time_point next_stats_, next_check_, next_tick_, next_trim_;
};

int run(const CommandLine& cl, const Options& o) {
    const int sfd = block_signals();
    dp::DataplaneConfig dc = o.dataplane;
    const unsigned n_dirs = dc.port_b.empty() ? 1 : 2;
    const bool virt = virtual_ports(o);
    // Before the EAL opens them: a port another linkemd drives is refused (port_claim.hpp).
    const PortClaims claims(virt ? std::vector<std::pair<std::string, std::string>>{}
                                 : std::vector<std::pair<std::string, std::string>>{
                                       {"--port-a", dc.port_a}, {"--port-b", dc.port_b}});
    dp::Eal eal(eal_options(o, dc, n_dirs, virt));
    // Virtual ports: created here, so that they outlive the data plane that uses them.
    std::optional<dp::VirtualPort> virt_a, virt_b;
    if (virt) open_virtual_ports(eal, o, n_dirs, dc, virt_a, virt_b);
    dp::Dataplane dataplane(eal, dc);
    log("a_to_b seed " + std::to_string(dataplane.seed(0)) +
        (n_dirs == 2 ? ", b_to_a seed " + std::to_string(dataplane.seed(1)) : std::string()));

    const std::string instance_id = proto::new_instance_id();
    std::optional<gen::Generator> generator;
    if (virt)
        generator.emplace(&*virt_a, virt_b ? &*virt_b : nullptr, dc.delay_samples_per_s, o.traffic);
    Controller controller(cl, o, dataplane, instance_id, generator ? &*generator : nullptr);
    std::optional<control::Server> server;
    if (o.control.enabled) start_control_server(o, controller, instance_id, server);
    // --capture before the data plane starts: its file holds the first packet received (a
    // capture started after it missed what arrived in between, more on a busy machine).
    if (o.capture) {
        try {
            controller.start_capture(*o.capture);
        } catch (const ParamError& e) {
            // The direction or class not of this link, the file not creatable.
            throw UsageError(capture_flag_name(e.field(), "--capture-", "--capture") + ": " +
                             e.message());
        }
    }
    dataplane.start();
    if (!o.scenario.empty()) controller.scenario().play_at_start(o.scenario);
    if (generator) generator->start();
    controller.event(proto::Event::info("started", "linkemd " + std::string(version()) +
                                                       " running (instance " + instance_id + ")"));

    MainLoop loop(o, sfd, dataplane, controller, server ? &*server : nullptr);
    loop.run();
    controller.stop_capture();  // the file finished before the data plane stops
    if (server) {
        controller.event(proto::Event::info("stopping", "linkemd stopping"));
        // Let a shutdown request's reply leave before the sockets close.
        server->serve(std::chrono::milliseconds(0));
    }
    if (generator) generator->stop();
    loop.stop_dataplane();
    close(sfd);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    keep_large_blocks_mapped();
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
    } catch (const UsageError& e) {  // --capture refused by the data plane
        log(e.what());
        return 2;
    } catch (const linkem::ParamError& e) {
        log(e.what());
        return 2;
    } catch (const linkem::control::ServerError& e) {
        log(e.what());
        return 2;
    } catch (const std::exception& e) {
        log(e.what());
        return 1;
    }
}
