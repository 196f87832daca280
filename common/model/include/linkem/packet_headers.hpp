// What the queue disciplines read and write in a packet (linkem/bottleneck.hpp): the flow it
// belongs to (FQ-CoDel's 5-tuple hash) and its ECN field (RFC 3168), which a discipline sets
// to CE instead of dropping the packet. Plain functions over an Ethernet frame's bytes, so
// that the data plane, the simulator and the tests share them.
#pragma once

#include <cstdint>
#include <cstring>

namespace linkem {

namespace detail {

inline std::uint16_t load16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

// The IP header of a frame: its offset (past the Ethernet header and up to two VLAN tags)
// and version (4 or 6); 0 when the frame carries no IP packet it can read.
inline int ip_header(const std::uint8_t* f, std::uint32_t len, std::uint32_t& at) {
    at = 12;
    for (int tags = 0; tags <= 2; ++tags) {
        if (len < at + 2) return 0;
        const std::uint16_t type = load16(f + at);
        if (type == 0x8100 || type == 0x88a8) {
            at += 4;
            continue;
        }
        at += 2;
        if (type == 0x0800 && len >= at + 20 && (f[at] >> 4) == 4) return 4;
        if (type == 0x86dd && len >= at + 40 && (f[at] >> 4) == 6) return 6;
        return 0;
    }
    return 0;
}

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 31);
}

}  // namespace detail

/// The flow of an Ethernet frame as FQ-CoDel sees it: a hash of its 5-tuple (addresses,
/// protocol, and the ports of TCP, UDP, SCTP and UDP-Lite; IPv4 fragments, the first
/// included, so that a datagram's fragments are one flow, and IPv6 packets with extension
/// headers by their addresses and protocol only), of the ethertype for frames without IP. The same
/// bytes give the same hash on every machine.
inline std::uint32_t flow_hash(const std::uint8_t* f, std::uint32_t len) {
    std::uint32_t at;
    const int v = detail::ip_header(f, len, at);
    std::uint64_t h = 0x51ed2701;
    if (v == 0)
        return static_cast<std::uint32_t>(detail::mix(h, len >= 14 ? detail::load16(f + 12) : 0));
    std::uint8_t proto;
    std::uint32_t l4;
    bool ports;
    if (v == 4) {
        const std::uint32_t ihl = (f[at] & 0xfu) * 4u;
        proto = f[at + 9];
        std::uint32_t a, b;
        std::memcpy(&a, f + at + 12, 4);
        std::memcpy(&b, f + at + 16, 4);
        h = detail::mix(detail::mix(h, a), b);
        const bool fragment = (detail::load16(f + at + 6) & 0x3fff) != 0;  // MF or an offset
        l4 = at + ihl;
        ports = !fragment && ihl >= 20;
    } else {
        proto = f[at + 6];
        std::uint64_t w[4];
        std::memcpy(w, f + at + 8, 32);
        for (std::uint64_t x : w)
            h = detail::mix(h, x);
        l4 = at + 40;
        ports = true;
    }
    h = detail::mix(h, proto);
    if (ports && (proto == 6 || proto == 17 || proto == 132 || proto == 136) && len >= l4 + 4) {
        std::uint32_t p;
        std::memcpy(&p, f + l4, 4);
        h = detail::mix(h, p);
    }
    return static_cast<std::uint32_t>(h ^ (h >> 32));
}

/// The ECN field (RFC 3168) of an IP frame: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; -1 without
/// an IP header.
inline int ecn_codepoint(const std::uint8_t* f, std::uint32_t len) {
    std::uint32_t at;
    const int v = detail::ip_header(f, len, at);
    if (v == 4) return f[at + 1] & 3;
    if (v == 6) return (detail::load16(f + at) >> 4) & 3;
    return -1;
}

/// Marks an ECN-capable IP frame "congestion experienced": ECT(0) or ECT(1) becomes CE, the
/// IPv4 header checksum updated (RFC 1624's incremental update; IPv6 has none). True when the
/// frame is ECN-capable (a CE frame stays CE and counts as marked, as Linux's
/// INET_ECN_set_ce has it); false for Not-ECT and frames without IP, which are not changed.
inline bool mark_ce(std::uint8_t* f, std::uint32_t len) {
    std::uint32_t at;
    const int v = detail::ip_header(f, len, at);
    if (v == 4) {
        const std::uint8_t tos = f[at + 1];
        const int ecn = tos & 3;
        if (ecn == 0) return false;
        if (ecn == 3) return true;
        // HC' = ~(~HC + ~m + m'), over the 16-bit word that holds the TOS byte.
        const std::uint16_t old_word = detail::load16(f + at);
        f[at + 1] = static_cast<std::uint8_t>(tos | 3);
        const std::uint16_t new_word = detail::load16(f + at);
        std::uint32_t sum = static_cast<std::uint16_t>(~detail::load16(f + at + 10));
        sum += static_cast<std::uint16_t>(~old_word);
        sum += new_word;
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        const auto hc = static_cast<std::uint16_t>(~sum);
        f[at + 10] = static_cast<std::uint8_t>(hc >> 8);
        f[at + 11] = static_cast<std::uint8_t>(hc);
        return true;
    }
    if (v == 6) {
        const int ecn = (detail::load16(f + at) >> 4) & 3;
        if (ecn == 0) return false;
        f[at + 1] = static_cast<std::uint8_t>(f[at + 1] | 0x30);
        return true;
    }
    return false;
}

}  // namespace linkem
