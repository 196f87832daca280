// The data plane's traffic classifier (rte_acl, backend/dataplane/src/acl_classifier.hpp)
// against the portable one (parse_packet_key + Classifier::classify per frame): ns per
// packet, classifying 32-frame bursts of a pool of 4096 frames (in cache), half the bursts
// each way, for class lists of 0, 16, 256 and 1024 match objects and IPv4, IPv6 and mixed
// traffic; and the time to build each list. Random lists and packets as in the tests
// (tests/support/class_generators.hpp), every key drawn ("random"), lists of protocol,
// port and net as users write them ("typical") and of protocol and port only ("ports"); most
// packets made to hold on one match object.
//   bench_acl_classifier [seconds per figure, default 0.3] [most match objects, default 1024]
//                        [EAL options...]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "acl_classifier.hpp"
#include "class_generators.hpp"
#include "linkem/dataplane/eal.hpp"

namespace {

using namespace linkem;
using namespace linkem::test;
using Clock = std::chrono::steady_clock;

constexpr unsigned kBurst = 32, kPool = 4096;
// The class lists: classes, match objects.
constexpr std::pair<std::size_t, std::size_t> kLists[] = {{16, 16}, {64, 256}, {64, 1024}};

// A list as users write them: each match object a protocol (TCP or UDP), mostly B's port or
// a port range, half of them B's net, some A's net too (IPv4 or IPv6).
std::vector<TrafficClass> typical_classes(Random& r, const Pools& pools, std::size_t n_classes,
                                          std::size_t n_matches) {
    std::vector<TrafficClass> classes = random_classes(r, pools, n_classes, n_matches, 0);
    for (TrafficClass& c : classes)
        for (ClassMatch& m : c.match) {
            m = ClassMatch{};
            m.protocol = r.chance(50) ? kProtocolTcp : kProtocolUdp;
            if (r.chance(80)) m.b_port = r.pick(pools.ports);
            const unsigned f = r.below(2);
            if (r.chance(50)) m.b_net = r.pick(pools.nets[f]);
            if (r.chance(20)) m.a_net = r.pick(pools.nets[f]);
        }
    return classes;
}

// A list of protocols and ports only (the SSH or VoIP class): no nets.
std::vector<TrafficClass> port_classes(Random& r, const Pools& pools, std::size_t n_classes,
                                       std::size_t n_matches) {
    std::vector<TrafficClass> classes = typical_classes(r, pools, n_classes, n_matches);
    for (TrafficClass& c : classes)
        for (ClassMatch& m : c.match)
            m.a_net = m.b_net = std::nullopt;
    return classes;
}

struct Frames {
    std::vector<std::vector<std::uint8_t>> bytes;
    std::vector<const std::uint8_t*> ptr;
    std::vector<std::uint16_t> len;
};

// `v4_percent` of the frames IPv4, the rest IPv6 (3 in 4 made to hold on a match object).
Frames make_frames(Random& r, const Pools& pools, const std::vector<TrafficClass>& classes,
                   int v4_percent) {
    Frames f;
    while (f.bytes.size() < kPool) {
        RawPacket p = random_packet(r, pools);
        if (!classes.empty() && r.chance(75)) make_hold(r, r.pick(r.pick(classes).match), p, 0);
        const int want = r.chance(v4_percent) ? 4 : 6;
        if (p.ip_version != want) continue;
        f.bytes.push_back(build_frame(p));
    }
    for (const auto& b : f.bytes) {
        f.ptr.push_back(b.data());
        f.len.push_back(static_cast<std::uint16_t>(b.size()));
    }
    return f;
}

// This thread's CPU time: a machine shared with other work preempts it now and then.
double cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

template <class Fn>
double ns_per_packet(double seconds, Fn&& classify_burst) {
    std::uint64_t packets = 0;
    const double start = cpu_ns();
    for (;;) {
        for (unsigned at = 0; at < kPool; at += kBurst)
            classify_burst(at, static_cast<int>(at / kBurst % 2));
        packets += kPool;
        if (cpu_ns() - start >= seconds * 1e9) break;
    }
    return (cpu_ns() - start) / static_cast<double>(packets);
}

void run(const char* kind, const std::vector<TrafficClass>& classes, Random& r, const Pools& pools,
         double seconds) {
    const auto t0 = Clock::now();
    const dp::AclClassifier acl(classes);
    const double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const Classifier portable(classes);
    std::size_t matches = 0;
    for (const TrafficClass& c : classes)
        matches += c.match.size();
    const std::pair<const char*, int> mixes[] = {{"IPv4", 100}, {"IPv6", 0}, {"mixed", 50}};
    for (const auto& [mix, v4] : mixes) {
        const Frames f = make_frames(r, pools, classes, v4);
        ClassId out[kBurst];
        unsigned sink = 0;
        const double acl_ns = ns_per_packet(seconds, [&](unsigned at, int dir) {
            acl.classify_burst(&f.ptr[at], &f.len[at], kBurst, dir, out);
            sink += out[0];
        });
        const double portable_ns = ns_per_packet(seconds, [&](unsigned at, int dir) {
            for (unsigned i = 0; i < kBurst; ++i)
                out[i] = portable.classify(parse_packet_key(f.ptr[at + i], f.len[at + i]), dir);
            sink += out[0];
        });
        std::printf(
            "%-7s %3zu classes %4zu matches (v4 %4zu v6 %4zu rules, built in %6.1f ms) "
            "%-5s  rte_acl %6.2f ns/packet  portable %7.2f ns/packet%s\n",
            kind, classes.size(), matches, acl.ipv4_rules(), acl.ipv6_rules(), build_ms, mix,
            acl_ns, portable_ns, sink == ~0u ? " " : "");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
    const std::size_t most = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : kMaxClassMatches;
    dp::EalOptions o;
    o.program = "bench_acl_classifier";
    o.worker_lcores = 0;
    o.memory_mib = 512;
    o.file_prefix = "linkem-aclbench-" + std::to_string(getpid());
    o.raw_args = {"--log-level", "lib.eal:warning"};
    for (int i = 3; i < argc; ++i)  // EAL options, e.g. --force-max-simd-bitwidth=512
        o.raw_args.push_back(argv[i]);
    const dp::Eal eal(o);
    Random r{std::mt19937_64(20261206)};
    const Pools pools = make_pools(r);
    run("none", {}, r, pools, seconds);
    for (const auto& [classes, matches] : kLists)
        if (matches <= most) {
            run("ports", port_classes(r, pools, classes, matches), r, pools, seconds);
            run("typical", typical_classes(r, pools, classes, matches), r, pools, seconds);
            run("random", random_classes(r, pools, classes, matches, 2), r, pools, seconds);
        }
    return 0;
}
