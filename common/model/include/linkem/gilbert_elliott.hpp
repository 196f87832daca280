// Gilbert-Elliott loss as users ask for it: an average loss and a mean burst length,
// converted to and from the chain's per-packet transition probabilities ge_p (good -> bad)
// and ge_r (bad -> good) of LinkParams. The loss stage itself is linkem/loss.hpp.
//
// A burst is a run of consecutive lost packets. In the usual case, ge_loss_good 0 and
// ge_loss_bad 1 (the simple Gilbert model: the bad state loses every packet, the good state
// none), a burst is one stay in bad, and
//   average loss L = p / (p + r),  mean burst b = 1 / r;  so  r = 1 / b,  p = L / (b (1 - L)).
// Other loss probabilities in the states make a stay in bad and a burst differ: the bad state
// passes some packets (a stay breaks into several shorter bursts), the good state loses some
// (isolated losses, runs of 1 / (1 - ge_loss_good) on average). The figures here are then
// those of the losses themselves: L is the stationary loss rate (r·lg + p·lb) / (p + r), and
// b the mean length of a run of losses, P(loss) / P(a loss followed by a pass). For a given
// ge_loss_good and ge_loss_bad, L fixes the share of packets in bad, q = (L - lg) / (lb - lg),
// and b then fixes how fast the chain moves, s = p + r (p = q s, r = (1 - q) s): P(a loss
// followed by a pass) = (1-q)·lg(1-lg) + q·lb(1-lb) + s·q(1-q)(lb-lg)², linear in s.
#pragma once

#include <limits>

namespace linkem {

/// The chain's parameters, as LinkParams' ge_p, ge_r, ge_loss_good, ge_loss_bad.
struct GeChain {
    double p = 0, r = 1, loss_good = 0, loss_bad = 1;
};

/// What a chain does to a long stream of packets.
struct GeLossAndBurst {
    double average_loss = 0;   // lost / sent, 0..1 (the chain in its stationary state)
    double mean_burst = 0;     // mean run of consecutive losses, packets (0 without loss;
                               // infinity when a run never ends)
    double mean_bad_stay = 1;  // mean stay in state bad, 1 / r packets (infinity for r = 0);
                               // equal to mean_burst for ge_loss_good 0, ge_loss_bad 1
};

/// The average loss and mean burst of a chain (p, r, loss_good, loss_bad in 0..1). A chain
/// that never leaves good (p = 0) loses loss_good; one that never leaves bad once there
/// (r = 0 < p), loss_bad.
GeLossAndBurst ge_loss_and_burst(const GeChain& c);

/// The chain with the given average loss (0..1) and mean burst (packets, >= 1), for the
/// given loss probabilities in the states (by default 0 and 1: then r = 1 / mean_burst and
/// p = average_loss / (mean_burst (1 - average_loss))). average_loss equal to loss_good:
/// the chain stays good (p = 0), and r = 1 / mean_burst (what a stay in bad would last).
/// Throws ParamError naming `average_loss`, `mean_burst` or `ge_loss_bad` when the figures
/// cannot be had, with what is allowed (ge_mean_burst_range's bounds).
GeChain ge_from_loss_and_burst(double average_loss, double mean_burst, double loss_good = 0,
                               double loss_bad = 1);

/// The mean bursts (packets) a chain with this average loss and these state loss
/// probabilities can have: ge_from_loss_and_burst accepts min <= mean_burst < max (max, when
/// finite, is the limit of a chain that no longer moves; it is infinite when loss_good and
/// loss_bad are each 0 or 1). With loss_good 0 and loss_bad 1, min is 1 up to an average loss
/// of 0.5 and L / (1 - L) above (p would pass 1). Throws as
/// ge_from_loss_and_burst does for an average loss or state loss probabilities it refuses.
struct GeBurstRange {
    double min = 1, max = std::numeric_limits<double>::infinity();
};
GeBurstRange ge_mean_burst_range(double average_loss, double loss_good = 0, double loss_bad = 1);

}  // namespace linkem
