// The delayer: step 1 of the DPDS pipeline. Draws the delay D_i of each packet.
//
//  - uncorrelated / reordered: D_i = C_i, i.i.d. with mean mu and sd sigma.
//  - correlated (adaptive delay correlation, DPDS paper III-A/B):
//        D_i = alpha * D_{i-1} + (1 - alpha) * C_i,
//        C_i with mean mu and variance (1 + alpha)/(1 - alpha) * sigma^2,
//        alpha = 0.5^(1/(t_h * R)),
//    recomputed whenever the rate estimator closes an interval.
//  - smooth: D(t), a smooth stationary process in time with the configured marginal law
//    and half-life, evaluated at the packet's arrival time (smooth_delay.hpp). Not the
//    paper's method; independent of the packet rate by construction.
//
// 1 - alpha is computed as -expm1(ln(0.5) / (t_h * R)) in double: at 100 Gbit/s of 1518-byte
// frames t_h * R is about 1.7e5 and 1 - alpha about 4e-6, which `1 - pow(0.5, ...)` in float
// would round to a useless value. The EMA is updated as D += (1 - alpha) * (C - D), which
// keeps the small weight exact.
//
// Start-up (documented in docs/simulation.md): before the first rate interval has closed
// alpha is unknown. The paper sets D_0 = C_0, but C's variance grows like 1/(1 - alpha): at
// high rates that would start the series seconds away from mu. We instead draw D_0 from the
// stationary law of D (mean mu, sd sigma, the configured distribution) and hold it
// (alpha = 1) until the first interval closes, i.e. for about T_min. Delays therefore never
// start out inflated or reordered, and the series is stationary from its first packet.
//
// Parameter changes keep the EMA state and shift/scale it onto the new law:
// D <- mu' + (D - mu) * sigma'/sigma, so a changed mean or jitter applies at once, without
// a transient and without losing the current position of the delay series.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "linkem/distributions.hpp"
#include "linkem/rng.hpp"
#include "linkem/smooth_delay.hpp"
#include "linkem/time.hpp"

namespace linkem {

enum class Strategy : std::uint8_t { correlated, uncorrelated, reordered, smooth };

class Delayer {
  public:
    struct Config {
        Strategy strategy = Strategy::correlated;
        Distribution distribution = Distribution::normal;
        double mean_ns = 0;
        double jitter_ns = 0;
        double half_life_ns = 21e6;
    };

    void configure(const Config& c) {
        const Config old = cfg_;
        cfg_ = c;
        constant_ = c.jitter_ns <= 0 || c.distribution == Distribution::constant;
        have_spare_ = false;  // a new configuration starts a new pair
        base_.configure(constant_ ? Distribution::constant : c.distribution, c.mean_ns,
                        constant_ ? 0.0 : c.jitter_ns);
        // started_ implies the old configuration was varying and correlated (old sigma > 0).
        if (constant_ || c.strategy != Strategy::correlated)
            started_ = false;  // D is re-drawn from the stationary law when correlation resumes
        else if (started_)
            d_ = c.mean_ns + (d_ - old.mean_ns) * (c.jitter_ns / old.jitter_ns);
        const bool smooth = !constant_ && c.strategy == Strategy::smooth;
        if (smooth && !smooth_state_) smooth_state_ = std::make_shared<SmoothDelay>();
        if (smooth && !smooth_)
            smooth_state_->restart();  // a fresh series when smooth starts (or resumes)
        smooth_ = smooth;
        if (smooth)
            smooth_state_->configure(c.distribution, c.mean_ns, c.jitter_ns, c.half_life_ns);
        update_weight();
    }

    const Config& config() const { return cfg_; }

    /// Called when the rate estimator closed an interval with rate R (packets/s).
    void on_rate(double rate_pps) {
        rate_pps_ = rate_pps;
        update_weight();
    }

    /// Draws the delay of the next packet, arriving at `now`, in (possibly negative)
    /// nanoseconds. Only `smooth` reads the time; the other strategies count packets.
    double next(Rng& rng, TimeNs now = 0) {
        if (smooth_) [[unlikely]]
            return detail::on_copy(rng, [&](Rng& r) { return smooth_next(r, now); });
        if (constant_) return cfg_.mean_ns;
        if (cfg_.strategy != Strategy::correlated)
            return base_.kind() == Distribution::normal ? iid_normal(rng) : base_.sample(rng);
        if (!started_) {
            started_ = true;
            d_ = base_.sample(rng);
            return d_;
        }
        if (!have_weight_) return d_;
        d_ += one_minus_alpha_ * (gen_.sample(rng) - d_);
        return d_;
    }

    /// Draws the delays of the next n packets into out: the same values, from the same
    /// draws, as n calls of next(), with the EMA state and the generator in registers.
    ///
    /// Each loop below works on a copy of the generator of its own, and the normal law's
    /// slow paths run on a copy of that (normal_slow_copy): GCC keeps a variable whose
    /// address reaches a call anywhere in a function in memory throughout that function,
    /// so one shared copy would put the generator through memory on every draw (figures:
    /// docs/performance.md, "Delay draws in registers").
    void next_n(Rng& rng, double* out, std::size_t n, TimeNs now = 0) {
        std::size_t i = 0;
        if (constant_) {
            for (; i < n; ++i)
                out[i] = cfg_.mean_ns;
            return;
        }
        if (cfg_.strategy == Strategy::correlated) {
            if (!started_ && i < n) out[i++] = next(rng);
            if (!have_weight_) {
                for (; i < n; ++i)
                    out[i] = d_;
            } else {
                gen_.with_sampler([&](auto draw) {
                    Rng r = rng;
                    const double w = one_minus_alpha_;
                    double d = d_;
                    for (; i < n; ++i) {
                        d += w * (draw(r) - d);
                        out[i] = d;
                    }
                    d_ = d;
                    rng = r;
                });
            }
        } else if (smooth_) {  // packets that arrived together get the same delay
            const double d = detail::on_copy(rng, [&](Rng& r) { return smooth_next(r, now); });
            for (; i < n; ++i)
                out[i] = d;
        } else if (base_.kind() == Distribution::normal) {
            // Whole pairs in the loop; a spare before it and an odd one out after it go
            // through iid_normal, as in next().
            Rng r = rng;
            const double m = base_.mean(), s = base_.sd();
            if (have_spare_ && i < n) out[i++] = iid_normal(r);
            for (; i + 1 < n; i += 2) {
                double z0, z1;
                standard_normal_pair(r, z0, z1);
                out[i] = m + s * z0;
                out[i + 1] = m + s * z1;
            }
            if (i < n) out[i++] = iid_normal(r);
            rng = r;
        } else {
            base_.with_sampler([&](auto draw) {
                Rng r = rng;
                for (; i < n; ++i)
                    out[i] = draw(r);
                rng = r;
            });
        }
    }

    /// The correlation weight in use (0 for i.i.d. strategies and constant delay, 1 while
    /// holding during start-up).
    double alpha() const {
        if (constant_ || cfg_.strategy != Strategy::correlated) return 0.0;
        return have_weight_ ? 1.0 - one_minus_alpha_ : 1.0;
    }
    double one_minus_alpha() const { return have_weight_ ? one_minus_alpha_ : 0.0; }
    /// Standard deviation of the generating delays C (sigma * sqrt((1+alpha)/(1-alpha))).
    double generating_sd() const { return gen_.sd(); }
    /// Current EMA state D (meaningful in correlated mode after the first packet).
    double state() const { return d_; }
    /// The smooth strategy's process (meaningful when that strategy is configured).
    const SmoothDelay& smooth() const { return *smooth_state_; }

  private:
    // Out of line, so that the packet-count strategies' inlined loops do not carry it. (In
    // next_n the correlated branch comes first: with smooth's test ahead of it, correlated
    // cost 11 instead of 7.6 ns per packet in bench_emulator at 10^6 in flight.)
    [[gnu::noinline]] double smooth_next(Rng& rng, TimeNs now) {
        return smooth_state_->at(rng, now);
    }

    // An i.i.d. normal delay. They are drawn in pairs (standard_normal_pair, one random word
    // for two): the second of a pair waits in spare_z_ for the next packet.
    [[gnu::always_inline]] double iid_normal(Rng& rng) {
        if (have_spare_) {
            have_spare_ = false;
            return base_.mean() + base_.sd() * spare_z_;
        }
        double z0;
        standard_normal_pair(rng, z0, spare_z_);
        have_spare_ = true;
        return base_.mean() + base_.sd() * z0;
    }

    void update_weight() {
        have_weight_ = false;
        if (constant_ || cfg_.strategy != Strategy::correlated || rate_pps_ <= 0) return;
        // k_h = t_h * R packets per half-life; alpha = 0.5^(1/k_h).
        const double kh = cfg_.half_life_ns * 1e-9 * rate_pps_;
        one_minus_alpha_ = -std::expm1(-M_LN2 / kh);
        if (!(one_minus_alpha_ > 0)) return;  // k_h so large that alpha == 1: keep holding
        const double var_scale = (2.0 - one_minus_alpha_) / one_minus_alpha_;
        gen_.configure(cfg_.distribution, cfg_.mean_ns, cfg_.jitter_ns * std::sqrt(var_scale));
        have_weight_ = true;
    }

    Config cfg_;
    bool constant_ = true;
    DelayDistribution base_;  // mean mu, sd sigma: i.i.d. strategies and D_0
    DelayDistribution gen_;   // mean mu, sd of C: the EMA's input
    double rate_pps_ = 0;
    double one_minus_alpha_ = 0;
    bool have_weight_ = false;
    bool started_ = false;
    double d_ = 0;
    bool have_spare_ = false;  // spare_z_: the unused second draw of the last pair
    double spare_z_ = 0;
    bool smooth_ = false;  // strategy smooth with a varying law
    // Allocated when smooth is first configured: the other strategies' Delayer stays small.
    std::shared_ptr<SmoothDelay> smooth_state_;
};

}  // namespace linkem
