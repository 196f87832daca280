#include "linkem/presets.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "linkem/classes_json.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/stats.hpp"

namespace linkem {

namespace {

using nlohmann::json;

bool is_link_key(std::string_view key) {
    return link_param_field(key) != nullptr;
}
bool is_dir_key(std::string_view key) {
    return key == kDirectionKeys[0] || key == kDirectionKeys[1];
}
constexpr const char* kClassesKey = "classes";

constexpr std::array<std::string_view, 6> kPresetKeys = {"id",          "name",   "category",
                                                         "description", "source", "link"};
constexpr std::array<std::string_view, 2> kFileKeys = {"about", "presets"};

template <class Names>
std::string quoted_list(const Names& names) {
    std::string s;
    for (std::string_view n : names)
        s += (s.empty() ? "'" : ", '") + std::string(n) + "'";
    return s;
}

// The link parameters of an object that holds them as a config file does: top-level link
// keys for both directions, "a_to_b"/"b_to_a" objects for one. With `strict`, any other
// key is an error (a preset's "link"); otherwise other keys are skipped (a link file's
// port_a, lcores, ...). Throws ParamError naming the key: "jitter_us" for a top-level one,
// "b_to_a.jitter_us" for one of a direction's object (or a rule broken only there).
LinkConfig read_link(const json& obj, unsigned directions, bool strict) {
    if (directions != 1 && directions != 2)
        throw std::invalid_argument("directions must be 1 or 2, got " + std::to_string(directions));
    if (!obj.is_object())
        throw ParamError(
            "", "expected a JSON object of link parameters, got " + std::string(obj.type_name()));
    for (const auto& [key, value] : obj.items()) {
        if (is_dir_key(key)) {
            if (!value.is_object())
                throw ParamError(key, "expected an object of link parameters, got " +
                                          std::string(value.type_name()));
            if (key == kDirectionKeys[1] && directions == 1)
                throw ParamError(key,
                                 "there is no port B (single-port mode has only a_to_b); "
                                 "remove b_to_a");
        } else if (strict && !is_link_key(key) && key != kClassesKey) {
            throw ParamError(key,
                             "unknown key; allowed: the link parameters (as in a config "
                             "file, for both directions), 'a_to_b', 'b_to_a' and 'classes'");
        }
    }
    LinkConfig link;
    for (unsigned d = 0; d < directions; ++d) {
        std::map<std::string, KeyOrigin> origin;
        const json merged = layered_link_keys({&obj}, d, &origin);
        try {
            link.direction(d) = link_params_from_json(merged);
        } catch (const ParamError& e) {
            // A key given at the top level and not overridden is the top level's fault;
            // anything else (the direction's own key, a rule broken by the mix) the
            // direction's.
            const auto it = origin.find(e.field());
            const bool top = it != origin.end() && !it->second.own;
            throw ParamError(top ? e.field() : std::string(kDirectionKeys[d]) + "." + e.field(),
                             e.message());
        }
    }
    if (directions == 1) link.b_to_a = link.a_to_b;
    // Its traffic classes: a ClassError names "classes[1].match.b_port".
    if (obj.contains(kClassesKey))
        link.classes = link_classes_from_json(obj[kClassesKey], directions);
    return link;
}

// "classes" beside the link's parameters, when it has some.
void put_classes(json& out, const LinkConfig& link) {
    if (!link.classes.empty()) out[kClassesKey] = classes_to_json(link.classes);
}

bool valid_id(const std::string& id) {
    if (id.empty()) return false;
    for (char c : id)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    return true;
}

// One preset of a preset file; `where` is "presets[3]" and grows the id once known.
Preset read_preset(const json& j, std::string& where) {
    if (!j.is_object())
        throw std::invalid_argument(where + ": expected an object, got " +
                                    std::string(j.type_name()));
    Preset p;
    auto text = [&](const char* key, bool required, std::string& out) {
        if (!j.contains(key)) {
            if (required) throw std::invalid_argument(where + ": " + key + ": required");
            return;
        }
        const json& v = j[key];
        if (!v.is_string() || (required && v.get<std::string>().empty()))
            throw std::invalid_argument(where + ": " + key + ": expected a" +
                                        (required ? " non-empty" : "") + " string, got " +
                                        (v.is_string() ? "\"\"" : v.dump()));
        out = v.get<std::string>();
    };
    text("id", true, p.id);
    if (!valid_id(p.id))
        throw std::invalid_argument(where + ": id: '" + p.id +
                                    "' is not allowed; allowed: a-z, 0-9, '_' and '-'");
    where += " (" + p.id + ")";
    for (const auto& item : j.items())
        if (std::find(kPresetKeys.begin(), kPresetKeys.end(), item.key()) == kPresetKeys.end())
            throw std::invalid_argument(where + ": " + item.key() + ": unknown key; allowed " +
                                        quoted_list(kPresetKeys));
    text("name", true, p.name);
    p.category = "User";
    text("category", false, p.category);
    if (p.category.empty())
        throw std::invalid_argument(where + ": category: expected a non-empty string");
    text("description", false, p.description);
    text("source", false, p.source);
    if (!j.contains("link"))
        throw std::invalid_argument(where + ": link: required, an object of link parameters");
    try {
        p.link = read_link(j["link"], 2, true);
    } catch (const ParamError& e) {
        throw std::invalid_argument(where + ": link" + (e.field().empty() ? "" : "." + e.field()) +
                                    ": " + e.message());
    }
    return p;
}

}  // namespace

std::vector<Preset> presets_from_json(const json& file) {
    if (!file.is_object())
        throw std::invalid_argument("expected a JSON object {\"presets\": [...]}, got " +
                                    std::string(file.type_name()));
    for (const auto& [key, value] : file.items()) {
        if (key == "presets") continue;
        if (key == "about") {
            if (!value.is_string())
                throw std::invalid_argument("about: expected a string, got " + value.dump());
            continue;
        }
        throw std::invalid_argument(key + ": unknown key; allowed " + quoted_list(kFileKeys));
    }
    if (!file.contains("presets") || !file["presets"].is_array())
        throw std::invalid_argument("presets: required, an array of presets");
    std::vector<Preset> out;
    std::vector<std::string> where_of;
    for (std::size_t i = 0; i < file["presets"].size(); ++i) {
        std::string where = "presets[" + std::to_string(i) + "]";
        Preset p = read_preset(file["presets"][i], where);
        for (std::size_t k = 0; k < out.size(); ++k)
            if (out[k].id == p.id)
                throw std::invalid_argument(where + ": id: '" + p.id + "' is taken by presets[" +
                                            std::to_string(k) + "]; ids must be unique");
        out.push_back(std::move(p));
    }
    return out;
}

json presets_to_json(const std::vector<Preset>& presets) {
    json list = json::array();
    for (const Preset& p : presets)
        list.push_back({{"id", p.id},
                        {"name", p.name},
                        {"category", p.category},
                        {"description", p.description},
                        {"source", p.source},
                        {"link", [&p] {
                             json link = {{kDirectionKeys[0], to_json(p.link.a_to_b)},
                                          {kDirectionKeys[1], to_json(p.link.b_to_a)}};
                             put_classes(link, p.link);
                             return link;
                         }()}});
    return {{"presets", list}};
}

json link_file_to_json(const LinkConfig& link, unsigned directions, const json& base) {
    if (directions != 1 && directions != 2)
        throw std::invalid_argument("link_file_to_json: directions must be 1 or 2, got " +
                                    std::to_string(directions));
    if (!base.is_null() && !base.is_object())
        throw std::invalid_argument("link_file_to_json: base must be a JSON object, got " +
                                    std::string(base.type_name()));
    json out = json::object();
    if (base.is_object())
        for (const auto& [key, value] : base.items())
            if (!is_link_key(key) && !is_dir_key(key) && key != kClassesKey) out[key] = value;
    out[kDirectionKeys[0]] = to_json(link.a_to_b);
    if (directions == 2) out[kDirectionKeys[1]] = to_json(link.b_to_a);
    put_classes(out, link);
    return out;
}

LinkConfig link_file_from_json(const json& file, unsigned directions) {
    return read_link(file, directions, false);
}

}  // namespace linkem
