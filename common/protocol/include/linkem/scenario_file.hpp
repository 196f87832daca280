// Scenario files: the JSON form of a Scenario (scenario.hpp), the per-interval CSV importer
// and the built-in scenarios. docs/scenarios.md is the specification.
//
// JSON (the native form):
//   {"name": "step-response", "description": "...", "source": "...",
//    "loop": false, "duration_s": 30,
//    "steps": [
//      {"at_s": 0,  "set": {"mean_delay_us": 10000, "jitter_us": 0}},
//      {"at_s": 10, "set": {"mean_delay_us": 100000}, "note": "the path gets longer"},
//      {"at_s": 20, "until_s": 25, "ramp": {"b_to_a": {"rate_bps": 2e6}}}]}
// `set` and `ramp` hold link parameters as a config file and set_link do: top-level keys for
// both directions, "a_to_b" / "b_to_a" objects for one. A step with "class": "voip" changes
// that traffic class's parameters instead of the link's own (`default`'s), as set_link's
// `class` does; such a step is a `set` (a ramp on a class is refused).
//
// CSV (measured paths, one row per interval):
//   # name: my-path            (optional metadata lines: name, description, source,
//   # source: measured with...  loop, duration_s)
//   time_s,mean_delay_us,jitter_us,rate_bps,loss_probability,b_to_a.rate_bps
//   0,20000,2000,50e6,0.001,10e6
//   1,24000,,45e6,,
// Each row is a step at time_s giving its non-empty cells; a column is a link parameter's
// key, for both directions or, prefixed "a_to_b." / "b_to_a.", for one.
#pragma once

#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkem/scenario.hpp"

namespace linkem {

/// A scenario file (or inline scenario) that cannot be played, and where: `place` is the
/// file ("tunnel.json", "evening.csv:12" with the line) or empty, `field` the path of what
/// is wrong inside it ("steps[3].set.jitter_us", "mean_delay_us"), `message` what is wrong
/// and what is allowed. what() is "place: field: message".
class ScenarioError : public std::invalid_argument {
  public:
    ScenarioError(std::string place, std::string field, const std::string& message);
    const std::string& place() const { return place_; }
    const std::string& field() const { return field_; }
    const std::string& message() const { return message_; }

  private:
    std::string place_, field_, message_;
};

/// The longest scenario (30 days) and the most steps one may have.
inline constexpr DurationNs kMaxScenarioDuration = 30LL * 86400 * kNsPerSec;
inline constexpr std::size_t kMaxScenarioSteps = 1'000'000;

/// Reads a scenario's JSON. `place` names it in errors; relative trace_file names are read
/// from `dir` (empty: the working directory). Throws ScenarioError.
Scenario scenario_from_json(const nlohmann::json& j, const std::string& place,
                            const std::string& dir = "");
/// The inverse: every step with the keys it gives (for both directions at the top level
/// when both directions get the same, else per direction).
nlohmann::json scenario_to_json(const Scenario& s);

/// Reads a per-interval CSV (format above). Throws ScenarioError naming the line.
Scenario scenario_from_csv(std::istream& in, const std::string& place, const std::string& dir = "");

/// Reads a scenario file: CSV when its name ends in ".csv", JSON otherwise. The name
/// defaults to the file's stem. Throws ScenarioError (also when it cannot be read).
Scenario read_scenario_file(const std::string& path);

/// A scenario given by the user as a built-in's name or a file's path: the built-in when
/// `name_or_path` is one's name and no file of that name exists, else the file.
Scenario scenario_by_name_or_path(const std::string& name_or_path);

/// The built-in scenarios (common/scenarios/*.json, compiled in), by name.
struct BuiltinScenario {
    std::string name;  // the file's stem, also the scenario's name
    std::string text;  // the file
};
const std::vector<BuiltinScenario>& builtin_scenarios();
/// The built-in of that name, read; nullopt if there is none.
std::optional<Scenario> builtin_scenario(std::string_view name);
/// "step-response, tunnel, ...": for error messages.
std::string builtin_scenario_names();

/// Compiles `s` against the parameters in force (linkem::compile) and turns a ParamError into a
/// ScenarioError naming `place` and the step (with its line for a CSV's "line N" steps).
ScenarioTracks compile_scenario(const Scenario& s, const LinkConfig& base, unsigned directions,
                                const std::string& place);

}  // namespace linkem
