// Comparing links, independent of Qt: which preset the link in force is (the preset box
// says "Custom" when none), and the link that compares two delay strategies side by side.
#pragma once

#include <string>
#include <vector>

#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "linkem/presets.hpp"

namespace linkem::gui {

/// The two links are the same in the given directions, seeds aside.
bool sameLink(const LinkConfig& a, const LinkConfig& b, unsigned directions);

/// The index of the first preset whose link is `link` (seeds aside), or -1.
int matchingPreset(const std::vector<Preset>& presets, const LinkConfig& link, unsigned directions);

/// set_link's update that compares two strategies: both directions get A→B's parameters in
/// force (the same mean, jitter, limiter, loss), A→B with `strategy_a`, B→A with
/// `strategy_b`; the seeds are left alone (the random streams go on).
proto::LinkUpdate compareStrategiesUpdate(const LinkParams& a_to_b, const std::string& strategy_a,
                                          const std::string& strategy_b);

/// The bufferbloat view's link (docs/teaching.md, "Drop-tail against FQ-CoDel"): both
/// directions a 10 Mbit/s spacer with a 1 MiB queue limit and a constant 20 ms delay, no loss,
/// the rest as `a_to_b` has it; A→B queue droptail, B→A fq_codel (its defaults: 5 ms target,
/// 100 ms interval), ECN off. The seeds are left alone.
inline constexpr double kBufferbloatRateBps = 10e6;
inline constexpr std::uint64_t kBufferbloatLimitBytes = 1'048'576;
inline constexpr DurationNs kBufferbloatDelay = 20'000'000;
proto::LinkUpdate bufferbloatUpdate(const LinkParams& a_to_b);

/// What the queue of a direction's link settles at under a load above its rate: drop-tail,
/// the limit's drain time (queue_limit * 8 / rate: 1 MiB at 10 Mbit/s, 0.84 s); CoDel and
/// FQ-CoDel, near their target for flows that slow down on a drop (RFC 8289, RFC 8290), while
/// a constant-rate load above the rate (the built-in traffic) makes them cycle: the queue
/// grows until the drop rate has climbed to the excess, drains, and CoDel stops dropping;
/// PIE, near its target (RFC 8033).
/// Empty where the limiter does not queue (none, policer) or the rate is unknown (trace).
std::string queueExpectation(const LinkParams& p);

}  // namespace linkem::gui
