#include "class_rows.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "linkem/classes_json.hpp"
#include "linkem/json_text.hpp"
#include "linkem/link_params_json.hpp"

namespace linkem::gui {

using nlohmann::json;

std::string matchText(const std::vector<ClassMatch>& match) {
    json j = json::array();
    for (const ClassMatch& m : match)
        j.push_back(to_json(m));
    return class_match_text(j.size() == 1 ? j[0] : j);
}

std::string parametersText(const TrafficClass& c) {
    if (c.action != ClassAction::emulate) return {};
    const json j = to_json(c);
    std::string out;
    auto add = [&out](const std::string& k, const json& v) {
        out += (out.empty() ? "" : ", ") + k + "=" + json_value_text(v);
    };
    for (const auto& [k, v] : j.items())
        if (k != "name" && k != "match" && k != "action" && !v.is_object()) add(k, v);
    for (const auto& [k, v] : j.items())
        if (v.is_object() && k != "match")
            for (const auto& [k2, v2] : v.items())
                add(k + "." + k2, v2);
    return out;
}

ClassRow classRow(const TrafficClass& c) {
    return ClassRow{c.name, matchText(c.match), std::string(to_string(c.action)),
                    c.shares_link_limiter, c.link};
}

std::optional<ClassCellError> classCellError(std::string_view field, std::string_view message) {
    constexpr std::string_view kHead = "classes[";
    if (!field.starts_with(kHead)) return std::nullopt;
    field.remove_prefix(kHead.size());
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), index);
    if (ec != std::errc() || end == field.data() + field.size() || *end != ']') return std::nullopt;
    std::string_view key = field.substr(static_cast<std::size_t>(end - field.data()) + 1);
    if (key.starts_with('.')) key.remove_prefix(1);
    std::string column = "parameters";
    if (key.empty() || key == "name")
        column = "name";
    else if (key.starts_with("match"))
        column = "match";
    else if (key == "action")
        column = "action";
    else if (key == "limiter")
        column = "limiter";
    return ClassCellError{index, column,
                          std::string(kHead) + std::to_string(index) + "]" +
                              (key.empty() ? "" : "." + std::string(key)),
                          std::string(message)};
}

json classesJson(const std::vector<ClassRow>& rows) {
    json list = json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ClassRow& r = rows[i];
        json c = json::object();
        if (r.action == "emulate") {
            TrafficClass t;
            t.name = r.name;
            t.link = r.link;
            t.shares_link_limiter = r.shares_link_limiter;
            t.match = {ClassMatch{}};
            c = to_json(t);
        }
        c["name"] = r.name;
        try {
            c["match"] = class_match_json_from_text(r.match);
        } catch (const ParamError& e) {
            throw ClassError(i, r.name, e.field(), e.message());
        }
        c["action"] = r.action;
        list.push_back(std::move(c));
    }
    return list;
}

CheckedClasses checkClassRows(const std::vector<ClassRow>& rows) {
    CheckedClasses out;
    try {
        out.classes = classes_from_json(classesJson(rows), TraceFiles::name_only);
    } catch (const ParamError& e) {
        out.error = classCellError(e.field(), e.message());
        if (!out.error) out.list_error = e.what();
    }
    return out;
}

}  // namespace linkem::gui
