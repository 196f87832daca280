#include "class_rows.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "linkem/classes_json.hpp"
#include "linkem/link_params_json.hpp"

namespace linkem::gui {

using nlohmann::json;

namespace {

constexpr const char* kMatchKeyOrder[] = {"ethertype", "protocol", "a_net", "a_port",
                                          "b_net",     "b_port",   "vlan",  "dscp"};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const std::size_t at = s.find(sep);
        out.push_back(trim(s.substr(0, at)));
        if (at == std::string_view::npos) return out;
        s.remove_prefix(at + 1);
    }
}

std::string valueText(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) {
        const double x = v.get<double>();
        if (x == static_cast<double>(static_cast<std::int64_t>(x)) && std::abs(x) < 1e15)
            return std::to_string(static_cast<std::int64_t>(x));
    }
    return v.dump();
}

}  // namespace

std::string matchText(const std::vector<ClassMatch>& match) {
    std::string out;
    for (const ClassMatch& m : match) {
        if (!out.empty()) out += "; ";
        const json j = to_json(m);
        std::string one;
        for (const char* key : kMatchKeyOrder)
            if (j.contains(key)) {
                if (!one.empty()) one += ',';
                one.append(key).append("=").append(valueText(j[key]));
            }
        out += one.empty() ? "*" : one;
    }
    return out;
}

json matchJsonFromText(std::string_view text) {
    const std::vector<std::string_view> objects = split(text, ';');
    json list = json::array();
    for (std::size_t i = 0; i < objects.size(); ++i) {
        const std::string field = objects.size() > 1 ? "match[" + std::to_string(i) + "]" : "match";
        const std::string_view o = objects[i];
        json m = json::object();
        if (o.empty())
            throw ParamError(field,
                             std::string(objects.size() > 1 ? "an empty match object" : "empty") +
                                 "; allowed key=value pairs separated by ',' (e.g. "
                                 "protocol=udp,b_port=5060-5061), '*' for every packet, "
                                 "several objects separated by ';'");
        if (o != "*") {
            for (std::string_view pair : split(o, ',')) {
                const std::size_t eq = pair.find('=');
                const std::string_view key = trim(pair.substr(0, eq));
                if (eq == std::string_view::npos || key.empty() ||
                    trim(pair.substr(eq + 1)).empty())
                    throw ParamError(field, "'" + std::string(pair) +
                                                "' is not key=value; allowed e.g. protocol=udp, "
                                                "b_port=5060-5061, a_net=10.0.0.0/8");
                const std::string_view value = trim(pair.substr(eq + 1));
                if (m.contains(std::string(key)))
                    throw ParamError(field + "." + std::string(key),
                                     "given twice; allowed once in a match object (several "
                                     "objects are separated by ';')");
                std::uint64_t n = 0;
                const auto [end, ec] =
                    std::from_chars(value.data(), value.data() + value.size(), n);
                if (ec == std::errc() && end == value.data() + value.size())
                    m[std::string(key)] = n;
                else
                    m[std::string(key)] = std::string(value);
            }
        }
        list.push_back(std::move(m));
    }
    return list.size() == 1 ? list[0] : list;
}

std::string parametersText(const TrafficClass& c) {
    if (c.action != ClassAction::emulate) return {};
    const json j = to_json(c);
    std::string out;
    auto add = [&out](const std::string& k, const json& v) {
        out += (out.empty() ? "" : ", ") + k + "=" + valueText(v);
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
            c["match"] = matchJsonFromText(r.match);
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
