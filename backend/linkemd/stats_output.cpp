#include "stats_output.hpp"

#include <string>

namespace linkem::linkemd {

using nlohmann::json;

json stats_to_json(const dp::DataplaneStats& s, bool final) {
    json j = json::object();
    j["t_ns"] = s.t_ns;
    j["final"] = final;
    static constexpr const char* kDir[2] = {"a_to_b", "b_to_a"};
    static constexpr const char* kPort[2] = {"a", "b"};
    for (unsigned d = 0; d < s.directions; ++d) {
        json c = to_json(s.dir[d].counters);
        c["tx_queued"] = s.dir[d].tx_queued;
        c["params_generation"] = s.dir[d].params_generation;
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
    if (json_) {
        std::fprintf(out_, "%s\n", stats_to_json(s, final).dump().c_str());
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
    std::fprintf(out_, "  %-7s %14s %14s %11s %11s %10s %10s %10s %10s %9s %6s %9s %12s\n", "dir",
                 "rx", "tx", "rx pps", "tx pps", "loss", "policer", "spacer", "buf_full",
                 "in_flight", "tx_q", "alpha", "R (pps)");
    static constexpr const char* kDir[2] = {"a_to_b", "b_to_a"};
    for (unsigned d = 0; d < s.directions; ++d) {
        const CounterSnapshot& c = s.dir[d].counters;
        const CounterSnapshot* p = last_ ? &last_->dir[d].counters : nullptr;
        std::fprintf(out_,
                     "  %-7s %14llu %14llu %11.0f %11.0f %10llu %10llu %10llu %10llu %9llu %6llu "
                     "%9.6f %12.0f\n",
                     kDir[d], static_cast<unsigned long long>(c.packets_in),
                     static_cast<unsigned long long>(c.packets_out),
                     p ? rate(c.packets_in, p->packets_in) : 0.0,
                     p ? rate(c.packets_out, p->packets_out) : 0.0,
                     static_cast<unsigned long long>(c.drops_loss),
                     static_cast<unsigned long long>(c.drops_policer),
                     static_cast<unsigned long long>(c.drops_spacer),
                     static_cast<unsigned long long>(c.drops_buffer_full),
                     static_cast<unsigned long long>(c.in_flight),
                     static_cast<unsigned long long>(s.dir[d].tx_queued), c.alpha, c.rate_pps);
    }
    static constexpr const char* kPort[2] = {"a", "b"};
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
