// The loss stage: Bernoulli and Gilbert-Elliott, long-run rates and burst lengths.
// 10^6 packets per case, fixed seeds, tolerance 5 standard errors (derived per case below).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

TEST(Loss, GilbertElliottLongRunLossIsTheStationaryValue) {
    struct Case {
        double p, r, lg, lb;
    };
    for (const Case& c : {Case{0.01, 0.2, 0.001, 0.6}, Case{0.05, 0.25, 0.0, 1.0},
                          Case{0.3, 0.4, 0.05, 0.5}, Case{0.001, 0.1, 0.0, 0.9}}) {
        LossProcess l;
        l.configure({LossModel::gilbert_elliott, 0, c.p, c.r, c.lg, c.lb});
        Rng rng(3);
        std::size_t lost = 0, bad = 0;
        for (std::size_t i = 0; i < kPackets; ++i) {
            bad += l.in_bad_state();
            lost += l.lose(rng);
        }
        const double expected = (c.r * c.lg + c.p * c.lb) / (c.p + c.r);
        const double se = ge_stationary_se(c.p, c.r, c.lg, c.lb, kPackets);
        EXPECT_NEAR(static_cast<double>(lost) / kPackets, expected, 5 * se)
            << "p=" << c.p << " r=" << c.r;
        // Time in state bad: q = p/(p+r). The formula with lg = 0, lb = 1 is exactly the
        // variance of the state indicator.
        EXPECT_NEAR(static_cast<double>(bad) / kPackets, c.p / (c.p + c.r),
                    5 * ge_stationary_se(c.p, c.r, 0, 1, kPackets));
    }
}

// Simple Gilbert (loss_good 0, loss_bad 1): losses come in runs of consecutive packets,
// one run per visit to state bad, geometric with mean 1/r and sd sqrt(1-r)/r. About
// n*p*r/(p+r) = 41700 runs here: SE(mean run) = 3.46/sqrt(41700) = 0.017.
TEST(Loss, SimpleGilbertMeanBurstIsOneOverR) {
    const double p = 0.05, r = 0.25;
    LossProcess l;
    l.configure({LossModel::gilbert_elliott, 0, p, r, 0.0, 1.0});
    Rng rng(4);
    std::size_t runs = 0, lost = 0, current = 0;
    for (std::size_t i = 0; i < kPackets; ++i) {
        if (l.lose(rng)) {
            ++lost;
            ++current;
        } else if (current > 0) {
            ++runs;
            current = 0;
        }
    }
    ASSERT_GT(runs, 30'000u);
    const double mean_run = static_cast<double>(lost - current) / runs;
    const double se = std::sqrt(1 - r) / r / std::sqrt(static_cast<double>(runs));
    EXPECT_NEAR(mean_run, 1 / r, 5 * se);
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
    EXPECT_EQ(e.snapshot().drops_loss, dropped);
    EXPECT_EQ(e.snapshot().drops(), dropped);
    EXPECT_NEAR(static_cast<double>(dropped) / 100'000, 0.1, 5 * std::sqrt(0.09 / 100'000));
}

}  // namespace
}  // namespace linkem
