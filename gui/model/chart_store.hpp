// What linkem-gui's charts draw, independent of Qt: per direction the delay samples (a
// SampleRing and its pixel columns), one Interval per `delay` message, one RatePoint per
// `stats` message, and the targets (mean, jitter, distribution) in force over time. Fed with
// the protocol's typed messages (TelemetryModel decodes them); holds the last 5 minutes.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "linkem/stats.hpp"
#include "sample_store.hpp"

namespace linkem::gui {

using proto::kDirectionKeys;

/// One `delay` message's interval of one direction (ns).
struct Interval {
    std::int64_t start_ns = 0, end_ns = 0;
    RunningStats delay;     // the drawn delay of every packet queued in the interval
    RunningStats lateness;  // departure - scheduled departure of every packet that left
    RunningStats measured;  // the built-in traffic's measured one-way delay (count 0 if none)
    QueueReport queue;      // the limiter's queue: backlog at end_ns, sojourn times of the
                            // packets that left it in the interval (the queue chart's)
    std::optional<std::uint64_t> generation;  // the parameter generation at end_ns
};

/// Rates of one direction between two `stats` messages (at the later one's t_ns).
struct RatePoint {
    std::int64_t t_ns = 0;
    double in_bps = 0, out_bps = 0, in_pps = 0, out_pps = 0;
    double drops_per_s[kDropCauseCount] = {};  // by cause, in kDropCauses order
    double ecn_marked_per_s = 0;               // packets the queue discipline marked CE
};

/// The target in force from since_ns on (set by setLink), in microseconds.
struct Target {
    std::int64_t since_ns = std::numeric_limits<std::int64_t>::min();
    double mean_us = 0, jitter_us = 0;
    std::string distribution = "normal";
    std::string strategy = "correlated";
};

/// A histogram of actual delays as a probability density per microsecond.
struct Histogram {
    double lo_us = 0, bin_us = 0;
    std::vector<double> density;  // per bin, 1/us; sum(density) * bin_us = fraction in range
    std::uint64_t samples = 0;    // samples in the window (the normalisation)
    std::uint64_t used = 0;       // samples binned (every k-th when the window holds many)
    double hi_us() const { return lo_us + bin_us * static_cast<double>(density.size()); }
};

/// The configured distribution's probability density (1/us) at x_us, for mean and jitter
/// (its standard deviation) as the model's distributions parameterise it: normal; uniform
/// on mean -+ sqrt(3) jitter; gamma with shape mean^2/jitter^2 and scale jitter^2/mean;
/// lognormal with sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2/2. Constant (or jitter 0)
/// has no density: returns 0 (drawn as a spike at the mean).
double distributionDensity(const std::string& distribution, double mean_us, double jitter_us,
                           double x_us);

/// The counters a RatePoint is the rate of: packets and bytes in and out, one per drop
/// cause, then ecn_marked.
inline constexpr std::size_t kCounterColumns = 4 + kDropCauseCount + 1;

/// Everything received, for both directions.
class ChartStore {
  public:
    struct Direction {
        SampleRing samples;
        SampleRing measured{false};  // built-in traffic: t = send_ns, actual_ns = measured delay
        std::deque<Interval> intervals;
        std::deque<RatePoint> rates;
        std::deque<Target> targets;  // oldest first; the last is in force
        // of the last keep_ns (setColumns); the measured ones kMeasuredColumnSpan wide
        ColumnDecimator actual_cols, measured_cols;
        // the previous `stats` counters, for the rates
        bool have_prev = false;
        std::int64_t prev_t_ns = 0;
        // packets_in, bytes_in, packets_out, bytes_out, the drops in kDropCauses order,
        // ecn_marked
        double prev[kCounterColumns] = {};
    };

    /// A `stats` message (its t_ns is the stats' own).
    void addStats(const LinkStats& stats);
    /// A `delay` message taken at t_ns (its header's).
    void addDelay(const proto::DelayMessage& msg, std::int64_t t_ns);
    /// The link in force from now on (get_link, set_link).
    void setLink(const LinkConfig& link, unsigned directions);
    /// The link in force from data-plane time since_ns on (a scenario's step, at its time):
    /// the targets from since_ns on are replaced by it.
    void setLinkAt(const LinkConfig& link, unsigned directions, std::int64_t since_ns);
    void clear();

    /// Newest data-plane time seen in any message (0 before the first).
    std::int64_t latestNs() const { return latest_ns_; }
    bool hasData() const { return have_data_; }
    /// A direction's totals, every class together (the readouts').
    const Direction& dir(int d) const { return dirs_[d]; }

    /// Traffic classes (docs/classes.md): with `classes` > 0 (the link's classes besides
    /// `default`) each delay sample also goes to its class's own samples (by its class_id)
    /// and each class's counters (stats' `classes`) to its own rates; a class's targets are
    /// its own parameters. Without classes nothing is kept twice.
    void setClassCount(std::size_t classes);  // setLink calls it when the list changes
    std::size_t classCount() const {
        return class_dirs_[0].empty() ? 0 : class_dirs_[0].size() - 1;
    }
    /// What the charts show: every class together (-1, the direction's totals) or the class
    /// of that id (0 `default`, i + 1 the list's class i).
    void setShownClass(int id);
    int shownClass() const { return shown_class_; }
    /// The direction as the charts show it (dir(d), or the shown class's own).
    const Direction& shown(int d) const {
        return shown_class_ >= 0 && static_cast<std::size_t>(shown_class_) < class_dirs_[d].size()
                   ? class_dirs_[d][static_cast<std::size_t>(shown_class_)]
                   : dirs_[d];
    }
    /// The name of class id (0 `default`), as the link in force names it.
    std::string className(std::size_t id) const {
        return id == 0                     ? std::string(kDefaultClassName)
               : id <= class_names_.size() ? class_names_[id - 1]
                                           : std::string();
    }
    /// A class's own direction (0 `default`, i + 1 class i); classCount() + 1 of them.
    const Direction& classDir(int d, std::size_t id) const { return class_dirs_[d][id]; }

    /// The built-in traffic's samples are drawn as squares 3 px wide: their columns are
    /// that many pixel columns wide (the min and max of each), a third of the squares for
    /// the same picture (each square painted once; Qt Charts' paint time grows with them).
    static constexpr std::int64_t kMeasuredColumnSpan = 3;
    /// Decimation columns of column_ns for the last keep_ns (the time window): rebuilt
    /// from the stored samples when column_ns or keep_ns changes, then kept up to date.
    void setColumns(std::int64_t column_ns, std::int64_t keep_ns);
    std::int64_t columnNs() const { return column_ns_; }

    /// Of the shown class (shown(d)).
    Histogram histogram(int d, std::int64_t lo, std::int64_t hi, std::size_t max_used) const;

    /// Bytes the stored delay and measured samples of both directions take.
    std::size_t storedBytes() const;

    /// The oldest time at which something drawn changed since the last call (a sample or
    /// measured sample added to the columns, an interval's start, a rate point), then
    /// forgets it; INT64_MAX when nothing changed.
    std::int64_t takeOldestChange() {
        const std::int64_t t = oldest_change_;
        oldest_change_ = std::numeric_limits<std::int64_t>::max();
        return t;
    }

  private:
    void addCounters(Direction& D, const CounterSnapshot& k, std::int64_t t);
    void addTarget(Direction& D, const LinkParams& p, std::int64_t since_ns);
    void rebuildColumns(Direction& D);
    void touch(std::int64_t t_ns);
    void trim();
    void changed(std::int64_t t) { oldest_change_ = std::min(oldest_change_, t); }
    Direction dirs_[2];
    std::vector<Direction> class_dirs_[2];  // [d][class id], empty without classes
    std::vector<std::string> class_names_;  // of the link in force (setLink)
    int shown_class_ = -1;
    std::int64_t latest_ns_ = 0;
    bool have_data_ = false;
    std::int64_t column_ns_ = 0, keep_ns_ = 0;
    std::int64_t oldest_change_ = std::numeric_limits<std::int64_t>::max();
};

}  // namespace linkem::gui
