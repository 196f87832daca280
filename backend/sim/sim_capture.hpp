// linkem-sim --capture: the pcapng file linkemd writes (linkem/capture.hpp), from a simulated
// run. Synthetic frames (a flow's headers, or the plain run's fixed UDP pair), the virtual
// clock mapped to the wall clock at a fixed instant (kCaptureEpochNs), so the same seed
// writes a byte-identical file. Records are written in time order: `out` records wait here
// until no earlier record can come (the virtual queue behind the emulator, --utilization,
// makes departures later than the drain that produced them).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "linkem/capture.hpp"
#include "linkem/emulator.hpp"
#include "simulator.hpp"

namespace linkem::sim {

/// Time 0 of a simulated run in a capture: 2026-01-01T00:00:00Z (ns since 1970).
inline constexpr TimeNs kCaptureEpochNs = 1'767'225'600'000'000'000;

/// The plain run's frames (no --classes): UDP over IPv4, A 10.0.0.1:50000, B 10.0.0.2:50001
/// (a_to_b from A to B, b_to_a the reverse), MACs 02:00:00:00:00:0a (A) and :0b (B); ports
/// that no Wireshark dissector claims (5000, say, is read as TAPA), so the frames show as UDP
/// data.
inline constexpr std::uint16_t kCapturePortA = 50000, kCapturePortB = 50001;

class SimCapture {
  public:
    /// Opens settings.file (throws std::system_error naming the path and the reason).
    /// `directions`: 1 (a_to_b only) or 2. `names(direction, slot)`: a class's name.
    SimCapture(const capture::Settings& settings, unsigned directions,
               std::function<std::string(unsigned, unsigned)> names);
    ~SimCapture();

    bool wants(capture::Point p) const { return (points_ & static_cast<unsigned>(p)) != 0; }

    /// Keeps a frame (the frame without its FCS) for the records to carry; returns its number.
    std::uint32_t add_frame(std::vector<std::uint8_t> frame);

    /// A packet that arrived at `now` and went through ingest with `fate`: its `in` record,
    /// its `drop` record when it was dropped, else its fate kept for its `out` record.
    /// `frame`: add_frame's number.
    void arrived(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs now,
                 const PacketFate& fate, std::uint32_t frame);
    /// A packet that a class's action handled without an Emulator: `pass` (left at once, no
    /// delay) or `drop` (cause class).
    void passed(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs now,
                std::uint32_t frame);
    void class_dropped(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs now,
                       std::uint32_t frame);
    /// A packet the queue discipline dequeued (Traits::dequeued): its transmission time, its
    /// wait at the limiter and whether it was marked CE, for its `out` record.
    void dequeued(unsigned direction, std::uint64_t seq, TimeNs tx, DurationNs wait, bool marked);
    /// A packet that ingest took and the queue discipline dropped at `at`
    /// (Emulator::late_drops): its `drop` record with `cause` (aqm; spacer for FQ-CoDel's drop
    /// from the fattest flow), in time order with the `out` records.
    void late_dropped(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs arrival,
                      TimeNs at, DropCause cause, std::uint32_t frame);
    /// A packet that left at `departure`: its `out` record (the fate kept by arrived()).
    void departed(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs arrival,
                  TimeNs departure, std::uint32_t frame);

    /// Writes what waits, the statistics blocks, and closes the file. Idempotent.
    void close();
    std::uint64_t records() const { return writer_->records(); }
    const std::uint64_t* records_by_point() const { return writer_->records_by_point(); }

  private:
    struct Pending {
        capture::RecordHeader h;
        std::uint32_t frame;
    };
    capture::RecordHeader header(capture::Point p, unsigned direction, unsigned slot,
                                 std::uint64_t seq, TimeNs time, TimeNs arrived,
                                 std::uint32_t frame) const;
    // The `out` records due by t, then h.
    void write_at(const capture::RecordHeader& h, std::uint32_t frame);
    void flush_until(TimeNs t);

    unsigned points_;
    std::uint32_t snaplen_;
    std::unique_ptr<capture::CaptureWriter> writer_;
    std::vector<std::vector<std::uint8_t>> frames_;
    // Fates of the packets in flight, by direction and sequence number (seq * 2 + direction).
    struct Held {
        PacketFate fate;
        bool marked;  // the queue discipline marked it CE
    };
    std::unordered_map<std::uint64_t, Held> fates_;
    std::deque<Pending> pending_;  // out records, in departure order
    std::deque<Pending> late_;     // drop records of late drops, in time order
    bool closed_ = false;
};

/// run_once with cfg.capture set (in this unit: see run_loop.hpp).
RunResult run_once_captured(const SimConfig& cfg);

/// The plain run's frame of frame_bytes bytes (with the FCS; the frame is 4 bytes shorter) in
/// direction d (0: a_to_b, 1: b_to_a), as above; flow f (--flows) has A's port
/// kCapturePortA + f, and `ect` sets the IPv4 header's ECN field to ECT(0).
std::vector<std::uint8_t> plain_capture_frame(std::uint32_t frame_bytes, unsigned d,
                                              std::uint32_t flow = 0, bool ect = false);

}  // namespace linkem::sim
