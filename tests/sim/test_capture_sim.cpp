// linkem-sim --capture: the pcapng file of a simulated run, read back with tshark (the
// independent reference): its records equal the run's own counters (out = packets_out,
// drops by cause = drops_*), every out record's parts add up, time stamps never go back on
// an interface, the same seed writes the same bytes, and bad flags are refused.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "linkem/capture.hpp"
#include "sim_capture.hpp"
#include "sim_run.hpp"
#include "temp_dir.hpp"
#include "tshark.hpp"

namespace linkem::sim {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

using test_run::sim;
using test_run::SimRun;

// One record as tshark reads it: its interface, its time (ns since 1970), its lengths and
// its comment's fields.
struct Record {
    std::string interface;
    std::int64_t time_ns = 0;
    std::uint64_t frame_len = 0, cap_len = 0;
    std::string src, dst, ports, protocols;
    std::map<std::string, std::string> f;
    std::int64_t num(const std::string& key) const {
        const auto it = f.find(key);
        return it == f.end() ? -1 : std::stoll(it->second);
    }
};

// Every record of `file`, and tshark's exit code.
std::pair<std::vector<Record>, int> read_capture(const std::string& file) {
    const test::TsharkRows t = test::tshark_fields(
        file, {"frame.interface_name", "frame.time_epoch", "frame.len", "frame.cap_len", "ip.src",
               "ip.dst", "udp.srcport", "udp.dstport", "frame.protocols", "frame.comment"});
    std::vector<Record> records;
    for (const auto& cols : t.rows) {
        Record r;
        r.interface = cols[0];
        r.time_ns = test::epoch_ns(cols[1]);
        r.frame_len = std::stoull(cols[2]);
        r.cap_len = std::stoull(cols[3]);
        r.src = cols[4];
        r.dst = cols[5];
        r.ports = cols[6] + ">" + cols[7];
        r.protocols = cols[8];
        r.f = test::comment_fields(cols[9]);
        records.push_back(std::move(r));
    }
    return {records, t.rc};
}

// The checks every capture passes: out records' parts add up and are not negative, time
// stamps never go back on an interface, the drop records name a cause.
void check_records(const std::vector<Record>& records) {
    std::map<std::string, std::int64_t> last;
    for (const Record& r : records) {
        ASSERT_EQ(r.f.count("point"), 1u) << "not a linkem comment";
        // The simulation knows every packet's number and arrival.
        EXPECT_EQ(r.f.count("seq"), 1u);
        EXPECT_EQ(r.f.count("arrived_ns"), 1u);
        EXPECT_GE(r.time_ns, last[r.interface]) << r.interface << " goes back";
        last[r.interface] = r.time_ns;
        const std::string& point = r.f.at("point");
        EXPECT_EQ(r.interface, point == "drop" ? "drops" : r.f.at("dir") + " " + point);
        if (point == "out") {
            EXPECT_EQ(r.num("scheduled_ns"),
                      r.num("delay_ns") + r.num("limiter_wait_ns") + r.num("order_wait_ns"))
                << "seq " << r.num("seq");
            EXPECT_GE(r.num("order_wait_ns"), 0);
            EXPECT_GE(r.num("lateness_ns"), 0);
            // Departure = arrival + scheduled + lateness.
            EXPECT_EQ(r.time_ns,
                      r.num("arrived_ns") + r.num("scheduled_ns") + r.num("lateness_ns"));
        }
        if (point == "drop") {
            EXPECT_EQ(r.f.count("drop"), 1u);
            // A queue discipline drops a packet it holds at its dequeue (cause aqm).
            if (r.f.count("drop") && r.f.at("drop") == "aqm")
                EXPECT_GE(r.time_ns, r.num("arrived_ns"));
            else
                EXPECT_EQ(r.time_ns, r.num("arrived_ns"));
        }
    }
}

// Per cause name ("loss", ...), the drop records.
std::map<std::string, std::uint64_t> drops_by_cause(const std::vector<Record>& records) {
    std::map<std::string, std::uint64_t> n;
    for (const Record& r : records)
        if (r.f.at("point") == "drop") ++n[r.f.at("drop")];
    return n;
}

std::uint64_t count_point(const std::vector<Record>& records, const std::string& point) {
    std::uint64_t n = 0;
    for (const Record& r : records)
        n += r.f.at("point") == point;
    return n;
}

using test_run::slurp;

// Plain runs, each with other drop causes and delay parts: the records equal the run's
// counters.
TEST(SimCapture, RecordsEqualTheRunsCounters) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark not installed";
    TempDir dir("linkem-sim-capture");
    const std::vector<std::vector<std::string>> configs = {
        // loss, policer, buffer_full, and a virtual queue behind the emulator (lateness).
        {"--limiter", "policer", "--rate", "40Mbit", "--loss-model", "bernoulli",
         "--loss-probability", "0.05", "--buffer-limit", "20", "--utilization", "0.9", "--jitter",
         "3ms"},
        // spacer drops and waits, FIFO order waits.
        {"--strategy", "uncorrelated", "--distribution", "uniform", "--jitter", "2ms", "--limiter",
         "spacer", "--rate", "40Mbit", "--queue-limit", "30000"},
        // reordered: the calendar queue's rounding is lateness; b_to_a; every point.
        {"--traffic-pattern", "poisson", "--strategy", "reordered", "--jitter", "2ms", "--limiter",
         "spacer", "--rate", "45Mbit", "--queue-limit", "100000", "--direction", "b_to_a",
         "--capture-points", "in,out,drop", "--capture-snaplen", "64"},
    };
    for (std::size_t i = 0; i < configs.size(); ++i) {
        SCOPED_TRACE("config " + std::to_string(i));
        const std::string file = dir.file("run" + std::to_string(i) + ".pcapng");
        std::vector<std::string> args = {"--duration",   "200ms", "--traffic-rate", "50Mbit",
                                         "--mean-delay", "5ms",   "--json",         "-q",
                                         "--capture",    file};
        args.insert(args.end(), configs[i].begin(), configs[i].end());
        const SimRun run = sim(args);
        ASSERT_EQ(run.rc, 0) << run.err;
        const nlohmann::json r = nlohmann::json::parse(run.out)["results"][0];
        const auto [records, rc] = read_capture(file);
        EXPECT_EQ(rc, 0) << "tshark -r failed on " << file;
        check_records(records);
        EXPECT_EQ(count_point(records, "out"), r["packets_out"].get<std::uint64_t>());
        const auto drops = drops_by_cause(records);
        std::uint64_t all_drops = 0;
        for (const DropCauseInfo& c : kDropCauses) {
            const std::uint64_t want = r[c.key].get<std::uint64_t>();
            const auto it = drops.find(c.name);
            EXPECT_EQ(it == drops.end() ? 0 : it->second, want) << c.name;
            all_drops += want;
        }
        EXPECT_GT(all_drops, 0u) << "each configuration drops packets";
        const bool b_to_a = i == 2;
        if (b_to_a) {
            EXPECT_EQ(count_point(records, "in"), r["packets_in"].get<std::uint64_t>());
        } else {
            EXPECT_EQ(count_point(records, "in"), 0u);
        }
        ASSERT_FALSE(records.empty());
        // The plain run's fixed pair in every frame, read as UDP data, frames as simulated
        // (1518 bytes with the FCS).
        std::uint64_t frames_ok = 0;
        for (const Record& rec : records)
            frames_ok += rec.src == (b_to_a ? "10.0.0.2" : "10.0.0.1") &&
                         rec.dst == (b_to_a ? "10.0.0.1" : "10.0.0.2") &&
                         rec.ports == (b_to_a ? "50001>50000" : "50000>50001") &&
                         rec.protocols == "eth:ethertype:ip:udp:data" && rec.frame_len == 1514 &&
                         rec.cap_len == (b_to_a ? 64u : 128u);
        EXPECT_EQ(frames_ok, records.size());
        const Record& first = records.front();
        // Time 0 of the run is kCaptureEpochNs.
        EXPECT_GE(first.num("arrived_ns"), kCaptureEpochNs);
        EXPECT_LT(first.num("arrived_ns"), kCaptureEpochNs + 200'000'000);
    }
}

// A queue discipline: its drops after ingest took the packet (Emulator::late_drops) are
// drop records with cause aqm at the time of the drop, and the marked packets' out records
// say ecn=ce.
TEST(SimCapture, QueueDisciplinesDropsAndMarksAreRecorded) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark not installed";
    TempDir dir("linkem-sim-capture");
    for (const std::vector<std::string>& more :
         {std::vector<std::string>{"--queue", "codel"},
          std::vector<std::string>{"--queue", "codel", "--ect", "--ecn", "on", "--flows", "3"}}) {
        const std::string file = dir.file("aqm.pcapng");
        std::vector<std::string> args = {"--duration",    "3s",     "--traffic-rate", "12Mbit",
                                         "--mean-delay",  "5ms",    "--json",         "-q",
                                         "--limiter",     "spacer", "--rate",         "10Mbit",
                                         "--queue-limit", "200p",   "--capture",      file};
        args.insert(args.end(), more.begin(), more.end());
        const SimRun run = sim(args);
        ASSERT_EQ(run.rc, 0) << run.err;
        const nlohmann::json r = nlohmann::json::parse(run.out)["results"][0];
        const auto [records, rc] = read_capture(file);
        EXPECT_EQ(rc, 0);
        check_records(records);
        EXPECT_EQ(count_point(records, "out"), r["packets_out"].get<std::uint64_t>());
        const auto drops = drops_by_cause(records);
        const std::uint64_t aqm = r["drops_aqm"].get<std::uint64_t>();
        EXPECT_EQ(drops.count("aqm") ? drops.at("aqm") : 0, aqm);
        std::uint64_t ce = 0, late = 0, ports = 0;
        for (const Record& rec : records) {
            ce += rec.f.count("ecn") && rec.f.at("ecn") == "ce";
            late += rec.f.at("point") == "drop" && rec.time_ns > rec.num("arrived_ns");
            ports += rec.ports == "50002>50001";
        }
        EXPECT_EQ(ce, r["ecn_marked"].get<std::uint64_t>());
        if (more.size() == 2) {
            EXPECT_GT(aqm, 0u);
            EXPECT_EQ(late, aqm) << "dropped at its dequeue, after its arrival";
            EXPECT_EQ(ports, 0u);
        } else {
            EXPECT_EQ(aqm, 0u);
            EXPECT_GT(ce, 0u);
            EXPECT_GT(ports, 0u) << "the third flow's frames";
        }
    }
}

TEST(SimCapture, TheSameSeedWritesTheSameBytes) {
    TempDir dir("linkem-sim-capture");
    for (const char* name : {"a.pcapng", "b.pcapng"}) {
        const SimRun run =
            sim({"--duration", "50ms", "--traffic-rate", "20Mbit", "--traffic-pattern", "poisson",
                 "--jitter", "2ms", "--loss-model", "bernoulli", "--loss-probability", "0.02",
                 "--seed", "7", "-q", "--capture", dir.file(name)});
        ASSERT_EQ(run.rc, 0) << run.err;
    }
    const std::string a = slurp(dir.file("a.pcapng")), b = slurp(dir.file("b.pcapng"));
    EXPECT_GT(a.size(), 10'000u);
    EXPECT_TRUE(a == b) << "the two files differ";
}

// A class file: records per class and direction equal the class's counters, the flows'
// addresses are in the frames, a class's `drop` action is the cause `class`.
TEST(SimCapture, ClassRunRecordsEqualEachClasssCounters) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark not installed";
    TempDir dir("linkem-sim-capture");
    const std::string file = dir.file("classes.pcapng");
    const SimRun run = sim({"--classes", LINKEM_CLASSES_EXAMPLE_PATH, "--duration", "2s", "--json",
                            "-q", "--capture", file});
    ASSERT_EQ(run.rc, 0) << run.err;
    const nlohmann::json j = nlohmann::json::parse(run.out);
    const auto [records, rc] = read_capture(file);
    EXPECT_EQ(rc, 0);
    check_records(records);
    std::map<std::string, std::uint64_t> out, drops;  // "class dir" (drops: "class dir cause")
    for (const Record& r : records) {
        const std::string key = r.f.at("class") + " " + r.f.at("dir");
        if (r.f.at("point") == "out") ++out[key];
        if (r.f.at("point") == "drop") ++drops[key + " " + r.f.at("drop")];
    }
    std::uint64_t checked = 0;
    for (const auto& c : j["classes"]) {
        const std::string key =
            c["class"].get<std::string>() + " " + c["direction"].get<std::string>();
        SCOPED_TRACE(key);
        EXPECT_EQ(out[key], c["packets_out"].get<std::uint64_t>());
        for (const DropCauseInfo& cause : kDropCauses)
            EXPECT_EQ(drops[key + " " + cause.name], c[cause.key].get<std::uint64_t>())
                << cause.name;
        ++checked;
    }
    EXPECT_GE(checked, 6u);
    EXPECT_GT(drops["no-ipv6 a_to_b class"], 0u);
    bool saw_call = false;
    for (const Record& r : records)
        saw_call |= r.f.at("class") == "voip" && r.src == "10.0.0.1" && r.dst == "10.0.0.2";
    EXPECT_TRUE(saw_call) << "the call flow's addresses in voip's frames";
}

TEST(SimCapture, BadFlagsAreRefusedNamingTheFlag) {
    TempDir dir("linkem-sim-capture");
    const std::string file = dir.file("x.pcapng");
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--capture", file, "--capture-points", "out,sideways"}, "--capture-points: 'sideways'"},
        {{"--capture", file, "--capture-points", ""}, "--capture-points"},
        {{"--capture", file, "--capture-snaplen", "8"}, "--capture-snaplen: '8' is out of range"},
        {{"--capture", file, "--capture-snaplen", "lots"}, "--capture-snaplen"},
        {{"--capture-points", "out"}, "--capture-points: only applies with --capture"},
        {{"--capture-snaplen", "64"}, "--capture-snaplen: only applies with --capture"},
        {{"--capture", file, "--sweep", "fig4"}, "--capture: not available with --sweep"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = {"--duration", "10ms"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const SimRun run = sim(args);
        EXPECT_EQ(run.rc, 2) << c.says;
        EXPECT_NE(run.err.find(c.says), std::string::npos) << run.err;
        EXPECT_FALSE(fs::exists(file));
    }
    // A file that cannot be created: the flag, the path and the reason.
    const std::string bad = dir.file("no/such/dir/x.pcapng");
    const SimRun run = sim({"--duration", "10ms", "-q", "--capture", bad});
    EXPECT_EQ(run.rc, 1);
    EXPECT_NE(run.err.find("--capture"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(bad), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("No such file or directory"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace linkem::sim
