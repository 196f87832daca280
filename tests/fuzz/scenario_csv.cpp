// Fuzz target: scenario files in CSV (linkem/scenario_file.hpp, scenario_from_csv), the
// input being the file; invariants in scenario_check.hpp.
#include <sstream>

#include "scenario_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    const std::string t(fuzz::text(data, size));
    if (t.find('/') != std::string::npos) return 0;  // no trace_file outside kNoDir
    std::istringstream in(t);
    Scenario s;
    try {
        s = scenario_from_csv(in, "fuzz.csv", fuzz::kNoDir);
    } catch (const ScenarioError&) {
        return 0;
    }
    fuzz::check_scenario(s);
    return 0;
}
