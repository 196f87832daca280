// The limiter stage (step 2): a spacer, a policer or a trace link.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

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
        tx = ceil_ns(start);
    }

    /// Backlog in bytes as seen at time t.
    double backlog_bytes(double t) const { return std::max(0.0, free_ - t) * bytes_per_ns_; }

    /// When the virtual link is free again (ns), to carry the link's state over to and from
    /// a queue discipline's link (Bottleneck).
    double free_time() const { return free_; }
    void set_free_time(double t) { free_ = t; }

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

/// A mahimahi link trace (mm-link's format): delivery opportunities at millisecond offsets
/// from the trace's start, each for kBytesPerOpportunity bytes; the trace repeats with the
/// period of its last timestamp. Read from a file by read_delivery_trace (trace_file.hpp).
struct DeliveryTrace {
    /// mm-link's PACKET_SIZE: the most a TUN device hands it at once, a 1500-byte IP packet
    /// with the 4-byte packet-information header the device adds.
    static constexpr std::uint32_t kBytesPerOpportunity = 1504;

    std::string path;               // the file it was read from (the trace_file key)
    std::vector<std::uint32_t> ms;  // non-decreasing; at least one; ms.back() > 0
    bool operator==(const DeliveryTrace&) const = default;

    DurationNs period() const { return static_cast<DurationNs>(ms.back()) * kNsPerMs; }
    /// What mm-link charges for a frame of `frame_bytes` bytes as the Emulator counts them
    /// (with the 4-byte FCS): its IP packet plus the TUN header, i.e. the frame less its
    /// 14-byte Ethernet header. A 1518-byte frame (a 1500-byte IP packet) takes exactly one
    /// opportunity, as a full-size packet does in mm-link.
    static std::uint32_t charge(std::uint32_t frame_bytes) {
        return frame_bytes > 15 ? frame_bytes - 14 : 1;
    }
};

/// Trace link: releases bytes exactly at a DeliveryTrace's opportunities, accounted as
/// mm-link does. Packets queue in order; each opportunity carries up to
/// kBytesPerOpportunity bytes of the packets that had reached the link by its time: a
/// packet larger than what is left goes on in the next opportunities and leaves at the one
/// that carries its last byte; several small packets share one; bytes an opportunity finds
/// no packet for are lost. A packet that reaches the link at time t is carried by
/// opportunities at t or later. The trace's time 0 is the first packet that reaches the
/// link after it was configured with the trace; it repeats at its end.
///
/// Since the packets are served in order, a packet's departure follows from the state the
/// previous one left (the opportunity it ended in and the bytes left there) and its own
/// arrival, so schedule() computes it on arrival: O(1) per packet while the link is busy,
/// a binary search over the trace after an idle period.
class TraceLink {
  public:
    /// Another trace (or none) starts afresh at the next packet; the same one keeps its
    /// position, whatever else changed.
    void configure(const DeliveryTrace* t) {
        if (t == trace_) return;
        trace_ = t;
        started_ = false;
    }

    /// The departure time of a packet charged `bytes` (DeliveryTrace::charge) that reaches
    /// the link at t, t not before the previous packet's.
    TimeNs schedule(TimeNs t, std::uint32_t bytes) {
        start(t);
        while (bytes > left_) {
            bytes -= left_;
            next();
        }
        left_ -= bytes;
        const TimeNs departure = at(i_);
        if (left_ == 0) next();
        return departure;
    }

    /// The opportunity that carries the first byte of a packet that reaches the link at t
    /// (t not before the previous packet's): the opportunities before t pass unused.
    TimeNs start(TimeNs t) {
        if (!started_) [[unlikely]] {
            started_ = true;
            base_ = t;
            i_ = 0;
            left_ = DeliveryTrace::kBytesPerOpportunity;
        }
        if (at(i_) < t) skip_to(t);
        return at(i_);
    }

  private:
    TimeNs at(std::size_t i) const { return base_ + static_cast<TimeNs>(trace_->ms[i]) * kNsPerMs; }
    void next() {
        left_ = DeliveryTrace::kBytesPerOpportunity;
        if (++i_ == trace_->ms.size()) {
            i_ = 0;
            base_ += trace_->period();
        }
    }
    // The opportunities before t passed without this packet: the first one at t or later,
    // whole (what was left of the current one is lost).
    [[gnu::noinline]] void skip_to(TimeNs t) {
        left_ = DeliveryTrace::kBytesPerOpportunity;
        const DurationNs period = trace_->period();
        const std::vector<std::uint32_t>& ms = trace_->ms;
        std::size_t from = i_ + 1;
        // Repeats whose last opportunity (at base + period) is before t go whole.
        if (t - base_ > period) {
            base_ += (t - base_ - 1) / period * period;
            from = 0;
        }
        if (from >= ms.size() || at(ms.size() - 1) < t) {
            base_ += period;
            from = 0;
        }
        const auto due = static_cast<std::uint64_t>(t - base_);
        const auto it = std::partition_point(
            ms.begin() + static_cast<std::ptrdiff_t>(from), ms.end(),
            [due](std::uint32_t m) { return static_cast<std::uint64_t>(m) * kNsPerMs < due; });
        i_ = static_cast<std::size_t>(it - ms.begin());
    }

    const DeliveryTrace* trace_ = nullptr;
    bool started_ = false;
    TimeNs base_ = 0;    // start of the trace's current repeat
    std::size_t i_ = 0;  // the current opportunity of that repeat
    std::uint32_t left_ = 0;
};

}  // namespace linkem
