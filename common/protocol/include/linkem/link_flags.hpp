// The link flags of a command line as JSON: each flag's text converted into its field's
// JSON value, and the flags given gathered into the partial update that a config file and
// the protocol's set_link take. The flags themselves (names, layers, the text each takes)
// are the field table's (linkem/link_params.hpp); CLI11 registration is
// linkem/cli_link_flags.hpp (linkem::cli).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// link_param_value_from_text (linkem/link_params.hpp) as the field's JSON value:
/// "10ms" -> 10000 for mean_delay_us. Throws FlagError as it does.
nlohmann::json link_param_from_text(std::string_view key, std::string_view text,
                                    std::string_view flag);

/// A flag's text as the JSON keys it sets: {key: link_param_from_text(...)}, except for the
/// queue limit, whose flag takes bytes or packets: --queue-limit 1MiB sets
/// {"queue_limit_bytes": 1048576, "queue_limit_packets": 0}, --queue-limit 1000p
/// {"queue_limit_packets": 1000}. Throws FlagError as link_param_from_text does.
nlohmann::json link_keys_from_text(std::string_view key, std::string_view text,
                                   std::string_view flag);

/// The link flags given, converted with link_param_from_text into the partial update of the
/// config file and of the protocol's set_link: keys at the top level for both directions,
/// "a_to_b" / "b_to_a" objects for one, e.g. {"mean_delay_us": 20000, "b_to_a":
/// {"loss_probability": 0.01}}. Only the flags given appear. Throws FlagError naming the flag
/// as written (--b-to-a-loss-probability). The rules that tie fields together are
/// link_params_from_json's, once the update is merged.
nlohmann::json link_update_from_flags(const LinkFlagText& text);

}  // namespace linkem
