// The built-in traffic's settings on a command line: one flag per setting of set_traffic
// (linkem/traffic_json.hpp), the same in linkemd, linkemctl traffic and linkem-sim, and the
// conversion of what was given into set_traffic's JSON. CLI11 registration is
// linkem/cli_traffic_flags.hpp (linkem::cli).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// How a traffic setting is written on a command line.
struct TrafficFlag {
    std::string key;         // set_traffic's key: "rate_bps"
    std::string flag;        // "--traffic-rate"
    std::string value_name;  // for --help: NAME, RATE, BYTES or DURATION
    std::string example;     // "100Mbit"
    std::string help;        // what it sets; each program may add its defaults
};

/// One entry per traffic setting a flag sets: --traffic-pattern (pattern), --traffic-rate,
/// --frame-size, --period.
const std::vector<TrafficFlag>& traffic_flags();

/// The text given to the traffic flags: [i] for traffic_flags()[i]; empty: not given.
using TrafficFlagText = std::vector<std::string>;

/// The flags given as set_traffic's update: {"pattern": "sine", "running": true, "rate_bps":
/// 1e8, "frame_size_bytes": 512, "period_us": 3e7}; a pattern also starts the traffic
/// ("running": true). Only the flags given appear. Checks the form (a known pattern, a rate
/// or duration with a unit, a size), not the range, which is the receiver's (linkemd's
/// TrafficLimits, linkem-sim's own). Throws FlagError naming the flag and the form allowed:
/// "--traffic-rate: 'fast' is not a bit rate ..., e.g. 100Mbit".
nlohmann::json traffic_update_from_flags(const TrafficFlagText& text);

}  // namespace linkem
