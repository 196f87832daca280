// The data plane's traffic classifier (backend/dataplane/src/acl_classifier.hpp, on rte_acl)
// against the portable Classifier (common/model) and the linear oracle (tests/support):
// random class lists and packets (tests/support/class_generators.hpp), real frames
// classified in bursts of random size and direction; frames cut short, compared with the
// portable classifier (the oracle reads fields, not frames). EAL: once for the process,
// --no-huge, no worker lcore.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include "acl_classifier.hpp"
#include "class_generators.hpp"
#include "linear_matcher.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/dataplane/eal.hpp"

namespace linkem::dp {
namespace {

using namespace test;

class EalEnvironment : public ::testing::Environment {
  public:
    void SetUp() override {
        EalOptions o;
        o.program = "linkem_acl_classifier_tests";
        o.worker_lcores = 0;
        o.memory_mib = 512;
        o.file_prefix = "linkem-acltest-" + std::to_string(getpid());
        o.raw_args = {"--log-level", "lib.eal:warning"};
        eal_ = std::make_unique<Eal>(o);
    }
    void TearDown() override { eal_.reset(); }

  private:
    std::unique_ptr<Eal> eal_;
};

struct Agreement {
    std::size_t port_tables = 0;  // lists classified by the port table
    std::size_t packets = 0, in_a_class = 0, cut = 0, not_ip = 0;
    std::set<int> classes_hit;
};

// One packet of a burst: its fields (for the oracle) and its frame, maybe cut short.
struct Sample {
    RawPacket p;
    std::vector<std::uint8_t> frame;
    bool cut = false;
};

Sample random_sample(Random& r, const Pools& pools, const std::vector<TrafficClass>& classes,
                     int direction) {
    Sample s;
    s.p = random_packet(r, pools);
    if (r.chance(75)) make_hold(r, r.pick(r.pick(classes).match), s.p, direction);
    if (r.chance(25)) nudge(r, s.p, pools);
    s.frame = build_frame(s.p, random_style(r));
    if (r.chance(5)) {  // anywhere in the headers: tag, IP header, options, ports
        s.frame.resize(r.below(static_cast<unsigned>(std::min<std::size_t>(s.frame.size(), 70))));
        s.cut = true;
    }
    return s;
}

// Each frame copied to its own buffer of exactly its length, so that a sanitizer build sees
// a read beyond it.
std::vector<ClassId> classify(const AclClassifier& acl, const std::vector<Sample>& burst,
                              int direction) {
    std::vector<std::unique_ptr<std::uint8_t[]>> copies;
    std::vector<const std::uint8_t*> frames;
    std::vector<std::uint16_t> lengths;
    for (const Sample& s : burst) {
        copies.emplace_back(new std::uint8_t[s.frame.size() + 1]);
        std::memcpy(copies.back().get(), s.frame.data(), s.frame.size());
        frames.push_back(copies.back().get());
        lengths.push_back(static_cast<std::uint16_t>(s.frame.size()));
    }
    std::vector<ClassId> out(burst.size(), 255);
    acl.classify_burst(frames.data(), lengths.data(), static_cast<unsigned>(burst.size()),
                       direction, out.data());
    return out;
}

// `n` random packets in bursts of 1 to 100 (rte_acl takes them 64 at a time), each burst one
// direction: the rte_acl classifier, the portable one and (frames not cut) the oracle agree.
void agree(Random& r, const Pools& pools, const std::vector<TrafficClass>& classes, std::size_t n,
           Agreement& a) {
    const Classifier portable(classes);
    const AclClassifier acl(classes);
    a.port_tables += acl.uses_port_table();
    for (std::size_t done = 0; done < n;) {
        const int direction = static_cast<int>(r.below(2));
        std::vector<Sample> burst(std::min<std::size_t>(1 + r.below(100), n - done));
        for (Sample& s : burst)
            s = random_sample(r, pools, classes, direction);
        const std::vector<ClassId> got = classify(acl, burst, direction);
        for (std::size_t i = 0; i < burst.size(); ++i) {
            const Sample& s = burst[i];
            const PacketKey key = parse_packet_key(s.frame.data(), s.frame.size());
            const int want = portable.classify(key, direction);
            const int oracle = s.cut ? want : linear_match(classes, s.p, direction);
            if (got[i] != want || want != oracle) {
                ADD_FAILURE() << "rte_acl " << int{got[i]} << ", portable " << want << ", oracle "
                              << oracle << " for " << describe(s.p, direction)
                              << (s.cut ? " cut to " + std::to_string(s.frame.size()) : "")
                              << "\nclasses " << classes_to_json(classes).dump();
                return;
            }
            ++a.packets;
            a.cut += s.cut;
            a.not_ip += key.family == IpFamily::none;
            a.in_a_class += want != 0;
            a.classes_hit.insert(want);
        }
        done += burst.size();
    }
}

TEST(AclClassifier, AgreesWithThePortableClassifierAndTheOracle) {
    Random r{std::mt19937_64(20261206)};
    Agreement largest, all;
    const Pools pools = make_pools(r);
    agree(r, pools, random_classes(r, pools, kMaxClasses, kMaxClassMatches, 3), 100'000, largest);
    // Many small lists (rte_acl takes seconds to build a random list of hundreds of match
    // objects: the largest above stands for those).
    for (int set = 0; set < 40; ++set) {
        const Pools own = make_pools(r);
        const std::size_t n = 1 + r.below(16);
        const std::size_t m = n + r.below(static_cast<unsigned>(64 - n + 1));
        agree(r, own, random_classes(r, own, n, m, static_cast<int>(r.below(4))), 2'500, all);
    }
    EXPECT_EQ(largest.packets, 100'000u);
    EXPECT_EQ(all.packets, 100'000u);
    for (const Agreement* a : {&largest, &all})
        std::printf(
            "%zu packets (%zu cut short, %zu without an IP header), %zu in a class, %zu "
            "of 65 classes (default included) taken\n",
            a->packets, a->cut, a->not_ip, a->in_a_class, a->classes_hit.size());
    EXPECT_GT(largest.in_a_class, largest.packets / 2);
    EXPECT_GE(largest.classes_hit.size(), 60u) << "the packets reach too few of the classes";
    EXPECT_GT(all.not_ip, all.packets / 20);
}

// Lists that use a few of the keys, as users write them (most fields wildcards in every
// rule), agree as the lists of every key do.
TEST(AclClassifier, ListsOfAFewKeysAgree) {
    Random r{std::mt19937_64(61206)};
    const Pools pools = make_pools(r);
    using Keep = std::function<void(ClassMatch&)>;
    const std::vector<std::pair<const char*, Keep>> subsets = {
        {"protocol", [](ClassMatch& m) { m = ClassMatch{.protocol = m.protocol}; }},
        {"protocol and ports",
         [](ClassMatch& m) {
             m = ClassMatch{.protocol = m.protocol, .a_port = m.a_port, .b_port = m.b_port};
         }},
        {"ports", [](ClassMatch& m) { m = ClassMatch{.a_port = m.a_port, .b_port = m.b_port}; }},
        {"B's net", [](ClassMatch& m) { m = ClassMatch{.b_net = m.b_net}; }},
        {"A's net and B's port",
         [](ClassMatch& m) { m = ClassMatch{.a_net = m.a_net, .b_port = m.b_port}; }},
        {"dscp", [](ClassMatch& m) { m = ClassMatch{.dscp = m.dscp}; }},
        {"vlan and ethertype",
         [](ClassMatch& m) { m = ClassMatch{.ethertype = m.ethertype, .vlan = m.vlan}; }},
    };
    for (const auto& [what, keep] : subsets) {
        SCOPED_TRACE(what);
        Agreement a;
        for (int set = 0; set < 6; ++set) {
            std::vector<TrafficClass> classes =
                random_classes(r, pools, 1 + r.below(16), 32, static_cast<int>(r.below(4)));
            for (TrafficClass& c : classes)
                for (ClassMatch& m : c.match) {
                    keep(m);
                    if (m.protocol && !protocol_has_ports(*m.protocol)) m.a_port = m.b_port = {};
                }
            agree(r, pools, classes, 3'000, a);
        }
        EXPECT_GT(a.in_a_class, a.packets / 4);
        // Lists of protocols and ports take the port table (at most 64 match objects).
        if (std::string_view(what).find("ports") != std::string_view::npos ||
            std::string_view(what) == "protocol")
            EXPECT_GT(a.port_tables, 0u);
    }
}

TEST(AclClassifier, NoClassesIsDefault) {
    const AclClassifier acl;
    Random r{std::mt19937_64(1)};
    const Pools pools = make_pools(r);
    std::vector<Sample> burst(70);
    for (Sample& s : burst)
        s.frame = build_frame(random_packet(r, pools));
    for (ClassId c : classify(acl, burst, 1))
        EXPECT_EQ(c, kDefaultClass);
}

// Match objects without IP keys take non-IP frames and IP ones alike; IP keys never take a
// non-IP frame; a rule set of one IP version leaves the other's frames to `default`.
TEST(AclClassifier, NonIpAndOneVersionRules) {
    ClassMatch arp, vlan, udp6;
    arp.ethertype = kEthertypeArp;
    vlan.vlan = 100;
    udp6.protocol = kProtocolUdp;
    udp6.b_net = ip_prefix_from_string("2001:db8::/32");
    std::vector<TrafficClass> classes(3);
    classes[0].match = {udp6};
    classes[1].match = {arp};
    classes[2].match = {vlan};
    for (int i = 0; i < 3; ++i)
        classes[static_cast<std::size_t>(i)].name = "c" + std::to_string(i);
    const AclClassifier acl(classes);
    EXPECT_EQ(acl.ipv4_rules(), 1u);  // vlan
    EXPECT_EQ(acl.ipv6_rules(), 2u);  // udp6, vlan
    EXPECT_EQ(acl.l2_rules(), 2u);    // arp, vlan
    std::vector<Sample> burst(5);
    burst[0].p.ip_version = 0;
    burst[0].p.ethertype = kEthertypeArp;
    burst[1].p = burst[0].p;
    burst[1].p.vlan = 100;  // arp comes first
    burst[2].p.vlan = 100;  // IPv4 UDP: vlan
    burst[3].p.ip_version = 6;
    burst[3].p.ethertype = kEthertypeIpv6;
    burst[3].p.src[0] = 0x20;  // 2001:db8:: is B's side going B to A: the source
    burst[3].p.src[1] = 0x01;
    burst[3].p.src[2] = 0x0d;
    burst[3].p.src[3] = 0xb8;
    burst[4].p.protocol = kProtocolTcp;  // IPv4 TCP, untagged: default
    for (Sample& s : burst)
        s.frame = build_frame(s.p);
    EXPECT_EQ(classify(acl, burst, 1), (std::vector<ClassId>{2, 2, 3, 1, 0}));
    EXPECT_EQ(classify(acl, burst, 0), (std::vector<ClassId>{2, 2, 3, 0, 0}));
}

// Contexts have process-unique names: classifiers of the same classes live side by side,
// built on other threads, and each classifies with its own rules.
TEST(AclClassifier, ManyClassifiersBuiltOnOtherThreads) {
    Random r{std::mt19937_64(3)};
    const Pools pools = make_pools(r);
    std::vector<std::vector<TrafficClass>> lists;
    for (int i = 0; i < 8; ++i)
        lists.push_back(random_classes(r, pools, 1 + r.below(16), 40, 2));
    std::vector<std::unique_ptr<AclClassifier>> built(lists.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < lists.size(); ++i)
        threads.emplace_back([&, i] { built[i] = std::make_unique<AclClassifier>(lists[i]); });
    for (std::thread& t : threads)
        t.join();
    for (std::size_t i = 0; i < lists.size(); ++i) {
        const Classifier portable(lists[i]);
        std::vector<Sample> burst(200);
        for (Sample& s : burst)
            s = random_sample(r, pools, lists[i], 0);
        const std::vector<ClassId> got = classify(*built[i], burst, 0);
        for (std::size_t j = 0; j < burst.size(); ++j)
            ASSERT_EQ(got[j],
                      portable.classify(
                          parse_packet_key(burst[j].frame.data(), burst[j].frame.size()), 0))
                << "list " << i << " packet " << j;
    }
}

TEST(AclClassifier, RefusesAnInvalidList) {
    std::vector<TrafficClass> classes(1);
    classes[0].name = "default";
    classes[0].match.resize(1);
    EXPECT_THROW(AclClassifier{classes}, ClassError);
}

// The mbuf burst reads each mbuf's data as the frame.
TEST(AclClassifier, MbufBurstsClassifyTheirData) {
    std::unique_ptr<rte_mempool, void (*)(rte_mempool*)> pool(
        rte_pktmbuf_pool_create("acltest_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                SOCKET_ID_ANY),
        rte_mempool_free);
    ASSERT_NE(pool, nullptr);
    Random r{std::mt19937_64(4)};
    const Pools pools = make_pools(r);
    const std::vector<TrafficClass> classes = random_classes(r, pools, 16, 256, 2);
    const AclClassifier acl(classes);
    std::vector<Sample> burst(100);
    std::vector<rte_mbuf*> mbufs;
    for (Sample& s : burst) {
        s = random_sample(r, pools, classes, 1);
        rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(s.frame.size())),
                    s.frame.data(), s.frame.size());
        mbufs.push_back(m);
    }
    std::vector<ClassId> got(burst.size(), 255);
    acl.classify_burst(mbufs.data(), static_cast<unsigned>(mbufs.size()), 1, got.data());
    EXPECT_EQ(got, classify(acl, burst, 1));
    for (rte_mbuf* m : mbufs)
        rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace linkem::dp

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::AddGlobalTestEnvironment(new linkem::dp::EalEnvironment);
    return RUN_ALL_TESTS();
}
