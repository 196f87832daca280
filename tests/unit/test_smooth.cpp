// The `smooth` strategy: its marginal law, its autocorrelation in time, its independence
// of the packet rate, order kept with (almost) no waiting, and parameter changes.
//
// Statistical checks use fixed seeds. Samples taken 10 half-lives apart are independent for
// every purpose here (rho(10 t_h) = (1 + 16.8) e^-16.8 < 1e-6), so the marginal is checked
// with i.i.d. tolerances: Kolmogorov-Smirnov against 1.95/sqrt(n) (the 0.1 % critical value)
// and the mean and sd against 5 standard errors.
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr double kMu = 10e6, kSigma = 3e6, kHalfLife = 21e6;  // ns: the paper's setup

Delayer::Config smooth(Distribution d, double mean = kMu, double sd = kSigma,
                       double th = kHalfLife) {
    return Delayer::Config{Strategy::smooth, d, mean, sd, th};
}

// The configured law's CDF (for the KS distance).
double target_cdf(Distribution d, double mean, double sd, double y) {
    switch (d) {
        case Distribution::uniform: {
            const double h = std::sqrt(3.0) * sd;
            return std::clamp((y - (mean - h)) / (2 * h), 0.0, 1.0);
        }
        case Distribution::gamma: {
            const double theta = sd * sd / mean, k = mean * mean / (sd * sd);
            return regularized_gamma_p(k, y / theta);
        }
        case Distribution::lognormal: {
            if (y <= 0) return 0;
            const double s = std::sqrt(std::log1p(sd * sd / (mean * mean)));
            return normal_cdf((std::log(y) - (std::log(mean) - 0.5 * s * s)) / s);
        }
        default:
            return normal_cdf((y - mean) / sd);
    }
}

double ks_distance(std::vector<double> x, Distribution d, double mean, double sd) {
    std::sort(x.begin(), x.end());
    const double n = static_cast<double>(x.size());
    double dmax = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double f = target_cdf(d, mean, sd, x[i]);
        dmax = std::max({dmax, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
    }
    return dmax;
}

TEST(GammaQuantileTable, InvertsTheIncompleteGammaFunction) {
    for (double k : {0.3, 1.0, 11.1, 400.0, 1e4}) {
        GammaQuantileTable t;
        t.build(k);
        for (double x = -6; x <= 6; x += 0.37) {
            double p, q;
            regularized_gamma_pq(k, std::exp(t.log_quantile(x)), p, q);
            // Relative in each tail.
            const double tol = 1e-7;
            if (x < 0)
                EXPECT_NEAR(p / normal_cdf(x), 1.0, tol) << "k " << k << " x " << x;
            else
                EXPECT_NEAR(q / normal_cdf(-x), 1.0, tol) << "k " << k << " x " << x;
        }
    }
}

TEST(GammaQuantileTable, MappedStandardNormalHasTheGammaMoments) {
    // E[y] = k and Var[y] = k for Gamma(k, 1): integrate y(x) phi(x) on a fine grid.
    for (double k : {0.5, 2.0, 11.1, 1e4}) {
        GammaQuantileTable t;
        t.build(k);
        double m = 0, m2 = 0;
        const double h = 1e-3;
        for (double x = -8; x <= 8; x += h) {
            const double w = h * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
            const double y = std::exp(t.log_quantile(x));
            m += w * y;
            m2 += w * y * y;
        }
        EXPECT_NEAR(m / k, 1.0, 1e-6) << k;
        EXPECT_NEAR((m2 - m * m) / k, 1.0, 1e-4) << k;
    }
}

// The delay at times 10 half-lives apart (plus a random offset within a tick, so that
// interpolation between ticks is part of what is checked) has the configured law.
TEST(Smooth, MarginalIsTheConfiguredLaw) {
    constexpr std::size_t n = 20000;
    const double crit = 1.95 / std::sqrt(static_cast<double>(n));
    for (auto dist : {Distribution::normal, Distribution::uniform, Distribution::gamma,
                      Distribution::lognormal}) {
        for (double sd : {kSigma, 12e6}) {  // cv 0.3 and 1.2 (gamma shape 11.1 and 0.69)
            if (dist != Distribution::gamma && dist != Distribution::lognormal && sd > kSigma)
                continue;
            Delayer d;
            d.configure(smooth(dist, kMu, sd));
            Rng rng(11), offsets(12);
            std::vector<double> x(n);
            TimeNs t = 0;
            for (auto& v : x) {
                t += static_cast<TimeNs>(10 * kHalfLife + offsets.uniform() * 1e6);
                v = d.next(rng, t);
            }
            const auto m = moments(x);
            const double se = sd / std::sqrt(static_cast<double>(n));
            EXPECT_NEAR(m.mean, kMu, 5 * se) << to_string(dist) << " sd " << sd;
            // sd of the sample sd: sigma sqrt((kurt - 1) / 4n); lognormal cv 1.2 has
            // kurtosis ~ 60: its tolerance is wider.
            const double sd_se = std::sqrt((std::max(m.kurt, 3.0) - 1) / (4.0 * n));
            EXPECT_NEAR(m.sd / sd, 1.0, 5 * sd_se) << to_string(dist) << " sd " << sd;
            EXPECT_LT(ks_distance(x, dist, kMu, sd), crit) << to_string(dist) << " sd " << sd;
        }
    }
}

// rho(tau) = (1 + a tau) e^(-a tau), a t_h = 1.678: 1/2 at the half-life. Sampled every
// t_h / 8 over 2*10^5 half-lives; the sample autocorrelation's standard error is about
// sqrt(2 * 1.5 t_h / T) = 0.004; tolerance 0.02.
TEST(Smooth, AutocorrelationInTimeIsOneHalfAtTheHalfLife) {
    Delayer d;
    d.configure(smooth(Distribution::normal));
    Rng rng(21);
    const std::size_t n = 8 * 200000;
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = d.next(rng, static_cast<TimeNs>(static_cast<double>(i) * kHalfLife / 8));
    const double a = SmoothDelay::kShape;
    for (std::size_t lag : {2, 4, 8, 16, 32}) {
        const double tau = static_cast<double>(lag) / 8;
        EXPECT_NEAR(autocorrelation(x, lag), (1 + a * tau) * std::exp(-a * tau), 0.02)
            << "lag " << tau << " t_h";
    }
    EXPECT_NEAR(autocorrelation(x, 8), 0.5, 0.02);
}

// CBR traffic into the Emulator: the delay is a function of time, the same at two rates for
// the same seed; order is kept and hardly a packet waits (the paper's setup at 1 and
// 10 Gbit/s: slopes below -1 are 4.2 sd out for 3 ms and 21 ms).
TEST(Smooth, DelayIsAFunctionOfTimeAndPacketsHardlyWait) {
    LinkParams p;
    p.strategy = Strategy::smooth;
    p.mean_delay = 10 * kNsPerMs;
    p.jitter = 3 * kNsPerMs;
    p.seed = 7;
    p.buffer_limit_packets = 1 << 22;
    const TimeNs t_slow = 12144, t_fast = 1214;  // ~1 and ~10 Gbit/s of 1518-byte frames
    const TimeNs end = 20 * kNsPerSec;
    struct Run {
        std::vector<TimeNs> delay;  // tx - arrival per packet
        std::uint64_t waited = 0;
    };
    auto run = [&](TimeNs period) {
        Emulator<Packet> e(p);
        e.reserve(1 << 20);
        Run r;
        Packet out[256];
        TimeNs tx[256];
        std::uint64_t seq = 0, next_seq = 0;
        for (TimeNs t = 0; t < end; t += period) {
            Packet pk{seq++, t, 1518};
            e.ingest(&pk, 1, t);
            for (std::size_t k; (k = e.drain(t, out, 256, tx)) > 0;)
                for (std::size_t i = 0; i < k; ++i) {
                    EXPECT_EQ(out[i].seq, next_seq++);  // order kept
                    r.delay.push_back(tx[i] - out[i].t_arr);
                }
        }
        for (std::size_t k; (k = e.drain(std::numeric_limits<TimeNs>::max(), out, 256, tx)) > 0;)
            for (std::size_t i = 0; i < k; ++i) {
                EXPECT_EQ(out[i].seq, next_seq++);
                r.delay.push_back(tx[i] - out[i].t_arr);
            }
        r.waited = e.waited();
        return r;
    };
    const Run slow = run(t_slow), fast = run(t_fast);
    // Each packet of the slow run against the fast run's latest packet before it.
    std::size_t differ = 0;
    double max_diff = 0;
    for (std::size_t i = 0; i < slow.delay.size(); ++i) {
        const TimeNs t = static_cast<TimeNs>(i) * t_slow;
        const std::size_t j = static_cast<std::size_t>(t / t_fast);
        // The arrivals are up to 1.2 us apart: D differs by |slope| times that (|slope| below
        // 3: 12 sd of the slope), plus rounding.
        const double diff = std::fabs(static_cast<double>(slow.delay[i] - fast.delay[j]));
        max_diff = std::max(max_diff, diff);
        differ += diff > 3.0 * static_cast<double>(t - static_cast<TimeNs>(j) * t_fast) + 1;
    }
    EXPECT_EQ(differ, 0u) << "max difference " << max_diff << " ns";
    const double share_fast = static_cast<double>(fast.waited) / fast.delay.size();
    EXPECT_LT(share_fast, 1e-3);
    EXPECT_LT(static_cast<double>(slow.waited) / slow.delay.size(), 1e-3);
}

// What waiting costs: the actual delay against the drawn one for the same seed (a second
// Delayer at the same arrival times draws the same series).
TEST(Smooth, WaitingAddsLessThanAMicrosecondToTheMean) {
    for (double sd : {3e6, 4e6}) {  // the paper's 10 ms +- 3 ms; the demo's jitter 4 ms
        LinkParams p;
        p.strategy = Strategy::smooth;
        p.mean_delay = 10 * kNsPerMs;
        p.jitter = static_cast<DurationNs>(sd);
        p.seed = 3;
        Emulator<Packet> e(p);
        e.reserve(1 << 16);
        Delayer ref;
        ref.configure(smooth(Distribution::normal, kMu, sd));
        Rng rng(3);
        const TimeNs period = 12144;  // ~1 Gbit/s of 1518-byte frames
        double rise = 0;
        std::size_t n = 0;
        std::vector<double> drawn;
        Packet out[256];
        TimeNs tx[256];
        auto take = [&](std::size_t k) {
            for (std::size_t i = 0; i < k; ++i) {
                const double d = std::max(0.0, std::round(drawn[out[i].seq]));
                const double got = static_cast<double>(tx[i] - out[i].t_arr);
                ASSERT_GE(got, d - 1);  // never earlier than drawn
                rise += got - d;
                ++n;
            }
        };
        for (TimeNs t = 0; t < 100 * kNsPerSec; t += period) {
            drawn.push_back(ref.next(rng, t));
            Packet pk{drawn.size() - 1, t, 1518};
            e.ingest(&pk, 1, t);
            for (std::size_t k; (k = e.drain(t, out, 256, tx)) > 0;)
                take(k);
        }
        for (std::size_t k; (k = e.drain(std::numeric_limits<TimeNs>::max(), out, 256, tx)) > 0;)
            take(k);
        ASSERT_EQ(n, drawn.size());
        EXPECT_LT(rise / n, 1000.0) << "mean rise, ns, sd " << sd;  // < 0.01 % of 10 ms
        EXPECT_LT(static_cast<double>(e.waited()) / n, 2e-3) << sd;
    }
}

TEST(Smooth, ParameterChangesKeepThePositionOfTheSeries) {
    Delayer d;
    d.configure(smooth(Distribution::normal));
    Rng rng(4);
    const TimeNs t = 187 * 656250;  // a tick's start (t_h / 32 = 656 250 ns)
    d.next(rng, 0);
    const double before = d.next(rng, t);
    const Rng saved = rng;
    // Mean and jitter: shifted and scaled at once, no draw.
    d.configure(smooth(Distribution::normal, 20e6, 1.5e6));
    EXPECT_NEAR(d.next(rng, t), 20e6 + (before - kMu) * 0.5, 1e-3);
    // Half-life: the current stretch between two ticks is kept, so the delay is unchanged.
    d.configure(smooth(Distribution::normal, kMu, kSigma, 70e6));
    EXPECT_NEAR(d.next(rng, t), before, 1e-3);
    EXPECT_EQ(rng(), Rng(saved)());  // nothing drawn
    // Distribution: the same quantile of the new law.
    d.configure(smooth(Distribution::uniform));
    const double z = (before - kMu) / kSigma;
    EXPECT_NEAR(d.next(rng, t), kMu + kSigma * std::sqrt(3.0) * std::erf(z / std::sqrt(2.0)), 1e-3);
    // Continuous in time across the change of half-life: no jump at the next ticks.
    double last = d.next(rng, t);
    for (TimeNs s = t; s < t + 200 * kNsPerMs; s += 10000) {
        const double v = d.next(rng, s);
        EXPECT_LT(std::fabs(v - last), 0.05e6) << s;  // 50 us in 10 us: slope < 5
        last = v;
    }
}

TEST(Smooth, SameSeedSameSeriesAndAFreshStartAfterALongPause) {
    auto series = [](TimeNs step) {
        Delayer d;
        d.configure(smooth(Distribution::gamma));
        Rng rng(9);
        std::vector<double> v;
        for (TimeNs t = 0; t <= 2 * kNsPerSec; t += step)
            v.push_back(d.next(rng, t));
        return v;
    };
    const auto a = series(1 * kNsPerMs), b = series(100 * kNsPerUs);
    for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(a[i], b[i * 10]) << i;  // bit for bit: the series depends on time only
    // A pause of 10 s (> 64 half-lives) restarts from the stationary law: finite, positive
    // (gamma), and one tick's work, not 15000 ticks.
    Delayer d;
    d.configure(smooth(Distribution::gamma));
    Rng rng(9);
    d.next(rng, 0);
    const double v = d.next(rng, 10 * kNsPerSec);
    EXPECT_TRUE(std::isfinite(v) && v > 0);
}

// The gamma table is built by prepare() (off the packet path) and only adopted by
// configure(): the Delayer and the Emulator use the very table given, share it across a
// parameter change that keeps the shape, hold none of an older configuration's, and give
// the same series as configuring in one step.
TEST(Smooth, PreparedTablesAreAdoptedNotBuilt) {
    const Delayer::Config c = smooth(Distribution::gamma);
    const DelayTables t = Delayer::prepare(c);
    ASSERT_TRUE(t.gamma);
    // The shape (mean / jitter)^2, on the grid of kShapeSteps per octave: within 2^(1/128).
    const double k = kMu * kMu / (kSigma * kSigma);
    EXPECT_NEAR(t.gamma->shape() / k, 1.0, std::exp2(1.0 / 128) - 1);
    const double steps = std::log2(t.gamma->shape()) * GammaQuantileTable::kShapeSteps;
    EXPECT_NEAR(steps, std::round(steps), 1e-9);
    for (auto other :
         {smooth(Distribution::normal), smooth(Distribution::lognormal),
          Delayer::Config{Strategy::correlated, Distribution::gamma, kMu, kSigma, kHalfLife},
          smooth(Distribution::gamma, kMu, 0.0),
          smooth(Distribution::gamma, kMu, kMu * 0.005)})  // shape 4e4: normal
        EXPECT_FALSE(Delayer::prepare(other).gamma);

    Delayer a, b;
    a.configure(c, t);
    EXPECT_EQ(a.tables().gamma, t.gamma);
    EXPECT_EQ(a.smooth().gamma(), t.gamma.get());
    b.configure(c);  // prepares for itself
    Rng ra(5), rb(5);
    for (TimeNs now = 0; now < 500 * kNsPerMs; now += 97 * kNsPerUs)
        ASSERT_EQ(a.next(ra, now), b.next(rb, now)) << now;

    // Mean and jitter scaled together keep the shape: the same table, shared.
    const Delayer::Config same_shape = smooth(Distribution::gamma, 2 * kMu, 2 * kSigma);
    const DelayTables t2 = Delayer::prepare(same_shape, t);
    EXPECT_EQ(t2.gamma, t.gamma);
    // Another shape: a new table; the Delayer lets go of the old one when it adopts it.
    const Delayer::Config other_shape = smooth(Distribution::gamma, kMu, 2 * kSigma);
    const DelayTables t3 = Delayer::prepare(other_shape, t);
    ASSERT_TRUE(t3.gamma);
    EXPECT_NE(t3.gamma, t.gamma);
    const long before = t.gamma.use_count();
    a.configure(other_shape, t3);
    EXPECT_EQ(t.gamma.use_count(), before - 1);
    EXPECT_EQ(a.smooth().gamma(), t3.gamma.get());
    // Tables made for another law (a caller's mistake) are not used: the Delayer makes the
    // right ones (slowly), so the law is still the configured one.
    a.configure(c, t3);
    ASSERT_TRUE(a.tables().gamma);
    EXPECT_EQ(a.tables().gamma->shape(), t.gamma->shape());

    // The Emulator: set_params(p, tables) adopts them; set_params(p) prepares, sharing those
    // in use where they fit.
    LinkParams p;
    p.strategy = Strategy::smooth;
    p.distribution = Distribution::gamma;
    p.mean_delay = static_cast<DurationNs>(kMu);
    p.jitter = static_cast<DurationNs>(kSigma);
    p.half_life = static_cast<DurationNs>(kHalfLife);
    p.seed = 3;
    const DelayTables te = Emulator<Packet>::prepare(p);
    Emulator<Packet> e;
    e.set_params(p, te);
    EXPECT_EQ(e.delayer().tables().gamma, te.gamma);
    p.mean_delay *= 2;
    p.jitter *= 2;
    e.set_params(p);
    EXPECT_EQ(e.delayer().tables().gamma, te.gamma);
    p.strategy = Strategy::correlated;
    e.set_params(p);
    EXPECT_FALSE(e.delayer().tables().gamma);
    EXPECT_EQ(te.gamma.use_count(), 1);
}

}  // namespace
}  // namespace linkem
