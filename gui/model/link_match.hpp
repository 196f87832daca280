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

}  // namespace linkem::gui
