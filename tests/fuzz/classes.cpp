// Fuzz target: traffic classes (docs/classes.md): the input is a `classes` list
// (link_classes_from_json, with one and with two directions), one match object
// (class_match_from_json) or, when it is no JSON, an address prefix as a match's a_net /
// b_net holds it (ip_prefix_from_string). Invariants: refusals are ParamErrors (prefixes:
// std::invalid_argument); a class list that is read writes as JSON (classes_to_json) that
// reads back to the same JSON; a prefix prints (to_string) as text that reads back to itself.
#include "fuzz_support.hpp"
#include "linkem/classes_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    using nlohmann::json;
    const std::string_view t = fuzz::text(data, size);
    const auto j = fuzz::parse_json(t);
    if (!j) {
        IpPrefix p;
        try {
            p = ip_prefix_from_string(t);
        } catch (const std::invalid_argument&) {
            return 0;
        }
        const std::string s = to_string(p);
        FUZZ_CHECK(ip_prefix_from_string(s) == p, s);
        return 0;
    }
    if (fuzz::names_a_path(*j)) return 0;
    if (j->is_object()) {
        try {
            const ClassMatch m = class_match_from_json(*j);
            const json j1 = to_json(m);
            FUZZ_CHECK(class_match_from_json(j1) == m, j1.dump());
        } catch (const ParamError&) {
        }
        return 0;
    }
    for (const unsigned dirs : {1u, 2u}) {
        try {
            const auto classes = link_classes_from_json(*j, dirs, TraceFiles::name_only);
            const json j1 = classes_to_json(classes);
            const json j2 =
                classes_to_json(link_classes_from_json(j1, dirs, TraceFiles::name_only));
            FUZZ_CHECK(j1 == j2, j1.dump() + " != " + j2.dump());
        } catch (const ParamError&) {
        }
    }
    return 0;
}
