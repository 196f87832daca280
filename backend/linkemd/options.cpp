#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <ranges>

#include <CLI/CLI.hpp>

#include "linkem/capture_flags.hpp"
#include "linkem/capture_json.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/cli_link_flags.hpp"
#include "linkem/cli_traffic_flags.hpp"
#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/stats.hpp"
#include "linkem/trace_file.hpp"
#include "linkem/traffic_flags.hpp"
#include "linkem/traffic_json.hpp"
#include "linkem/units.hpp"

namespace linkem::linkemd {

using nlohmann::json;

namespace {

bool parse_u64(const std::string& s, std::uint64_t& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

template <class Keys>
std::string join_keys(const Keys& keys) {
    std::string s;
    for (const auto& k : keys)
        s += (s.empty() ? "'" : ", '") + std::string(k) + "'";
    return s;
}

std::uint64_t integer_option(const std::string& name, const std::string& v, std::uint64_t lo,
                             std::uint64_t hi) {
    std::uint64_t x;
    if (!parse_u64(v, x) || x < lo || x > hi)
        throw UsageError(name + ": '" + v + "' is not allowed; allowed a whole number " +
                         std::to_string(lo) + " .. " + std::to_string(hi));
    return x;
}

std::uint64_t integer_key(const std::string& where, const json& v, std::uint64_t lo,
                          std::uint64_t hi) {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < lo || v.get<std::uint64_t>() > hi)
        throw UsageError(where + ": " + v.dump() + " is not allowed; allowed a whole number " +
                         std::to_string(lo) + " .. " + std::to_string(hi));
    return v.get<std::uint64_t>();
}

std::string string_key(const std::string& where, const json& v) {
    if (!v.is_string()) throw UsageError(where + ": expected a string, got " + v.dump());
    return v.get<std::string>();
}

// Arguments after "--" go to the EAL: they are moved to `eal`. Returns how many of argv are
// linkemd's own.
int split_eal_args(int argc, char** argv, std::vector<std::string>& eal) {
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--") {
            for (int j = i + 1; j < argc; ++j)
                eal.emplace_back(argv[j]);
            return i;
        }
    }
    return argc;
}

// Ports.
void add_port_flags(CLI::App& app, CommandLine& cl) {
    app.add_option("--port-a", cl.port_a,
                   "port A: DPDK device/devargs (net_null0, net_tap0,iface=lk0, 0000:3b:00.0) "
                   "or a network interface (veth1)")
        ->type_name("DEV")
        ->group("Ports");
    app.add_option("--port-b", cl.port_b, "port B; omitted: single-port mode (back out of A)")
        ->type_name("DEV")
        ->group("Ports");
}

// The config file.
void add_config_flags(CLI::App& app, CommandLine& cl) {
    app.add_option("--config", cl.config,
                   "JSON config file: the flags' names as JSON keys (mean_delay_us, ...; at the "
                   "top level for both directions, in \"a_to_b\"/\"b_to_a\" for one) and the "
                   "link's \"classes\" (docs/classes.md); flags override it")
        ->type_name("FILE")
        ->group("Config");
    app.add_option("--scenario", cl.scenario,
                   "play a scenario from the start: a built-in's name (linkemctl scenario list) "
                   "or a file, JSON or CSV (docs/scenarios.md)")
        ->type_name("FILE|NAME")
        ->group("Config");
    app.add_flag("--print-config", cl.print_config,
                 "print the effective config as JSON and exit (no EAL start)")
        ->group("Config");
}

// Threads and I/O.
void add_thread_flags(CLI::App& app, CommandLine& cl) {
    app.add_option("--workers", cl.workers,
                   "shared (one lcore for both directions; default below 4 CPUs) or N lcores per "
                   "direction (1..64, default 1), each with its own queue pair and emulator; "
                   "flows spread over the queues by RSS (net_af_packet: hash fanout)")
        ->type_name("shared|N")
        ->group("Threads and I/O");
    // --lcores shared|1: the same as --workers, not listed in --help (the EAL has an option of
    // that name).
    app.add_option("--lcores", cl.lcores)->group("");
    app.add_option("--burst", cl.burst, "rx/tx burst size, 1..512 (default 16)")
        ->type_name("N")
        ->group("Threads and I/O");
    app.add_option("--mbufs", cl.mbufs, "mbufs in the pools (default: sized from the limits)")
        ->type_name("N")
        ->group("Threads and I/O");
    app.add_flag("--hold-mbufs", cl.hold_mbufs,
                 "queue whole mbufs instead of exchanging packet buffers (slower; for "
                 "comparison)")
        ->group("Threads and I/O");
}

// Run control and output.
void add_output_flags(CLI::App& app, CommandLine& cl) {
    app.add_option("--stats-interval", cl.stats_interval, "periodic stats (default 1s; 0: none)")
        ->type_name("DURATION")
        ->group("Run control and output");
    app.add_flag("--stats-json", cl.stats_json, "stats as one JSON object per line on stdout")
        ->group("Run control and output");
    app.add_option("--duration", cl.duration, "stop after this long (default: until SIGINT)")
        ->type_name("DURATION")
        ->group("Run control and output");
}

// Control and telemetry (docs/protocol.md).
void add_control_flags(CLI::App& app, CommandLine& cl) {
    const char* kControl = "Control and telemetry (docs/protocol.md)";
    app.add_option("--control", cl.control,
                   std::string("control socket (ROUTER) to bind: tcp://HOST:PORT or ipc://PATH "
                               "(default ") +
                       proto::kDefaultControl + ")")
        ->type_name("ENDPOINT")
        ->group(kControl);
    app.add_flag("--no-control", cl.no_control,
                 "no control and no telemetry socket (counters on stdout, SIGHUP reloads)")
        ->group(kControl);
    app.add_option(
           "--telemetry", cl.telemetry,
           std::string("telemetry socket (PUB) to bind (default ") + proto::kDefaultTelemetry + ")")
        ->type_name("ENDPOINT")
        ->group(kControl);
    app.add_option("--telemetry-hz", cl.telemetry_hz,
                   "stats messages per second, 1..100 (default 10)")
        ->type_name("N")
        ->group(kControl);
    app.add_option("--delay-samples-per-s", cl.delay_samples_per_s,
                   "sampled packets per second and direction in the delay topic, 0..20000 "
                   "(default 2000)")
        ->type_name("N")
        ->group(kControl);
    app.add_option("--curve-secret", cl.curve_secret,
                   "linkemd's CURVE key pair (a .key_secret file from `linkemctl keygen`): "
                   "encrypt and authenticate both sockets")
        ->type_name("FILE")
        ->group(kControl);
    app.add_option("--curve-allow", cl.curve_allow,
                   "directory of the client public keys (*.key) let in with CURVE")
        ->type_name("DIR")
        ->group(kControl);
    app.add_flag("--insecure-listen", cl.insecure_listen,
                 "allow a non-loopback endpoint without CURVE (anyone who reaches it controls "
                 "the link)")
        ->group(kControl);
    app.add_flag("--allow-remote-shutdown", cl.allow_remote_shutdown,
                 "let clients stop linkemd (the shutdown method)")
        ->group(kControl);
}

// Built-in traffic and the demo.
void add_traffic_flags(CLI::App& app, CommandLine& cl) {
    const char* kTraffic = "Built-in traffic (virtual ports only) and the demo";
    app.add_flag("--demo", cl.demo,
                 "run the demo: virtual ports (no root, no NIC), built-in traffic of 1000 "
                 "frames/s each way, a link of 20ms +- 4ms correlated delay, a 100Mbit/s "
                 "spacer and 0.5% loss; other flags and --config still apply on top")
        ->group(kTraffic);
    add_traffic_flag_options(
        app, cl.traffic, kTraffic,
        {{"pattern", "(starts the generator; needs --port-a virtual [--port-b virtual] or --demo)"},
         {"rate_bps", "(default 10 000 frames/s of --frame-size, 1000 with --demo)"},
         {"frame_size_bytes", "(64..1518; default 1518)"},
         {"period_us", "(default 30s)"}});
}

// Capture from the start (docs/capture.md).
void add_capture_flags(CLI::App& app, CommandLine& cl) {
    const char* kCapture = "Capture from the start (docs/capture.md)";
    app.add_option("--capture", cl.capture,
                   "write a capture of what the emulator does to each packet to this pcapng "
                   "file from the start (linkemctl capture stop ends it)")
        ->type_name("FILE")
        ->group(kCapture);
    const std::vector<CaptureFlag>& flags = capture_flags();
    cl.capture_flags.assign(flags.size(), "");
    for (std::size_t i = 0; i < flags.size(); ++i)
        app.add_option("--capture-" + flags[i].flag, cl.capture_flags[i], flags[i].help)
            ->type_name(flags[i].value_name)
            ->group(kCapture);
}

}  // namespace

std::optional<CommandLine> parse_command_line(int argc, char** argv) {
    CommandLine cl;
    const int n = split_eal_args(argc, argv, cl.eal_args);
    CLI::App app{"linkemd: DPDK link emulator data plane (delay, jitter, rate limits, loss)",
                 "linkemd"};
    app.footer(
        std::string(kLinkFlagFooter) +
        "\n"
        "Arguments after `--` go to the DPDK EAL unchanged (e.g. -- --file-prefix x).\n"
        "Signals: SIGINT/SIGTERM stop (final counters are printed), SIGHUP re-reads --config.\n"
        "Exit codes: 0 ok, 1 DPDK/port failure, 2 bad arguments or config.");
    add_port_flags(app, cl);
    // The per-direction variants are listed once, in the footer.
    add_link_flag_options(app, cl.params, "Link parameters (both directions)");
    add_config_flags(app, cl);
    add_thread_flags(app, cl);
    add_output_flags(app, cl);
    add_control_flags(app, cl);
    add_traffic_flags(app, cl);
    add_capture_flags(app, cl);
    bool show_version = false;
    app.add_flag("--version", show_version, "print linkemd's version and exit");
    try {
        app.parse(n, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return std::nullopt;
    } catch (const CLI::ParseError& e) {
        throw UsageError(e.what());
    }
    if (show_version) {
        std::cout << "linkemd " << version() << " (protocol " << proto::kVersion << ")\n";
        return std::nullopt;
    }
    return cl;
}

bool virtual_ports(const Options& o) {
    return o.dataplane.port_a == kVirtualPort;
}

const char* version() {
    return LINKEM_VERSION;
}

namespace {

// --workers or "workers" (a number may be given as a JSON number); the earlier --lcores /
// "lcores" take shared and 1 with a note, and say what replaced their pipeline layouts.
dp::Workers workers_option(const CommandLine& cl, const json& file, const std::string& src) {
    std::string v, where;
    bool old_name = false;
    if (!cl.workers.empty()) {
        v = cl.workers;
        where = "--workers";
    } else if (!cl.lcores.empty()) {
        v = cl.lcores;
        where = "--lcores";
        old_name = true;
    } else if (file.contains("workers")) {
        where = src + ": workers";
        v = file["workers"].is_number_unsigned()
                ? std::to_string(file["workers"].get<std::uint64_t>())
                : string_key(where, file["workers"]);
    } else if (file.contains("lcores")) {
        where = src + ": lcores";
        v = string_key(where, file["lcores"]);
        old_name = true;
    } else {
        return dp::default_workers(dp::Eal::usable_cpus());
    }
    if (old_name && (v == "2" || v == "3"))
        throw UsageError(
            where + " " + v +
            ": the pipeline layouts (2 and 3 lcores per direction) are gone: they "
            "forwarded less than one lcore per direction; use --workers N (\"workers\" "
            "in a config file): N lcores per direction, each with its own queue");
    if (old_name && v != "shared" && v != "1")
        throw UsageError(where + ": '" + v + "' is not allowed; allowed 'shared' or '1' (now " +
                         "--workers shared|N)");
    const auto w = dp::parse_workers(v);
    if (!w)
        throw UsageError(where + ": '" + v + "' is not allowed; allowed 'shared' or 1 .. " +
                         std::to_string(dp::kMaxWorkers) + " (workers per direction)");
    if (old_name)
        std::fprintf(stderr, "linkemd: %s is now called %s\n", where.c_str(),
                     where.starts_with("--") ? "--workers" : "\"workers\"");
    return *w;
}

// The config file's JSON ({} without --config; `src` names it in messages). Refuses keys
// it does not know.
json read_config_file(const CommandLine& cl, const std::string& src) {
    const std::vector<LinkParamFlag>& flags = link_param_flags();
    json file = json::object();
    if (!cl.config.empty()) {
        std::ifstream in(cl.config);
        if (!in) throw UsageError(src + ": cannot open the file");
        try {
            file = json::parse(in);
        } catch (const json::exception& e) {
            throw UsageError(src + ": not valid JSON: " + e.what());
        }
        if (!file.is_object()) throw UsageError(src + ": expected a JSON object");
        for (const auto& [key, value] : file.items()) {
            static const auto known = {"port_a",
                                       "traffic",
                                       "port_b",
                                       "workers",
                                       "lcores",
                                       "burst",
                                       "stats_interval_us",
                                       "mbufs",
                                       "hold_mbufs",
                                       "control",
                                       "no_control",
                                       "telemetry",
                                       "telemetry_hz",
                                       "delay_samples_per_s",
                                       "curve_secret",
                                       "curve_allow",
                                       "insecure_listen",
                                       "allow_remote_shutdown",
                                       "scenario",
                                       "classes",
                                       kDirectionKeys[0],
                                       kDirectionKeys[1]};
            if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) ==
                    known.end() &&
                !link_param_flag(key))
                throw UsageError(src + ": unknown key '" + key + "'; known: " + join_keys(known) +
                                 ", and the link parameters for both directions: " +
                                 join_keys(std::views::transform(flags, &LinkParamFlag::key)));
            if (direction_of_key(key) >= 0 && !value.is_object())
                throw UsageError(src + ": " + key + ": expected an object of link parameters");
        }
        // Files the config names are found from its own directory.
        const std::filesystem::path dir = std::filesystem::path(cl.config).parent_path();
        resolve_trace_files(file, dir.empty() ? "." : dir.string());
        if (file.contains("scenario") && file["scenario"].is_string()) {
            const std::string v = file["scenario"].get<std::string>();
            if (!builtin_scenario(v) && !std::filesystem::path(v).is_absolute())
                file["scenario"] = ((dir.empty() ? "." : dir) / v).lexically_normal().string();
        }
    }
    return file;
}

// The demo: settings under the file's and the flags'.
// 1000 frames/s of 1518 B (12.1 Mbit/s, traffic_section) through a 100 Mbit/s spacer: 12 %
// utilisation, so that the spacer hardly queues, and few enough frames per half-life that
// keeping their order hardly adds to the delay (docs/demo.md, "Why this link": linkem-sim
// predicts a mean +0.9 % above 20 ms, of which +0.6 % is order).
void add_demo_settings(json& file) {
    const json demo = {
        {"port_a", kVirtualPort},    {"port_b", kVirtualPort},    {"mean_delay_us", 20000},
        {"jitter_us", 4000},         {"limiter", "spacer"},       {"rate_bps", 100e6},
        {"loss_model", "bernoulli"}, {"loss_probability", 0.005}, {"traffic", {{"running", true}}}};
    for (const auto& [key, value] : demo.items())
        if (!file.contains(key)) file[key] = value;
}

// Ports. Returns the number of directions (1: single-port mode).
unsigned ports_section(const CommandLine& cl, const json& file, const std::string& src,
                       dp::DataplaneConfig& dc) {
    dc.port_a = !cl.port_a.empty()        ? cl.port_a
                : file.contains("port_a") ? string_key(src + ": port_a", file["port_a"])
                                          : "";
    if (!cl.port_b.empty())
        dc.port_b = cl.port_b;
    else if (file.contains("port_b") && !file["port_b"].is_null())
        dc.port_b = string_key(src + ": port_b", file["port_b"]);
    if (dc.port_a.empty())
        throw UsageError("port_a: required (--port-a DEV or \"port_a\" in the config file)");
    const unsigned n_dirs = dc.port_b.empty() ? 1 : 2;
    try {
        if (n_dirs == 2 && (dc.port_a == kVirtualPort) != (dc.port_b == kVirtualPort))
            throw ParamError(dc.port_a == kVirtualPort ? "port_b" : "port_a",
                             "virtual ports come in pairs: give both ports as 'virtual' (or "
                             "only --port-a virtual for one direction)");
        if (dc.port_a != kVirtualPort) {
            dp::resolve_port(dc.port_a, "port_a");
            if (n_dirs == 2) dp::resolve_port(dc.port_b, "port_b");
        }
    } catch (const ParamError& e) {
        throw UsageError(std::string(e.what()) +
                         (e.field() == "port_a" ? " (--port-a)" : " (--port-b)"));
    }
    return n_dirs;
}

// Threads, burst, mbufs.
void threads_section(const CommandLine& cl, const json& file, const std::string& src, Options& o) {
    dp::DataplaneConfig& dc = o.dataplane;
    dc.workers = workers_option(cl, file, src);
    if (!cl.burst.empty())
        dc.burst = static_cast<unsigned>(integer_option("--burst", cl.burst, 1, dp::kMaxBurst));
    else if (file.contains("burst"))
        dc.burst =
            static_cast<unsigned>(integer_key(src + ": burst", file["burst"], 1, dp::kMaxBurst));
    if (!cl.mbufs.empty()) {
        dc.mbufs = static_cast<std::uint32_t>(
            integer_option("--mbufs", cl.mbufs, dp::kMinMbufs, dp::kMaxMbufs));
        o.mbufs_given = true;
    } else if (file.contains("mbufs")) {
        dc.mbufs = static_cast<std::uint32_t>(
            integer_key(src + ": mbufs", file["mbufs"], dp::kMinMbufs, dp::kMaxMbufs));
        o.mbufs_given = true;
    }
    if (cl.hold_mbufs) {
        dc.hold_mbufs = true;
    } else if (file.contains("hold_mbufs")) {
        if (!file["hold_mbufs"].is_boolean())
            throw UsageError(src + ": hold_mbufs: expected true or false");
        dc.hold_mbufs = file["hold_mbufs"].get<bool>();
    }
}

// Periodic stats and the run's duration.
void output_section(const CommandLine& cl, const json& file, const std::string& src, Options& o) {
    if (!cl.stats_interval.empty()) {
        if (cl.stats_interval == "0") {
            o.stats_interval = 0;
        } else {
            const auto d = parse_duration(cl.stats_interval);
            if (!d)
                throw UsageError("--stats-interval: '" + cl.stats_interval + "' is not " +
                                 std::string(kDurationForm) + ", e.g. 1s; 0 = none");
            o.stats_interval = *d;
        }
    } else if (file.contains("stats_interval_us")) {
        const json& v = file["stats_interval_us"];
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 3.6e9)
            throw UsageError(src + ": stats_interval_us: " + v.dump() +
                             " is not allowed; allowed 0 .. 3600000000 us (0 = none)");
        o.stats_interval = static_cast<DurationNs>(std::llround(v.get<double>() * kNsPerUs));
    }
    if (o.stats_interval > 0 && o.stats_interval < kNsPerMs)
        throw UsageError("stats_interval: must be 0 (none) or at least 1ms");
    if (!cl.duration.empty()) {
        const auto d = parse_duration(cl.duration);
        if (!d || *d <= 0)
            throw UsageError("--duration: '" + cl.duration + "' is not positive, or not " +
                             std::string(kDurationForm) + ", e.g. 10s");
        o.duration = *d;
    }
}

// Control and telemetry: flags win over the file.
void control_section(const CommandLine& cl, const json& file, const std::string& src, Options& o) {
    ControlOptions& co = o.control;
    dp::DataplaneConfig& dc = o.dataplane;
    auto text = [&](const std::string& flag_value, const char* key, std::string& out) {
        if (!flag_value.empty())
            out = flag_value;
        else if (file.contains(key))
            out = string_key(src + ": " + key, file[key]);
    };
    auto boolean = [&](bool flag_value, const char* key, bool& out) {
        if (flag_value) {
            out = true;
        } else if (file.contains(key)) {
            if (!file[key].is_boolean())
                throw UsageError(src + ": " + key + ": expected true or false");
            out = file[key].get<bool>();
        }
    };
    text(cl.control, "control", co.control);
    text(cl.telemetry, "telemetry", co.telemetry);
    text(cl.curve_secret, "curve_secret", co.curve_secret);
    text(cl.curve_allow, "curve_allow", co.curve_allow);
    bool no_control = false;
    boolean(cl.no_control, "no_control", no_control);
    co.enabled = !no_control;
    boolean(cl.insecure_listen, "insecure_listen", co.insecure_listen);
    boolean(cl.allow_remote_shutdown, "allow_remote_shutdown", co.allow_remote_shutdown);
    if (!cl.telemetry_hz.empty())
        co.telemetry_hz =
            static_cast<unsigned>(integer_option("--telemetry-hz", cl.telemetry_hz, 1, 100));
    else if (file.contains("telemetry_hz"))
        co.telemetry_hz = static_cast<unsigned>(
            integer_key(src + ": telemetry_hz", file["telemetry_hz"], 1, 100));
    dc.telemetry = co.enabled;
    if (!cl.delay_samples_per_s.empty())
        dc.delay_samples_per_s = static_cast<unsigned>(integer_option(
            "--delay-samples-per-s", cl.delay_samples_per_s, 0, dp::kMaxDelaySamplesPerS));
    else if (file.contains("delay_samples_per_s"))
        dc.delay_samples_per_s = static_cast<unsigned>(integer_key(src + ": delay_samples_per_s",
                                                                   file["delay_samples_per_s"], 0,
                                                                   dp::kMaxDelaySamplesPerS));
    for (const std::string* e : {&co.control, &co.telemetry})
        if (co.enabled && e->find("://") == std::string::npos)
            throw UsageError((e == &co.control ? "control" : std::string("telemetry")) + ": '" +
                             *e +
                             "' is not a ZeroMQ endpoint; allowed tcp://HOST:PORT or ipc://PATH");
    if (co.enabled && co.control == co.telemetry)
        throw UsageError("control and telemetry: both are '" + co.control +
                         "'; give them different endpoints");
}

// Built-in traffic: the file's "traffic" object, then the flags. A pattern given on the
// command line starts it.
void traffic_section(const CommandLine& cl, const json& file, const std::string& src, Options& o) {
    const dp::DataplaneConfig& dc = o.dataplane;
    TrafficSpec& ts = o.traffic.spec;
    const double frames_per_s = cl.demo ? 1000 : 10000;  // by default
    ts.rate_bps = frames_per_s * ts.bits_per_packet();
    try {
        if (file.contains("traffic")) {
            if (!file["traffic"].is_object())
                throw UsageError(src +
                                 ": traffic: expected an object (running, pattern, "
                                 "rate_bps, frame_size_bytes, period_us)");
            const json& t = file["traffic"];
            if (t.contains("frame_size_bytes") && !t.contains("rate_bps")) {
                // Keep the frames per second when only the frame size is given.
                o.traffic =
                    traffic_from_json(json{{"frame_size_bytes", t["frame_size_bytes"]}}, o.traffic);
                ts.rate_bps = frames_per_s * ts.bits_per_packet();
            }
            o.traffic = traffic_from_json(t, o.traffic);
        }
    } catch (const ParamError& e) {
        throw UsageError(src + ": traffic." + e.field() + ": " + e.message());
    }
    json flags;
    try {
        flags = traffic_update_from_flags(cl.traffic);
    } catch (const FlagError& e) {
        throw UsageError(e.what());
    }
    if (flags.contains("frame_size_bytes") && !flags.contains("rate_bps") &&
        !(file.contains("traffic") && file["traffic"].contains("rate_bps")))
        flags["rate_bps"] = frames_per_s * 8.0 * flags["frame_size_bytes"].get<double>();
    try {
        o.traffic = traffic_from_json(flags, o.traffic);
    } catch (const ParamError& e) {
        std::string flag = e.field();
        for (const TrafficFlag& f : traffic_flags())
            if (f.key == e.field()) flag = f.flag;
        throw UsageError(flag + " [" + e.field() + "]: " + e.message());
    }
    if (o.traffic.running && dc.port_a != kVirtualPort)
        throw UsageError(
            "--traffic-pattern: the built-in traffic runs on virtual ports only; give --port-a "
            "virtual --port-b virtual (or --demo), or send your own traffic through the "
            "ports");
}

// Link parameters per direction, as on the command line: the file's top-level ones (both
// directions), then its a_to_b / b_to_a, then flags for both, then flags for one.
void link_section(const CommandLine& cl, const json& file, const std::string& src, unsigned n_dirs,
                  dp::DataplaneConfig& dc) {
    const std::vector<LinkParamFlag>& flags = link_param_flags();
    if (n_dirs == 1) {
        if (file.contains(kDirectionKeys[1]))
            throw UsageError(src +
                             ": b_to_a: there is no port B (single-port mode has only "
                             "a_to_b); add port_b or remove b_to_a");
        for (std::size_t i = 0; i < flags.size(); ++i)
            if (!cl.params[i][2].empty())
                throw UsageError(link_flag_name(flags[i], 2) +
                                 ": there is no port B (single-port mode has only a_to_b); "
                                 "add --port-b or use --" +
                                 flags[i].flag);
    }
    // The flags, converted once (the same conversion as linkemctl set's).
    json flag_update;
    try {
        flag_update = link_update_from_flags(cl.params);
    } catch (const FlagError& e) {
        throw UsageError(e.what());
    }
    for (unsigned d = 0; d < n_dirs; ++d) {
        // Layer 0: the file; layer 1: the flags.
        std::map<std::string, KeyOrigin> origin;
        const json merged = layered_link_keys({&file, &flag_update}, d, &origin);
        try {
            LinkParams p = link_params_from_json(merged);
            dc.link.direction(d) = p;
        } catch (const ParamError& e) {
            std::string where = std::string(kDirectionKeys[d]) + "." + e.field();
            const auto it = origin.find(e.field());
            if (it != origin.end() && it->second.layer == 0 && it->second.own) {
                where = src + ": " + where;
            } else if (it != origin.end() && it->second.layer == 0) {
                where = src + ": " + e.field() + " (both directions)";
            } else if (it != origin.end()) {
                where += " (" +
                         link_flag_name(*link_param_flag(e.field()),
                                        it->second.own ? 1 + static_cast<int>(d) : 0) +
                         ")";
            } else if (const LinkParamFlag* f = link_param_flag(e.field())) {
                where += " (" + link_flag_name(*f, 0) + " / " +
                         link_flag_name(*f, 1 + static_cast<int>(d)) + ")";
            }
            std::string msg = e.what();
            const std::string prefix = "field '" + e.field() + "': ";
            if (msg.starts_with(prefix)) msg = msg.substr(prefix.size());
            throw UsageError(where + ": " + msg);
        }
    }
    if (n_dirs == 1) dc.link.b_to_a = dc.link.a_to_b;
    // The traffic classes (docs/classes.md): the file's list, checked whole.
    if (file.contains("classes")) {
        try {
            dc.link.classes = link_classes_from_json(file["classes"], n_dirs);
        } catch (const ParamError& e) {
            throw UsageError(src + ": " + e.field() + ": " + e.message());
        }
    }
}

// --capture FILE and its --capture-* flags.
void capture_section(const CommandLine& cl, Options& o) {
    const std::string prefix = "--capture-";
    if (cl.capture.empty()) {
        for (std::size_t i = 0; i < cl.capture_flags.size(); ++i)
            if (!cl.capture_flags[i].empty())
                throw UsageError(prefix + capture_flags()[i].flag +
                                 ": needs --capture FILE (the file to write)");
        return;
    }
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(cl.capture, ec);
    try {
        o.capture = capture_settings_from_json(
            capture_params_from_flags(ec ? cl.capture : abs.string(), cl.capture_flags, prefix));
    } catch (const FlagError& e) {
        throw UsageError(e.what());
    } catch (const ParamError& e) {
        throw UsageError(capture_flag_name(e.field(), prefix, "--capture") + ": " + e.message());
    }
}

}  // namespace

Options build_options(const CommandLine& cl) {
    Options o;
    o.stats_json = cl.stats_json;
    o.print_config = cl.print_config;
    o.eal_args = cl.eal_args;
    o.config_path = cl.config;
    o.demo = cl.demo;
    const std::string src = "config " + cl.config;
    json file = read_config_file(cl, src);
    if (cl.demo) add_demo_settings(file);
    const unsigned n_dirs = ports_section(cl, file, src, o.dataplane);
    threads_section(cl, file, src, o);
    output_section(cl, file, src, o);
    control_section(cl, file, src, o);
    traffic_section(cl, file, src, o);
    link_section(cl, file, src, n_dirs, o.dataplane);
    capture_section(cl, o);
    // What the data plane refuses for its workers, refused here before DPDK starts.
    for (unsigned k = 0; k < n_dirs; ++k) {
        try {
            dp::refuse_unshared(o.dataplane.link.direction(k),
                                dp::queues_per_port(o.dataplane.workers));
        } catch (const ParamError& e) {
            throw UsageError(std::string(kDirectionKeys[k]) + ": " + e.field() + " " + e.message());
        }
    }
    if (!o.mbufs_given)
        o.dataplane.mbufs =
            dp::default_mbufs(o.dataplane.link, n_dirs, dp::queues_per_port(o.dataplane.workers));

    // The scenario: checked now against the link it would start on.
    o.scenario = !cl.scenario.empty()        ? cl.scenario
                 : file.contains("scenario") ? string_key(src + ": scenario", file["scenario"])
                                             : "";
    if (!o.scenario.empty()) {
        try {
            const Scenario s = scenario_by_name_or_path(o.scenario);
            (void)compile_scenario(s, o.dataplane.link, n_dirs, o.scenario);
        } catch (const ScenarioError& e) {
            throw UsageError((cl.scenario.empty() ? src + ": scenario: " : "--scenario: ") +
                             std::string(e.what()));
        }
    }
    return o;
}

json to_json(const Options& o) {
    const dp::DataplaneConfig& dc = o.dataplane;
    json j = json::object();
    j["port_a"] = dc.port_a;
    if (!dc.port_b.empty()) j["port_b"] = dc.port_b;
    j["workers"] = dp::to_string(dc.workers);
    j["burst"] = dc.burst;
    j["stats_interval_us"] = static_cast<double>(o.stats_interval) / kNsPerUs;
    j["mbufs"] = dc.mbufs;
    j["hold_mbufs"] = dc.hold_mbufs;
    const ControlOptions& co = o.control;
    j["no_control"] = !co.enabled;
    j["control"] = co.control;
    j["telemetry"] = co.telemetry;
    j["telemetry_hz"] = co.telemetry_hz;
    j["delay_samples_per_s"] = dc.delay_samples_per_s;
    if (!co.curve_secret.empty()) j["curve_secret"] = co.curve_secret;
    if (!co.curve_allow.empty()) j["curve_allow"] = co.curve_allow;
    j["insecure_listen"] = co.insecure_listen;
    j["allow_remote_shutdown"] = co.allow_remote_shutdown;
    if (virtual_ports(o)) j["traffic"] = to_json(o.traffic);
    if (!o.scenario.empty()) j["scenario"] = o.scenario;
    j[kDirectionKeys[0]] = to_json(dc.link.a_to_b);
    if (!dc.port_b.empty()) j[kDirectionKeys[1]] = to_json(dc.link.b_to_a);
    if (!dc.link.classes.empty()) j["classes"] = classes_to_json(dc.link.classes);
    return j;
}

}  // namespace linkem::linkemd
