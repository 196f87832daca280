// The JSON of what the data plane reports (linkem/counters.hpp, linkem/telemetry.hpp): the
// counters of the `stats` topic and the bodies of the `delay` topic (docs/protocol.md,
// section 4).
#pragma once

#include <nlohmann/json.hpp>

#include "linkem/counters.hpp"
#include "linkem/telemetry.hpp"

namespace linkem {

/// {"packets_in":..,"bytes_in":..,...,"rate_intervals":..}: every counter.
nlohmann::json to_json(const CounterSnapshot& c);

/// {"count":..,"min_ns":..,"max_ns":..,"mean_ns":..,"jitter_ns":..} (only count when empty);
/// protocol 1 also writes jitter_ns as "sd_ns", its earlier name. The reader takes either.
nlohmann::json to_json(const RunningStats& s);
nlohmann::json to_json(const DirectionDelay& d);
/// The inverse of to_json (RunningStats comes back with shift = mean, so that mean(), sd(),
/// min and max are those sent). Throws std::invalid_argument naming a missing or wrong key.
RunningStats running_stats_from_json(const nlohmann::json& j);
DirectionDelay direction_delay_from_json(const nlohmann::json& j);

}  // namespace linkem
