// The built-in traffic generator's settings as JSON (linkemd's config file, the protocol's
// get_traffic / set_traffic): keys running, pattern, rate_bps, frame_size_bytes, period_us.
#pragma once

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"
#include "linkem/traffic.hpp"

namespace linkem {

/// {"running":..,"pattern":"cbr","rate_bps":..,"frame_size_bytes":..,"period_us":..}
nlohmann::json to_json(const TrafficConfig& t);
/// Applies the keys of `j` on top of `base` and checks the result against TrafficLimits.
/// Throws ParamError naming the key ("rate_bps") and what is allowed; base never changes.
TrafficConfig traffic_from_json(const nlohmann::json& j, const TrafficConfig& base);

}  // namespace linkem
