#include "cli.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>

#include "linkem/units.hpp"
#include "report.hpp"
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
        throw UsageError(flag, "'" + v +
                                   "' is not a duration; give a non-negative number with a unit "
                                   "(ns, us, ms, s, min), e.g. 10ms");
    return *d;
}

double need_rate(const std::string& flag, const std::string& v) {
    const auto r = parse_rate(v);
    if (!r)
        throw UsageError(flag, "'" + v +
                                   "' is not a bit rate; give a number with a unit, e.g. "
                                   "10Gbit, 100Mbit/s, 1e9bps");
    return *r;
}

std::uint64_t need_bytes(const std::string& flag, const std::string& v) {
    const auto b = parse_bytes(v);
    if (!b) throw UsageError(flag, "'" + v + "' is not a size; e.g. 1518, 64KiB, 1MB");
    return *b;
}

double need_number(const std::string& flag, const std::string& v, double lo, double hi) {
    double x = 0;
    const char* end = v.data() + v.size();
    const auto [p, ec] = std::from_chars(v.data(), end, x);
    if (ec != std::errc() || p != end || !std::isfinite(x))
        throw UsageError(flag, "'" + v + "' is not a number");
    if (x < lo || x > hi) {
        std::ostringstream os;
        os << "'" << v << "' is out of range; allowed " << lo << " .. " << hi;
        throw UsageError(flag, os.str());
    }
    return x;
}

std::uint64_t need_uint(const std::string& flag, const std::string& v, std::uint64_t lo,
                        std::uint64_t hi) {
    std::uint64_t x = 0;
    const char* end = v.data() + v.size();
    const auto [p, ec] = std::from_chars(v.data(), end, x);
    if (ec != std::errc() || p != end) throw UsageError(flag, "'" + v + "' is not a whole number");
    if (x < lo || x > hi)
        throw UsageError(flag, "'" + v + "' is out of range; allowed " + std::to_string(lo) +
                                   " .. " + std::to_string(hi));
    return x;
}

template <class E>
E need_enum(const std::string& flag, const std::string& v, std::initializer_list<E> values) {
    std::vector<std::string> names;
    for (E e : values) {
        if (v == to_string(e)) return e;
        names.emplace_back(to_string(e));
    }
    throw UsageError(flag, "'" + v + "' is not allowed; allowed: " + join(names));
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
    const char* flag;
    const char* field;  // JSON field it sets ("" = simulator-only)
    const char* help;
};

const std::vector<FlagDef>& flag_defs() {
    static const std::vector<FlagDef> kFlags = {
        // Link parameters (LinkParams, same names as everywhere else).
        {"--strategy", "strategy", "correlated | uncorrelated | reordered (default correlated)"},
        {"--distribution", "distribution",
         "normal | uniform | gamma | lognormal | constant (default normal)"},
        {"--mean-delay", "mean_delay_us", "mean added delay, e.g. 10ms (default 10ms)"},
        {"--jitter", "jitter_us", "standard deviation of the delay, e.g. 3ms (default 0)"},
        {"--half-life", "half_life_us", "half-life t_h of delay correlation (default 21ms)"},
        {"--rate-window", "rate_window_us", "T_min of the rate estimator (default 10ms)"},
        {"--limiter", "limiter", "none | spacer | policer (default none)"},
        {"--limiter-rate", "rate_bps",
         "rate of the spacer/policer (LinkParams rate_bps), e.g. 9Gbit"},
        {"--spacer-limit", "spacer_limit_bytes", "spacer fill limit, e.g. 1MiB"},
        {"--policer-burst", "policer_burst_bytes", "policer bucket size, e.g. 64KiB"},
        {"--byte-accounting", "byte_accounting", "frame | wire (limiter bytes)"},
        {"--loss-model", "loss_model", "none | bernoulli | gilbert_elliott"},
        {"--loss-probability", "loss_probability", "Bernoulli loss probability 0..1"},
        {"--ge-p", "ge_p", "Gilbert-Elliott good->bad probability"},
        {"--ge-r", "ge_r", "Gilbert-Elliott bad->good probability"},
        {"--ge-loss-good", "ge_loss_good", "Gilbert-Elliott loss probability in good"},
        {"--ge-loss-bad", "ge_loss_bad", "Gilbert-Elliott loss probability in bad"},
        {"--buffer-limit", "buffer_limit_packets", "packets the emulator may hold"},
        {"--seed", "seed", "seed of the first run; run i uses seed+i (default 1; 0 = random)"},
        // Traffic and run.
        {"--traffic", "traffic.pattern", "cbr | poisson | sine (default cbr)"},
        {"--rate", "traffic.rate_bps",
         "TRAFFIC rate (sine: peak rate), e.g. 10Gbit (default 10Gbit)"},
        {"--frame-size", "traffic.frame_size_bytes", "frame size in bytes (default 1518)"},
        {"--period", "traffic.period_us", "period of the sine traffic (default 30s)"},
        {"--duration", "duration_us", "simulated time of arrivals per run (default 60s)"},
        {"--utilization", "utilization",
         "utilisation u of a virtual queue served at rate/u behind the emulator; 0 = none"},
        {"--runs", "", "runs with seeds seed..seed+N-1; mean and 95% CI (default 1)"},
        {"--trace", "", "write the delay series of the first run to this CSV"},
        {"--trace-interval", "", "one trace sample per this much time (default 1ms)"},
        // Sweeps.
        {"--sweep", "", "regenerate a paper figure's data as CSV: fig1 fig3 ... fig11"},
        {"--rates", "", "sweep traffic rates, comma-separated (default 0.1G,1G,10G,100G)"},
        {"--csv", "", "sweep CSV output file (default stdout)"},
        {"--from-csv", "", "sweep: re-plot this CSV instead of simulating"},
        {"--plot", "", "sweep: draw the figure into this PNG (gnuplot)"},
        {"--jobs", "", "sweep: runs in parallel (default 1)"},
    };
    return kFlags;
}

// The placeholder shown in --help for a flag's value.
std::string value_name(const std::string& flag) {
    static const std::map<std::string, std::string> kNames = {{"--mean-delay", "DURATION"},
                                                              {"--jitter", "DURATION"},
                                                              {"--half-life", "DURATION"},
                                                              {"--rate-window", "DURATION"},
                                                              {"--period", "DURATION"},
                                                              {"--duration", "DURATION"},
                                                              {"--trace-interval", "DURATION"},
                                                              {"--limiter-rate", "RATE"},
                                                              {"--rate", "RATE"},
                                                              {"--rates", "RATE,..."},
                                                              {"--spacer-limit", "BYTES"},
                                                              {"--policer-burst", "BYTES"},
                                                              {"--frame-size", "BYTES"},
                                                              {"--buffer-limit", "N"},
                                                              {"--seed", "N"},
                                                              {"--runs", "N"},
                                                              {"--jobs", "N"},
                                                              {"--utilization", "U"},
                                                              {"--trace", "FILE"},
                                                              {"--csv", "FILE"},
                                                              {"--from-csv", "FILE"},
                                                              {"--plot", "FILE.png"},
                                                              {"--sweep", "FIGURE"}};
    const auto it = kNames.find(flag);
    if (it != kNames.end()) return it->second;
    return flag.rfind("--ge-", 0) == 0 || flag == "--loss-probability" ? "P" : "NAME";
}

}  // namespace

std::string flag_for_field(const std::string& field) {
    for (const FlagDef& f : flag_defs())
        if (field == f.field) return f.flag;
    return "";
}

CliOptions parse_cli(int argc, const char* const* argv) {
    CLI::App app{
        "linkem-sim: discrete-event simulation of linkem's emulator (DPDS paper Section IV).\n"
        "Durations and rates take units (10ms, 10Gbit). --rate is the TRAFFIC rate; the\n"
        "limiter's rate is --limiter-rate. See docs/simulation.md.",
        "linkem-sim"};
    app.option_defaults()->always_capture_default(false);
    RawOptions raw;
    for (const FlagDef& f : flag_defs()) {
        std::string help = f.help;
        if (*f.field && std::string(f.field).find('.') == std::string::npos &&
            std::string(f.field) != "utilization")
            help += "  [" + std::string(f.field) + "]";
        app.add_option_function<std::string>(
               f.flag,
               [&raw, flag = std::string(f.flag)](const std::string& v) { raw.values[flag] = v; },
               help)
            ->type_name(value_name(f.flag));
    }
    CliOptions o;
    app.add_flag("--json", o.json, "print one JSON object instead of the table");
    app.add_flag("--paper-durations", o.paper_durations,
                 "sweep: the paper's 10-minute runs, 10 of each (slow)");
    app.add_flag("-q,--quiet", o.quiet, "no progress on stderr");

    std::vector<const char*> args(argv, argv + argc);
    try {
        app.parse(argc, args.data());
    } catch (const CLI::CallForHelp&) {
        o.help = true;
        o.help_text = app.help();
        return o;
    } catch (const CLI::ParseError& e) {
        throw UsageError("", std::string(e.what()) + " (see --help)");
    }

    SimConfig& c = o.cfg;
    LinkParams& p = c.link;
    p.mean_delay = 10 * kNsPerMs;
    p.seed = 1;
    if (auto v = raw.get("--strategy"))
        p.strategy = need_enum("--strategy", *v,
                               {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered});
    if (auto v = raw.get("--distribution")) {
        if (!parse_distribution(*v, p.distribution))
            throw UsageError("--distribution",
                             "'" + *v +
                                 "' is not allowed; allowed: normal, uniform, gamma, "
                                 "lognormal, constant");
    }
    if (auto v = raw.get("--mean-delay")) p.mean_delay = need_duration("--mean-delay", *v);
    if (auto v = raw.get("--jitter")) p.jitter = need_duration("--jitter", *v);
    if (auto v = raw.get("--half-life")) p.half_life = need_duration("--half-life", *v);
    if (auto v = raw.get("--rate-window")) p.rate_window = need_duration("--rate-window", *v);
    if (auto v = raw.get("--limiter"))
        p.limiter = need_enum("--limiter", *v, {Limiter::none, Limiter::spacer, Limiter::policer});
    if (auto v = raw.get("--limiter-rate")) p.rate_bps = need_rate("--limiter-rate", *v);
    if (auto v = raw.get("--spacer-limit")) p.spacer_limit_bytes = need_bytes("--spacer-limit", *v);
    if (auto v = raw.get("--policer-burst"))
        p.policer_burst_bytes = need_bytes("--policer-burst", *v);
    if (auto v = raw.get("--byte-accounting"))
        p.byte_accounting =
            need_enum("--byte-accounting", *v, {ByteAccounting::frame, ByteAccounting::wire});
    if (auto v = raw.get("--loss-model"))
        p.loss_model =
            need_enum("--loss-model", *v,
                      {LossModel::none, LossModel::bernoulli, LossModel::gilbert_elliott});
    if (auto v = raw.get("--loss-probability"))
        p.loss_probability = need_number("--loss-probability", *v, 0, 1);
    if (auto v = raw.get("--ge-p")) p.ge_p = need_number("--ge-p", *v, 0, 1);
    if (auto v = raw.get("--ge-r")) p.ge_r = need_number("--ge-r", *v, 0, 1);
    if (auto v = raw.get("--ge-loss-good"))
        p.ge_loss_good = need_number("--ge-loss-good", *v, 0, 1);
    if (auto v = raw.get("--ge-loss-bad")) p.ge_loss_bad = need_number("--ge-loss-bad", *v, 0, 1);
    if (auto v = raw.get("--buffer-limit"))
        p.buffer_limit_packets = need_uint("--buffer-limit", *v, 1, ParamLimits::kMaxBufferPackets);
    if (auto v = raw.get("--seed")) p.seed = need_uint("--seed", *v, 0, UINT64_MAX);

    if (auto v = raw.get("--traffic"))
        c.traffic.pattern = need_enum(
            "--traffic", *v, {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine});
    if (auto v = raw.get("--rate")) c.traffic.rate_bps = need_rate("--rate", *v);
    if (auto v = raw.get("--frame-size"))
        c.traffic.frame_bytes = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(need_bytes("--frame-size", *v), UINT32_MAX));
    if (auto v = raw.get("--period")) c.traffic.period = need_duration("--period", *v);
    if (auto v = raw.get("--duration")) {
        c.duration = need_duration("--duration", *v);
        o.duration_given = true;
    }
    if (auto v = raw.get("--utilization")) c.utilization = need_number("--utilization", *v, 0, 1);
    if (auto v = raw.get("--runs")) {
        o.runs = static_cast<int>(need_uint("--runs", *v, 1, 10000));
        o.runs_given = true;
    }
    if (auto v = raw.get("--trace")) o.trace_path = *v;
    if (auto v = raw.get("--trace-interval")) {
        c.trace_interval = need_duration("--trace-interval", *v);
        if (c.trace_interval <= 0) throw UsageError("--trace-interval", "must be greater than 0");
    }

    if (auto v = raw.get("--sweep")) {
        if (!is_sweep(*v))
            throw UsageError("--sweep",
                             "'" + *v + "' is not a sweep; allowed: " + join(sweep_names()));
        o.sweep = *v;
    }
    if (auto v = raw.get("--rates")) {
        std::stringstream ss(*v);
        std::string item;
        while (std::getline(ss, item, ',')) {
            const auto r = parse_rate(item);
            if (!r || *r < ParamLimits::kMinRate || *r > ParamLimits::kMaxRate)
                throw UsageError("--rates", "'" + item +
                                                "' is not a rate between 1kbit and 1.6Tbit; give "
                                                "a comma-separated list such as 0.1Gbit,1Gbit");
            o.rates_bps.push_back(*r);
        }
        if (o.rates_bps.empty()) throw UsageError("--rates", "needs at least one rate");
    }
    if (auto v = raw.get("--csv")) o.csv_path = *v;
    if (auto v = raw.get("--from-csv")) o.from_csv = *v;
    if (auto v = raw.get("--plot")) o.plot_path = *v;
    if (auto v = raw.get("--jobs")) o.jobs = static_cast<int>(need_uint("--jobs", *v, 1, 256));

    const bool sweep = !o.sweep.empty();
    for (const char* f : {"--rates", "--csv", "--from-csv", "--plot", "--jobs"})
        if (!sweep && raw.get(f)) throw UsageError(f, "only applies with --sweep");
    if (!sweep && o.paper_durations)
        throw UsageError("--paper-durations", "only applies with --sweep");
    if (sweep && !o.trace_path.empty()) throw UsageError("--trace", "not available with --sweep");
    if (sweep && o.json) throw UsageError("--json", "sweeps write CSV (see --csv)");
    if (!o.from_csv.empty() && o.plot_path.empty())
        throw UsageError("--from-csv", "needs --plot (it only re-draws a CSV)");

    try {
        validate_config(c);
    } catch (const ParamError& e) {
        std::string msg = e.what();
        const std::string prefix = "field '" + e.field() + "': ";
        if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
        const std::string flag = flag_for_field(e.field());
        throw UsageError(flag.empty() ? e.field() : flag,
                         msg + (flag.empty() ? "" : " [" + e.field() + "]"));
    }
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

int run_single(const CliOptions& o, std::ostream& out, std::ostream& err) {
    std::vector<RunResult> results;
    std::unique_ptr<std::ofstream> trace;
    if (!o.trace_path.empty()) {
        trace = std::make_unique<std::ofstream>(o.trace_path);
        if (!*trace) {
            err << "linkem-sim: cannot write --trace file '" << o.trace_path << "'\n";
            return 1;
        }
        *trace << "time_ms,delay_ms\n";
        trace->precision(12);
    }
    for (int i = 0; i < o.runs; ++i) {
        SimConfig c = o.cfg;
        // Seed 0 asks for a random seed: the first run draws it, the others follow it.
        const std::uint64_t base = o.cfg.link.seed != 0 ? o.cfg.link.seed
                                   : results.empty()    ? 0
                                                        : results.front().seed;
        c.link.seed = base == 0 ? 0 : base + static_cast<std::uint64_t>(i);
        if (i == 0) c.trace = trace.get();
        Progress progress(err, o.quiet, i, o.runs);
        c.progress = [&progress](double f, std::uint64_t n) { progress(f, n); };
        results.push_back(run_once(c));
    }
    if (o.json)
        out << report_json(o.cfg, results).dump(2) << "\n";
    else
        print_table(out, o.cfg, results);
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
        return o.sweep.empty() ? run_single(o, out, err) : run_sweep_cli(o, out, err);
    } catch (const std::exception& e) {
        err << "linkem-sim: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace linkem::sim
