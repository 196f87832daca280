// Fuzz target: a traffic class's match as text (class_match_json_from_text), as linkemctl's
// --match and linkem-gui's Classes table take it (docs/classes.md, "A match as text").
// Invariants: refusals are ParamErrors; a match whose objects the codec reads
// (class_match_from_json) prints (class_match_text) as text that reads back to the same
// match.
#include <vector>

#include "fuzz_support.hpp"
#include "linkem/classes_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    using nlohmann::json;
    const std::string_view t = fuzz::text(data, size);
    json j;
    try {
        j = class_match_json_from_text(t);
    } catch (const ParamError&) {
        return 0;
    }
    FUZZ_CHECK(j.is_object() || (j.is_array() && j.size() >= 2), j.dump());
    auto read = [](const json& v) {
        std::vector<ClassMatch> m;
        for (const json& o : v.is_array() ? v : json::array({v}))
            m.push_back(class_match_from_json(o));
        return m;
    };
    std::vector<ClassMatch> m;
    try {
        m = read(j);
    } catch (const ParamError&) {
        return 0;
    }
    json normal = json::array();
    for (const ClassMatch& o : m)
        normal.push_back(to_json(o));
    const std::string text = class_match_text(normal.size() == 1 ? normal[0] : normal);
    std::vector<ClassMatch> back;
    try {
        back = read(class_match_json_from_text(text));
    } catch (const ParamError& e) {
        FUZZ_CHECK(false, text + ": " + e.field() + ": " + e.message());
    }
    FUZZ_CHECK(back == m, text);
    return 0;
}
