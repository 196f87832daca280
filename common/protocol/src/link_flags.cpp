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

json link_keys_from_text(std::string_view key, std::string_view text, std::string_view flag) {
    json out = json::object();
    if (key == "queue_limit_bytes" && text.size() > 1 && text.back() == 'p') {
        const std::string_view n = text.substr(0, text.size() - 1);
        try {
            out["queue_limit_packets"] = link_param_from_text("queue_limit_packets", n, flag);
        } catch (const FlagError& e) {
            throw FlagError(std::string(flag), e.field(),
                            "'" + std::string(text) +
                                "' is not a queue limit: bytes with an optional unit (1MiB) or "
                                "packets (1000p), at least 1 packet; " +
                                e.message());
        }
        if (out["queue_limit_packets"] == 0)
            throw FlagError(std::string(flag), "queue_limit_packets",
                            "'" + std::string(text) +
                                "': a limit in packets is at least 1p; allowed bytes with an "
                                "optional unit (1MiB) or packets (1000p)");
        return out;
    }
    try {
        out[std::string(key)] = link_param_from_text(key, text, flag);
    } catch (const FlagError& e) {
        if (key != "queue_limit_bytes") throw;
        // The flag takes packets too: what is allowed says so (before the key, " [...]").
        std::string m = e.message();
        const std::size_t key_at = m.ends_with(']') ? m.rfind(" [") : std::string::npos;
        m.insert(key_at == std::string::npos ? m.size() : key_at, ", or packets (1000p)");
        throw FlagError(std::string(flag), e.field(), m);
    }
    if (key == "queue_limit_bytes") out["queue_limit_packets"] = 0;
    return out;
}

json link_update_from_flags(const LinkFlagText& text) {
    const std::vector<LinkParamFlag>& flags = link_param_flags();
    json update = json::object();
    for (int layer = 0; layer < 3; ++layer) {
        for (std::size_t i = 0; i < flags.size() && i < text.size(); ++i) {
            const std::string& v = text[i][static_cast<std::size_t>(layer)];
            if (v.empty()) continue;
            const json x = link_keys_from_text(flags[i].key, v, link_flag_name(flags[i], layer));
            for (const auto& [key, value] : x.items()) {
                if (layer == 0)
                    update[key] = value;
                else
                    update[kDirectionKeys[layer - 1]][key] = value;
            }
        }
    }
    return update;
}

}  // namespace linkem
