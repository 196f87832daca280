// linkemctl end to end against a real linkemd on its own virtual ports (DPDK, --no-huge, its
// own --file-prefix, built-in CBR traffic), with control and telemetry on ipc:// endpoints in
// a temporary directory: every command, its output and its exit code (0 ok, 1 refused,
// 2 usage, 3 no answer); save/load through a --config file; shutdown with and without
// --allow-remote-shutdown; keygen and CURVE on loopback TCP; capture start/stop/status and
// linkemd --capture, the files read back with tshark. And the Python example client
// (examples/python/linkem_client.py) against the same linkemd.
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Drops of every cause in a stats direction object: its "drops_<cause>" counters.
std::uint64_t all_drops(const json& c) {
    std::uint64_t n = 0;
    for (auto it = c.begin(); it != c.end(); ++it)
        if (it.key().rfind("drops_", 0) == 0) n += it.value().get<std::uint64_t>();
    return n;
}

struct Result {
    int code = -1;
    std::string out, err;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string g_dir;  // the temporary directory of this run

Result run_shell(const std::string& command) {
    static int n = 0;
    const std::string err_file = g_dir + "/stderr." + std::to_string(++n);
    Result r;
    FILE* p = popen(("{ " + command + "; } 2>" + err_file).c_str(), "r");
    if (!p) return r;
    char buf[4096];
    std::size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, got);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(err_file);
    fs::remove(err_file);
    return r;
}

std::string ctl_cmd(const std::string& control, const std::string& args) {
    return std::string(LINKEMCTL_PATH) + " --control " + control + " " + args;
}

// A linkemd in the background; stopped with SIGTERM when it goes.
class Linkemd {
  public:
    Linkemd(const std::string& name, const std::string& control, const std::string& telemetry,
            const std::string& args)
        : control_(control), log_(g_dir + "/" + name + ".log") {
        const std::string cmd = std::string("exec ") + LINKEMD_PATH + " --control " + control +
                                " --telemetry " + telemetry + " --stats-interval 0 --mbufs 16384 " +
                                args + " >" + log_ + ".out 2>" + log_;
        pid_ = fork();
        if (pid_ == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the test
            execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    ~Linkemd() { stop(); }

    /// Waits until it answers hello (extra: linkemctl options such as CURVE keys).
    bool ready(const std::string& extra = "") {
        const auto deadline = std::chrono::steady_clock::now() + 90s;
        while (std::chrono::steady_clock::now() < deadline) {
            if (exited()) return false;
            if (run_shell(ctl_cmd(control_, extra + " --timeout 1s hello")).code == 0) return true;
            std::this_thread::sleep_for(200ms);
        }
        return false;
    }
    bool exited() {
        if (pid_ <= 0) return true;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            status_ = status;
            pid_ = -1;
            return true;
        }
        return false;
    }
    /// Waits up to `limit` for it to exit by itself; its exit code, or -1.
    int wait_exit(std::chrono::seconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            if (exited()) return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
            std::this_thread::sleep_for(50ms);
        }
        return -1;
    }
    int stop() {
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            if (wait_exit(30s) < 0 && pid_ > 0) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &status_, 0);
                pid_ = -1;
            }
        }
        return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
    }
    std::string log() const { return slurp(log_); }

  private:
    std::string control_, log_;
    pid_t pid_ = -1;
    int status_ = 0;
};

int free_tcp_port() {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    close(s);
    return ntohs(a.sin_port);
}

// The shared linkemd: two virtual ports with built-in CBR traffic, a --config file.
class Linkemctl : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        config_ = g_dir + "/linkemd.json";
        std::ofstream(config_) << R"({"port_a": "virtual", "port_b": "virtual", "burst": 32,
                                      "mean_delay_us": 1000})"
                               << "\n";
        control_ = "ipc://" + g_dir + "/control";
        telemetry_ = "ipc://" + g_dir + "/telemetry";
        linkemd_ = new Linkemd("shared", control_, telemetry_,
                               "--config " + config_ + " --traffic-pattern cbr");
        ready_ = linkemd_->ready();
    }
    static void TearDownTestSuite() {
        delete linkemd_;
        linkemd_ = nullptr;
    }
    void SetUp() override { ASSERT_TRUE(ready_) << "linkemd did not start:\n" << linkemd_->log(); }

    static Result ctl(const std::string& args) { return run_shell(ctl_cmd(control_, args)); }
    static json ctl_json(const std::string& args) {
        const Result r = ctl("--json " + args);
        EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
        try {
            return json::parse(r.out);
        } catch (const json::exception& e) {
            ADD_FAILURE() << args << ": not JSON: " << r.out;
            return json();
        }
    }

    static inline std::string config_, control_, telemetry_;
    static inline Linkemd* linkemd_ = nullptr;
    static inline bool ready_ = false;
};

TEST_F(Linkemctl, HelloSaysWhoIsThere) {
    const Result r = ctl("hello");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("linkemd 0.1.0 (protocol 1), instance "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("directions: a_to_b, b_to_a"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("telemetry: " + telemetry_), std::string::npos) << r.out;
    const json j = ctl_json("hello");
    EXPECT_EQ(j["protocol_version"], 1);
    EXPECT_EQ(j["instance_id"].get<std::string>().size(), 16u);
    EXPECT_EQ(j["capabilities"]["save_config"], true);
    EXPECT_EQ(j["capabilities"]["shutdown"], false);
    EXPECT_TRUE(j["link_params_schema"].contains("mean_delay_us"));
}

TEST_F(Linkemctl, SetThenGetShowsTheNewValues) {
    const json before = ctl_json("get");
    const Result r =
        ctl("set --mean-delay 20ms --b-to-a-loss-model bernoulli --b-to-a-loss-probability 0.01");
    ASSERT_EQ(r.code, 0) << r.err;
    // It prints the parameters now in force.
    EXPECT_NE(r.out.find("parameters in force (generation "), std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("mean_delay_us +20000 +20000"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("loss_probability +0 +0.01"))) << r.out;
    const json after = ctl_json("get");
    EXPECT_EQ(after["params_generation"].get<int>(), before["params_generation"].get<int>() + 1);
    EXPECT_EQ(after["a_to_b"]["mean_delay_us"], 20000.0);
    EXPECT_EQ(after["b_to_a"]["mean_delay_us"], 20000.0);
    EXPECT_EQ(after["b_to_a"]["loss_model"], "bernoulli");
    EXPECT_EQ(after["b_to_a"]["loss_probability"], 0.01);
    EXPECT_EQ(after["a_to_b"]["loss_model"], before["a_to_b"]["loss_model"]);
    // One direction only; --json gives set_link's result.
    const json one = ctl_json("set --a-to-b-jitter 2ms --b-to-a-loss-model none");
    ASSERT_TRUE(one["applied"].is_boolean()) << one.dump();
    if (!one["applied"].get<bool>()) {
        // docs/protocol.md: the data plane did not acknowledge within 2 s (held up on a busy
        // machine); it adopts the change as soon as it runs again, which its stats show.
        const int gen = one["params_generation"].get<int>();
        std::printf(
            "set not acknowledged within 2 s; waiting for the data plane to run "
            "generation %d\n",
            gen);
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        int runs = -1;
        while (std::chrono::steady_clock::now() < deadline) {
            const json s = ctl_json("stats");
            runs = std::min(s["a_to_b"]["params_generation"].get<int>(),
                            s["b_to_a"]["params_generation"].get<int>());
            if (runs >= gen) break;
            std::this_thread::sleep_for(100ms);
        }
        EXPECT_GE(runs, gen) << "the data plane did not adopt the change within 30 s";
    }
    EXPECT_EQ(one["a_to_b"]["jitter_us"], 2000.0);
    EXPECT_EQ(one["b_to_a"]["jitter_us"], before["b_to_a"]["jitter_us"]);
    EXPECT_EQ(one["b_to_a"]["loss_model"], "none");
    EXPECT_EQ(ctl("set --jitter 0ms").code, 0);
}

TEST_F(Linkemctl, RefusedValueExits1NamingTheFieldAndChangesNothing) {
    const json before = ctl_json("get");
    // Each value is allowed on its own; together they are not (constant means no jitter).
    const Result r = ctl("set --a-to-b-distribution constant --a-to-b-jitter 1ms");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("invalid_params"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("field a_to_b.jitter_us"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--a-to-b-jitter"), std::string::npos) << r.err;
    const Result j = ctl("--json set --a-to-b-distribution constant --a-to-b-jitter 1ms");
    EXPECT_EQ(j.code, 1);
    EXPECT_EQ(json::parse(j.out)["error"]["field"], "a_to_b.jitter_us") << j.out;
    EXPECT_EQ(ctl_json("get"), before);
}

TEST_F(Linkemctl, UsageErrorsExit2NamingTheFlag) {
    const json before = ctl_json("get");
    struct Case {
        const char* args;
        const char* mentions;
        const char* mentions2;
    };
    for (const Case& c : {
             Case{"set --mean-delay 10", "--mean-delay", "unit"},
             Case{"set --b-to-a-loss-probability 1.5", "--b-to-a-loss-probability", "0 .. 1"},
             Case{"set --strategy sideways", "--strategy", "correlated"},
             Case{"set --mean-dealy 10ms", "--mean-dealy", "--help"},
             Case{"set", "no link parameter", "--mean-delay"},
             Case{"--timeout soon hello", "--timeout", "unit"},
             Case{"", "subcommand", "--help"},
             Case{"frobnicate", "frobnicate", "--help"},
             Case{"watch --interval 0s", "--interval", "greater than 0"},
             Case{"traffic --traffic-rate fast", "--traffic-rate", "bit rate"},
             Case{"--curve-server-key /nonexistent.key hello", "--curve-secret", "together"},
             Case{
                 "--curve-server-key /nonexistent.key --curve-secret /nonexistent.key_secret hello",
                 "/nonexistent.key", "cannot open"},
         }) {
        const Result r = ctl(c.args);
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions2), std::string::npos) << c.args << "\n" << r.err;
    }
    EXPECT_EQ(ctl_json("get"), before);
    // --help documents the exit codes.
    const Result h = ctl("--help");
    EXPECT_EQ(h.code, 0);
    EXPECT_NE(h.out.find("3 no answer"), std::string::npos) << h.out;
    const Result hs = ctl("set --help");
    EXPECT_EQ(hs.code, 0);
    EXPECT_NE(hs.out.find("--mean-delay"), std::string::npos) << hs.out;
}

// The queue discipline's flags: a value no flag allows is a usage error (2) naming the flag
// and what is allowed; a combination linkemd refuses exits 1 naming the field and the flag;
// neither changes anything. fq_codel with a limit in packets is taken, and get and stats
// show it.
TEST_F(Linkemctl, QueueFlagsAreCheckedAndShown) {
    const json before = ctl_json("get");
    struct Case {
        const char* args;
        int code;
        const char* mentions;
        const char* mentions2;
    };
    for (const Case& c : {
             Case{"set --queue red", 2, "--queue: 'red'", "'droptail', 'codel', 'fq_codel', 'pie'"},
             Case{"set --queue-limit 0p", 2, "--queue-limit: '0p'", "at least 1p"},
             Case{"set --queue-limit 10x", 2, "--queue-limit: '10x'", "or packets (1000p)"},
             Case{"set --limiter spacer --rate 10Mbit --codel-target 7ms --queue pie", 1,
                  "--codel-target", "belongs to queue 'codel' or 'fq_codel', not 'pie'"},
             Case{"set --limiter policer --rate 10Mbit --queue codel --ecn on", 1, "--ecn",
                  "needs a limiter that queues, spacer or trace"},
         }) {
        const Result r = ctl(c.args);
        EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions2), std::string::npos) << c.args << "\n" << r.err;
    }
    EXPECT_EQ(ctl_json("get"), before);

    const Result r =
        ctl("set --limiter spacer --rate 100Mbit --queue fq_codel --queue-limit 1000p");
    ASSERT_EQ(r.code, 0) << r.err;
    const json after = ctl_json("get");
    for (const char* d : {"a_to_b", "b_to_a"}) {
        EXPECT_EQ(after[d]["queue"], "fq_codel") << d;
        EXPECT_EQ(after[d]["queue_limit_packets"], 1000) << d;
    }
    const Result g = ctl("get");
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_TRUE(std::regex_search(g.out, std::regex("queue +fq_codel +fq_codel"))) << g.out;
    EXPECT_TRUE(std::regex_search(g.out, std::regex("queue_limit_packets +1000 +1000"))) << g.out;
    const json s = ctl_json("stats");
    for (const char* d : {"a_to_b", "b_to_a"}) {
        EXPECT_TRUE(s[d].contains("drops_aqm")) << s.dump();
        EXPECT_TRUE(s[d].contains("ecn_marked")) << s.dump();
    }
    const Result t = ctl("stats");
    ASSERT_EQ(t.code, 0) << t.err;
    EXPECT_NE(t.out.find("ecn_marked"), std::string::npos) << t.out;
    // Back as it was.
    ASSERT_EQ(ctl("set --limiter " + before["a_to_b"]["limiter"].get<std::string>() +
                  " --queue droptail --queue-limit " +
                  std::to_string(before["a_to_b"]["queue_limit_bytes"].get<std::uint64_t>()))
                  .code,
              0);
    const json restored = ctl_json("get");
    for (const char* d : {"a_to_b", "b_to_a"})
        for (const char* k : {"limiter", "queue", "queue_limit_bytes", "queue_limit_packets"})
            EXPECT_EQ(restored[d][k], before[d][k]) << d << "." << k;
}

TEST_F(Linkemctl, NoAnswerExits3) {
    const std::string nowhere = "ipc://" + g_dir + "/nothing-here";
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = run_shell(ctl_cmd(nowhere, "--timeout 300ms hello"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("no answer from " + nowhere), std::string::npos) << r.err;
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
    EXPECT_EQ(run_shell(ctl_cmd(nowhere, "--timeout 200ms set --mean-delay 1ms")).code, 3);
    EXPECT_EQ(run_shell(ctl_cmd(nowhere, "--timeout 200ms watch")).code, 3);
}

TEST_F(Linkemctl, StatsBalance) {
    const json s = ctl_json("stats");
    for (const char* d : {"a_to_b", "b_to_a"}) {
        const json& c = s[d];
        ASSERT_TRUE(c.contains("packets_in")) << s.dump();
        EXPECT_EQ(c["packets_in"].get<std::uint64_t>(), c["packets_out"].get<std::uint64_t>() +
                                                            all_drops(c) +
                                                            c["in_flight"].get<std::uint64_t>())
            << d;
    }
    const Result t = ctl("stats");
    ASSERT_EQ(t.code, 0) << t.err;
    EXPECT_NE(t.out.find("in_flight"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("port a ("), std::string::npos) << t.out;
}

// A table per interval, with rates from the deltas of the cumulative counters: in the second
// table each rate is the counter's growth since the first over the time between them (exact
// whatever the load: a generator held up by a busy machine sends less, and the rate says so).
TEST_F(Linkemctl, WatchPrintsATableOfRates) {
    const Result r = ctl("watch --interval 300ms --count 2");
    ASSERT_EQ(r.code, 0) << r.err;
    std::istringstream lines(r.out);
    std::string line;
    int tables = 0, rows = 0;
    double t[2] = {0, 0};
    struct Row {
        unsigned long long rx, tx;
        double rx_pps, tx_pps;
    } row[2][2] = {};  // [table][direction]
    while (std::getline(lines, line)) {
        if (line.starts_with("stats t=")) {
            if (tables < 2) t[tables] = std::stod(line.substr(8));
            ++tables;
        }
        std::istringstream f(line);
        std::string dir;
        Row x{};
        if (f >> dir >> x.rx >> x.tx >> x.rx_pps >> x.tx_pps &&
            (dir == "a_to_b" || dir == "b_to_a")) {
            ++rows;
            if (tables >= 1 && tables <= 2) row[tables - 1][dir == "a_to_b" ? 0 : 1] = x;
        }
    }
    ASSERT_EQ(tables, 2) << r.out;
    ASSERT_EQ(rows, 4) << r.out;
    const double dt = t[1] - t[0];
    ASSERT_GE(dt, 0.299) << r.out;
    // t is printed to the ms and a rate to 1 pps: 1 % and 1 pps cover the rounding.
    auto expect_rate = [&](double printed, unsigned long long now, unsigned long long before) {
        const double want = static_cast<double>(now - before) / dt;
        EXPECT_NEAR(printed, want, 0.01 * want + 1) << r.out;
    };
    for (int d = 0; d < 2; ++d) {
        EXPECT_GT(row[1][d].rx, 0u) << "the built-in traffic has run since the start\n" << r.out;
        ASSERT_GE(row[1][d].rx, row[0][d].rx) << r.out;
        ASSERT_GE(row[1][d].tx, row[0][d].tx) << r.out;
        expect_rate(row[1][d].rx_pps, row[1][d].rx, row[0][d].rx);
        expect_rate(row[1][d].tx_pps, row[1][d].tx, row[0][d].tx);
    }
    EXPECT_NE(r.out.find("rx pps"), std::string::npos);
    // --json: the stats messages themselves, one per line.
    const Result j = ctl("--json watch --interval 100ms --count 1");
    ASSERT_EQ(j.code, 0) << j.err;
    const json m = json::parse(j.out);
    EXPECT_TRUE(m.contains("seq"));
    EXPECT_TRUE(m["a_to_b"].contains("packets_in"));
}

TEST_F(Linkemctl, EventsShowTheChangesOfClients) {
    const std::string out = g_dir + "/events.out";
    // (A background job of a script ignores SIGINT: SIGTERM stops it.)
    const Result r =
        run_shell("( timeout 20 " + ctl_cmd(control_, "--json events") + " >" + out +
                  " & p=$!; sleep 1.5; " + ctl_cmd(control_, "set --mean-delay 2ms >/dev/null") +
                  "; sleep 1; kill -TERM $p; wait $p; true )");
    ASSERT_EQ(r.code, 0) << r.err;
    bool applied = false;
    std::istringstream lines(slurp(out));
    std::string line;
    while (std::getline(lines, line)) {
        const json e = json::parse(line);
        if (e["kind"] == "params_applied" &&
            e["source"].get<std::string>().starts_with("linkemctl"))
            applied = true;
    }
    EXPECT_TRUE(applied) << slurp(out);
}

TEST_F(Linkemctl, SaveAndLoadRoundTripThroughTheConfigFile) {
    ASSERT_EQ(ctl("set --mean-delay 33ms --a-to-b-loss-model bernoulli "
                  "--a-to-b-loss-probability 0.002")
                  .code,
              0);
    const Result s = ctl("save");
    ASSERT_EQ(s.code, 0) << s.err;
    EXPECT_NE(s.out.find(config_), std::string::npos) << s.out;
    const json file = json::parse(slurp(config_));
    EXPECT_EQ(file["a_to_b"]["mean_delay_us"], 33000.0);
    EXPECT_EQ(file["b_to_a"]["mean_delay_us"], 33000.0);
    EXPECT_EQ(file["a_to_b"]["loss_probability"], 0.002);
    EXPECT_EQ(file["burst"], 32);  // other keys kept
    const json saved = ctl_json("get");
    ASSERT_EQ(ctl("set --mean-delay 5ms --a-to-b-loss-model none").code, 0);
    const Result l = ctl("load");
    ASSERT_EQ(l.code, 0) << l.err;
    EXPECT_TRUE(std::regex_search(l.out, std::regex("mean_delay_us +33000 +33000"))) << l.out;
    json loaded = ctl_json("get");
    EXPECT_EQ(loaded["params_generation"].get<int>(), saved["params_generation"].get<int>() + 2);
    loaded.erase("params_generation");
    json expected = saved;
    expected.erase("params_generation");
    EXPECT_EQ(loaded, expected);
    ASSERT_EQ(ctl("set --mean-delay 1ms --a-to-b-loss-model none").code, 0);
}

TEST_F(Linkemctl, TrafficShowsAndChangesTheBuiltInTraffic) {
    json t = ctl_json("traffic");
    EXPECT_EQ(t["available"], true);
    EXPECT_EQ(t["running"], true);
    EXPECT_EQ(t["pattern"], "cbr");
    const Result show = ctl("traffic");
    ASSERT_EQ(show.code, 0) << show.err;
    EXPECT_NE(show.out.find("built-in traffic: running, cbr at"), std::string::npos) << show.out;
    t = ctl_json("traffic --traffic-pattern poisson --traffic-rate 50Mbit --frame-size 512");
    EXPECT_EQ(t["pattern"], "poisson");
    EXPECT_EQ(t["rate_bps"], 5e7);
    EXPECT_EQ(t["frame_size_bytes"], 512);
    EXPECT_EQ(ctl_json("traffic --off")["running"], false);
    const Result bad = ctl("traffic --frame-size 20");
    EXPECT_EQ(bad.code, 1) << bad.err;
    EXPECT_NE(bad.err.find("field frame_size_bytes"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("--frame-size"), std::string::npos) << bad.err;
    t = ctl_json("traffic --traffic-pattern cbr --traffic-rate 121.44Mbit --frame-size 1518");
    EXPECT_EQ(t["running"], true);
    EXPECT_EQ(t["pattern"], "cbr");
}

TEST_F(Linkemctl, ShutdownIsRefusedWithoutAllowRemoteShutdown) {
    const Result r = ctl("shutdown");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("not_permitted"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--allow-remote-shutdown"), std::string::npos) << r.err;
    EXPECT_EQ(ctl("hello").code, 0);
}

// The Python example, written from docs/protocol.md alone, with Debian's python3-zmq: it sets
// the mean delay and prints the delay drawn for the sampled packets and their actual delay.
TEST_F(Linkemctl, PythonExampleSetsTheDelayAndPrintsTheActualDelay) {
    ASSERT_EQ(ctl("set --jitter 0ms --limiter none --loss-model none").code, 0);
    const Result r = run_shell(std::string("/usr/bin/python3 ") + PYTHON_EXAMPLE + " --control " +
                               control_ + " --mean-delay-ms 5 --messages 20");
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("mean_delay_us a_to_b 5000"), std::string::npos) << r.out;
    const std::regex sample(
        "seq [0-9]+ (a_to_b|b_to_a): [0-9]+ samples, drawn ([0-9.]+) ms, "
        "actual ([0-9.]+) ms");
    std::istringstream lines(r.out);
    std::string line, last_drawn, last_actual;
    int samples = 0;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (!std::regex_match(line, m, sample)) continue;
        ++samples;
        last_drawn = m[2];
        last_actual = m[3];
    }
    ASSERT_GE(samples, 4) << r.out;
    // The last messages are long after the change: every packet was drawn exactly 5 ms (no
    // jitter), and departs no earlier than scheduled.
    EXPECT_EQ(last_drawn, "5.000") << r.out;
    EXPECT_GE(std::stod(last_actual), 5.0) << r.out;
    EXPECT_EQ(ctl_json("get")["a_to_b"]["mean_delay_us"], 5000.0);
}

TEST_F(Linkemctl, ScenarioPlaysPausesSeeksAndStops) {
    // The built-ins are listed without asking linkemd.
    Result r = run_shell(std::string(LINKEMCTL_PATH) +
                         " --control ipc:///nonexistent/linkemctl scenario list");
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* name : {"step-response", "wifi-lte-handover", "train-tunnel", "leo-satellite",
                             "congested-evening"})
        EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
    // A built-in by its name.
    r = ctl("scenario play step-response");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("scenario step-response: playing at "), std::string::npos) << r.out;
    EXPECT_EQ(ctl_json("scenario status")["state"], "playing");
    r = ctl("scenario seek 12s");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("step 2 of 3 (at 10 s): the step up: 100 ms"), std::string::npos) << r.out;
    json s = ctl_json("scenario pause");
    EXPECT_EQ(s["state"], "paused");
    EXPECT_GE(s["position_s"].get<double>(), 12.0);
    EXPECT_EQ(ctl_json("get")["a_to_b"]["mean_delay_us"], 100000.0);
    EXPECT_EQ(ctl_json("scenario resume")["state"], "playing");
    // A file read by linkemctl (here a CSV), sent to linkemd.
    const std::string csv = g_dir + "/measured.csv";
    std::ofstream(csv) << "# name: measured-path\ntime_s,mean_delay_us\n0,5000\n1,7000\n";
    r = ctl("scenario play " + csv);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("scenario measured-path: playing"), std::string::npos) << r.out;
    // Bad input: a file's line, a name that is nothing, a position that is no duration (2);
    // a position past the end, which linkemd refuses (1). Nothing changes.
    const std::string bad = g_dir + "/bad.csv";
    std::ofstream(bad) << "time_s,mean_delay_us\n0,5000\n1,oops\n";
    r = ctl("scenario play " + bad);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("bad.csv:3: mean_delay_us: not a number"), std::string::npos) << r.err;
    r = ctl("scenario play no-such-scenario");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("neither a file nor a built-in scenario"), std::string::npos) << r.err;
    r = ctl("scenario seek 12");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("is not a duration with a unit"), std::string::npos) << r.err;
    r = ctl("scenario seek 99s");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("field params.position_s"), std::string::npos) << r.err;
    s = ctl_json("scenario status");
    EXPECT_EQ(s["name"], "measured-path");
    EXPECT_EQ(s["state"], "playing");
    // Stopped, the parameters stay as they are; the tests after this one see no scenario.
    EXPECT_EQ(ctl_json("scenario stop")["state"], "stopped");
    EXPECT_EQ(ctl("set --mean-delay 1ms").code, 0);
}

// Traffic classes (docs/classes.md): each classes action is one set_link with the whole
// list; set --class changes one class; refusals name the class and key; watch shows a row
// per class and direction (the built-in traffic's frames are not IP: they are all default's).
TEST_F(Linkemctl, ClassesAreAddedMovedChangedRemovedAndReplaced) {
    auto names = [](const json& list) {
        std::vector<std::string> out;
        for (const json& c : list)
            out.push_back(c["name"]);
        return out;
    };
    Result r = ctl("classes");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("- +default +emulate +every other packet")))
        << r.out;
    EXPECT_TRUE(ctl_json("hello")["capabilities"]["classes"].get<bool>());
    r =
        ctl("classes add voip --match 'protocol=udp,b_port=5060-5061' --mean-delay 80ms "
            "--b-to-a-loss-model bernoulli --b-to-a-loss-probability 0.02");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(std::regex_search(
        r.out,
        std::regex("0 +voip +emulate +protocol=udp,b_port=5060-5061 +.*mean_delay_us=80000")))
        << r.out;
    EXPECT_NE(r.out.find("b_to_a.loss_probability=0.02"), std::string::npos) << r.out;
    ASSERT_EQ(ctl("classes add ssh --match protocol=tcp,b_port=22 --action pass --at 0").code, 0);
    ASSERT_EQ(ctl("classes add udp --match protocol=udp --limiter link --jitter 1ms").code, 0);
    json list = ctl_json("classes");
    EXPECT_EQ(names(list), (std::vector<std::string>{"ssh", "voip", "udp"}));
    EXPECT_EQ(list[0]["action"], "pass");
    EXPECT_EQ(list[2]["limiter"], "link");
    ASSERT_EQ(ctl("classes move voip --to 0").code, 0);
    EXPECT_EQ(names(ctl_json("classes")), (std::vector<std::string>{"voip", "ssh", "udp"}));
    // set --class: that class's parameters only.
    const json before = ctl_json("get");
    r = ctl("set --class voip --a-to-b-jitter 2ms");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("class voip: parameters in force"), std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("mean_delay_us +80000 +80000"))) << r.out;
    json after = ctl_json("get");
    EXPECT_EQ(after["classes"][0]["a_to_b"]["jitter_us"], 2000.0) << after["classes"].dump();
    EXPECT_EQ(after["a_to_b"], before["a_to_b"]);  // default's untouched
    // Refusals: exit 1 naming the field; nothing changes.
    const json kept = ctl_json("get");
    struct Case {
        const char* args;
        const char* mentions;
        const char* mentions2;
    };
    for (const Case& c : {
             Case{"set --class video --jitter 1ms", "[field class]",
                  "no class 'video'; the link's classes: default, voip, ssh, udp"},
             Case{"set --class ssh --jitter 1ms", "[field jitter_us]", "action 'pass'"},
             Case{"set --class udp --rate 1Mbit", "[field rate_bps]", "shares the link's limiter"},
             Case{"classes add bad --match b_port=70000", "[field classes[3].match.b_port]",
                  "class 'bad'"},
             Case{"classes add voip --match any", "[field classes[3].name]", "voip"},
             Case{"classes add quiet --match any --action drop --mean-delay 5ms",
                  "[field classes[3].mean_delay_us]", "action 'drop'"},
         }) {
        r = ctl(c.args);
        EXPECT_EQ(r.code, 1) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions2), std::string::npos) << c.args << "\n" << r.err;
    }
    // Bad input to linkemctl: exit 2.
    for (const Case& c : {
             Case{"classes remove nope", "no class 'nope'", "default, voip, ssh, udp"},
             Case{"classes remove default", "'default' is not in the list", "linkemctl set"},
             Case{"classes move voip --to 9", "--to: 9", "0 .. 2"},
             Case{"classes add x --match protocol", "'protocol' is not key=value", "any"},
             Case{"classes add x", "--match", "required"},
             Case{"classes replace /nonexistent.json", "cannot read", "/nonexistent.json"},
         }) {
        r = ctl(c.args);
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.mentions2), std::string::npos) << c.args << "\n" << r.err;
    }
    EXPECT_EQ(ctl_json("get"), kept);
    // watch: a row per class and direction; --class one class's.
    r = ctl("watch --interval 300ms --count 1");
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* row : {"class +default +emulate +a_to_b", "class +voip +emulate +b_to_a",
                            "class +ssh +pass +a_to_b", "class +udp +emulate +b_to_a"})
        EXPECT_TRUE(std::regex_search(r.out, std::regex(row))) << row << "\n" << r.out;
    r = ctl("watch --interval 300ms --count 1 --class udp");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("class +udp "))) << r.out;
    EXPECT_FALSE(std::regex_search(r.out, std::regex("class +voip "))) << r.out;
    r = ctl("watch --count 1 --class nope");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("no class 'nope'"), std::string::npos) << r.err;
    // remove, replace (a file, or a config file's list), clear.
    ASSERT_EQ(ctl("classes remove ssh").code, 0);
    EXPECT_EQ(names(ctl_json("classes")), (std::vector<std::string>{"voip", "udp"}));
    const std::string file = g_dir + "/classes.json";
    std::ofstream(file) << R"({"port_a": "x", "classes": [{"name": "games", "match": {"protocol":
                             "udp", "b_port": 3074}, "mean_delay_us": 30000}]})";
    r = ctl("classes replace " + file);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(names(ctl_json("classes")), (std::vector<std::string>{"games"}));
    r = run_shell("echo '[]' | " + ctl_cmd(control_, "classes replace -"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(ctl_json("classes").empty());
    ASSERT_EQ(ctl("classes add games --match any").code, 0);
    ASSERT_EQ(ctl("classes clear").code, 0);
    EXPECT_TRUE(ctl_json("get")["classes"].empty());
}

// A playing scenario keeps the link's classes, and a step naming a class changes that class
// when its time has passed (docs/scenarios.md, "Traffic classes"); a step naming a class the
// link does not have is refused (1), naming the step.
TEST_F(Linkemctl, AScenarioKeepsTheClassesAndItsClassStepsChangeThem) {
    ASSERT_EQ(ctl("classes add voip --match protocol=udp --mean-delay 80ms").code, 0);
    const std::string file = g_dir + "/voip-worse.json";
    std::ofstream(file) << R"({"name": "voip-worse", "duration_s": 1.5, "steps": [
        {"at_s": 0, "set": {"mean_delay_us": 2000}},
        {"at_s": 0.5, "class": "voip", "set": {"mean_delay_us": 150000}}]})";
    Result r = ctl("scenario play " + file);
    ASSERT_EQ(r.code, 0) << r.err;
    json link = ctl_json("get");
    ASSERT_EQ(link["classes"].size(), 1u) << link.dump();
    EXPECT_EQ(link["classes"][0]["name"], "voip");
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline &&
           link["classes"][0]["mean_delay_us"] != 150000.0) {
        std::this_thread::sleep_for(100ms);
        link = ctl_json("get");
    }
    EXPECT_EQ(link["classes"][0]["mean_delay_us"], 150000.0) << link.dump();
    EXPECT_EQ(link["a_to_b"]["mean_delay_us"], 2000.0);
    const std::string bad = g_dir + "/video.json";
    std::ofstream(bad) << R"({"name": "video", "duration_s": 2, "steps": [
        {"at_s": 1, "class": "video", "set": {"mean_delay_us": 1000}}]})";
    r = ctl("scenario play " + bad);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("steps[0].class: no class 'video'; the link's classes: default, voip"),
              std::string::npos)
        << r.err;
    ctl("scenario stop");
    EXPECT_EQ(ctl("classes clear").code, 0);
    EXPECT_EQ(ctl("set --mean-delay 1ms").code, 0);
}

// The records of a pcapng file as tshark reads them: each frame's comment, one per line
// (nullopt when tshark is not installed: Debian's `tshark` package).
std::optional<std::vector<std::string>> tshark_comments(const std::string& file) {
    if (run_shell("command -v tshark >/dev/null").code != 0) {
        std::fprintf(stderr, "tshark not found (Debian package tshark): %s not read back\n",
                     file.c_str());
        return std::nullopt;
    }
    const Result r = run_shell("tshark -r " + file + " -T fields -e frame.comment");
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

std::size_t count_with(const std::vector<std::string>& lines, const std::string& part) {
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
        return l.find(part) != std::string::npos;
    }));
}

TEST_F(Linkemctl, CaptureStartsStopsAndTsharkReadsTheRecords) {
    // A relative FILE is made absolute against linkemctl's working directory.
    const std::string file = g_dir + "/cap.pcapng";
    const Result start =
        run_shell("cd " + g_dir + " && " + ctl_cmd(control_, "capture start cap.pcapng"));
    ASSERT_EQ(start.code, 0) << start.err;
    EXPECT_NE(start.out.find("capture running: " + file + ", "), std::string::npos) << start.out;

    // One at a time; nothing else changes.
    const Result busy = ctl("capture start " + g_dir + "/other.pcapng");
    EXPECT_EQ(busy.code, 1) << busy.err;
    EXPECT_NE(busy.err.find("linkemd refused capture_start (unavailable)"), std::string::npos)
        << busy.err;
    EXPECT_FALSE(fs::exists(g_dir + "/other.pcapng"));

    std::this_thread::sleep_for(1s);
    json status = ctl_json("capture status");
    EXPECT_EQ(status["running"], true);
    EXPECT_EQ(status["file"], file);
    EXPECT_EQ(status["settings"]["points"], json({"out", "drop"}));
    EXPECT_EQ(status["settings"]["snaplen_bytes"], 128);
    const json stats = ctl_json("stats");
    EXPECT_EQ(stats["capture"]["running"], true);
    EXPECT_EQ(stats["capture"]["file"], file);

    const Result stop = ctl("capture stop");
    ASSERT_EQ(stop.code, 0) << stop.err;
    EXPECT_NE(stop.out.find("capture stopped (stopped): " + file + ", "), std::string::npos)
        << stop.out;
    status = ctl_json("capture status");
    EXPECT_EQ(status["running"], false);
    EXPECT_EQ(status["stop_reason"], "stopped");
    EXPECT_EQ(status["written_files"], json({file}));
    const std::uint64_t records = status["records"];
    EXPECT_GT(records, 1000u) << status.dump();  // ~1 s of CBR both ways
    EXPECT_EQ(records, status["records_out"].get<std::uint64_t>() +
                           status["records_drop"].get<std::uint64_t>());
    EXPECT_EQ(status["records_in"], 0);
    EXPECT_EQ(status["capture_missed"], 0);
    EXPECT_EQ(status["bytes"].get<std::uint64_t>(), fs::file_size(file));
    EXPECT_GT(status["elapsed_s"].get<double>(), 0.9);
    // Stopping again answers the same status.
    EXPECT_EQ(ctl_json("capture stop"), status);
    const Result line = ctl("capture status");
    EXPECT_NE(line.out.find("records (out "), std::string::npos) << line.out;

    if (const auto comments = tshark_comments(file)) {
        EXPECT_EQ(comments->size(), records);
        EXPECT_EQ(count_with(*comments, "linkem dir="), records);
        EXPECT_EQ(count_with(*comments, " point=out "), status["records_out"].get<std::size_t>());
    }

    // A limit: the capture stops itself after that many records.
    const std::string limited = g_dir + "/limited.pcapng";
    ASSERT_EQ(ctl("capture start " + limited + " --packets 100 --points in,out --snaplen 64").code,
              0);
    for (int i = 0; i < 50 && ctl_json("capture status")["running"] == true; ++i)
        std::this_thread::sleep_for(100ms);
    status = ctl_json("capture status");
    EXPECT_EQ(status["stop_reason"], "packets") << status.dump();
    EXPECT_EQ(status["records"], 100) << status.dump();
    if (const auto comments = tshark_comments(limited)) {
        EXPECT_EQ(comments->size(), 100u);
    }
}

TEST_F(Linkemctl, CaptureRefusesBadInputNamingTheFlag) {
    Result r = ctl("capture start " + g_dir + "/x.pcapng --snaplen 8");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--snaplen: 8 is not allowed; allowed 16 .. 65535 bytes"),
              std::string::npos)
        << r.err;
    r = ctl("capture start " + g_dir + "/x.pcapng --duration 10");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--duration: '10' is not a duration"), std::string::npos) << r.err;
    r = ctl("capture start " + g_dir + "/x.pcapng --points out,egress");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("allowed: in, out, drop"), std::string::npos) << r.err;
    // What linkemd checks: the link's classes, the file.
    r = ctl("capture start " + g_dir + "/x.pcapng --class nosuch");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("[field class] (--class)"), std::string::npos) << r.err;
    r = ctl("capture start " + g_dir + "/no/such/dir/x.pcapng");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("[field file]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(g_dir + "/no/such/dir/x.pcapng"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(g_dir + "/x.pcapng"));
    EXPECT_EQ(ctl_json("capture status")["running"], false);
}

// linkemd --capture: from the start, stopped cleanly when linkemd stops; bad flags refused
// before anything starts.
TEST(LinkemctlCapture, LinkemdCapturesFromTheStartUntilItStops) {
    const std::string file = g_dir + "/start.pcapng";
    const std::string control = "ipc://" + g_dir + "/capture-control";
    const std::string telemetry = "ipc://" + g_dir + "/capture-telemetry";
    {
        Linkemd bad("capture-bad", control, telemetry,
                    "--port-a virtual --capture " + file + " --capture-snaplen 8");
        EXPECT_EQ(bad.wait_exit(30s), 2);
        EXPECT_NE(bad.log().find("--capture-snaplen: 8 is not allowed"), std::string::npos)
            << bad.log();
        Linkemd lone("capture-lone", control, telemetry, "--port-a virtual --capture-points out");
        EXPECT_EQ(lone.wait_exit(30s), 2);
        EXPECT_NE(lone.log().find("--capture-points: needs --capture FILE"), std::string::npos)
            << lone.log();
        EXPECT_FALSE(fs::exists(file));
    }
    Linkemd d("capture", control, telemetry,
              "--port-a virtual --port-b virtual --traffic-pattern cbr --capture " + file +
                  " --capture-points in,out,drop --capture-snaplen 64");
    ASSERT_TRUE(d.ready()) << d.log();
    std::this_thread::sleep_for(1s);
    const Result r = run_shell(ctl_cmd(control, "--json capture status"));
    ASSERT_EQ(r.code, 0) << r.err;
    const json status = json::parse(r.out);
    EXPECT_EQ(status["running"], true);
    EXPECT_EQ(status["settings"]["points"], json({"in", "out", "drop"}));
    EXPECT_EQ(status["settings"]["snaplen_bytes"], 64);
    EXPECT_EQ(d.stop(), 0) << d.log();
    EXPECT_NE(d.log().find("shutdown"), std::string::npos) << d.log();
    if (const auto comments = tshark_comments(file)) {
        EXPECT_GT(comments->size(), status["records"].get<std::size_t>()) << d.log();
        EXPECT_GT(count_with(*comments, " point=in "), 0u);
        EXPECT_GT(count_with(*comments, " point=out "), 0u);
    }
}

// A linkemd with two workers a direction refuses set_link of a queue discipline (one queue
// decides, not one per worker): exit 1 naming the direction's `queue` and what to do instead;
// nothing changes.
TEST(LinkemctlQueue, TwoWorkersRefuseAQueueDiscipline) {
    const std::string control = "ipc://" + g_dir + "/workers-control";
    Linkemd d("workers", control, "ipc://" + g_dir + "/workers-telemetry",
              "--port-a virtual --port-b virtual --workers 2");
    ASSERT_TRUE(d.ready()) << d.log();
    const Result r =
        run_shell(ctl_cmd(control, "set --limiter spacer --rate 10Mbit --queue codel"));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("a_to_b.queue"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'codel'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--workers 1 or shared"), std::string::npos) << r.err;
    const Result g = run_shell(ctl_cmd(control, "--json get"));
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_EQ(json::parse(g.out)["a_to_b"]["queue"], "droptail");
    EXPECT_EQ(json::parse(g.out)["a_to_b"]["limiter"], "none");
}

TEST(LinkemctlShutdown, StopsALinkemdThatAllowsIt) {
    const std::string control = "ipc://" + g_dir + "/shutdown-control";
    Linkemd d("shutdown", control, "ipc://" + g_dir + "/shutdown-telemetry",
              "--port-a virtual --port-b virtual --allow-remote-shutdown");
    ASSERT_TRUE(d.ready()) << d.log();
    const Result r = run_shell(ctl_cmd(control, "shutdown"));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("linkemd is stopping"), std::string::npos) << r.out;
    EXPECT_EQ(d.wait_exit(30s), 0) << d.log();
    EXPECT_NE(d.log().find("shutdown requested by linkemctl"), std::string::npos) << d.log();
    EXPECT_EQ(run_shell(ctl_cmd(control, "--timeout 300ms hello")).code, 3);
}

// keygen writes what linkemd reads: with the allowed key linkemctl is served (control and
// telemetry); with an unknown key, or none, it gets no answer (exit 3).
TEST(LinkemctlCurve, KeygenKeysWorkAndUnknownKeysGetNoAnswer) {
    const std::string keys = g_dir + "/keys", allow = g_dir + "/allow";
    const std::string ctl = LINKEMCTL_PATH;
    for (const char* name : {"linkemd", "client", "stranger"}) {
        const Result k = run_shell(ctl + " keygen " + keys + " " + name);
        ASSERT_EQ(k.code, 0) << k.err;
        EXPECT_NE(k.out.find(keys + "/" + name + ".key_secret"), std::string::npos) << k.out;
    }
    const Result again = run_shell(ctl + " keygen " + keys + " client");
    EXPECT_EQ(again.code, 2) << again.err;
    EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
    fs::create_directories(allow);
    fs::copy_file(keys + "/client.key", allow + "/client.key");

    const std::string control = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
    const std::string telemetry = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
    Linkemd d("curve", control, telemetry,
              "--port-a virtual --port-b virtual --traffic-pattern cbr --curve-secret " + keys +
                  "/linkemd.key_secret --curve-allow " + allow);
    const std::string allowed =
        "--curve-server-key " + keys + "/linkemd.key --curve-secret " + keys + "/client.key_secret";
    ASSERT_TRUE(d.ready(allowed)) << d.log();
    const Result h = run_shell(ctl_cmd(control, allowed + " hello"));
    EXPECT_EQ(h.code, 0) << h.err;
    const Result w = run_shell(ctl_cmd(control, allowed + " watch --interval 200ms --count 1"));
    EXPECT_EQ(w.code, 0) << w.err;
    EXPECT_NE(w.out.find("rx pps"), std::string::npos) << w.out;

    const std::string stranger = "--curve-server-key " + keys + "/linkemd.key --curve-secret " +
                                 keys + "/stranger.key_secret";
    const Result s = run_shell(ctl_cmd(control, stranger + " --timeout 1s set --mean-delay 9ms"));
    EXPECT_EQ(s.code, 3) << s.err;
    const Result none = run_shell(ctl_cmd(control, "--timeout 1s hello"));
    EXPECT_EQ(none.code, 3) << none.err;
    const Result g = run_shell(ctl_cmd(control, allowed + " --json get"));
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_EQ(json::parse(g.out)["a_to_b"]["mean_delay_us"], 0.0);  // the stranger changed nothing
}

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    std::string t = (fs::temp_directory_path() / "linkemctl_test_XXXXXX").string();
    if (!mkdtemp(t.data())) return 1;
    g_dir = t;
    const int rc = RUN_ALL_TESTS();
    fs::remove_all(g_dir);
    return rc;
}
