// Aggregation over runs (mean and 95 % confidence interval) and output (table, JSON).
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator.hpp"

namespace linkem::sim {

/// Two-sided 97.5 % quantile of Student's t distribution with `df` degrees of freedom.
double student_t975(std::size_t df);

/// Mean over runs and the half-width of its 95 % confidence interval (Student t). NaN
/// entries (a metric that a run could not measure) are left out; `n` says how many counted.
struct Stat {
    double mean = 0, ci95 = 0;
    std::size_t n = 0;
};
Stat summarize(const std::vector<double>& values);

/// One reported metric: its JSON key, unit and how to read it from a run.
struct MetricDef {
    const char* key;
    const char* unit;
    std::function<double(const RunResult&)> get;
};
const std::vector<MetricDef>& metric_defs();

nlohmann::json to_json(const RunResult& r);
nlohmann::json to_json(const SimConfig& cfg);

/// The whole report: configuration, every run, and the summary over runs.
nlohmann::json report_json(const SimConfig& cfg, const std::vector<RunResult>& runs);
void print_table(std::ostream& os, const SimConfig& cfg, const std::vector<RunResult>& runs);

}  // namespace linkem::sim
