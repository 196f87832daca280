// The loss stage: Bernoulli and Gilbert-Elliott, long-run rates and burst lengths.
// 10^6 packets per case, fixed seeds, tolerance 5 standard errors (derived per case below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "linkem/emulator.hpp"
#include "linkem/loss.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

constexpr std::size_t kPackets = 1'000'000;

TEST(Loss, NoneNeverLoses) {
    LossProcess l;
    Rng rng(1);
    for (int i = 0; i < 100'000; ++i)
        ASSERT_FALSE(l.lose(rng));
}

TEST(Loss, BernoulliLosesFractionP) {
    for (double p : {0.0, 1e-3, 0.01, 0.3, 1.0}) {
        LossProcess l;
        l.configure({LossModel::bernoulli, p});
        Rng rng(2);
        std::size_t lost = 0;
        for (std::size_t i = 0; i < kPackets; ++i)
            lost += l.lose(rng);
        const double se = std::sqrt(p * (1 - p) / kPackets);
        EXPECT_NEAR(static_cast<double>(lost) / kPackets, p, 5 * se) << "p=" << p;
        if (p == 0.0) {
            EXPECT_EQ(lost, 0u);
        }
        if (p == 1.0) {
            EXPECT_EQ(lost, kPackets);
        }
    }
}

// Loss indicator X_i = Bernoulli(loss of the state S_i). Its variance per packet is
// pi(1-pi) plus the state's contribution, whose autocorrelation decays as lambda^k,
// lambda = 1 - p - r, so Var(mean of n) ~ [pi(1-pi) + (lb-lg)^2 q(1-q) 2 lambda/(1-lambda)]/n
// with q = p/(p+r) the fraction of packets sent in state bad.
double ge_stationary_se(double p, double r, double lg, double lb, std::size_t n) {
    const double q = p / (p + r);
    const double pi = (r * lg + p * lb) / (p + r);
    const double lambda = 1 - p - r;
    const double var =
        pi * (1 - pi) + (lb - lg) * (lb - lg) * q * (1 - q) * 2 * lambda / (1 - lambda);
    return std::sqrt(var / static_cast<double>(n));
}

struct GeCase {
    double p, r, lg, lb;
};
constexpr GeCase kGeCases[] = {
    {0.01, 0.2, 0.001, 0.6}, {0.05, 0.25, 0.0, 1.0}, {0.3, 0.4, 0.05, 0.5}, {0.001, 0.1, 0.0, 0.9}};

LossProcess gilbert_elliott(const GeCase& c) {
    LossProcess l;
    l.configure({LossModel::gilbert_elliott, 0, c.p, c.r, c.lg, c.lb});
    return l;
}

// The loss indicators of n packets, one lose() call each.
std::vector<bool> call_lose(LossProcess& l, Rng& rng, std::size_t n) {
    std::vector<bool> lost(n);
    for (std::size_t i = 0; i < n; ++i)
        lost[i] = l.lose(rng);
    return lost;
}

void expect_stationary_loss(const std::vector<bool>& lost, const GeCase& c) {
    const auto n = static_cast<double>(lost.size());
    const double expected = (c.r * c.lg + c.p * c.lb) / (c.p + c.r);
    EXPECT_NEAR(static_cast<double>(std::count(lost.begin(), lost.end(), true)) / n, expected,
                5 * ge_stationary_se(c.p, c.r, c.lg, c.lb, lost.size()))
        << "p=" << c.p << " r=" << c.r;
}

// Simple Gilbert (loss_good 0, loss_bad 1): losses come in runs of consecutive packets,
// one run per visit to state bad, geometric with mean 1/r and sd sqrt(1-r)/r. About
// n*p*r/(p+r) = 41700 runs for p = 0.05, r = 0.25: SE(mean run) = 3.46/sqrt(41700) = 0.017.
void expect_mean_run(const std::vector<bool>& lost, double r) {
    std::size_t runs = 0, n_lost = 0, current = 0;
    for (bool x : lost) {
        if (x) {
            ++n_lost;
            ++current;
        } else if (current > 0) {
            ++runs;
            current = 0;
        }
    }
    ASSERT_GT(runs, 30'000u);
    const double mean_run = static_cast<double>(n_lost - current) / static_cast<double>(runs);
    EXPECT_NEAR(mean_run, 1 / r, 5 * std::sqrt(1 - r) / r / std::sqrt(static_cast<double>(runs)));
}

TEST(Loss, GilbertElliottLongRunLossIsTheStationaryValue) {
    for (const GeCase& c : kGeCases) {
        LossProcess l = gilbert_elliott(c);
        Rng rng(3);
        std::vector<bool> lost(kPackets);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < kPackets; ++i) {
            bad += l.in_bad_state();
            lost[i] = l.lose(rng);
        }
        expect_stationary_loss(lost, c);
        // Time in state bad: q = p/(p+r). The formula with lg = 0, lb = 1 is exactly the
        // variance of the state indicator.
        EXPECT_NEAR(static_cast<double>(bad) / kPackets, c.p / (c.p + c.r),
                    5 * ge_stationary_se(c.p, c.r, 0, 1, kPackets));
    }
}

TEST(Loss, SimpleGilbertMeanBurstIsOneOverR) {
    LossProcess l = gilbert_elliott({0.05, 0.25, 0.0, 1.0});
    Rng rng(4);
    expect_mean_run(call_lose(l, rng, kPackets), 0.25);
}

TEST(Loss, EmulatorCountsLossDrops) {
    LinkParams params;
    params.loss_model = LossModel::bernoulli;
    params.loss_probability = 0.1;
    params.seed = 8;
    Emulator<test::Packet> e(params);
    std::size_t dropped = 0;
    test::Packet d[1];
    for (std::uint64_t i = 0; i < 100'000; ++i) {
        test::Packet pk{i, static_cast<TimeNs>(i), 100};
        dropped += e.ingest(&pk, 1, pk.t_arr, d);
    }
    EXPECT_EQ(e.snapshot().drops[DropCause::loss], dropped);
    EXPECT_EQ(e.snapshot().drops.total(), dropped);
    EXPECT_NEAR(static_cast<double>(dropped) / 100'000, 0.1, 5 * std::sqrt(0.09 / 100'000));
}

// The countdown API the Emulator uses: gap() = packets that pass before the next loss.
// Expanded back into per-packet indicators it must be the same processes as lose(): the
// Bernoulli rate and the geometric law of its gaps (mean (1-p)/p, sd sqrt(1-p)/p) on both
// sides of the switch between per-packet draws and geometric gaps, and the Gilbert-Elliott
// stationary loss and burst length.
std::vector<bool> expand_gaps(LossProcess& l, Rng& rng, std::size_t n) {
    std::vector<bool> lost;
    lost.reserve(n);
    while (lost.size() < n) {
        const std::uint64_t g = l.gap(rng);
        if (g == LossProcess::kNever) {
            lost.resize(n, false);
            break;
        }
        for (std::uint64_t k = 0; k < g && lost.size() < n; ++k)
            lost.push_back(false);
        if (lost.size() < n) lost.push_back(true);
    }
    return lost;
}

TEST(Loss, GapsOfBernoulliAreGeometric) {
    for (double p : {1e-3, 0.02, 0.09, 0.1, 0.3}) {
        LossProcess l;
        l.configure({LossModel::bernoulli, p});
        Rng rng(11);
        const std::vector<bool> lost = expand_gaps(l, rng, kPackets);
        std::size_t n_lost = 0, gaps = 0;
        double sum = 0, sum2 = 0;
        std::uint64_t run = 0;
        bool seen = false;
        for (bool x : lost) {
            if (!x) {
                ++run;
                continue;
            }
            ++n_lost;
            if (seen) {  // the gap before the first loss is a gap too, but keep it simple
                ++gaps;
                sum += static_cast<double>(run);
                sum2 += static_cast<double>(run) * static_cast<double>(run);
            }
            seen = true;
            run = 0;
        }
        const double se_rate = std::sqrt(p * (1 - p) / kPackets);
        EXPECT_NEAR(static_cast<double>(n_lost) / kPackets, p, 5 * se_rate) << "p=" << p;
        ASSERT_GT(gaps, 500u);
        const double mean = sum / static_cast<double>(gaps);
        const double sd = std::sqrt(sum2 / static_cast<double>(gaps) - mean * mean);
        const double mean_expected = (1 - p) / p, sd_expected = std::sqrt(1 - p) / p;
        EXPECT_NEAR(mean, mean_expected, 5 * sd_expected / std::sqrt(static_cast<double>(gaps)))
            << "p=" << p;
        EXPECT_NEAR(sd, sd_expected, 0.05 * sd_expected) << "p=" << p;
    }
    LossProcess none;
    Rng rng(1);
    EXPECT_EQ(none.gap(rng), LossProcess::kNever);
    LossProcess all;
    all.configure({LossModel::bernoulli, 1.0});
    EXPECT_EQ(all.gap(rng), 0u);
    EXPECT_EQ(all.gap(rng), 0u);
}

TEST(Loss, GapsOfGilbertElliottGiveTheStationaryLossAndBursts) {
    for (const GeCase& c : kGeCases) {
        LossProcess l = gilbert_elliott(c);
        Rng rng(12);
        expect_stationary_loss(expand_gaps(l, rng, kPackets), c);
    }
    LossProcess l = gilbert_elliott({0.05, 0.25, 0.0, 1.0});
    Rng rng(13);
    expect_mean_run(expand_gaps(l, rng, kPackets), 0.25);
    // Never lossy in either state: never a loss.
    LossProcess quiet;
    quiet.configure({LossModel::gilbert_elliott, 0, 0.1, 0.1, 0.0, 0.0});
    EXPECT_EQ(quiet.gap(rng), LossProcess::kNever);
    // A bad state that is never left and always loses: every packet once there.
    LossProcess stuck;
    stuck.configure({LossModel::gilbert_elliott, 0, 1.0, 0.0, 0.0, 1.0});
    EXPECT_EQ(stuck.gap(rng), 1u);  // the first packet passes in good, then bad for good
    EXPECT_EQ(stuck.gap(rng), 0u);
    EXPECT_EQ(stuck.gap(rng), 0u);
}

// The delays drawn for a seed do not depend on the loss model (separate random streams).
TEST(Loss, DelaysForASeedDoNotDependOnTheLossModel) {
    auto delays = [](LossModel m) {
        LinkParams p;
        p.strategy = Strategy::reordered;
        p.mean_delay = 10 * kNsPerMs;
        p.jitter = 3 * kNsPerMs;
        p.loss_model = m;
        p.loss_probability = 0.5;
        p.seed = 21;
        Emulator<test::Packet> e(p);
        std::vector<test::Packet> in(1000);
        for (std::uint64_t i = 0; i < in.size(); ++i)
            in[i] = test::Packet{i, 0, 100};
        e.ingest(in.data(), in.size(), 0);
        std::vector<test::Packet> out(1000);
        std::vector<TimeNs> tx(1000);
        const std::size_t n =
            e.drain(std::numeric_limits<TimeNs>::max(), out.data(), 1000, tx.data());
        std::map<std::uint64_t, TimeNs> by_seq;
        for (std::size_t i = 0; i < n; ++i)
            by_seq[out[i].seq] = tx[i];
        return by_seq;
    };
    const auto all = delays(LossModel::none);
    const auto some = delays(LossModel::bernoulli);
    ASSERT_EQ(all.size(), 1000u);
    ASSERT_GT(some.size(), 300u);
    ASSERT_LT(some.size(), 700u);
    for (const auto& [seq, tx] : some)
        EXPECT_EQ(all.at(seq), tx) << seq;
}

}  // namespace
}  // namespace linkem
