// Workers, port specifications and pool sizing: everything decided before the EAL starts.
#include <net/if.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "linkem/dataplane/dataplane.hpp"

namespace linkem::dp {

std::optional<Workers> parse_workers(std::string_view s) {
    if (s == "shared") return Workers{.shared = true};
    unsigned n = 0;
    if (s.empty() || s.size() > 2) return std::nullopt;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    if (n < 1 || n > kMaxWorkers) return std::nullopt;
    return Workers{.shared = false, .per_direction = n};
}

std::string to_string(Workers w) {
    return w.shared ? "shared" : std::to_string(w.per_direction);
}

unsigned worker_lcores_needed(Workers w, unsigned directions) {
    return w.shared ? 1 : w.per_direction * directions;
}

unsigned queues_per_port(Workers w) {
    return w.shared ? 1 : w.per_direction;
}

void refuse_unshared(const LinkParams& p, unsigned queues) {
    if (p.limiter == Limiter::trace && queues > 1)
        throw ParamError("limiter",
                         "'trace' works with one worker per direction (its trace is not shared "
                         "between workers, each would deliver all of it); run with --workers 1 "
                         "or shared, or use the spacer");
    if (p.uses_bottleneck() && queues > 1)
        throw ParamError("queue",
                         "'" + std::string(to_string(p.queue)) +
                             "' (or a limit in packets) works with one worker per direction "
                             "(a queue discipline decides on one queue, not one per worker); "
                             "run with --workers 1 or shared, or use queue droptail with a "
                             "limit in bytes");
}

Workers default_workers(unsigned cpus) {
    return cpus < 4 ? Workers{.shared = true} : Workers{.shared = false, .per_direction = 1};
}

PortSpec resolve_port(const std::string& text, const std::string& field, unsigned queues) {
    PortSpec spec;
    spec.text = text;
    if (text.empty())
        throw ParamError(field,
                         "a port is required: a DPDK device (net_null0, net_ring0, "
                         "net_tap0,iface=lk0, 0000:3b:00.0) or a network interface name");
    const std::string head = text.substr(0, text.find(','));
    static const std::regex pci(R"(^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$)");
    if (std::regex_match(head, pci)) {
        spec.pci = true;
        spec.devargs = text;
        spec.name = head.size() == 7 ? "0000:" + head : head;
        std::transform(spec.name.begin(), spec.name.end(), spec.name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        return spec;
    }
    if (head.starts_with("net_") || head.starts_with("eth_") ||
        text.find(',') != std::string::npos) {
        spec.devargs = text;
        spec.name = head;
        return spec;
    }
    if (text.size() >= IFNAMSIZ || if_nametoindex(text.c_str()) == 0)
        throw ParamError(field, "'" + text +
                                    "' is neither a DPDK device (net_null0, net_ring0, "
                                    "net_tap0,iface=lk0, net_pcap0,rx_pcap=in.pcap, a PCI "
                                    "address) nor a network interface of this host");
    spec.interface = true;
    spec.name = "net_af_packet_" + text;
    // A receive ring of 8192 frames (the PMD's default is 512): a sender's burst of a few
    // thousand frames fits (at 50 000 frames/s: 160 ms of traffic) instead of being dropped
    // by the kernel; 2048-byte frames hold 1518-byte Ethernet frames; qdisc_bypass sends
    // straight to the driver. The kernel's drops still show in rx_missed (packet_socket.hpp).
    spec.devargs = spec.name + ",iface=" + text + "," + std::string(kAfPacketDevargs);
    // Several queues: one socket each, joined in a fanout group that hashes flows on them.
    if (queues > 1) spec.devargs += ",qpairs=" + std::to_string(queues);
    return spec;
}

std::uint32_t default_mbufs(const LinkConfig& link, unsigned directions, unsigned workers) {
    constexpr double kLinePps = 10e9 / (84 * 8);  // 10 GbE, minimum-size frames
    double total = 0;
    for (unsigned d = 0; d < directions; ++d) {
        const LinkParams& p = link.direction(d);
        // A trace's rate varies (and its queue is the backlog it builds): as without a limiter.
        const bool rated = p.limiter == Limiter::spacer || p.limiter == Limiter::policer;
        const double pps = rated ? p.rate_bps / (84 * 8) : kLinePps;
        const double hold_s = static_cast<double>(p.mean_delay + 4 * p.jitter) / kNsPerSec + 1e-3;
        double n = pps * hold_s + 4096;
        if (p.limiter == Limiter::spacer) n += static_cast<double>(p.queue_limit_bytes) / 64;
        if (p.uses_bottleneck() && p.queue_limit_packets > 0)
            n += static_cast<double>(p.queue_limit_packets);
        total += n;
    }
    return static_cast<std::uint32_t>(
        std::min<double>(std::clamp(total, 65535.0, 262143.0) * std::max(1u, workers), kMaxMbufs));
}

std::size_t eal_memory_mib(std::uint32_t mbufs) {
    // Used with --no-huge. The pools normally live in memory linkemd maps itself
    // (transparent huge pages, see make_pktmbuf_pool); this much EAL memory is for the
    // fallback to DPDK's own pool memory, where the pool keeps each ~2.3 KiB object from
    // crossing a 4 KiB page, so each takes a page. It costs nothing until touched (a sparse
    // memfd). The rest covers descriptor rings and the EAL itself.
    constexpr double kBytesPerMbuf = 4096;
    return static_cast<std::size_t>(mbufs * kBytesPerMbuf / (1 << 20)) + 256;
}

}  // namespace linkem::dp
