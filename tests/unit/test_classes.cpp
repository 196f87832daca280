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

#include "class_generators.hpp"
#include "linear_matcher.hpp"
#include "linkem/classes.hpp"
#include "linkem/classes_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using namespace test;

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
    // a loss probability without a model is Bernoulli loss (docs/parameters.md)
    EXPECT_EQ(voip.link.b_to_a.loss_model, LossModel::bernoulli);
    EXPECT_EQ(voip.link.a_to_b.loss_model, LossModel::none);
    EXPECT_EQ(voip.link.a_to_b.jitter, LinkParams{}.jitter);  // from the defaults
    EXPECT_FALSE(voip.shares_link_limiter);
    const TrafficClass& ssh = classes[1];
    EXPECT_EQ(ssh.action, ClassAction::pass);
    EXPECT_EQ(ssh.match[0].b_port, (PortRange{22, 22}));
    EXPECT_EQ(ssh.link, LinkConfig{});
    const json written = classes_to_json(classes);
    EXPECT_EQ(classes_from_json(written), classes) << written.dump();
    EXPECT_EQ(written[0]["b_to_a"],
              (json{{"loss_model", "bernoulli"}, {"loss_probability", 0.02}}));
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
