// linkemctl: steers and watches a running linkemd over its control and telemetry sockets
// (docs/protocol.md). No DPDK: a client of liblinkem_client.
//
// Exit codes: 0 ok, 1 refused by linkemd (its message and field are printed), 2 usage (bad
// flags or files given to linkemctl), 3 no answer (nothing listening, a timeout, a CURVE key
// linkemd does not let in).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "linkem/cli_link_flags.hpp"
#include "linkem/cli_traffic_flags.hpp"
#include "linkem/client.hpp"
#include "linkem/link_params.hpp"
#include "linkem/protocol.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/stats.hpp"
#include "linkem/stats_table.hpp"
#include "linkem/units.hpp"

namespace {

using namespace linkem;
using nlohmann::json;
using std::chrono::milliseconds;

constexpr int kOk = 0, kRefused = 1, kUsage = 2, kNoAnswer = 3;

/// Bad input to linkemctl itself: exit 2.
struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Global {
    std::string control = proto::kDefaultControl;
    std::string telemetry;  // empty: the one hello names
    std::string server_key, secret;
    std::string timeout = "5s";
    bool json = false;
};

struct Settings {
    client::ControlOptions control;
    std::optional<client::CurveOptions> curve;
    milliseconds timeout{5000};
    bool json = false;
    std::string telemetry;
};

Settings settings(const Global& g) {
    Settings s;
    s.json = g.json;
    const auto t = parse_duration(g.timeout);
    if (!t || *t <= 0)
        throw Usage("--timeout: '" + g.timeout + "' is not allowed; expected " +
                    std::string(kDurationForm) + " greater than 0, e.g. 2s");
    s.timeout = std::chrono::ceil<milliseconds>(std::chrono::nanoseconds(*t));
    if (g.server_key.empty() != g.secret.empty())
        throw Usage(
            "--curve-server-key and --curve-secret go together: linkemd's public key (its .key "
            "file) and this client's key pair (a .key_secret file from `linkemctl keygen`)");
    if (!g.server_key.empty()) {
        try {
            s.curve = client::curve_from_files(g.server_key, g.secret);
        } catch (const client::SetupError& e) {
            throw Usage(e.what());
        }
    }
    s.control.endpoint = g.control;
    s.control.curve = s.curve;
    s.control.client_name = std::string("linkemctl ") + LINKEM_VERSION;
    s.telemetry = g.telemetry;
    return s;
}

void print_json(const json& j) {
    std::cout << j.dump(2) << "\n";
}

std::string text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) {
        const double x = v.get<double>();
        if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15)
            return std::to_string(static_cast<long long>(x));
    }
    return v.dump();
}

// The link parameters in force: one row per key, a column per direction.
void print_link(const json& r) {
    std::printf("parameters in force (generation %s)\n",
                text(r.value("params_generation", json(0))).c_str());
    const char* const* keys = kDirectionKeys;
    const bool two = r.contains(keys[1]);
    std::printf("  %-22s %22s", "parameter", keys[0]);
    if (two) std::printf(" %22s", keys[1]);
    std::printf("\n");
    for (const LinkParamFlag& f : link_param_flags()) {
        const std::string a = r[keys[0]].contains(f.key) ? text(r[keys[0]][f.key]) : "?";
        if (two) {
            const std::string b = r[keys[1]].contains(f.key) ? text(r[keys[1]][f.key]) : "?";
            std::printf("  %-22s %22s %22s\n", f.key.c_str(), a.c_str(), b.c_str());
        } else {
            std::printf("  %-22s %22s\n", f.key.c_str(), a.c_str());
        }
    }
}

// "a_to_b.jitter_us" -> " (flag --a-to-b-jitter or --jitter)"
std::string link_flag_hint(const std::string& field) {
    for (int d = 0; d < 2; ++d) {
        const std::string prefix = std::string(kDirectionKeys[d]) + ".";
        if (!field.starts_with(prefix)) continue;
        if (const LinkParamFlag* f = link_param_flag(field.substr(prefix.size())))
            return " (flag " + link_flag_name(*f, 1 + d) + " or " + link_flag_name(*f, 0) + ")";
    }
    if (const LinkParamFlag* f = link_param_flag(field))
        return " (flag " + link_flag_name(*f, 0) + ")";
    return "";
}

std::string traffic_flag_hint(const std::string& field) {
    static const std::map<std::string, std::string> flags = {{"pattern", "--traffic-pattern"},
                                                             {"rate_bps", "--traffic-rate"},
                                                             {"frame_size_bytes", "--frame-size"},
                                                             {"period_us", "--period"},
                                                             {"running", "--on/--off"}};
    const auto it = flags.find(field);
    return it == flags.end() ? "" : " (flag " + it->second + ")";
}

// --------------------------------------------------------------------------- commands
int hello(const Settings& s) {
    client::Control c(s.control);
    const json r = c.call("hello", json::object(), s.timeout);
    if (s.json) {
        print_json(r);
        return kOk;
    }
    std::printf("linkemd %s (protocol %s), instance %s, up %.3fs\n",
                text(r.value("linkemd_version", json("?"))).c_str(),
                text(r.value("protocol_version", json("?"))).c_str(),
                text(r.value("instance_id", json("?"))).c_str(), r.value("uptime_ns", 0.0) / 1e9);
    std::string ports;
    for (const json& p : r.value("ports", json::array()))
        ports += (ports.empty() ? "" : ", ") + text(p.value("port", json("?"))) + " " +
                 text(p.value("device", json("?"))) + " (link " +
                 (p.value("link_up", false) ? "up" : "down") + ", " +
                 text(p.value("speed_mbps", json(0))) + " Mbit/s)";
    std::printf("ports: %s\n", ports.c_str());
    std::string dirs;
    for (const json& d : r.value("directions", json::array()))
        dirs += (dirs.empty() ? "" : ", ") + text(d);
    std::printf("directions: %s\n", dirs.c_str());
    std::printf("parameters: generation %s\n", text(r.value("params_generation", json(0))).c_str());
    const json t = r.value("telemetry", json::object());
    std::printf("telemetry: %s (stats %s/s, delay %s/s, %s delay samples/s per direction)\n",
                text(t.value("endpoint", json("?"))).c_str(),
                text(t.value("stats_hz", json("?"))).c_str(),
                text(t.value("delay_hz", json("?"))).c_str(),
                text(t.value("delay_samples_per_s", json("?"))).c_str());
    std::string caps;
    const json capabilities = r.value("capabilities", json::object());
    for (const auto& [k, v] : capabilities.items())
        caps +=
            (caps.empty() ? "" : ", ") + k + " " + (v.is_boolean() && v.get<bool>() ? "yes" : "no");
    std::printf("capabilities: %s\n", caps.c_str());
    return kOk;
}

int get(const Settings& s) {
    client::Control c(s.control);
    const json r = c.call("get_link", json::object(), s.timeout);
    if (s.json)
        print_json(r);
    else
        print_link(r);
    return kOk;
}

int set(const Settings& s, const LinkFlagText& flags) {
    json update;
    try {
        update = link_update_from_flags(flags);
    } catch (const FlagError& e) {
        throw Usage(e.what());
    }
    if (update.empty())
        throw Usage(
            "set: no link parameter given; give linkemd's link flags, e.g. linkemctl set "
            "--mean-delay 20ms --b-to-a-loss-probability 0.01 (see linkemctl set --help)");
    client::Control c(s.control);
    const json r = c.call("set_link", update, s.timeout);
    if (!r.value("applied", true))
        std::fprintf(stderr,
                     "linkemctl: linkemd published generation %s but the data plane has not "
                     "acknowledged it yet (it adopts it as soon as it runs)\n",
                     text(r.value("params_generation", json(0))).c_str());
    if (s.json)
        print_json(r);
    else
        print_link(r);
    return kOk;
}

int stats(const Settings& s) {
    client::Control c(s.control);
    const json r = c.call("get_stats", json::object(), s.timeout);
    if (s.json) {
        print_json(r);
        return kOk;
    }
    if (!r.is_object() || !r.contains(kDirectionKeys[0])) {
        std::printf("no counters yet\n");
        return kOk;
    }
    const LinkStats st = link_stats_from_json(r);
    print_stats_table(stdout, st, nullptr, r.value("final", false));
    return kOk;
}

// The telemetry endpoint: --telemetry, or the one linkemd's hello names (a wildcard host
// replaced by the control endpoint's host).
std::string telemetry_endpoint(const Settings& s) {
    if (!s.telemetry.empty()) return s.telemetry;
    client::Control c(s.control);
    const json r = c.call("hello", json::object(), s.timeout);
    std::string e = r.value("telemetry", json::object()).value("endpoint", std::string());
    if (e.empty())
        throw client::Refused(
            proto::Error{proto::ErrorCode::unavailable, "linkemd has no telemetry socket", ""});
    for (const std::string wildcard : {"tcp://0.0.0.0:", "tcp://*:", "tcp://[::]:"}) {
        if (!e.starts_with(wildcard) || !s.control.endpoint.starts_with("tcp://")) continue;
        const std::string host = s.control.endpoint.substr(6, s.control.endpoint.rfind(':') - 6);
        e = "tcp://" + host + ":" + e.substr(wildcard.size());
    }
    return e;
}

int watch(const Settings& s, const std::string& interval_text, unsigned count) {
    const auto iv = parse_duration(interval_text);
    if (!iv || *iv <= 0)
        throw Usage("--interval: '" + interval_text + "' is not allowed; expected " +
                    std::string(kDurationForm) + " greater than 0, e.g. 1s");
    const std::string endpoint = telemetry_endpoint(s);
    client::Subscriber sub(endpoint, {proto::kTopicStats}, s.curve);
    std::optional<LinkStats> last;
    std::string instance;
    unsigned printed = 0;
    for (;;) {
        const auto m = sub.receive(s.timeout);
        if (!m)
            throw client::NoAnswer("no stats telemetry from " + endpoint + " within " +
                                   format_duration(s.timeout.count() * kNsPerMs));
        if (m->topic != proto::kTopicStats) continue;
        LinkStats st;
        std::string id;
        try {
            id = proto::header_from_json(m->body).instance_id;
            st = link_stats_from_json(m->body);
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "linkemctl: a stats message was skipped: %s\n", e.what());
            continue;
        }
        const bool final = m->body.value("final", false);
        if (id != instance) {
            if (!instance.empty()) std::printf("linkemd restarted (instance %s)\n", id.c_str());
            instance = id;
            last.reset();
        }
        if (!last) {
            last = st;
            if (!final) continue;
        }
        if (!final && st.t_ns - last->t_ns < *iv) continue;
        if (s.json)
            std::printf("%s\n", m->body.dump().c_str());
        else
            print_stats_table(stdout, st, &*last, final);
        std::fflush(stdout);
        last = st;
        ++printed;
        if (final || (count > 0 && printed >= count)) return kOk;
    }
}

int events(const Settings& s, unsigned count) {
    const std::string endpoint = telemetry_endpoint(s);
    client::Subscriber sub(endpoint, {proto::kTopicEvent}, s.curve);
    unsigned printed = 0;
    for (;;) {
        const auto m = sub.receive(milliseconds(1000));
        if (!m || m->topic != proto::kTopicEvent) continue;
        if (s.json) {
            std::printf("%s\n", m->body.dump().c_str());
        } else {
            std::printf("t=%.3fs %-7s %-16s %s\n", m->body.value("t_ns", 0.0) / 1e9,
                        m->body.value("severity", std::string("?")).c_str(),
                        m->body.value("kind", std::string("?")).c_str(),
                        m->body.value("message", std::string()).c_str());
        }
        std::fflush(stdout);
        if (count > 0 && ++printed >= count) return kOk;
    }
}

int save(const Settings& s) {
    client::Control c(s.control);
    const json r = c.call("save_config", json::object(), s.timeout);
    if (s.json)
        print_json(r);
    else
        std::printf("saved the parameters in force (generation %s) to %s\n",
                    text(r.value("params_generation", json(0))).c_str(),
                    text(r.value("path", json("?"))).c_str());
    return kOk;
}

int load(const Settings& s) {
    client::Control c(s.control);
    const json r = c.call("load_config", json::object(), s.timeout);
    if (s.json) {
        print_json(r);
        return kOk;
    }
    std::string ignored;
    for (const json& k : r.value("ignored", json::array()))
        ignored += (ignored.empty() ? "" : ", ") + text(k);
    if (!ignored.empty())
        std::printf("changed in the file but needing a restart (ignored): %s\n", ignored.c_str());
    print_link(r);
    return kOk;
}

int shutdown(const Settings& s) {
    client::Control c(s.control);
    const json r = c.call("shutdown", json::object(), s.timeout);
    if (s.json)
        print_json(r);
    else
        std::printf("linkemd is stopping\n");
    return kOk;
}

int keygen(const Settings& s, const std::string& dir, const std::string& name, bool force) {
    client::KeyPair k;
    std::pair<std::string, std::string> paths;
    try {
        k = client::generate_key_pair();
        paths = client::write_certificates(dir, name, k, force);
    } catch (const client::SetupError& e) {
        throw Usage(std::string("keygen: ") + e.what());
    }
    if (s.json) {
        print_json({{"public_key_file", paths.first},
                    {"secret_key_file", paths.second},
                    {"public_key", k.public_key}});
    } else {
        std::printf("public key  %s (%s)\nkey pair    %s (secret, mode 0600)\n",
                    paths.first.c_str(), k.public_key.c_str(), paths.second.c_str());
    }
    return kOk;
}

struct TrafficFlags {
    TrafficFlagText text;  // [i] for traffic_flags()[i]
    bool on = false, off = false;
};

int traffic(const Settings& s, const TrafficFlags& f) {
    if (f.on && f.off) throw Usage("--on and --off: give one of them");
    json update;
    try {
        update = traffic_update_from_flags(f.text);  // linkemd checks the ranges
    } catch (const FlagError& e) {
        throw Usage(e.what());
    }
    if (f.on) update["running"] = true;
    if (f.off) update["running"] = false;
    client::Control c(s.control);
    const json r = update.empty() ? c.call("get_traffic", json::object(), s.timeout)
                                  : c.call("set_traffic", update, s.timeout);
    if (s.json) {
        print_json(r);
        return kOk;
    }
    if (!r.value("available", false)) {
        std::printf("this linkemd has no built-in traffic (it runs on real ports)\n");
        return kOk;
    }
    const std::string pattern = r.value("pattern", std::string("?"));
    std::printf(
        "built-in traffic: %s, %s at %s (%.0f frames/s), %s B frames%s, run %s\n",
        r.value("running", false) ? "running" : "stopped", pattern.c_str(),
        format_rate(r.value("rate_bps", 0.0)).c_str(), r.value("frames_per_s", 0.0),
        text(r.value("frame_size_bytes", json(0))).c_str(),
        pattern == "sine"
            ? (", period " + format_duration(std::llround(r.value("period_us", 0.0) * 1e3))).c_str()
            : "",
        text(r.value("run", json(0))).c_str());
    return kOk;
}

// ------------------------------------------------------------------------- scenarios
void print_scenario(const json& r) {
    if (!r.value("loaded", false)) {
        std::printf("no scenario loaded\n");
        return;
    }
    const json steps = r.value("scenario", json::object()).value("steps", json::array());
    const int step = r.value("step", -1);
    std::printf("scenario %s: %s at %.3f s of %.3f s%s\n", text(r.value("name", json("?"))).c_str(),
                text(r.value("state", json("?"))).c_str(), r.value("position_s", 0.0),
                r.value("duration_s", 0.0),
                r.value("loop", false)
                    ? (", looping (repeat " + text(r.value("repeat", json(0))) + ")").c_str()
                    : "");
    if (step >= 0 && step < static_cast<int>(steps.size())) {
        const json& st = steps[static_cast<std::size_t>(step)];
        std::printf(
            "  step %d of %zu (at %s s)%s%s\n", step + 1, steps.size(),
            text(st.value("at_s", json(0))).c_str(),
            st.contains("note") ? (": " + text(st["note"])).c_str() : "",
            st.contains("until_s") ? (", a ramp until " + text(st["until_s"]) + " s").c_str() : "");
    } else {
        std::printf("  before its first step (%zu steps)\n", steps.size());
    }
    if (!r.value("description", std::string()).empty())
        std::printf("  %s\n", text(r["description"]).c_str());
}

int scenario_list(const Settings& s) {
    json list = json::array();
    for (const BuiltinScenario& b : builtin_scenarios()) {
        const Scenario sc = *builtin_scenario(b.name);
        list.push_back({{"name", sc.name},
                        {"description", sc.description},
                        {"source", sc.source},
                        {"duration_s", static_cast<double>(sc.duration) / kNsPerSec},
                        {"loop", sc.loop}});
    }
    if (s.json) {
        print_json(list);
        return kOk;
    }
    for (const json& b : list)
        std::printf("%-20s %6.0f s%s  %s\n", text(b["name"]).c_str(), b["duration_s"].get<double>(),
                    b["loop"].get<bool>() ? " loop" : "     ", text(b["description"]).c_str());
    return kOk;
}

// What load_scenario gets for FILE|NAME: the file read here (so that it need not be on
// linkemd's machine; trace files it names must be), or a built-in's name.
json scenario_load_params(const std::string& what) {
    std::error_code ec;
    if (!std::filesystem::exists(what, ec)) {
        if (builtin_scenario(what)) return {{"name", what}};
        throw Usage("scenario play: '" + what +
                    "' is neither a file nor a built-in scenario; built-in: " +
                    builtin_scenario_names() + " (linkemctl scenario list)");
    }
    const std::string path = std::filesystem::absolute(what, ec).string();
    Scenario sc;
    try {
        sc = read_scenario_file(path);
    } catch (const ScenarioError& e) {
        throw Usage(std::string("scenario play: ") + e.what());
    }
    json params = {{"scenario", scenario_to_json(sc)}};
    if (proto::encode_request(0, "load_scenario", params).size() + 64 > proto::kMaxRequestBytes) {
        std::fprintf(stderr,
                     "linkemctl: %s is too large to send (more than %zu bytes as JSON): linkemd "
                     "reads it from that path itself\n",
                     path.c_str(), proto::kMaxRequestBytes);
        params = {{"path", path}};
    }
    return params;
}

int scenario(const Settings& s, const std::string& action, const std::string& arg) {
    if (action == "list") return scenario_list(s);
    client::Control c(s.control);
    json r;
    if (action == "play") {
        c.call("load_scenario", scenario_load_params(arg), s.timeout);
        r = c.call("start_scenario", json::object(), s.timeout);
    } else if (action == "seek") {
        const auto t = parse_duration(arg);
        if (!t)
            throw Usage("scenario seek: '" + arg + "' is not " + std::string(kDurationForm) +
                        ", e.g. 12s");
        r = c.call("seek_scenario",
                   {{"position_s", static_cast<double>(*t) / static_cast<double>(kNsPerSec)}},
                   s.timeout);
    } else if (action == "status") {
        r = c.call("get_scenario", json::object(), s.timeout);
    } else {
        r = c.call(action + "_scenario", json::object(), s.timeout);
    }
    if (s.json)
        print_json(r);
    else
        print_scenario(r);
    return kOk;
}

int refused(bool json_output, const std::string& command, const proto::Error& e) {
    const std::string hint = command == "set"       ? link_flag_hint(e.field)
                             : command == "traffic" ? traffic_flag_hint(e.field)
                                                    : "";
    static const std::map<std::string, std::string> methods = {
        {"get", "get_link"},     {"set", "set_link"},     {"stats", "get_stats"},
        {"save", "save_config"}, {"load", "load_config"}, {"traffic", "set_traffic"},
        {"watch", "hello"},      {"events", "hello"}};
    const auto m = methods.find(command);
    const std::string method = m == methods.end() ? command : m->second;
    std::fprintf(stderr, "linkemctl: linkemd refused %s (%s): %s%s%s\n", method.c_str(),
                 std::string(proto::to_string(e.code)).c_str(), e.message.c_str(),
                 e.field.empty() ? "" : (" [field " + e.field + "]").c_str(), hint.c_str());
    if (json_output) {
        json err = {{"code", proto::to_string(e.code)}, {"message", e.message}};
        if (!e.field.empty()) err["field"] = e.field;
        print_json({{"error", err}});
    }
    return kRefused;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "linkemctl: steer and watch a running linkemd over its control and telemetry sockets "
        "(docs/protocol.md)",
        "linkemctl"};
    app.footer(
        "Exit codes: 0 ok; 1 refused by linkemd (its message and the field at fault are "
        "printed);\n2 usage (bad flags, unreadable key files); 3 no answer (nothing listening, "
        "timeout,\na CURVE key linkemd does not let in).");
    app.require_subcommand(1);
    app.fallthrough();
    Global g;
    const char* kConn = "Connection";
    app.add_option(
           "--control", g.control,
           std::string("linkemd's control endpoint (default ") + proto::kDefaultControl + ")")
        ->type_name("ENDPOINT")
        ->group(kConn);
    app.add_option("--telemetry", g.telemetry,
                   "linkemd's telemetry endpoint (watch, events; default: the one linkemd's hello "
                   "names)")
        ->type_name("ENDPOINT")
        ->group(kConn);
    app.add_option("--curve-server-key", g.server_key,
                   "CURVE: linkemd's public key (the .key file of its --curve-secret pair)")
        ->type_name("FILE")
        ->group(kConn);
    app.add_option("--curve-secret", g.secret,
                   "CURVE: this client's key pair (a .key_secret file from `linkemctl keygen`; its "
                   ".key goes into linkemd's --curve-allow directory)")
        ->type_name("FILE")
        ->group(kConn);
    app.add_option("--timeout", g.timeout, "how long to wait for an answer (default 5s)")
        ->type_name("DURATION")
        ->group(kConn);
    app.add_flag("--json", g.json, "machine-readable output: the result object as JSON")
        ->group("Output");
    bool show_version = false;
    app.add_flag("--version", show_version, "print linkemctl's version and exit");

    auto* c_hello =
        app.add_subcommand("hello", "who is there: versions, instance, ports, telemetry");
    auto* c_get = app.add_subcommand("get", "the link parameters in force, per direction");
    auto* c_set = app.add_subcommand(
        "set",
        "change link parameters while traffic flows (linkemd's link flags); prints the "
        "parameters now in force");
    LinkFlagText link_flags;
    add_link_flag_options(*c_set, link_flags, "Link parameters (both directions)");
    c_set->footer(kLinkFlagFooter);
    auto* c_stats = app.add_subcommand("stats", "the newest counters (cumulative since start)");
    auto* c_watch =
        app.add_subcommand("watch", "a live table of counters and rates from the stats telemetry");
    std::string interval = "1s";
    unsigned count = 0;
    c_watch->add_option("--interval", interval, "time between two tables (default 1s)")
        ->type_name("DURATION");
    c_watch->add_option("--count", count, "stop after N tables (default 0: until interrupted)")
        ->type_name("N");
    auto* c_events = app.add_subcommand("events", "print the event telemetry as it comes");
    c_events->add_option("--count", count, "stop after N events (default 0: until interrupted)")
        ->type_name("N");
    auto* c_save =
        app.add_subcommand("save", "write the parameters in force into linkemd's --config file");
    auto* c_load = app.add_subcommand("load", "re-read linkemd's --config file (as SIGHUP does)");
    auto* c_shutdown =
        app.add_subcommand("shutdown", "stop linkemd (it must run with --allow-remote-shutdown)");
    auto* c_keygen = app.add_subcommand(
        "keygen", "write a CURVE key pair: DIR/NAME.key (public) and DIR/NAME.key_secret");
    std::string key_dir, key_name;
    bool force = false;
    c_keygen->add_option("DIR", key_dir, "directory to write into (created)")->required();
    c_keygen->add_option("NAME", key_name, "file name without extension")->required();
    c_keygen->add_flag("--force", force, "replace existing files");
    auto* c_traffic = app.add_subcommand(
        "traffic", "show or change linkemd's built-in traffic (virtual ports); no flags: show");
    TrafficFlags tf;
    add_traffic_flag_options(*c_traffic, tf.text, "", {{"pattern", "(starts it)"}});
    c_traffic->add_flag("--on", tf.on, "start sending");
    c_traffic->add_flag("--off", tf.off, "stop sending");
    auto* c_scenario = app.add_subcommand(
        "scenario", "play a scenario (link parameters that change over time) in linkemd");
    c_scenario->require_subcommand(1);
    std::string scenario_action, scenario_arg;
    auto* s_play = c_scenario->add_subcommand(
        "play", "load a scenario (a file here, JSON or CSV, or a built-in's name) and start it");
    s_play->add_option("FILE|NAME", scenario_arg, "the scenario")->required();
    c_scenario->add_subcommand("pause", "stop where it is; the parameters stay");
    c_scenario->add_subcommand("resume", "go on from where it paused");
    c_scenario->add_subcommand("stop", "stop playing; the parameters in force stay");
    auto* s_seek = c_scenario->add_subcommand(
        "seek", "go to a position (playing: play on from there; else: pause there)");
    s_seek->add_option("T", scenario_arg, "the position, e.g. 12s")->required();
    c_scenario->add_subcommand("status", "the scenario loaded, where it is, its step");
    c_scenario->add_subcommand("list", "the built-in scenarios (no linkemd needed)");

    if (argc >= 2 && std::string(argv[1]) == "--version") {
        std::printf("linkemctl %s (protocol %d)\n", LINKEM_VERSION, proto::kVersion);
        return kOk;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return kOk;
    } catch (const CLI::CallForAllHelp&) {
        std::cout << app.help("", CLI::AppFormatMode::All);
        return kOk;
    } catch (const CLI::ParseError& e) {
        // "A subcommand is required" also when one was given but is not known: name it.
        const std::vector<std::string> extra = app.remaining();
        if (app.get_subcommands().empty() && !extra.empty() && !extra.front().starts_with("-")) {
            std::string known;
            for (const CLI::App* sub : app.get_subcommands({}))
                known += (known.empty() ? "" : ", ") + sub->get_name();
            std::fprintf(stderr,
                         "linkemctl: unknown command '%s'; known: %s (see linkemctl --help)\n",
                         extra.front().c_str(), known.c_str());
            return kUsage;
        }
        std::fprintf(stderr, "linkemctl: %s (see linkemctl --help, linkemctl COMMAND --help)\n",
                     e.what());
        return kUsage;
    }
    std::string command;
    for (const CLI::App* sub : app.get_subcommands())
        command = sub->get_name();
    if (c_scenario->parsed())
        for (const CLI::App* sub : c_scenario->get_subcommands()) {
            const std::string a = sub->get_name();
            command = a == "play"     ? "load_scenario/start_scenario"
                      : a == "status" ? "get_scenario"
                                      : a + "_scenario";
        }
    try {
        const Settings s = settings(g);
        if (c_hello->parsed()) return hello(s);
        if (c_get->parsed()) return get(s);
        if (c_set->parsed()) return set(s, link_flags);
        if (c_stats->parsed()) return stats(s);
        if (c_watch->parsed()) return watch(s, interval, count);
        if (c_events->parsed()) return events(s, count);
        if (c_save->parsed()) return save(s);
        if (c_load->parsed()) return load(s);
        if (c_shutdown->parsed()) return shutdown(s);
        if (c_keygen->parsed()) return keygen(s, key_dir, key_name, force);
        if (c_traffic->parsed()) return traffic(s, tf);
        if (c_scenario->parsed())
            for (const CLI::App* sub : c_scenario->get_subcommands())
                return scenario(s, sub->get_name(), scenario_arg);
    } catch (const Usage& e) {
        std::fprintf(stderr, "linkemctl: %s\n", e.what());
        return kUsage;
    } catch (const client::Refused& e) {
        return refused(g.json, command, e.error());
    } catch (const client::NoAnswer& e) {
        std::fprintf(stderr, "linkemctl: %s\n", e.what());
        return kNoAnswer;
    } catch (const client::SetupError& e) {
        std::fprintf(stderr, "linkemctl: %s\n", e.what());
        return kUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "linkemctl: %s\n", e.what());
        return kRefused;
    }
    return kUsage;
}
