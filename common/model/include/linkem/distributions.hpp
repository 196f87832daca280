// Delay distributions parameterised by mean and standard deviation.
//
// A DelayDistribution is set up once per (mean, sd) pair -- that is, once per parameter
// change or rate-interval close -- and then sampled per packet with no further
// transcendental set-up. Normal samples come from a 256-layer ziggurat (Marsaglia & Tsang
// 2000, in Doornik's 2005 formulation), which needs one 64-bit random word and one table
// compare in about 99% of draws.
#pragma once

#include <bit>
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
    static constexpr double kR = 3.6541528853610088;  // start of the tail
    static constexpr double kV = 0.00492867323399;    // area of each layer
    double x[kLayers + 1];  // layer edges, x[0] = V/f(R) (base), x[1] = R, x[256] = 0
    double ratio[kLayers];  // x[i+1]/x[i]: |u| below this is inside the rectangle
    double f[kLayers + 1];  // e^(-x[i]^2 / 2), the density at the edges (f[0] unused)
    ZigguratTables();
};
extern const ZigguratTables kZiggurat;

double normal_tail(Rng& rng, bool negative);
double normal_wedge(Rng& rng, int layer, double u);

struct ExpTable {
    static constexpr int kBits = 7;
    static constexpr int kSize = 1 << kBits;
    // bit pattern of 2^(j/128), minus j << 45 so that adding k << 45 (k = 128 e + j)
    // yields 2^e * 2^(j/128) directly.
    std::uint64_t bits[kSize];
    ExpTable();
};
extern const ExpTable kExpTable;

/// e^x, inlined for the lognormal hot path: x = k ln2/128 + r with |r| <= ln2/256, a table
/// for 2^(k/128) and a degree-4 polynomial for e^r. Relative error below 2e-15 (checked
/// against long double expl; see docs/performance.md). Outside |x| < 700 (overflow,
/// subnormal results, inf, NaN) it defers to std::exp.
inline double exp_inline(double x) {
    if (!(std::fabs(x) < 700.0)) return std::exp(x);
    constexpr double kInvLn2N = 184.6649652337873;     // 128 / ln 2
    constexpr double kLn2HiN = 0x1.62e42fefa0000p-8;   // ln2/128, 36 bits: kd * hi is exact
    constexpr double kLn2LoN = 0x1.cf79abc9e3b3ap-47;  // ln2/128 - hi
    constexpr double kRound = 0x1.8p52;                // adding it rounds to an integer
    double kd = x * kInvLn2N + kRound;
    const std::uint64_t ki = std::bit_cast<std::uint64_t>(kd);
    kd -= kRound;
    const double r = (x - kd * kLn2HiN) - kd * kLn2LoN;
    const double scale = std::bit_cast<double>(kExpTable.bits[ki % ExpTable::kSize] +
                                               (ki << (52 - ExpTable::kBits)));
    // e^r - 1 to degree 4 (Estrin): truncation error r^5/120 < 1.3e-15 relative.
    const double r2 = r * r;
    const double p = r + r2 * ((0.5 + r * (1.0 / 6)) + r2 * (1.0 / 24));
    return scale + scale * p;
}

/// The ziggurat's way out of the rectangle for a proposal (layer, u): the tail (layer 0),
/// else the wedge test; a rejected proposal is replaced by a fresh standard_normal draw.
double normal_slow(Rng& rng, int layer, double u);

/// f(copy) on a copy of the generator, copied back after: for the rare out-of-line calls
/// (slow paths) of an inlined sampler. The call then takes the address of the copy, not of
/// `rng`: a generator whose address escapes to a call anywhere in a loop is kept in memory
/// for the whole loop (GCC does not promote address-taken locals to registers), and every
/// draw then goes through store-to-load forwarding.
template <class F>
[[gnu::always_inline]] inline double on_copy(Rng& rng, F&& f) {
    Rng spill = rng;
    const double x = f(spill);
    rng = spill;
    return x;
}

[[gnu::always_inline]] inline double normal_slow_copy(Rng& rng, int layer, double u) {
    return on_copy(rng, [layer, u](Rng& r) { return normal_slow(r, layer, u); });
}
}  // namespace detail

/// Standard normal N(0, 1) by ziggurat. Always inlined (the tail and wedges are calls):
/// out of line, the generator's state went through memory on every draw.
[[gnu::always_inline]] inline double standard_normal(Rng& rng) {
    const std::uint64_t bits = rng();
    const int layer = static_cast<int>(bits & 0xff);
    // 53 high bits -> u uniform in [-1, 1); independent of the 8 low bits used above.
    const double u = static_cast<double>(static_cast<std::int64_t>(bits) >> 11) * 0x1.0p-52;
    if (std::fabs(u) < detail::kZiggurat.ratio[layer]) [[likely]]
        return u * detail::kZiggurat.x[layer];
    return detail::normal_slow_copy(rng, layer, u);
}

/// Two independent standard normals from one 64-bit random word, by the same ziggurat:
/// each 32-bit half gives a layer (its low 8 bits) and u (its high 24 bits, a resolution of
/// 2^-23: neighbouring values lie at most 4.4e-7 standard deviations apart, 1.3 ns at 3 ms of
/// jitter). Half the generator's work per draw; the tail, the wedges and rejections (about
/// 1% of draws) take further words, as in standard_normal.
[[gnu::always_inline]] inline void standard_normal_pair(Rng& rng, double& z0, double& z1) {
    const std::uint64_t bits = rng();
    // Always inlined too: otherwise whether it is depends on how much the rest of the
    // translation unit has inlined, and out of line it slows every i.i.d. normal draw.
    const auto one = [&rng](std::uint32_t b) __attribute__((always_inline)) {
        const int layer = static_cast<int>(b & 0xff);
        const double u = static_cast<double>(static_cast<std::int32_t>(b) >> 8) * 0x1.0p-23;
        if (std::fabs(u) < detail::kZiggurat.ratio[layer]) [[likely]]
            return u * detail::kZiggurat.x[layer];
        return detail::normal_slow_copy(rng, layer, u);
    };
    z0 = one(static_cast<std::uint32_t>(bits));
    z1 = one(static_cast<std::uint32_t>(bits >> 32));
}

namespace detail {
// Marsaglia & Tsang's exact acceptance test for u, x, v = (1 + c x)^3 (rarely needed).
bool gamma_accept_slow(double u, double x, double v, double d);
// Gamma(shape < 1) = Gamma(shape + 1) * U^(1/shape).
double gamma_boost(Rng& rng, double g, double shape);

/// Marsaglia & Tsang (2000) for the boosted shape d + 1/3 >= 1, c = 1/sqrt(9d).
///
/// The acceptance test is ln u < d g(t), t = c x, g(t) = 4.5 t^2 + 1 - (1+t)^3 + 3 ln(1+t)
/// = -3/4 t^4 + 3/5 t^5 - 3 int_0^t s^5/(1+s) ds. For t >= -1/2 the integral term is at
/// least -t^6 (-t^6/2 for t >= 0), so G(t) = t^4 (-3/4 + t (3/5 - t)) <= g(t); with
/// ln u <= u - 1, "u - 1 < d G(t)" is a sufficient condition that needs no logarithm. It
/// leaves about 1/(36 d) of the draws unsettled (0.26% at shape 11.1, the paper's 10 ms /
/// 3 ms); those go to the exact test, so the law is exactly Marsaglia & Tsang's.
[[gnu::always_inline]] inline double marsaglia_tsang(Rng& rng, double d, double c) {
    for (;;) {
        const double x = standard_normal(rng);
        const double t = c * x;
        if (t <= -1.0) continue;  // v <= 0
        const double v = (1.0 + t) * (1.0 + t) * (1.0 + t);
        const double u = rng.uniform_pos();
        if (t >= -0.5) {
            const double t2 = t * t;
            const double g = t2 * t2 * (-0.75 + t * (0.6 - t));
            if (u - 1.0 < d * g) return d * v;
        }
        if (gamma_accept_slow(u, x, v, d)) return d * v;
    }
}
}  // namespace detail

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

    /// Always inlined, so that a caller's loop keeps the RNG state in registers (measured:
    /// an out-of-line sample() cost the data plane's correlated path several ns per packet)
    /// and hoists the switch on the kind out of the loop where it can. The rare slow paths
    /// (normal tail and wedges, exact gamma test) stay behind calls.
    [[gnu::always_inline]] double sample(Rng& rng) const {
        switch (kind_) {
            case Distribution::normal:
                return mean_ + sd_ * standard_normal(rng);
            case Distribution::constant:
                return mean_;
            case Distribution::uniform:
                return a_ + b_ * rng.uniform();
            case Distribution::gamma:
                return sample_gamma(rng);
            case Distribution::lognormal:
                return detail::exp_inline(a_ + b_ * standard_normal(rng));
        }
        return mean_;
    }

    /// Calls f(draw) with `draw` a callable double(Rng&) that samples this law, specialised
    /// for it: a loop of draws inside f then does not switch on the kind per draw.
    template <class F>
    [[gnu::always_inline]] void with_sampler(F&& f) const {
        const double m = mean_, s = sd_, a = a_, b = b_;
        switch (kind_) {
            case Distribution::normal:
                f([m, s](Rng& r) { return m + s * standard_normal(r); });
                return;
            case Distribution::constant:
                f([m](Rng&) { return m; });
                return;
            case Distribution::uniform:
                f([a, b](Rng& r) { return a + b * r.uniform(); });
                return;
            case Distribution::gamma:
                f([this](Rng& r) { return sample_gamma(r); });
                return;
            case Distribution::lognormal:
                f([a, b](Rng& r) { return detail::exp_inline(a + b * standard_normal(r)); });
                return;
        }
        f([m](Rng&) { return m; });
    }

    Distribution kind() const { return kind_; }
    double mean() const { return mean_; }
    double sd() const { return sd_; }

  private:
    // Inlined, and the boost (a call) runs on a copy of the generator (detail::on_copy).
    [[gnu::always_inline]] double sample_gamma(Rng& rng) const {
        const double g = detail::marsaglia_tsang(rng, d_, c_);
        if (a_ >= 1.0) return g * b_;
        const double shape = a_;
        return detail::on_copy(rng,
                               [g, shape](Rng& r) { return detail::gamma_boost(r, g, shape); }) *
               b_;
    }

    Distribution kind_ = Distribution::constant;
    double mean_ = 0, sd_ = 0;
    // uniform: a = low end, b = width; lognormal: a = mu_ln, b = sigma_ln;
    // gamma: a = shape, b = scale, d/c = Marsaglia-Tsang constants for max(shape, shape+1).
    double a_ = 0, b_ = 0, d_ = 0, c_ = 0;
};

}  // namespace linkem
