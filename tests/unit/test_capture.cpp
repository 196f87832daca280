// The capture library (linkem/capture.hpp): settings, the comment format, the ring, pcapng
// files as tshark reads them (the independent reference), rotation, a file cut short, a
// write error, and the recorder's merge of several producers.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "linkem/capture.hpp"
#include "linkem/link_params.hpp"
#include "temp_dir.hpp"
#include "tshark.hpp"

namespace linkem::capture {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

using test::have_tshark;

// tshark's fields of every packet of `file`, tab-separated, one line each; and its exit code.
std::pair<std::vector<std::string>, int> tshark_fields(const std::string& file,
                                                       const std::vector<std::string>& fields) {
    const test::TsharkRows t = test::tshark_fields(file, fields);
    std::vector<std::string> lines;
    for (const auto& row : t.rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i)
            line += (i ? "\t" : "") + row[i];
        lines.push_back(line);
    }
    return {lines, t.rc};
}

// A frame of `len` bytes whose bytes count up from `first`.
std::vector<std::uint8_t> frame(std::size_t len, std::uint8_t first) {
    std::vector<std::uint8_t> f(len);
    for (std::size_t i = 0; i < len; ++i)
        f[i] = static_cast<std::uint8_t>(first + i);
    return f;
}

RecordHeader out_record(TimeNs t, std::uint64_t seq, std::uint32_t len, std::uint32_t cap) {
    RecordHeader h;
    h.point = Point::out;
    h.flags = RecordHeader::kHasFate | RecordHeader::kHasSeq;
    h.frame_len = len;
    h.cap_len = cap;
    h.time_ns = t;
    h.arrived_ns = t - 20'000'000;
    h.tx_ns = t - 1'000;
    h.delay_ns = 19'000'000;
    h.limiter_wait_ns = 500'000;
    h.seq = seq;
    return h;
}

using test::comment_fields;

// ------------------------------------------------------------------------- settings

TEST(CaptureSettings, PointsParseAndRefuse) {
    EXPECT_EQ(parse_points("out,drop"), kDefaultPoints);
    EXPECT_EQ(parse_points("drop,in,out"), kAllPoints);
    EXPECT_EQ(points_text(kAllPoints), "in,out,drop");
    for (const char* bad : {"", "outt", "out,,drop", "out,out", "OUT"}) {
        try {
            parse_points(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const ParamError& e) {
            EXPECT_EQ(e.field(), "points");
        }
    }
    try {
        parse_points("egress");
    } catch (const ParamError& e) {
        EXPECT_NE(e.message().find("allowed: in, out, drop"), std::string::npos) << e.message();
    }
}

TEST(CaptureSettings, ValidateNamesTheField) {
    const auto field = [](Settings s) {
        try {
            validate(s);
        } catch (const ParamError& e) {
            return e.field();
        }
        return std::string("accepted");
    };
    Settings ok;
    ok.file = "/tmp/x.pcapng";
    EXPECT_EQ(field(ok), "accepted");
    Settings s = ok;
    s.file.clear();
    EXPECT_EQ(field(s), "file");
    s = ok;
    s.snaplen = 15;
    EXPECT_EQ(field(s), "snaplen_bytes");
    s.snaplen = 65536;
    EXPECT_EQ(field(s), "snaplen_bytes");
    s = ok;
    s.points = 0;
    EXPECT_EQ(field(s), "points");
    s = ok;
    s.files = 3;
    EXPECT_EQ(field(s), "files");  // a ring needs a size
    s.max_size = 1000;
    EXPECT_EQ(field(s), "max_size_bytes");
    s.max_size = 1 << 20;
    EXPECT_EQ(field(s), "accepted");
    s.files = 0;
    EXPECT_EQ(field(s), "files");
    s = ok;
    s.duration = -1;
    EXPECT_EQ(field(s), "duration_s");
    s = ok;
    s.class_name = "";
    EXPECT_EQ(field(s), "class");
}

TEST(CaptureSettings, RingFileNames) {
    EXPECT_EQ(ring_file_name("/tmp/a.pcapng", 0, false), "/tmp/a.pcapng");
    EXPECT_EQ(ring_file_name("/tmp/a.pcapng", 0, true), "/tmp/a_00001.pcapng");
    EXPECT_EQ(ring_file_name("/tmp/a.pcapng", 41, true), "/tmp/a_00042.pcapng");
    EXPECT_EQ(ring_file_name("/tmp/x.d/a", 1, true), "/tmp/x.d/a_00002");
    EXPECT_EQ(ring_file_name("/tmp/.hidden", 0, true), "/tmp/.hidden_00001");
}

// ------------------------------------------------------------------------- comment

TEST(CaptureComment, OutRecordCarriesItsDelayParts) {
    RecordHeader h = out_record(1'000'000'000, 17, 100, 100);
    h.direction = 1;
    h.worker = 2;
    std::string c;
    append_comment(c, h, "voip", 5);
    EXPECT_EQ(c.rfind("linkem dir=b_to_a class=voip point=out worker=2 seq=17 ", 0), 0u) << c;
    auto f = comment_fields(c);
    EXPECT_EQ(f["arrived_ns"], std::to_string(h.arrived_ns + 5));
    EXPECT_EQ(f["delay_ns"], "19000000");
    EXPECT_EQ(f["limiter_wait_ns"], "500000");
    EXPECT_EQ(f["scheduled_ns"], std::to_string(h.tx_ns - h.arrived_ns));
    EXPECT_EQ(f["order_wait_ns"], std::to_string(h.tx_ns - h.arrived_ns - 19'500'000));
    EXPECT_EQ(f["lateness_ns"], "1000");
    EXPECT_EQ(f.count("drop"), 0u);
}

TEST(CaptureComment, DropRecordNamesItsCause) {
    RecordHeader h = out_record(10, 1, 64, 64);
    h.point = Point::drop;
    h.cause = static_cast<std::uint8_t>(DropCause::buffer_full);
    std::string c;
    append_comment(c, h, "default", 0);
    auto f = comment_fields(c);
    EXPECT_EQ(f["drop"], "buffer_full");
    EXPECT_EQ(f["point"], "drop");
    EXPECT_EQ(f.count("scheduled_ns"), 0u);
    h.flags = RecordHeader::kHasSeq;  // no fate (a class's drop action: no delay was drawn)
    h.cause = static_cast<std::uint8_t>(DropCause::class_action);
    c.clear();
    append_comment(c, h, "bulk", 0);
    f = comment_fields(c);
    EXPECT_EQ(f["drop"], "class");
    EXPECT_EQ(f.count("delay_ns"), 0u);
    EXPECT_TRUE(comment_fields("not linkem").empty());
}

// ------------------------------------------------------------------------- ring

TEST(CaptureRing, RefusesWhenFullAndCountsIt) {
    CaptureRing r(64 << 10);
    std::size_t taken = 0;
    while (RecordHeader* h = r.reserve(1000)) {
        h->point = Point::out;
        h->seq = taken++;
        r.commit();
    }
    EXPECT_EQ(r.missed(), 1u);
    EXPECT_EQ(taken, (64u << 10) / ((sizeof(RecordHeader) + 1000 + 7) / 8 * 8));
    // The consumer frees room; records come out in order.
    for (std::size_t i = 0; i < taken; ++i) {
        const RecordHeader* h = r.peek();
        ASSERT_NE(h, nullptr);
        EXPECT_EQ(h->seq, i);
        r.pop();
    }
    EXPECT_EQ(r.peek(), nullptr);
}

TEST(CaptureRing, WrapsRecordsOfEverySizeAcrossThreads) {
    CaptureRing r(64 << 10);
    constexpr std::uint64_t kN = 200'000;
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < kN;) {
            const std::uint32_t cap = static_cast<std::uint32_t>((i * 37) % 1500);
            RecordHeader* h = r.reserve(cap);
            if (!h) continue;  // full: try again (a lane would count it missed)
            h->point = Point::in;
            h->seq = i;
            auto* d = reinterpret_cast<std::uint8_t*>(h + 1);
            for (std::uint32_t k = 0; k < cap; ++k)
                d[k] = static_cast<std::uint8_t>(i + k);
            r.commit();
            ++i;
        }
    });
    std::uint64_t next = 0, bad = 0;
    while (next < kN) {
        const RecordHeader* h = r.peek();
        if (!h) continue;
        const auto* d = reinterpret_cast<const std::uint8_t*>(h + 1);
        bad += h->seq != next || h->cap_len != (next * 37) % 1500;
        for (std::uint32_t k = 0; k < h->cap_len; ++k)
            bad += d[k] != static_cast<std::uint8_t>(next + k);
        r.pop();
        ++next;
    }
    producer.join();
    EXPECT_EQ(bad, 0u);
}

// ------------------------------------------------------------------------- files

TEST(CaptureWriter, TsharkReadsEveryRecordWithItsComment) {
    if (!have_tshark()) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh)";
    TempDir dir("linkem-capture-test");
    Settings s;
    s.file = dir.file("w.pcapng");
    s.snaplen = 64;
    const TimeNs offset = 1'796'000'000'000'000'000;  // 2026-11-30
    {
        CaptureWriter w(
            s, 2, [](unsigned, unsigned slot) { return slot ? "voip" : "default"; }, offset);
        for (int i = 0; i < 100; ++i) {
            const std::uint32_t len = 60 + static_cast<std::uint32_t>(i);
            RecordHeader h = out_record(1'000'000 + i * 1000, static_cast<std::uint64_t>(i), len,
                                        std::min<std::uint32_t>(len, 64));
            h.direction = static_cast<std::uint8_t>(i % 2);
            h.slot = static_cast<std::uint8_t>(i % 3 == 0);
            if (i % 10 == 9) {
                h.point = Point::drop;
                h.cause = static_cast<std::uint8_t>(DropCause::loss);
            }
            const auto f = frame(len, static_cast<std::uint8_t>(i));
            w.write(h, f.data());
        }
        w.close(3);
        EXPECT_EQ(w.records(), 100u);
        EXPECT_EQ(w.records_by_point()[2], 10u);
    }
    const auto [lines, rc] = tshark_fields(s.file, {"frame.interface_id", "frame.time_epoch",
                                                    "frame.len", "frame.cap_len", "frame.comment"});
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(lines.size(), 100u);
    for (int i = 0; i < 100; ++i) {
        std::istringstream in(lines[i]);
        std::string iface, when, len, cap, comment;
        std::getline(in, iface, '\t');
        std::getline(in, when, '\t');
        std::getline(in, len, '\t');
        std::getline(in, cap, '\t');
        std::getline(in, comment);
        const bool drop = i % 10 == 9;
        EXPECT_EQ(iface, drop ? "4" : std::to_string((i % 2) * 2 + 1)) << i;
        // tshark prints the epoch time with nanoseconds.
        const TimeNs t = offset + 1'000'000 + i * 1000;
        char want[40];
        std::snprintf(want, sizeof want, "%lld.%09lld", static_cast<long long>(t / kNsPerSec),
                      static_cast<long long>(t % kNsPerSec));
        EXPECT_EQ(when, want) << i;
        EXPECT_EQ(len, std::to_string(60 + i));
        EXPECT_EQ(cap, std::to_string(std::min(60 + i, 64)));
        auto f = comment_fields(comment);
        EXPECT_EQ(f["seq"], std::to_string(i));
        EXPECT_EQ(f["class"], i % 3 == 0 ? "voip" : "default");
        EXPECT_EQ(f["point"], drop ? "drop" : "out");
        if (drop) {
            EXPECT_EQ(f["drop"], "loss");
        }
    }
    // The interfaces, and the section's comment (the clock's offset).
    const std::string cmd =
        "capinfos -I '" + s.file + "' 2>/dev/null; capinfos -k '" + s.file + "' 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p))
        out += buf;
    ::pclose(p);
    EXPECT_NE(out.find("a_to_b out"), std::string::npos) << out;
    EXPECT_NE(out.find("linkem utc_offset_ns=" + std::to_string(offset)), std::string::npos) << out;
    EXPECT_NE(out.find("drops"), std::string::npos) << out;
}

TEST(CaptureWriter, AFileCutShortReadsToItsLastWholeBlock) {
    if (!have_tshark()) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh)";
    TempDir dir("linkem-capture-test");
    Settings s;
    s.file = dir.file("cut.pcapng");
    {
        CaptureWriter w(s, 1, nullptr, 0);
        for (int i = 0; i < 50; ++i) {
            const auto f = frame(100, 0);
            w.write(out_record(1'000'000'000 + i, static_cast<std::uint64_t>(i), 100, 100),
                    f.data());
        }
        w.flush();
        // Left unclosed as a crash leaves it: copy the file as it is now.
        fs::copy_file(s.file, dir.file("crash.pcapng"));
    }
    const auto size = fs::file_size(dir.file("crash.pcapng"));
    // Whole: all 50 records, although no statistics block ends it.
    EXPECT_EQ(tshark_fields(dir.file("crash.pcapng"), {"frame.number"}).first.size(), 50u);
    // Cut in the middle of the 31st packet's block: the first 30 read.
    std::uintmax_t header = 0;
    {
        // The size of one packet block: the file's size less the headers, over 50.
        Settings empty;
        empty.file = dir.file("empty.pcapng");
        CaptureWriter w0(empty, 1, nullptr, 0);
        w0.flush();
        header = fs::file_size(dir.file("empty.pcapng"));
    }
    const std::uintmax_t per = (size - header) / 50;
    fs::resize_file(dir.file("crash.pcapng"), header + 30 * per + per / 2);
    const auto [lines, rc] = tshark_fields(dir.file("crash.pcapng"), {"frame.number"});
    EXPECT_EQ(lines.size(), 30u);
    EXPECT_NE(rc, 0);  // tshark says the file was cut short
}

TEST(CaptureWriter, ARingOfFilesKeepsTheNewest) {
    TempDir dir("linkem-capture-test");
    Settings s;
    s.file = dir.file("ring.pcapng");
    s.max_size = 64 << 10;
    s.files = 3;
    CaptureWriter w(s, 1, nullptr, 0);
    const auto f = frame(1000, 0);
    for (int i = 0; i < 400; ++i)  // ~440 KB: 7 files of 64 KiB
        w.write(out_record(i, static_cast<std::uint64_t>(i), 1000, 1000), f.data());
    w.close(0);
    EXPECT_GE(w.rotations(), 5u);
    ASSERT_EQ(w.files().size(), 3u);
    EXPECT_EQ(w.files().back(), ring_file_name(s.file, w.rotations(), true));
    std::size_t on_disk = 0;
    for (const auto& e : fs::directory_iterator(dir.path)) {
        ++on_disk;
        EXPECT_NE(std::find(w.files().begin(), w.files().end(), e.path().string()), w.files().end())
            << e.path();
    }
    EXPECT_EQ(on_disk, 3u);
    if (have_tshark()) {
        for (const auto& file : w.files())
            EXPECT_EQ(tshark_fields(file, {"frame.number"}).second, 0) << file;
    }
}

TEST(CaptureWriter, AnUnwritablePathIsRefusedWithItsReason) {
    Settings s;
    s.file = "/nonexistent-dir/x.pcapng";
    try {
        CaptureWriter w(s, 1, nullptr, 0);
        ADD_FAILURE() << "opened " << s.file;
    } catch (const std::system_error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.pcapng"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
    }
}

// ------------------------------------------------------------------------- recorder

TEST(CaptureRecorder, MergesProducersInTimeOrder) {
    TempDir dir("linkem-capture-test");
    Settings s;
    s.file = dir.file("merge.pcapng");
    std::atomic<TimeNs> clock{0};
    Recorder cs(
        s, 2, {{0, 0}, {1, 0}, {0, 1}}, 1 << 20, nullptr, [&] { return clock.load(); }, 0);
    constexpr int kPer = 20'000;
    std::atomic<std::uint64_t> refused{0};
    std::vector<std::thread> producers;
    for (std::size_t lane = 0; lane < 3; ++lane)
        producers.emplace_back([&, lane] {
            CaptureRing& r = cs.ring(lane);
            for (int i = 0; i < kPer; ++i) {
                // Each producer's clock: its own pace, never back.
                const TimeNs t = static_cast<TimeNs>(i) * (3 + static_cast<TimeNs>(lane)) * 100;
                r.set_watermark(t);
                RecordHeader* h = r.reserve(64);
                if (!h) {
                    ++refused;
                    std::this_thread::yield();
                    --i;
                    continue;
                }
                const std::uint32_t cap = h->cap_len;
                *h = out_record(t, static_cast<std::uint64_t>(i), 64, cap);
                h->size = (sizeof(RecordHeader) + cap + 7) / 8 * 8;
                h->direction = lane == 1;
                h->worker = static_cast<std::uint16_t>(lane == 2);
                r.commit();
            }
            r.set_watermark(std::numeric_limits<TimeNs>::max());
        });
    for (auto& p : producers)
        p.join();
    const Status st = cs.finish(StopReason::stopped);
    EXPECT_EQ(st.records, 3u * kPer);
    EXPECT_EQ(st.missed, refused.load());  // every refusal counted (and offered again here)
    EXPECT_FALSE(st.running);
    EXPECT_EQ(st.reason, StopReason::stopped);
    if (!have_tshark()) GTEST_SKIP() << "tshark is not installed: the file is not read";
    const auto [lines, rc] = tshark_fields(s.file, {"frame.time_epoch"});
    ASSERT_EQ(lines.size(), 3u * kPer);
    EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end(), [](const auto& a, const auto& b) {
        return std::stod(a) < std::stod(b);
    }));
    const auto events = cs.take_events();
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.front().kind, Event::Kind::started);
    EXPECT_EQ(events.back().kind, Event::Kind::stopped);
}

TEST(CaptureRecorder, StopsAfterItsPacketsAndCountsWhatItMissed) {
    TempDir dir("linkem-capture-test");
    Settings s;
    s.file = dir.file("limit.pcapng");
    s.packets = 1000;
    Recorder cs(
        s, 1, {{0, 0}}, 64 << 10, nullptr, [] { return TimeNs{0}; }, 0);
    CaptureRing& r = cs.ring(0);
    r.set_watermark(std::numeric_limits<TimeNs>::max());
    std::uint64_t offered = 0;
    while (!cs.ended()) {
        if (RecordHeader* h = r.reserve(200)) {
            *h = out_record(static_cast<TimeNs>(offered), offered, 200, 200);
            h->size = (sizeof(RecordHeader) + 200 + 7) / 8 * 8;
            r.commit();
        }
        ++offered;
    }
    const Status st = cs.finish(StopReason::stopped);
    EXPECT_EQ(st.reason, StopReason::packets);
    EXPECT_EQ(st.records, 1000u);
    // Everything offered was either taken by the ring or counted missed.
    EXPECT_LE(st.missed, offered);
    // Records missed are said in `missed` events, as many in all as the status counts.
    std::uint64_t said = 0;
    for (const Event& e : cs.take_events())
        if (e.kind == Event::Kind::missed) said = e.status.missed;
    EXPECT_EQ(said, st.missed);
}

TEST(CaptureRecorder, AWriteErrorEndsTheCaptureAndKeepsTheFileReadable) {
    TempDir dir("linkem-capture-test");
    Settings s;
    s.file = dir.file("full.pcapng");
    // A file-size limit stands in for a full disk: write() fails (EFBIG) past it.
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    auto* previous = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old;
    lim.rlim_cur = 256 << 10;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lim), 0);
    Status st;
    {
        Recorder cs(
            s, 1, {{0, 0}}, 1 << 20, nullptr, [] { return TimeNs{0}; }, 0);
        CaptureRing& r = cs.ring(0);
        r.set_watermark(std::numeric_limits<TimeNs>::max());
        for (std::uint64_t i = 0; !cs.ended() && i < 10'000'000; ++i)
            if (RecordHeader* h = r.reserve(1000)) {
                *h = out_record(static_cast<TimeNs>(i), i, 1000, 1000);
                h->size = (sizeof(RecordHeader) + 1000 + 7) / 8 * 8;
                r.commit();
            }
        st = cs.finish(StopReason::stopped);
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, previous);
    EXPECT_EQ(st.reason, StopReason::write_error);
    EXPECT_NE(st.error.find("too large"), std::string::npos) << st.error;
    EXPECT_LE(fs::file_size(s.file), 256u << 10);
    EXPECT_EQ(st.bytes, fs::file_size(s.file)) << "the status counts what reached the file";
    if (!have_tshark()) GTEST_SKIP() << "tshark is not installed: the file is not read";
    const auto [lines, rc] = tshark_fields(s.file, {"frame.number"});
    EXPECT_GT(lines.size(), 100u);
    EXPECT_EQ(lines.size(), st.records);
    EXPECT_EQ(rc, 0) << "the file ends at a whole block";
}

}  // namespace
}  // namespace linkem::capture
