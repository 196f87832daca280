#include "linkem/messages.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "json_read.hpp"
#include "linkem/capture_json.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/telemetry_json.hpp"
#include "linkem/traffic_json.hpp"

namespace linkem::proto {

using json_read::Reader;
using nlohmann::json;

namespace {

/// ParamError and ScenarioError, as a decoder's std::invalid_argument under `where`.
template <class F>
auto rethrow_under(const std::string& where, F&& f) {
    try {
        return f();
    } catch (const ParamError& e) {
        throw std::invalid_argument(where + (e.field().empty() ? "" : "." + e.field()) + ": " +
                                    e.message());
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(where + "." + e.what());
    }
}

std::vector<std::string> names(const Reader& r, const char* key) {
    std::vector<std::string> out;
    const json& v = r.need(key);
    if (!v.is_array()) r.fail(key, "expected a list of names");
    for (const json& x : v) {
        if (!x.is_string()) r.fail(key, "expected a list of names");
        out.push_back(x.get<std::string>());
    }
    return out;
}

unsigned directions_of(const json& j) {
    return j.contains(kDirectionKeys[1]) ? 2 : 1;
}

void put(json& j, const char* key, const auto& v) {
    if (v) j[key] = *v;
}

/// A `classes` list, its ClassError (field "classes[1].match.b_port") as the decoders'
/// std::invalid_argument.
std::vector<TrafficClass> read_classes(const json& v, unsigned directions, TraceFiles traces) {
    try {
        return link_classes_from_json(v, directions, traces);
    } catch (const ParamError& e) {
        throw std::invalid_argument(e.field() + ": " + e.message());
    }
}

}  // namespace

// --------------------------------------------------------------------------------- hello
json to_json(const Empty&) {
    return json::object();
}
void decode(const json& j, Empty&) {
    Reader r(j, "");
}

json to_json(const HelloParams& p) {
    json j = json::object();
    if (!p.client.empty()) j["client"] = p.client;
    return j;
}
void decode(const json& j, HelloParams& out) {
    const Reader r(j, "params.");
    out.client = r.opt_str("client").value_or("");
    if (out.client.size() > kMaxClientName)
        r.fail("client", "at most " + std::to_string(kMaxClientName) + " characters");
}

namespace {

// A capability that a method needs is named by that method (save_config, load_config,
// shutdown); the others by what they offer.
const std::string kCapSave(name(Method::save_config)), kCapLoad(name(Method::load_config)),
    kCapShutdown(name(Method::shutdown));

json capabilities_json(const Capabilities& c) {
    return {{kCapSave, c.save_config}, {kCapLoad, c.load_config}, {kCapShutdown, c.shutdown},
            {"traffic", c.traffic},    {"scenario", c.scenario},  {"classes", c.classes},
            {"capture", c.capture}};
}

}  // namespace

json to_json(const Hello& h) {
    json dirs = json::array();
    for (unsigned d = 0; d < h.directions && d < 2; ++d)
        dirs.push_back(kDirectionKeys[d]);
    json ports = json::array();
    for (const PortInfo& p : h.ports)
        ports.push_back({{"port", p.port},
                         {"device", p.device},
                         {"link_up", p.link_up},
                         {"speed_mbps", p.speed_mbps}});
    const Capabilities& c = h.capabilities;
    return {{"protocol_version", h.protocol_version},
            {"linkemd_version", h.linkemd_version},
            {"instance_id", h.instance_id},
            {"uptime_ns", h.uptime_ns},
            {"t_ns", h.t_ns},
            {"directions", std::move(dirs)},
            {"ports", std::move(ports)},
            {"params_generation", h.params_generation},
            {"methods", h.methods},
            {"link_params_schema", linkem::to_json(h.link_params_schema)},
            {"telemetry",
             {{"endpoint", h.telemetry.endpoint},
              {"stats_hz", h.telemetry.stats_hz},
              {"delay_hz", h.telemetry.delay_hz},
              {"delay_samples_per_s", h.telemetry.delay_samples_per_s}}},
            {"capabilities", capabilities_json(c)}};
}

void decode(const json& j, Hello& h) {
    const Reader r(j, "");
    h.protocol_version = static_cast<int>(r.i64("protocol_version"));
    h.linkemd_version = r.opt_str("linkemd_version").value_or("?");
    h.instance_id = r.str("instance_id");
    h.uptime_ns = r.opt_i64("uptime_ns").value_or(0);
    h.t_ns = r.opt_i64("t_ns").value_or(h.uptime_ns);
    const std::vector<std::string> dirs = names(r, "directions");
    if (dirs.empty() || dirs.size() > 2 || dirs[0] != kDirectionKeys[0] ||
        (dirs.size() == 2 && dirs[1] != kDirectionKeys[1]))
        r.fail("directions", "expected [\"a_to_b\"] or [\"a_to_b\", \"b_to_a\"]");
    h.directions = static_cast<unsigned>(dirs.size());
    h.ports.clear();
    if (r.has("ports")) {
        const json& ports = r.need("ports");
        if (!ports.is_array()) r.fail("ports", "expected a list");
        for (std::size_t i = 0; i < ports.size(); ++i) {
            const Reader p(ports[i], "ports[" + std::to_string(i) + "].");
            h.ports.push_back(
                PortInfo{p.str("port"), p.opt_str("device").value_or(""),
                         p.opt_bool("link_up").value_or(false),
                         static_cast<std::uint32_t>(p.opt_u64("speed_mbps").value_or(0))});
        }
    }
    h.params_generation = r.opt_u64("params_generation").value_or(0);
    h.methods = r.has("methods") ? names(r, "methods") : std::vector<std::string>{};
    h.link_params_schema =
        r.has("link_params_schema")
            ? rethrow_under("link_params_schema",
                            [&] { return link_schema_from_json(r.need("link_params_schema")); })
            : link_schema();
    h.telemetry = {};
    if (const auto t = r.opt_object("telemetry")) {
        h.telemetry.endpoint = t->opt_str("endpoint").value_or("");
        h.telemetry.stats_hz = static_cast<unsigned>(t->opt_u64("stats_hz").value_or(0));
        h.telemetry.delay_hz = static_cast<unsigned>(t->opt_u64("delay_hz").value_or(0));
        h.telemetry.delay_samples_per_s = t->opt_u64("delay_samples_per_s").value_or(0);
    }
    h.capabilities = {};
    if (const auto c = r.opt_object("capabilities")) {
        Capabilities& k = h.capabilities;
        k.save_config = c->opt_bool(kCapSave.c_str()).value_or(false);
        k.load_config = c->opt_bool(kCapLoad.c_str()).value_or(false);
        k.shutdown = c->opt_bool(kCapShutdown.c_str()).value_or(false);
        k.traffic = c->opt_bool("traffic").value_or(false);
        k.scenario = c->opt_bool("scenario").value_or(false);
        k.classes = c->opt_bool("classes").value_or(false);
        k.capture = c->opt_bool("capture").value_or(false);
    }
}

// ------------------------------------------------------------------------------ the link
json to_json(const LinkState& s) {
    json j = link_to_json(s.link, s.directions);
    j["classes"] = classes_to_json(s.link.classes);  // [] without classes
    j["params_generation"] = s.params_generation;
    put(j, "applied", s.applied);
    put(j, "ignored", s.ignored);
    return j;
}

void decode(const json& j, LinkState& s) {
    const Reader r(j, "");
    s.params_generation = r.u64("params_generation");
    s.directions = directions_of(j);
    for (unsigned d = 0; d < s.directions; ++d)
        s.link.direction(d) = rethrow_under(kDirectionKeys[d], [&] {
            return link_params_from_json(r.need(kDirectionKeys[d]), {}, TraceFiles::name_only);
        });
    if (s.directions == 1) s.link.b_to_a = s.link.a_to_b;
    s.link.classes.clear();
    if (r.has("classes"))
        s.link.classes = read_classes(r.need("classes"), s.directions, TraceFiles::name_only);
    s.applied = r.opt_bool("applied");
    s.ignored.reset();
    if (r.has("ignored")) s.ignored = names(r, "ignored");
}

void LinkUpdate::set(int direction, const std::string& key, FieldValue value) {
    if (direction < 0) {
        for (auto& own : dir)
            own.erase(key);
        both[key] = std::move(value);
    } else {
        dir[static_cast<std::size_t>(direction)][key] = std::move(value);
    }
}

void LinkUpdate::merge(const LinkUpdate& newer) {
    for (const auto& [key, v] : newer.both)
        set(-1, key, v);
    for (int d = 0; d < 2; ++d)
        for (const auto& [key, v] : newer.dir[static_cast<std::size_t>(d)])
            set(d, key, v);
}

bool LinkUpdate::has(int direction, std::string_view key) const {
    return value(direction, key).has_value();
}

std::optional<FieldValue> LinkUpdate::value(int direction, std::string_view key) const {
    const auto& own = dir[static_cast<std::size_t>(direction)];
    if (auto it = own.find(std::string(key)); it != own.end()) return it->second;
    if (auto it = both.find(std::string(key)); it != both.end()) return it->second;
    return std::nullopt;
}

LinkUpdate LinkUpdate::whole(const LinkConfig& link, unsigned directions, bool with_seed) {
    LinkUpdate u;
    for (unsigned d = 0; d < directions && d < 2; ++d)
        for (const LinkParamField& f : link_param_fields())
            if (with_seed || f.key != "seed") u.dir[d][f.key] = f.get(link.direction(d));
    return u;
}

json to_json(const LinkUpdate& u) {
    json j = json::object();
    for (const auto& [key, v] : u.both)
        j[key] = linkem::to_json(v);
    for (unsigned d = 0; d < 2; ++d) {
        if (u.dir[d].empty()) continue;
        json own = json::object();
        for (const auto& [key, v] : u.dir[d])
            own[key] = linkem::to_json(v);
        j[kDirectionKeys[d]] = std::move(own);
    }
    if (u.classes) j["classes"] = classes_to_json(*u.classes);
    if (u.class_name) j["class"] = *u.class_name;
    return j;
}

void decode(const json& j, LinkUpdate& u) {
    u = {};
    const Reader r(j, "");
    u.class_name = r.opt_str("class");
    if (r.has("classes")) u.classes = read_classes(r.need("classes"), 2, TraceFiles::name_only);
    auto take = [&](const std::string& where, const std::string& key, const json& v) {
        const LinkParamField* f = link_param_field(key);
        if (!f) return std::optional<FieldValue>();  // a later protocol's parameter
        return std::optional<FieldValue>(
            rethrow_under(where, [&] { return field_value_from_json(*f, v); }));
    };
    for (const auto& [key, v] : j.items()) {
        if (const int d = direction_of_key(key); d >= 0) {
            const Reader own(v, key + ".");
            for (const auto& [k, x] : v.items())
                if (auto fv = take(key, k, x)) u.dir[static_cast<std::size_t>(d)][k] = *fv;
        } else if (key == "class" || key == "classes") {
            continue;
        } else if (auto fv = take("", key, v)) {
            u.both[key] = *fv;
        }
    }
}

json to_json(const SavedConfig& s) {
    return {{"path", s.path}, {"params_generation", s.params_generation}};
}
void decode(const json& j, SavedConfig& s) {
    const Reader r(j, "");
    s.path = r.str("path");
    s.params_generation = r.u64("params_generation");
}

// ------------------------------------------------------------------------ built-in traffic
json to_json(const TrafficState& s) {
    if (!s.available) return {{"available", false}};
    json j = linkem::to_json(s.config);
    j["available"] = true;
    j["run"] = s.run;
    j["frames_per_s"] = s.frames_per_s;
    return j;
}

void decode(const json& j, TrafficState& s) {
    const Reader r(j, "");
    s = {};
    s.available = r.boolean("available");
    if (!s.available) return;
    json settings = json::object();
    for (const char* k : {"running", "pattern", "rate_bps", "frame_size_bytes", "period_us"})
        settings[k] = r.need(k);
    s.config = rethrow_under("", [&] { return traffic_from_json(settings, TrafficConfig{}); });
    s.run = r.u64("run");
    s.frames_per_s = r.real("frames_per_s");
}

TrafficUpdate TrafficUpdate::whole(const TrafficConfig& t) {
    TrafficUpdate u;
    u.running = t.running;
    u.pattern = t.spec.pattern;
    u.rate_bps = t.spec.rate_bps;
    u.frame_size_bytes = t.spec.frame_bytes;
    u.period_us = static_cast<double>(t.spec.period) / kNsPerUs;
    return u;
}

json to_json(const TrafficUpdate& u) {
    json j = json::object();
    put(j, "running", u.running);
    if (u.pattern) j["pattern"] = std::string(to_string(*u.pattern));
    put(j, "rate_bps", u.rate_bps);
    put(j, "frame_size_bytes", u.frame_size_bytes);
    put(j, "period_us", u.period_us);
    return j;
}

void decode(const json& j, TrafficUpdate& u) {
    const Reader r(j, "");
    u = {};
    u.running = r.opt_bool("running");
    if (const auto p = r.opt_str("pattern")) {
        for (TrafficPattern x :
             {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine})
            if (*p == to_string(x)) u.pattern = x;
        if (!u.pattern)
            r.fail("pattern", "'" + *p + "' is not allowed; allowed 'cbr', 'poisson', 'sine'");
    }
    u.rate_bps = r.opt_real("rate_bps");
    if (const auto f = r.opt_u64("frame_size_bytes"))
        u.frame_size_bytes = static_cast<std::uint32_t>(*f);
    u.period_us = r.opt_real("period_us");
}

// ------------------------------------------------------------------------------ scenarios
json to_json(const LoadScenario& p) {
    json j = json::object();
    if (p.scenario) j["scenario"] = scenario_to_json(*p.scenario);
    if (!p.path.empty()) j["path"] = p.path;
    if (!p.name.empty()) j["name"] = p.name;
    return j;
}

void decode(const json& j, LoadScenario& p) {
    const Reader r(j, "params.");
    p = {};
    if (r.has("scenario")) p.scenario = scenario_from_json(r.need("scenario"), "scenario");
    p.path = r.opt_str("path").value_or("");
    p.name = r.opt_str("name").value_or("");
}

json to_json(const ScenarioPositionParams& p) {
    json j = json::object();
    put(j, "position_s", p.position_s);
    return j;
}

void decode(const json& j, ScenarioPositionParams& p) {
    const Reader r(j, "params.");
    p.position_s = r.opt_real("position_s");
}

json to_json(const ScenarioPosition& p) {
    return {{"name", p.name},
            {"state", p.state},
            {"position_s", p.position_s},
            {"duration_s", p.duration_s},
            {"repeat", p.repeat},
            {"step", p.step}};
}

namespace {
void read_position(const Reader& r, ScenarioPosition& p) {
    p.name = r.opt_str("name").value_or("");
    p.state = r.str("state");
    p.position_s = r.opt_real("position_s").value_or(0);
    p.duration_s = r.opt_real("duration_s").value_or(0);
    p.repeat = r.opt_u64("repeat").value_or(0);
    p.step = r.opt_i64("step").value_or(-1);
}
}  // namespace

void decode(const json& j, ScenarioPosition& p) {
    read_position(Reader(j, ""), p);
}

json to_json(const ScenarioStatus& s) {
    if (!s.loaded) return {{"loaded", false}, {"state", s.position.state}};
    json j = to_json(s.position);
    j["loaded"] = true;
    j["description"] = s.description;
    j["source"] = s.source;
    j["loop"] = s.loop;
    j["steps"] = s.steps;
    j["from"] = s.from;
    j["t_ns"] = s.t_ns;
    if (s.scenario) j["scenario"] = scenario_to_json(*s.scenario);
    if (!s.path.empty()) j["path"] = s.path;
    put(j, "origin_ns", s.origin_ns);
    return j;
}

void decode(const json& j, ScenarioStatus& s) {
    const Reader r(j, "");
    s = {};
    s.loaded = r.boolean("loaded");
    s.position.state = r.str("state");
    if (!s.loaded) return;
    read_position(r, s.position);
    s.description = r.opt_str("description").value_or("");
    s.source = r.opt_str("source").value_or("");
    s.loop = r.opt_bool("loop").value_or(false);
    s.steps = r.opt_u64("steps").value_or(0);
    s.from = r.opt_str("from").value_or("");
    s.path = r.opt_str("path").value_or("");
    s.t_ns = r.opt_i64("t_ns").value_or(0);
    s.origin_ns = r.opt_i64("origin_ns");
    if (r.has("scenario"))
        s.scenario = rethrow_under("scenario", [&] {
            return scenario_from_json(r.need("scenario"), "linkemd's scenario");
        });
}

// ------------------------------------------------------------------------------- capture
json to_json(const capture::Settings& s) {
    return capture_settings_to_json(s);
}

void decode(const json& j, capture::Settings& out) {
    try {
        out = capture_settings_from_json(j);
    } catch (const ParamError& e) {
        throw std::invalid_argument((e.field().empty() ? "params" : e.field()) + ": " +
                                    e.message());
    }
}

json to_json(const capture::Status& s) {
    return capture_status_to_json(s);
}

void decode(const json& j, capture::Status& out) {
    out = capture_status_from_json(j);
}

// ------------------------------------------------------------------------------ telemetry
namespace {

json with_header(json body, const Header& h) {
    body["v"] = kVersion;
    body["instance_id"] = h.instance_id;
    body["seq"] = h.seq;
    body["t_ns"] = h.t_ns;
    return body;
}

}  // namespace

void decode(const json& j, Header& h) {
    const Reader r(j, "");
    r.i64("v");
    h.instance_id = r.str("instance_id");
    h.seq = r.u64("seq");
    h.t_ns = r.i64("t_ns");
}

json to_json(const StatsMessage& m) {
    json body = linkem::to_json(m.stats, m.final);
    if (m.scenario) body["scenario"] = to_json(*m.scenario);
    body["capture"] = capture_summary_to_json(m.capture);
    return with_header(std::move(body), m.header);
}

void decode(const json& j, StatsMessage& m) {
    decode(j, m.header);
    const Reader r(j, "");
    m.final = r.opt_bool("final").value_or(false);
    m.stats = link_stats_from_json(j);
    m.scenario.reset();
    if (const auto s = r.opt_object("scenario")) read_position(*s, m.scenario.emplace());
    // An older linkemd sends no capture block: no capture.
    m.capture = r.has("capture") ? capture_summary_from_json(r.need("capture")) : capture::Status{};
}

json to_json(const DelayMessage& m) {
    json body = json::object();
    // class_id in both directions when any sample of the message has one (a link with
    // classes); a message of default's samples only reads as before classes.
    bool class_ids = false;
    for (unsigned d = 0; d < m.directions && d < 2; ++d)
        class_ids = class_ids || has_class_ids(m.dir[d]);
    for (unsigned d = 0; d < m.directions && d < 2; ++d)
        body[kDirectionKeys[d]] = linkem::to_json(m.dir[d], class_ids);
    return with_header(std::move(body), m.header);
}

void decode(const json& j, DelayMessage& m) {
    decode(j, m.header);
    const Reader r(j, "");
    r.need(kDirectionKeys[0]);
    m.directions = directions_of(j);
    for (unsigned d = 0; d < m.directions; ++d)
        m.dir[d] = rethrow_under(kDirectionKeys[d],
                                 [&] { return direction_delay_from_json(j[kDirectionKeys[d]]); });
}

json to_json(const Event& e) {
    json j = {{"kind", e.kind}, {"severity", e.severity}, {"message", e.message}};
    put(j, "source", e.source);
    put(j, "direction", e.direction);
    put(j, "port", e.port);
    put(j, "method", e.method);
    put(j, "code", e.code);
    put(j, "path", e.path);
    put(j, "name", e.name);
    put(j, "action", e.action);
    put(j, "state", e.state);
    put(j, "note", e.note);
    put(j, "params_generation", e.params_generation);
    put(j, "stalls", e.stalls);
    put(j, "stall_ns", e.stall_ns);
    put(j, "longest_stall_ns", e.longest_stall_ns);
    put(j, "step", e.step);
    put(j, "repeat", e.repeat);
    put(j, "step_t_ns", e.step_t_ns);
    put(j, "link_up", e.link_up);
    put(j, "position_s", e.position_s);
    put(j, "at_s", e.at_s);
    put(j, "until_s", e.until_s);
    put(j, "file", e.file);
    put(j, "records", e.records);
    put(j, "bytes", e.bytes);
    put(j, "capture_missed", e.capture_missed);
    put(j, "stop_reason", e.stop_reason);
    put(j, "error", e.error);
    if (e.traffic) j["traffic"] = linkem::to_json(*e.traffic);
    if (e.set) j["set"] = to_json(*e.set);
    if (e.ramp) j["ramp"] = to_json(*e.ramp);
    return with_header(std::move(j), e.header);
}

void decode(const json& j, Event& e) {
    const Reader r(j, "");
    e = {};
    decode(j, e.header);
    e.kind = r.str("kind");
    e.severity = r.str("severity");
    e.message = r.str("message");
    e.source = r.opt_str("source");
    e.direction = r.opt_str("direction");
    e.port = r.opt_str("port");
    e.method = r.opt_str("method");
    e.code = r.opt_str("code");
    e.path = r.opt_str("path");
    e.name = r.opt_str("name");
    e.action = r.opt_str("action");
    e.state = r.opt_str("state");
    e.note = r.opt_str("note");
    e.params_generation = r.opt_u64("params_generation");
    e.stalls = r.opt_u64("stalls");
    e.stall_ns = r.opt_u64("stall_ns");
    e.longest_stall_ns = r.opt_u64("longest_stall_ns");
    e.step = r.opt_u64("step");
    e.repeat = r.opt_u64("repeat");
    e.step_t_ns = r.opt_i64("step_t_ns");
    e.link_up = r.opt_bool("link_up");
    e.position_s = r.opt_real("position_s");
    e.at_s = r.opt_real("at_s");
    e.until_s = r.opt_real("until_s");
    e.file = r.opt_str("file");
    e.records = r.opt_u64("records");
    e.bytes = r.opt_u64("bytes");
    e.capture_missed = r.opt_u64("capture_missed");
    e.stop_reason = r.opt_str("stop_reason");
    e.error = r.opt_str("error");
    if (r.has("traffic"))
        e.traffic =
            rethrow_under("traffic", [&] { return traffic_from_json(r.need("traffic"), {}); });
    if (r.has("set")) e.set = proto::decode<LinkUpdate>(r.need("set"));
    if (r.has("ramp")) e.ramp = proto::decode<LinkUpdate>(r.need("ramp"));
}

Event Event::capture(const linkem::capture::Event& c) {
    using K = linkem::capture::Event::Kind;
    const bool warn = c.kind == K::missed ||
                      (c.kind == K::stopped && c.status.reason == capture::StopReason::write_error);
    Event e = make("capture", warn ? "warning" : "info", c.message);
    // As capture_event_to_json writes them.
    e.action = capture::event_kind_name(c.kind);
    e.file = c.status.file;
    e.records = c.status.records;
    e.bytes = c.status.bytes;
    e.capture_missed = c.status.missed;
    e.stop_reason = capture::stop_reason_name(c.status.reason);
    e.error = c.status.error;
    return e;
}

std::optional<Telemetry> decode_telemetry(std::string_view topic, const json& body) {
    Telemetry t;
    t.topic = std::string(topic);
    try {
        decode(body, t.header);
        if (topic == kTopicStats) {
            t.stats = decode<StatsMessage>(body);
        } else if (topic == kTopicDelay) {
            t.delay = decode<DelayMessage>(body);
        } else if (topic == kTopicEvent) {
            t.event = decode<Event>(body);
        } else {
            return std::nullopt;
        }
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(t.topic + ": " + e.what());
    }
    return t;
}

}  // namespace linkem::proto
