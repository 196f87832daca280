// Fuzz target: capture's settings (linkem/capture_json.hpp, linkem/capture_flags.hpp): as
// JSON (capture_start's params, capture_settings_from_json), or, when the input is no JSON,
// as a command line's capture flags: line i is the text of capture_flags()[i] (an empty
// line: not given), converted with capture_params_from_flags and then read as JSON.
// Invariants: refusals are ParamErrors (FlagErrors for the flags' form); settings that are
// read write as JSON that reads back to the same settings.
#include <sstream>

#include "fuzz_support.hpp"
#include "linkem/capture_flags.hpp"
#include "linkem/capture_json.hpp"

namespace {

void check_settings(const nlohmann::json& params) {
    using namespace linkem;
    capture::Settings s;
    try {
        s = capture_settings_from_json(params);
    } catch (const ParamError&) {
        return;
    }
    const nlohmann::json j1 = capture_settings_to_json(s);
    capture::Settings again;
    try {
        again = capture_settings_from_json(j1);
    } catch (const ParamError& e) {
        linkem::fuzz::fail(__FILE__, __LINE__, "written settings read again",
                           std::string(e.what()) + ": " + j1.dump());
    }
    FUZZ_CHECK(again == s, j1.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    const std::string_view t = fuzz::text(data, size);
    if (const auto j = fuzz::parse_json(t)) {
        check_settings(*j);
        return 0;
    }
    CaptureFlagText flags(capture_flags().size());
    std::istringstream in{std::string(t)};
    std::string line;
    for (std::size_t i = 0; i < flags.size() && std::getline(in, line); ++i)
        flags[i] = line;
    nlohmann::json params;
    try {
        params = capture_params_from_flags("fuzz.pcapng", flags, "--capture-");
    } catch (const FlagError&) {
        return 0;
    }
    FUZZ_CHECK(params.is_object() && params.value("file", "") == "fuzz.pcapng", params.dump());
    check_settings(params);
    return 0;
}
