// linkem-sim's core: one run of the emulator's own Emulator on a virtual clock.
//
// Events: packet arrivals (from a traffic source), departures from the Emulator
// (Emulator::next_departure()) and departures from an optional virtual queue behind it (the
// bandwidth limit of DPDS paper IV-E). Time jumps from one event to the next; nothing
// advances in fixed ticks. The virtual queue is a FIFO with unlimited buffer, so a packet's
// departure from it is fixed the moment it enters (Lindley recursion,
// dep = max(enter, previous dep) + service); it is computed then instead of being queued
// as an event, which gives the same times.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "linkem/counters.hpp"
#include "linkem/link_params.hpp"
#include "linkem/scenario.hpp"
#include "linkem/traffic.hpp"

namespace linkem::sim {

class SimCapture;

/// The most flows --flows spreads the traffic over (their UDP ports stay below 65536).
inline constexpr std::uint32_t kMaxSimFlows = 8192;

/// The queue series' CSV header (--queue-series): per interval of simulated time, ending at
/// time_s, the backlog then, the sojourn times of the packets that left the queue in it,
/// and the drops at the queue limit and by the queue discipline and the CE marks in it.
inline constexpr const char* kQueueSeriesHeader =
    "time_s,backlog_bytes,backlog_packets,sojourn_mean_ms,sojourn_max_ms,dequeued,"
    "drops_spacer,drops_aqm,ecn_marked\n";

struct SimConfig {
    LinkParams link;  // link.seed is the run's seed (0: drawn at random, reported)
    TrafficSpec traffic;
    DurationNs duration = 60 * kNsPerSec;  // arrivals in [0, duration); then drained
    /// Utilisation u of the virtual queue behind the emulator, served at R / u where R is
    /// traffic.rate_bps. 0: no queue (unlimited bandwidth).
    double utilization = 0;

    /// Optional delay series: one (departure time, delay) line per
    /// series_interval of departure time (0: every packet), CSV "time_ms,delay_ms".
    std::ostream* series = nullptr;
    DurationNs series_interval = kNsPerMs;

    /// A scenario's track to follow from time 0 (linkemd's Emulator does the same from the
    /// scenario's start), or none. The series then also gets the scenario's mean delay.
    const ScenarioTrack* track = nullptr;
    /// The Emulator's random stream: linkemd's a_to_b uses 0, b_to_a 1.
    std::uint64_t stream = 0;
    /// Arrival times to replay (ns, non-decreasing) instead of cfg.traffic's, or none.
    const std::vector<TimeNs>* arrivals = nullptr;

    /// The traffic as flows (--flows): packet k belongs to flow k mod flows, UDP from A's
    /// port kCapturePortA + flow (sim_capture.hpp), which FQ-CoDel tells apart by its 5-tuple
    /// hash as linkemd does. `ect`: every packet is ECN-capable, ECT(0) (--ect), so a queue
    /// discipline with ecn on marks it instead of dropping it.
    std::uint32_t flows = 1;
    bool ect = false;

    /// Optional queue series (--queue-series): one line per queue_series_interval of
    /// simulated time with the limiter queue's backlog, sojourn times, drops and marks.
    std::ostream* queue_series = nullptr;
    DurationNs queue_series_interval = 10 * kNsPerMs;

    /// Where every packet's records go (--capture), or none; records of direction
    /// `capture_direction` (0 a_to_b, 1 b_to_a).
    SimCapture* capture = nullptr;
    unsigned capture_direction = 0;

    /// Called now and then (every few million packets) with the fraction of simulated time
    /// done; return value ignored.
    std::function<void(double fraction, std::uint64_t packets)> progress;
};

/// Everything measured in one run. Delays in microseconds unless the name says otherwise.
struct RunResult {
    std::uint64_t seed = 0;
    double duration_s = 0;
    std::uint64_t packets_in = 0, packets_out = 0;
    DropCounts drops;  // by cause (linkem/counters.hpp)
    std::uint64_t delays_clamped = 0;
    std::uint64_t waited = 0;  // packets that waited behind their predecessor (FIFO)
    double waited_pct = 0;     // of the packets in

    double mean_delay_us = 0,
           jitter_us = 0;  // actual delay (jitter: its population standard deviation)
    double min_delay_us = 0, max_delay_us = 0;
    double mean_delay_dev_us = 0, mean_delay_dev_pct = 0;  // actual - target
    double jitter_dev_us = 0, jitter_dev_pct = 0;

    std::uint64_t passages = 0;
    double passage_time_ms = 0;  // mean; NaN when no passage completed

    std::uint64_t swaps = 0;  // Kendall tau distance of the delivered sequence numbers
    double swaps_per_packet = 0;

    std::uint64_t ecn_marked = 0;  // packets the queue discipline marked CE instead of dropping
    /// The limiter's queue: sojourn time of the packets that left it (queue discipline:
    /// dequeue - enqueue; drop-tail spacer: its wait), mean and max (max: a queue
    /// discipline's only; NaN otherwise and when nothing queued); backlog's max at the
    /// queue series' samples (NaN without --queue-series).
    double queue_sojourn_mean_us = 0, queue_sojourn_max_us = 0;

    std::uint64_t rate_intervals = 0;  // rate-estimator intervals closed
    double alpha_min = 0, alpha_mean = 0, alpha_max = 0;
    double rate_pps_min = 0, rate_pps_mean = 0, rate_pps_max = 0;

    double wall_s = 0;  // real time the run took
    double packets_per_s() const { return wall_s > 0 ? packets_in / wall_s : 0; }
};

/// Runs one simulation. `cfg.link` must be valid (see validate_config).
RunResult run_once(const SimConfig& cfg);

/// Validates the link parameters (linkem::validate) and the simulator's own settings;
/// throws ParamError naming the field ("traffic.rate_bps", "traffic.frame_size_bytes", ...).
void validate_config(const SimConfig& cfg);

}  // namespace linkem::sim
