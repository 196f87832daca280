#include "class_report.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

#include "linkem/classes_json.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/units.hpp"

namespace linkem::sim {
namespace {

using nlohmann::json;

json num(double x) {
    return std::isfinite(x) ? json(x) : json(nullptr);
}

template <class R>
void put_delays(json& j, const R& r) {
    j["mean_delay_us"] = num(r.mean_delay_us);
    j["jitter_us"] = num(r.jitter_us);
    j["min_delay_us"] = num(r.min_delay_us);
    j["max_delay_us"] = num(r.max_delay_us);
}

json lane_json(const ClassLaneResult& c) {
    json j = {{"class", c.name},
              {"direction", kDirectionKeys[c.direction]},
              {"action", std::string(to_string(c.action))},
              {"flows", c.flows},
              {"packets_in", c.packets_in},
              {"packets_out", c.packets_out}};
    for (const DropCauseInfo& cause : kDropCauses)
        j[cause.key] = c.drops[cause.cause];
    j["drops_class"] = c.dropped_by_class;
    j["passed"] = c.passed;
    if (c.action == ClassAction::emulate) {
        j["seed"] = c.seed;
        j["delays_clamped"] = c.delays_clamped;
        j["ecn_marked"] = c.ecn_marked;
        if (c.shares_link_limiter) j["limiter"] = "link";
    }
    put_delays(j, c);
    return j;
}

json flow_json(const FlowLaneResult& f) {
    json j = {{"flow", f.flow},
              {"direction", kDirectionKeys[f.direction]},
              {"class", f.class_name},
              {"packets_in", f.packets_in},
              {"packets_out", f.packets_out},
              {"dropped", f.dropped}};
    put_delays(j, f);
    return j;
}

}  // namespace

json class_report_json(const ClassSimConfig& cfg, const ClassRunResult& r) {
    json flows = json::array(), classes = json::array(), flow_results = json::array();
    for (const Flow& f : cfg.file.flows)
        flows.push_back(to_json(f));
    for (const ClassLaneResult& c : r.classes)
        classes.push_back(lane_json(c));
    for (const FlowLaneResult& f : r.flows)
        flow_results.push_back(flow_json(f));
    json directions = json::object();
    for (unsigned d = 0; d < 2; ++d) {
        const DirectionResult& x = r.direction[d];
        directions[kDirectionKeys[d]] = {{"packets_in", x.packets_in},
                                         {"packets_out", x.packets_out},
                                         {"dropped", x.dropped},
                                         {"swaps", x.swaps}};
    }
    const json config = {{"link",
                          {{kDirectionKeys[0], to_json(cfg.file.link.a_to_b)},
                           {kDirectionKeys[1], to_json(cfg.file.link.b_to_a)}}},
                         {"classes", classes_to_json(cfg.file.classes)},
                         {"flows", flows},
                         {"duration_us", static_cast<double>(cfg.duration) / kNsPerUs}};
    return {{"config", config},      {"duration_s", r.duration_s}, {"classes", classes},
            {"flows", flow_results}, {"directions", directions},   {"wall_s", r.wall_s}};
}

namespace {

std::string fmt(double v) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::uint64_t all_drops(const ClassLaneResult& c) {
    std::uint64_t n = c.dropped_by_class;
    for (const DropCauseInfo& cause : kDropCauses)
        n += c.drops[cause.cause];
    return n;
}

std::string link_line(const LinkParams& p) {
    std::string s = std::string(to_string(p.strategy)) + ", " +
                    std::string(to_string(p.distribution)) + ", mean delay " +
                    format_duration(p.mean_delay) + ", jitter " + format_duration(p.jitter) +
                    ", limiter " + std::string(to_string(p.limiter));
    if (p.limiter == Limiter::spacer || p.limiter == Limiter::policer)
        s += " " + format_rate(p.rate_bps);
    if (p.loss_model != LossModel::none) s += ", loss " + std::string(to_string(p.loss_model));
    return s + ", seed " + (p.seed ? std::to_string(p.seed) : std::string("random"));
}

void print_classes(std::ostream& os, const ClassRunResult& r) {
    char line[320];
    std::snprintf(line, sizeof line, "%-12s %-6s %-7s %10s %10s %10s %10s %14s %12s  %s\n", "class",
                  "dir", "action", "in", "out", "dropped", "passed", "mean_delay_us", "jitter_us",
                  "flows");
    os << line;
    for (const ClassLaneResult& c : r.classes) {
        std::string flows;
        for (const std::string& f : c.flows)
            flows += (flows.empty() ? "" : ",") + f;
        std::snprintf(line, sizeof line,
                      "%-12s %-6s %-7s %10llu %10llu %10llu %10llu %14s %12s  %s\n", c.name.c_str(),
                      kDirectionKeys[c.direction], std::string(to_string(c.action)).c_str(),
                      static_cast<unsigned long long>(c.packets_in),
                      static_cast<unsigned long long>(c.packets_out),
                      static_cast<unsigned long long>(all_drops(c)),
                      static_cast<unsigned long long>(c.passed), fmt(c.mean_delay_us).c_str(),
                      fmt(c.jitter_us).c_str(), flows.c_str());
        os << line;
        std::string causes;
        for (const DropCauseInfo& cause : kDropCauses)
            if (c.drops[cause.cause])
                causes += std::string(causes.empty() ? "" : ", ") + cause.key + " " +
                          std::to_string(c.drops[cause.cause]);
        if (c.dropped_by_class)
            causes += std::string(causes.empty() ? "" : ", ") + "drops_class " +
                      std::to_string(c.dropped_by_class);
        if (c.ecn_marked)
            causes += std::string(causes.empty() ? "" : ", ") + "ecn_marked " +
                      std::to_string(c.ecn_marked);
        if (c.shares_link_limiter)
            causes += std::string(causes.empty() ? "" : "; ") + "limiter: link";
        if (!causes.empty()) os << "    " << causes << "\n";
    }
}

void print_flows(std::ostream& os, const ClassRunResult& r) {
    char line[320];
    std::snprintf(line, sizeof line, "%-12s %-6s %-12s %10s %10s %10s %14s %12s\n", "flow", "dir",
                  "class", "in", "out", "dropped", "mean_delay_us", "jitter_us");
    os << line;
    for (const FlowLaneResult& f : r.flows) {
        std::snprintf(line, sizeof line, "%-12s %-6s %-12s %10llu %10llu %10llu %14s %12s\n",
                      f.flow.c_str(), kDirectionKeys[f.direction], f.class_name.c_str(),
                      static_cast<unsigned long long>(f.packets_in),
                      static_cast<unsigned long long>(f.packets_out),
                      static_cast<unsigned long long>(f.dropped), fmt(f.mean_delay_us).c_str(),
                      fmt(f.jitter_us).c_str());
        os << line;
    }
}

}  // namespace

void print_class_table(std::ostream& os, const ClassSimConfig& cfg, const ClassRunResult& r,
                       const std::string& path) {
    os << "linkem-sim --classes " << path << ": " << cfg.file.classes.size()
       << " classes besides default, " << cfg.file.flows.size() << " flows, "
       << format_duration(cfg.duration) << " of arrivals\n";
    for (unsigned d = 0; d < 2; ++d)
        os << "link " << kDirectionKeys[d] << ": " << link_line(cfg.file.link.direction(d)) << "\n";
    os << "\n";
    print_classes(os, r);
    os << "\n";
    print_flows(os, r);
    os << "\n";
    for (unsigned d = 0; d < 2; ++d) {
        const DirectionResult& x = r.direction[d];
        os << kDirectionKeys[d] << ": " << x.packets_in << " in, " << x.packets_out << " out, "
           << x.dropped << " dropped, " << x.swaps
           << " swaps (departures out of arrival order, all classes together)\n";
    }
}

}  // namespace linkem::sim
