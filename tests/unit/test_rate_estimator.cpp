// RateEstimator: exact rates for CBR and bursts, and where intervals open and close.
#include <gtest/gtest.h>

#include "linkem/rate_estimator.hpp"

namespace linkem {
namespace {

TEST(RateEstimator, NoEstimateBeforeTheFirstIntervalCloses) {
    RateEstimator r(10 * kNsPerUs);
    EXPECT_FALSE(r.has_estimate());
    EXPECT_EQ(r.rate_pps(), 0.0);
    EXPECT_FALSE(r.on_arrivals(0, 1));  // opens
    EXPECT_FALSE(r.on_arrivals(5 * kNsPerUs, 1));
    EXPECT_FALSE(r.has_estimate());
    EXPECT_EQ(r.intervals(), 0u);
}

TEST(RateEstimator, CbrWithWholePacketsPerWindowIsExact) {
    // 1 packet per us, T_min = 10 us: every interval holds exactly 10 arrivals over 10 us.
    RateEstimator r(10 * kNsPerUs);
    int closes = 0;
    for (TimeNs t = 0; t <= 1000 * kNsPerUs; t += kNsPerUs) {
        if (r.on_arrivals(t, 1)) {
            ++closes;
            ASSERT_EQ(t % (10 * kNsPerUs), 0) << "closes on the arrival exactly T_min later";
            ASSERT_EQ(r.rate_pps(), 1e6);
        }
    }
    EXPECT_EQ(closes, 100);
    EXPECT_EQ(r.intervals(), 100u);
}

TEST(RateEstimator, CbrWithSpacingNotDividingTheWindowIsStillExact) {
    // Spacing 3333 ns, T_min = 10 us: an interval closes at the 4th arrival after its opener
    // (13332 ns >= 10000 ns), holding 4 arrivals over 4 spacings: R = 1/3333 ns exactly.
    RateEstimator r(10 * kNsPerUs);
    int closes = 0;
    for (int i = 0; i <= 4000; ++i) {
        const TimeNs t = static_cast<TimeNs>(i) * 3333;
        if (r.on_arrivals(t, 1)) {
            ++closes;
            ASSERT_EQ(i % 4, 0);
            ASSERT_DOUBLE_EQ(r.rate_pps(), 1e9 / 3333.0);
        }
    }
    EXPECT_EQ(closes, 1000);
}

TEST(RateEstimator, BurstWithOneTimestampCountsAsNArrivals) {
    // Bursts of 32 every 10 us, T_min = 100 us: an interval holds 10 bursts = 320 arrivals
    // over 100 us -> 3.2e6 pps, the rate the packets really arrive at.
    RateEstimator r(100 * kNsPerUs);
    int closes = 0;
    for (TimeNs t = 0; t <= 10 * kNsPerMs; t += 10 * kNsPerUs) {
        if (r.on_arrivals(t, 32)) {
            ++closes;
            ASSERT_EQ(r.rate_pps(), 3.2e6);
        }
    }
    EXPECT_EQ(closes, 100);
    // A single burst never closes an interval by itself: elapsed time 0.
    RateEstimator b(kNsPerUs);
    EXPECT_FALSE(b.on_arrivals(500, 32));
    EXPECT_FALSE(b.on_arrivals(500, 32));
    EXPECT_FALSE(b.has_estimate());
}

TEST(RateEstimator, ClosesWithTheFirstArrivalAtLeastTminAfterTheOpener) {
    RateEstimator r(10'000);
    EXPECT_FALSE(r.on_arrivals(1'000, 2));   // opener, counts 2
    EXPECT_FALSE(r.on_arrivals(5'000, 1));   // 4 us
    EXPECT_FALSE(r.on_arrivals(10'999, 3));  // 9.999 us: still open
    EXPECT_TRUE(r.on_arrivals(11'000, 5));   // exactly T_min: closes
    // N = 2 + 1 + 3 (the closing burst belongs to the next interval), T = 10 us.
    EXPECT_DOUBLE_EQ(r.rate_pps(), 6 / 10e-6);
    // The closing arrival opened the next interval with its 5 arrivals.
    EXPECT_FALSE(r.on_arrivals(20'000, 1));
    EXPECT_TRUE(r.on_arrivals(25'000, 1));  // 14 us after 11'000: late arrival closes
    EXPECT_DOUBLE_EQ(r.rate_pps(), 6 / 14e-6);
    EXPECT_EQ(r.intervals(), 2u);
}

TEST(RateEstimator, IdleLinkGivesLowRateNotZero) {
    // One packet, then nothing for 1 s: the next arrival closes with N = 1 over 1 s.
    RateEstimator r(10 * kNsPerMs);
    r.on_arrivals(0, 1);
    EXPECT_TRUE(r.on_arrivals(kNsPerSec, 1));
    EXPECT_DOUBLE_EQ(r.rate_pps(), 1.0);
}

TEST(RateEstimator, SetWindowKeepsTheOpenInterval) {
    RateEstimator r(10'000);
    r.on_arrivals(0, 1);
    r.on_arrivals(3'000, 1);
    r.set_window(5'000);
    EXPECT_EQ(r.window(), 5'000);
    EXPECT_TRUE(r.on_arrivals(5'000, 1));  // start and count kept: N = 2 over 5 us
    EXPECT_DOUBLE_EQ(r.rate_pps(), 2 / 5e-6);
}

}  // namespace
}  // namespace linkem
