// The Emulator as a whole: run-time parameter changes, strategy switches, conservation of
// packets, reproducibility, seeds, clamping, buffer limit.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/emulator.hpp"
#include "linkem/telemetry_json.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using test::Packet;
constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();

LinkParams base_params() {
    LinkParams p;
    p.strategy = Strategy::correlated;
    p.distribution = Distribution::normal;
    p.mean_delay = 100 * kNsPerMs;
    p.jitter = 10 * kNsPerMs;
    p.half_life = 21 * kNsPerMs;
    p.rate_window = kNsPerMs;
    p.seed = 7;
    return p;
}

void expect_same_counters(const CounterSnapshot& a, const CounterSnapshot& b) {
    EXPECT_EQ(a.packets_in, b.packets_in);
    EXPECT_EQ(a.bytes_in, b.bytes_in);
    EXPECT_EQ(a.packets_out, b.packets_out);
    EXPECT_EQ(a.bytes_out, b.bytes_out);
    EXPECT_EQ(a.drops.total(), b.drops.total());
    EXPECT_EQ(a.delays_clamped, b.delays_clamped);
    EXPECT_EQ(a.waited, b.waited);
    EXPECT_EQ(a.in_flight, b.in_flight);
    EXPECT_EQ(a.rate_pps, b.rate_pps);
    EXPECT_EQ(a.rate_intervals, b.rate_intervals);
}

// 10^4 packets at 1 Mpps are queued behind a 100 ms delay when mean, jitter and half-life
// change. Nothing may be lost, the counters and the rate estimate carry on, alpha is
// recomputed for the new half-life from the rate already measured, and the EMA state is
// shifted/scaled onto the new law (not restarted).
TEST(Emulator, SetParamsAtRunTimeKeepsQueueEmaStateAndRateEstimate) {
    Emulator<Packet> e(base_params());
    constexpr std::uint64_t kN = 10'000;
    std::uint64_t seq = 0;
    auto feed = [&](std::uint64_t n) {
        for (std::uint64_t i = 0; i < n; ++i, ++seq) {
            const TimeNs t = static_cast<TimeNs>(seq) * kNsPerUs;
            Packet p{seq, t, 700};
            ASSERT_EQ(e.ingest(&p, 1, t), 0u);
        }
    };
    feed(kN);
    Packet out[512];
    ASSERT_EQ(e.drain(10 * kNsPerMs, out, 512), 0u);  // all still queued
    const CounterSnapshot before = e.snapshot();
    ASSERT_EQ(before.in_flight, kN);
    ASSERT_EQ(before.rate_pps, 1e6);
    ASSERT_EQ(before.rate_intervals, 9u);
    const double state = e.delayer().state();

    LinkParams p = base_params();
    p.mean_delay = 50 * kNsPerMs;
    p.jitter = 20 * kNsPerMs;
    p.half_life = 5 * kNsPerMs;
    e.set_params(p);

    expect_same_counters(e.snapshot(), before);
    EXPECT_EQ(e.in_flight(), kN);
    EXPECT_EQ(e.rate_pps(), 1e6);
    EXPECT_EQ(e.seed(), 7u);
    const double alpha = std::pow(0.5, 1.0 / (5e-3 * 1e6));
    EXPECT_NEAR(e.alpha(), alpha, 1e-12);
    EXPECT_NEAR(e.snapshot().alpha, alpha, 1e-12);
    EXPECT_DOUBLE_EQ(e.delayer().state(), 50e6 + (state - 100e6) * 2);

    // The next packet continues from the shifted state: one EMA step moves it by
    // w*(C - D), w = 1.4e-4, sd(C) = 20 ms * 120 = 2.4 s, i.e. ~0.33 ms -- far from
    // the old mean (100 ms) and from a fresh draw's spread (20 ms).
    const double shifted = e.delayer().state();
    feed(1);
    EXPECT_NEAR(e.delayer().state(), shifted, 2 * kNsPerMs);
    feed(kN - 1);

    std::uint64_t next = 0;
    for (std::size_t k; (k = e.drain(kForever, out, 512)) > 0;)
        for (std::size_t i = 0; i < k; ++i)
            ASSERT_EQ(out[i].seq, next++);
    EXPECT_EQ(next, 2 * kN);
    const auto s = e.snapshot();
    EXPECT_EQ(s.packets_in, 2 * kN);
    EXPECT_EQ(s.packets_out, 2 * kN);
    EXPECT_EQ(s.bytes_out, 2 * kN * 700);
    EXPECT_EQ(s.drops.total(), 0u);
    EXPECT_EQ(s.in_flight, 0u);
    EXPECT_EQ(s.rate_intervals, 19u);
}

// correlated -> reordered -> uncorrelated -> reordered -> correlated, each switch with
// thousands of packets queued: no packet lost or duplicated, in_flight unchanged by the
// switch, and departures stay in transmission-time order throughout. Eight seeds.
class StrategySwitch : public ::testing::TestWithParam<int> {};
TEST_P(StrategySwitch, MovesQueuedPacketsWithoutLoss) {
    LinkParams p = base_params();
    p.seed = GetParam();
    p.mean_delay = 10 * kNsPerMs;
    p.jitter = kNsPerMs;
    Emulator<Packet> e(p);
    const Strategy order[] = {Strategy::reordered, Strategy::uncorrelated, Strategy::reordered,
                              Strategy::correlated, Strategy::reordered};
    std::vector<int> seen;
    TimeNs last_tx = std::numeric_limits<TimeNs>::min();
    Packet burst[8], out[256];
    TimeNs tx[256];
    std::uint64_t seq = 0;
    TimeNs now = 0;
    auto drain = [&](TimeNs t) {
        for (std::size_t k; (k = e.drain(t, out, 256, tx)) > 0;)
            for (std::size_t i = 0; i < k; ++i) {
                ASSERT_GE(tx[i], last_tx);
                last_tx = tx[i];
                ASSERT_EQ(seen[out[i].seq], 0);
                seen[out[i].seq] = 1;
            }
    };
    for (std::size_t phase = 0; phase <= std::size(order); ++phase) {
        for (int b = 0; b < 2000; ++b, now += 8 * kNsPerUs) {
            for (auto& pk : burst)
                pk = Packet{seq++, now, 512};
            seen.resize(seq, 0);
            ASSERT_EQ(e.ingest(burst, 8, now), 0u);
            drain(now);
        }
        if (phase == std::size(order)) break;
        const std::size_t queued = e.in_flight();
        ASSERT_GT(queued, 5000u);  // ~10 ms of 1 Mpps (the delay is > 5 ms: 5 sigma)
        p.strategy = order[phase];
        e.set_params(p);
        EXPECT_EQ(e.in_flight(), queued) << "switch " << phase << " to " << to_string(p.strategy);
        const auto s = e.snapshot();
        EXPECT_EQ(s.packets_in, s.packets_out + s.drops.total() + s.in_flight);
        ASSERT_TRUE(e.next_departure().has_value());
        EXPECT_GE(*e.next_departure(), last_tx);
    }
    drain(kForever);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(seq));
    EXPECT_EQ(e.snapshot().packets_out, seq);
    EXPECT_EQ(e.in_flight(), 0u);
}
INSTANTIATE_TEST_SUITE_P(Seeds, StrategySwitch, ::testing::Range(1, 9));

// Randomised run with every drop cause: loss (Bernoulli, then Gilbert-Elliott), spacer
// spacer limit, policer, and a small buffer limit, across strategy changes. After every
// ingest and every drain: in = out + drops + in_flight, in packets and in bytes, and each
// packet is in exactly one of: dropped, sent, queued.
TEST(Emulator, ConservationHoldsAfterEveryIngestAndDrain) {
    LinkParams p;
    p.distribution = Distribution::normal;
    p.mean_delay = 2 * kNsPerMs;
    p.jitter = kNsPerMs;
    p.rate_window = 200 * kNsPerUs;
    p.half_life = kNsPerMs;
    p.buffer_limit_packets = 600;
    p.seed = 99;
    struct Phase {
        Strategy s;
        Limiter l;
        LossModel m;
    };
    const Phase phases[] = {
        {Strategy::correlated, Limiter::spacer, LossModel::bernoulli},
        {Strategy::reordered, Limiter::policer, LossModel::gilbert_elliott},
        {Strategy::uncorrelated, Limiter::spacer, LossModel::gilbert_elliott},
        {Strategy::reordered, Limiter::spacer, LossModel::bernoulli},
        {Strategy::correlated, Limiter::policer, LossModel::bernoulli},
        {Strategy::correlated, Limiter::none, LossModel::none},
    };
    Emulator<Packet> e;
    Rng rng(123);
    enum State : std::uint8_t { kNone, kQueued, kDropped, kSent };
    std::vector<State> state;
    std::uint64_t bytes_in = 0, bytes_out = 0, bytes_dropped = 0;
    Packet burst[32], dropped[32], out[64];
    TimeNs now = 0;
    auto check = [&] {
        const auto s = e.snapshot();
        ASSERT_EQ(s.packets_in, s.packets_out + s.drops.total() + s.in_flight);
        ASSERT_EQ(s.in_flight, e.in_flight());
        ASSERT_EQ(s.bytes_in, bytes_in);
        ASSERT_EQ(s.bytes_out, bytes_out);
        ASSERT_LE(s.in_flight, p.buffer_limit_packets);
    };
    for (const Phase& ph : phases) {
        p.strategy = ph.s;
        p.limiter = ph.l;
        p.rate_bps = 200e6;
        p.queue_limit_bytes = 64 * 1024;
        p.policer_burst_bytes = 32 * 1024;
        p.loss_model = ph.m;
        p.loss_probability = 0.02;
        p.ge_p = 0.01;
        p.ge_r = 0.3;
        p.ge_loss_good = 0.0;
        p.ge_loss_bad = 0.5;
        validate(p);
        e.set_params(p);
        check();
        for (int b = 0; b < 5000; ++b) {
            const std::size_t n = 1 + rng() % 32;
            for (std::size_t i = 0; i < n; ++i) {
                burst[i] = Packet{state.size(), now, 64 + static_cast<std::uint32_t>(rng() % 1455)};
                state.push_back(kQueued);
                bytes_in += burst[i].length;
            }
            const std::size_t nd = e.ingest(burst, n, now, dropped);
            for (std::size_t i = 0; i < nd; ++i) {
                ASSERT_EQ(state[dropped[i].seq], kQueued);
                state[dropped[i].seq] = kDropped;
                bytes_dropped += dropped[i].length;
            }
            check();
            // ~300 Mbit/s offered in bursts into 200 Mbit/s, with pauses.
            now += static_cast<TimeNs>(rng() % (b % 500 < 400 ? 40 * kNsPerUs : 400 * kNsPerUs));
            for (std::size_t k; (k = e.drain(now, out, 1 + rng() % 64)) > 0;) {
                for (std::size_t i = 0; i < k; ++i) {
                    ASSERT_EQ(state[out[i].seq], kQueued);
                    state[out[i].seq] = kSent;
                    bytes_out += out[i].length;
                }
                check();
            }
        }
    }
    const auto s = e.snapshot();
    std::uint64_t queued = 0;
    for (auto st : state)
        queued += st == kQueued;
    EXPECT_EQ(queued, s.in_flight);
    EXPECT_EQ(
        bytes_in, bytes_out + bytes_dropped + [&] {
            std::uint64_t b = 0;
            Packet o[64];
            for (std::size_t k; (k = e.drain(kForever, o, 64)) > 0;)
                for (std::size_t i = 0; i < k; ++i)
                    b += o[i].length;
            return b;
        }());
    EXPECT_EQ(e.in_flight(), 0u);
    EXPECT_GT(s.drops[DropCause::loss], 0u);
    EXPECT_GT(s.drops[DropCause::spacer], 0u);
    EXPECT_GT(s.drops[DropCause::policer], 0u);
    EXPECT_GT(s.drops[DropCause::buffer_full], 0u);
}

struct RunResult {
    std::vector<std::uint64_t> seq;
    std::vector<TimeNs> tx;
    std::vector<std::uint64_t> dropped;
    bool operator==(const RunResult&) const = default;
};

RunResult seeded_run(std::uint64_t seed, Strategy strategy, std::uint64_t* seed_used = nullptr,
                     std::uint64_t stream = 0) {
    LinkParams p;
    p.strategy = strategy;
    p.distribution = Distribution::gamma;
    p.mean_delay = kNsPerMs;
    p.jitter = 300 * kNsPerUs;
    p.half_life = 500 * kNsPerUs;
    p.rate_window = 100 * kNsPerUs;
    p.limiter = Limiter::spacer;
    p.rate_bps = 1e9;
    p.loss_model = LossModel::gilbert_elliott;
    p.ge_p = 0.01;
    p.ge_r = 0.2;
    p.seed = seed;
    Emulator<Packet> e(p, stream);
    if (seed_used) *seed_used = e.seed();
    Rng traffic(4);  // the traffic is the same in every run
    RunResult r;
    Packet burst[16], dropped[16], out[64];
    TimeNs tx[64];
    TimeNs now = 0;
    std::uint64_t seq = 0;
    for (int b = 0; b < 5000; ++b) {
        const std::size_t n = 1 + traffic() % 16;
        for (std::size_t i = 0; i < n; ++i)
            burst[i] = Packet{seq++, now, 1000};
        const std::size_t nd = e.ingest(burst, n, now, dropped);
        for (std::size_t i = 0; i < nd; ++i)
            r.dropped.push_back(dropped[i].seq);
        now += static_cast<TimeNs>(traffic() % (100 * kNsPerUs));
        for (std::size_t k; (k = e.drain(now, out, 64, tx)) > 0;)
            for (std::size_t i = 0; i < k; ++i) {
                r.seq.push_back(out[i].seq);
                r.tx.push_back(tx[i]);
            }
    }
    return r;
}

// Emulator::reserve(n) makes room in every queue kind, whatever the parameters in force when
// it is called: after a switch of strategy, limiter or queue discipline, filling the queues
// up to n packets and draining them keeps the heap where it was (the data plane reserves at
// start, so that its lcore never grows a queue; the soak run's heap profile found the
// Bottleneck's nodes and the calendar's heaps growing there). glibc's own count of the bytes
// in use (mallinfo2) is the reference; AddressSanitizer's allocator keeps none.
TEST(Emulator, ReserveCoversEveryQueueKindForAnyLaterParameters) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "mallinfo2 does not count AddressSanitizer's allocations";
#else
    constexpr std::size_t kN = 4096;
    auto heap_in_use = [] {
        const struct mallinfo2 m = mallinfo2();
        return m.uordblks + m.hblkhd;
    };
    LinkParams reordered_far;  // beyond the calendar's horizon (2.1 s): its far-future heap
    reordered_far.strategy = Strategy::reordered;
    reordered_far.distribution = Distribution::uniform;
    reordered_far.mean_delay = 3 * kNsPerSec;
    reordered_far.jitter = kNsPerSec;
    LinkParams reordered_near = reordered_far;  // within it: the calendar's buckets
    reordered_near.mean_delay = 50 * kNsPerMs;
    reordered_near.jitter = 20 * kNsPerMs;
    std::vector<std::pair<std::string, LinkParams>> configs = {
        {"reordered, 3 s", reordered_far}, {"reordered, 50 ms", reordered_near}};
    for (const QueueKind q :
         {QueueKind::droptail, QueueKind::codel, QueueKind::fq_codel, QueueKind::pie}) {
        LinkParams p;  // a 10 Mbit/s spacer: 1 Mpps of 700-byte packets queue at once
        p.limiter = Limiter::spacer;
        p.rate_bps = 1e7;
        p.queue = q;
        p.queue_limit_packets = kN;
        configs.emplace_back(std::string(to_string(q)), p);
    }
    for (const auto& [name, p] : configs) {
        SCOPED_TRACE(name);
        Emulator<Packet> e;  // correlated, no limiter: a FIFO and no queue discipline in force
        e.reserve(kN + 64);
        e.set_params(p);
        std::vector<Packet> out(kN + 64), dropped(64);
        Packet burst[32];
        std::size_t sent = 0, drops = 0;
        std::uint64_t seq = 0;
        const std::size_t before = heap_in_use();
        for (TimeNs t = 0; seq < kN; t += 32 * kNsPerUs) {
            for (std::size_t i = 0; i < 32; ++i, ++seq)
                burst[i] = Packet{seq, t, 700};
            drops += e.ingest(burst, 32, t, dropped.data());
        }
        const std::size_t queued = e.in_flight();
        while (const std::size_t n =
                   e.drain(std::numeric_limits<TimeNs>::max() / 2, out.data(), out.size()))
            sent += n;
        const std::size_t after = heap_in_use();
        EXPECT_EQ(after, before) << "the packet path allocated " << after - before << " bytes with "
                                 << queued << " packets queued";
        const auto c = e.snapshot();  // (CoDel's drops leave at a dequeue, not from ingest)
        EXPECT_EQ(c.packets_out, sent);
        EXPECT_EQ(c.packets_out + c.drops.total(), kN);
        EXPECT_GE(c.drops.total(), drops);
        EXPECT_GT(queued, kN / 2);
    }
#endif
}

TEST(Emulator, SeededRunsAreBitForBitReproducible) {
    for (auto s : {Strategy::correlated, Strategy::reordered}) {
        const RunResult a = seeded_run(42, s), b = seeded_run(42, s), c = seeded_run(43, s);
        ASSERT_GT(a.tx.size(), 10'000u);
        EXPECT_FALSE(a.dropped.empty());
        EXPECT_TRUE(a == b) << "same seed, different run";
        EXPECT_NE(a.tx, c.tx) << "different seed, same transmission times";
        EXPECT_NE(a.dropped, c.dropped);
    }
}

// The data plane's two directions share a seed but not a stream: their delays and losses
// differ, each is reproducible, and stream 0 is the seed's own (the simulator's).
TEST(Emulator, StreamsOfOneSeedAreIndependentAndReproducible) {
    for (auto s : {Strategy::correlated, Strategy::reordered}) {
        std::uint64_t used = 0;
        const RunResult own = seeded_run(42, s), s0 = seeded_run(42, s, nullptr, 0);
        const RunResult s1 = seeded_run(42, s, &used, 1), again = seeded_run(42, s, nullptr, 1);
        EXPECT_TRUE(own == s0);
        EXPECT_TRUE(s1 == again);
        EXPECT_EQ(used, 42u) << "the reported seed is the configured one";
        EXPECT_NE(s1.tx, own.tx);
        EXPECT_NE(s1.dropped, own.dropped);
    }
}

TEST(Emulator, SeedZeroDrawsAReportedNonZeroSeed) {
    std::uint64_t s1 = 0, s2 = 0;
    const RunResult a = seeded_run(0, Strategy::correlated, &s1);
    const RunResult b = seeded_run(0, Strategy::correlated, &s2);
    EXPECT_NE(s1, 0u);
    EXPECT_NE(s2, 0u);
    EXPECT_NE(s1, s2);  // 2^-64 chance of a false failure
    EXPECT_NE(a.tx, b.tx);
    // The reported seed reproduces the run.
    EXPECT_TRUE(seeded_run(s1, Strategy::correlated) == a);

    LinkParams p;
    Emulator<Packet> e(p);
    const std::uint64_t drawn = e.seed();
    EXPECT_NE(drawn, 0u);
    EXPECT_EQ(e.params().seed, 0u);
    p.mean_delay = kNsPerMs;
    e.set_params(p);  // still seed 0: the drawn seed stays
    EXPECT_EQ(e.seed(), drawn);
    p.seed = 5;
    e.set_params(p);
    EXPECT_EQ(e.seed(), 5u);
}

// normal(1 ms, 3 ms): P(D < 0) = Phi(-1/3) = 0.36944. 10^5 packets: SE = 0.0015.
TEST(Emulator, NegativeDelaysAreClampedAndCounted) {
    for (auto strategy : {Strategy::uncorrelated, Strategy::reordered}) {
        LinkParams p;
        p.strategy = strategy;
        p.distribution = Distribution::normal;
        p.mean_delay = kNsPerMs;
        p.jitter = 3 * kNsPerMs;
        p.seed = 31;
        Emulator<Packet> e(p);
        constexpr std::uint64_t n = 100'000;
        // Reordered: the calendar queue keeps times to 64 ns, rounded up.
        const TimeNs resolution =
            strategy == Strategy::reordered ? CalendarQueue<Packet>::kResolution : 1;
        std::uint64_t zero_delay = 0, got = 0;
        Packet out[256];
        TimeNs tx[256];
        auto take = [&](TimeNs now) {
            for (std::size_t k; (k = e.drain(now, out, 256, tx)) > 0;)
                for (std::size_t i = 0; i < k; ++i, ++got) {
                    ASSERT_GE(tx[i], out[i].t_arr);
                    zero_delay += tx[i] - out[i].t_arr < resolution;
                }
        };
        for (std::uint64_t i = 0; i < n; ++i) {
            const TimeNs now = static_cast<TimeNs>(i) * kNsPerUs;
            Packet pk{i, now, 100};
            e.ingest(&pk, 1, now);
            take(now);
        }
        take(kForever);
        EXPECT_EQ(got, n);
        const double expected = 0.5 * std::erfc(1.0 / 3.0 / std::sqrt(2.0));
        const double frac = static_cast<double>(e.snapshot().delays_clamped) / n;
        EXPECT_NEAR(frac, expected, 5 * std::sqrt(expected * (1 - expected) / n));
        // Reordered sends every packet at its own time: the clamped ones leave at once
        // (within the queue's resolution, as may the rare packet whose delay is below it:
        // density ~1.3e-7 per ns here, so ~1 of 10^5). FIFO may hold a clamped packet
        // behind its predecessor.
        if (strategy == Strategy::reordered) {
            EXPECT_GE(zero_delay, e.snapshot().delays_clamped);
            EXPECT_LE(zero_delay, e.snapshot().delays_clamped + 5);
        }
    }
}

TEST(Emulator, BufferLimitDropsTheExcess) {
    LinkParams p;
    p.mean_delay = kNsPerMs;
    p.buffer_limit_packets = 10;
    Emulator<Packet> e(p);
    Packet in[15], dropped[15];
    for (std::uint64_t i = 0; i < 15; ++i)
        in[i] = Packet{i, 0, 100};
    ASSERT_EQ(e.ingest(in, 15, 0, dropped), 5u);
    for (std::uint64_t i = 0; i < 5; ++i)
        EXPECT_EQ(dropped[i].seq, 10 + i);
    EXPECT_EQ(e.snapshot().drops[DropCause::buffer_full], 5u);
    EXPECT_EQ(e.in_flight(), 10u);
    EXPECT_EQ(e.next_departure(), kNsPerMs);
    Packet out[15];
    EXPECT_EQ(e.drain(kNsPerMs - 1, out, 15), 0u);
    EXPECT_EQ(e.drain(kNsPerMs, out, 15), 10u);
    EXPECT_FALSE(e.next_departure().has_value());
    EXPECT_EQ(e.ingest(in, 0, 0), 0u);
    EXPECT_EQ(e.snapshot().packets_in, 15u);
}

// Packets the caller refuses before ingest (the data plane: no buffer for them) count as
// arrived and dropped, and touch nothing else: queue, rate estimate and other causes stay.
TEST(Emulator, RefusedPacketsCountAsArrivedAndDropped) {
    LinkParams p;
    p.mean_delay = kNsPerMs;
    Emulator<Packet> e(p);
    Packet in[4];
    for (std::uint64_t i = 0; i < 4; ++i)
        in[i] = Packet{i, 0, 100};
    ASSERT_EQ(e.ingest(in, 4, 0), 0u);
    e.refuse(3, 450, DropCause::buffer_full);
    e.refuse(0, 0, DropCause::loss);
    const CounterSnapshot s = e.snapshot();
    EXPECT_EQ(s.packets_in, 7u);
    EXPECT_EQ(s.bytes_in, 4u * 100 + 450);
    EXPECT_EQ(s.drops[DropCause::buffer_full], 3u);
    EXPECT_EQ(s.drops.total(), 3u);
    EXPECT_EQ(s.in_flight, 4u);
    EXPECT_EQ(s.packets_in, s.packets_out + s.drops.total() + s.in_flight);
    EXPECT_EQ(e.rate_estimator().intervals(), 0u);
}
TEST(Emulator, NextDepartureIsTheEarliestQueuedTransmission) {
    LinkParams p;
    p.strategy = Strategy::reordered;
    p.mean_delay = 10 * kNsPerMs;
    p.jitter = 5 * kNsPerMs;
    p.seed = 3;
    Emulator<Packet> e(p);
    for (std::uint64_t i = 0; i < 1000; ++i) {
        Packet pk{i, static_cast<TimeNs>(i) * 100, 64};
        e.ingest(&pk, 1, pk.t_arr);
    }
    Packet out[1];
    TimeNs tx[1];
    TimeNs prev = 0;
    while (auto next = e.next_departure()) {
        ASSERT_EQ(e.drain(*next, out, 1, tx), 1u);
        ASSERT_EQ(tx[0], *next);
        ASSERT_GE(tx[0], prev);
        prev = tx[0];
    }
    EXPECT_EQ(e.snapshot().packets_out, 1000u);
}

// Two emulators built from these draw the same delays: one is the other's reference.
LinkParams twin_params(Strategy s) {
    LinkParams p = base_params();
    p.strategy = s;
    p.mean_delay = 2 * kNsPerMs;
    p.jitter = kNsPerMs;
    return p;
}

// due_at_least(now, k) against the transmission times a twin emulator (same seed) drains:
// exact in correlated mode (a FIFO), never "no" with k due in reordered mode.
TEST(Emulator, DueAtLeastAgreesWithWhatDrainReturns) {
    for (const Strategy s : {Strategy::correlated, Strategy::reordered}) {
        SCOPED_TRACE(to_string(s));
        const LinkParams p = twin_params(s);
        Emulator<Packet> a(p), b(p);
        for (std::uint64_t i = 0; i < 2000; ++i) {
            Packet pk{i, static_cast<TimeNs>(i) * 1000, 64};
            a.ingest(&pk, 1, pk.t_arr);
            b.ingest(&pk, 1, pk.t_arr);
        }
        std::vector<TimeNs> tx(2000);
        std::vector<Packet> out(2000);
        ASSERT_EQ(a.drain(kForever, out.data(), out.size(), tx.data()), 2000u);
        Rng rng(5);
        for (int q = 0; q < 4000; ++q) {
            // Around the j-th departure, k close to the count due there.
            const std::size_t j = rng() % tx.size();
            const TimeNs now = tx[j] - static_cast<TimeNs>(rng() % 2);
            const std::size_t k = j + 1 + rng() % 5 - std::min<std::size_t>(j, 2);  // >= 1
            const auto due =
                static_cast<std::size_t>(std::upper_bound(tx.begin(), tx.end(), now) - tx.begin());
            if (s == Strategy::correlated) {
                ASSERT_EQ(b.due_at_least(now, k), due >= k) << "now " << now << ", k " << k;
            } else if (due >= k) {
                ASSERT_TRUE(b.due_at_least(now, k)) << "now " << now << ", k " << k;
            }
        }
    }
}

// drain_view hands out the same packets, in the same order and with the same counts, as
// drain on a twin emulator, whether it leaves them in the queue or copies them.
TEST(Emulator, DrainViewReturnsWhatDrainReturns) {
    for (const Strategy s : {Strategy::correlated, Strategy::reordered}) {
        SCOPED_TRACE(to_string(s));
        const LinkParams p = twin_params(s);
        Emulator<Packet> a(p), b(p);
        std::uint64_t seq = 0;
        Packet got_a[16], buf[16];
        std::size_t in_queue = 0, copied = 0;
        for (TimeNs now = 0; now < 20 * kNsPerMs; now += 5 * kNsPerUs) {
            Packet burst[8];  // 1.6 Mpps: buckets large enough for the counting sort
            for (Packet& pk : burst)
                pk = Packet{seq++, now, 64};
            a.ingest(burst, 8, now);
            b.ingest(burst, 8, now);
            const std::size_t max = 16 - seq % 5;  // mostly more than the 8 due per step
            const std::size_t na = a.drain(now, got_a, max);
            const auto [view, nb] = b.drain_view(now, buf, max);
            ASSERT_EQ(na, nb) << "at " << now;
            (view == buf ? copied : in_queue) += nb;
            for (std::size_t i = 0; i < na; ++i)
                ASSERT_EQ(view[i].seq, got_a[i].seq) << "at " << now;
        }
        expect_same_counters(a.snapshot(), b.snapshot());
        if (s == Strategy::reordered) {
            EXPECT_GT(in_queue, copied);  // the view path ran
        }
    }
}

TEST(Emulator, SnapshotJsonHasEveryCounter) {
    Emulator<Packet> e;
    const nlohmann::json j = to_json(e.snapshot());
    for (const char* k :
         {"packets_in", "bytes_in", "packets_out", "bytes_out", "drops_loss", "drops_policer",
          "drops_spacer", "drops_buffer_full", "drops_class", "drops_aqm", "delays_clamped",
          "waited", "ecn_marked", "in_flight", "alpha", "rate_pps", "rate_intervals"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j.size(), 17u);
}

}  // namespace
}  // namespace linkem

namespace linkem {
namespace {

// ingest() with fates decides as ingest() without (the same seed gives the same drops and
// transmission times), and each fate adds up: a queued packet's transmission time is its
// arrival + delay + limiter wait + an order wait >= 0 (FIFO), a drop names its cause.
class Fates : public ::testing::TestWithParam<std::tuple<Strategy, Limiter>> {};

TEST_P(Fates, SayWhatIngestDid) {
    LinkParams p = base_params();
    p.strategy = std::get<0>(GetParam());
    p.limiter = std::get<1>(GetParam());
    p.mean_delay = 5 * kNsPerMs;
    p.jitter = 3 * kNsPerMs;
    p.rate_bps = 200'000'000;       // 1000-byte frames: 40 us each
    p.queue_limit_bytes = 200'000;  // the spacer drops past 8 ms of backlog
    p.policer_burst_bytes = 20'000;
    p.loss_model = LossModel::bernoulli;
    p.loss_probability = 0.05;
    p.buffer_limit_packets = 400;
    Emulator<Packet> plain(p), noted(p);
    std::uint64_t seq = 0;
    std::map<DropCause, std::uint64_t> causes;
    std::vector<TimeNs> tx_plain, tx_noted;
    std::uint64_t queued = 0, order_waits = 0;
    for (int burst = 0; burst < 2000; ++burst) {
        const TimeNs now = burst * 30 * kNsPerUs;  // 32 frames per 30 us: well above the rate
        Packet in[32];
        for (auto& pk : in)
            pk = Packet{seq++, now, 1000};
        Packet d1[32], d2[32];
        PacketFate f[32];
        const std::size_t n1 = plain.ingest(in, 32, now, d1);
        const std::size_t n2 = noted.ingest(in, 32, now, d2, f);
        ASSERT_EQ(n1, n2);
        std::size_t dropped = 0;
        for (int i = 0; i < 32; ++i) {
            if (f[i].outcome != PacketFate::kQueued) {
                ++causes[static_cast<DropCause>(f[i].outcome)];
                ASSERT_LT(dropped, n2);
                EXPECT_EQ(d2[dropped++].seq, in[i].seq);
                continue;
            }
            ++queued;
            const DurationNs emulated = f[i].tx - now;
            const DurationNs order = emulated - f[i].delay - f[i].limiter_wait;
            EXPECT_GE(f[i].delay, 0);
            EXPECT_GE(f[i].limiter_wait, 0);
            if (p.strategy == Strategy::reordered) {
                EXPECT_EQ(order, 0) << "reordered: no order wait";
            } else {
                EXPECT_GE(order, -1) << "rounding at most";
                order_waits += order > 1;
            }
            if (p.limiter == Limiter::none || p.limiter == Limiter::policer) {
                EXPECT_EQ(f[i].limiter_wait, 0);
            }
        }
        EXPECT_EQ(dropped, n2);
        Packet o[2048];
        TimeNs t1[2048], t2[2048];
        const std::size_t m1 = plain.drain(now, o, 2048, t1);
        const std::size_t m2 = noted.drain(now, o, 2048, t2);
        ASSERT_EQ(m1, m2);
        tx_plain.insert(tx_plain.end(), t1, t1 + m1);
        tx_noted.insert(tx_noted.end(), t2, t2 + m2);
    }
    EXPECT_EQ(tx_plain, tx_noted);
    const CounterSnapshot a = plain.snapshot(), b = noted.snapshot();
    for (const DropCauseInfo& c : kDropCauses)
        EXPECT_EQ(causes[c.cause], b.drops[c.cause]) << c.name;
    EXPECT_EQ(a.drops.total(), b.drops.total());
    EXPECT_GT(causes[DropCause::loss], 0u);
    EXPECT_GT(queued, 0u);
    const std::uint64_t by_limit = p.limiter == Limiter::spacer    ? causes[DropCause::spacer]
                                   : p.limiter == Limiter::policer ? causes[DropCause::policer]
                                                                   : causes[DropCause::buffer_full];
    EXPECT_GT(by_limit, 0u) << "the limit this limiter sets was reached";
    EXPECT_TRUE(p.strategy == Strategy::reordered || order_waits > 0);
}

INSTANTIATE_TEST_SUITE_P(
    Emulator, Fates,
    ::testing::Combine(::testing::Values(Strategy::correlated, Strategy::reordered),
                       ::testing::Values(Limiter::none, Limiter::spacer, Limiter::policer)));

}  // namespace
}  // namespace linkem
