// Capture's settings, status and event as the protocol's JSON (linkem/capture_json.hpp):
// capture_start's params round trip, and every bad key or value is refused naming the key
// and what is allowed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "linkem/capture.hpp"
#include "linkem/capture_json.hpp"
#include "linkem/link_params.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using namespace capture;

/// The field and message of the ParamError the params throw, or ("(accepted)", "").
std::pair<std::string, std::string> refusal(const json& j) {
    try {
        capture_settings_from_json(j);
    } catch (const ParamError& e) {
        return {e.field(), e.message()};
    }
    return {"(accepted)", ""};
}

json with(const char* key, json value) {
    json j = {{"file", "/tmp/x.pcapng"}};
    j[key] = std::move(value);
    return j;
}

TEST(CaptureJson, DefaultsFromTheFileAlone) {
    const Settings s = capture_settings_from_json(json{{"file", "/tmp/x.pcapng"}});
    EXPECT_EQ(s.file, "/tmp/x.pcapng");
    EXPECT_EQ(s.points, kDefaultPoints);
    EXPECT_EQ(s.snaplen, kDefaultSnaplen);
    EXPECT_FALSE(s.direction);
    EXPECT_FALSE(s.class_name);
    EXPECT_EQ(s.duration, 0);
    EXPECT_EQ(s.packets, 0u);
    EXPECT_EQ(s.max_size, 0u);
    EXPECT_EQ(s.files, 1u);
}

TEST(CaptureJson, SettingsRoundTrip) {
    Settings s;
    s.file = "/var/tmp/lesson.pcapng";
    s.points = kAllPoints;
    s.snaplen = 1514;
    s.direction = 1;
    s.class_name = "voip";
    s.duration = 2'500'000'000;
    s.packets = 1000;
    s.max_size = 100 << 20;
    s.files = 5;
    const json j = capture_settings_to_json(s);
    EXPECT_EQ(j["points"], json({"in", "out", "drop"}));
    EXPECT_EQ(j["direction"], "b_to_a");
    EXPECT_EQ(j["duration_s"], 2.5);
    EXPECT_EQ(capture_settings_from_json(j), s);

    // Every key is written; absent ones as null or 0, and those read back as absent.
    Settings d;
    d.file = "/tmp/x.pcapng";
    const json dj = capture_settings_to_json(d);
    for (const char* k : {"file", "points", "snaplen_bytes", "direction", "class", "duration_s",
                          "packets", "max_size_bytes", "files"})
        EXPECT_TRUE(dj.contains(k)) << k;
    EXPECT_TRUE(dj["direction"].is_null());
    EXPECT_TRUE(dj["class"].is_null());
    EXPECT_EQ(dj["points"], json({"out", "drop"}));
    EXPECT_EQ(capture_settings_from_json(dj), d);
}

TEST(CaptureJson, EveryBadValueNamesItsKeyAndWhatIsAllowed) {
    struct Case {
        json params;
        const char* field;
        const char* allowed;  // a part of the message
    };
    const Case cases[] = {
        {json::object(), "file", "missing"},
        {json{{"file", ""}}, "file", "path"},
        {json{{"file", 7}}, "file", "path"},
        {with("points", "out"), "points", "\"in\", \"out\", \"drop\""},
        {with("points", {"out", 1}), "points", "\"in\", \"out\", \"drop\""},
        {with("points", {"egress"}), "points", "allowed: in, out, drop"},
        {with("points", {"out", "out"}), "points", "twice"},
        {with("points", json::array()), "points", "allowed: in, out, drop"},
        {with("snaplen_bytes", 15), "snaplen_bytes", "16 .. 65535"},
        {with("snaplen_bytes", 65536), "snaplen_bytes", "16 .. 65535"},
        {with("snaplen_bytes", 100.5), "snaplen_bytes", "16 .. 65535"},
        {with("snaplen_bytes", "128"), "snaplen_bytes", "16 .. 65535"},
        {with("snaplen_bytes", -1), "snaplen_bytes", "16 .. 65535"},
        {with("direction", "ab"), "direction", "\"a_to_b\", \"b_to_a\""},
        {with("direction", 0), "direction", "\"a_to_b\", \"b_to_a\""},
        {with("class", ""), "class", "\"default\""},
        {with("class", 3), "class", "\"default\""},
        {with("duration_s", -1), "duration_s", "> 0"},
        {with("duration_s", "10s"), "duration_s", "> 0"},
        {with("duration_s", 1e9), "duration_s", "a year"},
        {with("packets", -5), "packets", ">= 1"},
        {with("packets", 1.5), "packets", ">= 1"},
        {with("packets", true), "packets", ">= 1"},
        {with("max_size_bytes", 1000), "max_size_bytes", "65536"},
        {with("max_size_bytes", "100MiB"), "max_size_bytes", "65536"},
        {with("files", 0), "files", "1 .. 1000"},
        {with("files", 1001), "files", "1 .. 1000"},
        {with("files", 5), "files", "max_size_bytes"},  // a ring needs a file size
        {with("snaplen", 128), "snaplen", "known: file, points, snaplen_bytes"},
        {with("max_size", 1 << 20), "max_size", "max_size_bytes, files"},
    };
    for (const Case& c : cases) {
        const auto [field, message] = refusal(c.params);
        EXPECT_EQ(field, c.field) << c.params.dump();
        EXPECT_NE(message.find(c.allowed), std::string::npos)
            << c.params.dump() << " -> " << message;
    }
    EXPECT_EQ(refusal(json::array()).first, "");
    EXPECT_EQ(refusal(with("max_size_bytes", 1 << 20)).first, "(accepted)");
    json ring = with("max_size_bytes", 1 << 20);
    ring["files"] = 5;
    EXPECT_EQ(refusal(ring).first, "(accepted)");
}

Status sample_status() {
    Status s;
    s.running = false;
    s.settings.file = "/tmp/ring.pcapng";
    s.settings.max_size = 1 << 20;
    s.settings.files = 3;
    s.settings.direction = 0;
    s.file = "/tmp/ring_00004.pcapng";
    s.files = {"/tmp/ring_00002.pcapng", "/tmp/ring_00003.pcapng", "/tmp/ring_00004.pcapng"};
    s.records = 60;
    s.records_by_point[0] = 10;
    s.records_by_point[1] = 40;
    s.records_by_point[2] = 10;
    s.bytes = 3'456'789;
    s.missed = 7;
    s.rotations = 3;
    s.started_utc_ns = 1'796'000'000'123'456'789;
    s.elapsed = 1'250'000'000;
    s.reason = StopReason::write_error;
    s.error = "No space left on device";
    return s;
}

TEST(CaptureJson, StatusRoundTrip) {
    const Status s = sample_status();
    const json j = capture_status_to_json(s);
    EXPECT_EQ(j["written_files"].size(), 3u);
    EXPECT_EQ(j["records_drop"], 10);
    EXPECT_EQ(j["capture_missed"], 7);
    EXPECT_EQ(j["elapsed_s"], 1.25);
    EXPECT_EQ(j["stop_reason"], "write_error");
    EXPECT_EQ(j["settings"]["files"], 3);
    const Status back = capture_status_from_json(j);
    EXPECT_EQ(capture_status_to_json(back), j);
    EXPECT_EQ(back.settings, s.settings);

    // Before any capture: no file anywhere, still a status.
    const json none = capture_status_to_json(Status{});
    EXPECT_EQ(none["stop_reason"], "");
    EXPECT_EQ(capture_status_to_json(capture_status_from_json(none)), none);

    // A key of the wrong type is named; unknown keys are ignored.
    json bad = j;
    bad["records"] = "many";
    try {
        capture_status_from_json(bad);
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("records"), std::string::npos) << e.what();
    }
    json later = j;
    later["settings"]["compress"] = true;
    later["something"] = 1;
    EXPECT_EQ(capture_status_to_json(capture_status_from_json(later)), j);
}

TEST(CaptureJson, SummaryAndEvent) {
    const Status s = sample_status();
    const json sum = capture_summary_to_json(s);
    EXPECT_EQ(sum, json({{"running", false},
                         {"file", "/tmp/ring_00004.pcapng"},
                         {"records", 60},
                         {"bytes", 3'456'789},
                         {"capture_missed", 7}}));
    const Status back = capture_summary_from_json(sum);
    EXPECT_EQ(back.file, s.file);
    EXPECT_EQ(back.records, 60u);
    EXPECT_EQ(back.missed, 7u);

    const Event e{Event::Kind::stopped, s, "capture stopped (write_error)"};
    EXPECT_EQ(capture_event_to_json(e), json({{"action", "stopped"},
                                              {"file", "/tmp/ring_00004.pcapng"},
                                              {"records", 60},
                                              {"bytes", 3'456'789},
                                              {"capture_missed", 7},
                                              {"stop_reason", "write_error"},
                                              {"error", "No space left on device"}}));
}

}  // namespace
}  // namespace linkem
