// The data behind linkem-gui's charts: a time-windowed store of the telemetry of both
// directions (docs/protocol.md, section 4), independent of Qt.
//
// Memory. Delay samples are kept for kRetentionNs (5 minutes, the longest time window)
// exactly as received (integer ns) in chunks of up to kChunkSamples: the newest chunk of a
// ring is open (plain int64 arrays), a sealed one is bit-packed by frame of reference
// (SampleRing): some 5-7 bytes a sample and 3-5 a measured one, so a full 5-minute store
// at the protocol's maximum of 20 000 samples/s per direction stays under ~150 MB
// (`linkem-gui-store-bench` prints the figures; docs/performance.md, "linkem-gui at full
// telemetry", has them with their dates). A hard cap of kMaxSamplesPerDirection drops the
// oldest chunks beyond it. Interval summaries (20/s) and
// rates (one per `stats` message) are small beside it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/protocol.hpp"

// The store's readers are small functions called per sample from templates: inlined always
// (GCC and Clang), so that what a caller does not use (e.g. the time) is not computed.
#define LINKEM_STORE_INLINE [[gnu::always_inline]] inline

namespace linkem::gui {

/// j[key] as an integer: an integer (unsigned ones clamped to INT64_MAX) or a finite number
/// within +-9e18, truncated; false, and out untouched, when absent or anything else.
bool jsonInteger(const nlohmann::json& j, const char* key, std::int64_t& out);

inline constexpr std::int64_t kNsPerS = 1'000'000'000;
inline constexpr std::int64_t kRetentionNs = 300 * kNsPerS;
inline constexpr std::size_t kChunkSamples = 4096;
inline constexpr std::size_t kMaxSamplesPerDirection = 20'000 * 300 + 2 * kChunkSamples;
using proto::kDirectionKeys;

/// Count, mean, sum of squared deviations (Welford), minimum and maximum; mergeable
/// (Chan et al.). sd() is the population standard deviation, as the protocol's summaries.
struct Moments {
    std::uint64_t n = 0;
    double mean = 0, m2 = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();

    void add(double x) {
        ++n;
        const double d = x - mean;
        mean += d / static_cast<double>(n);
        m2 += d * (x - mean);
        if (x < min) min = x;
        if (x > max) max = x;
    }
    void merge(const Moments& o);
    /// A protocol summary {count,min_ns,max_ns,mean_ns,jitter_ns} (or sd_ns), scaled by `scale`
    /// (e.g. 1e-3 for microseconds). A summary with count 0 or missing keys gives n = 0.
    static Moments fromSummary(const nlohmann::json& j, double scale);
    double sd() const;
};

/// One sampled packet as the protocol gives it (integer ns): its arrival (data-plane ns)
/// and its delays; the charts read them in microseconds.
struct DelayPoint {
    std::int64_t t_ns = 0;
    std::int64_t delay_ns = 0, scheduled_ns = 0, actual_ns = 0;
    double delay_us() const { return static_cast<double>(delay_ns) * 1e-3; }
    double scheduled_us() const { return static_cast<double>(scheduled_ns) * 1e-3; }
    double actual_us() const { return static_cast<double>(actual_ns) * 1e-3; }
};

/// The samples of one direction in arrival order as received (departure order: arrivals
/// are nearly, not strictly, increasing when packets reorder), exactly as received. A ring
/// made with full = false keeps only each sample's time and actual_ns (delay_ns and
/// scheduled_ns read back as actual_ns): the built-in traffic's measured samples.
///
/// The newest chunk (up to kChunkSamples) is open: plain arrays. A sealed chunk is packed
/// by frame of reference, each field at a fixed bit width of its own (0 when the field is
/// constant in the chunk): actual_ns - min, so that the actual value of any index is read
/// without the others; the time as the difference to the previous sample's (sequential,
/// with the offset from the chunk's first time at every kTimeCheckpoint-th sample);
/// actual - scheduled and scheduled - delay (full rings). A chunk is sealed early when a
/// time is more than 2^31 ns from its first one.
class SampleRing {
  public:
    SampleRing() = default;
    explicit SampleRing(bool full) : full_(full) {}
    void add(const DelayPoint& p);
    /// Drops whole chunks whose every sample arrived before t_ns.
    void trimBefore(std::int64_t t_ns);
    void clear();
    std::size_t size() const { return size_; }
    /// Bytes the samples take: the chunks' arrays as allocated and their headers.
    std::size_t bytes() const;

    /// f(const DelayPoint&) for each sample with lo <= t_ns <= hi, in stored order.
    template <class F>
    void forEach(std::int64_t lo, std::int64_t hi, F&& f) const {
        for (const Sealed& c : sealed_)
            eachIn(c, lo, hi, f);
        eachIn(open_, lo, hi, f);
    }
    /// As forEach, for every stride-th of those samples (the first, then every stride-th),
    /// stepping over the others without reading them where a chunk lies wholly inside.
    /// With run > 1, runs of `run` consecutive samples, one run every stride * run samples
    /// (as many visits; whole cache lines are read instead of one sample of each).
    template <class F>
    void forEachStrided(std::int64_t lo, std::int64_t hi, std::size_t stride, F&& f,
                        std::size_t run = 1) const {
        if (stride <= 1) return forEach(lo, hi, f);
        if (run < 1) run = 1;
        const std::size_t period = stride * run;
        std::size_t phase = 0;  // position in the period of the next sample in [lo, hi]
        for (const Sealed& c : sealed_)
            stridedIn(c, lo, hi, run, period, phase, f);
        stridedIn(open_, lo, hi, run, period, phase, f);
    }
    /// Moments of actual_us over the samples with lo <= t_ns <= hi: chunks wholly inside
    /// add their own summary, only the chunks at the edges are scanned.
    Moments actual(std::int64_t lo, std::int64_t hi) const;
    /// Samples with lo <= t_ns <= hi (same rule as actual()).
    std::size_t count(std::int64_t lo, std::int64_t hi) const { return actual(lo, hi).n; }

    static constexpr std::size_t kTimeCheckpoint = 64;

  private:
    // w bits (0..64) at bit `bit` of p, little-endian; p has 8 readable bytes after the
    // last field's first byte. Fields of up to 56 bits (all time steps: < 2^33) take one
    // unaligned load and no branch.
    LINKEM_STORE_INLINE static std::uint64_t bitsSmall(const std::uint8_t* p, std::uint64_t bit,
                                                       unsigned w) {
        std::uint64_t v;
        std::memcpy(&v, p + (bit >> 3), 8);
        return (v >> (bit & 7)) & ((std::uint64_t{1} << w) - 1);
    }
    LINKEM_STORE_INLINE static std::uint64_t bitsAt(const std::uint8_t* p, std::uint64_t bit,
                                                    unsigned w) {
        if (w <= 56) return bitsSmall(p, bit, w);
        const std::uint8_t* q = p + (bit >> 3);
        const unsigned sh = static_cast<unsigned>(bit & 7);
        std::uint64_t v;
        std::memcpy(&v, q, 8);
        v >>= sh;
        if (sh + w > 64) v |= static_cast<std::uint64_t>(q[8]) << (64 - sh);
        return w == 64 ? v : v & ((std::uint64_t{1} << w) - 1);
    }
    struct Sealed {
        std::int64_t t0 = 0, min_t = 0, max_t = 0;
        Moments actual;
        // frames of reference: actual, time step, actual - scheduled, scheduled - delay
        std::int64_t a_min = 0, dt_min = 0, late_min = 0, sd_min = 0;
        std::uint32_t count = 0;
        std::uint32_t a_at = 0, dt_at = 0, late_at = 0, sd_at = 0;  // byte offsets in data
        std::uint8_t a_w = 0, dt_w = 0, late_w = 0, sd_w = 0;       // bit widths
        std::vector<std::uint8_t> data;  // int32 checkpoints, then the four bit fields

        std::size_t n() const { return count; }
        LINKEM_STORE_INLINE std::int64_t step(std::size_t i) const {
            return static_cast<std::int64_t>(static_cast<std::uint64_t>(dt_min) +
                                             bitsSmall(data.data() + dt_at, i * dt_w, dt_w));
        }
        LINKEM_STORE_INLINE std::int64_t actualAt(std::size_t i) const {
            return static_cast<std::int64_t>(static_cast<std::uint64_t>(a_min) +
                                             bitsAt(data.data() + a_at, i * a_w, a_w));
        }
        /// The time of sample i (from the checkpoint before it).
        LINKEM_STORE_INLINE std::int64_t timeAt(std::size_t i) const {
            std::size_t j = i - i % kTimeCheckpoint;
            std::int32_t cp;
            std::memcpy(&cp, data.data() + 4 * (j / kTimeCheckpoint), 4);
            std::int64_t off = cp;
            for (++j; j <= i; ++j)
                off += step(j);
            return t0 + off;
        }
        /// The time of sample i > 0 from that of sample i - 1.
        LINKEM_STORE_INLINE std::int64_t nextTime(std::size_t i, std::int64_t prev) const {
            return prev + step(i);
        }
        LINKEM_STORE_INLINE DelayPoint point(std::size_t i, std::int64_t t) const {
            const std::uint64_t a = static_cast<std::uint64_t>(actualAt(i));
            const std::uint64_t s = a - static_cast<std::uint64_t>(late_min) -
                                    bitsAt(data.data() + late_at, i * late_w, late_w);
            const std::uint64_t d = s - static_cast<std::uint64_t>(sd_min) -
                                    bitsAt(data.data() + sd_at, i * sd_w, sd_w);
            return DelayPoint{t, static_cast<std::int64_t>(d), static_cast<std::int64_t>(s),
                              static_cast<std::int64_t>(a)};
        }
    };
    struct Open {
        std::int64_t min_t = 0, max_t = 0;
        Moments actual;
        std::vector<std::int64_t> t, a, d, s;  // d and s in a full ring only

        std::size_t n() const { return t.size(); }
        void clear() {  // keeps the arrays' capacity for the next chunk
            t.clear();
            a.clear();
            d.clear();
            s.clear();
            actual = Moments{};
        }
        LINKEM_STORE_INLINE std::int64_t timeAt(std::size_t i) const { return t[i]; }
        LINKEM_STORE_INLINE std::int64_t actualAt(std::size_t i) const { return a[i]; }
        LINKEM_STORE_INLINE std::int64_t nextTime(std::size_t i, std::int64_t) const {
            return t[i];
        }
        LINKEM_STORE_INLINE DelayPoint point(std::size_t i, std::int64_t ti) const {
            if (d.empty()) return DelayPoint{ti, a[i], a[i], a[i]};
            return DelayPoint{ti, d[i], s[i], a[i]};
        }
    };
    template <class C, class F>
    static void eachIn(const C& c, std::int64_t lo, std::int64_t hi, F& f) {
        const std::size_t n = c.n();
        if (n == 0 || c.max_t < lo || c.min_t > hi) return;
        const bool inside = c.min_t >= lo && c.max_t <= hi;
        std::int64_t t = c.timeAt(0);
        for (std::size_t i = 0; i < n; ++i) {
            if (i > 0) t = c.nextTime(i, t);
            if (inside || (t >= lo && t <= hi)) f(c.point(i, t));
        }
    }
    template <class C, class F>
    static void stridedIn(const C& c, std::int64_t lo, std::int64_t hi, std::size_t run,
                          std::size_t period, std::size_t& phase, F& f) {
        const std::size_t n = c.n();
        if (n == 0 || c.max_t < lo || c.min_t > hi) return;
        if (c.min_t >= lo && c.max_t <= hi) {
            for (std::size_t i = 0; i < n;) {
                if (phase < run) {
                    const std::size_t take = std::min(run - phase, n - i);
                    std::int64_t t = c.timeAt(i);
                    f(c.point(i, t));
                    for (std::size_t j = i + 1; j < i + take; ++j) {
                        t = c.nextTime(j, t);
                        f(c.point(j, t));
                    }
                    i += take;
                    phase += take;
                } else {
                    const std::size_t pass = std::min(period - phase, n - i);
                    i += pass;
                    phase += pass;
                }
                if (phase == period) phase = 0;
            }
            return;
        }
        std::int64_t t = c.timeAt(0);
        for (std::size_t i = 0; i < n; ++i) {
            if (i > 0) t = c.nextTime(i, t);
            if (t < lo || t > hi) continue;
            if (phase < run) f(c.point(i, t));
            if (++phase == period) phase = 0;
        }
    }
    template <class C>
    static void actualIn(const C& c, std::int64_t lo, std::int64_t hi, Moments& m);
    void seal();
    std::deque<Sealed> sealed_;
    Open open_;
    std::int64_t open_t0_ = 0;
    std::size_t size_ = 0;
    bool full_ = true;
};

/// Min/max decimation into fixed columns of time (column k covers [k w, (k+1) w) ns):
/// each column keeps its smallest and largest value and when they occurred, so a series
/// of any length is drawn with at most two points per column, in time order, and no
/// extreme is lost. Values are added once, as they arrive.
class ColumnDecimator {
  public:
    void reset(std::int64_t column_ns);
    std::int64_t columnNs() const { return w_; }
    void add(std::int64_t t_ns, float v);
    void trimBefore(std::int64_t t_ns);
    /// out(t_ns, value) for the columns overlapping [lo, hi]: the minimum and the maximum
    /// of each column in the order they occurred (one point if they are the same sample).
    template <class Out>
    void visit(std::int64_t lo, std::int64_t hi, Out&& out) const {
        if (w_ <= 0) return;
        const std::int64_t k0 = floorDiv(lo, w_);
        std::size_t i = k0 > first_ ? static_cast<std::size_t>(k0 - first_) : 0;
        for (; i < cols_.size(); ++i) {
            const Column& c = cols_[i];
            if (c.n == 0) continue;
            if (first_ + static_cast<std::int64_t>(i) > floorDiv(hi, w_)) break;
            if (c.n == 1 || (c.t_min == c.t_max && c.v_min == c.v_max)) {
                out(c.t_min, c.v_min);
            } else if (c.t_min <= c.t_max) {
                out(c.t_min, c.v_min);
                out(c.t_max, c.v_max);
            } else {
                out(c.t_max, c.v_max);
                out(c.t_min, c.v_min);
            }
        }
    }
    static std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
        const std::int64_t q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }

  private:
    struct Column {
        std::int64_t t_min = 0, t_max = 0;
        float v_min = 0, v_max = 0;
        std::uint32_t n = 0;
    };
    std::int64_t w_ = 0, first_ = 0;
    std::deque<Column> cols_;
};

/// One `delay` message's interval of one direction.
struct Interval {
    std::int64_t start_ns = 0, end_ns = 0;
    Moments delay_us;     // the drawn delay of every packet queued in the interval
    Moments lateness_us;  // departure - scheduled departure of every packet that left
    Moments measured_us;  // the built-in traffic's measured one-way delay (n 0 if none)
};

/// Rates of one direction between two `stats` messages (at the later one's t_ns).
struct RatePoint {
    std::int64_t t_ns = 0;
    double in_bps = 0, out_bps = 0, in_pps = 0, out_pps = 0;
    double drops_per_s[4] = {0, 0, 0, 0};  // kDropCauses order
};
inline constexpr const char* kDropCauses[4] = {"drops_loss", "drops_policer", "drops_spacer",
                                               "drops_buffer_full"};

/// The target in force from since_ns on (set by setLink).
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

/// The configured distribution's probability density (1/us) at x_us, for mean and sd as
/// common/src/distributions.cpp parameterises it: normal; uniform on mean -+ sqrt(3) sd;
/// gamma with shape mean^2/sd^2 and scale sd^2/mean; lognormal with sigma^2 = ln(1 + cv^2),
/// mu = ln(mean) - sigma^2/2. Constant (or sd 0) has no density: returns 0 (drawn as a
/// spike at the mean).
double distributionDensity(const std::string& distribution, double mean_us, double sd_us,
                           double x_us);

/// Everything received, for both directions.
class ChartData {
  public:
    struct Direction {
        SampleRing samples;
        SampleRing measured{false};  // built-in traffic: t = send_ns, actual_us = measured delay
        std::deque<Interval> intervals;
        std::deque<RatePoint> rates;
        std::deque<Target> targets;                  // oldest first; the last is in force
        ColumnDecimator actual_cols, measured_cols;  // of the last keep_ns (setColumns)
        nlohmann::json last_stats = nlohmann::json::object();
        // previous `stats` counters, for the rates
        bool have_prev = false;
        std::int64_t prev_t_ns = 0;
        double prev[8] = {};  // packets_in, bytes_in, packets_out, bytes_out, drops x4
    };

    void addStats(const nlohmann::json& msg);
    void addDelay(const nlohmann::json& msg);
    void setLink(const nlohmann::json& link);
    void clear();

    /// Newest data-plane time seen in any message (0 before the first).
    std::int64_t latestNs() const { return latest_ns_; }
    bool hasData() const { return have_data_; }
    const Direction& dir(int d) const { return dirs_[d]; }
    Direction& dir(int d) { return dirs_[d]; }

    /// Decimation columns of column_ns for the last keep_ns (the time window): rebuilt
    /// from the stored samples when column_ns or keep_ns changes, then kept up to date.
    void setColumns(std::int64_t column_ns, std::int64_t keep_ns);
    std::int64_t columnNs() const { return column_ns_; }

    Histogram histogram(int d, std::int64_t lo, std::int64_t hi, std::size_t max_used) const;

    /// The oldest time at which something drawn changed since the last call (a sample or
    /// measured sample added to the columns, an interval's start, a rate point), then
    /// forgets it; INT64_MAX when nothing changed.
    std::int64_t takeOldestChange() {
        const std::int64_t t = oldest_change_;
        oldest_change_ = std::numeric_limits<std::int64_t>::max();
        return t;
    }

  private:
    void touch(std::int64_t t_ns);
    void trim();
    Direction dirs_[2];
    std::int64_t latest_ns_ = 0;
    bool have_data_ = false;
    std::int64_t column_ns_ = 0, keep_ns_ = 0;
    std::int64_t oldest_change_ = std::numeric_limits<std::int64_t>::max();
    void changed(std::int64_t t) { oldest_change_ = std::min(oldest_change_, t); }
};

}  // namespace linkem::gui
