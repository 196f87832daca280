// Streaming metrics of one simulation run: delay moments, passage times, reordering.
//
// All three see each delivered packet once, in departure order, and keep O(1) state (the
// reordering counter: O(packets in flight)), so a run of billions of packets needs no
// per-packet storage.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace linkem::sim {

/// Mean and jitter (standard deviation) of integer samples (picoseconds), summed exactly.
///
/// Samples are accumulated as x - ref in 128-bit integers: sum and sum of squares are exact
/// for any run length we can simulate (2^127 ps^2 is far beyond 10^10 packets of 10 s
/// delay), so there is no rounding to compensate (Welford/Kahan would only approximate
/// this). `ref` (the desired mean) only keeps the numbers small.
class Moments {
  public:
    explicit Moments(std::int64_t ref = 0) : ref_(ref) {}

    void add(std::int64_t x) {
        const __int128 d = static_cast<__int128>(x - ref_);
        sum_ += d;
        sum_sq_ += d * d;
        ++n_;
    }

    std::uint64_t count() const { return n_; }
    double mean() const {
        if (n_ == 0) return std::numeric_limits<double>::quiet_NaN();
        return static_cast<double>(ref_ + static_cast<long double>(sum_) / n_);
    }
    /// The jitter: the population standard deviation (n in the denominator), as linkem's
    /// RunningStats, the protocol's jitter_ns and the parameter jitter_us define it
    /// (docs/glossary.md, "jitter"); 0 for one sample, NaN for none.
    double jitter() const {
        if (n_ == 0) return std::numeric_limits<double>::quiet_NaN();
        const long double s = static_cast<long double>(sum_);
        const long double var =
            (static_cast<long double>(sum_sq_) - s * s / n_) / static_cast<long double>(n_);
        return static_cast<double>(std::sqrt(std::max<long double>(var, 0)));
    }

  private:
    std::int64_t ref_;
    __int128 sum_ = 0, sum_sq_ = 0;
    std::uint64_t n_ = 0;
};

/// Passage times of a delay series (DPDS paper Fig. 2): the time between the series
/// exceeding the upper threshold and subsequently falling below the lower one, and vice
/// versa. The crossings alternate t1 (above) -> t2 (below) -> t3 (above) ...; every
/// interval t_{k+1} - t_k is one passage time. The time before the first crossing is not a
/// passage. "Exceeding" is strictly above the upper, "falling below" strictly below the
/// lower threshold.
class PassageTimes {
  public:
    PassageTimes(std::int64_t lower, std::int64_t upper) : lower_(lower), upper_(upper) {}

    /// Sample `value` observed at time `t` (non-decreasing).
    void add(std::int64_t t, std::int64_t value) {
        if (value > upper_) {
            if (state_ != kHigh) cross(t, kHigh);
        } else if (value < lower_) {
            if (state_ != kLow) cross(t, kLow);
        }
    }

    std::uint64_t count() const { return n_; }
    /// Mean passage time in the unit of t; NaN when no passage was completed.
    double mean() const {
        return n_ ? static_cast<double>(static_cast<long double>(sum_) / n_)
                  : std::numeric_limits<double>::quiet_NaN();
    }

  private:
    enum State : std::uint8_t { kNone, kHigh, kLow };
    void cross(std::int64_t t, State s) {
        if (state_ != kNone) {
            sum_ += t - last_;
            ++n_;
        }
        state_ = s;
        last_ = t;
    }

    std::int64_t lower_, upper_;
    State state_ = kNone;
    std::int64_t last_ = 0;
    __int128 sum_ = 0;
    std::uint64_t n_ = 0;
};

/// Kendall tau (bubble-sort) distance of the delivered sequence numbers, streaming.
///
/// For each departing packet it counts the packets that departed before it with a larger
/// sequence number; the sum over all packets is the number of adjacent swaps that sort the
/// output. Packets that never depart (dropped) are announced with drop() and take part in
/// no pair. Only the window of sequence numbers between the oldest not yet finished packet
/// (`low`) and the newest one touched is kept, in a ring-indexed Fenwick tree:
/// O(log window) per packet, and O(1) when a packet leaves in order with nothing held
/// back (always the case for the order-keeping strategies without drops).
class InversionCounter {
  public:
    explicit InversionCounter(std::size_t window = 4096) { resize(std::bit_ceil(window)); }

    /// Packet `seq` leaves; returns how many earlier departures had a larger seq. Each seq
    /// must depart or drop at most once.
    std::uint64_t depart(std::uint64_t seq) {
        if (seq == low_ && pending_ == 0) {  // in order, nothing departed ahead of it
            ++low_;
            if (marked_) advance();
            return 0;
        }
        ensure_window(seq);
        const std::uint64_t inv = pending_ - departed_in(low_, seq);
        state_[seq & mask_] = kDeparted;
        tree_add(seq & mask_, 1);
        ++pending_;
        ++marked_;
        if (seq == low_) advance();
        total_ += inv;
        return inv;
    }

    /// Packet `seq` will never depart.
    void drop(std::uint64_t seq) {
        if (seq == low_ && pending_ == 0 && marked_ == 0) {
            ++low_;
            return;
        }
        ensure_window(seq);
        state_[seq & mask_] = kDropped;
        ++marked_;
        if (seq == low_) advance();
    }

    std::uint64_t inversions() const { return total_; }

  private:
    static constexpr std::uint8_t kNone = 0, kDeparted = 1, kDropped = 2;

    void advance() {
        while (marked_ && state_[low_ & mask_] != kNone) {
            std::uint8_t& s = state_[low_ & mask_];
            if (s == kDeparted) {
                tree_add(low_ & mask_, -1);
                --pending_;
            }
            s = kNone;
            --marked_;
            ++low_;
        }
    }

    // Departed packets with seq in [a, b), b - a < window.
    std::uint64_t departed_in(std::uint64_t a, std::uint64_t b) const {
        if (a == b) return 0;
        const std::size_t ia = a & mask_, ib = b & mask_;
        if (ia < ib) return prefix(ib) - prefix(ia);
        return pending_ - prefix(ia) + prefix(ib);
    }

    void ensure_window(std::uint64_t seq) {
        if (seq - low_ < state_.size()) return;
        const std::size_t want = std::bit_ceil(static_cast<std::size_t>(seq - low_ + 1)) * 2;
        std::vector<std::uint8_t> old = std::move(state_);
        const std::size_t old_mask = mask_;
        resize(want);
        for (std::uint64_t s = low_; s < low_ + old.size(); ++s)
            state_[s & mask_] = old[s & old_mask];
        // Linear-time Fenwick build from the departed flags.
        for (std::size_t i = 0; i < state_.size(); ++i)
            tree_[i + 1] = state_[i] == kDeparted;
        for (std::size_t i = 1; i <= state_.size(); ++i) {
            const std::size_t j = i + (i & (~i + 1));
            if (j <= state_.size()) tree_[j] += tree_[i];
        }
    }

    void resize(std::size_t w) {
        state_.assign(w, kNone);
        tree_.assign(w + 1, 0);
        mask_ = w - 1;
    }

    // Sum of departed flags at ring positions [0, i).
    std::uint64_t prefix(std::size_t i) const {
        std::uint64_t s = 0;
        for (; i > 0; i &= i - 1)
            s += tree_[i];
        return s;
    }
    void tree_add(std::size_t pos, std::int32_t v) {
        for (std::size_t i = pos + 1; i < tree_.size(); i += i & (~i + 1))
            tree_[i] = static_cast<std::uint32_t>(static_cast<std::int64_t>(tree_[i]) + v);
    }

    std::uint64_t low_ = 0;      // every seq < low_ has departed or dropped
    std::uint64_t pending_ = 0;  // departed with seq >= low_ (the tree's total)
    std::uint64_t marked_ = 0;   // departed or dropped with seq >= low_
    std::uint64_t total_ = 0;
    std::vector<std::uint8_t> state_;
    std::vector<std::uint32_t> tree_;
    std::size_t mask_ = 0;
};

/// min / mean / max of a trace (alpha, rate), mean as a plain running sum.
struct TraceSummary {
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    long double sum = 0;
    std::uint64_t n = 0;

    void add(double v) {
        if (n == 0 || v < min) min = v;
        if (n == 0 || v > max) max = v;
        sum += v;
        ++n;
    }
    double mean() const {
        return n ? static_cast<double>(sum / n) : std::numeric_limits<double>::quiet_NaN();
    }
};

}  // namespace linkem::sim
