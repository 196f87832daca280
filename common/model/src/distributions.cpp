#include "linkem/distributions.hpp"

#include <limits>

namespace linkem {

std::string_view to_string(Distribution d) {
    switch (d) {
        case Distribution::constant:
            return "constant";
        case Distribution::uniform:
            return "uniform";
        case Distribution::normal:
            return "normal";
        case Distribution::gamma:
            return "gamma";
        case Distribution::lognormal:
            return "lognormal";
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
    f[0] = 0;  // layer 0's wedge is the tail: not used
    f[1] = std::exp(-0.5 * kR * kR);
    x[0] = kV / f[1];
    x[1] = kR;
    for (int i = 2; i < kLayers; ++i) {
        x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f[i - 1]));
        f[i] = std::exp(-0.5 * x[i] * x[i]);
    }
    x[kLayers] = 0;
    f[kLayers] = 1;  // e^0
    for (int i = 0; i < kLayers; ++i)
        ratio[i] = x[i + 1] / x[i];
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

// x lies between the layer's edges x[layer + 1] < |x| < x[layer], where the density runs
// from f[layer + 1] down to f[layer]: a uniform point at height between those two is under
// the curve with the probability the ziggurat needs. One exp (inlined, 2e-15 relative) per
// wedge; the table holds the edges' densities.
double normal_wedge(Rng& rng, int layer, double u) {
    const auto& z = kZiggurat;
    const double x = u * z.x[layer];
    const double y = z.f[layer + 1] + rng.uniform() * (z.f[layer] - z.f[layer + 1]);
    if (y < exp_inline(-0.5 * x * x)) return x;
    return std::numeric_limits<double>::quiet_NaN();  // rejected: caller draws again
}

double normal_slow(Rng& rng, int layer, double u) {
    if (layer == 0) return normal_tail(rng, u < 0);
    const double x = normal_wedge(rng, layer, u);
    return std::isnan(x) ? standard_normal(rng) : x;
}

bool gamma_accept_slow(double u, double x, double v, double d) {
    const double x2 = x * x;
    return u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v));
}

// Computed in log space so that tiny shapes (high rates, strong correlation) underflow
// gracefully to 0 instead of producing NaN. Below -746, e^x is 0 in double: returning it
// directly skips libm's slow underflow path, which tiny shapes hit on most draws.
double gamma_boost(Rng& rng, double g, double shape) {
    const double e = std::log(rng.uniform_pos()) / shape;
    return e < -746.0 ? 0.0 : g * std::exp(e);
}

ExpTable::ExpTable() {
    for (int j = 0; j < kSize; ++j) {
        const double v = static_cast<double>(std::exp2l(static_cast<long double>(j) / kSize));
        bits[j] = std::bit_cast<std::uint64_t>(v) - (static_cast<std::uint64_t>(j) << (52 - kBits));
    }
}

const ExpTable kExpTable;

}  // namespace detail

double standard_gamma(Rng& rng, double shape) {
    const double k = shape < 1.0 ? shape + 1.0 : shape;
    const double d = k - 1.0 / 3.0;
    const double g = detail::marsaglia_tsang(rng, d, 1.0 / std::sqrt(9.0 * d));
    return shape < 1.0 ? detail::gamma_boost(rng, g, shape) : g;
}

void DelayDistribution::configure(Distribution kind, double mean, double sd) {
    kind_ = sd > 0 ? kind : Distribution::constant;
    mean_ = mean;
    sd_ = sd > 0 ? sd : 0;
    switch (kind_) {
        case Distribution::constant:
        case Distribution::normal:
            break;
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

}  // namespace linkem
