// linkemd's command line and config file: one set of names (see docs and /tmp spec).
//
// Layers, lowest first: built-in defaults, the --config file, flags for both directions
// (--mean-delay), flags for one direction (--a-to-b-mean-delay). The same layering is
// redone on SIGHUP with the file re-read, so flags keep winning over the file.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/capture.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/protocol.hpp"
#include "linkem/time.hpp"
#include "linkem/traffic.hpp"

namespace linkem::linkemd {

/// Bad input: printed as "linkemd: <message>", exit code 2, nothing started.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The raw command line, kept to redo the layering on reload.
struct CommandLine {
    std::string port_a, port_b, config, workers, lcores, burst, mbufs, stats_interval, duration,
        scenario;
    bool stats_json = false, print_config = false, hold_mbufs = false;
    // Control and telemetry (docs/protocol.md).
    std::string control, telemetry, telemetry_hz, delay_samples_per_s, curve_secret, curve_allow;
    bool no_control = false, insecure_listen = false, allow_remote_shutdown = false;
    // Built-in traffic and the demo: [i] for traffic_flags()[i]; empty = not given.
    std::vector<std::string> traffic;
    bool demo = false;
    // Capture from the start: --capture FILE, [i] for capture_flags()[i]; empty = not given.
    std::string capture;
    std::vector<std::string> capture_flags;
    // [layer][param]: layer 0 = both directions, 1 = a_to_b, 2 = b_to_a; empty = not given.
    std::vector<std::array<std::string, 3>> params;
    std::vector<std::string> eal_args;  // after "--"
};

/// The control and telemetry server's settings.
struct ControlOptions {
    bool enabled = true;
    std::string control = proto::kDefaultControl;
    std::string telemetry = proto::kDefaultTelemetry;
    unsigned telemetry_hz = 10;  // stats messages per second, 1 .. 100
    std::string curve_secret, curve_allow;
    bool insecure_listen = false;
    bool allow_remote_shutdown = false;
    bool operator==(const ControlOptions&) const = default;
};

struct Options {
    dp::DataplaneConfig dataplane;          // ports, workers, burst, mbufs (never 0), link
    DurationNs stats_interval = kNsPerSec;  // 0: no periodic stats
    std::optional<DurationNs> duration;
    bool stats_json = false;
    bool print_config = false;
    bool mbufs_given = false;
    std::string config_path;
    std::vector<std::string> eal_args;
    ControlOptions control;
    /// The built-in traffic generator's settings (it exists when the ports are virtual).
    TrafficConfig traffic;
    bool demo = false;
    /// A scenario to play from the start: a built-in's name or a file (checked against the
    /// link at start-up).
    std::string scenario;
    /// A capture to start with the data plane (--capture FILE, its path made absolute),
    /// checked except for what the data plane checks (the direction and class against the
    /// link, the file's creation).
    std::optional<capture::Settings> capture;
};

/// A port given as this is a virtual port (dp::VirtualPort) that linkemd creates and whose
/// far end only the built-in traffic generator uses.
inline constexpr const char* kVirtualPort = "virtual";
/// Whether the options' ports are linkemd's own virtual ports.
bool virtual_ports(const Options& o);

/// linkemd's version ("0.1.0").
const char* version();

/// Parses argv. Returns nullopt after printing --help (exit 0). Throws UsageError.
std::optional<CommandLine> parse_command_line(int argc, char** argv);
/// Reads the config file (if any) and builds the effective options. Throws UsageError.
Options build_options(const CommandLine& cl);
/// The effective configuration as JSON, in the config file's format.
nlohmann::json to_json(const Options& o);

}  // namespace linkem::linkemd
