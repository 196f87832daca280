#include "linkem/protocol.hpp"

#include <algorithm>
#include <cstdio>
#include <random>

#include "linkem/classes_json.hpp"

namespace linkem::proto {

using nlohmann::json;

namespace {

// Client text may hold invalid UTF-8 (a method name of binary junk): never let dump() throw.
std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string quoted(const json& v) {
    std::string s = dump(v);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ", ") + x;
    return s;
}

[[noreturn]] void refuse(ErrorCode code, std::string message, std::string field = "",
                         json id = nullptr) {
    throw ProtocolError(Error{code, std::move(message), std::move(field)}, std::move(id));
}

}  // namespace

const MethodSpec* find_method(std::string_view name) {
    for (const MethodSpec& m : kMethods)
        if (m.name == name) return &m;
    return nullptr;
}

const std::vector<std::string>& method_names() {
    static const std::vector<std::string> kNames = [] {
        std::vector<std::string> v;
        for (const MethodSpec& m : kMethods)
            v.emplace_back(m.name);
        return v;
    }();
    return kNames;
}

std::string_view to_string(ErrorCode c) {
    switch (c) {
        case ErrorCode::parse_error:
            return "parse_error";
        case ErrorCode::invalid_request:
            return "invalid_request";
        case ErrorCode::unsupported_version:
            return "unsupported_version";
        case ErrorCode::unknown_method:
            return "unknown_method";
        case ErrorCode::invalid_params:
            return "invalid_params";
        case ErrorCode::not_permitted:
            return "not_permitted";
        case ErrorCode::unavailable:
            return "unavailable";
        case ErrorCode::failed:
            return "failed";
    }
    return "failed";
}

std::optional<ErrorCode> error_code_from_string(std::string_view s) {
    for (int c = 0; c <= static_cast<int>(ErrorCode::failed); ++c)
        if (to_string(static_cast<ErrorCode>(c)) == s) return static_cast<ErrorCode>(c);
    return std::nullopt;
}

Request parse_request(std::string_view body) {
    if (body.size() > kMaxRequestBytes)
        refuse(ErrorCode::invalid_request, "request is " + std::to_string(body.size()) +
                                               " bytes; at most " +
                                               std::to_string(kMaxRequestBytes));
    json j;
    try {
        j = json::parse(body);
    } catch (const json::exception& e) {
        refuse(ErrorCode::parse_error, std::string("request is not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        refuse(ErrorCode::invalid_request,
               std::string("a request is a JSON object, got ") + j.type_name());
    // The id first, so that every later error can be answered to it.
    json id = nullptr;
    if (!j.contains("id"))
        refuse(ErrorCode::invalid_request, "'id' is missing; expected an integer or a string",
               "id");
    const json& jid = j["id"];
    if (!(jid.is_number_integer() ||
          (jid.is_string() && jid.get<std::string>().size() <= kMaxIdLength)))
        refuse(ErrorCode::invalid_request,
               "'id' must be an integer or a string of at most " + std::to_string(kMaxIdLength) +
                   " characters, got " + quoted(jid),
               "id");
    id = jid;
    for (const auto& [key, value] : j.items())
        if (key != "v" && key != "id" && key != "method" && key != "params")
            refuse(ErrorCode::invalid_request,
                   "unknown key '" + key + "' in the request; known: v, id, method, params", key,
                   id);
    if (!j.contains("v"))
        refuse(ErrorCode::invalid_request, "'v' is missing; expected the protocol version 1", "v",
               id);
    if (!j["v"].is_number_integer())
        refuse(ErrorCode::invalid_request,
               "'v' must be an integer protocol version, got " + quoted(j["v"]), "v", id);
    if (j["v"].get<std::int64_t>() != kVersion)
        refuse(ErrorCode::unsupported_version,
               "protocol version " + quoted(j["v"]) + " is not supported; supported: 1", "v", id);
    if (!j.contains("method") || !j["method"].is_string())
        refuse(ErrorCode::invalid_request,
               j.contains("method") ? "'method' must be a string, got " + quoted(j["method"])
                                    : "'method' is missing; expected a string",
               "method", id);
    Request r;
    r.id = id;
    r.method = j["method"].get<std::string>();
    if (!find_method(r.method))
        refuse(ErrorCode::unknown_method,
               "unknown method " + quoted(j["method"]) + "; known: " + join(method_names()),
               "method", id);
    if (j.contains("params")) {
        if (!j["params"].is_object())
            refuse(ErrorCode::invalid_request,
                   "'params' must be an object, got " + quoted(j["params"]), "params", id);
        r.params = j["params"];
    }
    return r;
}

std::string encode_request(const json& id, std::string_view method, const json& params) {
    return dump(json{{"v", kVersion}, {"id", id}, {"method", method}, {"params", params}});
}

std::string encode_result(const json& id, const json& result) {
    return dump(json{{"v", kVersion}, {"id", id}, {"result", result}});
}

std::string encode_error(const json& id, const Error& e) {
    json err = {{"code", to_string(e.code)}, {"message", e.message}};
    if (!e.field.empty()) err["field"] = e.field;
    return dump(json{{"v", kVersion}, {"id", id}, {"error", std::move(err)}});
}

Reply parse_reply(std::string_view body) {
    json j;
    try {
        j = json::parse(body);
    } catch (const json::exception& e) {
        refuse(ErrorCode::parse_error, std::string("reply is not valid JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("v") || !j["v"].is_number_integer())
        refuse(ErrorCode::invalid_request, "reply is not an object with a protocol version 'v'");
    Reply r;
    r.id = j.contains("id") ? j["id"] : json(nullptr);
    if (j.contains("error")) {
        const json& e = j["error"];
        if (!e.is_object() || !e.contains("code") || !e["code"].is_string() ||
            !e.contains("message") || !e["message"].is_string())
            refuse(ErrorCode::invalid_request, "reply's 'error' lacks a string code and message");
        Error err;
        err.code = error_code_from_string(e["code"].get<std::string>()).value_or(ErrorCode::failed);
        err.message = e["message"].get<std::string>();
        if (e.contains("field") && e["field"].is_string()) err.field = e["field"];
        r.error = std::move(err);
    } else if (j.contains("result")) {
        r.result = j["result"];
    } else {
        refuse(ErrorCode::invalid_request, "reply has neither 'result' nor 'error'");
    }
    return r;
}

json link_to_json(const LinkConfig& link, unsigned directions) {
    json j = {{kDirectionKeys[0], to_json(link.a_to_b)}};
    if (directions == 2) j[kDirectionKeys[1]] = to_json(link.b_to_a);
    if (!link.classes.empty()) j["classes"] = classes_to_json(link.classes);
    return j;
}

LinkConfig link_from_json(const json& j, TraceFiles traces) {
    LinkConfig link;
    link.a_to_b = link_params_from_json(j.at(kDirectionKeys[0]), {}, traces);
    link.b_to_a = j.contains(kDirectionKeys[1])
                      ? link_params_from_json(j[kDirectionKeys[1]], {}, traces)
                      : link.a_to_b;
    if (j.contains("classes")) link.classes = classes_from_json(j["classes"], traces);
    return link;
}

namespace {

constexpr const char* kClassKey = "class";
constexpr const char* kClassesKey = "classes";

// The names of a link's classes, `default` first: "default, voip, ssh".
std::string class_names(const std::vector<TrafficClass>& classes) {
    std::string s = kDefaultClassName;
    for (const TrafficClass& c : classes)
        s += ", " + c.name;
    return s;
}

// The link keys of set_link's params, as dotted paths ("mean_delay_us", "a_to_b.jitter_us"),
// in the order they are given.
std::vector<std::string> link_key_paths(const json& params) {
    std::vector<std::string> out;
    for (const auto& [key, value] : params.items()) {
        if (direction_of_key(key) >= 0) {
            for (const auto& [k, v] : value.items())
                out.push_back(key + "." + k);
        } else if (link_param_field(key)) {
            out.push_back(key);
        }
    }
    return out;
}

std::string leaf(const std::string& path) {
    const std::size_t dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}

// Applies the link keys of `params` to the parameters of `link`'s directions: top-level keys
// for both, a direction's object for one; a bad key throws ParamError named by direction.
void apply_keys(const json& params, const LinkConfig& from, LinkConfig& to, unsigned directions,
                TraceFiles traces) {
    for (unsigned d = 0; d < directions; ++d) {
        const char* name = kDirectionKeys[d];
        try {
            to.direction(d) =
                link_params_from_json(layered_link_keys({&params}, d), from.direction(d), traces);
        } catch (const ParamError& e) {
            throw ParamError(std::string(name) + (e.field().empty() ? "" : "." + e.field()),
                             e.message());
        }
    }
    if (directions < 2) to.b_to_a = to.a_to_b;
}

// The keys of set_link's `class` update on class `c` (index `i`): refused for a pass or drop
// class, and for a class sharing the link's limiter its limiter keys (`"limiter": "link"`
// alone, which it already does, is allowed). `"limiter": "link"` on a class with a limiter
// of its own makes it share the link's: its limiter keys go back to their defaults.
void apply_class_keys(json params, TrafficClass& c, unsigned directions, TraceFiles traces) {
    const std::vector<std::string> keys = link_key_paths(params);
    if (keys.empty()) return;
    if (c.action != ClassAction::emulate)
        throw ParamError(keys.front(), "class '" + c.name + "' has action '" +
                                           std::string(to_string(c.action)) +
                                           "', which takes no link parameters; allowed only "
                                           "for a class with action 'emulate'");
    const bool to_share = params.contains("limiter") && params["limiter"] == "link";
    for (const char* dir : kDirectionKeys)
        if (params.contains(dir) && params[dir].contains("limiter") &&
            params[dir]["limiter"] == "link")
            throw ParamError(std::string(dir) + ".limiter",
                             "'link' (share the link's limiter) is allowed at the top level "
                             "only, for both directions");
    if (to_share) params.erase("limiter");
    const bool shares = c.shares_link_limiter || to_share;
    if (shares)
        for (const std::string& k : link_key_paths(params))
            if (is_limiter_key(leaf(k)))
                throw ParamError(k, "class '" + c.name +
                                        "' shares the link's limiter ('limiter': 'link'); "
                                        "allowed: its own limiter keys left out");
    LinkConfig link = c.link;
    if (to_share && !c.shares_link_limiter)
        for (unsigned d = 0; d < 2; ++d)
            for (const LinkParamField& f : link_param_fields())
                if (is_limiter_key(f.key)) f.set(link.direction(d), f.get(LinkParams{}));
    apply_keys(params, link, link, directions, traces);
    c.link = std::move(link);
    c.shares_link_limiter = shares;
}

}  // namespace

LinkConfig apply_link_update(const json& params, const LinkConfig& current, unsigned directions,
                             TraceFiles traces) {
    if (!params.is_object())
        throw ParamError("params", "expected an object of link parameters, got " +
                                       std::string(params.type_name()));
    for (const auto& [key, value] : params.items()) {
        if (key == kClassKey) {
            if (!value.is_string())
                throw ParamError(key, "expected a class name (a string), got " + value.dump());
            continue;
        }
        if (key == kClassesKey) continue;  // classes_from_json checks it
        if (direction_of_key(key) >= 0) {
            if (!value.is_object())
                throw ParamError(key, "expected an object of link parameters, got " +
                                          std::string(value.type_name()));
            if (key == kDirectionKeys[1] && directions < 2)
                throw ParamError(key,
                                 "there is no port B (linkemd runs in single-port mode, with "
                                 "a_to_b only)");
            continue;
        }
        if (!link_param_field(key)) {
            std::string known;
            for (const LinkParamField& f : link_param_fields())
                known += (known.empty() ? "" : ", ") + f.key;
            throw ParamError(key, "unknown parameter; known: the link parameters (" + known +
                                      "), 'a_to_b', 'b_to_a' objects of them, 'class' and "
                                      "'classes'");
        }
    }
    LinkConfig next = current;
    if (params.contains(kClassesKey)) next.classes = classes_from_json(params[kClassesKey], traces);
    const std::string cls =
        params.contains(kClassKey) ? params[kClassKey].get<std::string>() : kDefaultClassName;
    if (cls == kDefaultClassName) {
        apply_keys(params, current, next, directions, traces);
        return next;
    }
    auto it = std::find_if(next.classes.begin(), next.classes.end(),
                           [&](const TrafficClass& c) { return c.name == cls; });
    if (it == next.classes.end())
        throw ParamError(
            kClassKey, "no class '" + cls + "'; the link's classes: " + class_names(next.classes));
    apply_class_keys(params, *it, directions, traces);
    validate(*it, static_cast<std::size_t>(it - next.classes.begin()));
    return next;
}

std::string new_instance_id() {
    std::random_device rd;
    const std::uint64_t x = (std::uint64_t{rd()} << 32) ^ rd();
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
    return buf;
}

}  // namespace linkem::proto
