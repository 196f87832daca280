// Command line of linkem-sim. Parsing is separate from running so tests can call it
// in-process.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "class_sim.hpp"
#include "linkem/capture.hpp"
#include "simulator.hpp"

namespace linkem::sim {

/// A bad command line: which flag, and what is allowed. linkem-sim exits with code 2.
class UsageError : public std::runtime_error {
  public:
    UsageError(std::string flag, const std::string& message)
        : std::runtime_error(flag.empty() ? message : flag + ": " + message),
          flag_(std::move(flag)) {}
    const std::string& flag() const { return flag_; }

  private:
    std::string flag_;
};

struct CliOptions {
    SimConfig cfg;  // cfg.link.seed = the first run's seed
    int runs = 1;
    bool runs_given = false, duration_given = false;
    bool json = false;
    bool quiet = false;  // no progress on stderr

    std::string sweep;              // figure name, empty: a single configuration
    bool paper_durations = false;   // sweeps: 10 min x 10 runs like the paper
    std::vector<double> rates_bps;  // sweeps: traffic rates (default 0.1, 1, 10, 100 Gbit/s)
    std::string csv_path;           // sweeps: where the CSV goes ("" = stdout)
    std::string from_csv;           // sweeps: re-plot this CSV instead of simulating
    std::string plot_path;          // sweeps: PNG to draw with gnuplot
    int jobs = 1;                   // sweeps: runs simulated in parallel

    std::string series_path;        // single configuration: delay trace CSV of the first run
    std::string queue_series_path;  // single configuration: queue series CSV of the first run

    // --scenario: both directions compiled against the link flags; cfg.track points into it.
    std::shared_ptr<const ScenarioTracks> tracks;
    std::string scenario_name;
    unsigned direction = 0;                               // --direction: 0 a_to_b, 1 b_to_a
    std::shared_ptr<const std::vector<TimeNs>> arrivals;  // --arrivals; cfg.arrivals points here

    // --classes: the class file read and checked (link, classes, flows) and --duration.
    std::string classes_path;
    std::shared_ptr<const ClassSimConfig> classes;

    // --capture FILE with --capture-points and --capture-snaplen (checked), or none.
    std::optional<capture::Settings> capture;

    bool help = false;
    std::string help_text;
};

/// Parses argv (argv[0] is the program name). Throws UsageError on any bad flag or value,
/// including parameter combinations that linkem::validate rejects (the message then
/// names the flag and the JSON field).
CliOptions parse_cli(int argc, const char* const* argv);

/// The flag that sets a LinkParams / SimConfig field ("jitter_us" -> "--jitter").
std::string flag_for_field(const std::string& field);

/// linkem-sim's main: returns the exit code (0 ok, 1 runtime failure, 2 bad arguments).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace linkem::sim
