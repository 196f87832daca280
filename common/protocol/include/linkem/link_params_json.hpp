// LinkParams as JSON: the config file's and the protocol's link parameters, with the
// unit-suffixed keys of the field table (linkem/link_params.hpp), and the schema clients
// take their slider ranges from.
#pragma once

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// JSON with unit-suffixed keys (see link_params.hpp). Every field is written.
nlohmann::json to_json(const LinkParams& p);

/// Applies the keys present in `j` on top of `base`, then validates the result. Unknown
/// keys, wrong types and out-of-range values throw ParamError naming the key; `base` is
/// never modified, so a bad update changes nothing. A trace_file is read from its file
/// (linkem/trace_file.hpp; a relative name from the working directory).
LinkParams link_params_from_json(const nlohmann::json& j, const LinkParams& base = {});

/// As link_params_from_json, but checks each key present for its type and range only, not the
/// rules that tie fields together (validate()): for parts of a parameter set, such as the
/// keys a scenario's step gives, whose rules are checked once the whole set is known.
LinkParams link_param_values_from_json(const nlohmann::json& j, const LinkParams& base = {});

/// The allowed range, unit and default of every field, for clients (GUI slider ranges)
/// and docs: {"mean_delay_us": {"type":"number","unit":"us","min":0,"max":1e7,
/// "default":0}, "strategy": {"type":"enum","values":[...],"default":"correlated"}, ...}
nlohmann::json link_params_schema();

}  // namespace linkem
