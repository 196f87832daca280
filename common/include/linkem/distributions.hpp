// Delay distributions parameterised by mean and standard deviation.
//
// A DelayDistribution is set up once per (mean, sd) pair -- that is, once per parameter
// change or rate-interval close -- and then sampled per packet with no further
// transcendental set-up. Normal samples come from a 256-layer ziggurat (Marsaglia & Tsang
// 2000, in Doornik's 2005 formulation), which needs one 64-bit random word and one table
// compare in about 99% of draws.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "linkem/rng.hpp"

namespace linkem {

enum class Distribution : std::uint8_t { constant, uniform, normal, gamma, lognormal };

std::string_view to_string(Distribution d);
bool parse_distribution(std::string_view s, Distribution& out);

namespace detail {
struct ZigguratTables {
    static constexpr int kLayers = 256;
    static constexpr double kR = 3.6541528853610088;   // start of the tail
    static constexpr double kV = 0.00492867323399;     // area of each layer
    double x[kLayers + 1];  // layer edges, x[0] = V/f(R) (base), x[1] = R, x[256] = 0
    double ratio[kLayers];  // x[i+1]/x[i]: |u| below this is inside the rectangle
    ZigguratTables();
};
extern const ZigguratTables kZiggurat;

double normal_tail(Rng& rng, bool negative);
double normal_wedge(Rng& rng, int layer, double u);
}  // namespace detail

/// Standard normal N(0, 1) by ziggurat.
inline double standard_normal(Rng& rng) {
    for (;;) {
        const std::uint64_t bits = rng();
        const int layer = static_cast<int>(bits & 0xff);
        // 53 high bits -> u uniform in [-1, 1); independent of the 8 low bits used above.
        const double u = static_cast<double>(static_cast<std::int64_t>(bits) >> 11) * 0x1.0p-52;
        if (std::fabs(u) < detail::kZiggurat.ratio[layer]) return u * detail::kZiggurat.x[layer];
        if (layer == 0) return detail::normal_tail(rng, u < 0);
        const double x = detail::normal_wedge(rng, layer, u);
        if (!std::isnan(x)) return x;
    }
}

/// Gamma(shape k, scale 1) by Marsaglia & Tsang (2000); k < 1 via the k+1 boost.
double standard_gamma(Rng& rng, double shape);

/// One configured distribution: sample() returns a value with the given mean and sd.
class DelayDistribution {
public:
    DelayDistribution() = default;
    DelayDistribution(Distribution kind, double mean, double sd) { configure(kind, mean, sd); }

    /// Recomputes the derived parameters. For gamma and lognormal, mean must be > 0 when
    /// sd > 0 (LinkParams validation guarantees it); sd == 0 always means "constant".
    void configure(Distribution kind, double mean, double sd);

    double sample(Rng& rng) const {
        switch (kind_) {
            case Distribution::constant: return mean_;
            case Distribution::normal: return mean_ + sd_ * standard_normal(rng);
            case Distribution::uniform: return a_ + b_ * rng.uniform();
            case Distribution::gamma: return sample_gamma(rng);
            case Distribution::lognormal: return std::exp(a_ + b_ * standard_normal(rng));
        }
        return mean_;
    }

    Distribution kind() const { return kind_; }
    double mean() const { return mean_; }
    double sd() const { return sd_; }

private:
    double sample_gamma(Rng& rng) const;

    Distribution kind_ = Distribution::constant;
    double mean_ = 0, sd_ = 0;
    // uniform: a = low end, b = width; lognormal: a = mu_ln, b = sigma_ln;
    // gamma: a = shape, b = scale, d/c = Marsaglia-Tsang constants for max(shape, shape+1).
    double a_ = 0, b_ = 0, d_ = 0, c_ = 0;
};

}  // namespace linkem
