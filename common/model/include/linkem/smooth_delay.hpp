// The `smooth` strategy's delay: a function of time, not of the packet count.
//
// A stationary second-order Gauss-Markov process x(t) (mean 0, variance 1): the critically
// damped oscillator driven by white noise, whose autocorrelation is
//     rho(tau) = (1 + a |tau|) e^(-a |tau|),   a = s / t_h,  (1 + s) e^(-s) = 1/2,
// so that delays t_h apart are correlated 1/2, as with adaptive delay correlation. Its paths
// are differentiable with slope sd a (in units of the delay's sd): a delay of sd sigma falls
// at more than real time (a packet then waits behind its predecessor) where the slope is
// below -1, i.e. with z = t_h / (s sigma) standard deviations (4.2 for 3 ms and 21 ms). A
// first-order (Ornstein-Uhlenbeck) process has no slope: interpolated over a tick dt its
// slopes have sd sigma sqrt(2 ln2 / (t_h dt)), which grows as the tick shrinks
// (docs/simulation.md, "smooth").
//
// x is advanced exactly on ticks of t_h / kTicksPerHalfLife (two normals a tick); each tick's
// x is mapped through the configured distribution's quantile function (a Gaussian copula:
// y = F^-1(Phi(x)), so the delay's marginal is the configured law, not only a normal), and
// a packet arriving at t gets the straight line between the mapped values of the ticks
// around t. Per packet: one compare and one multiply-add; the draws and the mapping are per
// tick. The time origin is the first packet's arrival; the series is a function of the seed
// and of the time since then, whatever the traffic.
//
// Parameter changes keep x (the position of the series in its law): a changed mean, jitter
// or distribution maps the same x through the new law at once, without a transient; a
// changed half-life applies from the next tick.
//
// A gamma law maps through a table (GammaQuantileTable) that takes 0.25 to ~5 ms to build.
// It depends on the parameters only, so it is built off the packet path (gamma_table(),
// called by Delayer::prepare) and handed to configure() shared and immutable: linkemd
// builds it on its control thread and carries it in the parameter block that the data
// plane adopts.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "linkem/distributions.hpp"
#include "linkem/rng.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// Quantile function of the standard gamma law (shape k, scale 1) composed with the normal
/// CDF, G(x) = ln F_k^-1(Phi(x)), tabulated for one shape on x in [-kRange, kRange] and
/// interpolated (cubic Hermite on values and exact slopes dG/dx = phi(x) / (y f_k(y)),
/// y = e^G). Built once per shape, each node by Newton on the regularised incomplete gamma
/// function from its neighbour: 0.25 ms at shape 11 (10 ms +- 3 ms), up to ~5 ms at the
/// largest shape used, kMaxShape (the series take ~sqrt(k) terms).
class GammaQuantileTable {
  public:
    static constexpr double kRange = 8.0;
    static constexpr int kPerUnit = 32;
    static constexpr int kNodes = 2 * static_cast<int>(kRange) * kPerUnit + 1;
    /// Above this shape (jitter below 1 % of the mean, skewness below 0.02: a KS distance
    /// from the normal law of about 0.001) SmoothDelay maps through the normal law instead.
    static constexpr double kMaxShape = 1e4;
    /// Shapes are taken on a grid of this many per octave (SmoothDelay::gamma_shape).
    static constexpr int kShapeSteps = 64;

    void build(double shape);
    double shape() const { return shape_; }
    /// ln of the shape-k gamma quantile at probability Phi(x); x is clamped to the range.
    double log_quantile(double x) const {
        const double p = (std::clamp(x, -kRange, kRange) + kRange) * kPerUnit;
        const int j = std::min(static_cast<int>(p), kNodes - 2);
        const double t = p - j, h = 1.0 / kPerUnit;
        const double g0 = g_[j], g1 = g_[j + 1], d0 = dg_[j] * h, d1 = dg_[j + 1] * h;
        // Hermite basis on t in [0, 1].
        const double t2 = t * t, t3 = t2 * t;
        return g0 * (2 * t3 - 3 * t2 + 1) + d0 * (t3 - 2 * t2 + t) + g1 * (3 * t2 - 2 * t3) +
               d1 * (t3 - t2);
    }

  private:
    double slope(double x, double g) const;
    double shape_ = 0, lgamma_ = 0;
    std::vector<double> g_, dg_;
};

/// Regularised lower incomplete gamma function P(k, y) (series below k + 1, Lentz's
/// continued fraction for Q = 1 - P above), for shape k > 0 and y >= 0.
double regularized_gamma_p(double k, double y);
/// P and Q = 1 - P, each from its own accurate side.
void regularized_gamma_pq(double k, double y, double& p, double& q);
/// Standard normal CDF.
inline double normal_cdf(double x) {
    return 0.5 * std::erfc(-x * M_SQRT1_2);
}

class SmoothDelay {
  public:
    /// Ticks per half-life; the tick is never shorter than kMinTick.
    static constexpr int kTicksPerHalfLife = 32;
    static constexpr DurationNs kMinTick = 1000;
    /// s = a t_h, the root of (1 + s) e^(-s) = 1/2.
    static constexpr double kShape = 1.6783469900166608;
    /// A gap of more than this many half-lives without packets starts the series afresh
    /// from its stationary law (rho is below 1e-44 there: the same law as stepping through).
    static constexpr int kFreshAfterHalfLives = 64;

    /// The gamma shape whose table configure() needs for this law, or 0 when it needs none
    /// (not gamma, or a shape above GammaQuantileTable::kMaxShape: mapped as a normal law):
    /// (mean / sd)^2 on a grid of GammaQuantileTable::kShapeSteps per octave.
    static double gamma_shape(Distribution dist, double mean_ns, double jitter_ns);
    /// The table configure() needs for this law (null when none): `reuse` when it is the
    /// right one, else a new one (0.25 to ~5 ms: not on the packet path).
    static std::shared_ptr<const GammaQuantileTable> gamma_table(
        Distribution dist, double mean_ns, double jitter_ns,
        const std::shared_ptr<const GammaQuantileTable>& reuse = nullptr);

    /// Sets the law (sd > 0; for gamma and lognormal mean > 0) and the half-life. Keeps the
    /// position of the series (see above). `gamma`: gamma_table() of the same law, which the
    /// caller keeps alive while this configuration is in use (the Delayer holds it).
    void configure(Distribution dist, double mean_ns, double jitter_ns, double half_life_ns,
                   const GammaQuantileTable* gamma);
    /// The next call draws a fresh stationary state and makes its time the origin.
    void restart() {
        started_ = false;
        tick_end_ = std::numeric_limits<TimeNs>::min();
    }

    /// The delay (ns, possibly negative for a normal law) of a packet arriving at `now`.
    [[gnu::always_inline]] double at(Rng& rng, TimeNs now) {
        if (now >= tick_end_) [[unlikely]]
            advance(rng, now);
        return y0_ + slope_ * std::max(0.0, static_cast<double>(now - tick_start_));
    }

    /// The configured law's value for latent x (quantile of Phi(x)).
    double map(double x) const;
    DurationNs tick() const { return tick_; }
    /// The gamma table in use (null unless the law is gamma with a shape up to kMaxShape).
    const GammaQuantileTable* gamma() const {
        return dist_ == Distribution::gamma ? gamma_ : nullptr;
    }
    /// The latent state at the start of the current tick (0 before the first call).
    double latent() const { return x0_; }

  private:
    void advance(Rng& rng, TimeNs now);
    void step(Rng& rng);
    void set_segment();

    Distribution dist_ = Distribution::normal;
    double mean_ = 0, sd_ = 0;
    double ln_a_ = 0, ln_b_ = 0;  // lognormal: ln y = ln_a + ln_b x; gamma: scale in ln_b
    const GammaQuantileTable* gamma_ = nullptr;  // the caller's (see configure)
    DurationNs tick_ = 0, fresh_after_ = 0;
    // One tick's exact transition of (x, w = x' / a): [[f11, f12], [f21, f22]], and the
    // Cholesky factor [[l11, 0], [l21, l22]] of its noise covariance.
    double f11_ = 1, f12_ = 0, f21_ = 0, f22_ = 1, l11_ = 0, l21_ = 0, l22_ = 0;
    bool started_ = false;
    double x0_ = 0, x1_ = 0, w1_ = 0;  // x at the tick's start and end, w at its end
    TimeNs tick_start_ = 0, tick_end_ = std::numeric_limits<TimeNs>::min();
    double y0_ = 0, slope_ = 0;  // mapped value at the start, its slope in ns per ns
};

}  // namespace linkem
