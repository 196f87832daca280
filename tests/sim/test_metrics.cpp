#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "metrics.hpp"
#include "naive_inversions.hpp"
#include "report.hpp"

namespace linkem::sim {
namespace {

// Feeds a departure order with drops into InversionCounter and compares with the O(n^2)
// count over the delivered packets only.
struct Event {
    std::uint64_t seq;
    bool dropped;
};

std::uint64_t streaming(const std::vector<Event>& events, std::size_t window) {
    InversionCounter c(window);
    std::uint64_t sum = 0;
    for (const Event& e : events) {
        if (e.dropped)
            c.drop(e.seq);
        else
            sum += c.depart(e.seq);
    }
    EXPECT_EQ(sum, c.inversions());
    return c.inversions();
}

std::uint64_t naive(const std::vector<Event>& events) {
    std::vector<std::uint64_t> seqs;
    for (const Event& e : events)
        if (!e.dropped) seqs.push_back(e.seq);
    return count_inversions_naive(seqs);
}

TEST(InversionCounter, MatchesBruteForceOnRandomOrdersWithDrops) {
    std::mt19937_64 gen(7);
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t n = 1 + gen() % 400;
        // Departure order: sequence numbers perturbed by a random "delay" of varying spread,
        // like packets with i.i.d. delays; some packets dropped (gaps in the output).
        const double spread = static_cast<double>(gen() % 60);
        std::vector<std::pair<double, std::uint64_t>> keyed;
        std::normal_distribution<double> noise(0, spread + 1e-9);
        for (std::uint64_t s = 0; s < n; ++s)
            keyed.push_back({s + noise(gen), s});
        std::sort(keyed.begin(), keyed.end());
        const int drop_pct = static_cast<int>(gen() % 4) * 15;  // 0, 15, 30, 45 %
        std::vector<Event> events;
        for (auto& [k, s] : keyed)
            events.push_back({s, static_cast<int>(gen() % 100) < drop_pct});
        // Small initial windows force the ring to grow mid-stream.
        const std::size_t window = std::size_t{1} << (gen() % 8);
        ASSERT_EQ(streaming(events, window), naive(events)) << "trial " << trial << " n " << n;
    }
}

TEST(InversionCounter, FullyReversedAndInOrder) {
    std::vector<Event> rev, inorder;
    for (std::uint64_t s = 0; s < 1000; ++s) {
        rev.push_back({999 - s, false});
        inorder.push_back({s, s % 7 == 3});
    }
    EXPECT_EQ(streaming(rev, 4), 1000u * 999u / 2);
    EXPECT_EQ(streaming(inorder, 4), 0u);
}

TEST(InversionCounter, DropAnnouncedBeforeEarlierDepartures) {
    // The emulator reports a drop at ingest, before older packets have left.
    InversionCounter c(2);
    c.drop(5);
    c.drop(2);
    EXPECT_EQ(c.depart(0), 0u);
    EXPECT_EQ(c.depart(3), 0u);
    EXPECT_EQ(c.depart(1), 1u);  // 3 left before 1
    EXPECT_EQ(c.depart(4), 0u);
    EXPECT_EQ(c.depart(7), 0u);
    EXPECT_EQ(c.depart(6), 1u);
    EXPECT_EQ(c.inversions(), 2u);
}

TEST(PassageTimes, ConstructedSeries) {
    // Thresholds 9 and 11 (mu 10, sigma 1). Crossings: above at t=20, below at t=50,
    // above at t=90, below at t=130 (10 at t=70 and 9 at t=100 are inside the band).
    PassageTimes p(9, 11);
    const std::vector<std::pair<std::int64_t, std::int64_t>> series = {
        {0, 10},  {10, 11}, {20, 12}, {30, 10}, {40, 12},  {50, 8},  {60, 7},
        {70, 10}, {80, 11}, {90, 13}, {100, 9}, {110, 12}, {130, 5}, {140, 10}};
    for (auto [t, v] : series)
        p.add(t, v);
    ASSERT_EQ(p.count(), 3u);
    EXPECT_DOUBLE_EQ(p.mean(), ((50 - 20) + (90 - 50) + (130 - 90)) / 3.0);
}

TEST(PassageTimes, NoneWithoutBothCrossings) {
    PassageTimes p(9, 11);
    for (int t = 0; t < 100; ++t)
        p.add(t, 20);
    EXPECT_EQ(p.count(), 0u);
    EXPECT_TRUE(std::isnan(p.mean()));
}

TEST(Moments, ExactForLargeOffsetsAndMatchesTwoPass) {
    std::mt19937_64 gen(3);
    std::vector<std::int64_t> xs;
    Moments m(10'000'000'000);  // reference far from the data: still exact
    for (int i = 0; i < 100000; ++i) {
        const std::int64_t x = 3'000'000'000 + static_cast<std::int64_t>(gen() % 1'000'000);
        xs.push_back(x);
        m.add(x);
    }
    long double mean = 0;
    for (auto x : xs)
        mean += x;
    mean /= xs.size();
    long double ss = 0;
    for (auto x : xs)
        ss += (x - mean) * (x - mean);
    EXPECT_NEAR(m.mean(), static_cast<double>(mean), 1e-6);
    // the jitter: the population standard deviation (over n), as RunningStats and jitter_ns
    EXPECT_NEAR(m.jitter(), static_cast<double>(std::sqrt(ss / xs.size())), 1e-6);
}

TEST(Moments, JitterIsThePopulationStandardDeviation) {
    Moments m(2);
    for (std::int64_t x : {1, 2, 3, 4})
        m.add(x);
    // squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, over n = 4 (not n - 1 = 3)
    EXPECT_DOUBLE_EQ(m.jitter(), std::sqrt(1.25));
    Moments one;
    one.add(7);
    EXPECT_EQ(one.jitter(), 0.0);
    EXPECT_TRUE(std::isnan(Moments().jitter()));
}

TEST(Report, StudentTAndConfidenceInterval) {
    EXPECT_DOUBLE_EQ(student_t975(1), 12.706);
    EXPECT_DOUBLE_EQ(student_t975(9), 2.262);
    EXPECT_NEAR(student_t975(120), 1.980, 0.002);
    // 1..10: mean 5.5, sd 3.0277; CI = 2.262 * 3.0277 / sqrt(10) = 2.1658.
    std::vector<double> v(10);
    std::iota(v.begin(), v.end(), 1.0);
    v.push_back(std::nan(""));  // a run that could not measure the metric is left out
    const Stat s = summarize(v);
    EXPECT_EQ(s.n, 10u);
    EXPECT_DOUBLE_EQ(s.mean, 5.5);
    EXPECT_NEAR(s.ci95, 2.1658, 1e-4);
}

}  // namespace
}  // namespace linkem::sim
