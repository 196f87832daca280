#include "linkem/protocol.hpp"

#include <cstdio>
#include <random>

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
    return j;
}

LinkConfig link_from_json(const json& j) {
    LinkConfig link;
    link.a_to_b = link_params_from_json(j.at(kDirectionKeys[0]));
    link.b_to_a =
        j.contains(kDirectionKeys[1]) ? link_params_from_json(j[kDirectionKeys[1]]) : link.a_to_b;
    return link;
}

LinkConfig apply_link_update(const json& params, const LinkConfig& current, unsigned directions) {
    if (!params.is_object())
        throw ParamError("params", "expected an object of link parameters, got " +
                                       std::string(params.type_name()));
    for (const auto& [key, value] : params.items()) {
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
                                      ") and 'a_to_b', 'b_to_a' objects of them");
        }
    }
    LinkConfig next = current;
    for (unsigned d = 0; d < directions; ++d) {
        const char* name = kDirectionKeys[d];
        LinkParams& out = next.direction(d);
        try {
            out = link_params_from_json(layered_link_keys({&params}, d), current.direction(d));
        } catch (const ParamError& e) {
            throw ParamError(std::string(name) + (e.field().empty() ? "" : "." + e.field()),
                             e.message());
        }
    }
    if (directions < 2) next.b_to_a = next.a_to_b;
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
