// What the data plane reports about delay: the content of the `delay` topic of
// docs/protocol.md (section 4), whose JSON is linkem/telemetry_json.hpp (linkem::protocol).
//
// The lcore that owns a direction's Emulator accumulates, over every packet, the delay it
// gave (at ingest) and the lateness of each departure (at drain), and samples a few packets
// a second end to end (arrival, given delay, scheduled and actual departure). It hands these
// to the control thread through SpscRings: an IntervalReport every ~50 ms and DelaySamples
// as they complete. A full ring drops what does not fit and counts it; a packet never waits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "linkem/counters.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// Count, minimum, maximum, mean and jitter (standard deviation) of a series, O(1) per value and
/// mergeable. Sums are kept around `shift` (a value near the series' mean, e.g. the
/// configured mean delay), so the variance of a 10 ms +- 1 us series keeps its digits.
struct RunningStats {
    std::uint64_t count = 0;
    double shift = 0;
    double sum = 0, sumsq = 0;  // of (x - shift)
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();

    void add(double x) {
        const double y = x - shift;
        ++count;
        sum += y;
        sumsq += y * y;
        min = x < min ? x : min;
        max = x > max ? x : max;
    }
    void merge(const RunningStats& o);
    void reset(double new_shift) { *this = RunningStats{.shift = new_shift}; }
    double mean() const { return count ? shift + sum / static_cast<double>(count) : 0.0; }
    /// The jitter: the population standard deviation (the squared deviations' sum over n,
    /// as jitter_us and the protocol's jitter_ns are; docs/glossary.md, "jitter"); 0 for
    /// fewer than two values.
    double jitter() const;
};

/// The wait a packet's scheduled departure adds to the delay drawn for it (scheduled_ns -
/// delay_ns of a DelaySample), summed over every packet queued: what the spacer added
/// (rate-limit queueing) and, when order is kept, the wait behind an earlier packet with a
/// later departure. Sums only, so that the packet path pays two additions for it.
struct WaitSums {
    std::uint64_t count = 0;
    double spacer_ns = 0, order_ns = 0;

    void merge(const WaitSums& o) {
        count += o.count;
        spacer_ns += o.spacer_ns;
        order_ns += o.order_ns;
    }
    double spacer_mean() const { return count ? spacer_ns / static_cast<double>(count) : 0.0; }
    double order_mean() const { return count ? order_ns / static_cast<double>(count) : 0.0; }
    double mean() const { return spacer_mean() + order_mean(); }
};

/// The limiter's queue over an interval: what it holds at the interval's end and the
/// sojourn time (queueing delay at the limiter) of the packets that left it in the interval.
/// A queue discipline (Bottleneck) measures each packet's sojourn at its dequeue; the
/// drop-tail spacer's is its wait (WaitSums::spacer_ns) of the packets queued.
struct QueueReport {
    std::uint64_t backlog_bytes = 0;
    std::uint64_t backlog_packets = 0;  // a queue discipline's; the spacer's is not counted (0)
    std::uint64_t sojourn_count = 0;
    double sojourn_sum_ns = 0;
    DurationNs sojourn_max_ns = 0;  // a queue discipline's; 0 for the spacer
    double sojourn_mean_ns() const {
        return sojourn_count ? sojourn_sum_ns / static_cast<double>(sojourn_count) : 0.0;
    }
    void merge(const QueueReport& o) {
        backlog_bytes += o.backlog_bytes;
        backlog_packets += o.backlog_packets;
        sojourn_count += o.sojourn_count;
        sojourn_sum_ns += o.sojourn_sum_ns;
        sojourn_max_ns = std::max(sojourn_max_ns, o.sojourn_max_ns);
    }
};

/// One sampled packet, end to end through one direction (all in ns, data-plane clock).
struct DelaySample {
    TimeNs arrival_ns = 0;
    DurationNs delay_ns = 0;      // the delay the emulator drew for it (>= 0)
    DurationNs scheduled_ns = 0;  // scheduled departure - arrival (delay + spacer + order)
    DurationNs actual_ns = 0;     // departure - arrival, as the data plane measured them
    std::uint8_t class_id = 0;    // its traffic class: 0 `default`, i + 1 the list's class i
};

/// What one direction's lcore reports every interval (~50 ms): a consistent copy of its
/// counters (taken between two bursts, so in = out + drops + in_flight holds), the
/// parameter generation it runs with, and the delay and lateness of every packet of the
/// interval.
struct IntervalReport {
    TimeNs start_ns = 0, end_ns = 0;
    CounterSnapshot counters;
    std::uint64_t params_generation = 0;
    RunningStats delay;     // given delay of every packet queued in the interval, ns
    RunningStats lateness;  // departure - scheduled departure of every packet that left, ns
    WaitSums wait;          // spacer and order wait of every packet queued in the interval
    QueueReport queue;      // the limiter's queue
    std::uint64_t samples_dropped = 0;  // cumulative
};

/// One frame of the built-in traffic, measured end to end: the send time it carried and its
/// one-way delay (receive - send), ns.
struct MeasuredDelay {
    TimeNs send_ns = 0;
    DurationNs delay_ns = 0;
};

/// What the built-in traffic's receiving side saw of one direction's frames (cumulative since the
/// run began).
struct TrafficCounts {
    std::uint64_t sent = 0;
    std::uint64_t received = 0;      // distinct frames of the run (duplicates not counted)
    std::uint64_t lost = 0;          // sequence numbers below the highest received, not received
    std::uint64_t out_of_order = 0;  // arrived after a frame with a higher sequence number
    std::uint64_t duplicates = 0;    // a second copy of a frame already received
    std::uint64_t samples_dropped = 0;
    bool operator==(const TrafficCounts&) const = default;
};

/// One direction of a `delay` message.
struct DirectionDelay {
    TimeNs start_ns = 0, end_ns = 0;
    std::vector<DelaySample> samples;
    RunningStats delay, lateness;
    WaitSums wait;
    QueueReport queue;  // the limiter's queue: backlog at end_ns, sojourn over the interval
    std::uint64_t samples_dropped = 0;
    /// The parameter generation the direction ran with at end_ns (none from a linkemd that
    /// does not send it).
    std::optional<std::uint64_t> params_generation;
    /// With the built-in traffic: its measured samples, and the measured delay of every frame
    /// received in the interval.
    bool has_measured = false;
    std::vector<MeasuredDelay> measured;
    RunningStats measured_delay;
};

}  // namespace linkem
