#include "linkem/link_params_json.hpp"
#include <algorithm>

#include "linkem/stats.hpp"

#include <string>
#include <vector>

#include "linkem/trace_file.hpp"

namespace linkem {

using nlohmann::json;

namespace {

using Field = LinkParamField;

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "'" : ", '") + x + "'";
    return s;
}

}  // namespace

json to_json(const FieldValue& v) {
    return std::visit([](const auto& x) { return json(x); }, v);
}

FieldValue field_value_from_json(const Field& f, const json& v) {
    if (f.type == "path") {
        if (!v.is_string())
            throw ParamError(f.key, "expected a file name (a string; \"\" for none), got " +
                                        std::string(v.type_name()));
        return v.get<std::string>();
    }
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

json to_json(const LinkParams& p) {
    json j = json::object();
    for (const LinkParamField& f : link_param_fields())
        j[f.key] = to_json(f.get(p));
    return j;
}

namespace {
const std::string kQueueLimitBytes = "queue_limit_bytes";

// A loss model's own keys given without `loss_model`, on parameters without loss, choose that
// model: {"loss_probability": 0.02} is 2 % Bernoulli loss, not a key without effect. A
// loss_model given, or a model already chosen, stays. A key's model is the one its field
// applies under (the field table's `applies`); the first such key in the table's order wins.
void imply_loss_model(const json& j, LinkParams& p) {
    if (j.contains("loss_model") || p.loss_model != LossModel::none) return;
    const LinkParamField* model = link_param_field("loss_model");
    for (const LinkParamField& f : link_param_fields())
        if (f.applies.key == model->key && f.applies.values.size() == 1 && j.contains(f.key)) {
            model->set(p, FieldValue(f.applies.values[0]));
            return;
        }
}
}  // namespace

namespace {
// A queue discipline's own parameter (codel_target_us, pie_target_us, ...) given a new value
// while another discipline is in force is refused: it would have no effect, and is most
// likely meant for the discipline the request forgot to choose. (The same value as before is
// accepted, and a whole link's JSON, as get_link and to_json write it, naming every key, is
// read as it is: it describes a link rather than asks for a change.)
void refuse_other_queues_keys(const json& j, const LinkParams& base, const LinkParams& p) {
    const std::vector<LinkParamField>& fields = link_param_fields();
    if (std::all_of(fields.begin(), fields.end(),
                    [&](const LinkParamField& f) { return j.contains(f.key); }))
        return;
    for (const LinkParamField& f : fields) {
        if (f.applies.key != "queue" || !j.contains(f.key) || link_param_applies(f, p)) continue;
        if (f.get(p) == f.get(base)) continue;
        std::string owners;
        for (const std::string& q : f.applies.values)
            owners += (owners.empty() ? "'" : " or '") + q + "'";
        throw ParamError(f.key, "belongs to queue " + owners + ", not '" +
                                    std::string(to_string(p.queue)) +
                                    "'; give queue too, or leave this key out");
    }
}
}  // namespace

LinkParams link_params_from_json(const json& j, const LinkParams& base, TraceFiles traces) {
    LinkParams p = link_param_values_from_json(j, base, traces);
    validate(p);
    return p;
}

LinkParams link_param_values_from_json(const json& j, const LinkParams& base, TraceFiles traces) {
    if (!j.is_object())
        throw ParamError(
            "", "expected a JSON object of link parameters, got " + std::string(j.type_name()));
    LinkParams p = base;
    for (const auto& [given, value] : j.items()) {
        // spacer_limit_bytes is queue_limit_bytes' earlier name, still read.
        const std::string& key = given == "spacer_limit_bytes" ? kQueueLimitBytes : given;
        const LinkParamField* field = link_param_field(key);
        if (!field) {
            std::vector<std::string> names;
            for (const LinkParamField& f : link_param_fields())
                names.push_back(f.key);
            throw ParamError(key, "unknown parameter; known: " + join(names));
        }
        const FieldValue v = field_value_from_json(*field, value);
        if (field->type == "path") {
            // The trace is read here: the model reads no files.
            const std::string& path = std::get<std::string>(v);
            p.trace = path.empty()                      ? TraceRef{}
                      : traces == TraceFiles::name_only ? TraceRef::named(path)
                                                        : TraceRef{read_delivery_trace(path)};
            continue;
        }
        field->set(p, v);
    }
    imply_loss_model(j, p);
    refuse_other_queues_keys(j, base, p);
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

const ParamSchema* LinkSchema::find(std::string_view key) const {
    for (const ParamSchema& p : params)
        if (p.key == key) return &p;
    return nullptr;
}

LinkSchema link_schema() {
    const LinkParams defaults;
    LinkSchema s;
    for (const LinkParamField& f : link_param_fields()) {
        ParamSchema p;
        p.key = f.key;
        p.type = f.type;
        p.default_value = f.get(defaults);
        p.help = f.help;
        if (f.type == "enum") {
            p.values = f.values;
        } else if (f.type != "path") {
            p.unit = f.unit;
            p.min = f.min;
            p.max = f.max;
        }
        s.params.push_back(std::move(p));
    }
    return s;
}

json to_json(const LinkSchema& s) {
    json j = json::object();
    for (const ParamSchema& p : s.params) {
        json d = {{"type", p.type}, {"default", to_json(p.default_value)}, {"help", p.help}};
        if (p.type == "enum") {
            d["values"] = p.values;
        } else if (p.type != "path") {
            d["min"] = p.min;
            d["max"] = p.max;
            d["unit"] = p.unit;
        }
        j[p.key] = std::move(d);
    }
    return j;
}

namespace {

[[noreturn]] void schema_error(const std::string& key, const std::string& what) {
    throw std::invalid_argument(key + ": " + what);
}

ParamSchema param_schema_from_json(const std::string& key, const json& d) {
    if (!d.is_object()) schema_error(key, "expected an object");
    ParamSchema p;
    p.key = key;
    auto text = [&](const char* k, bool required) -> std::string {
        if (!d.contains(k)) {
            if (required) schema_error(key + "." + k, "missing");
            return {};
        }
        if (!d[k].is_string()) schema_error(key + "." + k, "expected a string");
        return d[k].get<std::string>();
    };
    p.type = text("type", true);
    p.help = text("help", false);
    if (p.type == "enum") {
        if (!d.contains("values") || !d["values"].is_array())
            schema_error(key + ".values", "expected a list of names");
        for (const json& v : d["values"]) {
            if (!v.is_string()) schema_error(key + ".values", "expected a list of names");
            p.values.push_back(v.get<std::string>());
        }
    } else if (p.type != "path") {
        p.unit = text("unit", false);
        for (const char* k : {"min", "max"})
            if (!d.contains(k) || !d[k].is_number())
                schema_error(key + "." + k, "expected a number");
        p.min = d["min"].get<double>();
        p.max = d["max"].get<double>();
    }
    if (d.contains("default")) {
        const json& v = d["default"];
        if (v.is_string())
            p.default_value = v.get<std::string>();
        else if (v.is_number_unsigned() && p.type == "integer")
            p.default_value = v.get<std::uint64_t>();
        else if (v.is_number())
            p.default_value = v.get<double>();
        else
            schema_error(key + ".default", "expected a number or a name");
    }
    return p;
}

}  // namespace

LinkSchema link_schema_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("expected an object of link parameters");
    LinkSchema s;
    for (const LinkParamField& f : link_param_fields())
        if (j.contains(f.key)) s.params.push_back(param_schema_from_json(f.key, j[f.key]));
    for (const auto& [key, d] : j.items())
        if (!link_param_field(key)) s.params.push_back(param_schema_from_json(key, d));
    return s;
}

json link_params_schema() {
    return to_json(link_schema());
}

}  // namespace linkem
