// The scenario targets' invariant (scenario_json.cpp, scenario_csv.cpp): a scenario that is
// read writes as JSON (scenario_to_json) that reads again, and writing that gives the same
// JSON; it compiles against the default link (both directions) or is refused with a
// ScenarioError.
#pragma once

#include "fuzz_support.hpp"
#include "linkem/link_params.hpp"
#include "linkem/scenario_file.hpp"

namespace linkem::fuzz {

inline void check_scenario(const Scenario& s) {
    const nlohmann::json j1 = scenario_to_json(s);
    Scenario again;
    try {
        again = scenario_from_json(j1, "again.json", kNoDir);
    } catch (const ScenarioError& e) {
        fail(__FILE__, __LINE__, "scenario_to_json's output reads again",
             std::string(e.what()) + " in " + j1.dump());
    }
    const nlohmann::json j2 = scenario_to_json(again);
    FUZZ_CHECK(j1 == j2, j1.dump() + " != " + j2.dump());
    FUZZ_CHECK(s.duration > 0 && s.duration <= kMaxScenarioDuration, j1.dump());
    FUZZ_CHECK(s.steps.size() <= kMaxScenarioSteps, j1.dump());
    try {
        (void)compile_scenario(s, LinkConfig{}, 2, "fuzz");
    } catch (const ScenarioError&) {
    }
}

}  // namespace linkem::fuzz
