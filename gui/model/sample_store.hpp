// The delay samples behind linkem-gui's charts and readouts, independent of Qt: per
// direction a SampleRing (every sample of the last 5 minutes, exactly as received, packed)
// and a ColumnDecimator (the minimum and maximum of each pixel column of the time window).
//
// Memory: samples are kept for kRetentionNs (5 minutes, the longest time window) in chunks of
// up to kChunkSamples: the newest chunk of a ring is open (plain int64 arrays), a sealed one
// is bit-packed by frame of reference (SampleRing). A hard cap of kMaxSamplesPerDirection
// drops the oldest chunks beyond it. Bytes a sample and the store at the protocol's maximum
// rate: docs/performance.md ("linkem-gui's delay-sample store").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "linkem/telemetry.hpp"
#include "running_stats.hpp"

// The store's readers are small functions called per sample from templates: inlined always
// (GCC and Clang), so that what a caller does not use (e.g. the time) is not computed.
#define LINKEM_STORE_INLINE [[gnu::always_inline]] inline

namespace linkem::gui {

inline constexpr std::int64_t kNsPerS = 1'000'000'000;
inline constexpr std::int64_t kRetentionNs = 300 * kNsPerS;
inline constexpr std::size_t kChunkSamples = 4096;
inline constexpr std::size_t kMaxSamplesPerDirection = 20'000 * 300 + 2 * kChunkSamples;

/// One sampled packet as the protocol gives it (integer ns): its arrival (data-plane ns)
/// and its delays; the charts read them in microseconds.
struct DelayPoint {
    std::int64_t t_ns = 0;
    std::int64_t delay_ns = 0, scheduled_ns = 0, actual_ns = 0;
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
    /// Statistics of actual_ns over the samples with lo <= t_ns <= hi: chunks wholly inside
    /// add their own summary, only the chunks at the edges are scanned.
    RunningStats actual(std::int64_t lo, std::int64_t hi) const;
    /// The same of the wait, scheduled_ns - delay_ns (the spacer's queueing and the wait
    /// behind an earlier packet); empty in a ring made with full = false.
    RunningStats wait(std::int64_t lo, std::int64_t hi) const;
    /// Samples with lo <= t_ns <= hi (same rule as actual()).
    std::size_t count(std::int64_t lo, std::int64_t hi) const { return actual(lo, hi).count; }

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
        RunningStats actual, wait;  // ns
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
        RunningStats actual, wait;             // ns
        std::vector<std::int64_t> t, a, d, s;  // d and s in a full ring only

        std::size_t n() const { return t.size(); }
        void clear() {  // keeps the arrays' capacity for the next chunk
            t.clear();
            a.clear();
            d.clear();
            s.clear();
            actual = wait = RunningStats{};
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
    static void statsIn(const C& c, std::int64_t lo, std::int64_t hi, bool of_wait,
                        RunningStats& m);
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

}  // namespace linkem::gui
