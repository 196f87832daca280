#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

#include "linkem/link_params_json.hpp"
#include "linkem/units.hpp"

namespace linkem::sim {

double student_t975(std::size_t df) {
    static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                    2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                    2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                    2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df == 0) return std::nan("");
    if (df <= 30) return kT[df - 1];
    return 1.960 + 2.4 / static_cast<double>(df);  // within 0.001 of the exact value
}

Stat summarize(const std::vector<double>& values) {
    Stat s;
    double sum = 0;
    for (double v : values)
        if (std::isfinite(v)) {
            sum += v;
            ++s.n;
        }
    if (s.n == 0) return Stat{std::nan(""), std::nan(""), 0};
    s.mean = sum / static_cast<double>(s.n);
    if (s.n < 2) {
        s.ci95 = std::nan("");
        return s;
    }
    double ss = 0;
    for (double v : values)
        if (std::isfinite(v)) ss += (v - s.mean) * (v - s.mean);
    const double sd = std::sqrt(ss / static_cast<double>(s.n - 1));
    s.ci95 = student_t975(s.n - 1) * sd / std::sqrt(static_cast<double>(s.n));
    return s;
}

const std::vector<MetricDef>& metric_defs() {
    using R = RunResult;
    static const std::vector<MetricDef> kDefs = [] {
        std::vector<MetricDef> d = {
            {"mean_delay_us", "us", [](const R& r) { return r.mean_delay_us; }},
            {"jitter_us", "us", [](const R& r) { return r.jitter_us; }},
            {"mean_delay_dev_us", "us", [](const R& r) { return r.mean_delay_dev_us; }},
            {"mean_delay_dev_pct", "%", [](const R& r) { return r.mean_delay_dev_pct; }},
            {"jitter_dev_us", "us", [](const R& r) { return r.jitter_dev_us; }},
            {"jitter_dev_pct", "%", [](const R& r) { return r.jitter_dev_pct; }},
            {"min_delay_us", "us", [](const R& r) { return r.min_delay_us; }},
            {"max_delay_us", "us", [](const R& r) { return r.max_delay_us; }},
            {"passage_time_ms", "ms", [](const R& r) { return r.passage_time_ms; }},
            {"passages", "", [](const R& r) { return static_cast<double>(r.passages); }},
            {"swaps_per_packet", "", [](const R& r) { return r.swaps_per_packet; }},
            {"swaps", "", [](const R& r) { return static_cast<double>(r.swaps); }},
            {"packets_in", "", [](const R& r) { return static_cast<double>(r.packets_in); }},
            {"packets_out", "", [](const R& r) { return static_cast<double>(r.packets_out); }},
        };
        // one row per drop cause, after packets_out
        for (const DropCauseInfo& c : kDropCauses)
            d.push_back({c.key, "", [cause = c.cause](const R& r) {
                             return static_cast<double>(r.drops[cause]);
                         }});
        d.insert(
            d.end(),
            {
                {"ecn_marked", "", [](const R& r) { return static_cast<double>(r.ecn_marked); }},
                {"queue_sojourn_mean_us", "us", [](const R& r) { return r.queue_sojourn_mean_us; }},
                {"queue_sojourn_max_us", "us", [](const R& r) { return r.queue_sojourn_max_us; }},
                {"delays_clamped", "",
                 [](const R& r) { return static_cast<double>(r.delays_clamped); }},
                {"waited", "", [](const R& r) { return static_cast<double>(r.waited); }},
                {"waited_pct", "%", [](const R& r) { return r.waited_pct; }},
                {"rate_intervals", "",
                 [](const R& r) { return static_cast<double>(r.rate_intervals); }},
                {"alpha_min", "", [](const R& r) { return r.alpha_min; }},
                {"alpha_mean", "", [](const R& r) { return r.alpha_mean; }},
                {"alpha_max", "", [](const R& r) { return r.alpha_max; }},
                {"rate_pps_min", "packet/s", [](const R& r) { return r.rate_pps_min; }},
                {"rate_pps_mean", "packet/s", [](const R& r) { return r.rate_pps_mean; }},
                {"rate_pps_max", "packet/s", [](const R& r) { return r.rate_pps_max; }},
                {"wall_s", "s", [](const R& r) { return r.wall_s; }},
                {"packets_per_s", "packet/s", [](const R& r) { return r.packets_per_s(); }},
            });
        return d;
    }();
    return kDefs;
}

nlohmann::json to_json(const RunResult& r) {
    nlohmann::json j = {{"seed", r.seed}, {"duration_s", r.duration_s}};
    for (const MetricDef& m : metric_defs()) {
        const double v = m.get(r);
        if (std::isfinite(v))
            j[m.key] = v;
        else
            j[m.key] = nullptr;
    }
    // Counts as exact integers, not doubles.
    for (auto [k, v] : {std::pair{"passages", r.passages},
                        {"swaps", r.swaps},
                        {"packets_in", r.packets_in},
                        {"packets_out", r.packets_out},
                        {"delays_clamped", r.delays_clamped},
                        {"ecn_marked", r.ecn_marked},
                        {"waited", r.waited},
                        {"rate_intervals", r.rate_intervals}})
        j[k] = v;
    for (const DropCauseInfo& c : kDropCauses)
        j[c.key] = r.drops[c.cause];
    return j;
}

nlohmann::json to_json(const SimConfig& cfg) {
    nlohmann::json traffic = {{"pattern", to_string(cfg.traffic.pattern)},
                              {"rate_bps", cfg.traffic.rate_bps},
                              {"frame_size_bytes", cfg.traffic.frame_bytes}};
    if (cfg.traffic.pattern == TrafficPattern::sine)
        traffic["period_us"] = static_cast<double>(cfg.traffic.period) / kNsPerUs;
    traffic["flows"] = cfg.flows;
    traffic["ect"] = cfg.ect;
    return {{"link", linkem::to_json(cfg.link)},
            {"traffic", traffic},
            {"duration_us", static_cast<double>(cfg.duration) / kNsPerUs},
            {"utilization", cfg.utilization}};
}

nlohmann::json report_json(const SimConfig& cfg, const std::vector<RunResult>& runs) {
    nlohmann::json j = {{"config", to_json(cfg)}, {"runs", runs.size()}};
    nlohmann::json per_run = nlohmann::json::array();
    for (const RunResult& r : runs)
        per_run.push_back(to_json(r));
    j["results"] = per_run;
    nlohmann::json summary = nlohmann::json::object();
    for (const MetricDef& m : metric_defs()) {
        std::vector<double> v;
        for (const RunResult& r : runs)
            v.push_back(m.get(r));
        const Stat s = summarize(v);
        auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nullptr; };
        summary[m.key] = {{"mean", num(s.mean)}, {"ci95", num(s.ci95)}, {"n", s.n}};
    }
    j["summary"] = summary;
    return j;
}

namespace {
std::string fmt(double v, int prec = 4) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    return buf;
}
}  // namespace

void print_table(std::ostream& os, const SimConfig& cfg, const std::vector<RunResult>& runs) {
    const LinkParams& lp = cfg.link;
    os << "linkem-sim: " << to_string(lp.strategy) << ", " << to_string(lp.distribution)
       << ", mean delay " << format_duration(lp.mean_delay) << ", jitter "
       << format_duration(lp.jitter) << ", half-life " << format_duration(lp.half_life) << "\n"
       << "traffic: " << to_string(cfg.traffic.pattern) << " " << format_rate(cfg.traffic.rate_bps)
       << ", " << cfg.traffic.frame_bytes << " B frames";
    if (cfg.traffic.pattern == TrafficPattern::sine)
        os << ", period " << format_duration(cfg.traffic.period);
    if (cfg.flows > 1) os << ", " << cfg.flows << " flows";
    if (cfg.ect) os << ", ECN-capable (ECT(0))";
    if (cfg.arrivals) os << " (replaced by " << cfg.arrivals->size() << " arrival times given)";
    os << ", " << format_duration(cfg.duration) << " per run, utilization " << cfg.utilization
       << "\n";
    if (lp.uses_bottleneck() || (lp.limiter == Limiter::spacer && lp.rate_bps > 0))
        os << "queue: " << to_string(lp.queue) << ", limit "
           << (lp.queue_limit_packets > 0 ? std::to_string(lp.queue_limit_packets) + " packets"
                                          : std::to_string(lp.queue_limit_bytes) + " bytes")
           << (lp.ecn == Ecn::on ? ", ecn on" : "") << "\n";
    if (cfg.track)
        os << "scenario: the parameters above at its start, then its steps; the deviations "
              "below are from those at the start\n";
    os << "runs: " << runs.size() << " (seeds";
    for (std::size_t i = 0; i < runs.size() && i < 12; ++i)
        os << ' ' << runs[i].seed;
    if (runs.size() > 12) os << " ...";
    os << ")\n\n";
    char line[160];
    std::snprintf(line, sizeof line, "%-22s %14s %14s %s\n", "metric", "mean", "+-95% CI", "unit");
    os << line;
    for (const MetricDef& m : metric_defs()) {
        std::vector<double> v;
        for (const RunResult& r : runs)
            v.push_back(m.get(r));
        const Stat s = summarize(v);
        std::snprintf(line, sizeof line, "%-22s %14s %14s %s\n", m.key, fmt(s.mean, 6).c_str(),
                      fmt(s.ci95, 3).c_str(), m.unit);
        os << line;
    }
}

}  // namespace linkem::sim
