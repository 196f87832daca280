// The Emulator's telemetry (docs/protocol.md, `delay`): the delay statistics of every queued
// packet, the lateness of every departure, sampled packets followed from arrival to
// departure, and interval reports whose counters balance.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "linkem/emulator.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using test::Packet;

LinkParams constant(DurationNs delay, Strategy s = Strategy::correlated) {
    LinkParams p;
    p.strategy = s;
    p.distribution = Distribution::constant;
    p.mean_delay = delay;
    p.seed = 7;
    return p;
}

// Feeds one packet every `gap` ns from t = 1 ms for `n` packets and drains at every arrival
// time plus `late` (i.e. `late` ns after each packet fell due, when late < gap).
template <class E>
std::vector<Packet> run(E& e, std::size_t n, DurationNs gap, DurationNs late) {
    std::vector<Packet> out(4096), all;
    const TimeNs t0 = kNsPerMs;
    for (std::size_t i = 0; i < n; ++i) {
        const TimeNs t = t0 + static_cast<TimeNs>(i) * gap;
        Packet p{i, t, 100};
        e.ingest(&p, 1, t);
        const std::size_t k = e.drain(t + late, out.data(), out.size());
        all.insert(all.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (TimeNs t = t0 + static_cast<TimeNs>(n) * gap;; t += gap) {
        const std::size_t k = e.drain(t + late, out.data(), out.size());
        all.insert(all.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k));
        if (e.in_flight() == 0) break;
    }
    return all;
}

TEST(EmulatorTelemetry, ConstantDelayGivesExactDelaySamplesAndLateness) {
    constexpr DurationNs kDelay = 50 * kNsPerUs, kGap = 10 * kNsPerUs, kLate = 3 * kNsPerUs;
    Emulator<Packet> e(constant(kDelay));
    SpscRing<DelaySample> sink(4096);
    e.set_telemetry(100 * kNsPerUs, 1024, &sink);  // a sample every 100 us
    const auto out = run(e, 10000, kGap, kLate);
    ASSERT_EQ(out.size(), 10000u);
    const IntervalReport r = e.take_report(kNsPerSec, 5);
    EXPECT_EQ(r.params_generation, 5u);
    EXPECT_TRUE(balances(r.counters));
    EXPECT_EQ(r.delay.count, 10000u);
    EXPECT_DOUBLE_EQ(r.delay.mean(), static_cast<double>(kDelay));
    EXPECT_DOUBLE_EQ(r.delay.jitter(), 0.0);
    EXPECT_EQ(r.lateness.count, 10000u);
    EXPECT_DOUBLE_EQ(r.lateness.min, static_cast<double>(kLate));
    EXPECT_DOUBLE_EQ(r.lateness.max, static_cast<double>(kLate));
    std::vector<DelaySample> s(4096);
    const std::size_t n = sink.pop(s.data(), s.size());
    // 100 ms of arrivals, one sample per 100 us.
    EXPECT_GE(n, 990u);
    EXPECT_LE(n, 1001u);
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(s[i].delay_ns, kDelay);
        EXPECT_EQ(s[i].scheduled_ns, kDelay);
        EXPECT_EQ(s[i].actual_ns, kDelay + kLate) << i;
        if (i > 0) {
            EXPECT_GE(s[i].arrival_ns - s[i - 1].arrival_ns, 100 * kNsPerUs);
        }
    }
    EXPECT_EQ(r.samples_dropped, 0u);
}

TEST(EmulatorTelemetry, ReportsCoverIntervalsAndReset) {
    Emulator<Packet> e(constant(kNsPerUs));
    SpscRing<DelaySample> sink(16);
    e.set_telemetry(0, 0, &sink);
    Packet p{0, 0, 100};
    e.ingest(&p, 1, 1000);
    const IntervalReport a = e.take_report(2000, 0);
    EXPECT_EQ(a.start_ns, 2000);  // no report before: the interval starts at the first one
    EXPECT_EQ(a.delay.count, 1u);
    EXPECT_EQ(a.lateness.count, 0u);
    EXPECT_EQ(a.counters.in_flight, 1u);
    Packet out[4];
    ASSERT_EQ(e.drain(2500, out, 4), 1u);
    const IntervalReport b = e.take_report(3000, 0);
    EXPECT_EQ(b.start_ns, 2000);
    EXPECT_EQ(b.end_ns, 3000);
    EXPECT_EQ(b.delay.count, 0u);
    EXPECT_EQ(b.lateness.count, 1u);
    EXPECT_DOUBLE_EQ(b.lateness.mean(), 500.0);
    EXPECT_TRUE(balances(b.counters));
    EXPECT_EQ(b.counters.packets_out, 1u);
}

TEST(EmulatorTelemetry, NormalDelaysHaveTheConfiguredMeanAndSd) {
    LinkParams p;
    p.strategy = Strategy::uncorrelated;
    p.mean_delay = 10 * kNsPerMs;
    p.jitter = kNsPerMs;
    p.seed = 3;
    Emulator<Packet> e(p);
    std::vector<Packet> in(64);
    for (int burst = 0; burst < 3000; ++burst) {
        for (auto& x : in)
            x.length = 100;
        e.ingest(in.data(), in.size(), burst * 1000);
    }
    const IntervalReport r = e.take_report(3'000'000, 0);
    ASSERT_EQ(r.delay.count, 192000u);
    // sd of the mean: 1 ms / sqrt(192000) = 2.3 us; 5 sd. sd's own error ~ 1.6 us.
    EXPECT_NEAR(r.delay.mean(), 10e6, 12e3);
    EXPECT_NEAR(r.delay.jitter(), 1e6, 10e3);
    EXPECT_GT(r.delay.min, 5e6);
    EXPECT_LT(r.delay.max, 15e6);
}

TEST(EmulatorTelemetry, ReorderedSamplesLeaveAtTheirTimeAndNeverEarly) {
    LinkParams p;
    p.strategy = Strategy::reordered;
    p.mean_delay = 200 * kNsPerUs;
    p.jitter = 50 * kNsPerUs;
    p.seed = 11;
    Emulator<Packet> e(p);
    SpscRing<DelaySample> sink(8192);
    e.set_telemetry(20 * kNsPerUs, 4096, &sink);
    const auto out = run(e, 20000, kNsPerUs, 0);
    ASSERT_EQ(out.size(), 20000u);
    std::vector<DelaySample> s(8192);
    const std::size_t n = sink.pop(s.data(), s.size());
    EXPECT_GE(n, 900u);
    std::size_t exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
        // Scheduled: the delay rounded up to the calendar's 64 ns (plus up to 64 ns of the
        // arrival's own rounding); actual: the first drain (every 1 us) at or after it.
        EXPECT_GE(s[i].scheduled_ns, s[i].delay_ns - 1);
        EXPECT_LT(s[i].scheduled_ns, s[i].delay_ns + 128);
        EXPECT_GE(s[i].actual_ns, s[i].scheduled_ns);
        EXPECT_LT(s[i].actual_ns, s[i].scheduled_ns + static_cast<DurationNs>(kNsPerUs));
        exact += s[i].actual_ns - s[i].scheduled_ns < static_cast<DurationNs>(kNsPerUs);
    }
    EXPECT_EQ(exact, n);
    const IntervalReport r = e.take_report(kNsPerSec, 0);
    EXPECT_EQ(r.lateness.count, 20000u);
    EXPECT_GE(r.lateness.min, 0.0);
    EXPECT_LT(r.lateness.max, 1000.0);
}

// add_lateness (linkem/delay_sampler.hpp) takes the extremes of a drain's lateness from its first
// and last packet (every queue emits in tx order) and sums in integers below 2^26 ns, in doubles
// above: both must give what a packet-by-packet reference gives, for both queues, bursts of many
// packets and a pause long enough for the double path.
TEST(EmulatorTelemetry, LatenessStatisticsMatchAPerPacketReference) {
    for (const Strategy s : {Strategy::correlated, Strategy::reordered}) {
        LinkParams p;
        p.strategy = s;
        p.mean_delay = 2 * kNsPerMs;
        p.jitter = 500 * kNsPerUs;
        p.half_life = 50 * kNsPerUs;
        p.seed = 5;
        Emulator<Packet> e(p);
        SpscRing<DelaySample> sink(1 << 16);
        e.set_telemetry(10 * kNsPerUs, 4096, &sink);
        std::vector<Packet> out(3000);
        std::vector<TimeNs> tx(out.size());
        double sum = 0, sq = 0, mn = 1e300, mx = -1e300;
        std::uint64_t count = 0;
        std::size_t unsorted = 0;
        auto drain = [&](TimeNs now) {
            const std::size_t k = e.drain(now, out.data(), out.size(), tx.data());
            unsorted += !std::is_sorted(tx.begin(), tx.begin() + static_cast<std::ptrdiff_t>(k));
            for (std::size_t i = 0; i < k; ++i) {
                const double l = static_cast<double>(now - tx[i]);
                sum += l;
                sq += l * l;
                mn = std::min(mn, l);
                mx = std::max(mx, l);
            }
            count += k;
        };
        TimeNs t = kNsPerMs;
        for (int i = 0; i < 40000; ++i, t += 250) {
            Packet pk{static_cast<std::uint64_t>(i), t, 100};
            e.ingest(&pk, 1, t);
            if (i % 97 == 0) drain(t);                 // up to a few hundred packets a drain
            if (i == 20000) drain(t + 90 * kNsPerMs);  // a 90 ms pause: > 2^26 ns late
        }
        for (int i = 0; i < 100 && e.in_flight() > 0; ++i)
            drain(t + i * kNsPerMs);
        ASSERT_EQ(e.in_flight(), 0u);
        EXPECT_EQ(unsorted, 0u) << "a queue emitted out of tx order";
        const IntervalReport r = e.take_report(t + kNsPerSec, 0);
        EXPECT_EQ(r.lateness.count, count);
        EXPECT_DOUBLE_EQ(r.lateness.min, mn);
        EXPECT_DOUBLE_EQ(r.lateness.max, mx);
        EXPECT_GT(mx, 67e6);
        EXPECT_NEAR(r.lateness.sum, sum, 1e-9 * sum);
        EXPECT_NEAR(r.lateness.sumsq, sq, 1e-9 * sq);
    }
}

// The wait sums (spacer and order wait of every queued packet) are what the samples show
// packet by packet, scheduled_ns - delay_ns, when every packet is sampled: for each
// strategy, with and without a spacer that the traffic (8 Gbit/s into 10) keeps busy. The
// samples round the drawn delay to a nanosecond (0.5 ns each) and, reordered, the
// transmission time up to the calendar queue's 64 ns; the sums take neither.
TEST(EmulatorTelemetry, WaitSumsAreTheSamplesScheduledMinusDelay) {
    for (const Strategy st : {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered})
        for (const Limiter lim : {Limiter::none, Limiter::spacer}) {
            SCOPED_TRACE(std::string(to_string(st)) + ", " + std::string(to_string(lim)));
            LinkParams p;
            p.strategy = st;
            p.mean_delay = 200 * kNsPerUs;
            p.jitter = 50 * kNsPerUs;
            p.half_life = 20 * kNsPerUs;
            p.limiter = lim;
            p.rate_bps = 10e9;
            p.seed = 9;
            Emulator<Packet> e(p);
            constexpr std::size_t kN = 20000;
            SpscRing<DelaySample> sink(1 << 16);
            e.set_telemetry(kNsPerUs, 1 << 14, &sink);  // every packet (one a microsecond)
            std::vector<Packet> out(4096);
            TimeNs t = kNsPerMs;
            for (std::size_t i = 0; i < kN; ++i, t += kNsPerUs) {
                Packet pk{i, t, 1000};
                e.ingest(&pk, 1, t);
                e.drain(t, out.data(), out.size());
            }
            for (; e.in_flight() > 0; t += kNsPerUs)
                e.drain(t, out.data(), out.size());
            std::vector<DelaySample> s(1 << 16);
            const std::size_t n = sink.pop(s.data(), s.size());
            ASSERT_EQ(n, kN);
            double sum = 0;
            for (std::size_t i = 0; i < n; ++i)
                sum += static_cast<double>(s[i].scheduled_ns - s[i].delay_ns);
            const IntervalReport r = e.take_report(t, 0);
            EXPECT_EQ(r.wait.count, kN);
            EXPECT_EQ(r.wait.count, r.delay.count);
            const double total = r.wait.spacer_ns + r.wait.order_ns;
            const double rounding = st == Strategy::reordered ? 64.0 : 0.5;
            EXPECT_GE(total, sum - rounding * kN - 1);
            EXPECT_LE(total, sum + 0.5 * kN + 1);
            if (lim == Limiter::none) {
                EXPECT_EQ(r.wait.spacer_ns, 0.0);
            }
            if (st == Strategy::reordered) {
                EXPECT_EQ(r.wait.order_ns, 0.0);
            } else {
                // What there is to see: the FIFO strategies wait behind earlier packets (the
                // correlation is weak: a half-life of 20 packets), and the delays' ups and
                // downs bunch departures up, which the spacer then spreads.
                EXPECT_GT(r.wait.order_mean(), 1000.0);
                if (lim == Limiter::spacer) {
                    EXPECT_GT(r.wait.spacer_mean(), 100.0);
                }
            }
            EXPECT_DOUBLE_EQ(r.wait.mean(), r.wait.spacer_mean() + r.wait.order_mean());
            // The next interval starts from 0.
            EXPECT_EQ(e.take_report(t + 1, 0).wait.count, 0u);
        }
}

// A burst into a spacer with a constant delay: the k-th packet of the burst waits k times
// a packet's time on the link (1000 B at 8 Gbit/s: 1 us), rounded up to a nanosecond.
TEST(EmulatorTelemetry, WaitOfABurstIntoTheSpacer) {
    for (const Strategy st : {Strategy::correlated, Strategy::reordered}) {
        LinkParams p = constant(100 * kNsPerUs, st);
        p.limiter = Limiter::spacer;
        p.rate_bps = 8e9;
        Emulator<Packet> e(p);
        std::vector<Packet> burst(10);
        for (std::size_t i = 0; i < burst.size(); ++i)
            burst[i] = Packet{i, kNsPerMs, 1000};
        e.ingest(burst.data(), burst.size(), kNsPerMs);
        const IntervalReport r = e.take_report(2 * kNsPerMs, 0);
        ASSERT_EQ(r.wait.count, 10u) << to_string(st);
        EXPECT_NEAR(r.wait.spacer_ns, 45.0 * kNsPerUs, 10.0) << to_string(st);  // 0 + ... + 9 us
        EXPECT_EQ(r.wait.order_ns, 0.0) << to_string(st);
    }
}

TEST(EmulatorTelemetry, AFullSinkDropsSamplesNeverPackets) {
    Emulator<Packet> e(constant(20 * kNsPerUs));
    SpscRing<DelaySample> sink(8);
    e.set_telemetry(kNsPerUs, 1024, &sink);
    const auto out = run(e, 5000, kNsPerUs, 0);
    EXPECT_EQ(out.size(), 5000u);
    EXPECT_EQ(sink.size(), 8u);
    EXPECT_GT(e.samples_dropped(), 4000u);
    const IntervalReport r = e.take_report(kNsPerSec, 0);
    EXPECT_EQ(r.samples_dropped, e.samples_dropped());
    EXPECT_EQ(r.counters.packets_out, 5000u);
    EXPECT_TRUE(balances(r.counters));
}

TEST(EmulatorTelemetry, SamplesAcrossAStrategySwitchAreDroppedNotMismatched) {
    Emulator<Packet> e(constant(100 * kNsPerUs));
    SpscRing<DelaySample> sink(4096);
    e.set_telemetry(5 * kNsPerUs, 4096, &sink);
    Packet p{0, 0, 100};
    for (int i = 0; i < 50; ++i)
        e.ingest(&p, 1, kNsPerMs + i * kNsPerUs);
    e.set_params(constant(100 * kNsPerUs, Strategy::reordered));
    Packet out[256];
    std::size_t got = 0;
    for (TimeNs t = kNsPerMs; t < 2 * kNsPerMs; t += kNsPerUs)
        got += e.drain(t, out, 256);
    EXPECT_EQ(got, 50u);
    EXPECT_EQ(sink.size(), 0u);
}

// Bursts that arrive more rarely than the sample period (32 packets every 1 ms against a
// sample every 50 us) still give the sample rate: each call follows several of its packets.
// After a pause of more than DelaySampler::kMaxPerCall periods a burst gives one sample and the
// schedule restarts from it.
TEST(EmulatorTelemetry, BurstsGiveTheSampleRateNotOneSampleACall) {
    for (const Strategy st : {Strategy::correlated, Strategy::reordered}) {
        constexpr DurationNs kDelay = 2 * kNsPerMs;
        Emulator<Packet> e(constant(kDelay, st));
        SpscRing<DelaySample> sink(16384);
        e.set_telemetry(50 * kNsPerUs, 16384, &sink);
        std::vector<Packet> burst(32), out(4096);
        std::uint64_t seq = 0, sent = 0, got = 0;
        auto step = [&](TimeNs t) {
            for (Packet& p : burst)
                p = Packet{seq++, t, 100};
            e.ingest(burst.data(), burst.size(), t);
            sent += burst.size();
            got += e.drain(t, out.data(), out.size());
        };
        for (int i = 0; i < 100; ++i)
            step(kNsPerMs + i * kNsPerMs);  // 100 ms
        for (TimeNs t = 101 * kNsPerMs; e.in_flight() != 0; t += kNsPerMs)
            got += e.drain(t, out.data(), out.size());
        EXPECT_EQ(got, sent);
        std::vector<DelaySample> s(16384);
        std::size_t n = sink.pop(s.data(), s.size());
        // 20 owed a call, the first call up to 21 (its schedule starts at 0): ~2000.
        EXPECT_GE(n, 1900u) << to_string(st);
        EXPECT_LE(n, 2021u) << to_string(st);
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(s[i].delay_ns, kDelay);
            EXPECT_GE(s[i].scheduled_ns, kDelay);
            EXPECT_LT(s[i].scheduled_ns, kDelay + 128);
            EXPECT_GE(s[i].actual_ns, s[i].scheduled_ns);
        }
        // A pause of 1 s, then one burst: one sample.
        step(2 * kNsPerSec);
        for (TimeNs t = 2 * kNsPerSec; e.in_flight() != 0; t += kNsPerMs)
            got += e.drain(t, out.data(), out.size());
        n = sink.pop(s.data(), s.size());
        EXPECT_EQ(n, 1u) << to_string(st);
        EXPECT_EQ(got, sent);
        const IntervalReport r = e.take_report(3 * kNsPerSec, 0);
        EXPECT_TRUE(balances(r.counters));
        EXPECT_EQ(r.samples_dropped, 0u);
    }
}

}  // namespace
}  // namespace linkem
