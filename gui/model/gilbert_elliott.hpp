// Gilbert-Elliott loss as users ask for it: the average loss and the mean burst length,
// to and from the model's per-packet transition probabilities p (good -> bad) and r
// (bad -> good) with the loss probabilities in each state. The stationary share of the bad
// state is p / (p + r); a stay in the bad state lasts 1 / r packets on average (with a loss
// of 1 in the bad state and 0 in the good one, the mean length of a burst of losses).
#pragma once

#include <optional>

namespace linkem::gui {

struct GeFigures {
    double average_loss = 0;  // 0..1
    double mean_burst = 1;    // packets in the bad state, >= 1
};

/// The figures of p, r and the states' loss probabilities.
GeFigures geFigures(double p, double r, double loss_good, double loss_bad);

struct GeTransitions {
    double p = 0, r = 1;
};

/// p and r for an average loss and a mean burst length (>= 1 packet), given the states' loss
/// probabilities; none when the average loss lies outside [loss_good, loss_bad) or p would
/// exceed 1.
std::optional<GeTransitions> geTransitions(double average_loss, double mean_burst, double loss_good,
                                           double loss_bad);

}  // namespace linkem::gui
