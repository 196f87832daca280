// LinkParams as JSON: the config file's and the protocol's link parameters, with the
// unit-suffixed keys of the field table (linkem/link_params.hpp), and the schema clients
// take their slider ranges from.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// JSON with unit-suffixed keys (see link_params.hpp). Every field is written.
nlohmann::json to_json(const LinkParams& p);

/// Applies the keys present in `j` on top of `base`, then validates the result. Unknown
/// keys, wrong types and out-of-range values throw ParamError naming the key; `base` is
/// never modified, so a bad update changes nothing.
LinkParams link_params_from_json(const nlohmann::json& j, const LinkParams& base = {});

/// The allowed range, unit and default of every field, for clients (GUI slider ranges)
/// and docs: {"mean_delay_us": {"type":"number","unit":"us","min":0,"max":1e7,
/// "default":0}, "strategy": {"type":"enum","values":[...],"default":"correlated"}, ...}
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
