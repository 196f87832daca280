// Fuzz target: the command line's value parsers (linkem/units.hpp) and the link flags' text
// forms (linkem/link_flags.hpp: "--queue-limit 1000p", "--mean-delay 10ms"). The first byte
// picks the parser (and for the link flags the second the flag); the rest is the text.
// Invariants: a duration, rate or size that parses is >= 0 (and finite), its printed form
// parses again; a whole number prints and parses back to itself; a link flag's text gives an
// object of the flag's keys, which link_params_from_json takes or refuses with a ParamError.
#include <cmath>
#include <string>

#include "fuzz_support.hpp"
#include "linkem/link_flags.hpp"
#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/units.hpp"

using linkem::fuzz::text;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    if (size < 2) return 0;
    const std::string t(text(data + 2, size - 2));
    switch (data[0] % 6) {
        case 0:
            if (const auto d = parse_duration(t)) {
                FUZZ_CHECK(*d >= 0, t);
                const std::string s = format_duration(*d);
                const auto again = parse_duration(s);
                FUZZ_CHECK(again && *again >= 0, t + " -> " + s);
            }
            break;
        case 1:
            if (const auto r = parse_rate(t)) {
                FUZZ_CHECK(std::isfinite(*r) && *r >= 0, t);
                const std::string s = format_rate(*r);
                const auto again = parse_rate(s);
                FUZZ_CHECK(again && std::isfinite(*again) && *again >= 0, t + " -> " + s);
            }
            break;
        case 2:
            if (const auto b = parse_bytes(t)) {
                const auto again = parse_bytes(std::to_string(*b));
                FUZZ_CHECK(again && *again == *b, t);
            }
            break;
        case 3:
            if (const auto n = parse_number(t)) FUZZ_CHECK(std::isfinite(*n), t);
            break;
        case 4:
            if (const auto w = parse_whole(t)) {
                const auto again = parse_whole(std::to_string(*w));
                FUZZ_CHECK(again && *again == *w, t);
            }
            break;
        case 5: {
            const auto& flags = link_param_flags();
            const LinkParamFlag& f = flags[data[1] % flags.size()];
            nlohmann::json keys;
            try {
                keys = link_keys_from_text(f.key, t, "--" + f.flag);
            } catch (const FlagError&) {
                break;
            }
            FUZZ_CHECK(keys.is_object() && !keys.empty(), f.key + " " + t);
            for (const auto& [k, v] : keys.items())
                FUZZ_CHECK(link_param_flag(k) != nullptr, k);
            try {
                (void)link_params_from_json(keys, {}, TraceFiles::name_only);
            } catch (const ParamError&) {
            }
            break;
        }
    }
    return 0;
}
