// The Emulator's telemetry on the departure side (linkem/telemetry.hpp says what is
// reported): the lateness of every packet that leaves (add_lateness), and a few packets a
// second followed from arrival to departure (DelaySampler). Owned and called by the thread
// that owns the Emulator; nothing here allocates once configured.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "linkem/spsc_ring.hpp"
#include "linkem/telemetry.hpp"
#include "linkem/time.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace linkem {

namespace detail {
/// {sum of l, sum of l^2} over l = now - tx[i], i < n, for 0 <= l < 2^26 and n <= 2^11
/// (add_lateness). SSE2 (every x86-64): two lanes, the squares by pmuludq, which multiplies
/// the low 32 bits of each lane.
inline std::pair<std::uint64_t, std::uint64_t> lateness_sums(TimeNs now, const TimeNs* tx,
                                                             std::size_t n) {
    std::uint64_t s = 0, q = 0;
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i t = _mm_set1_epi64x(now);
    __m128i sv = _mm_setzero_si128(), qv = _mm_setzero_si128();
    for (; i + 2 <= n; i += 2) {
        const __m128i l =
            _mm_sub_epi64(t, _mm_loadu_si128(reinterpret_cast<const __m128i*>(tx + i)));
        sv = _mm_add_epi64(sv, l);
        qv = _mm_add_epi64(qv, _mm_mul_epu32(l, l));
    }
    alignas(16) std::uint64_t lanes[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), sv);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes + 2), qv);
    s = lanes[0] + lanes[1];
    q = lanes[2] + lanes[3];
#endif
    for (; i < n; ++i) {
        const auto l = static_cast<std::uint64_t>(now - tx[i]);
        s += l;
        q += l * l;
    }
    return {s, q};
}
}  // namespace detail

/// Adds the lateness now - tx[i] of n packets that left at `now` to `stats`; tx[0, n) is
/// non-decreasing (every queue emits in tx order).
inline void add_lateness(RunningStats& stats, TimeNs now, const TimeNs* tx, std::size_t n) {
    assert(std::is_sorted(tx, tx + n));
    const DurationNs max_l = now - tx[0], min_l = now - tx[n - 1];
    double sum = 0, sq = 0;
    // This runs for every packet that leaves. While every lateness is below 2^26 ns
    // (67 ms) and n <= 2^11, the sums are exact 64-bit integers (no square can overflow
    // them) and take ~1 cycle a packet; otherwise doubles.
    if (min_l >= 0 && max_l < (DurationNs{1} << 26) && n <= 2048) [[likely]] {
        const auto [s, q] = detail::lateness_sums(now, tx, n);
        sum = static_cast<double>(s);
        sq = static_cast<double>(q);
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            const double l = static_cast<double>(now - tx[i]);
            sum += l;
            sq += l * l;
        }
    }
    const double mn = static_cast<double>(min_l), mx = static_cast<double>(max_l);
    stats.count += n;
    stats.sum += sum;
    stats.sumsq += sq;
    stats.min = mn < stats.min ? mn : stats.min;
    stats.max = mx > stats.max ? mx : stats.max;
}

/// One packet per sample period followed from arrival to departure, into a DelaySample
/// ring. The Emulator says which packet (follow) and how far the departures have come
/// (departed), each with a key: the packet leaves once the departures passed its key.
class DelaySampler {
  public:
    /// One sample per `period` (0: none) into `sink`, at most max_pending followed at once;
    /// what does not fit into the sink is counted (dropped()). Allocates.
    void configure(DurationNs period, std::size_t max_pending, SpscRing<DelaySample>* sink) {
        period_ = sink ? period : 0;
        sink_ = sink;
        max_pending_ = max_pending;
        pending_.clear();
        pending_.reserve(max_pending);
    }

    /// Whether packets arriving at `now` owe a sample.
    bool due(TimeNs now) const { return period_ != 0 && now >= next_; }

    /// The samples an ingest call of n packets at `now` owes (due(now)), at most one a
    /// packet and kMaxPerCall; more than kMaxPerCall periods behind is a pause: one sample,
    /// and the schedule restarts from now. Several owed: `step` becomes the size of the
    /// pieces (at most its value) the call is split into, one sample each.
    std::size_t owed(std::size_t n, TimeNs now, std::size_t& step) const {
        const auto behind =
            static_cast<std::uint64_t>(now - next_) / static_cast<std::uint64_t>(period_) + 1;
        if (behind > kMaxPerCall) return 1;
        const std::size_t owed = std::min<std::size_t>(behind, n);
        if (owed > 1) step = std::min(step, n / owed);  // at least owed pieces
        return owed;
    }
    static constexpr std::uint64_t kMaxPerCall = 64;

    /// Follows a packet that arrived at `now`, was given `delay` and transmission time tx,
    /// and leaves once the departures pass `key` (if there is room to follow one more).
    /// `advance` false: the period was taken already (take_turn()).
    void follow(TimeNs now, DurationNs delay, TimeNs tx, std::uint64_t key, bool advance = true) {
        if (advance) next_ += period_;  // on schedule, one per period
        if (pending_.size() >= max_pending_) return;
        pending_.push_back(Pending{now, delay, tx, key});
        std::push_heap(pending_.begin(), pending_.end(), Later{});
    }

    /// Takes this period's sample for a packet followed later (when its transmission time
    /// is known: a queue discipline's packets), keeping the schedule from `now` on.
    void take_turn(TimeNs now) {
        next_ += period_;
        catch_up(now);
    }
    /// After an ingest call that owed samples: still behind (a pause, or pieces that queued
    /// nothing), the schedule restarts from now.
    void catch_up(TimeNs now) {
        if (next_ <= now) next_ = now + period_;
    }

    /// Departures at `now` passed every key below `gone`: those packets' samples are done.
    void departed(TimeNs now, std::uint64_t gone) {
        while (!pending_.empty() && pending_.front().key < gone) {
            const Pending& p = pending_.front();
            const DelaySample s{p.arrival, p.delay, p.tx - p.arrival, now - p.arrival};
            if (!sink_->try_push(s)) ++dropped_;
            std::pop_heap(pending_.begin(), pending_.end(), Later{});
            pending_.pop_back();
        }
    }

    bool following() const { return !pending_.empty(); }
    /// Drops the samples in flight (not counted: they were never due to the sink).
    void clear() { pending_.clear(); }
    std::uint64_t dropped() const { return dropped_; }

  private:
    struct Pending {
        TimeNs arrival;
        DurationNs delay;
        TimeNs tx;
        std::uint64_t key;
    };
    struct Later {
        bool operator()(const Pending& a, const Pending& b) const { return a.key > b.key; }
    };
    DurationNs period_ = 0;
    TimeNs next_ = 0;
    std::size_t max_pending_ = 0;
    std::vector<Pending> pending_;  // a min-heap on key
    SpscRing<DelaySample>* sink_ = nullptr;
    std::uint64_t dropped_ = 0;
};

}  // namespace linkem
