// Time-stamp-counter ticks to nanoseconds, at a rate measured against the system clock.
//
// A TSC rate reported by the platform can be off: DPDK 22.11's rte_get_tsc_hz() can return
// a VM's nominal rate rather than the rate its TSC runs at by CLOCK_MONOTONIC_RAW, and every
// delay would be off by their ratio (docs/dataplane.md, "The clock", has a measured case).
// So the rate is measured: paired readings of the TSC
// and CLOCK_MONOTONIC_RAW (read_clock_pair), a short baseline at start (calibrate_tsc) and
// ever longer ones later (TscRateTracker), each change adopted without a step in the
// nanosecond timeline (TscScale::reanchor) and handed to readers lock-free (TscClock).
//
// Everything here but TscClock::now() works on tick values it is given, so it is tested
// without a TSC (tests/unit/test_tsc_clock.cpp).
#pragma once

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "linkem/time.hpp"

namespace linkem {

/// ns = base_ns + (tick - anchor) * mult / 2^32, where mult is mult_before for ticks before
/// the anchor and mult_after from it on. The two multipliers let a re-anchored scale agree
/// with the one it replaces up to its anchor (see reanchor()), so a reader that still holds
/// the old scale, or reads a tick taken a little before the anchor with the new one, gets
/// the same nanoseconds either way (to the nanosecond, never less): no step, no going back.
struct TscScale {
    std::uint64_t anchor = 0;
    std::int64_t base_ns = 0;
    std::uint64_t mult_before = 0;
    std::uint64_t mult_after = 0;

    /// 2^32 * 1e9 / hz, the multiplier for a TSC of `hz` ticks per second (resolution:
    /// 0.0005 ppm at 2 GHz).
    static std::uint64_t mult_for(double hz) {
        return static_cast<std::uint64_t>(std::llround(4294967296.0 * 1e9 / hz));
    }
    /// The rate a multiplier stands for.
    static double hz_of(std::uint64_t mult) {
        return 4294967296.0 * 1e9 / static_cast<double>(mult);
    }
    /// A scale at `hz` that reads `ns` at tick `tick`.
    static TscScale start(std::uint64_t tick, TimeNs ns, double hz) {
        const std::uint64_t m = mult_for(hz);
        return TscScale{tick, ns, m, m};
    }

    /// Ticks to ns: a subtraction, a select, a 64x64 multiply and a shift. Ticks up to 2^63
    /// away from the anchor (a century at 3 GHz) do not overflow; before it, time is
    /// earlier (rounded down, like after it).
    TimeNs to_ns(std::uint64_t tick) const {
        const auto d = static_cast<std::int64_t>(tick - anchor);
        const std::uint64_t m = d < 0 ? mult_before : mult_after;
        return base_ns +
               static_cast<TimeNs>((static_cast<__int128>(d) * static_cast<__int128>(m)) >> 32);
    }
    /// The multiplier that applies at `tick`.
    std::uint64_t mult_at(std::uint64_t tick) const {
        return static_cast<std::int64_t>(tick - anchor) < 0 ? mult_before : mult_after;
    }
    /// The same timeline up to `tick`, at `mult` from there on. For ticks at or after this
    /// scale's anchor (the only ones anybody still reads) the result reads what this scale
    /// reads, or one nanosecond more (its base is rounded up), up to `tick`; from there on
    /// it runs at the new rate. The writer picks `tick` a little in the future
    /// (eal.cpp): readers that still hold the old scale until then read the same time.
    TscScale reanchor(std::uint64_t tick, std::uint64_t mult) const {
        const std::uint64_t m = mult_at(tick);
        const __int128 fp = static_cast<__int128>(static_cast<std::int64_t>(tick - anchor)) *
                            static_cast<__int128>(m);
        TscScale s;
        s.anchor = tick;
        s.base_ns = base_ns + static_cast<std::int64_t>((fp + 0xffffffff) >> 32);  // ceil
        s.mult_before = m;
        s.mult_after = mult;
        return s;
    }
};

/// The scale in use, shared by one writer (the control side) and any number of readers
/// (the lcores) without locks: an atomically swapped pointer to an immutable scale. The
/// scales live in a ring of kSlots that the writer fills in turn; a slot is written again
/// only kSlots publications after it stopped being current, i.e. (one publication per
/// re-check at most, every 10 s) hours later, far longer than a reader holds a pointer.
/// Readers cost one load more than a fixed scale.
class TscClock {
  public:
    static constexpr std::size_t kSlots = 1024;

    TscScale scale() const { return *cur_.load(std::memory_order_acquire); }
    /// ns at `tick` by the current scale.
    TimeNs to_ns(std::uint64_t tick) const {
        return cur_.load(std::memory_order_acquire)->to_ns(tick);
    }
    /// One writer at a time.
    void publish(const TscScale& v) {
        TscScale& slot = slots_[next_++ % kSlots];
        slot = v;
        cur_.store(&slot, std::memory_order_release);
    }
    /// How many scales were published.
    std::uint64_t generation() const { return next_; }

  private:
    std::atomic<const TscScale*> cur_{&slots_[0]};
    std::uint64_t next_ = 0;
    TscScale slots_[kSlots];
};

/// A TSC reading paired with a CLOCK_MONOTONIC_RAW reading taken between two TSC reads;
/// `width` is the span of those two (the uncertainty of the pairing).
struct ClockPair {
    std::uint64_t tick = 0;
    TimeNs ns = 0;
    std::uint64_t width = ~std::uint64_t{0};
};

inline TimeNs monotonic_raw_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<TimeNs>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

/// The tightest of `tries` pairings (a preemption or an interrupt inside one widens only
/// that one). `ticks` reads the TSC.
template <class Ticks, class Ns = decltype(&monotonic_raw_ns)>
ClockPair read_clock_pair(Ticks ticks, int tries = 64, Ns ns = &monotonic_raw_ns) {
    ClockPair best;
    for (int i = 0; i < tries; ++i) {
        const std::uint64_t t0 = ticks();
        const TimeNs n = ns();
        const std::uint64_t t1 = ticks();
        if (t1 - t0 < best.width) best = ClockPair{t0 + (t1 - t0) / 2, n, t1 - t0};
    }
    return best;
}

/// Ticks per second between two pairings.
inline double rate_between(const ClockPair& a, const ClockPair& b) {
    return static_cast<double>(b.tick - a.tick) * 1e9 / static_cast<double>(b.ns - a.ns);
}
/// Worst-case relative error of rate_between(a, b), in ppm: both pairings' half-widths,
/// over the baseline (ticks).
inline double rate_error_ppm(const ClockPair& a, const ClockPair& b) {
    return static_cast<double>(a.width + b.width) / 2 * 1e6 / static_cast<double>(b.tick - a.tick);
}

/// Rate re-checks over a growing baseline: keeps the pairings of the last `window` (one
/// per check) and measures the rate from the oldest one to the newest, so the estimate
/// gets more precise as the process runs and still follows a rate that changes over hours.
class TscRateTracker {
  public:
    explicit TscRateTracker(ClockPair first, DurationNs window = 3600 * kNsPerSec)
        : window_(window) {
        pairs_.push_back(first);
    }
    /// Adds a pairing; returns the rate from the oldest kept one.
    double add(const ClockPair& p) {
        pairs_.push_back(p);
        while (pairs_.size() > 2 && p.ns - pairs_[1].ns >= window_)
            pairs_.pop_front();
        return rate_between(pairs_.front(), p);
    }
    double error_ppm() const { return rate_error_ppm(pairs_.front(), pairs_.back()); }
    DurationNs baseline() const { return pairs_.back().ns - pairs_.front().ns; }

  private:
    DurationNs window_;
    std::deque<ClockPair> pairs_;
};

}  // namespace linkem
