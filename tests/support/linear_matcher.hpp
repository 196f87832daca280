// The oracle of the traffic classes (docs/classes.md): a plain linear matcher written from
// the rules as the documentation states them, sharing no code with linkem's classifier
// (common/model/src/classes.cpp). It takes a packet's fields as the sender wrote them
// (RawPacket), not a parsed PacketKey, so that a test that builds a frame from a RawPacket
// and classifies it with parse_packet_key + Classifier checks the parser too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "linkem/classes.hpp"

namespace linkem::test {

/// A packet's fields as written into its frame.
struct RawPacket {
    int vlan = -1;           // the tag's VLAN id; -1: no tag
    int ethertype = 0x0800;  // the ethertype after the tag (if any)
    int ip_version = 4;      // 4 or 6: an IP header of that version follows; 0: none does
    int protocol = 17;       // IPv4 protocol / IPv6 Next Header
    IpAddress src{}, dst{};  // IPv4: the first 4 bytes
    int dscp = 0;
    int src_port = 0, dst_port = 0;  // the first 4 bytes after the IP header
    bool later_fragment = false;     // IPv4: a fragment offset other than 0
};

namespace oracle {

inline bool bit(const IpAddress& a, int i) {
    return (a[static_cast<std::size_t>(i / 8)] >> (7 - i % 8)) & 1;
}

/// Whether `a` of IP version `version` begins with the prefix's bits.
inline bool in_prefix(const IpPrefix& p, int version, const IpAddress& a) {
    const int want = p.family == IpFamily::ipv4 ? 4 : 6;
    if (version != want) return false;
    for (int i = 0; i < p.length; ++i)
        if (bit(a, i) != bit(p.address, i)) return false;
    return true;
}

/// A packet carries ports when it is IP, its protocol is TCP, UDP or SCTP, and it is not an
/// IPv4 fragment after the first.
inline bool carries_ports(const RawPacket& p) {
    const bool l4 = p.protocol == 6 || p.protocol == 17 || p.protocol == 132;
    return p.ip_version != 0 && l4 && !(p.ip_version == 4 && p.later_fragment);
}

/// Whether every key of `m` holds on `p` seen going `direction` (0: A to B, 1: B to A).
/// A's side is the source going A to B, the destination going B to A.
inline bool match_holds(const ClassMatch& m, const RawPacket& p, int direction) {
    const IpAddress& a_addr = direction == 0 ? p.src : p.dst;
    const IpAddress& b_addr = direction == 0 ? p.dst : p.src;
    const int a_port = direction == 0 ? p.src_port : p.dst_port;
    const int b_port = direction == 0 ? p.dst_port : p.src_port;
    const bool ip = p.ip_version != 0;
    if (m.ethertype && p.ethertype != *m.ethertype) return false;
    if (m.vlan && (p.vlan < 0 || p.vlan != *m.vlan)) return false;
    if (m.protocol && (!ip || p.protocol != *m.protocol)) return false;
    if (m.dscp && (!ip || p.dscp != *m.dscp)) return false;
    if (m.a_net && (!ip || !in_prefix(*m.a_net, p.ip_version, a_addr))) return false;
    if (m.b_net && (!ip || !in_prefix(*m.b_net, p.ip_version, b_addr))) return false;
    if (m.a_port && (!carries_ports(p) || a_port < m.a_port->lo || a_port > m.a_port->hi))
        return false;
    if (m.b_port && (!carries_ports(p) || b_port < m.b_port->lo || b_port > m.b_port->hi))
        return false;
    return true;
}

}  // namespace oracle

/// The class a packet belongs to: 1 + the index of the first class with a match object that
/// holds, or 0 (`default`) when none has.
inline int linear_match(const std::vector<TrafficClass>& classes, const RawPacket& p,
                        int direction) {
    for (std::size_t i = 0; i < classes.size(); ++i)
        for (const ClassMatch& m : classes[i].match)
            if (oracle::match_holds(m, p, direction)) return static_cast<int>(i) + 1;
    return 0;
}

}  // namespace linkem::test
