// SharedLink: one link's limiter shared by several Emulators, each on its own thread (the
// data plane's workers of one direction, each emulating the flows of its own queue).
//
// The link is one word: the time at which it is free again. For the spacer that is the end
// of the transmission time already given out; for the policer it is the time at which its
// token bucket would be full again (the bucket as a "generic cell rate algorithm": tokens
// at time t = burst - (free - t) x rate). A worker reserves the link's time for a batch of
// packets that arrived together with one compare-and-swap: it reads the word, places the
// packets one after another from max(free, arrival), each only if the backlog it finds
// (the reserved time after its arrival, in bytes at the rate) plus its own bytes stays
// within the limit (the spacer's backlog limit, the policer's burst), and swaps in the new
// end; if another worker moved the word meanwhile, it places them again from there.
//
// Exactness: every reservation is its own stretch of the link's time, none overlaps
// another, and a reservation starts where the last one ended unless the link was idle at
// the batch's arrival. So the workers together never exceed the rate, and while the link
// is backlogged they use all of it, whatever share of the traffic each one carries. Times
// are whole ns: each worker rounds its reservation down and carries the fraction into its
// next one, so over time every worker reserves its exact duration to within 1 ns.
//
// Compared with one Emulator's own limiter (limiter.hpp): the link comes before the delay
// for every strategy (packets reserve it when they arrive; the FIFO strategies' own spacer
// follows the delay), a batch is placed as one (by the order of its reservation among the
// workers, not by its packets' arrival times, which differ by the moments the workers read
// their clocks), and the buffer limit of each Emulator stays its own.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "linkem/time.hpp"

namespace linkem {

class SharedLink {
  public:
    /// reserve()'s mark for a packet that did not fit.
    static constexpr TimeNs kDropped = std::numeric_limits<TimeNs>::min();

    /// Reserves the link for up to n packets that arrived at `now`, in order: bytes[i] is
    /// packet i's size as the limiter charges it, ns_per_byte the link's rate, limit_bytes
    /// the backlog it may find plus its own size (spacer: the backlog limit; policer: the
    /// burst). Sets at[i] to the start of packet i's time on the link (rounded up to whole
    /// ns), or kDropped. `carry` is the caller's own fraction of a ns (see above; start at
    /// 0). Returns how many packets got their time. Lock-free; any number of threads.
    std::size_t reserve(TimeNs now, const std::uint32_t* bytes, std::size_t n, double ns_per_byte,
                        double limit_bytes, double& carry, TimeNs* at) {
        const double bytes_per_ns = 1.0 / ns_per_byte;
        TimeNs f = free_.load(std::memory_order_relaxed);
        for (;;) {
            const TimeNs start = std::max(f, now);
            const double lead = static_cast<double>(start - now);  // ns already reserved
            double used = 0;                                       // ns this batch takes
            std::size_t passed = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double b = bytes[i];
                if ((lead + used) * bytes_per_ns + b > limit_bytes) {
                    at[i] = kDropped;
                    continue;
                }
                at[i] = start + ceil_ns(used);
                used += b * ns_per_byte;
                ++passed;
            }
            // Nothing passed: nothing to reserve. A stale `f` only lowers the backlog seen
            // (the word never decreases), so a packet dropped against it is dropped.
            if (passed == 0) return 0;
            const double owed = used + carry;
            const auto whole = static_cast<TimeNs>(owed);
            if (free_.compare_exchange_weak(f, start + whole, std::memory_order_relaxed)) {
                carry = owed - static_cast<double>(whole);
                return passed;
            }
        }
    }

    /// Where the link stands: the time at which it is free again (ns).
    TimeNs free_at() const { return free_.load(std::memory_order_relaxed); }

  private:
    // Long ago: an idle link, a full bucket. Its own cache line: every reservation of every
    // worker writes it.
    alignas(64) std::atomic<TimeNs> free_{std::numeric_limits<TimeNs>::min() / 2};
    char pad_[64 - sizeof(std::atomic<TimeNs>)]{};
};

}  // namespace linkem
