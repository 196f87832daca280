// The loss stage (step 3): none, Bernoulli(p) or Gilbert-Elliott.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "linkem/rng.hpp"

namespace linkem {

enum class LossModel : std::uint8_t { none, bernoulli, gilbert_elliott };

namespace detail {

/// Number of failures before the first success of Bernoulli(p) trials, 0 < p < 1, from
/// one uniform: floor(ln U / ln(1 - p)), U in (0, 1], since P(K >= k) = (1 - p)^k.
/// `log1m_p` is ln(1 - p) (log1p(-p), exact for small p). Capped at 2^62.
inline std::uint64_t geometric(Rng& rng, double log1m_p) {
    const double k = std::floor(std::log(rng.uniform_pos()) / log1m_p);
    return k < 0x1.0p62 ? static_cast<std::uint64_t>(k) : std::uint64_t{1} << 62;
}

/// A stream of i.i.d. Bernoulli(p) outcomes, one per call. Small probabilities (the usual
/// loss rates) are drawn as geometric gaps between successes, one logarithm per success
/// instead of a random draw per packet; larger ones by one integer compare per packet.
/// Both give exactly the Bernoulli process (the gaps of one are geometric).
class BernoulliStream {
  public:
    /// Below this, gaps; from it, a draw per call.
    static constexpr double kGapBelow = 0.1;

    void configure(double p) {
        gap_ = -1;
        if (!(p > 0)) {
            mode_ = Mode::never;
        } else if (p >= 1) {
            mode_ = Mode::always;
        } else if (p < kGapBelow) {
            mode_ = Mode::gaps;
            log1m_p_ = std::log1p(-p);
        } else {
            mode_ = Mode::draw;
            threshold_ = probability_threshold(p);
        }
    }

    /// The next outcome: one call of gap_within with a limit of 1 (the same draws).
    bool next(Rng& rng) { return gap_within(rng, 1) == 0; }

    /// Outcomes of up to `limit` further calls at once: the number of failures before the
    /// next success if that is below limit (the success is consumed too), else limit (all
    /// of them failures). Same law as calling next() that often.
    std::uint64_t gap_within(Rng& rng, std::uint64_t limit) {
        switch (mode_) {
            case Mode::never:
                return limit;
            case Mode::always:
                return 0;
            case Mode::draw:
                for (std::uint64_t k = 0; k < limit; ++k)
                    if (rng() < threshold_) return k;
                return limit;
            case Mode::gaps: {
                if (gap_ < 0) gap_ = static_cast<std::int64_t>(geometric(rng, log1m_p_));
                const auto g = static_cast<std::uint64_t>(gap_);
                if (g < limit) {
                    gap_ = -1;
                    return g;
                }
                gap_ -= static_cast<std::int64_t>(limit);  // no memory: the rest is exact
                return limit;
            }
        }
        return limit;
    }
    bool never() const { return mode_ == Mode::never; }

  private:
    enum class Mode : std::uint8_t { never, always, draw, gaps };
    Mode mode_ = Mode::never;
    std::int64_t gap_ = -1;  // failures left before the next success; -1: draw anew
    std::uint64_t threshold_ = 0;
    double log1m_p_ = 0;
};

}  // namespace detail

/// Gilbert-Elliott: a two-state Markov chain evaluated once per packet. In state good a
/// packet is lost with probability loss_good, in bad with loss_bad; after each packet the
/// chain moves good->bad with probability p and bad->good with probability r. The
/// stationary loss rate is (r * loss_good + p * loss_bad) / (p + r). With loss_good = 0 and
/// loss_bad = 1 this is the simple Gilbert model; mean burst length in bad is 1/r packets.
///
/// Drawn without a random number per packet and transition: a visit to a state lasts a
/// geometric number of packets (mean 1/p in good, 1/r in bad), drawn once per visit, and
/// the losses within a state are a Bernoulli stream (above). That is the same chain: its
/// sojourn times are exactly these geometric laws, and the loss indicators given the states
/// are independent. A parameter change starts the current visit and gaps afresh, which the
/// geometric laws' lack of memory makes exact too.
///
/// The loss stage has its own random stream in the Emulator, so the delays drawn for a seed
/// do not depend on the loss model.
class LossProcess {
  public:
    struct Config {
        LossModel model = LossModel::none;
        double probability = 0;  // Bernoulli
        double p = 0, r = 1, loss_good = 0, loss_bad = 1;
    };

    void configure(const Config& c) {
        model_ = c.model;
        bernoulli_.configure(c.probability);
        in_good_.configure(c.loss_good);
        in_bad_.configure(c.loss_bad);
        log1m_p_ = c.p > 0 && c.p < 1 ? std::log1p(-c.p) : 0;
        log1m_r_ = c.r > 0 && c.r < 1 ? std::log1p(-c.r) : 0;
        p_ = c.p;
        r_ = c.r;
        left_ = 0;
    }

    /// True if this packet is lost.
    bool lose(Rng& rng) {
        switch (model_) {
            case LossModel::none:
                return false;
            case LossModel::bernoulli:
                return bernoulli_.next(rng);
            case LossModel::gilbert_elliott: {
                if (left_ == 0) left_ = visit(rng);
                const bool lost = bad_ ? in_bad_.next(rng) : in_good_.next(rng);
                if (--left_ == 0) bad_ = !bad_;
                return lost;
            }
        }
        return false;
    }

    /// Packets that pass before the next lost one (which this call also accounts for), or
    /// kNever. Equivalent to calling lose() until it returns true, counting the falses, at
    /// the cost of a few draws per loss instead of work per packet: the Emulator counts
    /// down. Do not mix with lose() on one object (in_bad_state() then describes the state
    /// at the next loss).
    static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t gap(Rng& rng) {
        switch (model_) {
            case LossModel::none:
                return kNever;
            case LossModel::bernoulli:
                return bernoulli_.gap_within(rng, kNever);
            case LossModel::gilbert_elliott: {
                if (in_good_.never() && in_bad_.never()) return kNever;
                std::uint64_t passed = 0;
                for (;;) {
                    if (left_ == 0) left_ = visit(rng);
                    const std::uint64_t k =
                        bad_ ? in_bad_.gap_within(rng, left_) : in_good_.gap_within(rng, left_);
                    if (k < left_) {
                        left_ -= k + 1;
                        if (left_ == 0) bad_ = !bad_;
                        return passed + k < kNever ? passed + k : kNever - 1;
                    }
                    passed += left_;
                    left_ = 0;
                    bad_ = !bad_;
                    if (passed >= kNever / 2) return kNever;  // a state that is never left
                }
            }
        }
        return kNever;
    }

    /// The state the next packet finds.
    bool in_bad_state() const { return bad_; }

  private:
    // Packets in a visit to the current state: 1 + Geometric(leave probability).
    std::uint64_t visit(Rng& rng) const {
        const double q = bad_ ? r_ : p_;
        if (!(q > 0)) return std::numeric_limits<std::uint64_t>::max();  // never leaves
        if (q >= 1) return 1;
        return 1 + detail::geometric(rng, bad_ ? log1m_r_ : log1m_p_);
    }

    LossModel model_ = LossModel::none;
    detail::BernoulliStream bernoulli_, in_good_, in_bad_;
    double p_ = 0, r_ = 1, log1m_p_ = 0, log1m_r_ = 0;
    std::uint64_t left_ = 0;  // packets left in the current visit; 0: draw the next visit
    bool bad_ = false;
};

}  // namespace linkem
