// The TSC clock's arithmetic (linkem/tsc_clock.hpp) on tick values made up by the test:
// conversion, re-anchoring without steps, the lock-free hand-over, pairing and rate tracking.
#include "linkem/tsc_clock.hpp"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace linkem {
namespace {

constexpr double kHz = 2'095'980'000.0;  // a TSC rate measured on a 2.1 GHz VM

TEST(TscClock, MultiplierKeepsTheRateToAFewPartsPerBillion) {
    for (double hz : {1e9, kHz, 2.1e9, 3.7e9}) {
        const double back = TscScale::hz_of(TscScale::mult_for(hz));
        EXPECT_LT(std::fabs(back / hz - 1), 1e-9) << hz;
    }
}

TEST(TscClock, StartScaleReadsSecondsAtItsRate) {
    const std::uint64_t t0 = 123'456'789'000ull;
    const TscScale s = TscScale::start(t0, 1000, kHz);
    EXPECT_EQ(s.to_ns(t0), 1000);
    // One hour of ticks: 3600 s within a microsecond (the multiplier's rounding).
    const auto hour = static_cast<std::uint64_t>(kHz * 3600);
    EXPECT_NEAR(static_cast<double>(s.to_ns(t0 + hour) - 1000), 3600e9, 1e3);
    // Ticks before the anchor read earlier times (floor, monotonic).
    EXPECT_LT(s.to_ns(t0 - 1), 1000);
    EXPECT_LE(s.to_ns(t0 - 1), s.to_ns(t0));
    EXPECT_NEAR(static_cast<double>(s.to_ns(t0 - static_cast<std::uint64_t>(kHz))), 1000 - 1e9, 1);
}

// The new scale reads what the old one read up to its anchor (or 1 ns more: its base is
// rounded up, never down), both read the same at the anchor to the nanosecond, and from
// there on time runs at the new rate: no step back, none forward beyond the nanosecond.
TEST(TscClock, ReanchorIsContinuous) {
    const std::uint64_t t0 = 5'000'000'000ull;
    const TscScale old = TscScale::start(t0, 0, 2.1e9);
    const auto t1 = t0 + static_cast<std::uint64_t>(2.1e9 * 7.3);  // 7.3 s later
    for (double new_hz : {kHz, 2.1e9 * 1.00001, 2.1e9 * 0.99999, 2.2e9}) {
        const TscScale s = old.reanchor(t1, TscScale::mult_for(new_hz));
        SCOPED_TRACE(new_hz);
        EXPECT_GE(s.to_ns(t1), old.to_ns(t1));
        EXPECT_LE(s.to_ns(t1), old.to_ns(t1) + 1);
        for (std::uint64_t t = t1 - 100'000; t < t1; t += 997) {
            ASSERT_GE(s.to_ns(t), old.to_ns(t)) << "before the anchor, at tick " << t;
            ASSERT_LE(s.to_ns(t), old.to_ns(t) + 1) << "before the anchor, at tick " << t;
        }
        // Monotonic tick by tick across the anchor.
        TimeNs prev = s.to_ns(t1 - 5000);
        for (std::uint64_t t = t1 - 5000; t < t1 + 5000; ++t) {
            const TimeNs v = s.to_ns(t);
            ASSERT_GE(v, prev) << "at tick " << t;
            prev = v;
        }
        // After the anchor: the new rate.
        const auto sec = static_cast<std::uint64_t>(new_hz);
        EXPECT_NEAR(static_cast<double>(s.to_ns(t1 + sec) - s.to_ns(t1)), 1e9, 1);
    }
}

// Many re-anchors in a row, each a small rate change: a reader that reads ticks in order
// and sometimes still holds the previous scale (not yet seeing the new one before its
// anchor) never goes back, and the timeline stays the sum of its pieces.
TEST(TscClock, ChainOfReanchorsNeverGoesBack) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> ppm(-20, 20);
    TscScale cur = TscScale::start(1'000'000, 0, kHz);
    std::uint64_t tick = 1'000'000;
    TimeNs prev = 0;
    double expected_s = 0;  // the timeline by the rates in force, in double
    double hz = kHz;
    for (int k = 0; k < 2000; ++k) {
        const std::uint64_t span = 1'000'000 + rng() % 50'000'000;  // 0.5-24 ms of ticks
        const std::uint64_t anchor = tick + span;
        const double new_hz = hz * (1 + ppm(rng) * 1e-6);
        const TscScale next = cur.reanchor(anchor, TscScale::mult_for(new_hz));
        // Readers between now and the anchor: the old scale first, then the new one.
        bool switched = false;
        for (std::uint64_t t = tick; t < anchor; t += span / 7 + 1) {
            switched = switched || rng() % 3 == 0;
            const TimeNs a = cur.to_ns(t), b = next.to_ns(t);
            ASSERT_GE(b, a);
            ASSERT_LE(b, a + 1);
            const TimeNs v = switched ? b : a;
            ASSERT_GE(v, prev);
            prev = v;
        }
        expected_s += static_cast<double>(anchor - tick) / TscScale::hz_of(cur.mult_at(tick));
        tick = anchor;
        cur = next;
        hz = new_hz;
        ASSERT_GE(cur.to_ns(tick), prev);
        prev = cur.to_ns(tick);
    }
    // Rounding: at most a nanosecond per re-anchor plus the multipliers' parts per billion.
    EXPECT_NEAR(static_cast<double>(prev) / 1e9, expected_s, 2000e-9 + expected_s * 1e-9);
}

// The hand-over to readers: a writer publishing scales (fewer than the clock has slots)
// while readers take them; every scale a reader gets is whole (its fields belong to one
// publication) and no reader ever gets an older one after a newer one.
TEST(TscClock, PublishedScalesAreReadWholeAndInOrder) {
    TscClock clock;
    auto make = [](std::uint64_t k) {
        return TscScale{k, static_cast<TimeNs>(3 * k), 5 * k, 7 * k};
    };
    clock.publish(make(1));
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (std::uint64_t k = 2; k < TscClock::kSlots; ++k) {
            clock.publish(make(k));
            // ~20 us per scale (~20 ms in all), for the readers to catch some of them.
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
            while (std::chrono::steady_clock::now() < until) {
            }
        }
        done = true;
    });
    std::vector<std::thread> readers;
    std::atomic<int> torn{0}, back{0};
    for (int r = 0; r < 2; ++r)
        readers.emplace_back([&] {
            std::uint64_t prev = 0;
            while (!done.load(std::memory_order_relaxed)) {
                const TscScale s = clock.scale();
                if (s.base_ns != static_cast<TimeNs>(3 * s.anchor) ||
                    s.mult_before != 5 * s.anchor || s.mult_after != 7 * s.anchor)
                    ++torn;
                if (s.anchor < prev) ++back;
                prev = s.anchor;
            }
        });
    writer.join();
    for (auto& t : readers)
        t.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(back.load(), 0);
    EXPECT_EQ(clock.generation(), TscClock::kSlots - 1);
    EXPECT_EQ(clock.scale().anchor, TscClock::kSlots - 1);
}

TEST(TscClock, PairingPicksTheTightestReading) {
    // Fake TSC: +10 per read, and +1000 on the reads of the 3rd try (an interrupt).
    std::uint64_t t = 0;
    int read = 0;
    auto ticks = [&] {
        ++read;
        t += (read == 5 || read == 6) ? 1000 : 10;
        return t;
    };
    TimeNs ns = 0;
    auto clock_ns = [&] { return ns += 100; };
    const ClockPair p = read_clock_pair(ticks, 8, clock_ns);
    EXPECT_EQ(p.width, 10u);
    EXPECT_EQ(read, 16);
    // The first tight try: ticks 10 and 20 around ns 100.
    EXPECT_EQ(p.tick, 15u);
    EXPECT_EQ(p.ns, 100);
}

TEST(TscClock, RateTrackerUsesTheLongestBaselineInItsWindow) {
    auto pair_at = [](double s, double hz) {
        return ClockPair{static_cast<std::uint64_t>(s * hz), static_cast<TimeNs>(s * 1e9), 40};
    };
    TscRateTracker tr(pair_at(0, kHz), 100 * kNsPerSec);
    double hz = 0;
    for (int s = 10; s <= 100; s += 10)
        hz = tr.add(pair_at(s, kHz));
    EXPECT_NEAR(hz / kHz - 1, 0, 1e-9);
    EXPECT_EQ(tr.baseline(), 100 * kNsPerSec);
    EXPECT_LT(tr.error_ppm(), 0.001);
    // The window moves: the oldest pairing goes once the baseline would exceed 100 s.
    tr.add(pair_at(110, kHz));
    EXPECT_EQ(tr.baseline(), 100 * kNsPerSec);
    // Start-up precision: 250 ms between pairings 40 ticks wide, ~0.08 ppm.
    EXPECT_LT(rate_error_ppm(pair_at(0, kHz), pair_at(0.25, kHz)), 0.1);
}

}  // namespace
}  // namespace linkem
