// The delayer: adaptive delay correlation (EMA), its weight, its start-up, and how the
// Emulator's rate estimate drives it.
//
// Standard errors for an AR(1) series D with weight alpha, n samples (Bartlett):
//   mean:        sigma/sqrt(n) * sqrt((1+alpha)/(1-alpha))
//   variance:    sigma^2 * sqrt(2/n * (1+alpha^2)/(1-alpha^2))   (sd: half, relative)
//   lag-k corr.: sqrt((1/n) * ((1+a^2)(1-a^(2k))/(1-a^2) - 2k a^(2k)))
// Tolerances are 5 of these standard errors, with a fixed seed.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "linkem/delayer.hpp"
#include "linkem/emulator.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using test::autocorrelation;
using test::moments;
using test::Packet;

struct Ar1Se {
    double a, n;
    double mean, sd_rel, lag1;
    double lag(std::size_t k) const {
        const double a2k = std::pow(a, 2.0 * static_cast<double>(k));
        return std::sqrt(((1 + a * a) * (1 - a2k) / (1 - a * a) - 2.0 * k * a2k) / n);
    }
};

Ar1Se ar1_se(double alpha, double sigma, std::size_t n) {
    Ar1Se s{};
    s.a = alpha;
    s.n = static_cast<double>(n);
    s.mean = sigma / std::sqrt(s.n) * std::sqrt((1 + alpha) / (1 - alpha));
    s.sd_rel = 0.5 * std::sqrt(2 / s.n * (1 + alpha * alpha) / (1 - alpha * alpha));
    s.lag1 = std::sqrt((1 - alpha * alpha) / s.n);
    return s;
}

Delayer::Config correlated(Distribution dist, double mean, double sd, double half_life) {
    return Delayer::Config{Strategy::correlated, dist, mean, sd, half_life};
}

// k_h = t_h * R = 200 packets per half-life: alpha = 0.5^(1/200), so the lag-200
// autocorrelation is 0.5 and lag-400 is 0.25.
TEST(Delayer, CorrelatedAtConstantRateHasMuSigmaAndLagKAutocorrelationAlphaPowK) {
    constexpr double kMu = 10e6, kSigma = 2e6;
    constexpr double kRate = 1e6, kHalfLife = 200e3;  // 200 us at 1 Mpps
    constexpr std::size_t n = 4'000'000;
    Delayer d;
    d.configure(correlated(Distribution::normal, kMu, kSigma, kHalfLife));
    d.on_rate(kRate);
    const double alpha = std::pow(0.5, 1.0 / 200);
    ASSERT_NEAR(d.alpha(), alpha, 1e-15);
    Rng rng(5);
    std::vector<double> x(n);
    for (auto& v : x)
        v = d.next(rng);
    const auto m = moments(x);
    const auto se = ar1_se(alpha, kSigma, n);
    EXPECT_NEAR(m.mean, kMu, 5 * se.mean);
    EXPECT_NEAR(m.sd / kSigma, 1.0, 5 * se.sd_rel);
    EXPECT_NEAR(autocorrelation(x, 1), alpha, 5 * se.lag1);
    EXPECT_NEAR(autocorrelation(x, 200), 0.5, 5 * se.lag(200));
    EXPECT_NEAR(autocorrelation(x, 400), 0.25, 5 * se.lag(400));
    EXPECT_NEAR(autocorrelation(x, 1000), std::pow(alpha, 1000), 5 * se.lag(1000));
}

// Same for the other distributions: the EMA's stationary mean and sd are mu and sigma
// whatever the law of C. sigma/mu = 5% keeps C's coefficient of variation (x24 from the
// variance inflation) near 1.2, so the sample sd is not dominated by C's far tail; the
// excess kurtosis this adds to D is below 0.3, negligible against the AR(1) term.
TEST(Delayer, CorrelatedStationaryMomentsForEveryDistribution) {
    constexpr double kMu = 10e6, kSigma = 0.5e6;
    constexpr std::size_t n = 1'000'000;
    const double alpha = std::pow(0.5, 1.0 / 200);
    for (auto dist : {Distribution::uniform, Distribution::normal, Distribution::gamma,
                      Distribution::lognormal}) {
        Delayer d;
        d.configure(correlated(dist, kMu, kSigma, 200e3));
        d.on_rate(1e6);
        Rng rng(6);
        std::vector<double> x(n);
        for (auto& v : x)
            v = d.next(rng);
        const auto m = moments(x);
        const auto se = ar1_se(alpha, kSigma, n);
        EXPECT_NEAR(m.mean, kMu, 5 * se.mean) << to_string(dist);
        EXPECT_NEAR(m.sd / kSigma, 1.0, 5 * se.sd_rel) << to_string(dist);
        EXPECT_NEAR(autocorrelation(x, 1), alpha, 5 * se.lag1) << to_string(dist);
        for (double v : x)
            ASSERT_TRUE(std::isfinite(v)) << to_string(dist);
    }
}

TEST(Delayer, UncorrelatedAndReorderedAreIndependentDraws) {
    constexpr std::size_t n = 1'000'000;
    for (auto strategy : {Strategy::uncorrelated, Strategy::reordered}) {
        Delayer d;
        d.configure(Delayer::Config{strategy, Distribution::normal, 10e6, 2e6, 21e6});
        d.on_rate(1e6);
        EXPECT_EQ(d.alpha(), 0.0);
        Rng rng(8);
        std::vector<double> x(n);
        for (auto& v : x)
            v = d.next(rng);
        const auto m = moments(x);
        EXPECT_NEAR(m.mean, 10e6, 5 * 2e6 / std::sqrt(n));
        EXPECT_NEAR(m.sd, 2e6, 5 * 2e6 * std::sqrt(0.5 / n));
        EXPECT_NEAR(autocorrelation(x, 1), 0.0, 5 / std::sqrt(n));
        // Normal delays come in pairs from one random word (standard_normal_pair): the
        // squared deviations are uncorrelated too, at lag 1 (within and across pairs).
        std::vector<double> sq(n);
        for (std::size_t i = 0; i < n; ++i)
            sq[i] = (x[i] - 10e6) * (x[i] - 10e6);
        EXPECT_NEAR(autocorrelation(sq, 1), 0.0, 5 / std::sqrt(n));
    }
}

TEST(Delayer, ZeroJitterOrConstantIsAFixedDelayWithAlphaZero) {
    Delayer d;
    d.configure(correlated(Distribution::normal, 3e6, 0, 21e6));
    d.on_rate(1e6);
    Rng rng(1);
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(d.next(rng), 3e6);
    EXPECT_EQ(d.alpha(), 0.0);
}

// At 100 Gbit/s of 1518-byte frames (+20 bytes preamble and gap), R = 8.13e6 pps; with the
// default t_h = 21 ms, k_h = 1.7e5 and 1 - alpha = 4.06e-6. A double holding alpha itself
// keeps only ~11 significant digits of 1 - alpha; the delayer keeps 1 - alpha directly.
TEST(Delayer, OneMinusAlphaIsPreciseAt100GbitOf1518ByteFrames) {
    const double rate = 100e9 / ((1518 + 20) * 8.0);
    const double t_h = 21e6;
    Delayer d;
    d.configure(correlated(Distribution::normal, 10e6, 1e6, t_h));
    d.on_rate(rate);
    const long double kh = static_cast<long double>(t_h) * 1e-9L * rate;
    const long double ref = -std::expm1(std::log(0.5L) / kh);
    EXPECT_NEAR(static_cast<double>(ref), 4.06e-6, 0.01e-6);
    EXPECT_NEAR(d.one_minus_alpha() / static_cast<double>(ref), 1.0, 1e-13);
    // alpha() itself is 1 - (1 - alpha) rounded to a double: 1 - alpha() is good to ~1e-16
    // absolute, i.e. ~3e-11 relative.
    EXPECT_NEAR((1.0 - d.alpha()) / static_cast<double>(ref), 1.0, 1e-10);
    const long double gen_sd = 1e6L * std::sqrt((2 - ref) / ref);
    EXPECT_NEAR(d.generating_sd() / static_cast<double>(gen_sd), 1.0, 1e-12);

    // The EMA step really uses that weight: each step is D_i = D_{i-1} + w (C_i - D_{i-1}),
    // so C_i = D_{i-1} + (D_i - D_{i-1}) / w can be recovered exactly enough (the division
    // amplifies the ~2e-9 ns rounding of D by 1/w to ~5e-4 ns, against sd(C) ~ 7e8 ns).
    // The recovered C must have mean mu and sd sigma*sqrt((1+alpha)/(1-alpha)): 10^6 draws,
    // 5 standard errors.
    Rng rng(3);
    const double w = d.one_minus_alpha();
    constexpr std::size_t n = 1'000'000;
    std::vector<double> c(n);
    double prev = d.next(rng);
    for (auto& v : c) {
        const double cur = d.next(rng);
        v = prev + (cur - prev) / w;
        prev = cur;
    }
    const auto m = moments(c);
    const double sd_c = static_cast<double>(gen_sd);
    EXPECT_NEAR(m.mean, 10e6, 5 * sd_c / std::sqrt(n));
    EXPECT_NEAR(m.sd / sd_c, 1.0, 5 * std::sqrt(0.5 / n));
}

// Start-up: before the first rate interval closes the delayer has no alpha. What is
// asserted: (1) alpha() reports 1; (2) every packet gets the same delay D_0; (3) D_0 is
// drawn from the stationary law of D (mean mu, sd sigma) -- not from C, whose sd would be
// sigma*sqrt((1+alpha)/(1-alpha)); (4) once a rate arrives, the series continues from D_0
// with the EMA weight (no jump).
TEST(Delayer, StartUpHoldsADelayDrawnFromTheStationaryLaw) {
    constexpr double kMu = 10e6, kSigma = 2e6;
    {
        Delayer d;
        d.configure(correlated(Distribution::normal, kMu, kSigma, 21e6));
        EXPECT_EQ(d.alpha(), 1.0);
        EXPECT_EQ(d.one_minus_alpha(), 0.0);
        Rng rng(11);
        const double d0 = d.next(rng);
        for (int i = 0; i < 1000; ++i)
            ASSERT_EQ(d.next(rng), d0);
        EXPECT_EQ(d.alpha(), 1.0);
        d.on_rate(1e6);  // k_h = 21000
        EXPECT_NEAR(d.alpha(), std::pow(0.5, 1.0 / 21000), 1e-15);
        const double d1 = d.next(rng);
        EXPECT_NE(d1, d0);
        // One EMA step moves D by w*(C - D), w = 3.3e-5, sd(C) = sigma*246: ~0.01 sigma.
        EXPECT_LT(std::fabs(d1 - d0), 0.1 * kSigma);
    }
    // (3) over many independent start-ups: D_0 ~ N(mu, sigma). 2*10^4 runs; 5 SE.
    constexpr int kRuns = 20'000;
    for (auto dist : {Distribution::normal, Distribution::gamma}) {
        std::vector<double> d0(kRuns);
        for (int s = 0; s < kRuns; ++s) {
            Delayer d;
            d.configure(correlated(dist, kMu, kSigma, 21e6));
            Rng rng(1000 + s);
            d0[s] = d.next(rng);
        }
        const auto m = moments(d0);
        EXPECT_NEAR(m.mean, kMu, 5 * kSigma / std::sqrt(kRuns)) << to_string(dist);
        // SE(sd) ~ sigma*sqrt((kurt-1)/(4n)); kurtosis 3 (normal), 3.24 (gamma, cv 0.2).
        const double kurt = dist == Distribution::normal ? 3.0 : 3.24;
        EXPECT_NEAR(m.sd, kSigma, 5 * kSigma * std::sqrt((kurt - 1) / (4 * kRuns)))
            << to_string(dist);
    }
}

TEST(Delayer, ParameterChangeShiftsAndScalesTheState) {
    Delayer d;
    d.configure(correlated(Distribution::normal, 10e6, 2e6, 21e6));
    d.on_rate(1e6);
    Rng rng(4);
    for (int i = 0; i < 1000; ++i)
        d.next(rng);
    const double before = d.state();
    d.configure(correlated(Distribution::normal, 20e6, 1e6, 5e6));
    EXPECT_DOUBLE_EQ(d.state(), 20e6 + (before - 10e6) * 0.5);
    // Alpha is recomputed for the new half-life with the rate already known.
    EXPECT_NEAR(d.alpha(), std::pow(0.5, 1.0 / 5000), 1e-15);
}

// ---------------------------------------------------------------------------------------
// Through the Emulator: CBR arrivals drive the rate estimator, which drives alpha.

LinkParams correlated_params(DurationNs mean, DurationNs jitter, DurationNs half_life,
                             DurationNs window) {
    LinkParams p;
    p.strategy = Strategy::correlated;
    p.distribution = Distribution::normal;
    p.mean_delay = mean;
    p.jitter = jitter;
    p.half_life = half_life;
    p.rate_window = window;
    p.seed = 42;
    return p;
}

// CBR at 1e5 pps (10 us apart), t_h = 2 ms: k_h = 200. sigma = 10 us keeps consecutive delay
// differences (sd sigma*sqrt(2(1-alpha)) = 0.8 us) far below the 10 us spacing, so the FIFO
// never has to hold a packet back and the delays seen are the delayer's.
// next_n(rng, out, n) draws what n calls of next() draw, bit for bit, for every strategy
// and law: from start-up (no rate yet: hold), through a rate estimate, across chunk
// boundaries of any size.
TEST(Delayer, NextNEqualsRepeatedNext) {
    for (Strategy st : {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered}) {
        for (Distribution dist : {Distribution::normal, Distribution::uniform, Distribution::gamma,
                                  Distribution::lognormal, Distribution::constant}) {
            const Delayer::Config c{st, dist, 10e6, 3e6, 21e6};
            Delayer one, many;
            one.configure(c);
            many.configure(c);
            Rng r1(9), r2(9);
            std::vector<double> a, b;
            for (std::size_t n : {1u, 7u, 64u, 3u}) {
                if (a.size() == 8) {  // a rate estimate arrives between chunks
                    one.on_rate(1e6);
                    many.on_rate(1e6);
                }
                for (std::size_t i = 0; i < n; ++i)
                    a.push_back(one.next(r1));
                std::vector<double> out(n);
                many.next_n(r2, out.data(), n);
                b.insert(b.end(), out.begin(), out.end());
            }
            ASSERT_EQ(a, b) << "strategy " << static_cast<int>(st) << " law "
                            << static_cast<int>(dist);
            EXPECT_EQ(r1(), r2());
        }
    }
}

TEST(EmulatorCorrelation, CbrDelaysHaveMuSigmaAndAlphaPowKAutocorrelation) {
    constexpr std::size_t n = 1'000'000;
    constexpr DurationNs kSpacing = 10 * kNsPerUs;
    Emulator<Packet> e(correlated_params(10 * kNsPerMs, 10 * kNsPerUs, 2 * kNsPerMs, kNsPerMs));
    std::vector<double> delay;
    delay.reserve(n);
    Packet out[64];
    TimeNs tx[64];
    for (std::size_t i = 0; i < n; ++i) {
        const TimeNs now = static_cast<TimeNs>(i) * kSpacing;
        Packet p{i, now, 1000};
        e.ingest(&p, 1, now);
        for (std::size_t k; (k = e.drain(now, out, 64, tx)) > 0;)
            for (std::size_t j = 0; j < k; ++j)
                delay.push_back(static_cast<double>(tx[j] - out[j].t_arr));
    }
    const double alpha = std::pow(0.5, 1.0 / 200);
    EXPECT_NEAR(e.alpha(), alpha, 1e-12);
    EXPECT_DOUBLE_EQ(e.rate_pps(), 1e5);
    ASSERT_GT(delay.size(), n - 2000);  // the last ~10 ms are still queued
    const auto m = moments(delay);
    const auto se = ar1_se(alpha, 10e3, delay.size());
    EXPECT_NEAR(m.mean, 10e6, 5 * se.mean);
    EXPECT_NEAR(m.sd / 10e3, 1.0, 5 * se.sd_rel);
    EXPECT_NEAR(autocorrelation(delay, 1), alpha, 5 * se.lag1);
    EXPECT_NEAR(autocorrelation(delay, 200), 0.5, 5 * se.lag(200));
}

// Start-up in the Emulator: until the first interval closes (the first arrival >= T_min
// after the first packet) every packet has the same delay and alpha is reported as 1.
TEST(EmulatorCorrelation, StartUpHoldsTheDelayUntilTheFirstIntervalCloses) {
    Emulator<Packet> e(correlated_params(5 * kNsPerMs, kNsPerMs, 21 * kNsPerMs, kNsPerMs));
    EXPECT_EQ(e.snapshot().alpha, 1.0);
    Packet out[16];
    TimeNs tx[16];
    std::optional<DurationNs> held;
    for (int i = 0; i < 300; ++i) {
        const TimeNs now = i * 10 * kNsPerUs;  // the interval closes at i = 100 (1 ms)
        Packet p{static_cast<std::uint64_t>(i), now, 100};
        e.ingest(&p, 1, now);
        ASSERT_EQ(e.drain(std::numeric_limits<TimeNs>::max(), out, 16, tx), 1u);
        const DurationNs delay = tx[0] - now;
        if (i < 100) {
            if (!held) held = delay;
            ASSERT_EQ(delay, *held) << "packet " << i;
            ASSERT_EQ(e.alpha(), 1.0);
            ASSERT_EQ(e.snapshot().alpha, 1.0);
            ASSERT_EQ(e.snapshot().rate_intervals, 0u);
        } else {
            ASSERT_LT(e.alpha(), 1.0);
            ASSERT_EQ(e.snapshot().rate_intervals, static_cast<std::uint64_t>(i / 100));
        }
    }
    EXPECT_NEAR(e.snapshot().alpha, std::pow(0.5, 1.0 / (21e-3 * 1e5)), 1e-12);
}

// Rate steps R1 -> R2 -> R3 at times that do not line up with interval boundaries. The
// interval open at the step mixes both rates; the next one is pure. It closes at most
// 2*T_min plus one packet spacing at each end after the step, so from then on the estimate
// must be the new rate within 1% (for CBR it is in fact exact) and alpha must be
// 0.5^(1/(t_h*R_new)) (1 - alpha within 1%, since it is ~proportional to 1/R).
TEST(EmulatorCorrelation, RateAndAlphaFollowARateStepWithinTwoWindows) {
    const DurationNs t_min = 10 * kNsPerMs, t_h = 21 * kNsPerMs;
    Emulator<Packet> e(correlated_params(kNsPerMs, 50 * kNsPerUs, t_h, t_min));
    struct Phase {
        TimeNs start;
        DurationNs spacing;
    };
    const Phase phases[] = {{0, 10'000},                   // 1e5 pps
                            {103'300'000, 2'500},          // 4e5 pps, step at 103.3 ms
                            {200'001'000, 20'000},         // 5e4 pps
                            {310'000'000 - 1'000, 1'000},  // 1e6 pps, step just before a close
                            {400'000'000, 0}};
    Packet out[256];
    std::uint64_t seq = 0;
    int checked = 0;
    for (std::size_t ph = 0; ph + 1 < std::size(phases); ++ph) {
        const double r_new = 1e9 / static_cast<double>(phases[ph].spacing);
        const TimeNs settled = phases[ph].start + 2 * t_min + 2 * phases[ph].spacing;
        for (TimeNs t = phases[ph].start; t < phases[ph + 1].start; t += phases[ph].spacing) {
            Packet p{seq++, t, 1500};
            e.ingest(&p, 1, t);
            while (e.drain(t, out, 256) > 0) {
            }
            if (t < settled) continue;
            ++checked;
            const double w_expected = -std::expm1(-M_LN2 / (t_h * 1e-9 * r_new));
            ASSERT_NEAR(e.rate_pps() / r_new, 1.0, 0.01) << "t=" << t;
            ASSERT_NEAR(e.delayer().one_minus_alpha() / w_expected, 1.0, 0.01) << "t=" << t;
            // alpha follows the measured rate exactly.
            const double w_measured = -std::expm1(-M_LN2 / (t_h * 1e-9 * e.rate_pps()));
            ASSERT_NEAR(e.delayer().one_minus_alpha() / w_measured, 1.0, 1e-12);
            ASSERT_EQ(e.snapshot().rate_pps, e.rate_pps());
            ASSERT_EQ(e.snapshot().alpha, e.alpha());
        }
    }
    EXPECT_GT(checked, 100'000);
}

}  // namespace
}  // namespace linkem
