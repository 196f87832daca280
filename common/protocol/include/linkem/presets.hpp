// Link presets and link files.
//
// A preset is a named, sourced LinkConfig: "LTE", "GEO satellite", ... per direction where
// real links are asymmetric. The built-in ones are common/protocol/presets/builtin.json,
// compiled into linkem::builtin_presets; users keep their own in a file of the same format.
// A link file is linkemd's --config file (the same file works with `linkemd --config`):
// the GUI opens and saves it, linkemctl can apply one. (A scenario, parameters that change
// over time, is scenario_file.hpp's.)
//
// Preset file format (JSON):
//   {"presets": [
//      {"id": "lte", "name": "LTE (4G)", "category": "Mobile",
//       "description": "one line for the GUI's tooltip",
//       "source": "where the figures come from (a tool's table, a paper, physics)",
//       "link": {<link parameters for both directions, as in a config file>,
//                "a_to_b": {<overrides for A->B>}, "b_to_a": {<overrides for B->A>},
//                "classes": [<traffic classes, optional: linkem/classes_json.hpp>]}},
//      ...]}
// Every preset is checked with link_params_from_json when loaded.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

struct Preset {
    std::string id;           // stable, [a-z0-9_-]+: "lte", "geo_satellite"
    std::string name;         // shown: "LTE (4G)"
    std::string category;     // "Wired", "Wi-Fi", "Mobile", "Satellite", "Long haul", "User"
    std::string description;  // one line
    std::string source;       // where the numbers come from
    LinkConfig link;          // both directions (on top of the LinkParams defaults)
    bool asymmetric() const { return !(link.a_to_b == link.b_to_a); }
};

/// The built-in presets (common/protocol/presets/builtin.json, compiled in), in file order.
/// Defined in linkem::builtin_presets, which only the programs that offer them link.
const std::vector<Preset>& builtin_presets();

/// Reads a preset file's JSON. Throws std::invalid_argument naming the preset and key at
/// fault: "presets[3] (lte): link.a_to_b.jitter_us: -1 is out of range; allowed ...".
std::vector<Preset> presets_from_json(const nlohmann::json& file);
/// The inverse (writes every link key per direction: a_to_b and b_to_a objects).
nlohmann::json presets_to_json(const std::vector<Preset>& presets);

/// A link file's JSON (linkemd's --config format): the link parameters of both
/// directions as "a_to_b"/"b_to_a" objects (every key; b_to_a only with two directions)
/// and the link's "classes" (when it has some), on top of `base`'s other keys (port_a,
/// lcores, ... are kept; top-level link keys and "classes" of `base` are removed, since the
/// link now says everything).
nlohmann::json link_file_to_json(const LinkConfig& link, unsigned directions,
                                 const nlohmann::json& base);
/// The link parameters of a link (config) file: top-level link keys for both
/// directions, a_to_b/b_to_a objects for one, on top of the defaults, and its "classes";
/// keys that are not link parameters (port_a, lcores, burst, ...) are ignored. Throws
/// ParamError with the dotted field ("b_to_a.jitter_us", "classes[1].match.b_port") when a
/// link parameter or class is wrong.
LinkConfig link_file_from_json(const nlohmann::json& file, unsigned directions);

}  // namespace linkem
