// The frames of linkemd's built-in traffic generator, and what its receiving side measures
// from them: one-way delay from the send time each frame carries, loss from gaps in the
// sequence numbers, and out-of-order arrivals, independently of the emulator's counters
// (as the DPDS paper measures with a separate traffic generator, Section VI).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "linkem/telemetry.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// A generated frame: Ethernet (02:4c:4b:00:00:02 <- 02:4c:4b:00:00:01, ethertype 0x88B5,
/// IEEE's local experimental type) followed by this header, then zeros to the frame size.
struct GenHeader {
    static constexpr std::uint32_t kMagic = 0x4c4b474e;  // "LKGN"
    static constexpr std::uint16_t kEtherType = 0x88b5;
    static constexpr std::size_t kOffset = 14;  // after the Ethernet header
    std::uint8_t direction = 0;                 // 0 a_to_b, 1 b_to_a
    std::uint32_t run = 0;                      // changes with every set_traffic
    std::uint64_t seq = 0;                      // 0, 1, 2, ... per direction and run
    TimeNs send_ns = 0;                         // when it was handed to the port
};
/// Bytes of Ethernet header plus GenHeader: the smallest frame (60 bytes without FCS) fits.
inline constexpr std::size_t kGenFrameMin = GenHeader::kOffset + 32;

/// Writes the Ethernet header and h at the start of `frame` (at least kGenFrameMin bytes).
void write_gen_frame(std::span<std::uint8_t> frame, const GenHeader& h);
/// Only the header's seq and send_ns (for a frame already written once).
void restamp_gen_frame(std::span<std::uint8_t> frame, std::uint64_t seq, TimeNs send_ns);
/// The header, if `frame` is a generated frame.
std::optional<GenHeader> read_gen_frame(std::span<const std::uint8_t> frame);

/// One measured frame: when it was sent and how long it took (receive - send), and the run
/// it belongs to.
struct MeasuredSample {
    TimeNs send_ns = 0;
    DurationNs delay_ns = 0;
    std::uint32_t run = 0;
    TimeNs received_ns() const { return send_ns + delay_ns; }
};

/// Moves into `out` the samples of `held` (in the order received) that belong to `run` and
/// arrived by `counted_to_ns` (the end of the newest report taken, so every one of them is
/// counted in the interval statistics already taken); drops those of other runs and keeps
/// the rest in `held` for later. A delay message then never shows a sample whose frame its
/// `measured_delay` has not counted.
void take_counted_samples(std::vector<MeasuredSample>& held, std::uint32_t run,
                          TimeNs counted_to_ns, std::vector<MeasuredSample>& out);

/// The receive side of one direction. Loss counts the gaps below the highest sequence
/// number received, so a frame that is still in flight behind a later one (reordering)
/// counts as lost until it arrives, then as out of order. Duplicates are recognised among
/// the last kWindow sequence numbers below the highest (a frame older than that is taken
/// as a late first copy).
class TrafficMeter {
  public:
    static constexpr std::uint64_t kWindow = 1 << 16;

    /// A new run: counts and statistics start again; frames of other runs are ignored.
    void start_run(std::uint32_t run) {
        *this = TrafficMeter{};
        run_ = run;
    }
    std::uint32_t run() const { return run_; }

    /// A frame arrived at recv_ns. Returns its measured delay, or nothing when it belongs
    /// to another run (not counted) or is a duplicate (counted as such only).
    std::optional<DurationNs> on_frame(std::uint32_t run, std::uint64_t seq, TimeNs send_ns,
                                       TimeNs recv_ns) {
        if (run != run_) return std::nullopt;
        if (counts_.received == 0 && counts_.duplicates == 0) {
            max_seq_ = seq;
            mark(seq);
        } else if (seq > max_seq_) {
            // Forget the bits of the sequence numbers the window slides over.
            const std::uint64_t from =
                std::max(max_seq_ + 1, seq >= kWindow ? seq - kWindow + 1 : 0);
            if (seq - from + 1 >= kWindow)
                seen_.fill(0);
            else
                for (std::uint64_t s = from; s <= seq; ++s)
                    clear(s);
            max_seq_ = seq;
            mark(seq);
        } else if (max_seq_ - seq < kWindow) {
            if (test(seq)) {
                ++counts_.duplicates;
                return std::nullopt;
            }
            mark(seq);
            ++counts_.out_of_order;
        } else {
            ++counts_.out_of_order;  // too old to tell: a late first copy
        }
        ++counts_.received;
        counts_.lost = max_seq_ + 1 > counts_.received ? max_seq_ + 1 - counts_.received : 0;
        const DurationNs d = recv_ns - send_ns;
        interval_.add(static_cast<double>(d));
        return d;
    }
    /// A measured sample did not fit into the telemetry ring.
    void sample_dropped() { ++counts_.samples_dropped; }
    TrafficCounts counts(std::uint64_t sent) const {
        TrafficCounts c = counts_;
        c.sent = sent;
        return c;
    }
    /// The delay statistics since the previous call (and starts the next interval).
    RunningStats take_interval() {
        RunningStats r = interval_;
        interval_.reset(r.count ? r.mean() : 0);
        return r;
    }

  private:
    bool test(std::uint64_t s) const { return (seen_[(s % kWindow) / 64] >> (s % 64)) & 1; }
    void mark(std::uint64_t s) { seen_[(s % kWindow) / 64] |= std::uint64_t{1} << (s % 64); }
    void clear(std::uint64_t s) { seen_[(s % kWindow) / 64] &= ~(std::uint64_t{1} << (s % 64)); }

    std::uint32_t run_ = 0;
    TrafficCounts counts_;
    std::uint64_t max_seq_ = 0;
    std::array<std::uint64_t, kWindow / 64> seen_{};
    RunningStats interval_;
};

/// What the generator reports every ~50 ms (like the data plane's IntervalReport).
struct TrafficReport {
    TimeNs start_ns = 0, end_ns = 0;
    std::uint32_t run = 0;
    TrafficCounts counts[2];
    RunningStats delay[2];  // measured delay of the frames received in the interval, ns
};

}  // namespace linkem
