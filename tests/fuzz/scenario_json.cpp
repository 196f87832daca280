// Fuzz target: scenario files in JSON (linkem/scenario_file.hpp, scenario_from_json), the
// input being the file; invariants in scenario_check.hpp.
#include "scenario_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    const auto j = fuzz::parse_json(fuzz::text(data, size));
    if (!j || fuzz::names_a_path(*j)) return 0;
    Scenario s;
    try {
        s = scenario_from_json(*j, "fuzz.json", fuzz::kNoDir);
    } catch (const ScenarioError&) {
        return 0;
    }
    fuzz::check_scenario(s);
    return 0;
}
