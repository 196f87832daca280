// linkemd's built-in traffic, end to end: `linkemd --demo` runs for real (virtual ports,
// --no-huge, its own EAL file prefix, control and telemetry on ipc:// endpoints in a
// temporary directory) and is steered and watched over the protocol (docs/protocol.md), as
// linkemctl and the GUI do. The generator's own measurements are checked against the
// emulator's counters: counts and conservation exactly, the measured delay against the
// configured mean unless the run's stall counters say the machine disturbed it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "linkemd_process.hpp"
#include "tshark.hpp"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr double kDemoMeanNs = 20e6;  // linkemd --demo: 20 ms +- 4 ms

// `linkemd --demo <extra>` with endpoints of its own, subscribed to the delay topic.
class Linkemd : public linkem::test::LinkemdProcess {
  public:
    explicit Linkemd(const std::vector<std::string>& extra = {})
        : LinkemdProcess(with_demo(extra), {"delay"}) {}
    json delay_message(std::chrono::milliseconds wait) { return next_body(wait); }

  private:
    static std::vector<std::string> with_demo(const std::vector<std::string>& extra) {
        std::vector<std::string> a = {"--demo"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

const char* const kDirs[] = {"a_to_b", "b_to_a"};

std::uint64_t u(const json& j, const char* key) {
    return j.at(key).get<std::uint64_t>();
}

std::uint64_t drops(const json& d) {  // every cause: the "drops_<cause>" counters
    std::uint64_t n = 0;
    for (auto it = d.begin(); it != d.end(); ++it)
        if (it.key().rfind("drops_", 0) == 0) n += it.value().get<std::uint64_t>();
    return n;
}

// Whether the data plane's own stall counters say the interval between two stats bodies
// was disturbed (stalls took over 1 % of it, or one lasted over 1 ms).
std::string disturbed(const json& before, const json& after) {
    const double span = static_cast<double>(u(after, "t_ns") - u(before, "t_ns"));
    for (const char* dir : kDirs) {
        const double stall =
            static_cast<double>(u(after[dir], "stall_ns") - u(before[dir], "stall_ns"));
        if (stall > 0.01 * span || u(after[dir], "longest_stall_ns") > 1'000'000)
            return std::string(dir) + ": stalls of " + std::to_string(stall / 1e6) + " ms in " +
                   std::to_string(span / 1e6) + " ms, the longest " +
                   std::to_string(u(after[dir], "longest_stall_ns") / 1e6) + " ms";
    }
    return "";
}

// Polls get_stats until both directions' traffic counters satisfy `ok` (or `limit` passes);
// returns the last stats body.
template <class Pred>
json wait_traffic(Linkemd& d, Pred ok, std::chrono::seconds limit = std::chrono::seconds(90)) {
    const auto until = Clock::now() + limit;
    json s;
    while (Clock::now() < until) {
        s = d.result("get_stats");
        bool all = true;
        for (const char* dir : kDirs)
            all = all && s[dir].contains("traffic") && ok(s[dir]["traffic"]);
        if (all) return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return s;
}

// Stops the traffic, waits until nothing is in flight, and returns the settled stats.
json drained(Linkemd& d) {
    d.result("set_traffic", {{"running", false}});
    json s;
    const auto until = Clock::now() + std::chrono::seconds(90);
    int idle_polls = 0;
    std::uint64_t last = ~0ull;
    while (Clock::now() < until && idle_polls < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        s = d.result("get_stats");
        bool idle = true;
        std::uint64_t received = 0;
        for (const char* dir : kDirs) {
            idle = idle && u(s[dir], "in_flight") == 0 && u(s[dir], "tx_queued") == 0 &&
                   u(s[dir]["traffic"], "sent") == u(s[dir], "packets_in");
            received += u(s[dir]["traffic"], "received");
        }
        // Idle, and the generator's counts have not moved for a few polls (it reports every
        // 50 ms, later on a loaded machine).
        idle_polls = idle && received == last ? idle_polls + 1 : 0;
        last = received;
    }
    return s;
}

TEST(LinkemdTraffic, DemoMeasuresDelayAndLossInBothDirections) {
    Linkemd d;
    const json hello = d.result("hello");
    ASSERT_TRUE(hello.contains("capabilities")) << d.log();
    EXPECT_EQ(hello["capabilities"]["traffic"], true);
    const auto t0 = Clock::now();
    const json first = d.result("get_stats");
    // Traffic in both directions with a measured delay (2 s of frames); within 10 s unless
    // the machine held the data plane up.
    const json s = wait_traffic(
        d, [](const json& t) { return t["delay"]["count"].get<std::uint64_t>() >= 2000; });
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    for (const char* dir : kDirs)
        ASSERT_GE(s[dir]["traffic"]["delay"]["count"].get<std::uint64_t>(), 2000u)
            << dir << ": " << s.dump() << "\n"
            << d.log();
    std::string why = disturbed(first, s);
    if (why.empty()) {
        EXPECT_LE(took, 10.0) << "2 s of traffic took " << took << " s to measure";
    }
    for (const char* dir : kDirs) {
        const json& t = s[dir]["traffic"];
        EXPECT_GT(u(t, "sent"), 0u) << dir;
        EXPECT_GT(u(t, "received"), 0u) << dir;
        EXPECT_LE(u(t, "received") + u(t, "lost"), u(t, "sent")) << dir;
        EXPECT_EQ(u(t, "duplicates"), 0u) << dir;
        EXPECT_EQ(u(t, "out_of_order"), 0u) << dir << ": the demo keeps order (correlated)";
        EXPECT_GT(t["delay"]["jitter_ns"].get<double>(), 0.0) << dir;  // the measured jitter
    }
    // Within 5 % of the configured mean, widened by the statistics of a short window:
    // correlated delays (weight alpha per packet) make the mean of N of them wander with an
    // sd of sd * sqrt((1 + alpha) / (1 - alpha) / N), ~0.7 ms for 2000 frames of the demo's
    // 20 ms +- 4 ms at 1000 frames/s; four of those on top keep a right emulator from
    // failing here by chance (the clock's exactness is integration.clock_delay's to check).
    if (why.empty())
        for (const char* dir : kDirs) {
            const json& d = s[dir]["traffic"]["delay"];
            const double mean = d["mean_ns"].get<double>(), sd = d["jitter_ns"].get<double>();
            const double n = d["count"].get<double>(), a = s[dir]["alpha"].get<double>();
            const double sd_of_mean = sd * std::sqrt((1 + a) / (1 - a) / n);
            EXPECT_NEAR(mean, kDemoMeanNs, 0.05 * kDemoMeanNs + 4 * sd_of_mean)
                << dir << ": " << s[dir].dump();
        }

    // The delay topic carries measured samples beside the applied delay.
    json m;
    auto complete = [](const json& msg) {
        if (!msg.is_object()) return false;
        for (const char* dir : kDirs)
            if (!msg[dir].contains("measured") || msg[dir]["measured"]["delay_ns"].empty() ||
                msg[dir]["measured_delay"]["count"].get<std::uint64_t>() == 0)
                return false;
        return true;
    };
    for (int i = 0; i < 120 && !complete(m); ++i)
        m = d.delay_message(std::chrono::milliseconds(500));
    ASSERT_TRUE(m.is_object()) << "no delay message";
    for (const char* dir : kDirs) {
        ASSERT_TRUE(m[dir].contains("measured")) << m.dump();
        const json& ms = m[dir]["measured"];
        EXPECT_EQ(ms["send_ns"].size(), ms["delay_ns"].size());
        EXPECT_FALSE(ms["delay_ns"].empty()) << dir;
        for (const json& v : ms["delay_ns"])
            EXPECT_GT(v.get<double>(), 0.0);
        EXPECT_GT(m[dir]["measured_delay"]["count"].get<std::uint64_t>(), 0u) << dir;
        EXPECT_GE(m[dir]["measured_delay"]["count"].get<std::uint64_t>(), ms["delay_ns"].size());
        EXPECT_TRUE(m[dir].contains("delay")) << dir;  // the applied delay, as before
    }

    // Measured loss (sequence gaps) against the emulator's own drops, once nothing is in
    // flight: every frame sent entered the emulator, every frame it sent out arrived.
    const json f = drained(d);
    for (const char* dir : kDirs) {
        const json& t = f[dir]["traffic"];
        const json& e = f[dir];
        EXPECT_EQ(u(t, "sent"), u(e, "packets_in")) << dir << f.dump();
        EXPECT_EQ(u(t, "received"), u(e, "packets_out")) << dir << f.dump();
        EXPECT_EQ(u(t, "sent") - u(t, "received"), drops(e)) << dir << f.dump();
        EXPECT_GT(u(e, "drops_loss"), 0u) << dir << ": the demo loses 0.5 %";
        // Drops after the last frame that arrived leave no gap: with random loss alone, at
        // most a few. (When the machine holds the data plane up, the backlog it then takes
        // at once can overfill the demo's spacer, drops_spacer, the last frames too.)
        EXPECT_LE(u(t, "lost"), drops(e)) << dir;
        if (u(e, "drops_spacer") == 0) {
            EXPECT_LE(drops(e) - u(t, "lost"), 3u) << dir << f.dump();
        }
        EXPECT_EQ(u(e, "drops_policer") + u(e, "drops_buffer_full"), 0u) << dir;
    }
    if (!why.empty())
        GTEST_SKIP() << "the 10 s and the measured mean delay (within 5 % of 20 ms) not checked: "
                     << "the run was disturbed (" << why << ")";
}

TEST(LinkemdTraffic, SetTrafficChangesTheRateAndRefusesBadValues) {
    Linkemd d;
    const json before = d.result("get_traffic");
    ASSERT_EQ(before["available"], true) << before.dump() << d.log();
    EXPECT_EQ(before["running"], true);
    EXPECT_EQ(before["pattern"], "cbr");
    EXPECT_EQ(before["frame_size_bytes"], 1518);
    EXPECT_NEAR(before["frames_per_s"].get<double>(), 1000, 1e-6);  // the demo's

    // Bad values name the field and change nothing.
    for (const json& bad : {json{{"frame_size_bytes", 9000}}, json{{"pattern", "square"}},
                            json{{"rate_bps", 2000 * 8 * 1518.0}, {"pattern", "square"}},
                            json{{"rate_bps", "fast"}}, json{{"colour", "red"}}}) {
        const json r = d.call("set_traffic", bad);
        ASSERT_TRUE(r.contains("error")) << bad.dump() << ": " << r.dump();
        EXPECT_EQ(r["error"]["code"], "invalid_params") << r.dump();
        const std::string field = r["error"].value("field", "");
        const std::string key = bad.contains("pattern") ? "pattern" : bad.begin().key();
        EXPECT_EQ(field, key) << r.dump();
        EXPECT_NE(r["error"]["message"].get<std::string>().find(key), std::string::npos)
            << r.dump();
        EXPECT_EQ(d.result("get_traffic"), before) << bad.dump();
    }

    // 2000 frames/s instead of 1000: a new run, counted from 0 at the new rate.
    const json after = d.result("set_traffic", {{"rate_bps", 2000 * 8 * 1518.0}});
    EXPECT_NEAR(after["frames_per_s"].get<double>(), 2000, 1e-6);
    EXPECT_EQ(after["run"].get<int>(), before["run"].get<int>() + 1);
    EXPECT_EQ(d.result("get_traffic"), after);
    const json s0 = wait_traffic(
        d, [&](const json& t) { return t["run"] == after["run"] && u(t, "sent") >= 1000; });
    for (const char* dir : kDirs)
        ASSERT_EQ(s0[dir]["traffic"]["run"], after["run"]) << dir;
    const json s1 = wait_traffic(d, [&](const json& t) {
        return u(t, "sent") >= u(s0["a_to_b"]["traffic"], "sent") + 6000;
    });
    for (const char* dir : kDirs) {
        ASSERT_EQ(s1[dir]["traffic"]["run"], after["run"]);
        const double sent =
            static_cast<double>(u(s1[dir]["traffic"], "sent") - u(s0[dir]["traffic"], "sent"));
        const double span = static_cast<double>(u(s1, "t_ns") - u(s0, "t_ns")) / 1e9;
        // The generator catches up after it was held up, so its count follows the rate; the
        // counts are up to a report (50 ms, later when the machine holds the generator up)
        // older than t_ns: over >= 3 s, 2000 frames/s within 15 %, and never the old 1000.
        EXPECT_LT(sent / span, 6000) << dir;
        EXPECT_GT(sent / span, 1300) << dir;
        const std::string why = disturbed(s0, s1);
        if (why.empty())
            EXPECT_NEAR(sent / span, 2000, 2000 * 0.15) << dir;
        else
            std::cout << "[  NOTE    ] " << dir << ": " << sent / span
                      << " frames/s; the 15 % bound not checked: disturbed (" << why << ")\n";
    }
}

TEST(LinkemdTraffic, ANewRunCountsFromZeroInEveryStatsMessage) {
    // Stats every 10 ms, polled every 5 ms: the messages between a set_traffic and the new
    // run's first report from the generator (up to 50 ms, longer when the machine holds the
    // generator up) are seen. Each shows the new run counted from 0, never the run before's
    // counts under the new run's number; and a run's counts never go down.
    Linkemd d({"--telemetry-hz", "100"});
    json s = wait_traffic(d, [](const json& t) { return u(t, "sent") >= 3000; });
    for (int change = 0; change < 6; ++change) {
        const double fps = change % 2 ? 10000 : 9000;
        std::uint64_t before = ~0ull;
        for (const char* dir : kDirs)
            before = std::min(before, u(s[dir]["traffic"], "sent"));
        const json r = d.result("set_traffic", {{"rate_bps", fps * 8 * 1518.0}});
        std::uint64_t last[2] = {0, 0};
        int seen = 0;
        const auto until = Clock::now() + std::chrono::milliseconds(400);
        while (Clock::now() < until || seen < 3) {
            s = d.result("get_stats");
            for (int k = 0; k < 2; ++k) {
                const json& t = s[kDirs[k]]["traffic"];
                if (t["run"] != r["run"]) continue;
                ++seen;
                const std::uint64_t sent = u(t, "sent");
                ASSERT_GE(sent, last[k])
                    << kDirs[k] << ": counts of run " << r["run"] << " went down: " << t.dump();
                if (last[k] == 0 && sent > 0) {
                    EXPECT_LT(sent, before) << kDirs[k] << ": run " << r["run"] << "'s first "
                                            << "count is the run before's: " << t.dump();
                }
                last[k] = sent;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            ASSERT_LT(Clock::now(), until + std::chrono::seconds(30)) << "no stats of the run";
        }
        s = wait_traffic(
            d, [&](const json& t) { return t["run"] == r["run"] && u(t, "sent") >= 3000; });
    }
}

TEST(LinkemdTraffic, ReorderedStrategyShowsOutOfOrderCorrelatedNone) {
    Linkemd d;
    // The demo's 4 ms jitter at 9000 frames/s: independent delays reorder most frames.
    d.result("set_link", {{"strategy", "reordered"}});
    const json r0 = d.result("set_traffic", {{"rate_bps", 9000 * 8 * 1518.0}});  // a new run
    const json r = wait_traffic(
        d, [&](const json& t) { return t["run"] == r0["run"] && u(t, "received") >= 5000; });
    for (const char* dir : kDirs) {
        EXPECT_GE(u(r[dir]["traffic"], "received"), 5000u) << dir << r[dir].dump();
        EXPECT_GT(u(r[dir]["traffic"], "out_of_order"), 100u) << dir << r[dir].dump();
        EXPECT_EQ(u(r[dir]["traffic"], "duplicates"), 0u) << dir;
    }
    d.result("set_link", {{"strategy", "correlated"}});
    const json c0 = d.result("set_traffic", {{"rate_bps", 10000 * 8 * 1518.0}});
    const json c = wait_traffic(
        d, [&](const json& t) { return t["run"] == c0["run"] && u(t, "received") >= 5000; });
    for (const char* dir : kDirs) {
        EXPECT_GE(u(c[dir]["traffic"], "received"), 5000u) << dir << c[dir].dump();
        EXPECT_EQ(u(c[dir]["traffic"], "out_of_order"), 0u) << dir << c[dir].dump();
    }
}

// ------------------------------------------------------------------------ capture
// One record of a capture as tshark reads it.
struct Rec {
    unsigned iface = 0;
    std::int64_t t = 0;                    // ns since 1970
    std::map<std::string, std::string> f;  // the comment's keys
    int gen_dir = -1;                      // the built-in frame's direction and number
    std::uint64_t gen_seq = 0;
    std::int64_t num(const char* k) const { return std::stoll(f.at(k)); }
};

std::vector<Rec> read_records(const std::string& file, const std::string& extra, int& rc) {
    const linkem::test::TsharkRows t = linkem::test::tshark_fields(
        file, {"frame.interface_id", "frame.time_epoch", "frame.comment", "data.data"}, extra);
    rc = t.rc;
    std::vector<Rec> out;
    for (const auto& col : t.rows) {
        Rec r;
        r.iface = static_cast<unsigned>(std::stoul(col[0]));
        r.t = linkem::test::epoch_ns(col[1]);
        r.f = linkem::test::comment_fields(col[2]);
        // The built-in frame's header (host order): magic, direction @4, seq @16.
        const std::string& hex = col[3];
        if (hex.size() >= 48 && hex.substr(0, 8) == "4e474b4c") {
            r.gen_dir = std::stoi(hex.substr(8, 2), nullptr, 16);
            for (int i = 7; i >= 0; --i)
                r.gen_seq = r.gen_seq << 8 | std::stoul(hex.substr(32 + i * 2, 2), nullptr, 16);
        }
        out.push_back(std::move(r));
    }
    return out;
}

// A capture of the demo's built-in traffic, started and stopped over the protocol with the
// traffic paused around it, read back by tshark: a record for every frame linkemd sent or
// dropped while it ran (its counters' increase, by cause; every built-in sequence number once),
// in time order per interface, and every packet the data plane's own delay samples followed
// has its out record with the same delay, scheduled delay and time in linkemd.
TEST(LinkemdTraffic, CaptureAgreesWithTheDataPlanesOwnAccount) {
    if (!linkem::test::have_tshark())
        GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh)";
    Linkemd d;
    wait_traffic(d, [](const json& t) { return u(t, "received") >= 100; });
    const json s0 = drained(d);
    const std::string file =
        fs::temp_directory_path() / ("linkem-demo-capture-" + std::to_string(getpid()) + ".pcapng");
    const json started = d.result("capture_start", {{"file", file}});
    ASSERT_EQ(started.value("running", false), true) << started.dump() << d.log();
    d.result("set_traffic", {{"running", true}});
    // The delay topic's samples for ~3 s: (direction, arrival) -> (delay, scheduled, actual).
    std::multimap<std::pair<int, std::int64_t>, std::array<std::int64_t, 3>> samples;
    const auto until = Clock::now() + std::chrono::seconds(3);
    while (Clock::now() < until) {
        const json m = d.delay_message(std::chrono::milliseconds(500));
        if (!m.is_object()) continue;
        for (int k = 0; k < 2; ++k) {
            if (!m.contains(kDirs[k]) || !m[kDirs[k]].contains("samples")) continue;
            const json& sm = m[kDirs[k]]["samples"];
            for (std::size_t i = 0; i < sm["arrival_ns"].size(); ++i)
                samples.insert({{k, sm["arrival_ns"][i].get<std::int64_t>()},
                                {sm["delay_ns"][i].get<std::int64_t>(),
                                 sm["scheduled_ns"][i].get<std::int64_t>(),
                                 sm["actual_ns"][i].get<std::int64_t>()}});
        }
    }
    const json s1 = drained(d);
    const json st = d.result("capture_stop");
    EXPECT_EQ(st.value("capture_missed", -1), 0) << st.dump();
    int rc = 0;
    const std::vector<Rec> recs = read_records(file, "", rc);
    EXPECT_EQ(rc, 0) << "tshark -r " << file;
    ASSERT_EQ(recs.size(), st.value("records", 0u)) << st.dump();
    // The clock's offset: the section header's comment.
    std::int64_t offset = 0;
    {
        FILE* p = ::popen(("capinfos -k '" + file + "' 2>/dev/null").c_str(), "r");
        char buf[512];
        while (std::fgets(buf, sizeof buf, p))
            if (const char* at = std::strstr(buf, "utc_offset_ns=")) offset = std::atoll(at + 14);
        ::pclose(p);
    }
    ASSERT_NE(offset, 0) << "no linkem utc_offset_ns in the section header";
    std::uint64_t outs[2] = {}, backwards = 0;
    std::map<std::string, std::uint64_t> drops;
    std::map<unsigned, std::int64_t> last;
    std::set<std::uint64_t> seqs[2];
    std::uint64_t dup_seqs = 0;
    std::multimap<std::pair<int, std::int64_t>, const Rec*> by_arrival;
    for (const Rec& r : recs) {
        backwards += r.t < last[r.iface];
        last[r.iface] = r.t;
        if (r.gen_dir >= 0) dup_seqs += !seqs[r.gen_dir].insert(r.gen_seq).second;
        if (r.iface == 4) {
            ++drops[r.f.at("drop")];
            continue;
        }
        ASSERT_TRUE(r.iface == 1 || r.iface == 3) << "points out,drop only";
        const int k = r.iface == 1 ? 0 : 1;
        ++outs[k];
        EXPECT_EQ(r.gen_dir, k) << "a built-in frame of its direction";
        ASSERT_TRUE(r.f.count("arrived_ns")) << "traffic paused at the start: no frame in flight";
        by_arrival.insert({{k, r.num("arrived_ns") - offset}, &r});
    }
    EXPECT_EQ(backwards, 0u) << "time stamps increase per interface";
    EXPECT_EQ(dup_seqs, 0u);
    for (int k = 0; k < 2; ++k) {
        const json &a = s0[kDirs[k]], &b = s1[kDirs[k]];
        EXPECT_EQ(outs[k], u(b, "packets_out") - u(a, "packets_out")) << kDirs[k];
        // Every frame sent while the capture ran (and none before): its number once, no gap.
        ASSERT_FALSE(seqs[k].empty());
        EXPECT_EQ(seqs[k].size(), u(b, "packets_in") - u(a, "packets_in")) << kDirs[k];
        EXPECT_EQ(*seqs[k].rbegin() - *seqs[k].begin() + 1, seqs[k].size()) << kDirs[k];
    }
    for (const char* cause : {"loss", "policer", "spacer", "buffer_full", "class"}) {
        const std::string key = std::string("drops_") + cause;
        std::uint64_t n = 0;
        for (const char* dir : kDirs)
            n += s1[dir].value(key, 0ull) - s0[dir].value(key, 0ull);
        EXPECT_EQ(drops[cause], n) << cause;
    }
    EXPECT_GT(drops["loss"], 0u) << "the demo loses 0.5 %";
    // The data plane's own account of the packets it sampled.
    std::size_t matched = 0, unmatched = 0;
    for (const auto& [key, v] : samples) {
        auto [lo, hi] = by_arrival.equal_range(key);
        bool found = false;
        for (auto it = lo; it != hi && !found; ++it) {
            const Rec& r = *it->second;
            found = r.num("delay_ns") == v[0] && r.num("scheduled_ns") == v[1] &&
                    r.t - r.num("arrived_ns") == v[2];
        }
        if (lo == hi) continue;  // a sample of a frame before the capture (or after)
        found ? ++matched : ++unmatched;
    }
    std::printf("%zu records; %zu delay samples matched by their record, %zu not\n", recs.size(),
                matched, unmatched);
    EXPECT_GT(matched, 100u);
    EXPECT_EQ(unmatched, 0u);
    // linkem.lua, where the tree has it: its loss filter finds the loss records.
    const std::string lua = std::string(LINKEM_SOURCE_DIR) + "/packaging/wireshark/linkem.lua";
    if (fs::exists(lua)) {
        const std::vector<Rec> lost =
            read_records(file, "-X lua_script:" + lua + " -Y 'linkem.drop == \"loss\"'", rc);
        EXPECT_EQ(lost.size(), drops["loss"]);
    }
    fs::remove(file);
}

}  // namespace
