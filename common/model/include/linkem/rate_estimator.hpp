// Packet-rate estimator of DPDS paper Section III-C.
//
// Successive, non-overlapping intervals. Each interval is opened by a packet arrival and
// closed by the first arrival at least `window` (T_min) after the opening; that arrival
// opens the next interval. R = N / T, where N counts the arrivals of the interval including
// the one that opened it and T is the time between opening and closing arrival. Because an
// interval always holds its opening arrival, N >= 1 and R > 0: no special case for idle
// links. For CBR traffic R is exact: k arrivals spaced 1/r apart give N = k, T = k/r.
//
// Arrivals come in bursts that share one timestamp (the data plane stamps per burst); a
// burst is counted as n arrivals at one instant.
#pragma once

#include <cstdint>

#include "linkem/time.hpp"

namespace linkem {

class RateEstimator {
  public:
    explicit RateEstimator(DurationNs window = 10 * kNsPerMs) : window_(window) {}

    /// Changes T_min; the open interval keeps its start and count.
    void set_window(DurationNs window) { window_ = window; }
    DurationNs window() const { return window_; }

    /// Records n arrivals at `now`. Returns true when this closed an interval, i.e. when
    /// rate_pps() has a new value.
    bool on_arrivals(TimeNs now, std::uint64_t n) {
        if (!open_) {
            open_ = true;
            start_ = now;
            count_ = n;
            return false;
        }
        const DurationNs elapsed = now - start_;
        if (elapsed >= window_ && elapsed > 0) {
            rate_pps_ = static_cast<double>(count_) * 1e9 / static_cast<double>(elapsed);
            ++intervals_;
            start_ = now;
            count_ = n;
            return true;
        }
        count_ += n;
        return false;
    }

    /// Packets per second measured over the last closed interval; 0 before the first close.
    double rate_pps() const { return rate_pps_; }
    bool has_estimate() const { return intervals_ > 0; }
    /// Number of intervals closed so far.
    std::uint64_t intervals() const { return intervals_; }

  private:
    DurationNs window_;
    bool open_ = false;
    TimeNs start_ = 0;
    std::uint64_t count_ = 0;
    double rate_pps_ = 0;
    std::uint64_t intervals_ = 0;
};

}  // namespace linkem
