// The limiter stage (step 2): a spacer or a policer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "linkem/time.hpp"

namespace linkem {

/// Spacer: a leaky bucket in front of a virtual link of the configured rate (DPDS paper
/// V-C2). A packet reaches the spacer at the transmission time t_d chosen by the delayer;
/// the spacer adds the offset needed so that consecutive transmissions are at least
/// size/rate apart: t_out = max(t_d, free), free = t_out + size*8/rate. The fill state is
/// the backlog the packet finds, (free - t_d) * rate, in bytes; a packet that would push it
/// past the limit is dropped (cause `spacer`). The paper counts the fill state in packets;
/// counting bytes is the same for one frame size and right for mixed sizes.
///
/// With the FIFO strategies the Emulator feeds t_d clamped to the previous packet's
/// (non-decreasing), so the fill state is the backlog due to the rate alone. With
/// `reordered` the spacer comes before the delay instead (it is fed the arrival time and
/// the delay is added to its output): a link of the given rate followed by a path whose
/// delay varies per packet, so the output keeps the rate on average but not packet by
/// packet.
class Spacer {
  public:
    void configure(double rate_bps, std::uint64_t limit_bytes) {
        ns_per_byte_ = rate_bps > 0 ? 8e9 / rate_bps : 0;
        bytes_per_ns_ = rate_bps / 8e9;
        limit_bytes_ = static_cast<double>(limit_bytes);
    }

    /// Returns false (drop) if the packet does not fit; otherwise sets tx to its spaced
    /// transmission time.
    bool schedule(double t_d, std::uint32_t bytes, TimeNs& tx) {
        const double backlog = std::max(0.0, free_ - t_d) * bytes_per_ns_;
        if (backlog + bytes > limit_bytes_) return false;
        schedule_fit(t_d, bytes, tx);
        return true;
    }

    /// Whether a batch of packets of `bytes_total` bytes in all, reaching the spacer at
    /// non-decreasing times of at least t_min, fits whole: then none of them can find the
    /// backlog over the limit, and schedule_fit() may stand in for schedule(). (The backlog
    /// packet k finds is at most the backlog at t_min plus the bytes of the batch before k:
    /// the spacer's work grows by the packets scheduled, and the times only move forward.)
    /// The margin covers the rounding of the backlog's floating-point conversions.
    bool fits_whole(double t_min, std::uint64_t bytes_total) const {
        const double b = backlog_bytes(t_min) + static_cast<double>(bytes_total);
        return b * (1 + 1e-9) + 1 <= limit_bytes_;
    }

    /// schedule() for a packet of a batch that fits_whole() accepted: no limit check.
    void schedule_fit(double t_d, std::uint32_t bytes, TimeNs& tx) {
        const double start = std::max(t_d, free_);
        free_ = start + bytes * ns_per_byte_;
        tx = static_cast<TimeNs>(std::ceil(start));
    }

    /// Backlog in bytes as seen at time t.
    double backlog_bytes(double t) const { return std::max(0.0, free_ - t) * bytes_per_ns_; }

  private:
    double ns_per_byte_ = 0, bytes_per_ns_ = 0, limit_bytes_ = 0;
    double free_ = -1e300;  // time at which the virtual link is free again
};

/// Policer: token bucket (DPDS paper V-C1), one token per bit. Tokens accrue at `rate`
/// from the packet arrival times, up to `burst` bytes; a packet that finds fewer tokens
/// than its size is dropped and takes none. Integer arithmetic in bit-nanoseconds
/// (tokens * 1e9), so "drops exactly what exceeds the contract" holds without rounding.
class Policer {
  public:
    void configure(double rate_bps, std::uint64_t burst_bytes) {
        rate_ = static_cast<__int128>(std::llround(rate_bps));
        cap_ = static_cast<__int128>(burst_bytes) * 8 * kNsPerSec;
        if (!started_) tokens_ = cap_;
        tokens_ = std::min(tokens_, cap_);
    }

    bool admit(TimeNs now, std::uint32_t bytes) {
        if (!started_) {
            started_ = true;
            last_ = now;
        }
        if (now > last_) {
            tokens_ = std::min(cap_, tokens_ + static_cast<__int128>(now - last_) * rate_);
            last_ = now;
        }
        const __int128 cost = static_cast<__int128>(bytes) * 8 * kNsPerSec;
        if (tokens_ < cost) return false;
        tokens_ -= cost;
        return true;
    }

    /// Tokens in bytes (for display and tests).
    double tokens_bytes() const { return static_cast<double>(tokens_) / (8.0 * kNsPerSec); }

  private:
    __int128 rate_ = 0, cap_ = 0, tokens_ = 0;
    TimeNs last_ = 0;
    bool started_ = false;
};

}  // namespace linkem
