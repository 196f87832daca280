// Capture: what the emulator did to every packet, written as pcapng (docs/capture.md).
//
// A capture record is one packet at one point of the emulator: `in` (as it arrived), `out`
// (as it left, with the parts of its delay) or `drop` (when it was dropped, with the cause).
// linkemd's lanes put records on a bounded ring each (CaptureRing); a writer thread
// (Recorder) merges them in time order and writes pcapng (PcapngFile): one interface
// per direction and point, nanosecond timestamps on the wall clock, and a comment on every
// packet in a fixed key=value form that linkem.lua (packaging/wireshark) turns into fields:
//
//   linkem dir=a_to_b class=default point=out seq=17 arrived_ns=… delay_ns=…
//          limiter_wait_ns=… order_wait_ns=… scheduled_ns=… lateness_ns=…
//   linkem dir=a_to_b class=voip point=drop seq=18 arrived_ns=… drop=loss
//
// linkem-sim writes the same files through CaptureWriter, synchronously. Nothing here knows
// DPDK or JSON (the protocol's codec is linkem/capture_json.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "linkem/counters.hpp"
#include "linkem/time.hpp"

namespace linkem::capture {

// ------------------------------------------------------------------------- settings

/// Where a record is taken. Settings::points is a set of these (bits).
enum class Point : std::uint8_t { in = 1, out = 2, drop = 4 };
inline constexpr unsigned kAllPoints = 7;
inline constexpr unsigned kDefaultPoints = 2 | 4;  // out, drop
/// "in", "out", "drop".
const char* point_name(Point p);
/// "out,drop" (in in, out, drop order).
std::string points_text(unsigned points);
/// Parses "out,drop" (names in any order, no repeats); throws ParamError("points", ...) that
/// lists the allowed names.
unsigned parse_points(std::string_view text);

inline constexpr std::uint32_t kMinSnaplen = 16, kMaxSnaplen = 65535, kDefaultSnaplen = 128;
inline constexpr std::uint32_t kMaxFiles = 1000;
inline constexpr std::uint64_t kMinMaxSize = 64 * 1024;  // bytes, a ring file's smallest size

/// What to capture (capture_start's params, `linkemctl capture start`, `linkemd --capture`).
struct Settings {
    std::string file;                         // the path linkemd writes (the first file of a ring)
    unsigned points = kDefaultPoints;         // Point bits
    std::uint32_t snaplen = kDefaultSnaplen;  // bytes of each frame kept
    std::optional<unsigned> direction;        // 0 a_to_b, 1 b_to_a; none: both
    std::optional<std::string> class_name;    // none: every class
    DurationNs duration = 0;                  // stop after this long (0: until stopped)
    std::uint64_t packets = 0;                // stop after this many records (0: no limit)
    std::uint64_t max_size = 0;               // bytes per file before the next (0: one file)
    std::uint32_t files = 1;                  // files kept in the ring (with max_size)
    bool operator==(const Settings&) const = default;
};

/// Throws ParamError naming the field ("file", "points", "snaplen_bytes", "duration_s",
/// "packets", "max_size_bytes", "files") when a setting is out of range: what was wrong
/// and what is allowed. Does not look at the file system, the direction or the class (the
/// data plane checks those against its ports and classes).
void validate(const Settings& s);

/// The path of file number i (0, 1, ...) of a capture to `file`: `file` itself when the
/// capture has one file (max_size 0), else `stem_00001.ext`, `stem_00002.ext`, ...
/// (numbered from 1, as dumpcap does).
std::string ring_file_name(const std::string& file, std::uint64_t i, bool ring);

/// Why a capture ended.
enum class StopReason : std::uint8_t { none, stopped, duration, packets, write_error, shutdown };
/// "", "stopped", "duration", "packets", "write_error", "shutdown".
const char* stop_reason_name(StopReason r);

/// A capture's state: capture_status, the `capture` block of stats, the GUI's Record strip.
struct Status {
    bool running = false;
    Settings settings;                       // of the current or last capture
    std::string file;                        // the file being written (or last written)
    std::vector<std::string> files;          // the ring's files on disk now, oldest first
    std::uint64_t records = 0;               // records written
    std::uint64_t records_by_point[3] = {};  // in, out, drop
    std::uint64_t bytes = 0;                 // bytes written to files (all of them)
    std::uint64_t missed = 0;                // `capture_missed`: records dropped, the ring full
    std::uint64_t rotations = 0;             // files started after the first
    TimeNs started_utc_ns = 0;               // wall clock at start
    DurationNs elapsed = 0;                  // since start (to the end, once stopped)
    StopReason reason = StopReason::none;    // once stopped
    std::string error;                       // write_error: what failed ("No space left on device")
};

/// Something a client is told of (the `capture` event).
struct Event {
    enum class Kind : std::uint8_t { started, rotated, stopped, missed } kind;
    Status status;        // at the event
    std::string message;  // one line
};
/// "started", "rotated", "stopped", "missed".
const char* event_kind_name(Event::Kind k);

/// Thrown by start when a capture is running already (the protocol's `unavailable`).
class Busy : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------------------- records

/// What the emulator knew of a packet, at a point. Times on the producer's clock (the data
/// plane's TSC ns, the simulator's virtual time); the recorder maps them to the wall clock.
struct RecordHeader {
    std::uint32_t size = 0;  // bytes of header + frame bytes, rounded up to 8 (the ring)
    Point point = Point::out;
    std::uint8_t direction = 0;   // 0 a_to_b, 1 b_to_a
    std::uint8_t slot = 0;        // class slot (0: default); the recorder names it
    std::uint8_t cause = 0;       // drop: DropCause
    std::uint16_t worker = 0;     // the direction's worker (its queue)
    std::uint16_t flags = 0;      // kHasFate: the fields below arrived_ns are known; kHasSeq
    std::uint32_t frame_len = 0;  // the frame's length (without FCS)
    std::uint32_t cap_len = 0;    // bytes of it that follow the header
    TimeNs time_ns = 0;           // when: egress (out), the decision (drop), arrival (in)
    TimeNs arrived_ns = 0;
    TimeNs tx_ns = 0;         // out: the scheduled transmission time
    DurationNs delay_ns = 0;  // the delay drawn
    DurationNs limiter_wait_ns = 0;
    std::uint64_t seq = 0;  // the packet's number in its worker's direction
    static constexpr std::uint16_t kHasFate = 1;
    static constexpr std::uint16_t kHasSeq = 2;  // seq is known (not: a packet queued before)
    static constexpr std::uint16_t kEcnCe = 4;   // out: the queue discipline marked it CE
};
static_assert(sizeof(RecordHeader) == 72);

/// The comment of a record: "linkem dir=... " as in the header above, its times
/// (arrived_ns) on the wall clock: the record's + `utc_offset`. `class_name` names its class.
/// Appends to out. The keys, in this order:
///   dir class point worker seq (when known) arrived_ns (when known: not for a packet that
///   was queued before the capture started)
///   out, in and drop with a fate: delay_ns limiter_wait_ns
///   out: order_wait_ns scheduled_ns lateness_ns (scheduled = delay + limiter_wait + order_wait,
///        the time from arrival to the scheduled transmission; lateness: egress - scheduled)
///   drop: drop=<cause> (kDropCauses' names: loss, policer, spacer, buffer_full, class)
void append_comment(std::string& out, const RecordHeader& h, std::string_view class_name,
                    TimeNs utc_offset);

// ------------------------------------------------------------------------- ring

/// A bounded single-producer single-consumer ring of variable-size records: a lane (the
/// producer) reserves room for a header and frame bytes, fills it and commits; when there is
/// no room, the record is refused and counted as missed — the producer never waits. The
/// writer (the consumer) reads records in order.
class CaptureRing {
  public:
    /// `bytes`: rounded up to a power of two, at least 64 KiB.
    explicit CaptureRing(std::size_t bytes);
    std::size_t capacity() const { return cap_; }

    /// Producer: room for a header and cap_len frame bytes, or nullptr (counted missed).
    /// The record is written in place and published by commit().
    RecordHeader* reserve(std::uint32_t cap_len);
    void commit();
    /// Producer: n records not offered (the ring was found full for their burst): missed.
    void miss(std::uint64_t n) {
        missed_.store(missed_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    /// Producer: its clock as of its last poll (records later than this may still come).
    void set_watermark(TimeNs t) { watermark_.store(t, std::memory_order_release); }

    /// Consumer: the next record (nullptr: none yet), valid until pop().
    const RecordHeader* peek();
    void pop();
    TimeNs watermark() const { return watermark_.load(std::memory_order_acquire); }
    std::uint64_t missed() const { return missed_.load(std::memory_order_relaxed); }

  private:
    std::size_t cap_, mask_;
    std::unique_ptr<std::uint8_t[]> buf_;
    alignas(64) std::atomic<std::uint64_t> tail_{0};  // producer
    std::uint64_t head_cache_ = 0, reserved_ = 0;
    std::atomic<std::uint64_t> missed_{0};
    std::atomic<TimeNs> watermark_{0};
    alignas(64) std::atomic<std::uint64_t> head_{0};  // consumer
};

// ------------------------------------------------------------------------- files

/// pcapng blocks, written whole (a file cut short ends at its last whole block).
class PcapngFile {
  public:
    struct Interface {
        std::string name;         // "a_to_b out", "drops"
        std::string description;  // "linkem a_to_b (port A -> port B), as sent"
    };
    /// Creates (truncates) path and writes the section header and one interface block per
    /// entry (interface i: Ethernet, snaplen, if_tsresol 9). Throws std::system_error
    /// (what names the path and the reason) when it cannot.
    /// `comment`: the section header's (shb comment).
    PcapngFile(const std::string& path, const std::vector<Interface>& interfaces,
               std::uint32_t snaplen, std::string_view application, std::string_view comment = {});
    ~PcapngFile();
    PcapngFile(const PcapngFile&) = delete;
    PcapngFile& operator=(const PcapngFile&) = delete;

    /// An enhanced packet block: interface, wall-clock ns, the frame's length and the bytes
    /// kept, and a comment (opt_comment).
    void packet(std::uint32_t interface, TimeNs utc_ns, std::uint32_t frame_len,
                std::span<const std::uint8_t> data, std::string_view comment);
    /// An interface statistics block (isb_starttime, isb_endtime, isb_ifrecv, isb_ifdrop) with
    /// a comment: the last blocks of a file say how many records were missed.
    void statistics(std::uint32_t interface, TimeNs start_utc_ns, TimeNs end_utc_ns,
                    std::uint64_t received, std::uint64_t dropped, std::string_view comment);
    /// Writes what is buffered (whole blocks) to the file. Throws std::system_error.
    void flush();
    /// Bytes written or buffered so far (after a failed write: those in the file).
    std::uint64_t size() const { return size_; }
    /// Packet blocks in the file (written, not buffered).
    std::uint64_t packets_written() const { return packets_written_; }
    const std::string& path() const { return path_; }

  private:
    void block(std::uint32_t type, std::span<const std::uint8_t> body);
    std::string path_;
    int fd_ = -1;
    std::vector<std::uint8_t> buf_;
    std::uint64_t size_ = 0;
    std::uint64_t packets_buffered_ = 0, packets_written_ = 0;
};

/// Writes records into pcapng files: one interface per direction and point (a_to_b in/out,
/// b_to_a in/out) and one for drops, the comment of each record, the section header's
/// comment "linkem utc_offset_ns=N" (a record's wall-clock time - N is the producer's clock:
/// linkemd's telemetry times, t_ns and arrival_ns), the ring of files
/// (Settings::max_size, files), the statistics blocks at each file's end. Synchronous:
/// linkem-sim uses it directly, Recorder from its writer thread.
class CaptureWriter {
  public:
    /// `names(direction, slot)` names a record's class (asked once per direction and slot
    /// until forget_names()). `utc_offset`: a record's time + this = the wall clock (ns
    /// since 1970). `directions`: 1 or 2. Opens the first file (throws std::system_error
    /// whose what() names the path and the reason).
    CaptureWriter(Settings settings, unsigned directions,
                  std::function<std::string(unsigned, unsigned)> names, TimeNs utc_offset);
    ~CaptureWriter();  // finishes the file (close())

    /// Writes one record (header, then cap_len frame bytes). Throws std::system_error when
    /// the file system refuses (the file is left with its whole blocks).
    void write(const RecordHeader& h, const std::uint8_t* frame);
    /// Statistics blocks (with `missed`), flush, close. Idempotent.
    void close(std::uint64_t missed);
    /// Writes buffered blocks to disk (the writer thread does this ~10 times a second).
    void flush();

    std::uint64_t records() const { return records_; }
    /// Records in the files (after a failed write, those that reached them).
    std::uint64_t records_written() const;
    const std::uint64_t* records_by_point() const { return by_point_; }
    std::uint64_t bytes() const;
    std::uint64_t rotations() const { return rotations_; }
    std::string current_file() const;
    const std::vector<std::string>& files() const { return files_; }
    /// Set when a write rotated to the next file since the last call (then cleared).
    bool take_rotated();
    /// Class names may have changed: ask names() again.
    void forget_names();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::uint64_t records_ = 0, by_point_[3] = {}, rotations_ = 0;
    std::vector<std::string> files_;
};

/// The interface a record goes to (see CaptureWriter): direction * 2 + (out ? 1 : 0) for
/// in/out, 2 * directions for drops.
std::uint32_t interface_of(const RecordHeader& h, unsigned directions);

// ------------------------------------------------------------------------- recorder

/// A running capture in linkemd: one CaptureRing per lane (producer: the lane's lcore), a
/// writer thread that merges them in time order into a CaptureWriter, the limits
/// (duration, packets), and the status and events. The data plane creates it, publishes its
/// rings to its lanes, and unpublishes them before it ends the recording.
class Recorder {
  public:
    struct Lane {
        unsigned direction = 0, worker = 0;
    };
    /// Opens the first file (throws std::system_error naming it) and starts the writer
    /// thread. `ring_bytes` per lane. `now()` reads the producers' clock (for the duration
    /// limit); utc_offset maps it to the wall clock (utc_offset()).
    Recorder(Settings settings, unsigned directions, std::vector<Lane> lanes,
             std::size_t ring_bytes, std::function<std::string(unsigned, unsigned)> names,
             std::function<TimeNs()> now, TimeNs utc_offset);
    ~Recorder();  // stop(StopReason::shutdown) if running

    CaptureRing& ring(std::size_t lane) { return *rings_[lane]; }
    std::size_t lanes() const { return rings_.size(); }

    /// True once the recording ended on its own (duration, packets, write error): the data
    /// plane then unpublishes the rings and calls finish().
    bool ended() const { return ended_.load(std::memory_order_acquire); }
    /// After the producers stopped using the rings: writes what is left, the statistics
    /// blocks, closes the file and joins the thread. Returns the final status.
    Status finish(StopReason reason);
    Status status() const;
    /// Class names may have changed (a new class list): the writer asks names() again.
    void forget_names();
    /// Events since the last call (started, rotated, stopped, missed).
    std::vector<Event> take_events();

  private:
    void run();
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<std::unique_ptr<CaptureRing>> rings_;
    std::atomic<bool> ended_{false};
};

/// The data-plane clock (ns) mapped to the wall clock: offset = CLOCK_REALTIME - now(), from
/// the closest of several paired readings (docs/dataplane.md, "Capture's clock").
TimeNs utc_offset(const std::function<TimeNs()>& now);

}  // namespace linkem::capture
