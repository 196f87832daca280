// Capture's settings, status and event as the protocol's JSON (linkem/capture_json.hpp):
// capture_start's params round trip, and every bad key or value is refused naming the key
// and what is allowed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "linkem/capture.hpp"
#include "linkem/capture_flags.hpp"
#include "linkem/capture_json.hpp"
#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "linkem/protocol.hpp"

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

TEST(CaptureJson, TheProtocolsMessages) {
    // The methods: capture_start takes params, the others none.
    ASSERT_NE(proto::find_method("capture_start"), nullptr);
    EXPECT_TRUE(proto::find_method("capture_start")->takes_params);
    EXPECT_FALSE(proto::find_method("capture_stop")->takes_params);
    EXPECT_FALSE(proto::find_method("capture_status")->takes_params);

    // hello's capability.
    proto::Hello h;
    h.instance_id = "x";
    h.capabilities.capture = true;
    const json hj = proto::to_json(h);
    EXPECT_EQ(hj["capabilities"]["capture"], true);
    EXPECT_TRUE(proto::decode<proto::Hello>(hj).capabilities.capture);

    // The stats block: always written; absent (an older linkemd) reads as no capture.
    proto::StatsMessage m;
    m.header.instance_id = "x";
    m.capture = sample_status();
    json sj = proto::to_json(m);
    EXPECT_EQ(sj["capture"], capture_summary_to_json(sample_status()));
    EXPECT_EQ(proto::decode<proto::StatsMessage>(sj).capture.records, 60u);
    EXPECT_TRUE(proto::to_json(proto::StatsMessage{}).contains("capture"));
    sj.erase("capture");
    EXPECT_FALSE(proto::decode<proto::StatsMessage>(sj).capture.running);

    // The event: its keys, its severity.
    Status s = sample_status();
    const proto::Event stopped =
        proto::Event::capture(Event{Event::Kind::stopped, s, "capture stopped (write_error)"});
    EXPECT_EQ(stopped.kind, "capture");
    EXPECT_EQ(stopped.severity, "warning");
    json ej = proto::to_json(stopped);
    const json keys = capture_event_to_json(Event{Event::Kind::stopped, s, ""});
    for (const auto& [key, value] : keys.items())
        EXPECT_EQ(ej[key], value) << key;
    const proto::Event back = proto::decode<proto::Event>(ej);
    EXPECT_EQ(back.capture_missed, 7u);
    EXPECT_EQ(back.stop_reason, "write_error");
    s.reason = StopReason::duration;
    EXPECT_EQ(proto::Event::capture(Event{Event::Kind::stopped, s, "m"}).severity, "info");
    EXPECT_EQ(proto::Event::capture(Event{Event::Kind::started, s, "m"}).severity, "info");
    EXPECT_EQ(proto::Event::capture(Event{Event::Kind::missed, s, "m"}).severity, "warning");

    // Typed calls: the params and the result.
    Settings p;
    p.file = "/tmp/x.pcapng";
    EXPECT_EQ(proto::decode<Settings>(proto::to_json(p)), p);
    EXPECT_EQ(proto::to_json(proto::decode<Status>(proto::to_json(sample_status()))),
              capture_status_to_json(sample_status()));
    try {
        proto::decode<Settings>(json{{"file", "/x"}, {"snaplen_bytes", 1}});
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("snaplen_bytes: ", 0), 0u) << e.what();
    }
}

TEST(CaptureJson, FlagsGiveTheParams) {
    const std::vector<CaptureFlag>& flags = capture_flags();
    CaptureFlagText text(flags.size());
    auto set = [&](const char* flag, const char* value) {
        for (std::size_t i = 0; i < flags.size(); ++i)
            if (flags[i].flag == flag) text[i] = value;
    };
    EXPECT_EQ(capture_params_from_flags("/tmp/x.pcapng", text, "--"),
              json({{"file", "/tmp/x.pcapng"}}));
    set("points", "in,out");
    set("snaplen", "1514");
    set("direction", "b_to_a");
    set("class", "voip");
    set("duration", "1500ms");
    set("max-size", "1MiB");
    set("files", "3");
    const json p = capture_params_from_flags("/tmp/x.pcapng", text, "--");
    EXPECT_EQ(p["points"], json({"in", "out"}));
    EXPECT_EQ(p["duration_s"], 1.5);
    EXPECT_EQ(p["max_size_bytes"], 1 << 20);
    const Settings s = capture_settings_from_json(p);
    EXPECT_EQ(s.points, 3u);
    EXPECT_EQ(s.snaplen, 1514u);
    EXPECT_EQ(s.files, 3u);

    // The form is the flag's to check, naming it; the range the params' (then named by flag).
    set("duration", "10");
    try {
        capture_params_from_flags("/tmp/x.pcapng", text, "--capture-");
        ADD_FAILURE() << "accepted";
    } catch (const FlagError& e) {
        EXPECT_EQ(e.flag(), "--capture-duration");
        EXPECT_EQ(e.field(), "duration_s");
        EXPECT_NE(std::string(e.what()).find("a duration with a unit"), std::string::npos);
    }
    EXPECT_EQ(capture_flag_name("snaplen_bytes", "--capture-", "--capture"), "--capture-snaplen");
    EXPECT_EQ(capture_flag_name("max_size_bytes", "--", "FILE"), "--max-size");
    EXPECT_EQ(capture_flag_name("file", "--capture-", "--capture"), "--capture");
    for (const CaptureFlag& f : flags)  // every flag sets a key capture_start knows
        EXPECT_EQ(refusal(with(f.key.c_str(), nullptr)).second.find("unknown capture setting"),
                  std::string::npos)
            << f.key;
}

}  // namespace
}  // namespace linkem
