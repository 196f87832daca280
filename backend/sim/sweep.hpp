// Sweeps: regenerate the data of a figure of DPDS paper Section IV as CSV, and plot it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "simulator.hpp"

namespace linkem::sim {

struct SweepSettings {
    std::vector<double> rates_bps;  // empty: 0.1, 1, 10, 100 Gbit/s
    DurationNs duration = 0;        // 0: per-point default (see default_duration)
    int runs = 0;                   // 0: default (3; 10 with paper_durations)
    bool paper_durations = false;   // 10 min per run, 10 runs
    int jobs = 1;
    std::uint64_t seed = 1;  // run r of every point uses seed + r
    bool quiet = false;
};

/// fig1, fig3, ..., fig11.
const std::vector<std::string>& sweep_names();
bool is_sweep(const std::string& name);

/// The configurations of a grid sweep (every figure but fig11), `base` supplying all
/// parameters the figure does not vary. Durations already resolved.
std::vector<SimConfig> sweep_points(const std::string& name, const SimConfig& base,
                                    const SweepSettings& s);

/// Default simulated time of one run: long enough for about 60 passage times of the
/// correlated delay series (at least 2 s), capped at 30 s.
DurationNs default_duration(const SimConfig& cfg);

/// Runs the sweep and writes its CSV to `csv`; progress to `err`. Returns 0 on success.
int run_sweep(const std::string& name, const SimConfig& base, const SweepSettings& s,
              std::ostream& csv, std::ostream& err);

/// Writes a gnuplot script that draws `csv_path` (as written by run_sweep) into png_path.
void write_plot_script(const std::string& name, const std::string& csv_path,
                       const std::string& png_path, std::ostream& os);
/// Runs gnuplot on that script. Returns 0 on success; explains failures on `err`.
int plot_csv(const std::string& name, const std::string& csv_path, const std::string& png_path,
             std::ostream& err);

}  // namespace linkem::sim
