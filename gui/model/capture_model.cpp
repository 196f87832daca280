#include "capture_model.hpp"

#include <cmath>
#include <cstdio>

#include "linkem/link_params.hpp"

namespace linkem::gui {

FormCheck check_form(const CaptureForm& f) {
    FormCheck c;
    auto fail = [&c](std::string field, std::string message) {
        c.field = std::move(field);
        c.message = std::move(message);
        return c;
    };
    if (f.file.empty())
        return fail("file", "no file given; give the path linkemd writes (on its own machine)");
    if (f.file.front() != '/')
        return fail("file", "'" + f.file +
                                "' is not an absolute path; give the path from / (linkemd "
                                "writes it on its own machine, from its own working directory)");
    capture::Settings s;
    s.file = f.file;
    s.points = (f.in ? static_cast<unsigned>(capture::Point::in) : 0u) |
               (f.out ? static_cast<unsigned>(capture::Point::out) : 0u) |
               (f.drop ? static_cast<unsigned>(capture::Point::drop) : 0u);
    if (s.points == 0)
        return fail("points", "no point chosen; choose one or more of in, out, drop");
    s.snaplen = f.snaplen;
    if (!std::isfinite(f.duration_s) || f.duration_s < 0)
        return fail("duration_s", "not a duration; allowed: > 0 s, or until stopped");
    s.duration = static_cast<DurationNs>(std::llround(f.duration_s * 1e9));
    try {
        capture::validate(s);
    } catch (const ParamError& e) {
        return fail(e.field(), e.message());
    }
    c.settings = s;
    return c;
}

std::string format_count(std::uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<std::size_t>(i), "\u2009");
    return s;
}

std::string format_bytes(std::uint64_t b) {
    char buf[32];
    const double x = static_cast<double>(b);
    if (b < 1000) return std::to_string(b) + " B";
    if (x < 1e6)
        std::snprintf(buf, sizeof buf, "%.1f kB", x / 1e3);
    else if (x < 1e9)
        std::snprintf(buf, sizeof buf, "%.2f MB", x / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.2f GB", x / 1e9);
    return buf;
}

std::string format_elapsed(DurationNs ns) {
    const std::int64_t s = std::max<DurationNs>(ns, 0) / kNsPerSec;
    char buf[32];
    if (s < 3600)
        std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60),
                      static_cast<long long>(s % 60));
    else
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                      static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
    return buf;
}

std::string describe_settings(const capture::Settings& s) {
    std::string out = s.file + ": " + capture::points_text(s.points) + ", snaplen " +
                      std::to_string(s.snaplen) + " bytes, ";
    if (s.duration > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "for %g s", static_cast<double>(s.duration) / 1e9);
        out += buf;
    } else if (s.packets > 0) {
        out += "for " + std::to_string(s.packets) + " records";
    } else {
        out += "until stopped";
    }
    if (s.direction) out += *s.direction == 0 ? ", a_to_b only" : ", b_to_a only";
    if (s.class_name) out += ", class " + *s.class_name + " only";
    return out;
}

// ------------------------------------------------------------------------------ tracker
void CaptureTracker::startSent() {
    phase_ = Phase::starting;
}

void CaptureTracker::startFailed() {
    phase_ = last_ && last_->running ? Phase::recording : Phase::idle;
}

void CaptureTracker::stopSent() {
    if (phase_ == Phase::recording) phase_ = Phase::stopping;
}

void CaptureTracker::stopFailed() {
    if (phase_ == Phase::stopping)
        phase_ = last_ && last_->running ? Phase::recording : Phase::idle;
}

void CaptureTracker::status(const capture::Status& s, std::int64_t now_ms) {
    if (!s.running && s.file.empty()) {  // linkemd has not captured since it started
        if (phase_ != Phase::starting) phase_ = Phase::idle;
        last_.reset();
        whole_ = false;
        return;
    }
    last_ = s;
    whole_ = true;
    status_ms_ = now_ms;
    // A reply to another request may come between the start (or stop) and its own reply.
    if (phase_ == Phase::starting && !s.running) return;
    if (phase_ == Phase::stopping && s.running) return;
    phase_ = s.running ? Phase::recording : Phase::idle;
}

void CaptureTracker::brief(const CaptureBrief& b, std::int64_t now_ms) {
    if (phase_ == Phase::starting || phase_ == Phase::stopping) return;  // the reply decides
    if (!last_) {
        if (!b.running && b.file.empty()) return;  // nothing recorded yet
        last_ = capture::Status{};
        last_->running = !b.running;  // taken as a change below
        whole_ = false;
    }
    capture::Status& s = *last_;
    // A stats message sent before a stop may arrive after its reply: a capture a whole
    // status saw end is not taken as running again (a new one comes with its `started`).
    if (whole_ && !s.running && b.running && b.file == s.file) return;
    if (b.running != s.running || b.file != s.file) {
        if (b.running) {  // another capture: its start is not known to the ms
            s = capture::Status{};
            s.settings.file = b.file;
            status_ms_ = now_ms;
        } else {
            s.elapsed = elapsed(now_ms);
        }
        s.running = b.running;
        s.file = b.file;
        whole_ = false;
    }
    s.records = b.records;
    s.bytes = b.bytes;
    s.missed = b.missed;
    phase_ = s.running ? Phase::recording : Phase::idle;
}

void CaptureTracker::event(const std::string& action, const capture::Status& e,
                           std::int64_t now_ms) {
    // Ours (a start or stop on its way): its reply has it all.
    if ((action == "started" && phase_ == Phase::starting) ||
        (action == "stopped" && phase_ == Phase::stopping))
        return;
    const bool known = last_ && last_->file == e.file;
    if (action == "started" && !(known && last_->running)) {  // another capture
        last_ = capture::Status{};
        last_->settings.file = e.file;
        status_ms_ = now_ms;
        whole_ = false;
    } else if (!last_) {
        last_ = capture::Status{};
        status_ms_ = now_ms;
        whole_ = false;
    }
    capture::Status& s = *last_;
    if (action == "stopped" && !(known && !s.running && whole_)) {  // not seen ending yet
        if (s.running) s.elapsed = elapsed(now_ms);
        s.reason = e.reason;
        s.error = e.error;
        whole_ = false;
    }
    s.running = action != "stopped";
    if (!e.file.empty()) s.file = e.file;
    s.records = std::max(s.records, e.records);
    s.bytes = std::max(s.bytes, e.bytes);
    s.missed = std::max(s.missed, e.missed);
    if (phase_ == Phase::idle || phase_ == Phase::recording)
        phase_ = s.running ? Phase::recording : Phase::idle;
}

void CaptureTracker::clear() {
    phase_ = Phase::idle;
    last_.reset();
    whole_ = false;
}

bool CaptureTracker::needsStatus() const {
    return last_ && !whole_ && (phase_ == Phase::idle || phase_ == Phase::recording);
}

std::string CaptureTracker::buttonText() const {
    switch (phase_) {
        case Phase::idle:
            return "Record…";
        case Phase::starting:
            return "Starting…";
        case Phase::recording:
            return "Stop recording";
        case Phase::stopping:
            return "Stopping…";
    }
    return {};
}

DurationNs CaptureTracker::elapsed(std::int64_t now_ms) const {
    if (!last_) return 0;
    if (!last_->running) return last_->elapsed;
    return last_->elapsed + std::max<std::int64_t>(0, now_ms - status_ms_) * kNsPerMs;
}

bool CaptureTracker::warning() const {
    return last_ && (last_->missed > 0 || last_->reason == capture::StopReason::write_error);
}

std::string CaptureTracker::line(std::int64_t now_ms) const {
    if (!last_) return {};
    const capture::Status& s = *last_;
    std::string out = s.running ? "Recording " : "Recorded ";
    out += format_elapsed(elapsed(now_ms)) + " · " + format_count(s.records) +
           (s.records == 1 ? " record · " : " records · ") + format_bytes(s.bytes) + " · " +
           format_count(s.missed) + " missed";
    if (!s.running) switch (s.reason) {
            case capture::StopReason::duration:
                out += " · duration reached";
                break;
            case capture::StopReason::packets:
                out += " · record limit reached";
                break;
            case capture::StopReason::write_error:
                out += " · stopped by a write error" + (s.error.empty() ? "" : ": " + s.error);
                break;
            case capture::StopReason::shutdown:
                out += " · linkemd shut down";
                break;
            case capture::StopReason::none:
            case capture::StopReason::stopped:
                break;
        }
    return out;
}

std::string CaptureTracker::finishedFile() const {
    if (!last_ || phase_ != Phase::idle || last_->running) return {};
    return last_->files.empty() ? last_->file : last_->files.back();
}

}  // namespace linkem::gui
