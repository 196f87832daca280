// Shared by the benchmark programs: a console reporter that also remembers one figure per
// benchmark (the median when repetitions are run, else the median of the plain runs), so
// that main() can print the target ratios at the end of the same run.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>

namespace linkem::bench {

class SummaryReporter : public benchmark::ConsoleReporter {
  public:
    // Colour only on a terminal, so that redirected output is plain text.
    SummaryReporter() : ConsoleReporter(isatty(fileno(stdout)) ? OO_ColorTabular : OO_Tabular) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs) {
            if (r.error_occurred) continue;
            const std::string name = r.run_name.str();
            for (const auto& [key, counter] : r.counters) {
                if (r.run_type == Run::RT_Aggregate) {
                    aggregates_[r.aggregate_name][name][key] = counter.value;
                } else {
                    plain_[name][key].push_back(counter.value);
                }
            }
        }
        ConsoleReporter::ReportRuns(runs);
    }

    /// The figure `counter` of benchmark `name`: the aggregate `stat` ("median", "min",
    /// "max") when repetitions were run, else the median of the plain runs; negative when
    /// the benchmark did not run.
    double value(const std::string& name, const std::string& counter,
                 const std::string& stat = "median") const {
        if (auto a = aggregates_.find(stat); a != aggregates_.end()) {
            if (auto it = a->second.find(name); it != a->second.end()) {
                if (auto c = it->second.find(counter); c != it->second.end()) return c->second;
            }
        }
        if (auto it = plain_.find(name); it != plain_.end()) {
            if (auto c = it->second.find(counter); c != it->second.end()) {
                std::vector<double> v = c->second;
                std::sort(v.begin(), v.end());
                return v[v.size() / 2];
            }
        }
        return -1;
    }

  private:
    // aggregate name -> benchmark -> counter -> value
    std::map<std::string, std::map<std::string, std::map<std::string, double>>> aggregates_;
    std::map<std::string, std::map<std::string, std::vector<double>>> plain_;
};

/// Prints "label: a/b = ratio (target)" or says which input is missing (filtered out).
inline void print_ratio(const char* label, double a, double b, const char* target) {
    if (a <= 0 || b <= 0) {
        std::printf("  %-44s n/a (benchmark filtered out)\n", label);
        return;
    }
    std::printf("  %-44s %6.2f   %s\n", label, a / b, target);
}

/// Adds "min" and "max" to the aggregates of a benchmark run with repetitions: on a shared
/// machine the best repetition is the figure least disturbed by other processes.
inline benchmark::internal::Benchmark* with_min_max(benchmark::internal::Benchmark* b) {
    return b
        ->ComputeStatistics(
            "min",
            [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
        ->ComputeStatistics("max", [](const std::vector<double>& v) {
            return *std::max_element(v.begin(), v.end());
        });
}

}  // namespace linkem::bench
