#include "sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>

#include "linkem/delayer.hpp"
#include "linkem/distributions.hpp"
#include "linkem/rng.hpp"
#include "linkem/smooth_delay.hpp"
#include "report.hpp"

namespace linkem::sim {
namespace {

constexpr double kGbit = 1e9;
const std::vector<double> kJittersMs = {0.1, 0.3, 1, 3};
const std::vector<double> kHalfLivesMs = {7, 21, 70};
const std::vector<double> kMeansMs = {3, 10, 30};
const std::vector<double> kUtilizations = {0, 0.5, 0.8, 0.99};
const std::vector<Distribution> kDistributions = {Distribution::normal, Distribution::uniform,
                                                  Distribution::gamma, Distribution::lognormal};

DurationNs ms(double v) {
    return static_cast<DurationNs>(std::llround(v * kNsPerMs));
}

std::string num(double v) {
    if (!std::isfinite(v)) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// The CSV's columns. Keys first (what the figure varies), then the measured means with
// the half-widths of their 95 % confidence intervals.
const char* const kCsvHeader =
    "figure,strategy,distribution,rate_gbps,mean_delay_ms,jitter_ms,half_life_ms,utilization,"
    "duration_s,runs,packets_in,mean_dev_pct,mean_dev_pct_ci,mean_dev_ms,mean_dev_ms_ci,"
    "jitter_dev_pct,jitter_dev_pct_ci,jitter_dev_ms,jitter_dev_ms_ci,passage_ms,passage_ms_ci,"
    "passages,swaps_per_packet,swaps_per_packet_ci,drops,delays_clamped,alpha_mean,sim_mpps,"
    "waited_pct,waited_pct_ci";

// "$n": gnuplot's value of column n. (Built with append: GCC 12 warns falsely
// (-Wrestrict) on "$" + std::to_string(n).)
std::string dollar(int n) {
    std::string s = "$";
    s.append(std::to_string(n));
    return s;
}

// Columns by name -> gnuplot column number (1-based).
int column(const std::string& name) {
    std::stringstream ss(kCsvHeader);
    std::string c;
    for (int i = 1; std::getline(ss, c, ','); ++i)
        if (c == name) return i;
    return 0;
}

void write_row(std::ostream& os, const std::string& fig, const SimConfig& c,
               const std::vector<RunResult>& runs) {
    auto stat = [&](auto get) {
        std::vector<double> v;
        for (const RunResult& r : runs)
            v.push_back(get(r));
        return summarize(v);
    };
    auto pair = [&](auto get, double scale) {
        const Stat s = stat(get);
        return num(s.mean * scale) + "," + num(s.ci95 * scale);
    };
    double packets = 0, passages = 0, drops = 0, clamped = 0, wall = 0;
    for (const RunResult& r : runs) {
        packets += static_cast<double>(r.packets_in);
        passages += static_cast<double>(r.passages);
        drops += static_cast<double>(r.packets_in - r.packets_out);
        clamped += static_cast<double>(r.delays_clamped);
        wall += r.wall_s;
    }
    const double n = static_cast<double>(runs.size());
    os << fig << ',' << to_string(c.link.strategy) << ',' << to_string(c.link.distribution) << ','
       << num(c.traffic.rate_bps / kGbit) << ','
       << num(static_cast<double>(c.link.mean_delay) / kNsPerMs) << ','
       << num(static_cast<double>(c.link.jitter) / kNsPerMs) << ','
       << num(static_cast<double>(c.link.half_life) / kNsPerMs) << ',' << num(c.utilization) << ','
       << num(static_cast<double>(c.duration) * 1e-9) << ',' << runs.size() << ','
       << num(packets / n) << ','
       << pair([](const RunResult& r) { return r.mean_delay_dev_pct; }, 1) << ','
       << pair([](const RunResult& r) { return r.mean_delay_dev_us; }, 1e-3) << ','
       << pair([](const RunResult& r) { return r.jitter_dev_pct; }, 1) << ','
       << pair([](const RunResult& r) { return r.jitter_dev_us; }, 1e-3) << ','
       << pair([](const RunResult& r) { return r.passage_time_ms; }, 1) << ',' << num(passages / n)
       << ',' << pair([](const RunResult& r) { return r.swaps_per_packet; }, 1) << ','
       << num(drops / n) << ',' << num(clamped / n) << ','
       << num(stat([](const RunResult& r) { return r.alpha_mean; }).mean) << ','
       << num(wall > 0 ? packets / wall * 1e-6 : 0) << ','
       << pair([](const RunResult& r) { return r.waited_pct; }, 1) << '\n';
}

// ---- fig11: sample generation rate per distribution ------------------------------------

int run_fig11(const SimConfig& base, const SweepSettings& s, std::ostream& csv, std::ostream& err) {
    const std::uint64_t samples = s.paper_durations ? 1'000'000'000 : 50'000'000;
    const int runs = s.runs > 0 ? s.runs : (s.paper_durations ? 10 : 3);
    const double mean = 10e6, sd = 3e6;  // 10 ms, 3 ms in ns
    // The correlated delayer draws C with sd sigma * sqrt((1 + alpha) / (1 - alpha)), which
    // depends on the rate; use the base traffic rate (default 10 Gbit/s).
    const double pps = base.traffic.rate_bps / base.traffic.bits_per_packet();
    csv << "figure,distribution,samples,runs,raw_msamples_per_s,raw_ci,"
           "delayer_msamples_per_s,delayer_ci,delayer_rate_gbps\n";
    for (Distribution d : kDistributions) {
        std::vector<double> raw, delayer;
        for (int r = 0; r < runs; ++r) {
            Rng rng(s.seed + static_cast<std::uint64_t>(r));
            DelayDistribution dist(d, mean, sd);
            double sink = 0;
            auto t0 = std::chrono::steady_clock::now();
            for (std::uint64_t i = 0; i < samples; ++i)
                sink += dist.sample(rng);
            auto t1 = std::chrono::steady_clock::now();
            raw.push_back(samples / std::chrono::duration<double>(t1 - t0).count() * 1e-6);

            Delayer del;
            del.configure(Delayer::Config{Strategy::correlated, d, mean, sd,
                                          static_cast<double>(base.link.half_life)});
            del.on_rate(pps);
            t0 = std::chrono::steady_clock::now();
            for (std::uint64_t i = 0; i < samples; ++i)
                sink += del.next(rng);
            t1 = std::chrono::steady_clock::now();
            delayer.push_back(samples / std::chrono::duration<double>(t1 - t0).count() * 1e-6);
            if (sink == 42.0) err << "";  // keeps the loops from being optimised away
        }
        const Stat a = summarize(raw), b = summarize(delayer);
        csv << "fig11," << to_string(d) << ',' << samples << ',' << runs << ',' << num(a.mean)
            << ',' << num(a.ci95) << ',' << num(b.mean) << ',' << num(b.ci95) << ','
            << num(base.traffic.rate_bps / kGbit) << '\n';
        if (!s.quiet)
            err << "linkem-sim: fig11: " << to_string(d) << " " << num(a.mean)
                << " M samples/s (raw), " << num(b.mean) << " M/s (correlated delayer)\n";
    }
    return 0;
}

// ---- smooth-acf: autocorrelation of the delay in time ----------------------------------

// The delay series sampled every t_h / 16 of arrival time for `duration` (default 600 s per
// run): smooth straight from its process (it is a function of time), correlated at the
// base traffic rate (one EMA step per packet, the value at each sampling instant). The
// sample autocorrelation at lags 0..5 t_h, against 0.5^(tau/t_h) (correlated's law) and
// (1 + a tau) e^(-a tau) (smooth's, a t_h = 1.678).
int run_smooth_acf(const SimConfig& base, const SweepSettings& s, std::ostream& csv,
                   std::ostream& err) {
    const double th = static_cast<double>(base.link.half_life);
    const double mean = static_cast<double>(base.link.mean_delay);
    const double sd = base.link.jitter > 0 ? static_cast<double>(base.link.jitter) : 3e6;
    const double dt = th / 16;
    const DurationNs dur = s.duration > 0 ? s.duration : 600 * kNsPerSec;
    const std::size_t n = static_cast<std::size_t>(static_cast<double>(dur) / dt);
    const int runs = s.runs > 0 ? s.runs : 3;
    const double pps = base.traffic.rate_bps / base.traffic.bits_per_packet();
    constexpr int kMaxLag = 80;  // 5 t_h
    csv << "figure,strategy,distribution,lag_th,acf,acf_ci,target_exp,target_smooth\n";
    for (Strategy st : {Strategy::smooth, Strategy::correlated}) {
        std::vector<std::vector<double>> acf(kMaxLag + 1);
        for (int r = 0; r < runs; ++r) {
            Delayer d;
            d.configure(Delayer::Config{st, base.link.distribution, mean, sd, th});
            if (st == Strategy::correlated) d.on_rate(pps);
            Rng rng(s.seed + static_cast<std::uint64_t>(r));
            std::vector<double> x(n);
            const double per_sample = dt * 1e-9 * pps;  // packets between samples
            double owed = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const auto t = static_cast<TimeNs>(static_cast<double>(i) * dt);
                if (st == Strategy::smooth) {
                    x[i] = d.next(rng, t);
                } else {
                    owed += per_sample;
                    double v = 0;
                    for (; owed >= 1; owed -= 1)
                        v = d.next(rng, t);
                    x[i] = i ? v : d.next(rng, t);
                }
            }
            long double m = 0;
            for (double v : x)
                m += v;
            m /= static_cast<long double>(n);
            long double c0 = 0;
            for (double v : x)
                c0 += (v - m) * (v - m);
            for (int lag = 0; lag <= kMaxLag; ++lag) {
                long double c = 0;
                for (std::size_t i = static_cast<std::size_t>(lag); i < n; ++i)
                    c += (x[i] - m) * (x[i - lag] - m);
                acf[lag].push_back(static_cast<double>(c / c0));
            }
        }
        for (int lag = 0; lag <= kMaxLag; ++lag) {
            const double tau = lag / 16.0, a = SmoothDelay::kShape;
            const Stat st_lag = summarize(acf[lag]);
            csv << "smooth-acf," << to_string(st) << ',' << to_string(base.link.distribution) << ','
                << num(tau) << ',' << num(st_lag.mean) << ',' << num(st_lag.ci95) << ','
                << num(std::pow(0.5, tau)) << ',' << num((1 + a * tau) * std::exp(-a * tau))
                << '\n';
        }
        if (!s.quiet)
            err << "linkem-sim: smooth-acf: " << to_string(st) << " done (" << runs << " x " << n
                << " samples)\n";
    }
    return 0;
}

// ---- smooth-ks: distance of the delay's marginal from the configured law ------------------

double target_cdf(Distribution d, double mean, double sd, double y) {
    switch (d) {
        case Distribution::uniform: {
            const double h = std::sqrt(3.0) * sd;
            return std::clamp((y - (mean - h)) / (2 * h), 0.0, 1.0);
        }
        case Distribution::gamma:
            return regularized_gamma_p(mean * mean / (sd * sd), y * mean / (sd * sd));
        case Distribution::lognormal: {
            if (y <= 0) return 0;
            const double s = std::sqrt(std::log1p(sd * sd / (mean * mean)));
            return normal_cdf((std::log(y) - (std::log(mean) - 0.5 * s * s)) / s);
        }
        default:
            return normal_cdf((y - mean) / sd);
    }
}

// Kolmogorov-Smirnov distance of delays sampled 10 t_h apart (independent: rho < 1e-6 for
// smooth, 2^-10 for correlated) from the configured law; `samples` of them per distribution
// (default 20000: the i.i.d. noise level is then 0.87/sqrt(n) = 0.006 on average).
// correlated at the base traffic rate steps its EMA once per packet in between.
int run_smooth_ks(const SimConfig& base, const SweepSettings& s, std::ostream& csv,
                  std::ostream& err) {
    const double th = static_cast<double>(base.link.half_life);
    const double mean = static_cast<double>(base.link.mean_delay);
    const double jitter = base.link.jitter > 0 ? static_cast<double>(base.link.jitter) : 3e6;
    const std::size_t n = s.runs > 0 ? static_cast<std::size_t>(s.runs) * 1000 : 20000;
    const double pps = base.traffic.rate_bps / base.traffic.bits_per_packet();
    csv << "figure,strategy,distribution,samples,ks,ks_crit_1pct,mean_dev_pct,jitter_dev_pct\n";
    for (Distribution dist : kDistributions) {
        for (Strategy st : {Strategy::smooth, Strategy::correlated}) {
            Delayer d;
            d.configure(Delayer::Config{st, dist, mean, jitter, th});
            if (st == Strategy::correlated) d.on_rate(pps);
            Rng rng(s.seed), offsets(s.seed ^ 0x5bd1e995);
            const auto per = static_cast<std::uint64_t>(10 * th * 1e-9 * pps);
            std::vector<double> x(n);
            TimeNs t = 0;
            for (auto& v : x) {
                t += static_cast<TimeNs>(10 * th * (1 + 0.1 * offsets.uniform()));
                if (st == Strategy::smooth) {
                    v = d.next(rng, t);
                } else {
                    for (std::uint64_t k = 0; k < per; ++k)
                        v = d.next(rng, t);
                }
            }
            long double m = 0, m2 = 0;
            for (double v : x)
                m += v;
            m /= static_cast<long double>(n);
            for (double v : x)
                m2 += (v - m) * (v - m);
            // the jitter as linkem defines it: the population standard deviation
            const double jitter_got = std::sqrt(static_cast<double>(m2 / n));
            std::sort(x.begin(), x.end());
            double ks = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double f = target_cdf(dist, mean, jitter, x[i]);
                ks = std::max({ks, f - static_cast<double>(i) / static_cast<double>(n),
                               static_cast<double>(i + 1) / static_cast<double>(n) - f});
            }
            csv << "smooth-ks," << to_string(st) << ',' << to_string(dist) << ',' << n << ','
                << num(ks) << ',' << num(1.63 / std::sqrt(static_cast<double>(n))) << ','
                << num(100 * (static_cast<double>(m) - mean) / mean) << ','
                << num(100 * (jitter_got - jitter) / jitter) << '\n';
            if (!s.quiet)
                err << "linkem-sim: smooth-ks: " << to_string(st) << ' ' << to_string(dist)
                    << " KS " << num(ks) << '\n';
        }
    }
    return 0;
}

}  // namespace

const std::vector<std::string>& sweep_names() {
    static const std::vector<std::string> kNames = {
        "fig1", "fig3",  "fig4",  "fig5",   "fig6",        "fig7",       "fig8",
        "fig9", "fig10", "fig11", "smooth", "smooth-dist", "smooth-acf", "smooth-ks"};
    return kNames;
}

bool is_sweep(const std::string& name) {
    const auto& n = sweep_names();
    return std::find(n.begin(), n.end(), name) != n.end();
}

DurationNs default_duration(const SimConfig& cfg) {
    // The passage time of the correlated normal series is about 4.7 t_h (measured, see
    // docs/simulation.md); 60 of them, at least 2 s, at most 30 s.
    if (cfg.link.strategy != Strategy::correlated && cfg.link.strategy != Strategy::smooth)
        return 2 * kNsPerSec;
    const double d = 60 * 4.7 * static_cast<double>(cfg.link.half_life);
    return std::clamp(static_cast<DurationNs>(d), 2 * kNsPerSec, 30 * kNsPerSec);
}

std::vector<SimConfig> sweep_points(const std::string& name, const SimConfig& base,
                                    const SweepSettings& s) {
    std::vector<double> rates = s.rates_bps;
    if (rates.empty()) rates = {0.1 * kGbit, 1 * kGbit, 10 * kGbit, 100 * kGbit};
    std::vector<SimConfig> pts;
    auto add = [&](Strategy st, Distribution dist, double mean_ms, double jitter_ms, double th_ms,
                   double u) {
        for (double r : rates) {
            SimConfig c = base;
            c.link.strategy = st;
            c.link.distribution = dist;
            c.link.mean_delay = ms(mean_ms);
            c.link.jitter = ms(jitter_ms);
            c.link.half_life = ms(th_ms);
            c.utilization = u;
            c.traffic.rate_bps = r;
            c.duration = s.paper_durations ? 600 * kNsPerSec
                         : s.duration > 0  ? s.duration
                                           : default_duration(c);
            c.series = nullptr;
            c.progress = nullptr;
            pts.push_back(c);
        }
    };
    const Distribution normal = Distribution::normal;
    if (name == "fig1") {
        for (double j : kJittersMs)
            add(Strategy::uncorrelated, normal, 10, j, 21, 0);
    } else if (name == "fig3" || name == "fig4") {
        for (double th : kHalfLivesMs)
            for (double j : kJittersMs)
                add(Strategy::correlated, normal, 10, j, th, 0);
    } else if (name == "fig5") {
        for (double m : kMeansMs)
            for (double j : kJittersMs)
                add(Strategy::correlated, normal, m, j, 21, 0);
    } else if (name == "fig6") {
        for (Strategy st : {Strategy::reordered, Strategy::correlated})
            for (double j : kJittersMs)
                add(st, normal, 10, j, 21, 0);
    } else if (name == "fig7" || name == "fig8") {
        const Strategy st = name == "fig7" ? Strategy::reordered : Strategy::correlated;
        for (double u : kUtilizations)
            for (double j : kJittersMs)
                add(st, normal, 10, j, 21, u);
    } else if (name == "fig9" || name == "fig10") {
        for (Distribution d : kDistributions)
            add(Strategy::correlated, d, 10, 3, 21, 0);
    } else if (name == "smooth") {  // Fig. 4's grid at t_h 21 ms, smooth beside correlated
        for (Strategy st : {Strategy::smooth, Strategy::correlated})
            for (double j : kJittersMs)
                add(st, normal, 10, j, 21, 0);
    } else if (name == "smooth-dist") {  // Fig. 10's grid, smooth beside correlated
        for (Strategy st : {Strategy::smooth, Strategy::correlated})
            for (Distribution d : kDistributions)
                add(st, d, 10, 3, 21, 0);
    }
    return pts;
}

int run_sweep(const std::string& name, const SimConfig& base, const SweepSettings& s,
              std::ostream& csv, std::ostream& err) {
    if (name == "fig11") return run_fig11(base, s, csv, err);
    if (name == "smooth-acf") return run_smooth_acf(base, s, csv, err);
    if (name == "smooth-ks") return run_smooth_ks(base, s, csv, err);
    const std::vector<SimConfig> pts = sweep_points(name, base, s);
    const int runs = s.runs > 0 ? s.runs : (s.paper_durations ? 10 : 3);
    const std::size_t n_jobs = pts.size() * static_cast<std::size_t>(runs);
    std::vector<std::vector<RunResult>> results(pts.size(), std::vector<RunResult>(runs));

    // Work is handed out largest first (simulated packets), so the last runs are short.
    std::vector<std::size_t> order(n_jobs);
    for (std::size_t i = 0; i < n_jobs; ++i)
        order[i] = i;
    auto cost = [&](std::size_t job) {
        const SimConfig& c = pts[job / runs];
        return static_cast<double>(c.duration) * c.traffic.rate_bps;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return cost(a) > cost(b); });
    double total_cost = 0;
    for (std::size_t j = 0; j < n_jobs; ++j)
        total_cost += cost(j);

    std::atomic<std::size_t> next{0};
    std::mutex mu;
    double done_cost = 0;
    std::size_t done = 0;
    const auto start = std::chrono::steady_clock::now();
    auto last = start;
    auto worker = [&] {
        for (;;) {
            const std::size_t k = next.fetch_add(1);
            if (k >= n_jobs) return;
            const std::size_t job = order[k];
            SimConfig c = pts[job / runs];
            c.link.seed = s.seed + job % runs;
            RunResult r = run_once(c);
            std::lock_guard lock(mu);
            results[job / runs][job % runs] = r;
            done_cost += cost(job);
            ++done;
            const auto now = std::chrono::steady_clock::now();
            const double el = std::chrono::duration<double>(now - start).count();
            if (!s.quiet &&
                (std::chrono::duration<double>(now - last).count() >= 2 || done == n_jobs)) {
                last = now;
                const double f = done_cost / total_cost;
                char buf[160];
                std::snprintf(buf, sizeof buf,
                              "linkem-sim: %s: %zu/%zu runs, %.0f s, ~%.0f s left\n", name.c_str(),
                              done, n_jobs, el, f > 0 ? el * (1 - f) / f : 0.0);
                err << buf << std::flush;
            }
        }
    };
    const int threads = std::max(1, std::min<int>(s.jobs, static_cast<int>(n_jobs)));
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i)
        pool.emplace_back(worker);
    worker();
    for (auto& t : pool)
        t.join();

    csv << kCsvHeader << '\n';
    for (std::size_t i = 0; i < pts.size(); ++i)
        write_row(csv, name, pts[i], results[i]);
    return 0;
}

// ---- plotting ---------------------------------------------------------------------------

namespace {

struct Series {
    std::string title, filter;  // filter: gnuplot boolean over the columns
    int color, dash;
};
struct Panel {
    std::string ylabel, column;
    bool logy = false;
};

std::string jitter_label(double j) {
    return num(j) + " ms";
}

void grid_series(const std::string& name, std::vector<Series>& series, std::vector<Panel>& panels,
                 std::string& title) {
    const std::string cj = dollar(column("jitter_ms"));
    const std::string cth = dollar(column("half_life_ms"));
    const std::string cm = dollar(column("mean_delay_ms"));
    const std::string cu = dollar(column("utilization"));
    const std::string cs = "strcol(" + std::to_string(column("strategy")) + ")";
    const std::string cd = "strcol(" + std::to_string(column("distribution")) + ")";
    const Panel mean_pct{"Mean delay deviation (%)", "mean_dev_pct"};
    const Panel jit_pct{"Jitter deviation (%)", "jitter_dev_pct"};
    auto by_jitter = [&](const std::string& extra, const std::string& prefix, int dash) {
        for (std::size_t i = 0; i < kJittersMs.size(); ++i)
            series.push_back({prefix + "jitter " + jitter_label(kJittersMs[i]),
                              "(" + cj + "==" + num(kJittersMs[i]) + extra + ")",
                              static_cast<int>(i), dash});
    };
    if (name == "fig1") {
        title = "Fig. 1: uncorrelated, non-reordered delays (mean 10 ms)";
        by_jitter("", "", 0);
        panels = {mean_pct, jit_pct};
    } else if (name == "fig3" || name == "fig4") {
        for (std::size_t t = 0; t < kHalfLivesMs.size(); ++t)
            by_jitter(" && " + cth + "==" + num(kHalfLivesMs[t]),
                      "t_h " + num(kHalfLivesMs[t]) + " ms, ", static_cast<int>(t));
        if (name == "fig3") {
            title = "Fig. 3: passage times, correlated (mean 10 ms)";
            panels = {{"Passage time (ms)", "passage_ms", true}};
        } else {
            title = "Fig. 4: accuracy of adaptive delay correlation (mean 10 ms)";
            panels = {mean_pct, jit_pct};
        }
    } else if (name == "fig5") {
        title = "Fig. 5: correlated, t_h = 21 ms, by mean delay";
        for (std::size_t m = 0; m < kMeansMs.size(); ++m)
            by_jitter(" && " + cm + "==" + num(kMeansMs[m]), "mean " + num(kMeansMs[m]) + " ms, ",
                      static_cast<int>(m));
        panels = {{"Mean delay deviation (ms)", "mean_dev_ms"},
                  {"Jitter deviation (ms)", "jitter_dev_ms"}};
    } else if (name == "fig6") {
        title = "Fig. 6: swaps per packet (0 drawn at 1e-4), mean 10 ms, t_h 21 ms";
        by_jitter(" && " + cs + " eq \"reordered\"", "reordered, ", 0);
        by_jitter(" && " + cs + " eq \"correlated\"", "correlated, ", 1);
        panels = {{"Swaps per packet", "swaps_per_packet", true}};
    } else if (name == "fig7" || name == "fig8") {
        title = name == "fig7" ? "Fig. 7: reordering under limited bandwidth (mean 10 ms)"
                               : "Fig. 8: correlated (t_h 21 ms) under limited bandwidth";
        for (std::size_t u = 0; u < kUtilizations.size(); ++u)
            by_jitter(" && " + cu + "==" + num(kUtilizations[u]),
                      "u " + num(kUtilizations[u] * 100) + "%, ", static_cast<int>(u));
        panels = {mean_pct, jit_pct};
    } else if (name == "fig9" || name == "fig10") {
        for (std::size_t d = 0; d < kDistributions.size(); ++d)
            series.push_back(
                {std::string(to_string(kDistributions[d])),
                 "(" + cd + " eq \"" + std::string(to_string(kDistributions[d])) + "\")",
                 static_cast<int>(d), 0});
        if (name == "fig9") {
            title = "Fig. 9: passage times by distribution (mean 10 ms, jitter 3 ms)";
            panels = {{"Passage time (ms)", "passage_ms", true}};
        } else {
            title = "Fig. 10: accuracy by distribution (mean 10 ms, jitter 3 ms)";
            panels = {mean_pct, jit_pct};
        }
    } else if (name == "smooth") {
        title = "smooth (solid) beside correlated (dashed), t_h 21 ms, mean 10 ms";
        by_jitter(" && " + cs + " eq \"smooth\"", "smooth, ", 0);
        by_jitter(" && " + cs + " eq \"correlated\"", "correlated, ", 1);
        panels = {mean_pct, jit_pct, {"Packets that waited (%)", "waited_pct", true}};
    } else if (name == "smooth-dist") {
        title = "smooth (solid) beside correlated (dashed) by distribution, jitter 3 ms";
        for (int k = 0; k < 2; ++k) {
            const std::string st = k == 0 ? "smooth" : "correlated";
            for (std::size_t d = 0; d < kDistributions.size(); ++d) {
                const std::string dn(to_string(kDistributions[d]));
                series.push_back({st + ", " + dn,
                                  "(" + cd + " eq \"" + dn + "\" && " + cs + " eq \"" + st + "\")",
                                  static_cast<int>(d), k});
            }
        }
        panels = {mean_pct, jit_pct};
    }
}

}  // namespace

void write_plot_script(const std::string& name, const std::string& csv_path,
                       const std::string& png_path, std::ostream& os) {
    static const char* const kColors[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a"};
    os << "set datafile separator ','\n"
       << "set datafile missing ''\n";
    if (name == "smooth-acf") {
        os << "set terminal pngcairo size 900,550 noenhanced font ',10'\n"
           << "set output '" << png_path << "'\n"
           << "set title 'Autocorrelation of the delay in time (t_h = half-life)'\n"
           << "set xlabel 'Lag (t_h)'\nset ylabel 'Autocorrelation'\nset grid\n"
           << "set xrange [0:5]\nset yrange [-0.1:1]\nset key top right\n"
           << "plot '" << csv_path
           << "' every ::1 using ($4):(strcol(2) eq 'smooth' ? $5 : 1/0) with points pt 7 "
              "ps 0.6 lc rgb '#1b9e77' title 'smooth, measured', \\\n"
           << "     '' every ::1 using ($4):(strcol(2) eq 'correlated' ? $5 : 1/0) with points "
              "pt 5 ps 0.6 lc rgb '#d95f02' title 'correlated, measured', \\\n"
           << "     '' every ::1 using ($4):(strcol(2) eq 'smooth' ? $8 : 1/0) with lines lw 1.5 "
              "lc rgb '#1b9e77' title '(1 + a tau) e^(-a tau), a t_h = 1.678', \\\n"
           << "     '' every ::1 using ($4):(strcol(2) eq 'smooth' ? $7 : 1/0) with lines lw 1.5 "
              "dt 2 lc rgb '#d95f02' title '0.5^(tau / t_h)'\n";
        return;
    }
    if (name == "fig11") {
        os << "set terminal pngcairo size 900,550 noenhanced\n"
           << "set output '" << png_path << "'\n"
           << "set title 'Fig. 11: sample generation rate (mean 10 ms, jitter 3 ms)'\n"
           << "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
           << "set style fill solid 0.6 border -1\nset boxwidth 0.9\nset grid ytics\n"
           << "set ylabel 'Sample generation rate (million/s)'\nset yrange [0:*]\n"
           << "plot '" << csv_path << "' every ::1 using 5:6:xtic(2) title 'distribution only', "
           << "'' every ::1 using 7:8 title 'correlated delayer'\n";
        return;
    }
    std::vector<Series> series;
    std::vector<Panel> panels;
    std::string title;
    grid_series(name, series, panels, title);
    const int width = panels.size() > 1 ? 1600 : 1000;
    os << "set terminal pngcairo size " << width << ",650 noenhanced font ',10'\n"
       << "set output '" << png_path << "'\n"
       << "set logscale x\nset xrange [0.07:140]\nset xtics (0.1, 1, 10, 100)\n"
       << "set xlabel 'Rate (Gbit/s)'\nset grid\nset key outside right top vertical font ',8'\n";
    os << "set multiplot layout 1," << panels.size() << " title '" << title << "'\n";
    const int cx = column("rate_gbps");
    for (std::size_t p = 0; p < panels.size(); ++p) {
        const Panel& pn = panels[p];
        const int cy = column(pn.column), ce = column(pn.column + "_ci");
        os << (pn.logy ? "set logscale y\n" : "unset logscale y\n");
        os << "set ylabel '" << pn.ylabel << "'\n";
        if (p + 1 < panels.size())
            os << "unset key\n";
        else
            os << "set key\n";
        os << "plot ";
        for (std::size_t i = 0; i < series.size(); ++i) {
            const Series& s = series[i];
            std::string y = dollar(cy);
            y = pn.logy ? "(" + y + " > 0 ? " + y + " : 1e-4)" : "(" + y + ")";
            // Series side by side (a few % apart on the log axis) so error bars stay apart.
            const double shift =
                1 + 0.025 * (static_cast<double>(i) - 0.5 * static_cast<double>(series.size() - 1));
            os << (i ? ", \\\n     " : "") << "'" << csv_path << "' every ::1 using (" << s.filter
               << " ? $" << cx << " * " << num(shift) << " : 1/0):" << y << ":(valid(" << ce
               << ") ? $" << ce << " : 0) with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb '"
               << kColors[s.color % 4] << "' dt " << (s.dash + 1) << " title '" << s.title << "'";
        }
        os << "\n";
    }
    os << "unset multiplot\n";
}

int plot_csv(const std::string& name, const std::string& csv_path, const std::string& png_path,
             std::ostream& err) {
    const std::string script = png_path + ".gp";
    {
        std::ofstream f(script);
        if (!f) {
            err << "linkem-sim: cannot write " << script << "\n";
            return 1;
        }
        write_plot_script(name, csv_path, png_path, f);
    }
    const std::string cmd = "gnuplot '" + script + "'";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
        err << "linkem-sim: gnuplot failed (" << cmd << "); is gnuplot installed?\n";
        return 1;
    }
    err << "linkem-sim: wrote " << png_path << " (gnuplot script " << script << ")\n";
    return 0;
}

}  // namespace linkem::sim
