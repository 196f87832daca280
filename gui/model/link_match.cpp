#include "link_match.hpp"

#include "linkem/link_params_json.hpp"

namespace linkem::gui {

bool sameLink(const LinkConfig& a, const LinkConfig& b, unsigned directions) {
    LinkParams x = a.a_to_b, y = b.a_to_b;
    x.seed = y.seed = 0;
    if (!(x == y)) return false;
    if (directions < 2) return true;
    x = a.b_to_a;
    y = b.b_to_a;
    x.seed = y.seed = 0;
    return x == y;
}

int matchingPreset(const std::vector<Preset>& presets, const LinkConfig& link,
                   unsigned directions) {
    for (std::size_t i = 0; i < presets.size(); ++i)
        if (sameLink(presets[i].link, link, directions)) return static_cast<int>(i);
    return -1;
}

nlohmann::json compareStrategiesUpdate(const LinkParams& a_to_b, const std::string& strategy_a,
                                       const std::string& strategy_b) {
    nlohmann::json one = to_json(a_to_b);
    one.erase("seed");
    nlohmann::json a = one, b = one;
    a["strategy"] = strategy_a;
    b["strategy"] = strategy_b;
    return {{kDirectionKeys[0], a}, {kDirectionKeys[1], b}};
}

}  // namespace linkem::gui
