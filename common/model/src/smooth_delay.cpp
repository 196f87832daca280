#include "linkem/smooth_delay.hpp"

#include <cassert>
#include <cmath>

namespace linkem {

void regularized_gamma_pq(double k, double y, double& p, double& q) {
    if (y <= 0) {
        p = 0;
        q = 1;
        return;
    }
    // ln(y^k e^-y / Gamma(k)): the common prefactor.
    const double ln_pre = k * std::log(y) - y - std::lgamma(k);
    if (y < k + 1) {
        // P = pre / k * sum_n y^n / ((k+1)...(k+n))
        double term = 1.0 / k, sum = term;
        for (int n = 1; n < 100000000; ++n) {
            term *= y / (k + n);
            sum += term;
            if (term < sum * 1e-17) break;
        }
        p = std::min(1.0, sum * std::exp(ln_pre));
        q = 1 - p;
        return;
    }
    // Q = pre * 1 / (y + 1 - k - 1 (1 - k) / (y + 3 - k - ...)), modified Lentz.
    constexpr double kTiny = 1e-300;
    double b = y + 1 - k, c = 1 / kTiny, d = 1 / b, h = d;
    for (int i = 1; i < 100000000; ++i) {
        const double an = -i * (i - k);
        b += 2;
        d = an * d + b;
        if (std::fabs(d) < kTiny) d = kTiny;
        c = b + an / c;
        if (std::fabs(c) < kTiny) c = kTiny;
        d = 1 / d;
        const double del = d * c;
        h *= del;
        if (std::fabs(del - 1) < 1e-16) break;
    }
    q = std::min(1.0, std::exp(ln_pre) * h);
    p = 1 - q;
}

double regularized_gamma_p(double k, double y) {
    double p, q;
    regularized_gamma_pq(k, y, p, q);
    return p;
}

// dG/dx = phi(x) / (y f_k(y)) = exp(-x^2/2 - ln sqrt(2 pi) + lgamma(k) - k G + e^G).
double GammaQuantileTable::slope(double x, double g) const {
    constexpr double kLnSqrt2Pi = 0.91893853320467274178;
    return std::exp(-0.5 * x * x - kLnSqrt2Pi + lgamma_ - shape_ * g + std::exp(g));
}

void GammaQuantileTable::build(double k) {
    shape_ = k;
    lgamma_ = std::lgamma(k);
    g_.assign(kNodes, 0.0);
    dg_.assign(kNodes, 0.0);
    // The median: Newton on P(k, y) = 1/2 in ln y, from Wilson-Hilferty's approximation.
    double y = k * std::pow(1 - 1 / (9 * k), 3);
    if (!(y > 0)) y = std::pow(0.5 * std::tgamma(k + 1), 1 / k);  // small shapes
    double g = std::log(y);
    for (int it = 0; it < 100; ++it) {
        // dP/dG = y f(y) = phi(0) / slope(0, G)
        const double p = regularized_gamma_p(k, std::exp(g));
        const double s = (p - 0.5) * slope(0.0, g) * std::sqrt(2 * M_PI);
        g -= std::clamp(s, -2.0, 2.0);
        if (std::fabs(s) < 1e-14 * std::max(1.0, std::fabs(g))) break;
    }
    const int mid = kNodes / 2;
    const double h = 1.0 / kPerUnit;
    g_[mid] = g;
    // Each node by Newton from its neighbour: ln P(k, e^G) = ln Phi(x) below the median,
    // ln Q = ln Phi(-x) above (so that both tails keep their relative accuracy).
    for (int dir : {+1, -1}) {
        double gx = g;
        for (int j = mid + dir; j >= 0 && j < kNodes; j += dir) {
            const double x = (j - mid) * h;
            const double target = std::log(normal_cdf(-std::fabs(x)));
            for (int it = 0; it < 60; ++it) {
                double p, q;
                regularized_gamma_pq(k, std::exp(gx), p, q);
                const double tail = dir < 0 ? p : q;
                // d ln P / dG = y f(y) / P; d ln Q / dG = -y f(y) / Q
                const double yf = std::exp(k * gx - std::exp(gx) - lgamma_);
                const double deriv = (dir < 0 ? yf : -yf) / tail;
                const double s = (std::log(tail) - target) / deriv;
                gx -= std::clamp(s, -1.0, 1.0);
                if (std::fabs(s) < 1e-13 * std::max(1.0, std::fabs(gx))) break;
            }
            g_[j] = gx;
        }
    }
    for (int j = 0; j < kNodes; ++j)
        dg_[j] = slope((j - mid) * h, g_[j]);
}

double SmoothDelay::gamma_shape(Distribution dist, double mean_ns, double jitter_ns) {
    if (dist != Distribution::gamma) return 0;
    const double cv = jitter_ns / mean_ns;
    const double k = 1 / (cv * cv);
    if (k > GammaQuantileTable::kMaxShape) return 0;  // above: skewness 2/sqrt(k) < 0.02
    // On a grid of kShapeSteps per octave: the jitter is then within 0.27 % of the one asked
    // (the mean exact, see configure), and a ramp of the jitter or the mean needs a table
    // per grid step it crosses, not one per change (ScenarioTrack prepares them).
    constexpr double n = GammaQuantileTable::kShapeSteps;
    return std::exp2(std::round(std::log2(k) * n) / n);
}

std::shared_ptr<const GammaQuantileTable> SmoothDelay::gamma_table(
    Distribution dist, double mean_ns, double jitter_ns,
    const std::shared_ptr<const GammaQuantileTable>& reuse) {
    const double k = gamma_shape(dist, mean_ns, jitter_ns);
    if (k == 0) return nullptr;
    if (reuse && reuse->shape() == k) return reuse;
    auto t = std::make_shared<GammaQuantileTable>();
    t->build(k);
    return t;
}

void SmoothDelay::configure(Distribution dist, double mean_ns, double jitter_ns,
                            double half_life_ns, const GammaQuantileTable* gamma) {
    dist_ = dist;
    mean_ = mean_ns;
    sd_ = jitter_ns;
    if (dist == Distribution::lognormal) {
        const double cv = jitter_ns / mean_ns;
        ln_b_ = std::sqrt(std::log1p(cv * cv));
        ln_a_ = std::log(mean_ns) - 0.5 * ln_b_ * ln_b_;
    } else if (dist == Distribution::gamma) {
        const double k = gamma_shape(dist, mean_ns, jitter_ns);
        assert(k == 0 || (gamma && gamma->shape() == k));
        if (k == 0) dist_ = Distribution::normal;
        gamma_ = gamma;
        ln_a_ = std::log(mean_ns / k);  // ln of the scale: mean / shape (the mean exact)
    }
    const DurationNs tick = std::max<DurationNs>(
        kMinTick, static_cast<DurationNs>(std::llround(half_life_ns / kTicksPerHalfLife)));
    tick_ = tick;
    fresh_after_ = static_cast<DurationNs>(kFreshAfterHalfLives * half_life_ns);
    // Exact discretisation of dx = a w dt, dw = -a (x + 2 w) dt + 2 a^(1/2) dW (w = x'/a),
    // stationary covariance I: transition e^(-h) [[1 + h, h], [-h, 1 - h]], h = a dt, and
    // noise covariance Q = I - F F^T.
    const double hh = kShape / half_life_ns * static_cast<double>(tick);
    const double e = std::exp(-hh), e2 = e * e;
    f11_ = e * (1 + hh);
    f12_ = e * hh;
    f21_ = -e * hh;
    f22_ = e * (1 - hh);
    const double q11 = -std::expm1(-2 * hh) - e2 * (2 * hh + 2 * hh * hh);
    const double q12 = 2 * hh * hh * e2;
    const double q22 = -std::expm1(-2 * hh) + e2 * (2 * hh - 2 * hh * hh);
    l11_ = std::sqrt(q11);
    l21_ = q12 / l11_;
    l22_ = std::sqrt(std::max(0.0, q22 - l21_ * l21_));
    if (started_) set_segment();
}

double SmoothDelay::map(double x) const {
    switch (dist_) {
        case Distribution::uniform:
            return mean_ + sd_ * std::sqrt(3.0) * std::erf(x * M_SQRT1_2);
        case Distribution::lognormal:
            return std::exp(ln_a_ + ln_b_ * x);
        case Distribution::gamma:
            return std::exp(ln_a_ + gamma_->log_quantile(x));
        case Distribution::constant:
            return mean_;
        case Distribution::normal:
            break;
    }
    return mean_ + sd_ * x;
}

void SmoothDelay::step(Rng& rng) {
    double z0, z1;
    standard_normal_pair(rng, z0, z1);
    const double x = x1_, w = w1_;
    x1_ = f11_ * x + f12_ * w + l11_ * z0;
    w1_ = f21_ * x + f22_ * w + l21_ * z0 + l22_ * z1;
}

void SmoothDelay::set_segment() {
    y0_ = map(x0_);
    slope_ = (map(x1_) - y0_) / static_cast<double>(tick_end_ - tick_start_);
}

void SmoothDelay::advance(Rng& rng, TimeNs now) {
    if (!started_ || now - tick_end_ > fresh_after_) {
        // A fresh stationary state: x and w independent standard normals (the stationary
        // covariance is I), at the tick that holds `now` (the first call: now is the origin).
        const TimeNs start = started_ ? tick_end_ + (now - tick_end_) / tick_ * tick_ : now;
        started_ = true;
        double z0, z1;
        standard_normal_pair(rng, z0, z1);
        x1_ = z0;
        w1_ = z1;
        x0_ = x1_;
        step(rng);
        tick_start_ = start;
        tick_end_ = start + tick_;
        set_segment();
        return;
    }
    while (now >= tick_end_) {
        x0_ = x1_;
        step(rng);
        tick_start_ = tick_end_;
        tick_end_ += tick_;
    }
    set_segment();
}

}  // namespace linkem
