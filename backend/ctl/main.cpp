// linkemctl: steers and watches a running linkemd over its control and telemetry sockets
// (docs/protocol.md). No DPDK: a client of liblinkem_client.
//
// Exit codes: 0 ok, 1 refused by linkemd (its message and field are printed), 2 usage (bad
// flags or files given to linkemctl), 3 no answer (nothing listening, a timeout, a CURVE key
// linkemd does not let in).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "linkem/capture_flags.hpp"
#include "linkem/capture_json.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/cli_link_flags.hpp"
#include "linkem/cli_traffic_flags.hpp"
#include "linkem/client.hpp"
#include "linkem/json_text.hpp"
#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/stats.hpp"
#include "linkem/stats_table.hpp"
#include "linkem/units.hpp"

namespace {

using namespace linkem;
using nlohmann::json;
using proto::Method;
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

// The link parameters in force: one row per key, a column per direction.
void print_link(const proto::LinkState& r) {
    std::printf("parameters in force (generation %llu)\n",
                static_cast<unsigned long long>(r.params_generation));
    const bool two = r.directions > 1;
    std::printf("  %-22s %22s", "parameter", kDirectionKeys[0]);
    if (two) std::printf(" %22s", kDirectionKeys[1]);
    std::printf("\n");
    for (const LinkParamField& f : link_param_fields()) {
        const std::string a = json_value_text(to_json(f.get(r.link.a_to_b)));
        if (two)
            std::printf("  %-22s %22s %22s\n", f.key.c_str(), a.c_str(),
                        json_value_text(to_json(f.get(r.link.b_to_a))).c_str());
        else
            std::printf("  %-22s %22s\n", f.key.c_str(), a.c_str());
    }
}

// ------------------------------------------------------------------------ traffic classes
// A class's parameters that differ from the defaults: "mean_delay_us=80000
// b_to_a.loss_probability=0.02 limiter=link".
std::string class_params_text(const json& c) {
    std::string out;
    for (const auto& [key, value] : c.items()) {
        if (key == "name" || key == "match" || key == "action") continue;
        if (direction_of_key(key) >= 0) {
            for (const auto& [k, v] : value.items())
                out += (out.empty() ? "" : " ") + key + "." + k + "=" + json_value_text(v);
        } else {
            out += (out.empty() ? "" : " ") + key + "=" + json_value_text(value);
        }
    }
    return out;
}

// The classes of a link as a table: position (as in the field paths classes[N]), name,
// action, match, the parameters that differ from the defaults; `default` last.
void print_classes(const json& classes, std::uint64_t generation) {
    std::printf(
        "traffic classes (generation %llu): tried in order, the first that matches takes "
        "the packet\n",
        static_cast<unsigned long long>(generation));
    std::printf("  %-4s %-16s %-8s %-36s %s\n", "pos", "name", "action", "match", "parameters");
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const json& c = classes[i];
        std::printf("  %-4zu %-16s %-8s %-36s %s\n", i, c["name"].get<std::string>().c_str(),
                    c["action"].get<std::string>().c_str(), class_match_text(c["match"]).c_str(),
                    class_params_text(c).c_str());
    }
    std::printf("  %-4s %-16s %-8s %-36s %s\n", "-", kDefaultClassName, "emulate",
                "every other packet", "the link's own (linkemctl get)");
}

// One class's parameters in force (set --class): every key, a column per direction.
void print_class_link(const proto::LinkState& r, const std::string& name) {
    const auto it = std::find_if(r.link.classes.begin(), r.link.classes.end(),
                                 [&](const TrafficClass& c) { return c.name == name; });
    if (it == r.link.classes.end()) return print_link(r);
    proto::LinkState shown = r;
    shown.link = it->link;
    std::printf("class %s: ", name.c_str());
    print_link(shown);
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
    if (field == "class") return " (flag --class)";
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
/// One request: with --json, linkemd's result as it came; otherwise the decoded result goes
/// to `show`.
template <Method M, class Show>
int ask(const Settings& s, const proto::ParamsOf<M>& params, Show show) {
    client::Control c(s.control);
    const json r = c.call(M, proto::to_json(params), s.timeout);
    if (s.json)
        print_json(r);
    else
        show(c.decode<M>(r));
    return kOk;
}

std::string yes_no(bool b) {
    return b ? "yes" : "no";
}

void print_hello(const proto::Hello& h) {
    std::printf("linkemd %s (protocol %d), instance %s, up %.3fs\n", h.linkemd_version.c_str(),
                h.protocol_version, h.instance_id.c_str(), static_cast<double>(h.uptime_ns) / 1e9);
    std::string ports;
    for (const proto::PortInfo& p : h.ports)
        ports += (ports.empty() ? "" : ", ") + p.port + " " + p.device + " (link " +
                 (p.link_up ? "up" : "down") + ", " + std::to_string(p.speed_mbps) + " Mbit/s)";
    std::printf("ports: %s\n", ports.c_str());
    std::string dirs = kDirectionKeys[0];
    if (h.directions > 1) dirs += std::string(", ") + kDirectionKeys[1];
    std::printf("directions: %s\n", dirs.c_str());
    std::printf("parameters: generation %llu\n",
                static_cast<unsigned long long>(h.params_generation));
    const proto::TelemetryInfo& t = h.telemetry;
    std::printf("telemetry: %s (stats %u/s, delay %u/s, %llu delay samples/s per direction)\n",
                t.endpoint.c_str(), t.stats_hz, t.delay_hz,
                static_cast<unsigned long long>(t.delay_samples_per_s));
    const proto::Capabilities& c = h.capabilities;
    std::printf(
        "capabilities: capture %s, classes %s, load_config %s, save_config %s, scenario %s, "
        "shutdown %s, traffic %s\n",
        yes_no(c.capture).c_str(), yes_no(c.classes).c_str(), yes_no(c.load_config).c_str(),
        yes_no(c.save_config).c_str(), yes_no(c.scenario).c_str(), yes_no(c.shutdown).c_str(),
        yes_no(c.traffic).c_str());
}

struct TrafficFlags {
    TrafficFlagText text;  // [i] for traffic_flags()[i]
    bool on = false, off = false;
};

/// What the subcommands' options fill in.
struct Args {
    LinkFlagText link;
    std::string interval = "1s";
    unsigned count = 0;
    std::string key_dir, key_name;
    bool force = false;
    TrafficFlags traffic;
    std::string scenario_action, scenario_arg;
    std::string class_name;  // set --class, watch --class, classes NAME
    // classes: the action, its --match objects, --action, --at / --to, replace's FILE|-
    std::string classes_action = "list";
    std::vector<std::string> matches;
    std::string class_action;
    std::optional<long long> at;
    std::string file;  // classes replace's FILE, capture start's FILE
    // capture: start, stop, status; start's flags ([i] for capture_flags()[i]).
    std::string capture_action;
    CaptureFlagText capture;
};

int hello(const Settings& s, const Args&) {
    return ask<Method::hello>(s, {}, print_hello);
}

int get(const Settings& s, const Args&) {
    return ask<Method::get_link>(s, {}, print_link);
}

int set(const Settings& s, const Args& a) {
    proto::LinkUpdate update;
    try {
        update = proto::decode<proto::LinkUpdate>(link_update_from_flags(a.link));
    } catch (const FlagError& e) {
        throw Usage(e.what());
    }
    if (update.empty())
        throw Usage(
            "set: no link parameter given; give linkemd's link flags, e.g. linkemctl set "
            "--mean-delay 20ms --b-to-a-loss-probability 0.01 (see linkemctl set --help)");
    if (!a.class_name.empty()) update.class_name = a.class_name;
    return ask<Method::set_link>(s, update, [&a](const proto::LinkState& r) {
        if (r.applied == false)
            std::fprintf(stderr,
                         "linkemctl: linkemd published generation %llu but the data plane has not "
                         "acknowledged it yet (it adopts it as soon as it runs)\n",
                         static_cast<unsigned long long>(r.params_generation));
        if (!a.class_name.empty() && a.class_name != kDefaultClassName)
            print_class_link(r, a.class_name);
        else
            print_link(r);
    });
}

int stats(const Settings& s, const Args&) {
    return ask<Method::get_stats>(s, {}, [](const proto::StatsMessage& m) {
        print_stats_table(stdout, m.stats, nullptr, m.final);
    });
}

// The telemetry endpoint: --telemetry, or the one linkemd's hello names (a wildcard host
// replaced by the control endpoint's host).
std::string telemetry_endpoint(const Settings& s) {
    if (!s.telemetry.empty()) return s.telemetry;
    client::Control c(s.control);
    std::string e = c.call<Method::hello>({}, s.timeout).telemetry.endpoint;
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

/// The next message of `topic` decoded, with its JSON (--json prints that); a message the
/// decoders refuse is reported and skipped.
struct Received {
    proto::Telemetry t;
    json body;
};
std::optional<Received> next(client::Subscriber& sub, const char* topic, milliseconds timeout) {
    for (;;) {
        auto m = sub.receive(timeout);
        if (!m) return std::nullopt;
        if (m->topic != topic) continue;
        try {
            if (auto t = proto::decode_telemetry(m->topic, m->body))
                return Received{std::move(*t), std::move(m->body)};
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "linkemctl: a %s message was skipped: %s\n", topic, e.what());
        }
    }
}

// A row per traffic class and direction under watch's table (`only`: that class's alone):
// rx, tx, their rates since `last`, its drops (every cause) and packets in flight.
void print_class_rows(const LinkStats& st, const LinkStats* last, const std::string& only) {
    if (st.classes.empty()) return;
    const double dt = last ? static_cast<double>(st.t_ns - last->t_ns) / 1e9 : 0;
    auto rate = [&](std::uint64_t now, const std::uint64_t* before) {
        if (!before || dt <= 0 || now < *before) return std::string("-");
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(now - *before) / dt);
        return std::string(buf);
    };
    std::printf("  %-5s %-16s %-8s %-7s %14s %14s %11s %11s %10s %9s\n", "", "class", "action",
                "dir", "rx", "tx", "rx pps", "tx pps", "drops", "in_flight");
    for (const ClassStats& c : st.classes) {
        if (!only.empty() && c.name != only) continue;
        const ClassStats* p = nullptr;
        if (last)
            for (const ClassStats& o : last->classes)
                if (o.name == c.name) p = &o;
        for (unsigned d = 0; d < st.directions && d < 2; ++d) {
            const CounterSnapshot& k = c.dir[d];
            const CounterSnapshot* b = p ? &p->dir[d] : nullptr;
            std::printf("  %-5s %-16s %-8s %-7s %14llu %14llu %11s %11s %10llu %9llu\n", "class",
                        c.name.c_str(), std::string(to_string(c.action)).c_str(), kDirectionKeys[d],
                        static_cast<unsigned long long>(k.packets_in),
                        static_cast<unsigned long long>(k.packets_out),
                        rate(k.packets_in, b ? &b->packets_in : nullptr).c_str(),
                        rate(k.packets_out, b ? &b->packets_out : nullptr).c_str(),
                        static_cast<unsigned long long>(k.drops.total()),
                        static_cast<unsigned long long>(k.in_flight));
        }
    }
}

int watch(const Settings& s, const Args& a) {
    const auto iv = parse_duration(a.interval);
    if (!iv || *iv <= 0)
        throw Usage("--interval: '" + a.interval + "' is not allowed; expected " +
                    std::string(kDurationForm) + " greater than 0, e.g. 1s");
    const std::string endpoint = telemetry_endpoint(s);
    client::Subscriber sub(endpoint, {proto::kTopicStats}, s.curve);
    std::optional<LinkStats> last;
    std::string instance;
    unsigned printed = 0;
    for (;;) {
        const auto m = next(sub, proto::kTopicStats, s.timeout);
        if (!m)
            throw client::NoAnswer("no stats telemetry from " + endpoint + " within " +
                                   format_duration(s.timeout.count() * kNsPerMs));
        const LinkStats& st = m->t.stats->stats;
        const bool final = m->t.stats->final;
        const std::string& id = m->t.header.instance_id;
        if (id != instance) {
            if (!instance.empty()) std::printf("linkemd restarted (instance %s)\n", id.c_str());
            instance = id;
            last.reset();
        }
        if (!a.class_name.empty() &&
            std::none_of(st.classes.begin(), st.classes.end(),
                         [&](const ClassStats& c) { return c.name == a.class_name; })) {
            std::string known;
            for (const ClassStats& c : st.classes)
                known += (known.empty() ? "" : ", ") + c.name;
            throw Usage("watch --class: no class '" + a.class_name + "' in linkemd's stats; " +
                        (known.empty() ? std::string("the link has no traffic classes")
                                       : "its classes: " + known));
        }
        if (!last) {
            last = st;
            if (!final) continue;
        }
        if (!final && st.t_ns - last->t_ns < *iv) continue;
        if (s.json)
            std::printf("%s\n", m->body.dump().c_str());
        else {
            print_stats_table(stdout, st, &*last, final);
            print_class_rows(st, &*last, a.class_name);
        }
        std::fflush(stdout);
        last = st;
        ++printed;
        if (final || (a.count > 0 && printed >= a.count)) return kOk;
    }
}

int events(const Settings& s, const Args& a) {
    client::Subscriber sub(telemetry_endpoint(s), {proto::kTopicEvent}, s.curve);
    for (unsigned printed = 0; a.count == 0 || printed < a.count;) {
        const auto m = next(sub, proto::kTopicEvent, milliseconds(1000));
        if (!m) continue;
        const proto::Event& e = *m->t.event;
        if (s.json)
            std::printf("%s\n", m->body.dump().c_str());
        else
            std::printf("t=%.3fs %-7s %-16s %s\n", static_cast<double>(e.header.t_ns) / 1e9,
                        e.severity.c_str(), e.kind.c_str(), e.message.c_str());
        std::fflush(stdout);
        ++printed;
    }
    return kOk;
}

int save(const Settings& s, const Args&) {
    return ask<Method::save_config>(s, {}, [](const proto::SavedConfig& r) {
        std::printf("saved the parameters in force (generation %llu) to %s\n",
                    static_cast<unsigned long long>(r.params_generation), r.path.c_str());
    });
}

int load(const Settings& s, const Args&) {
    return ask<Method::load_config>(s, {}, [](const proto::LinkState& r) {
        std::string ignored;
        for (const std::string& k : r.ignored.value_or(std::vector<std::string>{}))
            ignored += (ignored.empty() ? "" : ", ") + k;
        if (!ignored.empty())
            std::printf("changed in the file but needing a restart (ignored): %s\n",
                        ignored.c_str());
        print_link(r);
    });
}

int shutdown(const Settings& s, const Args&) {
    return ask<Method::shutdown>(s, {},
                                 [](const proto::Empty&) { std::printf("linkemd is stopping\n"); });
}

int keygen(const Settings& s, const Args& a) {
    client::KeyPair k;
    std::pair<std::string, std::string> paths;
    try {
        k = client::generate_key_pair();
        paths = client::write_certificates(a.key_dir, a.key_name, k, a.force);
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

void print_traffic(const proto::TrafficState& r) {
    if (!r.available) {
        std::printf("this linkemd has no built-in traffic (it runs on real ports)\n");
        return;
    }
    const TrafficSpec& t = r.config.spec;
    const bool sine = t.pattern == TrafficPattern::sine;
    std::printf("built-in traffic: %s, %s at %s (%.0f frames/s), %u B frames%s, run %llu\n",
                r.config.running ? "running" : "stopped", std::string(to_string(t.pattern)).c_str(),
                format_rate(t.rate_bps).c_str(), r.frames_per_s, t.frame_bytes,
                sine ? (", period " + format_duration(t.period)).c_str() : "",
                static_cast<unsigned long long>(r.run));
}

int traffic(const Settings& s, const Args& a) {
    const TrafficFlags& f = a.traffic;
    if (f.on && f.off) throw Usage("--on and --off: give one of them");
    proto::TrafficUpdate update;
    try {
        update = proto::decode<proto::TrafficUpdate>(traffic_update_from_flags(f.text));
    } catch (const FlagError& e) {
        throw Usage(e.what());  // the form; linkemd checks the ranges
    }
    if (f.on) update.running = true;
    if (f.off) update.running = false;
    if (update.empty()) return ask<Method::get_traffic>(s, {}, print_traffic);
    return ask<Method::set_traffic>(s, update, print_traffic);
}

// ------------------------------------------------------------------- traffic classes
// One --match (class_match_json_from_text: "protocol=udp,b_port=5060-5061", `any`, a JSON
// object, or several objects separated by ';'), its refusal as a usage error.
json match_from_text(const std::string& t) {
    try {
        return class_match_json_from_text(t, "--match");
    } catch (const ParamError& e) {
        throw Usage(e.field() + ": " + e.message());
    }
}

// The link's classes as get_link gives them (JSON), and its generation.
struct ClassList {
    json classes;
    std::uint64_t generation = 0;
};

ClassList get_classes(const Settings& s, client::Control& c) {
    const json r = c.call(Method::get_link, json::object(), s.timeout);
    if (!r.contains("classes") || !r["classes"].is_array())
        throw client::Refused(proto::Error{
            proto::ErrorCode::unavailable,
            "this linkemd does not know traffic classes (its get_link has no 'classes')", ""});
    return {r["classes"], r.value("params_generation", std::uint64_t{0})};
}

std::string class_names(const json& classes) {
    std::string out = kDefaultClassName;
    for (const json& c : classes)
        out += ", " + c["name"].get<std::string>();
    return out;
}

std::size_t class_index(const json& classes, const std::string& name, const std::string& action) {
    if (name == kDefaultClassName)
        throw Usage("classes " + action +
                    ": 'default' is not in the list: it takes every packet no class matches "
                    "(change its parameters with linkemctl set)");
    for (std::size_t i = 0; i < classes.size(); ++i)
        if (classes[i]["name"] == name) return i;
    throw Usage("classes " + action + ": no class '" + name +
                "'; the link's classes: " + class_names(classes));
}

// A position --at / --to: 0 .. `max`.
std::size_t position(const std::optional<long long>& at, std::size_t max, const char* flag,
                     std::size_t fallback) {
    if (!at) return fallback;
    if (*at < 0 || static_cast<std::size_t>(*at) > max)
        throw Usage(std::string(flag) + ": " + std::to_string(*at) +
                    " is not allowed; allowed 0 .. " + std::to_string(max) +
                    " (the positions of the list, as in classes[N])");
    return static_cast<std::size_t>(*at);
}

// The class `add` builds from its flags.
json class_from_flags(const Args& a) {
    json c = {{"name", a.class_name}};
    if (a.matches.empty())
        throw Usage(
            "classes add: give --match, e.g. --match 'protocol=udp,b_port=5060-5061' ("
            "several --match: any may hold; --match any: every packet)");
    json match = json::array();
    for (const std::string& m : a.matches) {
        const json j = match_from_text(m);
        if (j.is_array())
            match.insert(match.end(), j.begin(), j.end());
        else
            match.push_back(j);
    }
    c["match"] = match.size() == 1 ? match[0] : match;
    if (!a.class_action.empty()) c["action"] = a.class_action;
    LinkFlagText flags = a.link;
    const std::vector<LinkParamFlag>& all = link_param_flags();
    for (std::size_t i = 0; i < all.size() && i < flags.size(); ++i)
        if (all[i].key == "limiter" && flags[i][0] == "link") {
            c["limiter"] = "link";  // share the link's limiter
            flags[i][0].clear();
        }
    json keys;
    try {
        keys = link_update_from_flags(flags);
    } catch (const FlagError& e) {
        throw Usage(e.what());
    }
    for (const auto& [key, value] : keys.items())
        c[key] = value;
    return c;
}

// Reads replace's FILE (or stdin for "-"): a list of classes, or an object with one under
// "classes" (a config file).
json classes_from_file(const std::string& file) {
    json j;
    try {
        if (file == "-") {
            j = json::parse(std::cin);
        } else {
            std::ifstream in(file);
            if (!in) throw Usage("classes replace: cannot read " + file);
            j = json::parse(in);
        }
    } catch (const json::exception& e) {
        throw Usage("classes replace: " + (file == "-" ? std::string("stdin") : file) +
                    " is not valid JSON: " + e.what());
    }
    if (j.is_object() && j.contains("classes")) j = j["classes"];
    if (!j.is_array())
        throw Usage(
            "classes replace: expected a JSON list of classes (or an object with "
            "\"classes\", a config file), got " +
            std::string(j.type_name()));
    return j;
}

int classes(const Settings& s, const Args& a) {
    const std::string& action = a.classes_action;
    client::Control c(s.control);
    if (action == "list") {
        const ClassList l = get_classes(s, c);
        if (s.json)
            print_json(l.classes);
        else
            print_classes(l.classes, l.generation);
        return kOk;
    }
    // The flags and the file first: bad input to linkemctl is refused before asking linkemd.
    const json added = action == "add" ? class_from_flags(a) : json();
    json next;
    if (action == "replace") {
        next = classes_from_file(a.file);
    } else if (action == "clear") {
        next = json::array();
    } else {
        next = get_classes(s, c).classes;
        if (action == "add") {
            const std::size_t at = position(a.at, next.size(), "--at", next.size());
            next.insert(next.begin() + static_cast<std::ptrdiff_t>(at), added);
        } else if (action == "remove") {
            next.erase(next.begin() +
                       static_cast<std::ptrdiff_t>(class_index(next, a.class_name, action)));
        } else if (action == "move") {
            const std::size_t from = class_index(next, a.class_name, action);
            const json moved = next[from];
            next.erase(next.begin() + static_cast<std::ptrdiff_t>(from));
            const std::size_t to = position(a.at, next.size(), "--to", from);
            next.insert(next.begin() + static_cast<std::ptrdiff_t>(to), moved);
        }
    }
    // One change: the whole list, checked by linkemd (a refusal names "classes[N].key").
    const json r = c.call(Method::set_link, json{{"classes", next}}, s.timeout);
    if (s.json) {
        print_json(r);
        return kOk;
    }
    const proto::LinkState st = c.decode<Method::set_link>(r);
    if (st.applied == false)
        std::fprintf(stderr,
                     "linkemctl: linkemd published generation %llu but the data plane has not "
                     "acknowledged it yet (it adopts it as soon as it runs)\n",
                     static_cast<unsigned long long>(st.params_generation));
    print_classes(r["classes"], st.params_generation);
    return kOk;
}

// ------------------------------------------------------------------------- scenarios
std::string seconds_text(DurationNs t) {
    return json_value_text(json(static_cast<double>(t) / static_cast<double>(kNsPerSec)));
}

void print_scenario(const proto::ScenarioStatus& r) {
    if (!r.loaded) {
        std::printf("no scenario loaded\n");
        return;
    }
    const proto::ScenarioPosition& p = r.position;
    std::printf("scenario %s: %s at %.3f s of %.3f s%s\n", p.name.c_str(), p.state.c_str(),
                p.position_s, p.duration_s,
                r.loop ? (", looping (repeat " + std::to_string(p.repeat) + ")").c_str() : "");
    const std::size_t n = r.scenario ? r.scenario->steps.size() : r.steps;
    if (r.scenario && p.step >= 0 && static_cast<std::size_t>(p.step) < n) {
        const ScenarioStep& st = r.scenario->steps[static_cast<std::size_t>(p.step)];
        std::printf("  step %lld of %zu (at %s s)%s%s\n", static_cast<long long>(p.step + 1), n,
                    seconds_text(st.at).c_str(), st.note.empty() ? "" : (": " + st.note).c_str(),
                    st.ramp ? (", a ramp until " + seconds_text(st.until) + " s").c_str() : "");
    } else {
        std::printf("  before its first step (%zu steps)\n", n);
    }
    if (!r.description.empty()) std::printf("  %s\n", r.description.c_str());
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
        if (!s.json)
            std::printf("%-20s %6.0f s%s  %s\n", sc.name.c_str(),
                        static_cast<double>(sc.duration) / kNsPerSec, sc.loop ? " loop" : "     ",
                        sc.description.c_str());
    }
    if (s.json) print_json(list);
    return kOk;
}

// What load_scenario gets for FILE|NAME: the file read here (so that it need not be on
// linkemd's machine; trace files it names must be), or a built-in's name.
proto::LoadScenario scenario_load_params(const std::string& what) {
    proto::LoadScenario params;
    std::error_code ec;
    if (!std::filesystem::exists(what, ec)) {
        if (!builtin_scenario(what))
            throw Usage("scenario play: '" + what +
                        "' is neither a file nor a built-in scenario; built-in: " +
                        builtin_scenario_names() + " (linkemctl scenario list)");
        params.name = what;
        return params;
    }
    const std::string path = std::filesystem::absolute(what, ec).string();
    try {
        params.scenario = read_scenario_file(path);
    } catch (const ScenarioError& e) {
        throw Usage(std::string("scenario play: ") + e.what());
    }
    const std::string request =
        proto::encode_request(0, proto::name(Method::load_scenario), proto::to_json(params));
    if (request.size() + 64 > proto::kMaxRequestBytes) {
        std::fprintf(stderr,
                     "linkemctl: %s is too large to send (more than %zu bytes as JSON): linkemd "
                     "reads it from that path itself\n",
                     path.c_str(), proto::kMaxRequestBytes);
        params = {};
        params.path = path;
    }
    return params;
}

/// The scenario methods by the action's name (play loads, then starts).
Method scenario_method(const std::string& action) {
    static const std::map<std::string, Method> methods = {
        {"play", Method::start_scenario},    {"pause", Method::pause_scenario},
        {"resume", Method::resume_scenario}, {"stop", Method::stop_scenario},
        {"seek", Method::seek_scenario},     {"status", Method::get_scenario}};
    return methods.at(action);
}

int scenario(const Settings& s, const Args& a) {
    const std::string& action = a.scenario_action;
    if (action == "list") return scenario_list(s);
    if (action == "play") {
        client::Control c(s.control);
        c.call<Method::load_scenario>(scenario_load_params(a.scenario_arg), s.timeout);
        return ask<Method::start_scenario>(s, {}, print_scenario);
    }
    if (action == "seek") {
        const auto t = parse_duration(a.scenario_arg);
        if (!t)
            throw Usage("scenario seek: '" + a.scenario_arg + "' is not " +
                        std::string(kDurationForm) + ", e.g. 12s");
        return ask<Method::seek_scenario>(
            s, {static_cast<double>(*t) / static_cast<double>(kNsPerSec)}, print_scenario);
    }
    switch (scenario_method(action)) {
        case Method::pause_scenario:
            return ask<Method::pause_scenario>(s, {}, print_scenario);
        case Method::resume_scenario:
            return ask<Method::resume_scenario>(s, {}, print_scenario);
        case Method::stop_scenario:
            return ask<Method::stop_scenario>(s, {}, print_scenario);
        default:
            return ask<Method::get_scenario>(s, {}, print_scenario);
    }
}

// ------------------------------------------------------------------------------ capture
/// "1.5 kB", "56.3 MB": a byte count for a person (SI, as Wireshark shows file sizes).
std::string bytes_text(std::uint64_t b) {
    char buf[32];
    if (b < 1000)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
    else if (b < 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(b) / 1e3);
    else if (b < 1000ull * 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(b) / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(b) / 1e9);
    return buf;
}

/// One line: "capture running: FILE, 1234 records (out 1200, drop 34), 56.3 kB, 0 missed,
/// 2.5 s"; once stopped, "capture stopped (duration): ..." and a write error's reason.
void print_capture(const capture::Status& s) {
    if (!s.running && s.file.empty()) {
        std::printf("no capture (linkemctl capture start FILE starts one)\n");
        return;
    }
    std::string by_point;
    for (unsigned i = 0; i < 3; ++i)
        if (s.settings.points & (1u << i))
            by_point += (by_point.empty() ? "" : ", ") +
                        std::string(capture::point_name(static_cast<capture::Point>(1u << i))) +
                        " " + std::to_string(s.records_by_point[i]);
    const std::string state =
        s.running ? "running"
                  : "stopped (" + std::string(capture::stop_reason_name(s.reason)) + ")";
    std::printf("capture %s: %s, %llu records (%s), %s, %llu missed, %.1f s%s%s\n", state.c_str(),
                s.file.c_str(), static_cast<unsigned long long>(s.records), by_point.c_str(),
                bytes_text(s.bytes).c_str(), static_cast<unsigned long long>(s.missed),
                static_cast<double>(s.elapsed) / 1e9, s.error.empty() ? "" : ": ", s.error.c_str());
}

int capture_cmd(const Settings& s, const Args& a) {
    if (a.capture_action == "stop") return ask<Method::capture_stop>(s, {}, print_capture);
    if (a.capture_action == "status") return ask<Method::capture_status>(s, {}, print_capture);
    // start: the file as linkemd will see it (linkemd runs in another directory).
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(a.file, ec);
    json params;
    try {
        params = capture_params_from_flags(ec ? a.file : abs.lexically_normal().string(), a.capture,
                                           "--");
    } catch (const FlagError& e) {
        throw Usage("capture start: " + std::string(e.what()));
    }
    capture::Settings settings;
    try {
        settings = capture_settings_from_json(params);  // the ranges, before asking
    } catch (const ParamError& e) {
        throw Usage("capture start: " + capture_flag_name(e.field(), "--", "FILE") + ": " +
                    e.message());
    }
    return ask<Method::capture_start>(s, settings, print_capture);
}

// --------------------------------------------------------------------- the command table
void link_options(CLI::App& c, Args& a) {
    add_link_flag_options(c, a.link, "Link parameters (both directions)");
    c.footer(kLinkFlagFooter);
}

void watch_options(CLI::App& c, Args& a) {
    c.add_option("--interval", a.interval, "time between two tables (default 1s)")
        ->type_name("DURATION");
    c.add_option("--class", a.class_name,
                 "with traffic classes: show this class's rows only (default: every class)")
        ->type_name("NAME");
    c.add_option("--count", a.count, "stop after N tables (default 0: until interrupted)")
        ->type_name("N");
}

void events_options(CLI::App& c, Args& a) {
    c.add_option("--count", a.count, "stop after N events (default 0: until interrupted)")
        ->type_name("N");
}

void keygen_options(CLI::App& c, Args& a) {
    c.add_option("DIR", a.key_dir, "directory to write into (created)")->required();
    c.add_option("NAME", a.key_name, "file name without extension")->required();
    c.add_flag("--force", a.force, "replace existing files");
}

void traffic_options(CLI::App& c, Args& a) {
    add_traffic_flag_options(c, a.traffic.text, "", {{"pattern", "(starts it)"}});
    c.add_flag("--on", a.traffic.on, "start sending");
    c.add_flag("--off", a.traffic.off, "stop sending");
}

void scenario_options(CLI::App& c, Args& a) {
    c.require_subcommand(1);
    auto action = [&c, &a](const char* name, const char* help) {
        CLI::App* sub = c.add_subcommand(name, help);
        sub->callback([&a, name] { a.scenario_action = name; });
        return sub;
    };
    action("play", "load a scenario (a file here, JSON or CSV, or a built-in's name) and start it")
        ->add_option("FILE|NAME", a.scenario_arg, "the scenario")
        ->required();
    action("pause", "stop where it is; the parameters stay");
    action("resume", "go on from where it paused");
    action("stop", "stop playing; the parameters in force stay");
    action("seek", "go to a position (playing: play on from there; else: pause there)")
        ->add_option("T", a.scenario_arg, "the position, e.g. 12s")
        ->required();
    action("status", "the scenario loaded, where it is, its step");
    action("list", "the built-in scenarios (no linkemd needed)");
}

void capture_options(CLI::App& c, Args& a) {
    c.require_subcommand(1);
    auto action = [&c, &a](const char* name, const char* help) {
        CLI::App* sub = c.add_subcommand(name, help);
        sub->callback([&a, name] { a.capture_action = name; });
        return sub;
    };
    CLI::App* start = action("start",
                             "start writing a capture to FILE (pcapng, on linkemd's "
                             "machine); prints its status line");
    start
        ->add_option("FILE", a.file,
                     "the file linkemd writes (a relative path is made absolute here)")
        ->required();
    const std::vector<CaptureFlag>& flags = capture_flags();
    a.capture.assign(flags.size(), "");
    for (std::size_t i = 0; i < flags.size(); ++i)
        start->add_option("--" + flags[i].flag, a.capture[i], flags[i].help)
            ->type_name(flags[i].value_name);
    action("stop", "stop the capture (the file is finished); prints its last status");
    action("status", "the capture running or last run: file, records, bytes, missed, elapsed");
}

void set_options(CLI::App& c, Args& a) {
    link_options(c, a);
    c.add_option("--class", a.class_name,
                 "change this traffic class's parameters instead of the link's own ('default'); "
                 "linkemctl classes lists them")
        ->type_name("NAME");
}

void classes_options(CLI::App& c, Args& a) {
    c.require_subcommand(0, 1);
    auto action = [&c, &a](const char* name, const char* help) {
        CLI::App* sub = c.add_subcommand(name, help);
        sub->callback([&a, name] { a.classes_action = name; });
        return sub;
    };
    action("list", "the classes in order (also without an action)");
    CLI::App* add = action("add", "add a class (at the end, or at --at N)");
    add->add_option("NAME", a.class_name, "its name: 1 to 32 of a-z, 0-9, '_', '-'")->required();
    add->add_option("--match", a.matches,
                    "what it takes: KEY=VALUE,... (ethertype, protocol, a_net, b_net, a_port, "
                    "b_port, vlan, dscp; as seen on a packet from A to B), e.g. "
                    "'protocol=udp,b_port=5060-5061'; 'any' for every packet; repeat for "
                    "several (any may hold)")
        ->type_name("MATCH")
        ->allow_extra_args(false)
        ->required();
    add->add_option("--action", a.class_action,
                    "emulate (its own link parameters; the default), pass (untouched) or drop")
        ->type_name("ACTION");
    add->add_option("--at", a.at, "its position in the list (0: first; default: last)")
        ->type_name("N");
    add_link_flag_options(*add, a.link, "Its link parameters (action emulate)");
    add->footer(std::string(kLinkFlagFooter) +
                "\n--limiter link: share the link's limiter (one bottleneck for the classes that "
                "share it).");
    action("remove", "remove a class")->add_option("NAME", a.class_name, "the class")->required();
    CLI::App* move = action("move", "move a class to another position");
    move->add_option("NAME", a.class_name, "the class")->required();
    move->add_option("--to", a.at, "its new position (0: first)")->type_name("N")->required();
    action("replace", "replace the whole list with a JSON file's (a list, or a config file's)")
        ->add_option("FILE", a.file, "the file, or - for stdin")
        ->required();
    action("clear", "remove every class (all packets are default's)");
}

/// A subcommand: its name and help, the options it adds, what it runs, and the method a
/// refusal names.
struct Command {
    const char* name;
    const char* help;
    void (*options)(CLI::App&, Args&);
    int (*run)(const Settings&, const Args&);
    Method method;
};

const Command kCommands[] = {
    {"hello", "who is there: versions, instance, ports, telemetry", nullptr, hello, Method::hello},
    {"get", "the link parameters in force, per direction", nullptr, get, Method::get_link},
    {"set",
     "change link parameters while traffic flows (linkemd's link flags); prints the parameters "
     "now in force",
     set_options, set, Method::set_link},
    {"classes",
     "the link's traffic classes: list, add, remove, move, replace, clear (docs/classes.md)",
     classes_options, classes, Method::set_link},
    {"stats", "the newest counters (cumulative since start)", nullptr, stats, Method::get_stats},
    {"watch", "a live table of counters and rates from the stats telemetry", watch_options, watch,
     Method::hello},
    {"events", "print the event telemetry as it comes", events_options, events, Method::hello},
    {"save", "write the parameters in force into linkemd's --config file", nullptr, save,
     Method::save_config},
    {"load", "re-read linkemd's --config file (as SIGHUP does)", nullptr, load,
     Method::load_config},
    {"shutdown", "stop linkemd (it must run with --allow-remote-shutdown)", nullptr, shutdown,
     Method::shutdown},
    {"keygen", "write a CURVE key pair: DIR/NAME.key (public) and DIR/NAME.key_secret",
     keygen_options, keygen, Method::hello},
    {"traffic", "show or change linkemd's built-in traffic (virtual ports); no flags: show",
     traffic_options, traffic, Method::set_traffic},
    {"scenario", "play a scenario (link parameters that change over time) in linkemd",
     scenario_options, scenario, Method::get_scenario},
    {"capture",
     "capture what the emulator does to each packet into a pcapng file: start, stop, status "
     "(docs/capture.md)",
     capture_options, capture_cmd, Method::capture_status},
};

// ---------------------------------------------------------------------------- running
int refused(bool json_output, const Command& command, const Args& a, const proto::Error& e) {
    const std::string name = command.name;
    const std::string capture_flag = capture_flag_name(e.field, "--", "FILE");
    const std::string hint = name == "set"       ? link_flag_hint(e.field)
                             : name == "traffic" ? traffic_flag_hint(e.field)
                             : name == "capture" && !e.field.empty() && capture_flag != e.field
                                 ? " (" + capture_flag + ")"
                                 : "";
    std::string method(proto::name(command.method));
    if (name == "classes" && a.classes_action == "list") method = proto::name(Method::get_link);
    if (name == "capture")
        method = proto::name(a.capture_action == "start"  ? Method::capture_start
                             : a.capture_action == "stop" ? Method::capture_stop
                                                          : Method::capture_status);
    if (name == "scenario")
        method = a.scenario_action == "play"
                     ? "load_scenario/start_scenario"
                     : std::string(proto::name(scenario_method(a.scenario_action)));
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

int run(const Command& command, const Global& g, const Args& a) {
    try {
        return command.run(settings(g), a);
    } catch (const Usage& e) {
        std::fprintf(stderr, "linkemctl: %s\n", e.what());
        return kUsage;
    } catch (const client::Refused& e) {
        return refused(g.json, command, a, e.error());
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
}

void add_global_options(CLI::App& app, Global& g) {
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
    static bool version = false;  // answered before parsing (main)
    app.add_flag("--version", version, "print linkemctl's version and exit");
}

/// Parses the command line; returns an exit code when there is nothing to run (help, a
/// usage error), -1 otherwise.
int parse(CLI::App& app, int argc, char** argv) {
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
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::string(argv[1]) == "--version") {
        std::printf("linkemctl %s (protocol %d)\n", LINKEM_VERSION, proto::kVersion);
        return kOk;
    }
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
    Args a;
    add_global_options(app, g);
    std::vector<std::pair<const Command*, CLI::App*>> commands;
    for (const Command& c : kCommands) {
        CLI::App* sub = app.add_subcommand(c.name, c.help);
        if (c.options) c.options(*sub, a);
        commands.emplace_back(&c, sub);
    }
    if (const int rc = parse(app, argc, argv); rc >= 0) return rc;
    for (const auto& [c, sub] : commands)
        if (sub->parsed()) return run(*c, g, a);
    return kUsage;
}
