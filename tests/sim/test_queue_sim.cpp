// linkem-sim with a queue discipline at the limiter (docs/simulation.md, "Queue disciplines"):
// the same open-loop overload through droptail, codel, fq_codel and pie gives what the RFCs
// lead one to expect, ECN marks instead of drops, the same seed writes the same bytes, and bad
// input is refused naming the flag.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "sim_run.hpp"
#include "temp_dir.hpp"

namespace linkem::sim {
namespace {

using test::TempDir;

using test_run::sim;
using test_run::SimRun;

using test_run::slurp;

// One line of the queue series.
struct Sample {
    double time_s = 0;
    std::uint64_t backlog_bytes = 0, backlog_packets = 0;
    double sojourn_mean_ms = NAN, sojourn_max_ms = NAN;
    std::uint64_t dequeued = 0, drops_spacer = 0, drops_aqm = 0, ecn_marked = 0;
};

std::vector<Sample> read_series(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line,
              "time_s,backlog_bytes,backlog_packets,sojourn_mean_ms,sojourn_max_ms,dequeued,"
              "drops_spacer,drops_aqm,ecn_marked");
    std::vector<Sample> rows;
    while (std::getline(in, line)) {
        std::vector<std::string> c;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ','))
            c.push_back(cell);
        if (c.size() == 8) c.push_back("");
        EXPECT_EQ(c.size(), 9u) << line;
        if (c.size() != 9) continue;
        Sample s;
        s.time_s = std::stod(c[0]);
        s.backlog_bytes = std::stoull(c[1]);
        s.backlog_packets = std::stoull(c[2]);
        if (!c[3].empty()) s.sojourn_mean_ms = std::stod(c[3]);
        if (!c[4].empty()) s.sojourn_max_ms = std::stod(c[4]);
        s.dequeued = std::stoull(c[5]);
        s.drops_spacer = std::stoull(c[6]);
        s.drops_aqm = std::stoull(c[7]);
        s.ecn_marked = std::stoull(c[8]);
        rows.push_back(s);
    }
    return rows;
}

// The mean and the largest sojourn time of the samples in (from_s, to_s].
struct Window {
    double mean_ms = 0, max_ms = 0;
};
Window window(const std::vector<Sample>& rows, double from_s, double to_s) {
    Window w;
    double sum = 0;
    std::uint64_t n = 0;
    for (const Sample& s : rows)
        if (s.time_s > from_s && s.time_s <= to_s && s.dequeued > 0) {
            sum += s.sojourn_mean_ms * static_cast<double>(s.dequeued);
            n += s.dequeued;
            w.max_ms = std::max(w.max_ms, s.sojourn_max_ms);
        }
    w.mean_ms = n ? sum / static_cast<double>(n) : NAN;
    return w;
}

struct QueueRun {
    nlohmann::json result;
    std::vector<Sample> series;
};

// 30 s of CBR 1518-byte frames at load x 10 Mbit/s into a 10 Mbit/s spacer with a queue of
// 1000 packets (drop-tail holds it 1000 * 1518 * 8 / 10 Mbit/s = 1.2144 s), no delay.
QueueRun overload(const std::string& queue, double load, std::vector<std::string> more = {}) {
    TempDir dir("linkem-sim-queue");
    const std::string csv = dir.file("q.csv");
    std::vector<std::string> args = {"--limiter",
                                     "spacer",
                                     "--rate",
                                     "10Mbit",
                                     "--queue",
                                     queue,
                                     "--queue-limit",
                                     "1000p",
                                     "--traffic-rate",
                                     std::to_string(std::lround(load * 10)) + "Mbit",
                                     "--duration",
                                     "30s",
                                     "--mean-delay",
                                     "0ms",
                                     "--json",
                                     "-q",
                                     "--queue-series",
                                     csv,
                                     "--queue-series-interval",
                                     "1s"};
    args.insert(args.end(), more.begin(), more.end());
    const SimRun run = sim(args);
    EXPECT_EQ(run.rc, 0) << run.err;
    QueueRun r;
    if (run.rc != 0) return r;
    r.result = nlohmann::json::parse(run.out)["results"][0];
    r.series = read_series(csv);
    // Every packet is delivered or counted as dropped, the queue discipline's late drops too.
    const auto& j = r.result;
    EXPECT_EQ(j["packets_in"].get<std::uint64_t>(), j["packets_out"].get<std::uint64_t>() +
                                                        j["drops_spacer"].get<std::uint64_t>() +
                                                        j["drops_aqm"].get<std::uint64_t>());
    // One queue keeps the order; FQ-CoDel's flows pass each other.
    if (queue != "fq_codel") {
        EXPECT_EQ(j["swaps"].get<std::uint64_t>(), 0u);
    }
    // The series adds up to the run's counters.
    std::uint64_t aqm = 0, limit = 0, marked = 0;
    for (const Sample& s : r.series) {
        aqm += s.drops_aqm;
        limit += s.drops_spacer;
        marked += s.ecn_marked;
    }
    EXPECT_EQ(aqm, j["drops_aqm"].get<std::uint64_t>());
    EXPECT_EQ(limit, j["drops_spacer"].get<std::uint64_t>());
    EXPECT_EQ(marked, j["ecn_marked"].get<std::uint64_t>());
    return r;
}

constexpr double kDroptailSojournMs = 1000 * 1518 * 8 / 10e6 * 1e3;  // 1214.4
constexpr double kOnePacketMs = 1518 * 8 / 10e6 * 1e3;               // 1.2144

TEST(QueueSim, DroptailHoldsTheLimitOverTheRate) {
    for (double load : {1.1, 2.0}) {
        SCOPED_TRACE(load);
        const QueueRun r = overload("droptail", load);
        ASSERT_FALSE(r.series.empty());
        EXPECT_EQ(r.result["drops_aqm"], 0u);
        EXPECT_GT(r.result["drops_spacer"].get<std::uint64_t>(), 0u);
        EXPECT_NEAR(r.result["queue_sojourn_max_us"].get<double>() * 1e-3, kDroptailSojournMs,
                    kOnePacketMs);
        // Full in the last 10 s: every packet waits limit / rate.
        const Window w = window(r.series, 20, 30);
        EXPECT_NEAR(w.mean_ms, kDroptailSojournMs, kOnePacketMs);
    }
}

// 10 % above the rate: CoDel (target 5 ms, interval 100 ms), FQ-CoDel and PIE (target 15 ms)
// keep the sojourn time bounded, a small multiple of their targets, far below drop-tail's
// 1.2 s, by dropping about the excess (9 % of the arrivals), and never fill the queue.
TEST(QueueSim, AqmKeepsTheSojournBoundedTenPercentAboveTheRate) {
    for (const std::string queue : {"codel", "fq_codel", "pie"}) {
        SCOPED_TRACE(queue);
        const QueueRun r = overload(queue, 1.1, {"--flows", "4"});
        ASSERT_FALSE(r.series.empty());
        EXPECT_EQ(r.result["drops_spacer"], 0u) << "the queue never fills";
        const double in = r.result["packets_in"].get<double>();
        const double aqm = r.result["drops_aqm"].get<double>();
        EXPECT_NEAR(aqm / in, 0.1 / 1.1, 0.01);
        const Window w = window(r.series, 10, 30);
        EXPECT_LT(w.mean_ms, 30) << "mean sojourn in the last 20 s";
        EXPECT_LT(w.max_ms, 50) << "largest sojourn in the last 20 s";
        EXPECT_LT(r.result["queue_sojourn_max_us"].get<double>() * 1e-3, 100);
    }
}

// Twice the rate: PIE's drop probability settles near 1/2 and holds its target. CoDel's drop
// rate grows with the square root of its drop count (RFC 8289's control law), too slowly for
// an unresponsive flow at twice the rate: the queue fills, then the ramp drains it, CoDel
// leaves its dropping state and the queue builds again, a saw-tooth between its target and
// drop-tail's limit / rate.
TEST(QueueSim, TwiceTheRate) {
    const QueueRun pie = overload("pie", 2.0);
    ASSERT_FALSE(pie.series.empty());
    EXPECT_EQ(pie.result["drops_spacer"], 0u);
    EXPECT_LT(window(pie.series, 10, 30).mean_ms, 30);
    const QueueRun codel = overload("codel", 2.0);
    ASSERT_FALSE(codel.series.empty());
    EXPECT_GT(codel.result["drops_aqm"].get<std::uint64_t>(), 0u);
    const double mean = codel.result["queue_sojourn_mean_us"].get<double>() * 1e-3;
    EXPECT_GT(mean, 15);
    EXPECT_LT(mean, 0.8 * kDroptailSojournMs);
    double lo = 1e9, hi = 0;
    for (const Sample& s : codel.series)
        if (s.time_s > 5 && s.dequeued > 0) {
            lo = std::min(lo, s.sojourn_mean_ms);
            hi = std::max(hi, s.sojourn_mean_ms);
        }
    EXPECT_LT(lo, 0.25 * kDroptailSojournMs) << "the ramp drains the queue";
    EXPECT_GT(hi, 0.5 * kDroptailSojournMs) << "and it builds again";
}

// ECN-capable traffic with ecn on: the discipline marks where it would drop. Marks do not
// slow an open-loop sender, so the queue fills and the limit drops instead; PIE marks only
// while its drop probability is at most 10 % (RFC 8033, 5.1) and drops above it.
TEST(QueueSim, EcnMarksInsteadOfDropping) {
    for (const std::string queue : {"codel", "fq_codel", "pie"}) {
        SCOPED_TRACE(queue);
        const QueueRun marked = overload(queue, 1.1, {"--ect", "--ecn", "on"});
        if (queue != "pie") {
            EXPECT_EQ(marked.result["drops_aqm"], 0u);
            EXPECT_GT(marked.result["drops_spacer"].get<std::uint64_t>(), 0u);
        }
        EXPECT_GT(marked.result["ecn_marked"].get<std::uint64_t>(), 0u);
        // Not ECN-capable: dropped as without ecn.
        const QueueRun plain = overload(queue, 1.1, {"--ecn", "on"});
        EXPECT_EQ(plain.result["ecn_marked"], 0u);
        EXPECT_GT(plain.result["drops_aqm"].get<std::uint64_t>(), 0u);
    }
}

// FQ-CoDel's flows: with one flow each packet waits behind the whole queue as in CoDel; a
// sparse flow beside a bulk one is not possible with one traffic source, but spreading the
// same traffic over flows gives each its own CoDel, and the flows' frames differ in their
// ports so that the hash tells them apart.
TEST(QueueSim, FlowsSpreadTheTrafficOverFqCodelsQueues) {
    const QueueRun one = overload("fq_codel", 2.0);
    const QueueRun many = overload("fq_codel", 2.0, {"--flows", "64"});
    ASSERT_FALSE(one.series.empty());
    ASSERT_FALSE(many.series.empty());
    EXPECT_NE(one.result["drops_aqm"], many.result["drops_aqm"]);
    // The config reports them.
    const SimRun run = sim({"--duration", "10ms", "--json", "-q", "--flows", "64", "--ect"});
    ASSERT_EQ(run.rc, 0) << run.err;
    const nlohmann::json traffic = nlohmann::json::parse(run.out)["config"]["traffic"];
    EXPECT_EQ(traffic["flows"], 64);
    EXPECT_EQ(traffic["ect"], true);
}

// A class file's flows: `ect` makes a flow's frames ECN-capable; with ecn on CoDel marks
// them and drops the others', and each flow's drops after ingest are its own.
TEST(QueueSim, ClassFileFlowsCarryTheirOwnEcnField) {
    TempDir dir("linkem-sim-queue");
    const std::string file = dir.file("ect.json");
    std::ofstream(file) << R"({"limiter": "spacer", "rate_bps": 1000000, "queue": "codel",
        "ecn": "on", "flows": [
        {"name": "bulk", "direction": "a_to_b", "rate_bps": 1500000, "protocol": "udp",
         "a_port": 1000, "b_port": 2000, "ect": true},
        {"name": "plain", "direction": "a_to_b", "rate_bps": 200000, "protocol": "udp",
         "a_port": 1001, "b_port": 2000}]})";
    const SimRun run = sim({"--classes", file, "--duration", "5s", "--json", "-q"});
    ASSERT_EQ(run.rc, 0) << run.err;
    const nlohmann::json j = nlohmann::json::parse(run.out);
    const nlohmann::json& c = j["classes"][0];
    EXPECT_GT(c["ecn_marked"].get<std::uint64_t>(), 0u);
    EXPECT_GT(c["drops_aqm"].get<std::uint64_t>(), 0u);
    std::uint64_t dropped = 0;
    for (const auto& f : j["flows"]) {
        if (f["flow"] == "bulk") {
            EXPECT_EQ(f["dropped"], 0u) << "marked, not dropped";
        }
        dropped += f["dropped"].get<std::uint64_t>();
        EXPECT_EQ(f["packets_in"].get<std::uint64_t>(),
                  f["packets_out"].get<std::uint64_t>() + f["dropped"].get<std::uint64_t>());
    }
    EXPECT_EQ(dropped,
              c["drops_aqm"].get<std::uint64_t>() + c["drops_spacer"].get<std::uint64_t>());
    EXPECT_EQ(j["directions"]["a_to_b"]["dropped"].get<std::uint64_t>(), dropped);
    // `ect` takes a boolean only.
    std::ofstream(file) << R"({"flows": [{"name": "x", "rate_bps": 1000, "protocol": "udp",
        "a_port": 1, "b_port": 2, "ect": 1}]})";
    const SimRun bad = sim({"--classes", file, "--duration", "1s", "-q"});
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.err.find("flows[0].ect"), std::string::npos) << bad.err;
}

TEST(QueueSim, TheSameSeedWritesTheSameBytes) {
    TempDir dir("linkem-sim-queue");
    std::vector<std::string> out;
    for (const char* name : {"a.csv", "b.csv"}) {
        const SimRun run = sim({"--limiter",
                                "spacer",
                                "--rate",
                                "10Mbit",
                                "--queue",
                                "pie",
                                "--queue-limit",
                                "300p",
                                "--traffic-rate",
                                "15Mbit",
                                "--traffic-pattern",
                                "poisson",
                                "--jitter",
                                "2ms",
                                "--duration",
                                "5s",
                                "--seed",
                                "9",
                                "--json",
                                "-q",
                                "--queue-series",
                                dir.file(name),
                                "--queue-series-interval",
                                "100ms"});
        ASSERT_EQ(run.rc, 0) << run.err;
        nlohmann::json j = nlohmann::json::parse(run.out);
        for (auto& r : j["results"]) {
            r.erase("wall_s");
            r.erase("packets_per_s");
        }
        j.erase("summary");
        out.push_back(j.dump());
    }
    EXPECT_EQ(out[0], out[1]);
    const std::string a = slurp(dir.file("a.csv")), b = slurp(dir.file("b.csv"));
    EXPECT_GT(a.size(), 1000u);
    EXPECT_TRUE(a == b) << "the two series differ";
}

TEST(QueueSim, BadInputIsRefusedNamingTheFlag) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<std::string> spacer = {"--limiter", "spacer", "--rate", "10Mbit"};
    const std::vector<Case> cases = {
        {{"--queue", "red"}, "--queue: 'red' is not allowed; allowed 'droptail', 'codel'"},
        {{"--queue-limit", "0p"}, "--queue-limit: '0p'"},
        {{"--queue", "pie", "--codel-target", "10ms"},
         "--codel-target: belongs to queue 'codel' or 'fq_codel', not 'pie'"},
        {{"--flows", "0"}, "--flows: '0' is out of range; allowed 1 .. 8192"},
        {{"--flows", "many"}, "--flows: 'many'"},
        {{"--queue-series-interval", "5ms"},
         "--queue-series-interval: only applies with --queue-series"},
        {{"--queue-series", "q.csv", "--queue-series-interval", "0ms"},
         "--queue-series-interval: must be greater than 0"},
        {{"--ect", "--sweep", "fig4"}, "--ect: not available with --sweep"},
        {{"--flows", "4", "--sweep", "fig4"}, "--flows: not available with --sweep"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = {"--duration", "10ms", "-q"};
        args.insert(args.end(), spacer.begin(), spacer.end());
        args.insert(args.end(), c.args.begin(), c.args.end());
        const SimRun run = sim(args);
        EXPECT_EQ(run.rc, 2) << c.says;
        EXPECT_NE(run.err.find(c.says), std::string::npos) << run.err;
    }
}

}  // namespace
}  // namespace linkem::sim
