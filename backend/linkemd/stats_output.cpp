#include "stats_output.hpp"

#include <algorithm>
#include <string>

namespace linkem::linkemd {

using nlohmann::json;

namespace {
// The names of the directions and ports, as in the JSON lines and the table.
const char* const* kDir = kDirectionNames;
const char* const* kPort = kPortNames;
}  // namespace

void StatsPrinter::print(const dp::DataplaneStats& s, bool final) {
    if (json_) {
        std::fprintf(out_, "%s\n", to_json(s, final).dump().c_str());
    } else {
        table(s, final);
    }
    std::fflush(out_);
    last_ = s;
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
