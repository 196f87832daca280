// The Record controls' model (capture_model.hpp): the dialog's fields checked as linkemd
// checks them, and the state and line the controls show from replies, the stats topic's
// `capture` block and the `capture` events.
#include <gtest/gtest.h>

#include "capture_model.hpp"

using namespace linkem;
using namespace linkem::gui;

namespace {

CaptureForm goodForm() {
    CaptureForm f;
    f.file = "/tmp/x.pcapng";
    return f;
}

capture::Status running(const std::string& file, std::uint64_t records) {
    capture::Status s;
    s.running = true;
    s.file = s.settings.file = file;
    s.records = records;
    s.bytes = records * 200;
    s.elapsed = 2 * kNsPerSec;
    return s;
}

}  // namespace

TEST(CaptureForm, GoodFormGivesTheSettings) {
    CaptureForm f = goodForm();
    f.in = true;
    f.snaplen = 256;
    f.duration_s = 10;
    const FormCheck c = check_form(f);
    ASSERT_TRUE(c.settings) << c.message;
    EXPECT_EQ(c.settings->file, "/tmp/x.pcapng");
    EXPECT_EQ(c.settings->points, capture::kAllPoints);
    EXPECT_EQ(c.settings->snaplen, 256u);
    EXPECT_EQ(c.settings->duration, 10 * kNsPerSec);
    EXPECT_EQ(c.settings->packets, 0u);
    EXPECT_EQ(c.settings->files, 1u);
    // the defaults: out,drop, snaplen 128, until stopped
    const FormCheck d = check_form(goodForm());
    ASSERT_TRUE(d.settings);
    EXPECT_EQ(d.settings->points, capture::kDefaultPoints);
    EXPECT_EQ(d.settings->snaplen, capture::kDefaultSnaplen);
    EXPECT_EQ(d.settings->duration, 0);
}

TEST(CaptureForm, BadFieldsAreNamed) {
    CaptureForm f = goodForm();
    f.file.clear();
    EXPECT_EQ(check_form(f).field, "file");
    f.file = "x.pcapng";
    FormCheck c = check_form(f);
    EXPECT_FALSE(c.settings);
    EXPECT_EQ(c.field, "file");
    EXPECT_NE(c.message.find("absolute"), std::string::npos) << c.message;
    f = goodForm();
    f.out = f.drop = false;
    c = check_form(f);
    EXPECT_EQ(c.field, "points");
    EXPECT_NE(c.message.find("in, out, drop"), std::string::npos) << c.message;
    f = goodForm();
    f.snaplen = 8;
    c = check_form(f);
    EXPECT_EQ(c.field, "snaplen_bytes");
    EXPECT_NE(c.message.find("16 .. 65535"), std::string::npos) << c.message;
    f = goodForm();
    f.duration_s = -1;
    EXPECT_EQ(check_form(f).field, "duration_s");
}

TEST(CaptureFormat, Figures) {
    EXPECT_EQ(format_count(12034), "12\u2009034");
    EXPECT_EQ(format_count(999), "999");
    EXPECT_EQ(format_count(1234567), "1\u2009234\u2009567");
    EXPECT_EQ(format_bytes(812), "812 B");
    EXPECT_EQ(format_bytes(56300), "56.3 kB");
    EXPECT_EQ(format_bytes(1200000), "1.20 MB");
    EXPECT_EQ(format_elapsed(7 * kNsPerSec + 900 * kNsPerMs), "0:07");
    EXPECT_EQ(format_elapsed(760 * kNsPerSec), "12:40");
    EXPECT_EQ(format_elapsed(3723 * kNsPerSec), "1:02:03");
    capture::Settings s;
    s.file = "/tmp/x.pcapng";
    EXPECT_EQ(describe_settings(s), "/tmp/x.pcapng: out,drop, snaplen 128 bytes, until stopped");
    s.duration = 10 * kNsPerSec;
    EXPECT_EQ(describe_settings(s), "/tmp/x.pcapng: out,drop, snaplen 128 bytes, for 10 s");
}

TEST(CaptureTracker, StartRecordStop) {
    CaptureTracker t;
    EXPECT_EQ(t.buttonText(), "Record…");
    EXPECT_EQ(t.line(0), "");
    EXPECT_EQ(t.finishedFile(), "");
    t.startSent();
    EXPECT_EQ(t.buttonText(), "Starting…");
    EXPECT_FALSE(t.buttonEnabled());
    // a stats block from before the start changes nothing
    t.brief({false, "", 0, 0, 0}, 900);
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::starting);
    capture::Status s = running("/tmp/x.pcapng", 0);
    s.elapsed = 0;
    t.status(s, 1000);
    EXPECT_EQ(t.buttonText(), "Stop recording");
    EXPECT_TRUE(t.buttonEnabled());
    EXPECT_FALSE(t.needsStatus());
    t.brief({true, "/tmp/x.pcapng", 12034, 1200000, 0}, 8000);
    EXPECT_EQ(t.line(8000), "Recording 0:07 · 12\u2009034 records · 1.20 MB · 0 missed");
    EXPECT_FALSE(t.warning());
    EXPECT_EQ(t.finishedFile(), "");  // not while recording
    t.stopSent();
    EXPECT_EQ(t.buttonText(), "Stopping…");
    t.brief({true, "/tmp/x.pcapng", 12100, 1210000, 0}, 8100);  // sent before the stop
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::stopping);
    capture::Status done = s;
    done.running = false;
    done.records = 12200;
    done.bytes = 1220000;
    done.elapsed = 7500 * kNsPerMs;
    done.reason = capture::StopReason::stopped;
    t.status(done, 8200);
    EXPECT_EQ(t.buttonText(), "Record…");
    EXPECT_EQ(t.line(20000), "Recorded 0:07 · 12\u2009200 records · 1.22 MB · 0 missed");
    EXPECT_EQ(t.finishedFile(), "/tmp/x.pcapng");
    // a stats block sent before the stop, arriving after its reply: still stopped
    t.brief({true, "/tmp/x.pcapng", 12150, 1215000, 0}, 8300);
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::idle);
    EXPECT_FALSE(t.needsStatus());
}

TEST(CaptureTracker, NothingCapturedYet) {
    CaptureTracker t;
    t.status(capture::Status{}, 0);  // capture_status of a linkemd that never captured
    EXPECT_FALSE(t.last());
    EXPECT_EQ(t.line(0), "");
    EXPECT_FALSE(t.needsStatus());
    t.brief({false, "", 0, 0, 0}, 100);
    EXPECT_FALSE(t.last());
}

// Telemetry and replies travel apart: our own capture's events may come after its replies.
TEST(CaptureTracker, LateEventsOfOurOwnCapture) {
    CaptureTracker t;
    t.startSent();
    t.status(running("/tmp/z.pcapng", 0), 1000);
    t.event("started", running("/tmp/z.pcapng", 0), 1010);
    EXPECT_FALSE(t.needsStatus());
    EXPECT_EQ(t.last()->settings.file, "/tmp/z.pcapng");
    EXPECT_EQ(t.elapsed(2000), 3 * kNsPerSec);  // the reply's 2 s + 1 s
    t.stopSent();
    capture::Status done = running("/tmp/z.pcapng", 40);
    done.running = false;
    done.reason = capture::StopReason::stopped;
    t.status(done, 3000);
    capture::Status e;
    e.file = "/tmp/z.pcapng";
    e.records = 40;
    e.reason = capture::StopReason::stopped;
    t.event("stopped", e, 3010);
    EXPECT_FALSE(t.needsStatus());
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::idle);
    EXPECT_EQ(t.elapsed(9000), 2 * kNsPerSec);
}

TEST(CaptureTracker, RefusedStartGoesBack) {
    CaptureTracker t;
    t.startSent();
    t.startFailed();
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::idle);
    EXPECT_EQ(t.line(0), "");
}

TEST(CaptureTracker, EndedOnItsOwnAndStartedElsewhere) {
    CaptureTracker t;
    // linkemctl started one: the stats block shows it, a whole status is wanted
    t.brief({true, "/srv/a.pcapng", 10, 2000, 0}, 1000);
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::recording);
    EXPECT_TRUE(t.needsStatus());
    t.status(running("/srv/a.pcapng", 20), 1100);
    EXPECT_FALSE(t.needsStatus());
    EXPECT_EQ(t.elapsed(3100), 4 * kNsPerSec);
    // it ends by its duration: the event says so
    capture::Status e;
    e.file = "/srv/a.pcapng";
    e.records = 500;
    e.bytes = 100000;
    e.missed = 3;
    e.reason = capture::StopReason::duration;
    t.event("stopped", e, 5100);
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::idle);
    EXPECT_TRUE(t.warning());  // records missed
    EXPECT_EQ(t.line(9000), "Recorded 0:06 · 500 records · 100.0 kB · 3 missed · duration reached");
    EXPECT_TRUE(t.needsStatus());
    EXPECT_EQ(t.finishedFile(), "/srv/a.pcapng");
    // a write error
    t.event("started", running("/srv/b.pcapng", 0), 10000);
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::recording);
    EXPECT_EQ(t.last()->file, "/srv/b.pcapng");
    e.file = "/srv/b.pcapng";
    e.missed = 0;
    e.reason = capture::StopReason::write_error;
    e.error = "No space left on device";
    t.event("stopped", e, 11000);
    EXPECT_TRUE(t.warning());
    EXPECT_NE(t.line(11000).find("stopped by a write error: No space left on device"),
              std::string::npos)
        << t.line(11000);
    t.clear();
    EXPECT_EQ(t.line(0), "");
    EXPECT_FALSE(t.needsStatus());
}

TEST(CaptureTracker, StatsBlockEndsACapture) {
    CaptureTracker t;
    t.startSent();
    t.status(running("/tmp/y.pcapng", 0), 0);
    t.brief({false, "/tmp/y.pcapng", 300, 60000, 0}, 3000);
    EXPECT_EQ(t.phase(), CaptureTracker::Phase::idle);
    EXPECT_EQ(t.elapsed(9000), 5 * kNsPerSec);  // 2 s at the reply + 3 s, then frozen
    EXPECT_TRUE(t.needsStatus());
}
