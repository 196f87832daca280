// LinkParams as JSON: the config file's and the protocol's link parameters, with the
// unit-suffixed keys of the field table (linkem/link_params.hpp), and the schema clients
// take their slider ranges from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// JSON with unit-suffixed keys (see link_params.hpp). Every field is written.
nlohmann::json to_json(const LinkParams& p);

/// What a trace_file key does when read: `read` reads the trace from its file
/// (linkem/trace_file.hpp; a relative name from the working directory), as linkemd and
/// linkem-sim do; `name_only` keeps its name without reading it (TraceRef::named), as a
/// client does with the link of a linkemd that may run on another machine.
enum class TraceFiles : std::uint8_t { read, name_only };

/// Applies the keys present in `j` on top of `base`, then validates the result. Unknown
/// keys, wrong types and out-of-range values throw ParamError naming the key; `base` is
/// never modified, so a bad update changes nothing.
LinkParams link_params_from_json(const nlohmann::json& j, const LinkParams& base = {},
                                 TraceFiles traces = TraceFiles::read);

/// As link_params_from_json, but checks each key present for its type and range only, not the
/// rules that tie fields together (validate()): for parts of a parameter set, such as the
/// keys a scenario's step gives, whose rules are checked once the whole set is known.
LinkParams link_param_values_from_json(const nlohmann::json& j, const LinkParams& base = {},
                                       TraceFiles traces = TraceFiles::read);

/// A FieldValue as JSON, and the JSON value of a key as its field's type (ParamError saying
/// what was expected when it is not one).
nlohmann::json to_json(const FieldValue& v);
FieldValue field_value_from_json(const LinkParamField& f, const nlohmann::json& v);

/// One link parameter as a client sees it: type, unit, range, default and help.
struct ParamSchema {
    std::string key;
    std::string type;  // number, integer, enum, path
    std::string unit;  // number and integer only
    double min = 0, max = 0;
    FieldValue default_value;
    std::vector<std::string> values;  // enum only
    std::string help;
    bool operator==(const ParamSchema&) const = default;
};

/// Every link parameter's schema: this build's (link_schema()) or a linkemd's (hello).
struct LinkSchema {
    /// In link_param_fields()'s order; keys this build does not know come after, by name.
    std::vector<ParamSchema> params;
    /// The entry of `key`; nullptr if there is none.
    const ParamSchema* find(std::string_view key) const;
    bool operator==(const LinkSchema&) const = default;
};

/// This build's schema, from the field table.
LinkSchema link_schema();
/// {"mean_delay_us": {"type":"number","unit":"us","min":0,"max":1e7,"default":0,"help":..},
///  "strategy": {"type":"enum","values":[...],"default":"correlated","help":..}, ...}
nlohmann::json to_json(const LinkSchema& s);
/// The inverse; throws std::invalid_argument naming the key that is wrong.
LinkSchema link_schema_from_json(const nlohmann::json& j);
/// to_json(link_schema()): the schema of hello and docs/parameters.md.
nlohmann::json link_params_schema();

/// Where a key of one direction's parameters came from (layered_link_keys): the index of its
/// layer, and whether from the layer's own object for the direction (a_to_b / b_to_a) or
/// from its top level (both directions).
struct KeyOrigin {
    std::size_t layer = 0;
    bool own = false;
};

/// The one rule for link parameters given for both directions and for one, wherever they are
/// written (a config or scenario file, a preset's link, set_link's params, a command line's
/// flags): in each layer, top-level link keys apply to both directions and the direction's
/// "a_to_b" / "b_to_a" object overrides them; a later layer overrides an earlier one.
/// Returns the keys of direction `d` (0: a_to_b, 1: b_to_a), for link_params_from_json, and
/// in `origin` where each came from. Top-level keys that are not link parameters are left
/// out (a config file's port_a, lcores, ...); a direction's object is taken whole, so that
/// link_params_from_json names an unknown key in it. Throws ParamError when a direction's
/// entry is not an object.
nlohmann::json layered_link_keys(std::initializer_list<const nlohmann::json*> layers, unsigned d,
                                 std::map<std::string, KeyOrigin>* origin = nullptr);

}  // namespace linkem
