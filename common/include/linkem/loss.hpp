// The loss stage (step 3): none, Bernoulli(p) or Gilbert-Elliott.
#pragma once

#include <cstdint>

#include "linkem/rng.hpp"

namespace linkem {

enum class LossModel : std::uint8_t { none, bernoulli, gilbert_elliott };

/// Gilbert-Elliott: a two-state Markov chain evaluated once per packet. In state good a
/// packet is lost with probability loss_good, in bad with loss_bad; after each packet the
/// chain moves good->bad with probability p and bad->good with probability r. The
/// stationary loss rate is (r * loss_good + p * loss_bad) / (p + r). With loss_good = 0 and
/// loss_bad = 1 this is the simple Gilbert model; mean burst length in bad is 1/r packets.
class LossProcess {
  public:
    struct Config {
        LossModel model = LossModel::none;
        double probability = 0;  // Bernoulli
        double p = 0, r = 1, loss_good = 0, loss_bad = 1;
    };

    void configure(const Config& c) {
        model_ = c.model;
        bernoulli_ = probability_threshold(c.probability);
        p_ = probability_threshold(c.p);
        r_ = probability_threshold(c.r);
        loss_good_ = probability_threshold(c.loss_good);
        loss_bad_ = probability_threshold(c.loss_bad);
    }

    /// True if this packet is lost.
    bool lose(Rng& rng) {
        switch (model_) {
            case LossModel::none:
                return false;
            case LossModel::bernoulli:
                return bernoulli(rng, bernoulli_);
            case LossModel::gilbert_elliott: {
                const bool lost = bernoulli(rng, bad_ ? loss_bad_ : loss_good_);
                bad_ = bad_ ? !bernoulli(rng, r_) : bernoulli(rng, p_);
                return lost;
            }
        }
        return false;
    }

    bool in_bad_state() const { return bad_; }

  private:
    LossModel model_ = LossModel::none;
    std::uint64_t bernoulli_ = 0, p_ = 0, r_ = 0, loss_good_ = 0, loss_bad_ = 0;
    bool bad_ = false;
};

}  // namespace linkem
