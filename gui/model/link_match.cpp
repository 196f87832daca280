#include "link_match.hpp"

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

proto::LinkUpdate compareStrategiesUpdate(const LinkParams& a_to_b, const std::string& strategy_a,
                                          const std::string& strategy_b) {
    LinkConfig both{a_to_b, a_to_b};
    proto::LinkUpdate u = proto::LinkUpdate::whole(both, 2, false);  // the streams go on
    u.set(0, "strategy", strategy_a);
    u.set(1, "strategy", strategy_b);
    return u;
}

}  // namespace linkem::gui
