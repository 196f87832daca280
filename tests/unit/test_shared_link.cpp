// SharedLink: one spacer or policer for several Emulators on several threads (the data
// plane's workers of one direction). The figures checked are exact properties of the
// reservations, not timings: threads take their arrival times from a shared virtual clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <vector>

#include "linkem/emulator.hpp"
#include "linkem/limiter.hpp"
#include "linkem/rng.hpp"
#include "linkem/shared_link.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using test::Packet;
constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();

// Reference spacer at 1 byte/ns in integers (as in test_limiter.cpp): exact.
struct RefSpacer {
    std::int64_t free = std::numeric_limits<std::int64_t>::min() / 2;
    std::int64_t limit;
    bool schedule(std::int64_t t, std::int64_t bytes, std::int64_t& tx) {
        if (std::max<std::int64_t>(0, free - t) + bytes > limit) return false;
        tx = std::max(t, free);
        free = tx + bytes;
        return true;
    }
};

TEST(SharedLink, ReservesLikeOneSpacerOnArrival) {
    // At 1 byte/ns every time is whole: one user of the link decides and places exactly as
    // the reference spacer fed the arrival times.
    SharedLink link;
    RefSpacer ref{.limit = 20'000};
    Rng rng(5);
    double carry = 0;
    TimeNs now = 0;
    std::uint32_t bytes[32];
    TimeNs at[32];
    std::uint64_t passed = 0, dropped = 0;
    for (int b = 0; b < 20'000; ++b) {
        const std::size_t n = 1 + rng() % 32;
        for (std::size_t i = 0; i < n; ++i)
            bytes[i] = 64 + static_cast<std::uint32_t>(rng() % 1455);
        const std::size_t k = link.reserve(now, bytes, n, 1.0, 20'000, carry, at);
        std::size_t mine = 0;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t t;
            const bool ok = ref.schedule(now, bytes[i], t);
            ASSERT_EQ(at[i] != SharedLink::kDropped, ok) << "burst " << b << " packet " << i;
            if (ok) {
                ASSERT_EQ(at[i], t);
                ++mine;
            }
        }
        ASSERT_EQ(k, mine);
        passed += k;
        dropped += n - k;
        ASSERT_EQ(carry, 0.0);
        now += static_cast<TimeNs>(rng() % ((b / 2000) % 2 == 0 ? 6'000 : 40'000));
    }
    EXPECT_GT(dropped, 1000u);  // the overloaded phases reach the limit
    EXPECT_GT(passed, 100'000u);
}

TEST(SharedLink, PolicerIsTheTokenBucket) {
    // As a policer (limit = burst, packets not delayed): the same decisions as Policer, here
    // at 1 byte/ns where both are exact.
    SharedLink link;
    Policer ref;
    ref.configure(8e9, 50'000);
    Rng rng(9);
    double carry = 0;
    TimeNs now = 1'000'000;
    std::uint32_t bytes[16];
    TimeNs at[16];
    std::uint64_t drops = 0;
    for (int b = 0; b < 50'000; ++b) {
        const std::size_t n = 1 + rng() % 16;
        for (std::size_t i = 0; i < n; ++i)
            bytes[i] = 64 + static_cast<std::uint32_t>(rng() % 1455);
        link.reserve(now, bytes, n, 1.0, 50'000, carry, at);
        for (std::size_t i = 0; i < n; ++i) {
            const bool ok = ref.admit(now, bytes[i]);
            ASSERT_EQ(at[i] != SharedLink::kDropped, ok) << "burst " << b << " packet " << i;
            drops += !ok;
        }
        now += static_cast<TimeNs>(rng() % 12'000);  // ~1.3x the rate on average
    }
    EXPECT_GT(drops, 10'000u);
}

TEST(SharedLink, CarriesFractionsSoTheRateIsExact) {
    // 64-byte packets at 1.6 Tbit/s take 0.32 ns each: whole-ns reservations with a carry
    // add up to the exact duration (the link is backlogged throughout).
    SharedLink link;
    double carry = 0;
    std::uint32_t bytes[16];
    std::fill(bytes, bytes + 16, 64u);
    TimeNs at[16];
    const double ns_per_byte = 8e9 / 1.6e12;
    constexpr int kBursts = 100'000;
    for (int b = 0; b < kBursts; ++b)
        ASSERT_EQ(link.reserve(0, bytes, 16, ns_per_byte, 1e18, carry, at), 16u);
    const double exact = kBursts * 16 * 64 * ns_per_byte;  // 32.768 ms
    EXPECT_NEAR(static_cast<double>(link.free_at()) + carry, exact, 1e-6 * exact);
}

// Threads with an Emulator each, all sharing one link, arrivals from a shared virtual clock
// (each ingest call takes the next tick): offered far above the rate and unevenly split, with
// a finite limit. Every packet a thread sends has the transmission time its reservation
// gave it (no delay), so the union of all threads' transmissions is the link's schedule.
struct Departure {
    TimeNs tx;
    std::uint32_t bytes;
};

std::vector<Departure> run_workers(Limiter limiter, Strategy strategy, int workers,
                                   std::uint64_t* offered_bytes, std::uint64_t* limiter_drops,
                                   TimeNs* clock_end) {
    LinkParams p;
    p.strategy = strategy;
    p.distribution = Distribution::constant;
    p.limiter = limiter;
    p.rate_bps = 1e9;  // 8 ns per byte
    p.queue_limit_bytes = 1 << 20;
    p.policer_burst_bytes = 1 << 16;
    p.seed = 3;
    SharedLink link;
    std::atomic<TimeNs> clock{1'000'000};
    constexpr TimeNs kTick = 2'000;  // per ingest call: 250 bytes at the rate
    std::vector<std::vector<Departure>> out(workers);
    std::vector<std::uint64_t> offered(workers), drops(workers);
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
        threads.emplace_back([&, w] {
            Emulator<Packet> e(p, static_cast<std::uint64_t>(w));
            e.share_limiter(&link);
            Packet in[64], got[256];
            TimeNs tx[256];
            // Uneven: worker w offers bursts of 32 >> w packets of 1000 bytes.
            const std::size_t n = std::max<std::size_t>(1, 32u >> w);
            for (int b = 0; b < 20'000; ++b) {
                const TimeNs now = clock.fetch_add(kTick, std::memory_order_relaxed);
                for (std::size_t i = 0; i < n; ++i)
                    in[i] = Packet{0, now, 1000};
                e.ingest(in, n, now);
                offered[w] += n * 1000;
            }
            for (std::size_t k; (k = e.drain(kForever, got, 256, tx)) > 0;)
                for (std::size_t i = 0; i < k; ++i)
                    out[w].push_back({tx[i], got[i].length});
            const CounterSnapshot s = e.snapshot();
            EXPECT_TRUE(balances(s));
            // No delay: the whole wait is the link's; the order wait is rounding at most.
            const WaitSums wait = e.take_report(clock.load(), 0).wait;
            EXPECT_GT(wait.count, 0u);
            EXPECT_GE(wait.spacer_ns, 0.0);
            EXPECT_LE(std::abs(wait.order_mean()), 1.0);
            drops[w] = s.drops[DropCause::spacer] + s.drops[DropCause::policer];
        });
    }
    for (auto& t : threads)
        t.join();
    std::vector<Departure> all;
    *offered_bytes = *limiter_drops = 0;
    for (int w = 0; w < workers; ++w) {
        all.insert(all.end(), out[w].begin(), out[w].end());
        *offered_bytes += offered[w];
        *limiter_drops += drops[w];
    }
    *clock_end = clock.load();
    std::sort(all.begin(), all.end(),
              [](const Departure& a, const Departure& b) { return a.tx < b.tx; });
    return all;
}

class SharedSpacer : public ::testing::TestWithParam<Strategy> {};

TEST_P(SharedSpacer, WorkersTogetherKeepTheRateExactly) {
    std::uint64_t offered = 0, drops = 0;
    TimeNs end = 0;
    const auto all = run_workers(Limiter::spacer, GetParam(), 4, &offered, &drops, &end);
    ASSERT_FALSE(all.empty());
    // No two transmissions overlap on the link (8 ns a byte; times are rounded up to whole
    // ns from the exact starts, and a reservation may start up to 1 ns early by the carry),
    // and the link never idles: it was offered ~4x its rate from the first tick.
    std::uint64_t bytes = 0;
    for (std::size_t i = 1; i < all.size(); ++i) {
        const TimeNs gap = all[i].tx - all[i - 1].tx;
        ASSERT_GE(gap, 8 * static_cast<TimeNs>(all[i - 1].bytes) - 2) << i;
        ASSERT_LE(gap, 8 * static_cast<TimeNs>(all[i - 1].bytes) + 2) << i;
        bytes += all[i - 1].bytes;
    }
    // Busy throughout: the bytes sent over the busy period are the rate's, within 1e-5.
    const double span_ns = static_cast<double>(all.back().tx - all.front().tx);
    EXPECT_NEAR(static_cast<double>(bytes) * 8 / span_ns, 1.0, 1e-5);
    EXPECT_GT(drops, 0u);  // the 1 MiB limit was reached
    EXPECT_GT(offered, 3 * (bytes + all.back().bytes));
}

INSTANTIATE_TEST_SUITE_P(Strategies, SharedSpacer,
                         ::testing::Values(Strategy::correlated, Strategy::reordered),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(SharedPolicer, WorkersTogetherTakeTheBucketsTokensExactly) {
    std::uint64_t offered = 0, drops = 0;
    TimeNs end = 0;
    const auto all = run_workers(Limiter::policer, Strategy::correlated, 4, &offered, &drops, &end);
    ASSERT_FALSE(all.empty());
    std::uint64_t bytes = 0;
    for (const Departure& d : all)
        bytes += d.bytes;
    // A token bucket passes at most burst + rate x time; overloaded, it passes that, less
    // what is left when a packet does not fit (under one packet per reservation that found
    // the bucket short, and the first arrival is within a tick of the clock's start).
    const double elapsed_ns = static_cast<double>(end - 1'000'000);
    const double allowed = 65'536 + elapsed_ns / 8;
    EXPECT_LE(static_cast<double>(bytes), allowed + 1000);
    EXPECT_GT(static_cast<double>(bytes), 0.995 * allowed);
    EXPECT_GT(drops, 0u);
}

}  // namespace
}  // namespace linkem
