#include "linkem/classes_json.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "linkem/json_text.hpp"

namespace linkem {

using nlohmann::json;

namespace {
// A value as an error message shows it; bytes that are not UTF-8 (a command line's --match
// text reaches the codec without a JSON parser's check) as U+FFFD instead of dump() throwing.
std::string shown(const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}
}  // namespace

// ---------------------------------------------------------------------------- prefixes

namespace {

const char* kPrefixForm =
    "an IPv4 or IPv6 address with an optional /length, e.g. \"10.0.0.0/8\", \"2001:db8::/32\"";

// A whole decimal number of at most `max`, the whole of `text`.
std::optional<unsigned> decimal(std::string_view text, unsigned max) {
    unsigned v = 0;
    const char* end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || at != end || v > max) return std::nullopt;
    return v;
}

[[noreturn]] void bad_prefix(std::string_view text, const std::string& why) {
    throw std::invalid_argument("'" + std::string(text) + "' " + why);
}

}  // namespace

IpPrefix ip_prefix_from_string(std::string_view text) {
    const std::size_t slash = text.find('/');
    const std::string address(text.substr(0, slash));
    IpPrefix p;
    p.family = address.find(':') != std::string::npos ? IpFamily::ipv6 : IpFamily::ipv4;
    const int af = p.family == IpFamily::ipv6 ? AF_INET6 : AF_INET;
    if (inet_pton(af, address.c_str(), p.address.data()) != 1)
        bad_prefix(text, std::string("is not a prefix; allowed ") + kPrefixForm);
    const unsigned bits = 8 * static_cast<unsigned>(address_bytes(p.family));
    const std::optional<unsigned> length =
        slash == std::string_view::npos ? bits : decimal(text.substr(slash + 1), bits);
    if (!length)
        bad_prefix(text, "has a bad length; allowed /0 .. /" + std::to_string(bits) + " for " +
                             (p.family == IpFamily::ipv6 ? "IPv6" : "IPv4"));
    p.length = static_cast<std::uint8_t>(*length);
    IpPrefix first = p;
    for (std::size_t i = 0; i < first.address.size(); ++i) {
        const std::size_t left = *length > 8 * i ? *length - 8 * i : 0;
        if (left < 8) first.address[i] &= static_cast<std::uint8_t>(0xff00u >> left);
    }
    if (first.address != p.address)
        bad_prefix(text, "has bits set beyond its length; allowed: its first address, " +
                             to_string(first));
    return p;
}

std::string to_string(const IpPrefix& p) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(p.family == IpFamily::ipv6 ? AF_INET6 : AF_INET, p.address.data(), text, sizeof text);
    return std::string(text) + "/" + std::to_string(p.length);
}

// ------------------------------------------------------------------------ match objects

namespace {

std::string quoted_names(const auto& table) {
    std::string s;
    for (const NamedNumber& n : table)
        s += (s.empty() ? "'" : ", '") + std::string(n.name) + "'";
    return s;
}

// A whole number 0 .. max, or nullopt.
std::optional<std::uint64_t> whole(const json& v, std::uint64_t max) {
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
        return std::nullopt;
    const std::uint64_t x = v.get<std::uint64_t>();
    return x <= max ? std::optional<std::uint64_t>(x) : std::nullopt;
}

std::uint64_t number_key(const char* key, const json& v, std::uint64_t max) {
    if (const auto x = whole(v, max)) return *x;
    throw ParamError(key, shown(v) +
                              (v.is_number_integer() ? " is out of range" : " is not allowed") +
                              "; allowed 0 .. " + std::to_string(max));
}

// ethertype and protocol: a name of `table` or a number 0 .. max.
std::uint16_t named_key(const char* key, const json& v, const auto& table, std::uint64_t max) {
    if (v.is_string()) {
        for (const NamedNumber& n : table)
            if (v.get<std::string>() == n.name) return n.value;
    } else if (const auto x = whole(v, max)) {
        return static_cast<std::uint16_t>(*x);
    }
    throw ParamError(key, shown(v) + " is not allowed; allowed " + quoted_names(table) +
                              " or a number 0 .. " + std::to_string(max));
}

IpPrefix prefix_key(const char* key, const json& v) {
    if (!v.is_string()) throw ParamError(key, shown(v) + " is not allowed; allowed " + kPrefixForm);
    try {
        return ip_prefix_from_string(v.get<std::string>());
    } catch (const std::invalid_argument& e) {
        throw ParamError(key, e.what());
    }
}

// A port, as a number or "N", or a range "lo-hi" (lo > hi is validate()'s to refuse).
PortRange port_key(const char* key, const json& v) {
    std::optional<unsigned> lo, hi;
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        const std::size_t dash = s.find('-');
        lo = decimal(std::string_view(s).substr(0, dash), 65535);
        hi = dash == std::string::npos ? lo : decimal(std::string_view(s).substr(dash + 1), 65535);
    } else if (const auto x = whole(v, 65535)) {
        lo = hi = static_cast<unsigned>(*x);
    }
    if (!lo || !hi)
        throw ParamError(key, shown(v) +
                                  " is not allowed; allowed a port 0 .. 65535 or a range \"lo-hi\" "
                                  "of them, e.g. 22 or \"5060-5061\"");
    return {static_cast<std::uint16_t>(*lo), static_cast<std::uint16_t>(*hi)};
}

using MatchReader = void (*)(ClassMatch&, const json&);
const std::map<std::string, MatchReader, std::less<>>& match_readers() {
    static const std::map<std::string, MatchReader, std::less<>> kReaders = {
        {"ethertype",
         [](ClassMatch& m, const json& v) {
             m.ethertype = named_key("ethertype", v, kEthertypeNames, 65535);
         }},
        {"protocol",
         [](ClassMatch& m, const json& v) {
             m.protocol = static_cast<std::uint8_t>(named_key("protocol", v, kProtocolNames, 255));
         }},
        {"a_net", [](ClassMatch& m, const json& v) { m.a_net = prefix_key("a_net", v); }},
        {"b_net", [](ClassMatch& m, const json& v) { m.b_net = prefix_key("b_net", v); }},
        {"a_port", [](ClassMatch& m, const json& v) { m.a_port = port_key("a_port", v); }},
        {"b_port", [](ClassMatch& m, const json& v) { m.b_port = port_key("b_port", v); }},
        {"vlan",
         [](ClassMatch& m, const json& v) {
             m.vlan = static_cast<std::uint16_t>(number_key("vlan", v, 4095));
         }},
        {"dscp",
         [](ClassMatch& m, const json& v) {
             m.dscp = static_cast<std::uint8_t>(number_key("dscp", v, 63));
         }},
    };
    return kReaders;
}

}  // namespace

ClassMatch class_match_from_json(const json& j) {
    if (!j.is_object())
        throw ParamError("", "expected a match object ({\"protocol\": \"udp\", ...}), got " +
                                 std::string(j.type_name()));
    ClassMatch m;
    for (const auto& [key, value] : j.items()) {
        const auto it = match_readers().find(key);
        if (it == match_readers().end())
            throw ParamError(key,
                             "unknown key; allowed 'ethertype', 'protocol', 'a_net', 'b_net', "
                             "'a_port', 'b_port', 'vlan', 'dscp'");
        it->second(m, value);
    }
    return m;
}

json to_json(const ClassMatch& m) {
    json j = json::object();
    auto named = [](std::string_view name, unsigned value) {
        return name.empty() ? json(value) : json(std::string(name));
    };
    auto port = [](const PortRange& r) {
        return r.lo == r.hi ? json(r.lo) : json(std::to_string(r.lo) + "-" + std::to_string(r.hi));
    };
    if (m.ethertype) j["ethertype"] = named(ethertype_name(*m.ethertype), *m.ethertype);
    if (m.protocol) j["protocol"] = named(protocol_name(*m.protocol), *m.protocol);
    if (m.a_net) j["a_net"] = to_string(*m.a_net);
    if (m.b_net) j["b_net"] = to_string(*m.b_net);
    if (m.a_port) j["a_port"] = port(*m.a_port);
    if (m.b_port) j["b_port"] = port(*m.b_port);
    if (m.vlan) j["vlan"] = *m.vlan;
    if (m.dscp) j["dscp"] = *m.dscp;
    return j;
}

// ------------------------------------------------------------------------ match as text

namespace {

constexpr const char* kMatchKeyOrder[] = {"ethertype", "protocol", "a_net", "b_net",
                                          "a_port",    "b_port",   "vlan",  "dscp"};

std::string_view trim(std::string_view s) {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && space(s.back()))
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

const char* kMatchTextForm =
    "allowed key=value pairs separated by ',' (e.g. protocol=udp,b_port=5060-5061; keys "
    "ethertype, protocol, a_net, b_net, a_port, b_port, vlan, dscp; docs/classes.md), 'any' "
    "for every packet, a JSON object, several objects separated by ';'";

json match_object_from_text(std::string_view o, const std::string& field) {
    if (o.empty()) throw ParamError(field, std::string("empty; ") + kMatchTextForm);
    if (o == "*" || o == "any") return json::object();
    if (o.front() == '{') {
        try {
            json j = json::parse(o);
            if (j.is_object()) return j;
        } catch (const json::exception&) {
        }
        throw ParamError(field, "'" + std::string(o) + "' is not a JSON object; " + kMatchTextForm);
    }
    json m = json::object();
    for (std::string_view pair : split(o, ',')) {
        const std::size_t eq = pair.find('=');
        const std::string_view key = trim(pair.substr(0, eq));
        const std::string_view value =
            eq == std::string_view::npos ? std::string_view() : trim(pair.substr(eq + 1));
        if (eq == std::string_view::npos || key.empty() || value.empty())
            throw ParamError(field,
                             "'" + std::string(pair) + "' is not key=value; " + kMatchTextForm);
        if (m.contains(std::string(key)))
            throw ParamError(field + "." + std::string(key),
                             "given twice; allowed once in a match object (several objects "
                             "are separated by ';')");
        std::uint64_t n = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec == std::errc() && end == value.data() + value.size())
            m[std::string(key)] = n;
        else
            m[std::string(key)] = std::string(value);
    }
    return m;
}

std::string match_object_text(const json& j) {
    if (!j.is_object()) return json_value_text(j);
    std::string out;
    auto put = [&out](const std::string& key, const json& value) {
        out += (out.empty() ? "" : ",") + key + "=" + json_value_text(value);
    };
    for (const char* key : kMatchKeyOrder)
        if (j.contains(key)) put(key, j[key]);
    for (auto it = j.begin(); it != j.end(); ++it) {  // keys of a later linkemd, by name
        const std::string& key = it.key();
        if (std::none_of(std::begin(kMatchKeyOrder), std::end(kMatchKeyOrder),
                         [&key](const char* k) { return key == k; }))
            put(key, it.value());
    }
    return out.empty() ? "any" : out;
}

}  // namespace

json class_match_json_from_text(std::string_view text, const std::string& field) {
    try {  // (a command line's bytes: JSON strings must be UTF-8 to be sent or written)
        (void)json(std::string(text)).dump();
    } catch (const json::type_error&) {
        throw ParamError(field,
                         shown(json(std::string(text))) + " is not UTF-8 text; " + kMatchTextForm);
    }
    if (trim(text).empty()) throw ParamError(field, std::string("empty; ") + kMatchTextForm);
    const std::vector<std::string_view> objects =
        trim(text).front() == '{' ? std::vector<std::string_view>{trim(text)} : split(text, ';');
    if (objects.size() == 1) return match_object_from_text(objects[0], field);
    json list = json::array();
    for (std::size_t i = 0; i < objects.size(); ++i)
        list.push_back(match_object_from_text(objects[i], field + "[" + std::to_string(i) + "]"));
    return list;
}

std::string class_match_text(const json& match) {
    if (!match.is_array()) return match_object_text(match);
    std::string out;
    for (const json& m : match)
        out += (out.empty() ? "" : "; ") + match_object_text(m);
    return out;
}

// ------------------------------------------------------------------------------ classes

namespace {

// Where a class is, for its errors: its index and, once read, its name.
struct ClassPlace {
    std::size_t index;
    std::string name;
    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        throw ClassError(index, name, key, message);
    }
};

constexpr const char* kShareLimiter = "link";

bool is_class_key(std::string_view key) {
    return key == "name" || key == "match" || key == "action";
}
bool is_link_key(std::string_view key) {
    return key == "limiter" || direction_of_key(key) >= 0 || link_param_field(key);
}

std::string read_name(const json& j, std::size_t index) {
    ClassPlace at{index, ""};
    if (!j.is_object())
        at.fail("", "expected a class object ({\"name\": ..., \"match\": ...}), got " +
                        std::string(j.type_name()));
    if (!j.contains("name")) at.fail("name", std::string("missing; allowed ") + kClassNameRule);
    const json& v = j["name"];
    if (!v.is_string()) at.fail("name", shown(v) + " is not allowed; allowed " + kClassNameRule);
    at.name = v.get<std::string>();
    if (!valid_class_name(at.name))
        at.fail("name", "'" + at.name + "' is not allowed; allowed " + kClassNameRule);
    return at.name;
}

void check_keys(const json& j, const ClassPlace& at, ClassAction action) {
    for (const auto& [key, value] : j.items()) {
        if (is_class_key(key)) continue;
        if (!is_link_key(key))
            at.fail(key,
                    "unknown key; allowed 'name', 'match', 'action', 'limiter' ('link' to share "
                    "the link's limiter), 'a_to_b', 'b_to_a' and the link parameters");
        if (action != ClassAction::emulate)
            at.fail(key, "action '" + std::string(to_string(action)) +
                             "' takes no link parameters; allowed only with action 'emulate'");
    }
}

ClassAction read_action(const json& j, const ClassPlace& at) {
    if (!j.contains("action")) return ClassAction::emulate;
    const json& v = j["action"];
    const std::optional<ClassAction> a =
        v.is_string() ? class_action_from_string(v.get<std::string>()) : std::nullopt;
    if (!a)
        at.fail("action",
                shown(v) + " is not allowed; allowed 'emulate' (the default), 'pass', 'drop'");
    return *a;
}

std::vector<ClassMatch> read_matches(const json& j, const ClassPlace& at) {
    if (!j.contains("match"))
        at.fail("match", "missing; allowed a match object ({} matches every packet) or a list");
    const json& v = j["match"];
    if (!v.is_object() && !v.is_array())
        at.fail("match",
                "expected a match object or a list of them, got " + std::string(v.type_name()));
    if (v.is_array() && v.size() > kMaxClassMatches)
        at.fail("match", std::to_string(v.size()) + " match objects; allowed at most " +
                             std::to_string(kMaxClassMatches) + " over all classes");
    std::vector<ClassMatch> out;
    for (std::size_t i = 0; i < (v.is_array() ? v.size() : 1); ++i) {
        const std::string key = v.is_array() ? "match[" + std::to_string(i) + "]" : "match";
        try {
            out.push_back(class_match_from_json(v.is_array() ? v[i] : v));
        } catch (const ParamError& e) {
            at.fail(key + (e.field().empty() ? "" : "." + e.field()), e.message());
        }
        validate(out.back(), at.index, at.name, key);
    }
    return out;
}

// A class's limiter keys at its top level and in its direction objects, where it shares the
// link's limiter; and "link" anywhere but the top level.
void check_limiter_keys(const json& j, const ClassPlace& at, bool shares) {
    const std::string why =
        "the class shares the link's limiter ('limiter': 'link'); allowed: its own limiter "
        "keys left out";
    for (const auto& [key, value] : j.items())
        if (shares && key != "limiter" && is_limiter_key(key)) at.fail(key, why);
    for (const char* dir : kDirectionKeys) {
        if (!j.contains(dir) || !j[dir].is_object()) continue;
        for (const auto& [key, value] : j[dir].items()) {
            if (key == "limiter" && value == kShareLimiter)
                at.fail(std::string(dir) + ".limiter",
                        "'link' (share the link's limiter) is allowed at the class's top level "
                        "only, for both directions");
            if (shares && is_limiter_key(key)) at.fail(std::string(dir) + "." + key, why);
        }
    }
}

// The link parameters of an emulate class, from the defaults; `shares` from "limiter".
LinkConfig read_link(json j, const ClassPlace& at, TraceFiles traces, bool& shares) {
    shares = j.contains("limiter") && j["limiter"] == kShareLimiter;
    check_limiter_keys(j, at, shares);
    if (shares) j.erase("limiter");
    LinkConfig link;
    for (unsigned d = 0; d < 2; ++d) {
        std::map<std::string, KeyOrigin> origin;
        try {
            const json merged = layered_link_keys({&j}, d, &origin);
            link.direction(d) = link_params_from_json(merged, {}, traces);
        } catch (const ParamError& e) {
            const auto it = origin.find(e.field());
            const bool top =
                (it != origin.end() && !it->second.own) || e.field() == kDirectionKeys[d];
            const bool limiter = top && e.field() == "limiter";
            at.fail(top ? e.field() : std::string(kDirectionKeys[d]) + "." + e.field(),
                    e.message() + (limiter ? ", or 'link' (share the link's limiter)" : ""));
        }
    }
    return link;
}

}  // namespace

TrafficClass traffic_class_from_json(const json& j, std::size_t index, TraceFiles traces) {
    TrafficClass c;
    c.name = read_name(j, index);
    const ClassPlace at{index, c.name};
    c.action = read_action(j, at);
    check_keys(j, at, c.action);
    c.match = read_matches(j, at);
    if (c.action == ClassAction::emulate) c.link = read_link(j, at, traces, c.shares_link_limiter);
    validate(c, index);
    return c;
}

std::vector<TrafficClass> classes_from_json(const json& j, TraceFiles traces) {
    if (!j.is_array())
        throw ParamError("classes",
                         "expected a list of classes, got " + std::string(j.type_name()));
    std::vector<TrafficClass> classes;
    classes.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i)
        classes.push_back(traffic_class_from_json(j[i], i, traces));
    validate(classes);
    return classes;
}

std::vector<TrafficClass> link_classes_from_json(const json& j, unsigned directions,
                                                 TraceFiles traces) {
    std::vector<TrafficClass> classes = classes_from_json(j, traces);
    if (directions >= 2) return classes;
    for (std::size_t i = 0; i < classes.size(); ++i) {
        if (j[i].contains(kDirectionKeys[1]))
            throw ClassError(i, classes[i].name, kDirectionKeys[1],
                             "there is no port B (single-port mode has only a_to_b); allowed: "
                             "the class's keys at its top level or in a_to_b");
        classes[i].link.b_to_a = classes[i].link.a_to_b;
    }
    return classes;
}

namespace {

// The keys of a class's link parameters that differ from the defaults: top-level where both
// directions agree, in the direction's object where they differ.
void put_link(json& out, const LinkConfig& link) {
    const json defaults = to_json(LinkParams{});
    const json dir[2] = {to_json(link.a_to_b), to_json(link.b_to_a)};
    for (const auto& [key, value] : defaults.items()) {
        if (dir[0][key] == dir[1][key]) {
            if (dir[0][key] != value) out[key] = dir[0][key];
            continue;
        }
        for (int d = 0; d < 2; ++d)
            if (dir[d][key] != value) out[kDirectionKeys[d]][key] = dir[d][key];
    }
}

}  // namespace

json to_json(const TrafficClass& c) {
    json j = {{"name", c.name}, {"action", std::string(to_string(c.action))}};
    if (c.match.size() == 1) {
        j["match"] = to_json(c.match[0]);
    } else {
        j["match"] = json::array();
        for (const ClassMatch& m : c.match)
            j["match"].push_back(to_json(m));
    }
    if (c.action != ClassAction::emulate) return j;
    put_link(j, c.link);
    if (c.shares_link_limiter) j["limiter"] = kShareLimiter;
    return j;
}

json classes_to_json(const std::vector<TrafficClass>& classes) {
    json j = json::array();
    for (const TrafficClass& c : classes)
        j.push_back(to_json(c));
    return j;
}

}  // namespace linkem
