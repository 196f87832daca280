#include <nlohmann/json.hpp>

#include "linkem/presets.hpp"

namespace linkem {

namespace detail {
// common/protocol/presets/builtin.json, embedded by presets/embed.cmake at build time.
extern const char kBuiltinPresetsJson[];
}  // namespace detail

const std::vector<Preset>& builtin_presets() {
    static const std::vector<Preset> kPresets =
        presets_from_json(nlohmann::json::parse(detail::kBuiltinPresetsJson));
    return kPresets;
}

}  // namespace linkem
