#include "monitor.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace linkem::linkemd {

namespace {

proto::Event port_event(const char* kind, const char* severity, std::string message,
                        unsigned port) {
    proto::Event e = proto::Event::make(kind, severity, std::move(message));
    e.port = kPortNames[port];
    return e;
}

proto::Event direction_event(const char* kind, std::string message, const std::string& dir) {
    proto::Event e = proto::Event::warning(kind, std::move(message));
    e.direction = dir;
    return e;
}

}  // namespace

std::vector<proto::Event> Monitor::check(const dp::DataplaneStats& s, const LinkConfig& link) {
    std::vector<proto::Event> out;
    for (unsigned p = 0; p < s.ports; ++p) {
        const dp::PortStats& ps = s.port[p];
        if (link_up_[p] && *link_up_[p] != ps.link_up) {
            out.push_back(port_event("link", ps.link_up ? "info" : "warning",
                                     "port " + ps.name + ": link " + (ps.link_up ? "up" : "down"),
                                     p));
            out.back().link_up = ps.link_up;
        }
        link_up_[p] = ps.link_up;
        if (!nombuf_[p] && ps.rx_nombuf > 0) {
            nombuf_[p] = true;
            out.push_back(port_event("pool", "warning",
                                     "warning: port " + ps.name +
                                         ": the mempool ran dry (rx_nombuf); packets are lost "
                                         "before the emulator; raise --mbufs",
                                     p));
        }
    }
    for (unsigned d = 0; d < s.directions; ++d) {
        const dp::DirectionStats& ds = s.dir[d];
        const std::string dir = kDirectionKeys[d];
        if (!full_[d] && ds.counters.drops[DropCause::buffer_full] > 0) {
            full_[d] = true;
            const std::uint64_t user = link.direction(d).buffer_limit_packets;
            const std::string msg =
                ds.buffer_limit < user
                    ? "warning: " + dir + ": the emulator holds " +
                          std::to_string(ds.buffer_limit) +
                          " packets, all the mempool allows; more are dropped as buffer_full; "
                          "raise --mbufs"
                    : "warning: " + dir + ": buffer_limit_packets (" + std::to_string(user) +
                          ") reached; more are dropped as buffer_full";
            out.push_back(direction_event("buffer_full", msg, dir));
        }
        // Not every stall is worth a line: a machine that is not set up for polling (no
        // isolated CPUs) takes the lcore away for ~0.1-0.5 ms some ten times a second, which
        // a 10 ms delay hardly notices. Warned: a stall longer than any before and of 1 ms or
        // more, or stalls taking 1% or more of the time since the previous check.
        constexpr std::uint64_t kNotable = 1'000'000;  // ns
        const std::uint64_t before_n = last_ ? last_->dir[d].stalls : 0;
        const std::uint64_t before_ns = last_ ? last_->dir[d].stall_ns : 0;
        if (ds.stalls <= before_n) continue;
        const std::uint64_t stalled = ds.stall_ns - before_ns;
        const bool record =
            ds.longest_stall_ns > warned_longest_[d] && ds.longest_stall_ns >= kNotable;
        const bool often = last_ && s.t_ns > last_->t_ns &&
                           stalled * 100 >= static_cast<std::uint64_t>(s.t_ns - last_->t_ns);
        if (!record && !often) continue;
        warned_longest_[d] = std::max(warned_longest_[d], ds.longest_stall_ns);
        char msg[320];
        std::snprintf(msg, sizeof msg,
                      "warning: direction %s: the data plane did not run for %.3f ms in %llu "
                      "stall(s) since the last report (longest since start %.3f ms): packets "
                      "arriving or due then left up to that late (docs/dataplane.md: \"Stalls\")",
                      dir.c_str(), static_cast<double>(stalled) / 1e6,
                      static_cast<unsigned long long>(ds.stalls - before_n),
                      static_cast<double>(ds.longest_stall_ns) / 1e6);
        proto::Event& e = out.emplace_back(direction_event("stall", msg, dir));
        e.stall_ns = stalled;
        e.stalls = ds.stalls - before_n;
        e.longest_stall_ns = ds.longest_stall_ns;
    }
    last_ = s;
    return out;
}

}  // namespace linkem::linkemd
