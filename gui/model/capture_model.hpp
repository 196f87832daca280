// The Record controls' model, independent of Qt (docs/gui.md, "Recording a capture"): the
// dialog's fields checked into capture::Settings as linkemd checks them, and what the
// controls show of linkemd's capture, from capture_start / capture_stop / capture_status
// replies (the whole status), the stats topic's `capture` block and the `capture` events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "linkem/capture.hpp"

namespace linkem::gui {

/// The Record dialog's fields, as entered.
struct CaptureForm {
    std::string file;  // the path on linkemd's machine
    bool in = false, out = true, drop = true;
    std::uint32_t snaplen = capture::kDefaultSnaplen;
    double duration_s = 0;  // 0: until stopped
};

/// The settings a form asks for, or what is wrong with it: `field` named as capture_start's
/// params name it ("file", "points", "snaplen_bytes", "duration_s").
struct FormCheck {
    std::optional<capture::Settings> settings;
    std::string field, message;
};
/// Checks a form: a file given and absolute (linkemd runs elsewhere: a relative path would be
/// its own working directory's), at least one point, then capture::validate's rules.
FormCheck check_form(const CaptureForm& form);

/// "12 034": a count with thin spaces between thousands.
std::string format_count(std::uint64_t n);
/// "812 B", "56.3 kB", "1.20 MB", "3.41 GB" (powers of 1000).
std::string format_bytes(std::uint64_t bytes);
/// "0:07", "12:40", "1:02:03" from ns.
std::string format_elapsed(DurationNs ns);
/// "/tmp/x.pcapng: out,drop, snaplen 128 bytes, until stopped" (or "for 10 s").
std::string describe_settings(const capture::Settings& s);

/// What the stats topic's `capture` block says.
struct CaptureBrief {
    bool running = false;
    std::string file;
    std::uint64_t records = 0, bytes = 0, missed = 0;
};

/// linkemd's capture as the Record controls show it. Times are the caller's wall clock, ms.
class CaptureTracker {
  public:
    enum class Phase { idle, starting, recording, stopping };

    /// capture_start was sent / refused (back to what the last status said).
    void startSent();
    void startFailed();
    /// capture_stop was sent (while recording) / not answered.
    void stopSent();
    void stopFailed();
    /// A whole status: the reply of capture_start, capture_stop or capture_status.
    void status(const capture::Status& s, std::int64_t now_ms);
    /// The stats topic's block.
    void brief(const CaptureBrief& b, std::int64_t now_ms);
    /// A `capture` event: its action (started, rotated, stopped, missed) and the status
    /// figures it carries (running, file, records, bytes, missed, reason, error).
    void event(const std::string& action, const capture::Status& s, std::int64_t now_ms);
    /// Another linkemd (or none): nothing known.
    void clear();

    Phase phase() const { return phase_; }
    bool running() const { return phase_ == Phase::recording || phase_ == Phase::stopping; }
    /// The last status known (whole or updated from the block and events), if any.
    const std::optional<capture::Status>& last() const { return last_; }
    /// Whether the figures need a capture_status call: a capture linkemd runs (or ran) that
    /// no whole status describes yet (one started by linkemctl, one that ended on its own),
    /// so that its elapsed time, settings and stop reason are known.
    bool needsStatus() const;

    /// "Record…", "Starting…", "Stop recording", "Stopping…".
    std::string buttonText() const;
    bool buttonEnabled() const { return phase_ == Phase::idle || phase_ == Phase::recording; }
    /// The status line: "Recording 0:07 · 12 034 records · 1.20 MB · 0 missed", after a stop
    /// "Recorded 0:10 (duration) · …", "" before any capture.
    std::string line(std::int64_t now_ms) const;
    /// The elapsed time shown, ns.
    DurationNs elapsed(std::int64_t now_ms) const;
    /// Records were missed or the capture failed (the line in a warning colour).
    bool warning() const;
    /// The file of a finished capture to open ("" while recording or before any).
    std::string finishedFile() const;

  private:
    Phase phase_ = Phase::idle;
    std::optional<capture::Status> last_;
    bool whole_ = false;          // last_ came from a whole status (since the last change)
    std::int64_t status_ms_ = 0;  // when last_->elapsed was true
};

}  // namespace linkem::gui
