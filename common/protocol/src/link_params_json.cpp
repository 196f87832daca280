#include "linkem/link_params_json.hpp"

#include "linkem/stats.hpp"

#include <string>
#include <vector>

namespace linkem {

using nlohmann::json;

namespace {

json value_json(const FieldValue& v) {
    return std::visit([](const auto& x) { return json(x); }, v);
}

// The JSON value of `v` as the field's type, or ParamError saying what was expected.
FieldValue field_value(const LinkParamField& f, const json& v) {
    if (f.type == "enum") {
        if (!v.is_string())
            throw ParamError(f.key, v.dump() + " is not allowed; allowed " + f.allowed());
        return v.get<std::string>();
    }
    if (f.type == "integer") {
        if (!v.is_number_integer())
            throw ParamError(f.key, "expected a whole number in " + f.allowed() + ", got " +
                                        (v.is_number() ? v.dump() : std::string(v.type_name())));
        // Parsed text stores non-negative integers as unsigned; JSON built in C++ from an int
        // holds them signed.
        if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)
            throw ParamError(f.key, v.dump() + " is out of range; allowed " + f.allowed());
        return v.get<std::uint64_t>();
    }
    if (!v.is_number())
        throw ParamError(f.key, "expected a number" + (f.unit.empty() ? "" : " (" + f.unit + ")") +
                                    ", got " + std::string(v.type_name()));
    return v.get<double>();
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "'" : ", '") + x + "'";
    return s;
}

}  // namespace

json to_json(const LinkParams& p) {
    json j = json::object();
    for (const LinkParamField& f : link_param_fields())
        j[f.key] = value_json(f.get(p));
    return j;
}

LinkParams link_params_from_json(const json& j, const LinkParams& base) {
    if (!j.is_object())
        throw ParamError(
            "", "expected a JSON object of link parameters, got " + std::string(j.type_name()));
    LinkParams p = base;
    for (const auto& [key, value] : j.items()) {
        const LinkParamField* field = link_param_field(key);
        if (!field) {
            std::vector<std::string> names;
            for (const LinkParamField& f : link_param_fields())
                names.push_back(f.key);
            throw ParamError(key, "unknown parameter; known: " + join(names));
        }
        field->set(p, field_value(*field, value));
    }
    validate(p);
    return p;
}

json layered_link_keys(std::initializer_list<const json*> layers, unsigned d,
                       std::map<std::string, KeyOrigin>* origin) {
    json merged = json::object();
    std::size_t layer = 0;
    for (const json* l : layers) {
        if (l->is_object()) {
            for (const auto& [key, value] : l->items()) {
                if (!link_param_field(key)) continue;
                merged[key] = value;
                if (origin) (*origin)[key] = KeyOrigin{layer, false};
            }
            if (l->contains(kDirectionKeys[d])) {
                const json& own = (*l)[kDirectionKeys[d]];
                if (!own.is_object())
                    throw ParamError(kDirectionKeys[d],
                                     "expected an object of link parameters, got " +
                                         std::string(own.type_name()));
                for (const auto& [key, value] : own.items()) {
                    merged[key] = value;
                    if (origin) (*origin)[key] = KeyOrigin{layer, true};
                }
            }
        }
        ++layer;
    }
    return merged;
}

json link_params_schema() {
    const LinkParams defaults;
    json j = json::object();
    for (const LinkParamField& f : link_param_fields()) {
        json d = {{"type", f.type}, {"default", value_json(f.get(defaults))}, {"help", f.help}};
        if (f.type == "enum") {
            d["values"] = f.values;
        } else {
            d["min"] = f.min;
            d["max"] = f.max;
            d["unit"] = f.unit;
        }
        j[f.key] = d;
    }
    return j;
}

}  // namespace linkem
