// Traffic classes (docs/classes.md): the packet key read from hand-built frames, the match
// rules (directions, first match wins, non-IP packets), the classifier against the linear
// oracle of tests/support on random rule sets and packets, and the JSON codec: round trips
// and every kind of bad input, refused naming the class and the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linear_matcher.hpp"
#include "linkem/classes.hpp"
#include "linkem/classes_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using test::RawPacket;

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

void put16(std::vector<std::uint8_t>& f, unsigned v) {
    f.push_back(static_cast<std::uint8_t>(v >> 8));
    f.push_back(static_cast<std::uint8_t>(v));
}

void put_ipv4(std::vector<std::uint8_t>& f, const RawPacket& p, const FrameStyle& s) {
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

void put_ipv6(std::vector<std::uint8_t>& f, const RawPacket& p, const FrameStyle& s) {
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
std::vector<std::uint8_t> build_frame(const RawPacket& p, const FrameStyle& s = {}) {
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

/// The key of the first `len` bytes of `frame`, read from a copy of exactly that size (so
/// that a sanitizer build sees any read beyond it).
PacketKey key_of(const std::vector<std::uint8_t>& frame, std::size_t len) {
    const std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[len == 0 ? 1 : len]);
    std::copy(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(len), copy.get());
    return parse_packet_key(copy.get(), len);
}
PacketKey key_of(const std::vector<std::uint8_t>& frame) {
    return key_of(frame, frame.size());
}

IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    return IpAddress{a, b, c, d};
}
IpAddress v6(std::uint16_t first, std::uint16_t last) {
    IpAddress x{};
    x[0] = static_cast<std::uint8_t>(first >> 8);
    x[1] = static_cast<std::uint8_t>(first);
    x[14] = static_cast<std::uint8_t>(last >> 8);
    x[15] = static_cast<std::uint8_t>(last);
    return x;
}

RawPacket udp4(IpAddress src, int sport, IpAddress dst, int dport) {
    RawPacket p;
    p.src = src;
    p.dst = dst;
    p.src_port = sport;
    p.dst_port = dport;
    return p;
}

// ---------------------------------------------------------------------- packet key

TEST(PacketKey, ReadsIpv4Tcp) {
    RawPacket p = udp4(v4(10, 1, 2, 3), 40000, v4(192, 168, 7, 9), 22);
    p.protocol = kProtocolTcp;
    p.dscp = 46;
    const PacketKey k = key_of(build_frame(p, {.ecn = 3}));
    EXPECT_EQ(k.ethertype, kEthertypeIpv4);
    EXPECT_FALSE(k.vlan);
    EXPECT_EQ(k.family, IpFamily::ipv4);
    EXPECT_EQ(k.protocol, kProtocolTcp);
    EXPECT_EQ(k.src, v4(10, 1, 2, 3));
    EXPECT_EQ(k.dst, v4(192, 168, 7, 9));
    EXPECT_EQ(k.dscp, 46);
    EXPECT_EQ(k.src_port, 40000);
    EXPECT_EQ(k.dst_port, 22);
}

TEST(PacketKey, ReadsIpv4UdpPortsAfterOptions) {
    const RawPacket p = udp4(v4(1, 2, 3, 4), 5060, v4(5, 6, 7, 8), 5061);
    const PacketKey k = key_of(build_frame(p, {.ihl = 7}));
    EXPECT_EQ(k.protocol, kProtocolUdp);
    EXPECT_EQ(k.src_port, 5060);
    EXPECT_EQ(k.dst_port, 5061);
}

TEST(PacketKey, ReadsIpv6Udp) {
    RawPacket p = udp4(v6(0x2001, 1), 53, v6(0xfe80, 2), 33333);
    p.ethertype = kEthertypeIpv6;
    p.ip_version = 6;
    p.dscp = 34;
    const PacketKey k = key_of(build_frame(p, {.ecn = 1}));
    EXPECT_EQ(k.ethertype, kEthertypeIpv6);
    EXPECT_EQ(k.family, IpFamily::ipv6);
    EXPECT_EQ(k.protocol, kProtocolUdp);
    EXPECT_EQ(k.src, v6(0x2001, 1));
    EXPECT_EQ(k.dst, v6(0xfe80, 2));
    EXPECT_EQ(k.dscp, 34);
    EXPECT_EQ(k.src_port, 53);
    EXPECT_EQ(k.dst_port, 33333);
}

TEST(PacketKey, Ipv6ExtensionHeaderIsTheProtocolAndHidesThePorts) {
    RawPacket p = udp4(v6(0x2001, 1), 53, v6(0x2001, 2), 53);
    p.ethertype = kEthertypeIpv6;
    p.ip_version = 6;
    p.protocol = 44;  // a Fragment header follows the fixed header
    const PacketKey k = key_of(build_frame(p));
    EXPECT_EQ(k.family, IpFamily::ipv6);
    EXPECT_EQ(k.protocol, 44);
    EXPECT_FALSE(k.src_port);
    EXPECT_FALSE(k.dst_port);
}

TEST(PacketKey, ReadsTheVlanIdAndTheEthertypeBehindTheTag) {
    RawPacket p = udp4(v4(10, 0, 0, 1), 1, v4(10, 0, 0, 2), 2);
    p.vlan = 100;
    for (std::uint16_t tpid : {kEthertypeVlan, kEthertypeQinQ}) {
        const PacketKey k = key_of(build_frame(p, {.tpid = tpid, .pcp = 5}));
        EXPECT_EQ(k.vlan, 100) << tpid;
        EXPECT_EQ(k.ethertype, kEthertypeIpv4) << tpid;
        EXPECT_EQ(k.family, IpFamily::ipv4) << tpid;
        EXPECT_EQ(k.dst_port, 2) << tpid;
    }
    // Two tags: the outer one is read, the inner one's TPID is the ethertype.
    RawPacket qinq;
    qinq.vlan = 7;
    qinq.ethertype = kEthertypeVlan;
    qinq.ip_version = 0;
    const PacketKey k = key_of(build_frame(qinq, {.tpid = kEthertypeQinQ}));
    EXPECT_EQ(k.vlan, 7);
    EXPECT_EQ(k.ethertype, kEthertypeVlan);
    EXPECT_EQ(k.family, IpFamily::none);
}

TEST(PacketKey, ArpIsNotIp) {
    RawPacket p;
    p.ethertype = kEthertypeArp;
    p.ip_version = 0;
    const PacketKey k = key_of(build_frame(p));
    EXPECT_EQ(k.ethertype, kEthertypeArp);
    EXPECT_EQ(k.family, IpFamily::none);
    EXPECT_FALSE(k.src_port);
}

TEST(PacketKey, AnIpv4EthertypeWithoutAnIpv4HeaderIsNotIp) {
    RawPacket p;
    p.ip_version = 0;  // ethertype ipv4, version nibble 5
    const PacketKey k = key_of(build_frame(p));
    EXPECT_EQ(k.ethertype, kEthertypeIpv4);
    EXPECT_EQ(k.family, IpFamily::none);
}

TEST(PacketKey, Ipv4FragmentsAfterTheFirstHaveNoPorts) {
    RawPacket p = udp4(v4(1, 1, 1, 1), 1000, v4(2, 2, 2, 2), 2000);
    p.later_fragment = true;
    for (bool more : {false, true}) {
        const PacketKey k = key_of(build_frame(p, {.more_fragments = more}));
        EXPECT_EQ(k.family, IpFamily::ipv4);
        EXPECT_EQ(k.protocol, kProtocolUdp);
        EXPECT_FALSE(k.src_port);
        EXPECT_FALSE(k.dst_port);
    }
    p.later_fragment = false;  // the first fragment carries the ports
    const PacketKey first = key_of(build_frame(p, {.more_fragments = true}));
    EXPECT_EQ(first.dst_port, 2000);
}

TEST(PacketKey, ProtocolsWithoutPortsHaveNone) {
    for (int proto : {int{kProtocolIcmp}, 47, 0}) {
        RawPacket p = udp4(v4(1, 1, 1, 1), 1000, v4(2, 2, 2, 2), 2000);
        p.protocol = proto;
        const PacketKey k = key_of(build_frame(p));
        EXPECT_EQ(k.protocol, proto);
        EXPECT_FALSE(k.src_port) << proto;
    }
    RawPacket sctp = udp4(v4(1, 1, 1, 1), 1000, v4(2, 2, 2, 2), 2000);
    sctp.protocol = kProtocolSctp;
    EXPECT_EQ(key_of(build_frame(sctp)).dst_port, 2000);
}

// Every length of a frame: the fields are those the first len bytes hold whole.
TEST(PacketKey, TruncatedFramesGiveWhatTheyHold) {
    RawPacket p = udp4(v4(10, 0, 0, 1), 1234, v4(10, 0, 0, 2), 80);
    p.protocol = kProtocolTcp;
    p.vlan = 42;
    const std::vector<std::uint8_t> f = build_frame(p, {.ihl = 6});
    const std::size_t ip = 18, ports = ip + 24;
    for (std::size_t len = 0; len <= f.size(); ++len) {
        const PacketKey k = key_of(f, len);
        EXPECT_EQ(k.vlan.has_value(), len >= 16) << len;
        EXPECT_EQ(k.ethertype.has_value(), len >= 18) << len;
        EXPECT_EQ(k.family == IpFamily::ipv4, len >= ip + 20) << len;
        EXPECT_EQ(k.dst_port.has_value(), len >= ports + 4) << len;
        if (k.dst_port) {
            EXPECT_EQ(k.dst_port, 80);
        }
    }
    RawPacket six = udp4(v6(1, 1), 5, v6(2, 2), 6);
    six.ethertype = kEthertypeIpv6;
    six.ip_version = 6;
    const std::vector<std::uint8_t> g = build_frame(six);
    for (std::size_t len = 0; len <= g.size(); ++len) {
        const PacketKey k = key_of(g, len);
        EXPECT_EQ(k.family == IpFamily::ipv6, len >= 14 + 40) << len;
        EXPECT_EQ(k.src_port.has_value(), len >= 14 + 44) << len;
    }
}

// ---------------------------------------------------------------------- matching

IpPrefix prefix(const char* text) {
    return ip_prefix_from_string(text);
}

TrafficClass make_class(std::string name, std::vector<ClassMatch> match,
                        ClassAction action = ClassAction::emulate) {
    TrafficClass c;
    c.name = std::move(name);
    c.match = std::move(match);
    c.action = action;
    return c;
}

ClassId classify(const std::vector<TrafficClass>& classes, const RawPacket& p, int direction) {
    const ClassId got = Classifier(classes).classify(key_of(build_frame(p)), direction);
    EXPECT_EQ(got, test::linear_match(classes, p, direction)) << "the oracle disagrees";
    return got;
}

TEST(ClassMatch, BToAMatchesWithTheSidesSwapped) {
    ClassMatch m;
    m.a_net = prefix("10.0.0.0/8");
    m.protocol = kProtocolUdp;
    m.b_port = PortRange{5060, 5061};
    const std::vector<TrafficClass> classes = {make_class("voip", {m})};
    const RawPacket request = udp4(v4(10, 1, 2, 3), 40000, v4(192, 168, 1, 1), 5060);
    const RawPacket reply = udp4(v4(192, 168, 1, 1), 5061, v4(10, 1, 2, 3), 40000);
    EXPECT_EQ(classify(classes, request, 0), 1);
    EXPECT_EQ(classify(classes, reply, 1), 1);
    EXPECT_EQ(classify(classes, request, 1), kDefaultClass);  // seen from B, A's side is 192...
    EXPECT_EQ(classify(classes, reply, 0), kDefaultClass);
}

TEST(ClassMatch, TheFirstClassThatMatchesWins) {
    ClassMatch udp, port;
    udp.protocol = kProtocolUdp;
    port.b_port = PortRange{53, 53};
    const RawPacket dns = udp4(v4(1, 1, 1, 1), 5555, v4(8, 8, 8, 8), 53);
    EXPECT_EQ(classify({make_class("udp", {udp}), make_class("dns", {port})}, dns, 0), 1);
    EXPECT_EQ(classify({make_class("dns", {port}), make_class("udp", {udp})}, dns, 0), 1);
    const RawPacket other = udp4(v4(1, 1, 1, 1), 5555, v4(8, 8, 8, 8), 54);
    EXPECT_EQ(classify({make_class("dns", {port}), make_class("udp", {udp})}, other, 0), 2);
}

TEST(ClassMatch, AnyMatchObjectOfAClassMayHold) {
    ClassMatch ssh, web;
    ssh.b_port = PortRange{22, 22};
    web.b_port = PortRange{80, 80};
    const std::vector<TrafficClass> classes = {make_class("mgmt", {ssh, web})};
    EXPECT_EQ(classify(classes, udp4(v4(1, 1, 1, 1), 9, v4(2, 2, 2, 2), 80), 0), 1);
    EXPECT_EQ(classify(classes, udp4(v4(1, 1, 1, 1), 9, v4(2, 2, 2, 2), 22), 0), 1);
    EXPECT_EQ(classify(classes, udp4(v4(1, 1, 1, 1), 9, v4(2, 2, 2, 2), 23), 0), 0);
}

// A port key without a protocol holds on TCP, UDP and SCTP; never on ICMP.
TEST(ClassMatch, APortWithoutAProtocolHoldsOnTheProtocolsWithPorts) {
    ClassMatch m;
    m.b_port = PortRange{53, 53};
    const std::vector<TrafficClass> classes = {make_class("dns", {m})};
    for (int proto : {6, 17, 132, 1}) {
        RawPacket p = udp4(v4(1, 1, 1, 1), 9, v4(2, 2, 2, 2), 53);
        p.protocol = proto;
        EXPECT_EQ(classify(classes, p, 0), proto == 1 ? 0 : 1) << proto;
    }
}

TEST(ClassMatch, ANetHoldsOnlyOnItsFamily) {
    ClassMatch all4, all6;
    all4.a_net = prefix("0.0.0.0/0");
    all6.a_net = prefix("::/0");
    RawPacket six = udp4(v6(1, 1), 1, v6(2, 2), 2);
    six.ethertype = kEthertypeIpv6;
    six.ip_version = 6;
    const RawPacket four = udp4(v4(1, 1, 1, 1), 1, v4(2, 2, 2, 2), 2);
    EXPECT_EQ(classify({make_class("v4", {all4})}, four, 0), 1);
    EXPECT_EQ(classify({make_class("v4", {all4})}, six, 0), 0);
    EXPECT_EQ(classify({make_class("v6", {all6})}, six, 1), 1);
    EXPECT_EQ(classify({make_class("v6", {all6})}, four, 1), 0);
}

// A non-IP packet matches only matches without IP keys: its ethertype, its vlan, or none.
TEST(ClassMatch, NonIpPacketsMatchOnlyMatchesWithoutIpKeys) {
    RawPacket arp;
    arp.ethertype = kEthertypeArp;
    arp.ip_version = 0;
    arp.vlan = 100;
    ClassMatch by_ethertype, by_vlan, by_protocol, by_net, by_dscp, ipv4;
    by_ethertype.ethertype = kEthertypeArp;
    by_vlan.vlan = 100;
    by_protocol.protocol = 0;
    by_net.a_net = prefix("0.0.0.0/0");
    by_dscp.dscp = 0;
    ipv4.ethertype = kEthertypeIpv4;
    for (const ClassMatch& m : {by_protocol, by_net, by_dscp, ipv4})
        EXPECT_EQ(classify({make_class("c", {m})}, arp, 0), 0);
    for (const ClassMatch& m : {by_ethertype, by_vlan, ClassMatch{}})
        EXPECT_EQ(classify({make_class("c", {m})}, arp, 0), 1);
    RawPacket not_ipv4;  // ethertype ipv4, no IPv4 header
    not_ipv4.ip_version = 0;
    EXPECT_EQ(classify({make_class("c", {ipv4})}, not_ipv4, 0), 1);
    ClassMatch ipv4_udp = ipv4;
    ipv4_udp.protocol = kProtocolUdp;
    EXPECT_EQ(classify({make_class("c", {ipv4_udp})}, not_ipv4, 0), 0);
}

TEST(ClassMatch, VlanAndDscpHoldOnTheirValuesOnly) {
    ClassMatch m;
    m.vlan = 0;  // a priority tag: VLAN id 0
    m.dscp = 46;
    const std::vector<TrafficClass> classes = {make_class("ef", {m})};
    RawPacket p = udp4(v4(1, 1, 1, 1), 1, v4(2, 2, 2, 2), 2);
    p.dscp = 46;
    EXPECT_EQ(classify(classes, p, 0), 0);  // untagged
    p.vlan = 0;
    EXPECT_EQ(classify(classes, p, 0), 1);
    p.dscp = 45;
    EXPECT_EQ(classify(classes, p, 0), 0);
}

// ------------------------------------------------------------- random agreement

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

IpPrefix random_prefix(Random& r, IpFamily f) {
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

Pools make_pools(Random& r) {
    Pools pools;
    for (int f = 0; f < 2; ++f)
        for (int i = 0; i < 16; ++i)
            pools.nets[f].push_back(random_prefix(r, f == 0 ? IpFamily::ipv4 : IpFamily::ipv6));
    return pools;
}

int key_count(const ClassMatch& m) {
    return m.ethertype.has_value() + m.protocol.has_value() + m.a_net.has_value() +
           m.b_net.has_value() + m.a_port.has_value() + m.b_port.has_value() + m.vlan.has_value() +
           m.dscp.has_value();
}

// A match object that validate() takes (never an impossible one) with `min_keys` keys or
// more; without keys rarely.
ClassMatch random_match(Random& r, const Pools& pools, int min_keys) {
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
std::vector<TrafficClass> random_classes(Random& r, const Pools& pools, std::size_t n_classes,
                                         std::size_t n_matches, int min_keys) {
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

IpAddress random_address(Random& r, int version, const Pools& pools) {
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

int random_port(Random& r, const Pools& pools) {
    if (r.chance(40)) return static_cast<int>(r.below(65536));
    const PortRange& p = r.pick(pools.ports);
    return p.lo + static_cast<int>(r.below(p.hi - p.lo + 1u));
}

void set_version(RawPacket& p, int version) {
    p.ip_version = version;
    p.ethertype = version == 4 ? kEthertypeIpv4 : kEthertypeIpv6;
}

RawPacket random_packet(Random& r, const Pools& pools) {
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

void put_in(Random& r, const IpPrefix& net, IpAddress& a) {
    const unsigned bits = 8 * static_cast<unsigned>(address_bytes(net.family));
    a = IpAddress{};
    for (unsigned i = 0; i < bits; ++i) {
        const bool one =
            i < net.length ? test::oracle::bit(net.address, static_cast<int>(i)) : r.chance(50);
        if (one) a[i / 8] |= static_cast<std::uint8_t>(0x80 >> i % 8);
    }
}

// Changes `p` so that `m` holds on it going `direction`.
void make_hold(Random& r, const ClassMatch& m, RawPacket& p, int direction) {
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
            if (!test::oracle::carries_ports(p)) p.protocol = r.chance(50) ? 6 : 17;
        }
    }
    if (m.protocol) p.protocol = *m.protocol;
    if (m.vlan) p.vlan = *m.vlan;
    if (m.dscp) p.dscp = *m.dscp;
}

// One field moved next to what a rule asks for: a port just outside a range, a bit flipped
// at a prefix's edge, another vlan, a fragment.
void nudge(Random& r, RawPacket& p, const Pools& pools) {
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

std::string describe(const RawPacket& p, int direction) {
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

FrameStyle random_style(Random& r) {
    FrameStyle s;
    s.tpid = r.chance(50) ? kEthertypeVlan : kEthertypeQinQ;
    s.pcp = r.below(8);
    s.ihl = 5 + r.below(3);
    s.ecn = r.below(4);
    s.more_fragments = r.chance(10);
    s.fragment_offset = 1 + r.below(8191);
    return s;
}

struct Agreement {
    std::size_t packets = 0, in_a_class = 0;
    std::set<int> classes_hit;
};

// `n` random packets, most made to hold on one of the list's match objects and some nudged
// off it, classified by parse_packet_key + Classifier from their frames and by the oracle
// from their fields: the first disagreement fails.
void agree(Random& r, const Pools& pools, const std::vector<TrafficClass>& classes, std::size_t n,
           Agreement& a) {
    const Classifier classifier(classes);
    for (std::size_t i = 0; i < n; ++i) {
        RawPacket p = random_packet(r, pools);
        const int direction = static_cast<int>(r.below(2));
        if (r.chance(75)) make_hold(r, r.pick(r.pick(classes).match), p, direction);
        if (r.chance(25)) nudge(r, p, pools);
        const ClassId got = classifier.classify(key_of(build_frame(p, random_style(r))), direction);
        const int want = test::linear_match(classes, p, direction);
        if (got != want) {
            ADD_FAILURE() << "classifier " << int{got} << ", oracle " << want << " for "
                          << describe(p, direction) << "\nclasses "
                          << classes_to_json(classes).dump();
            return;
        }
        ++a.packets;
        a.in_a_class += want != 0;
        a.classes_hit.insert(want);
    }
}

TEST(Classifier, AgreesWithTheLinearMatcherOnRandomRulesAndPackets) {
    Random r{std::mt19937_64(20261206)};
    Agreement largest, all;
    const Pools pools = make_pools(r);
    agree(r, pools, random_classes(r, pools, kMaxClasses, kMaxClassMatches, 3), 100'000, largest);
    for (int set = 0; set < 40; ++set) {
        const Pools own = make_pools(r);
        const std::size_t n = 1 + r.below(kMaxClasses);
        const std::size_t m = n + r.below(static_cast<unsigned>(kMaxClassMatches - n + 1));
        agree(r, own, random_classes(r, own, n, m, static_cast<int>(r.below(4))), 2'500, all);
    }
    EXPECT_EQ(largest.packets, 100'000u);
    EXPECT_EQ(all.packets, 100'000u);
    std::printf(
        "largest list (64 classes, 1024 match objects): %zu packets, %zu in a class, "
        "%zu of 65 classes (default included) taken\n40 random lists: %zu packets, %zu "
        "in a class\n",
        largest.packets, largest.in_a_class, largest.classes_hit.size(), all.packets,
        all.in_a_class);
    EXPECT_GT(largest.in_a_class, largest.packets / 2);
    EXPECT_GT(all.in_a_class, all.packets / 2);
    EXPECT_GE(largest.classes_hit.size(), 60u) << "the packets reach too few of the classes";
}

TEST(ClassesJson, RandomListsRoundTrip) {
    Random r{std::mt19937_64(7)};
    for (int set = 0; set < 50; ++set) {
        const Pools pools = make_pools(r);
        const std::size_t n = 1 + r.below(kMaxClasses);
        const auto classes = random_classes(r, pools, n, n + r.below(200), 0);
        const json j = classes_to_json(classes);
        EXPECT_EQ(classes_from_json(j), classes) << j.dump();
        EXPECT_EQ(classes_to_json(classes_from_json(j)), j);
    }
}

// ------------------------------------------------------------------------- codec

const char* kIssueExample = R"({"mean_delay_us": 10000, "classes": [
    {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
     "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}},
    {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}]})";

TEST(ClassesJson, ReadsTheIssuesExample) {
    const json config = json::parse(kIssueExample);
    const std::vector<TrafficClass> classes = classes_from_json(config["classes"]);
    ASSERT_EQ(classes.size(), 2u);
    const TrafficClass& voip = classes[0];
    EXPECT_EQ(voip.name, "voip");
    EXPECT_EQ(voip.action, ClassAction::emulate);
    ASSERT_EQ(voip.match.size(), 1u);
    EXPECT_EQ(voip.match[0].protocol, kProtocolUdp);
    EXPECT_EQ(voip.match[0].b_port, (PortRange{5060, 5061}));
    EXPECT_FALSE(voip.match[0].a_port);
    EXPECT_EQ(voip.link.a_to_b.mean_delay, 80 * kNsPerMs);
    EXPECT_EQ(voip.link.b_to_a.mean_delay, 80 * kNsPerMs);
    EXPECT_EQ(voip.link.a_to_b.loss_probability, 0);
    EXPECT_EQ(voip.link.b_to_a.loss_probability, 0.02);
    EXPECT_EQ(voip.link.a_to_b.jitter, LinkParams{}.jitter);  // from the defaults
    EXPECT_FALSE(voip.shares_link_limiter);
    const TrafficClass& ssh = classes[1];
    EXPECT_EQ(ssh.action, ClassAction::pass);
    EXPECT_EQ(ssh.match[0].b_port, (PortRange{22, 22}));
    EXPECT_EQ(ssh.link, LinkConfig{});
    const json written = classes_to_json(classes);
    EXPECT_EQ(classes_from_json(written), classes) << written.dump();
    EXPECT_EQ(written[0]["b_to_a"], (json{{"loss_probability", 0.02}}));
    EXPECT_EQ(written[0]["mean_delay_us"], 80000);
    EXPECT_EQ(written[1], json::parse(R"({"name": "ssh", "action": "pass",
        "match": {"protocol": "tcp", "b_port": 22}})"));
}

TEST(ClassesJson, ReadsEveryMatchKeyAndWritesItBack) {
    const json j = json::parse(R"([{"name": "all-keys_1", "match": [
        {"ethertype": "ipv4", "protocol": "sctp", "a_net": "10.0.0.0/8", "b_net": "192.168.1.7",
         "a_port": "1000-2000", "b_port": "443", "vlan": 4095, "dscp": 63},
        {"ethertype": 34525, "protocol": 58, "a_net": "2001:db8::/32", "b_net": "::/0"},
        {"ethertype": 35020}, {"protocol": "icmp", "dscp": 0}, {"a_port": 0, "vlan": 0}, {}],
        "limiter": "link", "a_to_b": {"mean_delay_us": 5000}}])");
    const std::vector<TrafficClass> classes = classes_from_json(j);
    const TrafficClass& c = classes.at(0);
    ASSERT_EQ(c.match.size(), 6u);
    EXPECT_EQ(c.match[0].a_net, prefix("10.0.0.0/8"));
    EXPECT_EQ(c.match[0].b_net->length, 32);
    EXPECT_EQ(c.match[0].b_port, (PortRange{443, 443}));
    EXPECT_EQ(c.match[1].ethertype, kEthertypeIpv6);
    EXPECT_EQ(c.match[1].b_net->family, IpFamily::ipv6);
    EXPECT_EQ(c.match[2].ethertype, 0x88cc);
    EXPECT_EQ(c.match[5], ClassMatch{});
    EXPECT_TRUE(c.shares_link_limiter);
    EXPECT_EQ(c.link.a_to_b.mean_delay, 5 * kNsPerMs);
    EXPECT_EQ(c.link.b_to_a.mean_delay, 0);
    const json written = classes_to_json(classes);
    EXPECT_EQ(classes_from_json(written), classes) << written.dump();
    EXPECT_EQ(written[0]["limiter"], "link");
    EXPECT_EQ(written[0]["match"][0]["b_net"], "192.168.1.7/32");
    EXPECT_EQ(written[0]["match"][0]["a_port"], "1000-2000");
    EXPECT_EQ(written[0]["match"][1]["ethertype"], "ipv6");
    EXPECT_EQ(written[0]["match"][1]["protocol"], "icmpv6");
    EXPECT_EQ(written[0]["match"][1]["a_net"], "2001:db8::/32");
    EXPECT_EQ(written[0]["match"][2]["ethertype"], 35020);
}

TEST(ClassesJson, AClassWithOnlyAMatchEmulatesTheDefaults) {
    const auto classes = classes_from_json(json::parse(R"([{"name": "x", "match": {}}])"));
    EXPECT_EQ(classes[0].action, ClassAction::emulate);
    EXPECT_EQ(classes[0].link, LinkConfig{});
    EXPECT_TRUE(classes_from_json(json::array()).empty());
}

TEST(ClassesJson, ALimiterOtherThanLinkIsTheClassesOwn) {
    const auto classes = classes_from_json(json::parse(
        R"([{"name": "bulk", "match": {"protocol": "tcp"}, "limiter": "spacer",
             "rate_bps": 2e7, "b_to_a": {"rate_bps": 1e7}}])"));
    EXPECT_FALSE(classes[0].shares_link_limiter);
    EXPECT_EQ(classes[0].link.a_to_b.limiter, Limiter::spacer);
    EXPECT_EQ(classes[0].link.b_to_a.limiter, Limiter::spacer);
    EXPECT_EQ(classes[0].link.a_to_b.rate_bps, 2e7);
    EXPECT_EQ(classes[0].link.b_to_a.rate_bps, 1e7);
}

TEST(ClassesJson, Prefixes) {
    EXPECT_EQ(to_string(prefix("10.1.2.3")), "10.1.2.3/32");
    EXPECT_EQ(to_string(prefix("2001:db8::1")), "2001:db8::1/128");
    EXPECT_EQ(to_string(prefix("2001:0db8:0000::/32")), "2001:db8::/32");
    EXPECT_EQ(to_string(prefix("0.0.0.0/0")), "0.0.0.0/0");
    EXPECT_EQ(prefix("10.128.0.0/9").address, v4(10, 128, 0, 0));
    for (const char* bad :
         {"10.0.0.1/8", "10.0.0.0/33", "10.0.0/8", "10.0.0.0/", "10.0.0.0/-1", "2001:db8::/129",
          "2001:db8::1/32", "x", "", "/8", "10.0.0.0/8/8", "10.0.0.0 /8"})
        EXPECT_THROW((void)prefix(bad), std::invalid_argument) << bad;
    try {
        (void)prefix("10.0.0.1/8");
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("10.0.0.0/8"), std::string::npos) << e.what();
    }
}

// Every JSON example of docs/classes.md is a class list the codec takes (a config file with
// `classes`, or the list itself).
TEST(ClassesJson, TheDocsExamplesAreValid) {
    std::ifstream in(LINKEM_CLASSES_DOC_PATH);
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    std::size_t blocks = 0;
    for (std::size_t at = doc.find("```json\n"); at != std::string::npos;
         at = doc.find("```json\n", at + 1)) {
        const std::size_t from = at + 8;
        const json j = json::parse(doc.substr(from, doc.find("```", from) - from));
        EXPECT_NO_THROW((void)classes_from_json(j.is_object() ? j.at("classes") : j)) << j.dump();
        ++blocks;
    }
    EXPECT_GE(blocks, 2u) << "no JSON examples in " << LINKEM_CLASSES_DOC_PATH;
}

/// Expects `classes` to be refused with a ClassError whose field (the key's path from the
/// list) is `field`, and whose message names `who` (the class) and contains `allowed`.
void expect_refused(const json& classes, const std::string& field, const std::string& who,
                    const std::string& allowed) {
    try {
        (void)classes_from_json(classes);
        ADD_FAILURE() << "no error for " << classes.dump();
    } catch (const ClassError& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.field(), field) << what;
        EXPECT_NE(what.find(field), std::string::npos) << what;
        EXPECT_NE(what.find(who), std::string::npos) << "no '" << who << "' in: " << what;
        EXPECT_NE(what.find(allowed), std::string::npos) << "no '" << allowed << "' in: " << what;
    }
}

/// A list with a first class that is fine and a second built from `second` (a JSON object).
json after_one(const std::string& second) {
    return json::parse(R"([{"name": "ok", "match": {"protocol": "udp"}}, )" + second + "]");
}

TEST(ClassesJson, RefusesUnknownKeys) {
    expect_refused(after_one(R"({"name": "voip", "match": {}, "colour": "red"})"),
                   "classes[1].colour", "class 'voip'", "allowed 'name', 'match'");
    expect_refused(after_one(R"({"name": "voip", "match": {"port": 22}})"), "classes[1].match.port",
                   "class 'voip'", "allowed 'ethertype'");
    expect_refused(after_one(R"({"name": "voip", "match": [{}, {"b_port": 1, "src": 1}]})"),
                   "classes[1].match[1].src", "class 'voip'", "'dscp'");
    expect_refused(after_one(R"({"name": "voip", "match": {}, "a_to_b": {"delay": 1}})"),
                   "classes[1].a_to_b.delay", "class 'voip'", "known: 'strategy'");
}

TEST(ClassesJson, RefusesBadPrefixes) {
    const std::string head = R"({"name": "lab", "match": {"a_net": )";
    expect_refused(after_one(head + R"("10.0.0.300/8"}})"), "classes[1].match.a_net", "class 'lab'",
                   "allowed an IPv4 or IPv6 address");
    expect_refused(after_one(head + R"("10.0.0.0/33"}})"), "classes[1].match.a_net", "class 'lab'",
                   "allowed /0 .. /32");
    expect_refused(after_one(head + R"("10.0.0.1/8"}})"), "classes[1].match.a_net", "class 'lab'",
                   "10.0.0.0/8");
    expect_refused(after_one(head + R"("2001:db8::/200"}})"), "classes[1].match.a_net",
                   "class 'lab'", "allowed /0 .. /128");
    expect_refused(after_one(R"({"name": "lab", "match": {"b_net": 10}})"),
                   "classes[1].match.b_net", "class 'lab'", "\"10.0.0.0/8\"");
}

TEST(ClassesJson, RefusesBadPorts) {
    const std::string head = R"({"name": "web", "match": {"protocol": "tcp", "b_port": )";
    expect_refused(after_one(head + R"("6000-5000"}})"), "classes[1].match.b_port", "class 'web'",
                   "lo <= hi");
    expect_refused(after_one(head + "70000}}"), "classes[1].match.b_port", "class 'web'",
                   "0 .. 65535");
    expect_refused(after_one(head + R"("1-70000"}})"), "classes[1].match.b_port", "class 'web'",
                   "0 .. 65535");
    expect_refused(after_one(head + R"("80-"}})"), "classes[1].match.b_port", "class 'web'",
                   "\"lo-hi\"");
    expect_refused(after_one(head + "-1}}"), "classes[1].match.b_port", "class 'web'",
                   "0 .. 65535");
    expect_refused(after_one(R"({"name": "ping", "match": {"protocol": "icmp", "a_port": 7}})"),
                   "classes[1].match.a_port", "class 'ping'", "tcp, udp and sctp");
}

TEST(ClassesJson, RefusesBadValues) {
    const std::string head = R"({"name": "v", "match": {)";
    expect_refused(after_one(head + R"("vlan": 4096}})"), "classes[1].match.vlan", "class 'v'",
                   "0 .. 4095");
    expect_refused(after_one(head + R"("dscp": 64}})"), "classes[1].match.dscp", "class 'v'",
                   "0 .. 63");
    expect_refused(after_one(head + R"("dscp": 4.5}})"), "classes[1].match.dscp", "class 'v'",
                   "0 .. 63");
    expect_refused(after_one(head + R"("ethertype": 65536}})"), "classes[1].match.ethertype",
                   "class 'v'", "'ipv4', 'ipv6', 'arp' or a number 0 .. 65535");
    expect_refused(after_one(head + R"("protocol": "gre"}})"), "classes[1].match.protocol",
                   "class 'v'", "'tcp', 'udp', 'icmp', 'icmpv6', 'sctp' or a number 0 .. 255");
    expect_refused(after_one(head + R"("protocol": 256}})"), "classes[1].match.protocol",
                   "class 'v'", "0 .. 255");
    expect_refused(after_one(R"({"name": "v", "match": {}, "action": "delay"})"),
                   "classes[1].action", "class 'v'", "'emulate' (the default), 'pass', 'drop'");
}

TEST(ClassesJson, RefusesMatchesThatNeverHold) {
    expect_refused(after_one(R"({"name": "n", "match": {"ethertype": "arp", "protocol": 6}})"),
                   "classes[1].match.protocol", "class 'n'", "only on ipv4 and ipv6");
    expect_refused(after_one(R"({"name": "n", "match": {"a_net": "10.0.0.0/8", "b_net": "::/0"}})"),
                   "classes[1].match.b_net", "class 'n'", "two prefixes of one family");
    expect_refused(
        after_one(R"({"name": "n", "match": {"ethertype": "ipv4", "a_net": "2001:db8::/32"}})"),
        "classes[1].match.a_net", "class 'n'", "a prefix of the ethertype's family");
}

TEST(ClassesJson, RefusesBadNames) {
    const std::string rule = "1 to 32 of a-z, 0-9, '_' and '-', not 'default'";
    for (const char* name : {"VoIP", "", "a b", "default", "x.y"})
        expect_refused(after_one(R"({"name": ")" + std::string(name) + R"(", "match": {}})"),
                       "classes[1].name", "class", rule);
    expect_refused(after_one(R"({"name": ")" + std::string(33, 'a') + R"(", "match": {}})"),
                   "classes[1].name", "class", rule);
    expect_refused(after_one(R"({"name": 7, "match": {}})"), "classes[1].name", "class 1", rule);
    expect_refused(after_one(R"({"match": {}})"), "classes[1].name", "class 1", "missing");
    expect_refused(after_one(R"({"name": "ok", "match": {}})"), "classes[1].name", "class 'ok'",
                   "is the name of classes[0] too");
    expect_refused(after_one(R"("voip")"), "classes[1]", "class 1", "expected a class object");
}

TEST(ClassesJson, RefusesBadMatches) {
    expect_refused(after_one(R"({"name": "m"})"), "classes[1].match", "class 'm'", "missing");
    expect_refused(after_one(R"({"name": "m", "match": []})"), "classes[1].match", "class 'm'",
                   "one match object or more");
    expect_refused(after_one(R"({"name": "m", "match": "udp"})"), "classes[1].match", "class 'm'",
                   "a match object or a list");
    expect_refused(after_one(R"({"name": "m", "match": [{}, 5]})"), "classes[1].match[1]",
                   "class 'm'", "expected a match object");
}

TEST(ClassesJson, RefusesTooManyClassesOrMatchObjects) {
    json many = json::array();
    for (std::size_t i = 0; i <= kMaxClasses; ++i)
        many.push_back({{"name", "c" + std::to_string(i)}, {"match", json::object()}});
    expect_refused(many, "classes[64]", "class 'c64'", "at most 64");
    many.erase(many.size() - 1);
    EXPECT_EQ(classes_from_json(many).size(), kMaxClasses);

    json matches = json::array();
    for (int i = 0; i < 600; ++i)
        matches.push_back({{"b_port", i}});
    json big =
        json::array({{{"name", "a"}, {"match", matches}}, {{"name", "b"}, {"match", matches}}});
    expect_refused(big, "classes[1].match", "class 'b'", "at most 1024");
    matches.erase(matches.size() - 1);
    big[1]["match"] = json::array();
    for (int i = 0; i < 424; ++i)
        big[1]["match"].push_back({{"a_port", i}});
    EXPECT_EQ(Classifier(classes_from_json(big)).match_count(), kMaxClassMatches);
}

TEST(ClassesJson, RefusesLinkKeysOnPassAndDrop) {
    for (const char* action : {"pass", "drop"}) {
        const std::string head =
            R"({"name": "s", "match": {}, "action": ")" + std::string(action) + R"(", )";
        const std::string why = "only with action 'emulate'";
        expect_refused(after_one(head + R"("mean_delay_us": 0})"), "classes[1].mean_delay_us",
                       "class 's'", why);
        expect_refused(after_one(head + R"("b_to_a": {}})"), "classes[1].b_to_a", "class 's'", why);
        expect_refused(after_one(head + R"("limiter": "link"})"), "classes[1].limiter", "class 's'",
                       why);
    }
}

TEST(ClassesJson, RefusesBadLinkParameters) {
    const std::string head = R"({"name": "l", "match": {}, )";
    expect_refused(after_one(head + R"("mean_delay_us": -1})"), "classes[1].mean_delay_us",
                   "class 'l'", "allowed 0 .. ");
    expect_refused(after_one(head + R"("b_to_a": {"jitter_us": -5}})"),
                   "classes[1].b_to_a.jitter_us", "class 'l'", "allowed 0 .. ");
    expect_refused(after_one(head + R"("a_to_b": 5})"), "classes[1].a_to_b", "class 'l'",
                   "expected an object");
    expect_refused(after_one(head + R"("limiter": "shared"})"), "classes[1].limiter", "class 'l'",
                   "or 'link' (share the link's limiter)");
    expect_refused(after_one(head + R"("b_to_a": {"limiter": "link"}})"),
                   "classes[1].b_to_a.limiter", "class 'l'", "top level only");
    expect_refused(after_one(head + R"("limiter": "link", "rate_bps": 1e6})"),
                   "classes[1].rate_bps", "class 'l'", "its own limiter keys left out");
    expect_refused(after_one(head + R"("limiter": "link", "a_to_b": {"limiter": "spacer"}})"),
                   "classes[1].a_to_b.limiter", "class 'l'", "its own limiter keys left out");
}

TEST(ClassesJson, RefusesWhatIsNotAList) {
    try {
        (void)classes_from_json(json::object());
        ADD_FAILURE();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "classes");
        EXPECT_NE(std::string(e.what()).find("expected a list of classes"), std::string::npos);
    }
}

// The model's own checks, for lists built in code: the same errors as from JSON.
TEST(ClassesModel, ValidateRefusesWhatTheCodecRefuses) {
    TrafficClass c = make_class("p", {ClassMatch{}}, ClassAction::pass);
    c.link.b_to_a.mean_delay = 1;
    try {
        validate(std::vector<TrafficClass>{c});
        ADD_FAILURE();
    } catch (const ClassError& e) {
        EXPECT_EQ(e.field(), "classes[0].b_to_a.mean_delay_us");
        EXPECT_EQ(e.index(), 0u);
        EXPECT_EQ(e.name(), "p");
        EXPECT_EQ(e.key(), "b_to_a.mean_delay_us");
    }
    TrafficClass shared = make_class("s", {ClassMatch{}});
    shared.shares_link_limiter = true;
    shared.link.a_to_b.limiter = Limiter::policer;
    shared.link.a_to_b.rate_bps = 1e6;
    EXPECT_THROW(validate(shared, 0), ClassError);
    ClassMatch bad;
    bad.a_net = IpPrefix{IpFamily::ipv4, v4(10, 0, 0, 1), 8};
    EXPECT_THROW(Classifier({make_class("h", {bad})}), ClassError);
    EXPECT_THROW(Classifier({make_class("a", {ClassMatch{}}), make_class("a", {ClassMatch{}})}),
                 ClassError);
}

TEST(Classifier, NoClassesIsDefault) {
    const Classifier none;
    EXPECT_EQ(none.classify(PacketKey{}, 0), kDefaultClass);
    EXPECT_EQ(none.class_count(), 0u);
}

}  // namespace
}  // namespace linkem
