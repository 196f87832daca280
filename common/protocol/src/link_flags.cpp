#include "linkem/link_flags.hpp"

#include <string>
#include <utility>
#include <vector>

namespace linkem {

using nlohmann::json;

json link_param_from_text(std::string_view key, std::string_view text, std::string_view flag) {
    return std::visit([](const auto& x) { return json(x); },
                      link_param_value_from_text(key, text, flag));
}

json link_update_from_flags(const LinkFlagText& text) {
    const std::vector<LinkParamFlag>& flags = link_param_flags();
    json update = json::object();
    for (int layer = 0; layer < 3; ++layer) {
        for (std::size_t i = 0; i < flags.size() && i < text.size(); ++i) {
            const std::string& v = text[i][static_cast<std::size_t>(layer)];
            if (v.empty()) continue;
            json x = link_param_from_text(flags[i].key, v, link_flag_name(flags[i], layer));
            if (layer == 0)
                update[flags[i].key] = std::move(x);
            else
                update[kDirectionKeys[layer - 1]][flags[i].key] = std::move(x);
        }
    }
    return update;
}

}  // namespace linkem
