#include "linkem/distributions.hpp"

#include <limits>

namespace linkem {

std::string_view to_string(Distribution d) {
    switch (d) {
        case Distribution::constant: return "constant";
        case Distribution::uniform: return "uniform";
        case Distribution::normal: return "normal";
        case Distribution::gamma: return "gamma";
        case Distribution::lognormal: return "lognormal";
    }
    return "?";
}

bool parse_distribution(std::string_view s, Distribution& out) {
    for (auto d : {Distribution::constant, Distribution::uniform, Distribution::normal,
                   Distribution::gamma, Distribution::lognormal}) {
        if (s == to_string(d)) {
            out = d;
            return true;
        }
    }
    return false;
}

namespace detail {

ZigguratTables::ZigguratTables() {
    double f = std::exp(-0.5 * kR * kR);
    x[0] = kV / f;
    x[1] = kR;
    x[kLayers] = 0;
    for (int i = 2; i < kLayers; ++i) {
        x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
        f = std::exp(-0.5 * x[i] * x[i]);
    }
    for (int i = 0; i < kLayers; ++i) ratio[i] = x[i + 1] / x[i];
}

const ZigguratTables kZiggurat;

double normal_tail(Rng& rng, bool negative) {
    // Marsaglia (1964): exact sampling of the normal tail beyond R.
    double x, y;
    do {
        x = std::log(rng.uniform_pos()) / ZigguratTables::kR;
        y = std::log(rng.uniform_pos());
    } while (-2.0 * y < x * x);
    return negative ? x - ZigguratTables::kR : ZigguratTables::kR - x;
}

double normal_wedge(Rng& rng, int layer, double u) {
    const auto& z = kZiggurat;
    const double x = u * z.x[layer];
    const double f0 = std::exp(-0.5 * (z.x[layer] * z.x[layer] - x * x));
    const double f1 = std::exp(-0.5 * (z.x[layer + 1] * z.x[layer + 1] - x * x));
    if (f1 + rng.uniform() * (f0 - f1) < 1.0) return x;
    return std::numeric_limits<double>::quiet_NaN();  // rejected: caller draws again
}

}  // namespace detail

namespace {
// Marsaglia & Tsang (2000) for shape >= 1, with d = shape - 1/3 and c = 1/sqrt(9d).
// Accepts about 98% of draws through the cheap squeeze, without a logarithm.
double marsaglia_tsang(Rng& rng, double d, double c) {
    for (;;) {
        const double x = standard_normal(rng);
        double v = 1.0 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        const double u = rng.uniform_pos();
        const double x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v)))
            return d * v;
    }
}

// Shape < 1: Gamma(k) = Gamma(k+1) * U^(1/k), computed in log space so that tiny shapes
// (high rates, strong correlation) underflow gracefully to 0 instead of producing NaN.
double boost_small_shape(Rng& rng, double g, double shape) {
    return shape < 1.0 ? g * std::exp(std::log(rng.uniform_pos()) / shape) : g;
}
}  // namespace

double standard_gamma(Rng& rng, double shape) {
    const double k = shape < 1.0 ? shape + 1.0 : shape;
    const double d = k - 1.0 / 3.0;
    return boost_small_shape(rng, marsaglia_tsang(rng, d, 1.0 / std::sqrt(9.0 * d)), shape);
}

void DelayDistribution::configure(Distribution kind, double mean, double sd) {
    kind_ = sd > 0 ? kind : Distribution::constant;
    mean_ = mean;
    sd_ = sd > 0 ? sd : 0;
    switch (kind_) {
        case Distribution::constant:
        case Distribution::normal: break;
        case Distribution::uniform: {
            const double half = std::sqrt(3.0) * sd_;
            a_ = mean_ - half;
            b_ = 2 * half;
            break;
        }
        case Distribution::gamma: {
            const double cv = sd_ / mean_;
            a_ = 1.0 / (cv * cv);  // shape k = mean^2/var
            b_ = sd_ * cv;         // scale theta = var/mean
            const double k = a_ < 1.0 ? a_ + 1.0 : a_;
            d_ = k - 1.0 / 3.0;
            c_ = 1.0 / std::sqrt(9.0 * d_);
            break;
        }
        case Distribution::lognormal: {
            const double cv = sd_ / mean_;
            b_ = std::sqrt(std::log1p(cv * cv));
            a_ = std::log(mean_) - 0.5 * b_ * b_;
            break;
        }
    }
}

double DelayDistribution::sample_gamma(Rng& rng) const {
    return boost_small_shape(rng, marsaglia_tsang(rng, d_, c_), a_) * b_;
}

}  // namespace linkem
