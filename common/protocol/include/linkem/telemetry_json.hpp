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

/// {"count":..,"min_ns":..,"max_ns":..,"mean_ns":..,"jitter_ns":..} (only count when empty).
/// The reader also takes "sd_ns", jitter_ns's retired name, when jitter_ns is absent.
nlohmann::json to_json(const RunningStats& s);
/// {"count":..,"mean_ns":..,"spacer_mean_ns":..,"order_mean_ns":..} (only count when empty).
nlohmann::json to_json(const WaitSums& w);
nlohmann::json to_json(const QueueReport& q);
QueueReport queue_report_from_json(const nlohmann::json& j);
/// A direction's `delay` body. Its samples carry `class_id` (their traffic class: 0 `default`,
/// i + 1 the link's class i) when `class_ids`; without it, when some sample's is not 0.
nlohmann::json to_json(const DirectionDelay& d);
nlohmann::json to_json(const DirectionDelay& d, bool class_ids);
/// Whether some sample of `d` is not `default`'s.
bool has_class_ids(const DirectionDelay& d);
/// The inverse of to_json (RunningStats comes back with shift = mean, so that mean(), jitter(),
/// min and max are those sent). Throws std::invalid_argument naming a missing or wrong key.
RunningStats running_stats_from_json(const nlohmann::json& j);
WaitSums wait_sums_from_json(const nlohmann::json& j);
DirectionDelay direction_delay_from_json(const nlohmann::json& j);

}  // namespace linkem
