#include "cli.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "class_report.hpp"
#include "linkem/link_flags.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/trace_file.hpp"
#include "linkem/traffic_flags.hpp"
#include "linkem/units.hpp"
#include "report.hpp"
#include "sim_capture.hpp"
#include "sweep.hpp"

namespace linkem::sim {
namespace {

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ", ") + x;
    return s;
}

DurationNs need_duration(const std::string& flag, const std::string& v) {
    const auto d = parse_duration(v);
    if (!d)
        throw UsageError(flag, "'" + v + "' is not " + std::string(kDurationForm) + ", e.g. 10ms");
    return *d;
}

double need_number(const std::string& flag, const std::string& v, double lo, double hi) {
    const auto x = parse_number(v);
    if (!x) throw UsageError(flag, "'" + v + "' is not " + std::string(kNumberForm));
    if (*x < lo || *x > hi) {
        std::ostringstream os;
        os << "'" << v << "' is out of range; allowed " << lo << " .. " << hi;
        throw UsageError(flag, os.str());
    }
    return *x;
}

std::uint64_t need_uint(const std::string& flag, const std::string& v, std::uint64_t lo,
                        std::uint64_t hi) {
    const auto x = parse_whole(v);
    if (!x) throw UsageError(flag, "'" + v + "' is not " + std::string(kWholeForm));
    if (*x < lo || *x > hi)
        throw UsageError(flag, "'" + v + "' is out of range; allowed " + std::to_string(lo) +
                                   " .. " + std::to_string(hi));
    return *x;
}

// Every option is read as a string and converted here, so that every error names the flag
// in one format.
struct RawOptions {
    std::map<std::string, std::string> values;
    std::optional<std::string> get(const std::string& flag) const {
        const auto it = values.find(flag);
        if (it == values.end()) return std::nullopt;
        return it->second;
    }
};

struct FlagDef {
    std::string flag;
    std::string field;  // JSON field it sets ("" = simulator-only)
    std::string help;
    std::string value_name;  // shown in --help
};

// The link parameters' flags come from liblinkem_protocol (same names as linkemd); these
// notes say where linkem-sim's defaults differ from LinkParams'.
const std::map<std::string, std::string> kLinkNotes = {
    {"mean_delay_us", "; default here 10ms"},
    {"seed", "; run i uses seed+i; default here 1"},
};

const std::map<std::string, std::string> kTrafficNotes = {
    {"pattern", "(default cbr)"},
    {"rate_bps", "(default 10Gbit)"},
    {"frame_size_bytes", "(default 1518)"},
    {"period_us", "(default 30s)"},
};

const std::vector<FlagDef>& flag_defs() {
    static const std::vector<FlagDef> kFlags = [] {
        std::vector<FlagDef> v;
        for (const LinkParamFlag& f : link_param_flags()) {
            const auto note = kLinkNotes.find(f.key);
            v.push_back({"--" + f.flag, f.key,
                         f.help + " (e.g. " + f.example + ")" +
                             (note == kLinkNotes.end() ? "" : note->second) + "  [" + f.key + "]",
                         f.value_name});
        }
        // The offered traffic: the flags of linkemd's built-in traffic.
        for (const TrafficFlag& f : traffic_flags()) {
            const auto note = kTrafficNotes.find(f.key);
            v.push_back({f.flag, "traffic." + f.key,
                         f.help + (note == kTrafficNotes.end() ? "" : " " + note->second),
                         f.value_name});
        }
        const std::vector<FlagDef> sim = {
            // The run.
            {"--duration", "duration_us", "simulated time of arrivals per run (default 60s)",
             "DURATION"},
            {"--utilization", "utilization",
             "utilisation u of a virtual queue served at traffic-rate/u behind the emulator; 0 = "
             "none",
             "U"},
            {"--scenario", "",
             "follow a scenario from time 0, as linkemd plays it: a built-in's name or a file "
             "(docs/scenarios.md); --duration defaults to its length",
             "FILE|NAME"},
            {"--direction", "",
             "which direction of the scenario to play, with linkemd's random stream for it: "
             "a_to_b (default) or b_to_a",
             "DIR"},
            {"--arrivals", "",
             "replay these arrival times instead of generating traffic: ns since the start, one "
             "per line, non-decreasing",
             "FILE"},
            {"--classes", "",
             "a class file: the link's parameters, a 'classes' list and a 'flows' list (the "
             "traffic mix); reports each class and flow (docs/simulation.md, \"Traffic classes\")",
             "FILE"},
            {"--capture", "",
             "write a pcapng capture of the run for Wireshark (docs/capture.md): every packet "
             "as it left and every drop, with what the emulator did to it (the first run's)",
             "FILE"},
            {"--capture-points", "",
             "with --capture: where records are taken, any of in,out,drop (default out,drop)",
             "POINTS"},
            {"--capture-snaplen", "",
             "with --capture: bytes of each frame kept, 16 .. 65535 (default 128)", "BYTES"},
            {"--runs", "", "runs with seeds seed..seed+N-1; mean and 95% CI (default 1)", "N"},
            {"--flows", "traffic.flows",
             "spread the traffic over N flows: packet k is flow k mod N's, UDP from port "
             "50000+flow (FQ-CoDel's flows; default 1)",
             "N"},
            {"--queue-series", "",
             "write the limiter queue's series of the first run to this CSV: backlog, sojourn "
             "times, drops and marks per interval",
             "FILE"},
            {"--queue-series-interval", "queue_series_interval_us",
             "one queue series line per this much simulated time (default 10ms)", "DURATION"},
            {"--delay-series", "", "write the delay series of the first run to this CSV", "FILE"},
            {"--delay-series-interval", "",
             "one delay series sample per this much time (default 1ms; 0: every packet)",
             "DURATION"},
            // Sweeps.
            {"--sweep", "",
             "regenerate a paper figure's data as CSV: fig1 fig3 ... fig11; smooth smooth-dist "
             "smooth-acf smooth-ks",
             "FIGURE"},
            {"--traffic-rates", "",
             "sweep traffic rates, comma-separated (default 0.1G,1G,10G,100G)", "RATE,..."},
            {"--csv", "", "sweep CSV output file (default stdout)", "FILE"},
            {"--from-csv", "", "sweep: re-plot this CSV instead of simulating", "FILE"},
            {"--plot", "", "sweep: draw the figure into this PNG (gnuplot)", "FILE.png"},
            {"--jobs", "", "sweep: runs in parallel (default 1)", "N"},
        };
        v.insert(v.end(), sim.begin(), sim.end());
        return v;
    }();
    return kFlags;
}

// --arrivals: ns since the start, one per line ('#' comments and an arrival_ns header
// allowed), non-decreasing.
std::vector<TimeNs> read_arrivals(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw UsageError("--arrivals", "cannot open '" + path + "'");
    std::vector<TimeNs> t;
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.front() == '#' || (n == 1 && line == "arrival_ns")) continue;
        const auto x = parse_whole(line);
        const std::string at = path + ":" + std::to_string(n);
        if (!x || *x > static_cast<std::uint64_t>(INT64_MAX / 2))
            throw UsageError("--arrivals", at + ": not a whole number of nanoseconds");
        if (!t.empty() && static_cast<TimeNs>(*x) < t.back())
            throw UsageError("--arrivals", at + ": goes back; arrival times must not decrease");
        t.push_back(static_cast<TimeNs>(*x));
    }
    if (t.empty()) throw UsageError("--arrivals", path + ": no arrival times");
    return t;
}

}  // namespace

std::string flag_for_field(const std::string& field) {
    for (const FlagDef& f : flag_defs())
        if (field == f.field) return f.flag;
    return "";
}

namespace {

// Every flag of flag_defs() is taken as text into raw; the boolean flags go straight into o.
void add_flags(CLI::App& app, RawOptions& raw, CliOptions& o) {
    app.option_defaults()->always_capture_default(false);
    for (const FlagDef& f : flag_defs())
        app.add_option_function<std::string>(
               f.flag, [&raw, flag = f.flag](const std::string& v) { raw.values[flag] = v; },
               f.help)
            ->type_name(f.value_name);
    app.add_flag("--json", o.json, "print one JSON object instead of the table");
    app.add_flag("--ect", o.cfg.ect,
                 "the traffic is ECN-capable (ECT(0)): a queue discipline with --ecn on marks it "
                 "CE instead of dropping it");
    app.add_flag("--paper-durations", o.paper_durations,
                 "sweep: the paper's 10-minute runs, 10 of each (slow)");
    app.add_flag("-q,--quiet", o.quiet, "no progress on stderr");
}

// The delay series' flags had the trace limiter's word (--trace-file is that limiter's).
void refuse_renamed_flags(const std::vector<const char*>& args) {
    for (const char* a : args)
        for (const std::string_view old : {"--trace", "--trace-interval"})
            if (std::string_view(a) == old ||
                std::string_view(a).starts_with(std::string(old) + "="))
                throw UsageError(std::string(old),
                                 std::string("is now called --delay-series") +
                                     (old == "--trace" ? "" : "-interval") +
                                     " (--trace-file is the trace limiter's file)");
}

// The link parameters' flags as the JSON object set_link takes (each value checked here).
nlohmann::json link_from_flags(const RawOptions& raw) {
    nlohmann::json link = nlohmann::json::object();
    for (const LinkParamFlag& f : link_param_flags()) {
        if (auto v = raw.get("--" + f.flag)) {
            try {
                link.update(link_keys_from_text(f.key, *v, "--" + f.flag));
            } catch (const FlagError& e) {
                throw UsageError(e.flag(), e.message());
            }
        }
    }
    return link;
}

// The offered traffic's flags into t (ranges: validate_config).
void read_traffic_flags(const RawOptions& raw, TrafficSpec& t) {
    TrafficFlagText traffic_text;
    for (const TrafficFlag& f : traffic_flags())
        traffic_text.push_back(raw.get(f.flag).value_or(""));
    nlohmann::json traffic;
    try {
        traffic = traffic_update_from_flags(traffic_text);
    } catch (const FlagError& e) {
        throw UsageError(e.flag(), e.message());
    }
    if (traffic.contains("pattern"))
        for (TrafficPattern p :
             {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine})
            if (traffic["pattern"] == to_string(p)) t.pattern = p;
    if (traffic.contains("rate_bps")) t.rate_bps = traffic["rate_bps"].get<double>();
    if (traffic.contains("frame_size_bytes"))
        t.frame_bytes = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(traffic["frame_size_bytes"].get<std::uint64_t>(), UINT32_MAX));
    if (traffic.contains("period_us"))
        t.period =
            static_cast<DurationNs>(std::llround(traffic["period_us"].get<double>() * kNsPerUs));
}

// The flags of a single run (or of its runs): duration, utilisation, runs, delay series,
// direction and arrivals.
void read_run_flags(const RawOptions& raw, CliOptions& o) {
    SimConfig& c = o.cfg;
    if (auto v = raw.get("--duration")) {
        c.duration = need_duration("--duration", *v);
        o.duration_given = true;
    }
    if (auto v = raw.get("--utilization")) c.utilization = need_number("--utilization", *v, 0, 1);
    if (auto v = raw.get("--runs")) {
        o.runs = static_cast<int>(need_uint("--runs", *v, 1, 10000));
        o.runs_given = true;
    }
    if (auto v = raw.get("--delay-series")) o.series_path = *v;
    if (auto v = raw.get("--queue-series")) o.queue_series_path = *v;
    if (auto v = raw.get("--queue-series-interval")) {
        c.queue_series_interval = need_duration("--queue-series-interval", *v);
        if (c.queue_series_interval <= 0)
            throw UsageError("--queue-series-interval", "must be greater than 0, e.g. 10ms");
    }
    if (auto v = raw.get("--flows"))
        c.flows = static_cast<std::uint32_t>(need_uint("--flows", *v, 1, kMaxSimFlows));
    if (auto v = raw.get("--direction")) {
        const int d = direction_of_key(*v);
        if (d < 0)
            throw UsageError("--direction", "'" + *v + "' is not allowed; allowed: " +
                                                std::string(kDirectionKeys[0]) + ", " +
                                                kDirectionKeys[1]);
        o.direction = static_cast<unsigned>(d);
        o.cfg.stream = o.direction;
    }
    if (auto v = raw.get("--arrivals"))
        o.arrivals = std::make_shared<std::vector<TimeNs>>(read_arrivals(*v));
    if (auto v = raw.get("--delay-series-interval")) {
        c.series_interval = *v == "0" ? 0 : need_duration("--delay-series-interval", *v);
    }
}

std::vector<double> need_rates(const std::string& list) {
    std::vector<double> rates;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto r = parse_rate(item);
        if (!r || *r < ParamLimits::kMinRate || *r > ParamLimits::kMaxRate)
            throw UsageError("--traffic-rates", "'" + item +
                                                    "' is not a rate between 1kbit and 1.6Tbit; "
                                                    "give a comma-separated list such as "
                                                    "0.1Gbit,1Gbit");
        rates.push_back(*r);
    }
    if (rates.empty()) throw UsageError("--traffic-rates", "needs at least one rate");
    return rates;
}

void read_sweep_flags(const RawOptions& raw, CliOptions& o) {
    if (auto v = raw.get("--sweep")) {
        if (!is_sweep(*v))
            throw UsageError("--sweep",
                             "'" + *v + "' is not a sweep; allowed: " + join(sweep_names()));
        o.sweep = *v;
    }
    if (auto v = raw.get("--traffic-rates")) o.rates_bps = need_rates(*v);
    if (auto v = raw.get("--csv")) o.csv_path = *v;
    if (auto v = raw.get("--from-csv")) o.from_csv = *v;
    if (auto v = raw.get("--plot")) o.plot_path = *v;
    if (auto v = raw.get("--jobs")) o.jobs = static_cast<int>(need_uint("--jobs", *v, 1, 256));
}

// Flags that belong to a sweep, or to a single run, given with the other.
void refuse_mixed_flags(const RawOptions& raw, const CliOptions& o) {
    const bool sweep = !o.sweep.empty();
    for (const char* f : {"--traffic-rates", "--csv", "--from-csv", "--plot", "--jobs"})
        if (!sweep && raw.get(f)) throw UsageError(f, "only applies with --sweep");
    if (!sweep && o.paper_durations)
        throw UsageError("--paper-durations", "only applies with --sweep");
    if (sweep && !o.series_path.empty())
        throw UsageError("--delay-series", "not available with --sweep");
    for (const char* f : {"--queue-series", "--queue-series-interval", "--flows"})
        if (sweep && raw.get(f)) throw UsageError(f, "not available with --sweep");
    if (sweep && o.cfg.ect) throw UsageError("--ect", "not available with --sweep");
    if (raw.get("--queue-series-interval") && o.queue_series_path.empty())
        throw UsageError("--queue-series-interval", "only applies with --queue-series FILE");
    for (const char* f : {"--scenario", "--arrivals", "--direction", "--capture"})
        if (sweep && raw.get(f)) throw UsageError(f, "not available with --sweep");
    if (sweep && o.json) throw UsageError("--json", "sweeps write CSV (see --csv)");
    if (!o.from_csv.empty() && o.plot_path.empty())
        throw UsageError("--from-csv", "needs --plot (it only re-draws a CSV)");
}

// The link parameters (linkem-sim's defaults, then the flags) and the whole configuration
// checked; an error names the flag that set the field.
void apply_link(const nlohmann::json& link, SimConfig& c) {
    try {
        c.link = link_params_from_json(link, c.link);
        validate_config(c);
    } catch (const ParamError& e) {
        std::string msg = e.what();
        const std::string prefix = "field '" + e.field() + "': ";
        if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
        const std::string flag = flag_for_field(e.field());
        throw UsageError(flag.empty() ? e.field() : flag,
                         msg + (flag.empty() ? "" : " [" + e.field() + "]"));
    }
}

// The flags that --classes leaves no room for: the traffic is the file's flows, one run.
void refuse_with_classes(const RawOptions& raw, const CliOptions& o) {
    for (const TrafficFlag& f : traffic_flags())
        if (raw.get(f.flag))
            throw UsageError(f.flag,
                             "not available with --classes: the traffic is the file's "
                             "flows (pattern, rate_bps, frame_size_bytes, period_us)");
    for (const char* f :
         {"--utilization", "--scenario", "--arrivals", "--direction", "--runs", "--delay-series",
          "--delay-series-interval", "--sweep", "--traffic-rates", "--csv", "--from-csv", "--plot",
          "--jobs", "--flows", "--queue-series", "--queue-series-interval"})
        if (raw.get(f)) throw UsageError(f, "not available with --classes");
    if (o.cfg.ect)
        throw UsageError("--ect",
                         "not available with --classes: a flow's frames carry their own ECN "
                         "field");
    if (o.paper_durations) throw UsageError("--paper-durations", "not available with --classes");
}

// --classes FILE: the file's link, classes and flows, the link flags on top (as linkemd's
// flags over its --config), and --duration.
void read_classes(const RawOptions& raw, const std::string& path, CliOptions& o) {
    refuse_with_classes(raw, o);
    auto cfg = std::make_shared<ClassSimConfig>();
    if (auto v = raw.get("--duration")) cfg->duration = need_duration("--duration", *v);
    if (cfg->duration <= 0 || cfg->duration > 30 * 86400 * kNsPerSec)
        throw UsageError("--duration", "must be greater than 0 and at most 30 days");
    const nlohmann::json flags = link_from_flags(raw);
    std::ifstream in(path);
    if (!in) throw UsageError("--classes", "cannot open '" + path + "'");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw UsageError("--classes", path + ": not valid JSON: " + e.what());
    }
    // Trace files are found from the file's own directory, as linkemd's config's.
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    resolve_trace_files(j, dir);
    if (j.is_object() && j.contains("classes") && j["classes"].is_array())
        for (auto& c : j["classes"])
            resolve_trace_files(c, dir);
    try {
        cfg->file = class_file_from_json(j, flags, 1);
    } catch (const ParamError& e) {
        throw UsageError("--classes", path + ": " + e.what());
    }
    o.classes_path = path;
    o.classes = cfg;
}

// --scenario: compiled over the link parameters, the run follows the chosen direction's
// track.
void read_scenario(const std::string& name, CliOptions& o) {
    SimConfig& c = o.cfg;
    try {
        const Scenario sc = scenario_by_name_or_path(name);
        o.tracks = std::make_shared<ScenarioTracks>(
            compile_scenario(sc, LinkConfig{c.link, c.link}, 2, name));
        o.scenario_name = sc.name;
        if (!o.duration_given) c.duration = sc.duration;
    } catch (const ScenarioError& e) {
        throw UsageError("--scenario", e.what());
    }
    c.track = &o.tracks->dir[o.direction];
}

// --capture FILE, --capture-points, --capture-snaplen (linkemd's --capture flags).
void read_capture_flags(const RawOptions& raw, CliOptions& o) {
    const auto file = raw.get("--capture");
    for (const char* f : {"--capture-points", "--capture-snaplen"})
        if (!file && raw.get(f)) throw UsageError(f, "only applies with --capture FILE");
    if (!file) return;
    capture::Settings s;
    s.file = *file;
    if (s.file.empty()) throw UsageError("--capture", "needs a file name (FILE.pcapng)");
    if (auto v = raw.get("--capture-points")) {
        try {
            s.points = capture::parse_points(*v);
        } catch (const ParamError& e) {
            throw UsageError("--capture-points", e.message());
        }
    }
    if (auto v = raw.get("--capture-snaplen"))
        s.snaplen = static_cast<std::uint32_t>(
            need_uint("--capture-snaplen", *v, capture::kMinSnaplen, capture::kMaxSnaplen));
    try {
        capture::validate(s);
    } catch (const ParamError& e) {
        throw UsageError(e.field() == "points"          ? "--capture-points"
                         : e.field() == "snaplen_bytes" ? "--capture-snaplen"
                                                        : "--capture",
                         e.message());
    }
    o.capture = s;
}

}  // namespace

CliOptions parse_cli(int argc, const char* const* argv) {
    CLI::App app{
        "linkem-sim: discrete-event simulation of linkem's emulator (DPDS paper Section IV).\n"
        "Durations and rates take units (10ms, 10Gbit). The link parameters are linkemd's\n"
        "(--rate is the spacer/policer rate); the offered traffic is --traffic-rate.\n"
        "See docs/simulation.md.",
        "linkem-sim"};
    RawOptions raw;
    CliOptions o;
    add_flags(app, raw, o);
    std::vector<const char*> args(argv, argv + argc);
    refuse_renamed_flags(args);
    try {
        app.parse(argc, args.data());
    } catch (const CLI::CallForHelp&) {
        o.help = true;
        o.help_text = app.help();
        return o;
    } catch (const CLI::ParseError& e) {
        throw UsageError("", std::string(e.what()) + " (see --help)");
    }

    read_capture_flags(raw, o);
    if (auto v = raw.get("--classes")) {
        read_classes(raw, *v, o);
        return o;
    }
    SimConfig& c = o.cfg;
    c.link.mean_delay = 10 * kNsPerMs;
    c.link.seed = 1;
    const nlohmann::json link = link_from_flags(raw);
    read_traffic_flags(raw, c.traffic);
    read_run_flags(raw, o);
    read_sweep_flags(raw, o);
    refuse_mixed_flags(raw, o);
    apply_link(link, c);
    if (auto v = raw.get("--scenario")) read_scenario(*v, o);
    if (o.arrivals) {
        c.arrivals = o.arrivals.get();
        if (!o.duration_given && !o.arrivals->empty()) c.duration = o.arrivals->back() + 1;
    }
    // Before --traffic-rate existed, --rate was the traffic's rate: a --rate that no limiter
    // uses is most likely meant for the traffic.
    if (raw.get("--rate") && c.link.limiter == Limiter::none)
        throw UsageError("--rate",
                         "is the limiter's rate (rate_bps), but --limiter is none: add "
                         "--limiter spacer or --limiter policer; the traffic's rate is "
                         "--traffic-rate");
    return o;
}

namespace {

// Prints progress lines on stderr once a run has taken more than a few seconds.
class Progress {
  public:
    Progress(std::ostream& err, bool quiet, int run, int runs)
        : err_(err),
          quiet_(quiet),
          run_(run),
          runs_(runs),
          start_(std::chrono::steady_clock::now()),
          last_(start_) {}

    void operator()(double fraction, std::uint64_t packets) {
        if (quiet_) return;
        const auto now = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        if (elapsed < 3 || std::chrono::duration<double>(now - last_).count() < 2) return;
        last_ = now;
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "linkem-sim: run %d/%d: %3.0f%% of simulated time, %.3g Mpackets, %.1f "
                      "Mpackets/s, ~%.0f s left\n",
                      run_ + 1, runs_, 100 * fraction, packets * 1e-6, packets * 1e-6 / elapsed,
                      fraction > 0 ? elapsed * (1 - fraction) / fraction : 0.0);
        err_ << buf << std::flush;
    }

  private:
    std::ostream& err_;
    bool quiet_;
    int run_, runs_;
    std::chrono::steady_clock::time_point start_, last_;
};

// --capture's file, opened (an error names the flag, the path and the reason).
std::unique_ptr<SimCapture> open_capture(const CliOptions& o, unsigned directions,
                                         std::function<std::string(unsigned, unsigned)> names) {
    try {
        return std::make_unique<SimCapture>(*o.capture, directions, std::move(names));
    } catch (const std::system_error& e) {
        throw std::runtime_error(std::string("--capture: ") + e.what());
    }
}

void report_capture(SimCapture& cap, const CliOptions& o, std::ostream& err) {
    cap.close();
    if (o.quiet) return;
    const std::uint64_t* by_point = cap.records_by_point();
    err << "linkem-sim: wrote " << o.capture->file << ": " << cap.records() << " records ("
        << by_point[0] << " in, " << by_point[1] << " out, " << by_point[2] << " drop)\n";
}

int run_single(const CliOptions& o, std::ostream& out, std::ostream& err) {
    std::vector<RunResult> results;
    // The first run's records (b_to_a: the file has both directions' interfaces).
    std::unique_ptr<SimCapture> cap;
    if (o.capture)
        cap = open_capture(o, o.direction + 1, [](unsigned, unsigned) { return "default"; });
    std::unique_ptr<std::ofstream> series;
    if (!o.series_path.empty()) {
        series = std::make_unique<std::ofstream>(o.series_path);
        if (!*series) {
            err << "linkem-sim: cannot write --delay-series file '" << o.series_path << "'\n";
            return 1;
        }
        *series << (o.cfg.track ? "time_ms,delay_ms,mean_delay_ms\n" : "time_ms,delay_ms\n");
        series->precision(12);
    }
    std::unique_ptr<std::ofstream> queue_series;
    if (!o.queue_series_path.empty()) {
        queue_series = std::make_unique<std::ofstream>(o.queue_series_path);
        if (!*queue_series) {
            err << "linkem-sim: cannot write --queue-series file '" << o.queue_series_path << "'\n";
            return 1;
        }
        *queue_series << kQueueSeriesHeader;
        queue_series->precision(9);
    }
    for (int i = 0; i < o.runs; ++i) {
        SimConfig c = o.cfg;
        // Seed 0 asks for a random seed: the first run draws it, the others follow it.
        const std::uint64_t base = o.cfg.link.seed != 0 ? o.cfg.link.seed
                                   : results.empty()    ? 0
                                                        : results.front().seed;
        c.link.seed = base == 0 ? 0 : base + static_cast<std::uint64_t>(i);
        if (i == 0) {
            c.series = series.get();
            c.queue_series = queue_series.get();
            c.capture = cap.get();
            c.capture_direction = o.direction;
        }
        Progress progress(err, o.quiet, i, o.runs);
        c.progress = [&progress](double f, std::uint64_t n) { progress(f, n); };
        results.push_back(run_once(c));
        if (i == 0 && cap) report_capture(*cap, o, err);
    }
    if (o.json)
        out << report_json(o.cfg, results).dump(2) << "\n";
    else
        print_table(out, o.cfg, results);
    return 0;
}

int run_classes_cli(const CliOptions& o, std::ostream& out, std::ostream& err) {
    ClassSimConfig cfg = *o.classes;
    std::unique_ptr<SimCapture> cap;
    if (o.capture) {
        cap = open_capture(o, 2, [&cfg](unsigned, unsigned slot) {
            return slot == 0 || slot > cfg.file.classes.size() ? std::string(kDefaultClassName)
                                                               : cfg.file.classes[slot - 1].name;
        });
        cfg.capture = cap.get();
    }
    const ClassRunResult r = run_classes(cfg);
    if (cap) report_capture(*cap, o, err);
    if (o.json)
        out << class_report_json(*o.classes, r).dump(2) << "\n";
    else
        print_class_table(out, *o.classes, r, o.classes_path);
    return 0;
}

int run_sweep_cli(const CliOptions& o, std::ostream& out, std::ostream& err) {
    std::string csv_path = o.csv_path;
    if (o.from_csv.empty()) {
        SweepSettings s;
        s.rates_bps = o.rates_bps;
        s.duration = o.duration_given ? o.cfg.duration : 0;
        s.runs = o.runs_given ? o.runs : 0;
        s.paper_durations = o.paper_durations;
        s.jobs = o.jobs;
        s.seed = o.cfg.link.seed != 0 ? o.cfg.link.seed : 1;
        s.quiet = o.quiet;
        if (csv_path.empty() && !o.plot_path.empty()) csv_path = o.plot_path + ".csv";
        int rc = 0;
        if (csv_path.empty()) {
            rc = run_sweep(o.sweep, o.cfg, s, out, err);
        } else {
            std::ofstream f(csv_path);
            if (!f) {
                err << "linkem-sim: cannot write --csv file '" << csv_path << "'\n";
                return 1;
            }
            rc = run_sweep(o.sweep, o.cfg, s, f, err);
            if (!o.quiet) err << "linkem-sim: wrote " << csv_path << "\n";
        }
        if (rc != 0) return rc;
    } else {
        csv_path = o.from_csv;
    }
    if (!o.plot_path.empty()) return plot_csv(o.sweep, csv_path, o.plot_path, err);
    return 0;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
    CliOptions o;
    try {
        o = parse_cli(argc, argv);
    } catch (const UsageError& e) {
        err << "linkem-sim: error: " << e.what() << "\n";
        return 2;
    }
    if (o.help) {
        out << o.help_text;
        return 0;
    }
    try {
        if (o.classes) return run_classes_cli(o, out, err);
        return o.sweep.empty() ? run_single(o, out, err) : run_sweep_cli(o, out, err);
    } catch (const std::exception& e) {
        err << "linkem-sim: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace linkem::sim
