#include "linkem/stats_table.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace linkem {

void print_stats_table(std::FILE* out, const LinkStats& s, const LinkStats* last, bool final) {
    const double dt = last ? static_cast<double>(s.t_ns - last->t_ns) / 1e9 : 0;
    auto rate = [&](std::uint64_t now, std::uint64_t before) {
        char buf[32];
        if (dt > 0 && now >= before)
            std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(now - before) / dt);
        else
            std::snprintf(buf, sizeof buf, "-");
        return std::string(buf);
    };
    std::fprintf(out, "%s t=%.3fs\n", final ? "final" : "stats", static_cast<double>(s.t_ns) / 1e9);
    // One column per drop cause (kDropCauses), headed by its name, at least 10 wide.
    auto cause_width = [](const DropCauseInfo& c) {
        return std::max(10, static_cast<int>(std::strlen(c.name)));
    };
    std::fprintf(out, "  %-7s %14s %14s %11s %11s", "dir", "rx", "tx", "rx pps", "tx pps");
    for (const DropCauseInfo& c : kDropCauses)
        std::fprintf(out, " %*s", cause_width(c), c.name);
    std::fprintf(out, " %10s %10s %9s %6s %9s %12s %7s\n", "waited", "ecn_marked", "in_flight",
                 "tx_q", "alpha", "R (pps)", "stalls");
    for (unsigned d = 0; d < s.directions && d < 2; ++d) {
        const CounterSnapshot& c = s.dir[d].counters;
        const CounterSnapshot* p = last && d < last->directions ? &last->dir[d].counters : nullptr;
        std::fprintf(out, "  %-7s %14llu %14llu %11s %11s", kDirectionKeys[d],
                     static_cast<unsigned long long>(c.packets_in),
                     static_cast<unsigned long long>(c.packets_out),
                     p ? rate(c.packets_in, p->packets_in).c_str() : "-",
                     p ? rate(c.packets_out, p->packets_out).c_str() : "-");
        for (const DropCauseInfo& dc : kDropCauses)
            std::fprintf(out, " %*llu", cause_width(dc),
                         static_cast<unsigned long long>(c.drops[dc.cause]));
        std::fprintf(out, " %10llu %10llu %9llu %6llu %9.6f %12.0f %7llu\n",
                     static_cast<unsigned long long>(c.waited),
                     static_cast<unsigned long long>(c.ecn_marked),
                     static_cast<unsigned long long>(c.in_flight),
                     static_cast<unsigned long long>(s.dir[d].tx_queued), c.alpha, c.rate_pps,
                     static_cast<unsigned long long>(s.dir[d].stalls));
    }
    for (unsigned p = 0; p < s.ports && p < 2; ++p) {
        const PortStats& ps = s.port[p];
        std::fprintf(out,
                     "  port %s (%s): rx %llu tx %llu rx_missed %llu rx_nombuf %llu tx_failed "
                     "%llu, link %s\n",
                     kPortNames[p], ps.name.c_str(), static_cast<unsigned long long>(ps.rx),
                     static_cast<unsigned long long>(ps.tx),
                     static_cast<unsigned long long>(ps.rx_missed),
                     static_cast<unsigned long long>(ps.rx_nombuf),
                     static_cast<unsigned long long>(ps.tx_failed), ps.link_up ? "up" : "down");
    }
}

}  // namespace linkem
