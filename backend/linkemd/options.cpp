#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>

#include "linkem/link_params.hpp"
#include "linkem/units.hpp"

namespace linkem::linkemd {

using nlohmann::json;

namespace {

enum class Kind { duration, rate, bytes, real, integer, choice };

// One row per link parameter: flag name (without unit), JSON key (with unit), kind.
struct ParamFlag {
    const char* flag;
    const char* key;
    Kind kind;
    const char* example;
};

constexpr ParamFlag kParamFlags[] = {
    {"strategy", "strategy", Kind::choice, "correlated|uncorrelated|reordered"},
    {"distribution", "distribution", Kind::choice, "normal|uniform|gamma|lognormal|constant"},
    {"mean-delay", "mean_delay_us", Kind::duration, "10ms"},
    {"jitter", "jitter_us", Kind::duration, "3ms"},
    {"half-life", "half_life_us", Kind::duration, "21ms"},
    {"rate-window", "rate_window_us", Kind::duration, "10ms"},
    {"limiter", "limiter", Kind::choice, "none|spacer|policer"},
    {"rate", "rate_bps", Kind::rate, "100Mbit"},
    {"spacer-limit", "spacer_limit_bytes", Kind::bytes, "1MiB"},
    {"policer-burst", "policer_burst_bytes", Kind::bytes, "64KiB"},
    {"byte-accounting", "byte_accounting", Kind::choice, "frame|wire"},
    {"loss-model", "loss_model", Kind::choice, "none|bernoulli|gilbert_elliott"},
    {"loss-probability", "loss_probability", Kind::real, "0.01"},
    {"ge-p", "ge_p", Kind::real, "0.01"},
    {"ge-r", "ge_r", Kind::real, "0.3"},
    {"ge-loss-good", "ge_loss_good", Kind::real, "0"},
    {"ge-loss-bad", "ge_loss_bad", Kind::real, "1"},
    {"buffer-limit", "buffer_limit_packets", Kind::integer, "100000"},
    {"seed", "seed", Kind::integer, "42"},
};
constexpr std::size_t kNumParams = std::size(kParamFlags);
constexpr const char* kLayerPrefix[3] = {"", "a-to-b-", "b-to-a-"};
constexpr const char* kDirKey[2] = {"a_to_b", "b_to_a"};

std::string num(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

const json& schema() {
    static const json s = link_params_schema();
    return s;
}

// "allowed 0 .. 10s" for a parameter, in the flag's units.
std::string allowed(const ParamFlag& f) {
    const json& d = schema().at(f.key);
    if (d.at("type") == "enum") {
        std::string v;
        for (const auto& x : d.at("values"))
            v += (v.empty() ? "'" : ", '") + x.get<std::string>() + "'";
        return "allowed " + v;
    }
    const double lo = d.at("min").get<double>(), hi = d.at("max").get<double>();
    switch (f.kind) {
        case Kind::duration:
            return "allowed " + format_duration(static_cast<DurationNs>(lo * kNsPerUs)) + " .. " +
                   format_duration(static_cast<DurationNs>(hi * kNsPerUs));
        case Kind::rate:
            return "allowed " + format_rate(lo) + " .. " + format_rate(hi);
        case Kind::bytes:
            return "allowed " + num(lo) + " .. " + num(hi) + " bytes";
        default:
            return "allowed " + num(lo) + " .. " + num(hi);
    }
}

bool parse_real(const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_u64(const std::string& s, std::uint64_t& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

json flag_value(const std::string& flag, const ParamFlag& f, const std::string& v) {
    auto bad = [&](const std::string& what) {
        return UsageError(flag + ": '" + v + "' is not " + what + " (e.g. " + f.example + "); " +
                          allowed(f));
    };
    switch (f.kind) {
        case Kind::duration: {
            const auto d = parse_duration(v);
            if (!d) throw bad("a duration with a unit (ns, us, ms, s)");
            return static_cast<double>(*d) / kNsPerUs;
        }
        case Kind::rate: {
            const auto r = parse_rate(v);
            if (!r) throw bad("a bit rate with a unit (kbit, Mbit, Gbit)");
            return *r;
        }
        case Kind::bytes: {
            const auto b = parse_bytes(v);
            if (!b) throw bad("a size in bytes (B, KiB, MiB, kB, MB)");
            return *b;
        }
        case Kind::real: {
            double x;
            if (!parse_real(v, x)) throw bad("a number");
            return x;
        }
        case Kind::integer: {
            std::uint64_t x;
            if (!parse_u64(v, x)) throw bad("a whole number");
            return x;
        }
        case Kind::choice:
            return v;
    }
    return v;
}

const ParamFlag* flag_for_key(const std::string& key) {
    for (const ParamFlag& f : kParamFlags)
        if (key == f.key) return &f;
    return nullptr;
}

std::string join_keys(std::initializer_list<const char*> keys) {
    std::string s;
    for (const char* k : keys)
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

}  // namespace

std::optional<CommandLine> parse_command_line(int argc, char** argv) {
    CommandLine cl;
    int n = argc;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--") {
            n = i;
            for (int j = i + 1; j < argc; ++j)
                cl.eal_args.emplace_back(argv[j]);
            break;
        }
    }
    cl.params.resize(kNumParams);

    CLI::App app{"linkemd: DPDK link emulator data plane (delay, jitter, rate limits, loss)",
                 "linkemd"};
    app.footer(
        "Per-direction overrides: --a-to-b-<flag> / --b-to-a-<flag> for every link parameter,\n"
        "e.g. --a-to-b-mean-delay 5ms --b-to-a-mean-delay 20ms.\n"
        "Arguments after `--` go to the DPDK EAL unchanged (e.g. -- --file-prefix x).\n"
        "Signals: SIGINT/SIGTERM stop (final counters are printed), SIGHUP re-reads --config.\n"
        "Exit codes: 0 ok, 1 DPDK/port failure, 2 bad arguments or config.");
    app.add_option("--port-a", cl.port_a,
                   "port A: DPDK device/devargs (net_null0, net_tap0,iface=lk0, 0000:3b:00.0) "
                   "or a network interface (veth1)")
        ->type_name("DEV")
        ->group("Ports");
    app.add_option("--port-b", cl.port_b, "port B; omitted: single-port mode (back out of A)")
        ->type_name("DEV")
        ->group("Ports");
    for (std::size_t i = 0; i < kNumParams; ++i) {
        const ParamFlag& f = kParamFlags[i];
        for (int layer = 0; layer < 3; ++layer) {
            const std::string name = std::string("--") + kLayerPrefix[layer] + f.flag;
            const std::string help = layer == 0 ? schema().at(f.key).at("help").get<std::string>() +
                                                      " (e.g. " + f.example + ")"
                                                : "";
            // The per-direction variants are listed once, in the footer.
            static constexpr const char* kTypeName[] = {"DUR", "RATE", "BYTES", "P", "N", "NAME"};
            app.add_option(name, cl.params[i][layer], help)
                ->group(layer == 0 ? "Link parameters (both directions)" : "")
                ->type_name(kTypeName[static_cast<int>(f.kind)]);
        }
    }
    app.add_option("--config", cl.config, "JSON config file (flags override it)")
        ->type_name("FILE")
        ->group("Config");
    app.add_flag("--print-config", cl.print_config,
                 "print the effective config as JSON and exit (no EAL start)")
        ->group("Config");
    app.add_option("--lcores", cl.lcores,
                   "shared (one lcore for both directions; default below 4 CPUs) or 1, 2, 3 "
                   "lcores per direction")
        ->type_name("LAYOUT")
        ->group("Threads and I/O");
    app.add_option("--burst", cl.burst, "rx/tx burst size, 1..512 (default 16)")
        ->type_name("N")
        ->group("Threads and I/O");
    app.add_option("--mbufs", cl.mbufs, "mbufs in the pools (default: sized from the limits)")
        ->type_name("N")
        ->group("Threads and I/O");
    app.add_option("--stats-interval", cl.stats_interval, "periodic stats (default 1s; 0: none)")
        ->type_name("DUR")
        ->group("Run control and output");
    app.add_flag("--stats-json", cl.stats_json, "stats as one JSON object per line on stdout")
        ->group("Run control and output");
    app.add_option("--duration", cl.duration, "stop after this long (default: until SIGINT)")
        ->type_name("DUR")
        ->group("Run control and output");
    try {
        app.parse(n, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return std::nullopt;
    } catch (const CLI::ParseError& e) {
        throw UsageError(e.what());
    }
    return cl;
}

Options build_options(const CommandLine& cl) {
    Options o;
    o.stats_json = cl.stats_json;
    o.print_config = cl.print_config;
    o.eal_args = cl.eal_args;
    o.config_path = cl.config;

    // The config file.
    json file = json::object();
    const std::string src = "config " + cl.config;
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
            static const auto known = {"port_a", "port_b", "lcores", "burst", "stats_interval_us",
                                       "mbufs",  "a_to_b", "b_to_a"};
            if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) ==
                known.end())
                throw UsageError(src + ": unknown key '" + key + "'; known: " + join_keys(known));
            if ((key == "a_to_b" || key == "b_to_a") && !value.is_object())
                throw UsageError(src + ": " + key + ": expected an object of link parameters");
        }
    }

    // Ports.
    dp::DataplaneConfig& dc = o.dataplane;
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
        dp::resolve_port(dc.port_a, "port_a");
        if (n_dirs == 2) dp::resolve_port(dc.port_b, "port_b");
    } catch (const ParamError& e) {
        throw UsageError(std::string(e.what()) +
                         (e.field() == "port_a" ? " (--port-a)" : " (--port-b)"));
    }

    // Threads, burst, stats.
    if (!cl.lcores.empty() || file.contains("lcores")) {
        const std::string v =
            !cl.lcores.empty() ? cl.lcores : string_key(src + ": lcores", file["lcores"]);
        const auto l = dp::parse_layout(v);
        if (!l)
            throw UsageError((cl.lcores.empty() ? src + ": lcores" : std::string("--lcores")) +
                             ": '" + v + "' is not allowed; allowed 'shared', '1', '2', '3'");
        dc.layout = *l;
    } else {
        dc.layout = dp::default_layout(dp::Eal::usable_cpus());
    }
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
    if (!cl.stats_interval.empty()) {
        if (cl.stats_interval == "0") {
            o.stats_interval = 0;
        } else {
            const auto d = parse_duration(cl.stats_interval);
            if (!d)
                throw UsageError("--stats-interval: '" + cl.stats_interval +
                                 "' is not a duration with a unit (e.g. 1s, 500ms); 0 = none");
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
            throw UsageError("--duration: '" + cl.duration +
                             "' is not a positive duration with a unit (e.g. 10s, 500ms)");
        o.duration = *d;
    }

    // Link parameters per direction: file, then flags for both, then flags for one.
    if (n_dirs == 1) {
        if (file.contains("b_to_a"))
            throw UsageError(src +
                             ": b_to_a: there is no port B (single-port mode has only "
                             "a_to_b); add port_b or remove b_to_a");
        for (std::size_t i = 0; i < kNumParams; ++i)
            if (!cl.params[i][2].empty())
                throw UsageError(std::string("--b-to-a-") + kParamFlags[i].flag +
                                 ": there is no port B (single-port mode has only a_to_b); "
                                 "add --port-b or use --" +
                                 kParamFlags[i].flag);
    }
    for (unsigned d = 0; d < n_dirs; ++d) {
        json merged = json::object();
        std::map<std::string, std::string> source;
        if (file.contains(kDirKey[d])) {
            merged = file[kDirKey[d]];
            for (const auto& [key, value] : merged.items())
                source[key] = src;
        }
        for (int layer : {0, 1 + static_cast<int>(d)}) {
            for (std::size_t i = 0; i < kNumParams; ++i) {
                const std::string& v = cl.params[i][layer];
                if (v.empty()) continue;
                const std::string flag =
                    std::string("--") + kLayerPrefix[layer] + kParamFlags[i].flag;
                merged[kParamFlags[i].key] = flag_value(flag, kParamFlags[i], v);
                source[kParamFlags[i].key] = flag;
            }
        }
        try {
            LinkParams p = link_params_from_json(merged);
            (d == 0 ? dc.link.a_to_b : dc.link.b_to_a) = p;
        } catch (const ParamError& e) {
            std::string where = std::string(kDirKey[d]) + "." + e.field();
            std::string flag_units;
            const auto it = source.find(e.field());
            if (it != source.end() && it->second == src) {
                where = src + ": " + where;
            } else if (it != source.end()) {
                where += " (" + it->second + ")";
                if (const ParamFlag* f = flag_for_key(e.field()); f && f->kind != Kind::choice)
                    flag_units = " (" + it->second + ": " + allowed(*f) + ")";
            } else if (const ParamFlag* f = flag_for_key(e.field())) {
                where +=
                    std::string(" (--") + f->flag + " / --" + kLayerPrefix[1 + d] + f->flag + ")";
            }
            std::string msg = e.what();
            const std::string prefix = "field '" + e.field() + "': ";
            if (msg.starts_with(prefix)) msg = msg.substr(prefix.size());
            throw UsageError(where + ": " + msg + flag_units);
        }
    }
    if (n_dirs == 1) dc.link.b_to_a = dc.link.a_to_b;
    if (!o.mbufs_given) dc.mbufs = dp::default_mbufs(dc.link, n_dirs);
    return o;
}

json to_json(const Options& o) {
    const dp::DataplaneConfig& dc = o.dataplane;
    json j = json::object();
    j["port_a"] = dc.port_a;
    if (!dc.port_b.empty()) j["port_b"] = dc.port_b;
    j["lcores"] = std::string(dp::to_string(dc.layout));
    j["burst"] = dc.burst;
    j["stats_interval_us"] = static_cast<double>(o.stats_interval) / kNsPerUs;
    j["mbufs"] = dc.mbufs;
    j["a_to_b"] = to_json(dc.link.a_to_b);
    if (!dc.port_b.empty()) j["b_to_a"] = to_json(dc.link.b_to_a);
    return j;
}

}  // namespace linkem::linkemd
