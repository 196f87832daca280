#include "stats_output.hpp"

#include <algorithm>
#include <string>

namespace linkem::linkemd {

using nlohmann::json;

namespace {
// The names of the directions and ports, as in the JSON lines and the table.
constexpr const char* kDir[2] = {"a_to_b", "b_to_a"};
constexpr const char* kPort[2] = {"a", "b"};
}  // namespace

json stats_to_json(const dp::DataplaneStats& s, bool final) {
    json j = json::object();
    j["t_ns"] = s.t_ns;
    j["final"] = final;
    for (unsigned d = 0; d < s.directions; ++d) {
        json c = to_json(s.dir[d].counters);
        c["tx_queued"] = s.dir[d].tx_queued;
        c["params_generation"] = s.dir[d].params_generation;
        c["stalls"] = s.dir[d].stalls;
        c["stall_ns"] = s.dir[d].stall_ns;
        c["longest_stall_ns"] = s.dir[d].longest_stall_ns;
        j[kDir[d]] = std::move(c);
    }
    json ports = json::object();
    for (unsigned p = 0; p < s.ports; ++p) {
        const dp::PortStats& ps = s.port[p];
        ports[kPort[p]] = {{"rx", ps.rx},
                           {"tx", ps.tx},
                           {"rx_missed", ps.rx_missed},
                           {"rx_nombuf", ps.rx_nombuf},
                           {"tx_failed", ps.tx_failed}};
    }
    j["ports"] = std::move(ports);
    return j;
}

void StatsPrinter::print(const dp::DataplaneStats& s, bool final) {
    warn_stalls(s);
    if (json_) {
        std::fprintf(out_, "%s\n", stats_to_json(s, final).dump().c_str());
    } else {
        table(s, final);
    }
    std::fflush(out_);
    last_ = s;
}

// Not every stall is worth a line: a machine that is not set up for polling (no isolated
// CPUs) takes the lcore away for ~0.1-0.5 ms some ten times a second, which a 10 ms delay
// hardly notices. Warned: a stall longer than any before and of 1 ms or more, or stalls
// taking 1% or more of the interval.
void StatsPrinter::warn_stalls(const dp::DataplaneStats& s) {
    constexpr std::uint64_t kNotable = 1'000'000;  // ns
    for (unsigned d = 0; d < s.directions; ++d) {
        const dp::DirectionStats& now = s.dir[d];
        const std::uint64_t before_n = last_ ? last_->dir[d].stalls : 0;
        const std::uint64_t before_ns = last_ ? last_->dir[d].stall_ns : 0;
        if (now.stalls <= before_n) continue;
        const std::uint64_t stalled = now.stall_ns - before_ns;
        const bool record =
            now.longest_stall_ns > warned_longest_[d] && now.longest_stall_ns >= kNotable;
        const bool often = last_ && s.t_ns > last_->t_ns &&
                           stalled * 100 >= static_cast<std::uint64_t>(s.t_ns - last_->t_ns);
        if (!record && !often) continue;
        warned_longest_[d] = std::max(warned_longest_[d], now.longest_stall_ns);
        std::fprintf(err_,
                     "linkemd: warning: direction %s: the data plane did not run for %.3f ms in "
                     "%llu stall(s) since the last report (longest since start %.3f ms): packets "
                     "arriving or due then left up to that late (README: \"Stalls\")\n",
                     kDir[d], static_cast<double>(stalled) / 1e6,
                     static_cast<unsigned long long>(now.stalls - before_n),
                     static_cast<double>(now.longest_stall_ns) / 1e6);
    }
    std::fflush(err_);
}

void StatsPrinter::table(const dp::DataplaneStats& s, bool final) {
    const double dt = last_ ? static_cast<double>(s.t_ns - last_->t_ns) / 1e9 : 0;
    auto rate = [&](std::uint64_t now, std::uint64_t before) {
        return dt > 0 ? static_cast<double>(now - before) / dt : 0.0;
    };
    std::fprintf(out_, "%s t=%.3fs\n", final ? "final" : "stats",
                 static_cast<double>(s.t_ns) / 1e9);
    std::fprintf(out_, "  %-7s %14s %14s %11s %11s %10s %10s %10s %10s %9s %6s %9s %12s %7s\n",
                 "dir", "rx", "tx", "rx pps", "tx pps", "loss", "policer", "spacer", "buf_full",
                 "in_flight", "tx_q", "alpha", "R (pps)", "stalls");
    for (unsigned d = 0; d < s.directions; ++d) {
        const CounterSnapshot& c = s.dir[d].counters;
        const CounterSnapshot* p = last_ ? &last_->dir[d].counters : nullptr;
        std::fprintf(out_,
                     "  %-7s %14llu %14llu %11.0f %11.0f %10llu %10llu %10llu %10llu %9llu %6llu "
                     "%9.6f %12.0f %7llu\n",
                     kDir[d], static_cast<unsigned long long>(c.packets_in),
                     static_cast<unsigned long long>(c.packets_out),
                     p ? rate(c.packets_in, p->packets_in) : 0.0,
                     p ? rate(c.packets_out, p->packets_out) : 0.0,
                     static_cast<unsigned long long>(c.drops_loss),
                     static_cast<unsigned long long>(c.drops_policer),
                     static_cast<unsigned long long>(c.drops_spacer),
                     static_cast<unsigned long long>(c.drops_buffer_full),
                     static_cast<unsigned long long>(c.in_flight),
                     static_cast<unsigned long long>(s.dir[d].tx_queued), c.alpha, c.rate_pps,
                     static_cast<unsigned long long>(s.dir[d].stalls));
    }
    for (unsigned p = 0; p < s.ports; ++p) {
        const dp::PortStats& ps = s.port[p];
        std::fprintf(out_,
                     "  port %s (%s): rx %llu tx %llu rx_missed %llu rx_nombuf %llu tx_failed "
                     "%llu, link %s\n",
                     kPort[p], ps.name.c_str(), static_cast<unsigned long long>(ps.rx),
                     static_cast<unsigned long long>(ps.tx),
                     static_cast<unsigned long long>(ps.rx_missed),
                     static_cast<unsigned long long>(ps.rx_nombuf),
                     static_cast<unsigned long long>(ps.tx_failed), ps.link_up ? "up" : "down");
    }
}

}  // namespace linkem::linkemd
