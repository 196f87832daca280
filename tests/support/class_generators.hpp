// Random traffic-class lists and packets for the tests that check a classifier against the
// linear oracle (linear_matcher.hpp): frames built from a RawPacket's fields (with the
// header variants a parser must read: tags, IPv4 options, fragments), value pools that make
// many packets match, match objects validate() takes, packets made to hold on a match
// object or nudged just off it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "linear_matcher.hpp"
#include "linkem/classes.hpp"
#include "linkem/time.hpp"

namespace linkem::test {

// ------------------------------------------------------------------------ frames

/// How a frame is written beyond its RawPacket's fields.
struct FrameStyle {
    std::uint16_t tpid = kEthertypeVlan;
    unsigned pcp = 0;                // the tag's priority bits
    unsigned ihl = 5;                // IPv4 header length in 32-bit words
    unsigned ecn = 0;                // the 2 bits beside the DSCP
    unsigned fragment_offset = 185;  // used when later_fragment
    bool more_fragments = false;
    std::size_t payload = 8;  // bytes after the ports
};

inline void put16(std::vector<std::uint8_t>& f, unsigned v) {
    f.push_back(static_cast<std::uint8_t>(v >> 8));
    f.push_back(static_cast<std::uint8_t>(v));
}

inline void put_ipv4(std::vector<std::uint8_t>& f, const RawPacket& p, const FrameStyle& s) {
    f.push_back(static_cast<std::uint8_t>(0x40 | s.ihl));
    f.push_back(static_cast<std::uint8_t>(p.dscp << 2 | s.ecn));
    put16(f, 4 * s.ihl + 4 + s.payload);
    put16(f, 0x1234);  // identification
    put16(f, (s.more_fragments ? 0x2000 : 0) | (p.later_fragment ? s.fragment_offset : 0));
    f.push_back(64);
    f.push_back(static_cast<std::uint8_t>(p.protocol));
    put16(f, 0);  // checksum
    f.insert(f.end(), p.src.begin(), p.src.begin() + 4);
    f.insert(f.end(), p.dst.begin(), p.dst.begin() + 4);
    f.insert(f.end(), 4 * (s.ihl - 5), 0x01);  // options: NOPs
}

inline void put_ipv6(std::vector<std::uint8_t>& f, const RawPacket& p, const FrameStyle& s) {
    const unsigned tc = static_cast<unsigned>(p.dscp) << 2 | s.ecn;
    f.push_back(static_cast<std::uint8_t>(0x60 | tc >> 4));
    f.push_back(static_cast<std::uint8_t>((tc & 0x0f) << 4));
    put16(f, 0);  // flow label
    put16(f, 4 + s.payload);
    f.push_back(static_cast<std::uint8_t>(p.protocol));
    f.push_back(64);
    f.insert(f.end(), p.src.begin(), p.src.end());
    f.insert(f.end(), p.dst.begin(), p.dst.end());
}

/// The Ethernet frame of `p` (without FCS, padded to 60 bytes).
inline std::vector<std::uint8_t> build_frame(const RawPacket& p, const FrameStyle& s = {}) {
    std::vector<std::uint8_t> f(12, 0x02);  // destination and source MAC
    if (p.vlan >= 0) {
        put16(f, s.tpid);
        put16(f, s.pcp << 13 | static_cast<unsigned>(p.vlan));
    }
    put16(f, static_cast<unsigned>(p.ethertype));
    if (p.ip_version == 4) put_ipv4(f, p, s);
    if (p.ip_version == 6) put_ipv6(f, p, s);
    if (p.ip_version == 0) f.insert(f.end(), 40, 0x55);  // no IP header: version nibble 5
    put16(f, static_cast<unsigned>(p.src_port));
    put16(f, static_cast<unsigned>(p.dst_port));
    f.insert(f.end(), s.payload, 0xab);
    if (f.size() < 60) f.resize(60, 0);
    return f;
}

// ------------------------------------------------------------ rules and packets

/// The values random rules and packets draw from, so that many packets match.
struct Pools {
    std::vector<IpPrefix> nets[2];  // [0] IPv4, [1] IPv6
    std::vector<PortRange> ports = {{22, 22},       {53, 53},  {80, 80},      {443, 443},
                                    {5060, 5061},   {0, 1023}, {1024, 65535}, {8000, 8099},
                                    {65535, 65535}, {0, 0}};
    std::vector<int> protocols = {6, 17, 132, 1, 58, 47, 44};
    std::vector<int> ethertypes = {kEthertypeIpv4, kEthertypeIpv6, kEthertypeArp, 0x88cc};
    std::vector<int> vlans = {0, 1, 100, 4095};
    std::vector<int> dscps = {0, 10, 46, 63};
};

struct Random {
    std::mt19937_64 rng;
    bool chance(int percent) { return static_cast<int>(rng() % 100) < percent; }
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return v[rng() % v.size()];
    }
    unsigned below(unsigned n) { return static_cast<unsigned>(rng() % n); }
};

inline IpPrefix random_prefix(Random& r, IpFamily f) {
    IpPrefix p;
    p.family = f;
    const unsigned bits = 8 * static_cast<unsigned>(address_bytes(f));
    const unsigned lengths[] = {0, 1, 7, 8, 9, 16, 23, 24, 31, 32, 48, 64, 100, 127, 128};
    do {
        p.length = static_cast<std::uint8_t>(lengths[r.below(std::size(lengths))]);
    } while (p.length > bits);
    for (unsigned i = 0; i < bits; ++i)
        if (i < p.length && r.chance(50))
            p.address[i / 8] |= static_cast<std::uint8_t>(0x80 >> i % 8);
    return p;
}

inline Pools make_pools(Random& r) {
    Pools pools;
    for (int f = 0; f < 2; ++f)
        for (int i = 0; i < 16; ++i)
            pools.nets[f].push_back(random_prefix(r, f == 0 ? IpFamily::ipv4 : IpFamily::ipv6));
    return pools;
}

inline int key_count(const ClassMatch& m) {
    return m.ethertype.has_value() + m.protocol.has_value() + m.a_net.has_value() +
           m.b_net.has_value() + m.a_port.has_value() + m.b_port.has_value() + m.vlan.has_value() +
           m.dscp.has_value();
}

// A match object that validate() takes (never an impossible one) with `min_keys` keys or
// more; without keys rarely.
inline ClassMatch random_match(Random& r, const Pools& pools, int min_keys) {
    for (;;) {
        ClassMatch m;
        const unsigned family = r.below(3);  // 0: no net, 1: IPv4, 2: IPv6
        if (family && r.chance(60)) m.a_net = r.pick(pools.nets[family - 1]);
        if (family && r.chance(60)) m.b_net = r.pick(pools.nets[family - 1]);
        if (r.chance(30)) m.protocol = static_cast<std::uint8_t>(r.pick(pools.protocols));
        if (r.chance(25)) m.a_port = r.pick(pools.ports);
        if (r.chance(35)) m.b_port = r.pick(pools.ports);
        if (r.chance(12)) m.vlan = static_cast<std::uint16_t>(r.pick(pools.vlans));
        if (r.chance(12)) m.dscp = static_cast<std::uint8_t>(r.pick(pools.dscps));
        if (r.chance(15)) m.ethertype = static_cast<std::uint16_t>(r.pick(pools.ethertypes));
        if (key_count(m) < std::max(min_keys, r.chance(5) ? 0 : 1)) continue;
        try {
            validate(m, 0, "c", "match");
            return m;
        } catch (const ClassError&) {
        }
    }
}

// `n_classes` classes with `n_matches` match objects among them, each class one at least,
// each match object `min_keys` keys or more (the more, the deeper packets reach the list).
inline std::vector<TrafficClass> random_classes(Random& r, const Pools& pools,
                                                std::size_t n_classes, std::size_t n_matches,
                                                int min_keys) {
    std::vector<TrafficClass> classes(n_classes);
    for (std::size_t i = 0; i < n_matches; ++i)
        classes[i < n_classes ? i : r.below(static_cast<unsigned>(n_classes))].match.push_back(
            random_match(r, pools, min_keys));
    for (std::size_t i = 0; i < n_classes; ++i) {
        TrafficClass& c = classes[i];
        c.name = "c" + std::to_string(i);
        c.action = static_cast<ClassAction>(r.below(3));
        if (c.action != ClassAction::emulate) continue;
        c.link.a_to_b.mean_delay = r.below(100'000) * kNsPerUs;
        c.link.b_to_a.loss_model = LossModel::bernoulli;
        c.link.b_to_a.loss_probability = r.below(100) / 1000.0;
        c.shares_link_limiter = r.chance(30);
    }
    return classes;
}

inline IpAddress random_address(Random& r, int version, const Pools& pools) {
    IpAddress a{};
    const std::size_t n = version == 4 ? 4 : 16;
    for (std::size_t i = 0; i < n; ++i)
        a[i] = static_cast<std::uint8_t>(r.rng());
    if (!r.chance(70)) return a;
    const IpPrefix& p = r.pick(pools.nets[version == 4 ? 0 : 1]);
    for (unsigned i = 0; i < p.length; ++i) {
        const std::uint8_t bit = static_cast<std::uint8_t>(0x80 >> i % 8);
        a[i / 8] = static_cast<std::uint8_t>((a[i / 8] & ~bit) | (p.address[i / 8] & bit));
    }
    return a;
}

inline int random_port(Random& r, const Pools& pools) {
    if (r.chance(40)) return static_cast<int>(r.below(65536));
    const PortRange& p = r.pick(pools.ports);
    return p.lo + static_cast<int>(r.below(p.hi - p.lo + 1u));
}

inline void set_version(RawPacket& p, int version) {
    p.ip_version = version;
    p.ethertype = version == 4 ? kEthertypeIpv4 : kEthertypeIpv6;
}

inline RawPacket random_packet(Random& r, const Pools& pools) {
    RawPacket p;
    p.vlan =
        r.chance(30) ? (r.chance(70) ? r.pick(pools.vlans) : static_cast<int>(r.below(4096))) : -1;
    const unsigned kind = r.below(10);  // 0: not IP; 1-5: IPv4; 6-9: IPv6
    if (kind == 0) {
        const int e[] = {kEthertypeArp, 0x88cc, kEthertypeIpv4, kEthertypeIpv6, 0x0842};
        p.ethertype = e[r.below(std::size(e))];
        p.ip_version = 0;
    } else {
        set_version(p, kind <= 5 ? 4 : 6);
    }
    p.protocol = r.chance(80) ? r.pick(pools.protocols) : static_cast<int>(r.below(256));
    p.dscp = r.chance(50) ? r.pick(pools.dscps) : static_cast<int>(r.below(64));
    const int version = p.ip_version ? p.ip_version : 4;
    p.src = random_address(r, version, pools);
    p.dst = random_address(r, version, pools);
    p.src_port = random_port(r, pools);
    p.dst_port = random_port(r, pools);
    p.later_fragment = p.ip_version == 4 && r.chance(8);
    return p;
}

inline void put_in(Random& r, const IpPrefix& net, IpAddress& a) {
    const unsigned bits = 8 * static_cast<unsigned>(address_bytes(net.family));
    a = IpAddress{};
    for (unsigned i = 0; i < bits; ++i) {
        const bool one =
            i < net.length ? oracle::bit(net.address, static_cast<int>(i)) : r.chance(50);
        if (one) a[i / 8] |= static_cast<std::uint8_t>(0x80 >> i % 8);
    }
}

// Changes `p` so that `m` holds on it going `direction`.
inline void make_hold(Random& r, const ClassMatch& m, RawPacket& p, int direction) {
    const int a = direction == 0 ? 0 : 1;  // A's side: the source going A to B
    IpAddress* side[2] = {a == 0 ? &p.src : &p.dst, a == 0 ? &p.dst : &p.src};
    int* port[2] = {a == 0 ? &p.src_port : &p.dst_port, a == 0 ? &p.dst_port : &p.src_port};
    if (m.needs_ip() && p.ip_version == 0) set_version(p, r.chance(50) ? 4 : 6);
    if (m.ethertype) {
        p.ethertype = *m.ethertype;
        p.ip_version = p.ethertype == kEthertypeIpv4 ? 4 : p.ethertype == kEthertypeIpv6 ? 6 : 0;
    }
    const std::optional<IpPrefix>* nets[2] = {&m.a_net, &m.b_net};
    const std::optional<PortRange>* ports[2] = {&m.a_port, &m.b_port};
    for (int s = 0; s < 2; ++s) {
        if (*nets[s]) {
            set_version(p, (*nets[s])->family == IpFamily::ipv4 ? 4 : 6);
            put_in(r, **nets[s], *side[s]);
        }
        if (*ports[s]) {
            *port[s] =
                (*ports[s])->lo + static_cast<int>(r.below((*ports[s])->hi - (*ports[s])->lo + 1u));
            p.later_fragment = false;
            if (!oracle::carries_ports(p)) p.protocol = r.chance(50) ? 6 : 17;
        }
    }
    if (m.protocol) p.protocol = *m.protocol;
    if (m.vlan) p.vlan = *m.vlan;
    if (m.dscp) p.dscp = *m.dscp;
}

// One field moved next to what a rule asks for: a port just outside a range, a bit flipped
// at a prefix's edge, another vlan, a fragment.
inline void nudge(Random& r, RawPacket& p, const Pools& pools) {
    switch (r.below(5)) {
        case 0: {
            const PortRange& pr = r.pick(pools.ports);
            p.dst_port = r.chance(50) ? (pr.lo + 65535) % 65536 : (pr.hi + 1) % 65536;
            break;
        }
        case 1: {
            const IpPrefix& n = r.pick(pools.nets[p.ip_version == 6 ? 1 : 0]);
            if (n.length > 0)
                p.src[(n.length - 1u) / 8] ^=
                    static_cast<std::uint8_t>(0x80 >> (n.length - 1u) % 8);
            break;
        }
        case 2:
            p.vlan = p.vlan < 0 ? 100 : (r.chance(50) ? -1 : (p.vlan + 1) % 4096);
            break;
        case 3:
            p.later_fragment = p.ip_version == 4;
            break;
        default:
            p.dscp = (p.dscp + 1) % 64;
    }
}

inline std::string describe(const RawPacket& p, int direction) {
    std::string s = "direction " + std::to_string(direction) + " vlan " + std::to_string(p.vlan) +
                    " ethertype " + std::to_string(p.ethertype) + " ip " +
                    std::to_string(p.ip_version) + " protocol " + std::to_string(p.protocol) +
                    " dscp " + std::to_string(p.dscp) + " ports " + std::to_string(p.src_port) +
                    " -> " + std::to_string(p.dst_port) +
                    (p.later_fragment ? " later fragment" : "") + " addresses";
    for (const IpAddress* a : {&p.src, &p.dst}) {
        s += " ";
        for (std::uint8_t b : *a)
            s += std::to_string(b) + ".";
    }
    return s;
}

inline FrameStyle random_style(Random& r) {
    FrameStyle s;
    s.tpid = r.chance(50) ? kEthertypeVlan : kEthertypeQinQ;
    s.pcp = r.below(8);
    s.ihl = 5 + r.below(3);
    s.ecn = r.below(4);
    s.more_fragments = r.chance(10);
    s.fragment_offset = 1 + r.below(8191);
    return s;
}

}  // namespace linkem::test
