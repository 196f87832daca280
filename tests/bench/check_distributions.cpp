// Numerical check of the fast paths in distributions.hpp (a program that prints, like the
// benchmarks; exit status 1 if a check fails):
//  1. detail::exp_inline against long double expl: relative error < 1e-13 over the range
//     the lognormal uses and over its whole fast range |x| < 700; std::exp beyond.
//  2. 10^6 samples per distribution at the paper's Fig. 11 parameters (mean 10 ms, jitter
//     3 ms): sample mean and sd within 4 standard errors of the configured values.
//  3. Gamma: the log-free squeeze must not change a single accept/reject decision, so the
//     samples must equal those of the textbook Marsaglia & Tsang test (same seed), bit for
//     bit; lognormal samples must match std::exp of the same normal draws to 1e-13.
//
//   check_distributions
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "linkem/distributions.hpp"

namespace {

using namespace linkem;

int failures = 0;

void verdict(bool ok, const char* what) {
    std::printf("  %s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok) ++failures;
}

// Marsaglia & Tsang (2000) exactly as published: squeeze u < 1 - 0.0331 x^4, then the
// logarithmic test; shape < 1 via U^(1/shape).
double reference_gamma(Rng& rng, double shape) {
    const double k = shape < 1.0 ? shape + 1.0 : shape;
    const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    double g;
    for (;;) {
        const double x = standard_normal(rng);
        double v = 1.0 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        const double u = rng.uniform_pos();
        const double x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) {
            g = d * v;
            break;
        }
    }
    return shape < 1.0 ? g * std::exp(std::log(rng.uniform_pos()) / shape) : g;
}

void check_exp() {
    std::printf("exp_inline vs long double expl (10^7 uniform points per range):\n");
    std::mt19937_64 g(7);
    const struct {
        double lo, hi;
        const char* name;
    } ranges[] = {{10, 25, "[10, 25]: lognormal at mean 10 ms"},
                  {-700, 700, "[-700, 700]: the whole fast range"},
                  {-1, 1, "[-1, 1]"}};
    for (const auto& r : ranges) {
        std::uniform_real_distribution<double> u(r.lo, r.hi);
        double worst = 0;
        for (int i = 0; i < 10'000'000; ++i) {
            const double x = u(g);
            const long double ref = expl(static_cast<long double>(x));
            worst = std::max(worst,
                             static_cast<double>(std::fabs((detail::exp_inline(x) - ref) / ref)));
        }
        std::printf("  %-36s max relative error %.3g\n", r.name, worst);
        verdict(worst < 1e-13, "below 1e-13");
    }
    std::uniform_real_distribution<double> u(-800, 800);
    long same = 0, n = 0;
    for (int i = 0; i < 1'000'000; ++i) {
        const double x = u(g);
        if (std::fabs(x) < 700) continue;
        ++n;
        same += detail::exp_inline(x) == std::exp(x);
    }
    for (const double x : {HUGE_VAL, -HUGE_VAL, std::nan("")}) {
        ++n;
        same += detail::exp_inline(x) == std::exp(x) ||
                (std::isnan(x) && std::isnan(detail::exp_inline(x)));
    }
    std::printf("  |x| >= 700, inf, NaN: %ld of %ld equal to std::exp\n", same, n);
    verdict(same == n, "defers to std::exp outside the fast range");
}

void check_moments() {
    constexpr int kN = 1'000'000;
    constexpr double kMean = 10e6, kSd = 3e6;
    std::printf("mean and sd over %d samples, DelayDistribution(kind, 10 ms, 3 ms):\n", kN);
    const Distribution kinds[] = {Distribution::uniform, Distribution::normal, Distribution::gamma,
                                  Distribution::lognormal};
    for (const Distribution kind : kinds) {
        Rng rng(12345);
        const DelayDistribution d(kind, kMean, kSd);
        double s = 0, s2 = 0, s4 = 0;
        for (int i = 0; i < kN; ++i) {
            const double x = d.sample(rng) - kMean;
            s += x;
            s2 += x * x;
            s4 += x * x * x * x;
        }
        const double mean = kMean + s / kN;
        const double var = s2 / kN - (s / kN) * (s / kN);
        const double sd = std::sqrt(var);
        // Standard errors: sd/sqrt(n) for the mean; sd * sqrt((kurtosis - 1) / (4n)) for the sd.
        const double kurt = (s4 / kN) / (var * var);
        const double se_mean = kSd / std::sqrt(kN),
                     se_sd = kSd * std::sqrt((kurt - 1) / (4.0 * kN));
        std::printf("  %-9s mean %.6g ns (%+.2f SE)  sd %.6g ns (%+.2f SE)\n",
                    std::string(to_string(kind)).c_str(), mean, (mean - kMean) / se_mean, sd,
                    (sd - kSd) / se_sd);
        verdict(std::fabs(mean - kMean) < 4 * se_mean && std::fabs(sd - kSd) < 4 * se_sd,
                "within 4 standard errors");
    }
}

void check_identity() {
    std::printf("sample-by-sample against the textbook algorithms (same seed, 10^6 each):\n");
    for (const double shape : {11.1111111111111, 50.0, 1.0, 0.3, 2.2e-5}) {
        Rng a(99), b(99);
        int same = 0;
        for (int i = 0; i < 1'000'000; ++i)
            same += standard_gamma(a, shape) == reference_gamma(b, shape);
        std::printf("  standard_gamma(shape %-8.3g) %7d of 1000000 identical\n", shape, same);
        verdict(same == 1'000'000, "bit-identical");
    }
    const double cv = 0.3, s = std::sqrt(std::log1p(cv * cv)), mu = std::log(10e6) - 0.5 * s * s;
    Rng a(5), b(5);
    const DelayDistribution d(Distribution::lognormal, 10e6, 3e6);
    double worst = 0;
    for (int i = 0; i < 1'000'000; ++i) {
        const double x = d.sample(a), y = std::exp(mu + s * standard_normal(b));
        worst = std::max(worst, std::fabs(x - y) / y);
    }
    std::printf("  lognormal vs std::exp of the same draws: max relative difference %.3g\n", worst);
    verdict(worst < 1e-13, "below 1e-13");
}

}  // namespace

int main() {
    check_exp();
    check_moments();
    check_identity();
    std::printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
