// linkem-sim with scenarios and the trace limiter (docs/scenarios.md): a mahimahi trace with
// backlogged traffic delivers the trace's bytes per 100 ms, checked against a model of
// mm-link's accounting written in the tests (tests/unit/mm_link_model.hpp); a scenario's
// steps reach each packet at its arrival; bad input names the flag, the file and the line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../unit/mm_link_model.hpp"
#include "cli.hpp"

namespace linkem::sim {
namespace {

std::string write(const std::string& name, const std::string& text) {
    const std::string path = testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

int run(std::vector<const char*> args, std::string* err = nullptr) {
    args.insert(args.begin(), "linkem-sim");
    std::ostringstream out, e;
    const int rc = run_cli(static_cast<int>(args.size()), args.data(), out, e);
    if (err) *err = e.str();
    return rc;
}

// The rows of a --delay-series CSV: departure (ns), delay (ns), and the scenario's mean delay (ns)
// when the CSV has it.
struct Row {
    std::int64_t departure, delay, mean;
};
std::vector<Row> read_trace(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    std::vector<Row> rows;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string a, b, c;
        std::getline(s, a, ',');
        std::getline(s, b, ',');
        std::getline(s, c, ',');
        rows.push_back({std::llround(std::stod(a) * 1e6), std::llround(std::stod(b) * 1e6),
                        c.empty() ? -1 : std::llround(std::stod(c) * 1e6)});
    }
    return rows;
}

TEST(SimTrace, DeliversTheTracesBytesPer100ms) {
    // 1 s: two opportunities in 3 ms for 500 ms, then one in 2 ms, and a burst of five at
    // 700 ms. 1000-byte frames (986 bytes charged) at 2000 frames/s keep the link backlogged.
    std::vector<std::uint32_t> ms;
    std::string text;
    for (std::uint32_t m = 0; m < 1000; ++m) {
        const int n = m == 700 ? 5 : (m < 500 ? m % 3 != 0 : m % 2 == 0);
        for (int i = 0; i < n; ++i) {
            ms.push_back(m);
            text += std::to_string(m) + "\n";
        }
    }
    ms.push_back(1000);
    text += "1000\n";
    const std::string trace = write("sim_link.trace", text);
    const std::string csv = testing::TempDir() + "/sim_trace_out.csv";
    std::string err;
    ASSERT_EQ(run({"--limiter", "trace", "--trace-file", trace.c_str(), "--mean-delay", "0ms",
                   "--traffic-pattern", "cbr", "--traffic-rate", "16Mbit", "--frame-size", "1000",
                   "--duration", "5s", "--delay-series", csv.c_str(), "--delay-series-interval",
                   "0", "--quiet"},
                  &err),
              0)
        << err;
    const std::vector<Row> rows = read_trace(csv);
    // The model, fed the same arrivals: every 500 us from 0, 986 bytes each.
    test::MmLinkModel model(ms);
    const std::size_t frames = 10000;  // 5 s at 2000 frames/s
    for (std::size_t i = 0; i < frames; ++i)
        model.arrive(static_cast<std::int64_t>(i) * 500'000, 986);
    const std::vector<std::int64_t> want = model.finish();
    // linkem-sim ends its run once the arrivals stop and the queue is empty: all of them left.
    ASSERT_EQ(rows.size(), frames);
    for (std::size_t i = 0; i < frames; ++i)
        ASSERT_EQ(rows[i].departure, want[i]) << "frame " << i;
    // Per 100 ms (edges between opportunities): the bytes delivered, the model's, and the
    // trace's own (its opportunities in the window x 1504), each within one frame.
    for (std::int64_t w = 0; w < 45; ++w) {
        const std::int64_t a = w * 100'000'000 + 500'000, b = a + 100'000'000;
        std::int64_t got = 0, model_bytes = 0, opportunities = 0;
        for (const Row& r : rows)
            got += r.departure >= a && r.departure < b ? 986 : 0;
        for (std::int64_t t : want)
            model_bytes += t >= a && t < b ? 986 : 0;
        for (std::int64_t rep = 0; rep < 6; ++rep)
            for (std::uint32_t m : ms) {
                const std::int64_t t =
                    rep * 1'000'000'000 + static_cast<std::int64_t>(m) * 1'000'000;
                opportunities += t >= a && t < b;
            }
        EXPECT_LE(std::abs(got - model_bytes), 986) << "window " << w;
        EXPECT_LE(std::abs(got - opportunities * 1504), 1504) << "window " << w;
    }
}

TEST(SimScenario, EachPacketGetsTheStepOfItsArrival) {
    const std::string csv = testing::TempDir() + "/sim_scenario_out.csv";
    std::string err;
    // The built-in step response: 10 ms, 100 ms from 10 s, 10 ms from 20 s; CBR 100 frames/s.
    ASSERT_EQ(run({"--scenario", "step-response", "--traffic-rate", "1214400bit", "--delay-series",
                   csv.c_str(), "--delay-series-interval", "0", "--quiet"},
                  &err),
              0)
        << err;
    const std::vector<Row> rows = read_trace(csv);
    ASSERT_EQ(rows.size(), 3000u);  // --duration defaults to the scenario's 30 s
    std::int64_t last_departure = 0;
    for (const Row& r : rows) {
        const std::int64_t arrival = r.departure - r.delay;
        const std::int64_t want =
            arrival >= 10'000'000'000 && arrival < 20'000'000'000 ? 100'000'000 : 10'000'000;
        ASSERT_EQ(r.mean, want) << "arrival " << arrival;
        // Order is kept: after the step down, frames wait for those sent before it.
        ASSERT_EQ(r.delay, std::max(want, last_departure - arrival)) << "arrival " << arrival;
        last_departure = r.departure;
    }
}

TEST(SimScenario, BadInputNamesTheFlagFileAndLine) {
    auto error_of = [](std::vector<const char*> args) -> std::string {
        args.insert(args.begin(), "linkem-sim");
        try {
            (void)parse_cli(static_cast<int>(args.size()), args.data());
        } catch (const UsageError& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_NE(
        error_of({"--scenario", "no-such-scenario"}).find("no built-in scenario of that name"),
        std::string::npos);
    const std::string bad =
        write("sim_bad.json", R"({"steps": [{"at_s": 0, "set": {"jiter_us": 1}}]})");
    EXPECT_NE(
        error_of({"--scenario", bad.c_str()}).find("steps[0].set.jiter_us: unknown parameter"),
        std::string::npos)
        << error_of({"--scenario", bad.c_str()});
    const std::string back = write("sim_back.txt", "10\n20\n15\n");
    EXPECT_NE(error_of({"--arrivals", back.c_str()}).find("sim_back.txt:3: goes back"),
              std::string::npos);
    const std::string empty = write("sim_empty.trace", "");
    const std::string e = error_of({"--limiter", "trace", "--trace-file", empty.c_str()});
    EXPECT_NE(e.find("--trace-file"), std::string::npos) << e;
    EXPECT_NE(e.find("sim_empty.trace: empty"), std::string::npos) << e;
    EXPECT_NE(error_of({"--limiter", "trace"}).find("--trace-file"), std::string::npos);
    EXPECT_NE(error_of({"--direction", "up"}).find("allowed: a_to_b, b_to_a"), std::string::npos);
    EXPECT_NE(error_of({"--scenario", "step-response", "--sweep", "fig4"})
                  .find("not available with --sweep"),
              std::string::npos);
}

}  // namespace
}  // namespace linkem::sim
