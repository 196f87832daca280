// linkemd's command line and config file: bad input exits with code 2 and names the field;
// --print-config shows the effective configuration without starting DPDK. One test runs
// the binary for real on net_null ports (its own EAL, --no-huge) and reads --stats-json.
// Link files written by liblinkem_protocol (presets.hpp) are read as the library means.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "linkem/link_params_json.hpp"
#include "linkem/presets.hpp"

namespace {

using nlohmann::json;

// Drops of every cause in a stats direction object: its "drops_<cause>" counters.
std::uint64_t all_drops(const json& c) {
    std::uint64_t n = 0;
    for (auto it = c.begin(); it != c.end(); ++it)
        if (it.key().rfind("drops_", 0) == 0) n += it.value().get<std::uint64_t>();
    return n;
}

struct Result {
    int code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

// Runs a shell command line; stdout and stderr apart.
Result run_shell(const std::string& command) {
    const std::string err_file = "/tmp/linkemd_cli_test_" + std::to_string(getpid()) + ".err";
    const std::string cmd = "{ " + command + "; } 2>" + err_file;
    Result r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream e(err_file);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
    std::remove(err_file.c_str());
    return r;
}

// --no-control: these tests run beside others (ctest -j2) that may hold the default control
// endpoints; the protocol's own tests choose endpoints of their own.
Result run(const std::string& args) {
    return run_shell(std::string(LINKEMD_PATH) + " --no-control " + args);
}

std::vector<json> json_lines(const std::string& out) {
    std::istringstream lines(out);
    std::string line;
    std::vector<json> objs;
    while (std::getline(lines, line))
        objs.push_back(json::parse(line));
    return objs;
}

std::string write_config(const std::string& name, const std::string& text) {
    const std::string path = "/tmp/linkemd_cli_" + std::to_string(getpid()) + "_" + name;
    std::ofstream(path) << text;
    return path;
}

TEST(LinkemdCli, PrintConfigShowsEffectiveValues) {
    const Result r =
        run("--port-a net_null0 --port-b net_null1 --mean-delay 10ms --jitter 3ms "
            "--b-to-a-mean-delay 20ms --rate 100Mbit --limiter spacer --burst 32 --print-config");
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["port_a"], "net_null0");
    EXPECT_EQ(j["port_b"], "net_null1");
    EXPECT_EQ(j["burst"], 32);
    EXPECT_EQ(j["a_to_b"]["mean_delay_us"], 10000.0);
    EXPECT_EQ(j["b_to_a"]["mean_delay_us"], 20000.0);
    EXPECT_EQ(j["b_to_a"]["jitter_us"], 3000.0);
    EXPECT_EQ(j["a_to_b"]["rate_bps"], 1e8);
    EXPECT_EQ(j["a_to_b"]["limiter"], "spacer");
    EXPECT_GE(j["mbufs"].get<int>(), 8192);
    EXPECT_EQ(j["hold_mbufs"], false);
    const Result h = run("--port-a net_null0 --hold-mbufs --print-config");
    ASSERT_EQ(h.code, 0) << h.err;
    EXPECT_EQ(json::parse(h.out)["hold_mbufs"], true);
}

TEST(LinkemdCli, PrintConfigRoundTripsThroughConfigFile) {
    const Result first =
        run("--port-a net_null0 --port-b net_null1 --a-to-b-loss-model "
            "bernoulli --a-to-b-loss-probability 0.02 --print-config");
    ASSERT_EQ(first.code, 0) << first.err;
    const std::string path = write_config("roundtrip.json", first.out);
    const Result second = run("--config " + path + " --print-config");
    std::remove(path.c_str());
    ASSERT_EQ(second.code, 0) << second.err;
    EXPECT_EQ(json::parse(first.out), json::parse(second.out));
}

TEST(LinkemdCli, FlagsOverrideConfigFile) {
    const std::string path = write_config(
        "override.json",
        R"({"port_a": "net_null0", "a_to_b": {"mean_delay_us": 5000, "jitter_us": 1000}})");
    const Result r = run("--config " + path + " --mean-delay 7ms --print-config");
    std::remove(path.c_str());
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["a_to_b"]["mean_delay_us"], 7000.0);
    EXPECT_EQ(j["a_to_b"]["jitter_us"], 1000.0);
    EXPECT_FALSE(j.contains("b_to_a"));  // single-port mode
}

// Link parameters at the config file's top level apply to both directions, as the flags
// without a direction do; a_to_b / b_to_a override them, and flags override the file.
TEST(LinkemdCli, ConfigFileTopLevelParametersApplyToBothDirections) {
    const std::string path = write_config(
        "both.json", R"({"port_a": "net_null0", "port_b": "net_null1", "mean_delay_us": 10000,
                        "jitter_us": 2000, "strategy": "reordered",
                        "b_to_a": {"mean_delay_us": 40000}})");
    const Result r = run("--config " + path + " --a-to-b-jitter 1ms --print-config");
    std::remove(path.c_str());
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["a_to_b"]["mean_delay_us"], 10000.0);
    EXPECT_EQ(j["a_to_b"]["jitter_us"], 1000.0);
    EXPECT_EQ(j["a_to_b"]["strategy"], "reordered");
    EXPECT_EQ(j["b_to_a"]["mean_delay_us"], 40000.0);
    EXPECT_EQ(j["b_to_a"]["jitter_us"], 2000.0);
    EXPECT_EQ(j["b_to_a"]["strategy"], "reordered");
    EXPECT_FALSE(j.contains("mean_delay_us"));  // --print-config shows each direction
}

// A link file as the GUI and linkemctl write it (linkem/presets.hpp) is a config file
// linkemd reads to the same parameters, for every built-in preset, with two ports and with
// one; and the library reads linkemd's own --print-config output back to the same link.
TEST(LinkemdCli, LinkFilesReadAsTheLibraryWritesThem) {
    for (const linkem::Preset& p : linkem::builtin_presets()) {
        SCOPED_TRACE(p.id);
        for (const unsigned dirs : {2u, 1u}) {
            json base = {{"port_a", "net_null0"}, {"burst", 32}};
            if (dirs == 2) base["port_b"] = "net_null1";
            const std::string path =
                write_config("link.json", linkem::link_file_to_json(p.link, dirs, base).dump(2));
            const Result r = run("--config " + path + " --print-config");
            std::remove(path.c_str());
            ASSERT_EQ(r.code, 0) << r.err;
            const json j = json::parse(r.out);
            EXPECT_EQ(j["burst"], 32);
            EXPECT_EQ(j["a_to_b"], linkem::to_json(p.link.a_to_b));
            if (dirs == 2) {
                EXPECT_EQ(j["b_to_a"], linkem::to_json(p.link.b_to_a));
                EXPECT_EQ(linkem::link_file_from_json(j, 2), p.link);
            } else {
                EXPECT_FALSE(j.contains("b_to_a"));
                EXPECT_EQ(linkem::link_file_from_json(j, 1).a_to_b, p.link.a_to_b);
            }
        }
    }
}

struct BadCase {
    const char* name;
    const char* args;
    const char* mentions;
    const char* mentions2;
};

void PrintTo(const BadCase& c, std::ostream* os) {
    *os << "linkemd " << c.args;
}

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) {
    return info.param.name;
}

class LinkemdBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(LinkemdBadInput, ExitsWithCode2NamingTheField) {
    const BadCase& c = GetParam();
    const Result r = run(std::string(c.args));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.mentions), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.mentions2), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("EAL"), std::string::npos) << "DPDK was started: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LinkemdBadInput,
    ::testing::Values(
        BadCase{"MissingUnit", "--port-a net_null0 --mean-delay 10", "--mean-delay", "unit"},
        BadCase{"DelayOutOfRange", "--port-a net_null0 --mean-delay 20s", "mean_delay_us", "10s"},
        BadCase{"RateWithoutUnitForOneDirection", "--port-a net_null0 --a-to-b-rate 100",
                "--a-to-b-rate: '100' is not a bit rate", "1.6Tbit/s"},
        BadCase{"ProbabilityOutOfRange", "--port-a net_null0 --loss-probability 1.5",
                "loss_probability", "0 .. 1"},
        BadCase{"UnknownStrategy", "--port-a net_null0 --strategy sometimes", "strategy",
                "correlated"},
        BadCase{"SpacerWithoutRate", "--port-a net_null0 --limiter spacer", "rate_bps", "spacer"},
        BadCase{"BurstZero", "--port-a net_null0 --burst 0", "--burst", "1 .. 512"},
        BadCase{"TooManyWorkers", "--port-a net_null0 --workers 65", "--workers", "shared"},
        BadCase{"PipelineLayoutGone", "--port-a net_null0 --lcores 3", "--lcores 3", "--workers N"},
        BadCase{"TooFewMbufs", "--port-a net_null0 --mbufs 100", "--mbufs", "8192"},
        BadCase{"BToAInSinglePortMode", "--port-a net_null0 --b-to-a-jitter 1ms", "--b-to-a-jitter",
                "port B"},
        BadCase{"MissingPortA", "--mean-delay 1ms", "port_a", "required"},
        BadCase{"UnknownInterface", "--port-a no_such_if0", "port_a", "no_such_if0"},
        BadCase{"UnknownFlag", "--port-a net_null0 --no-such-flag", "no-such-flag", "no-such-flag"},
        BadCase{"MissingConfigFile", "--port-a net_null0 --config /nonexistent/link.json",
                "link.json", "open"},
        BadCase{"UnknownQueue", "--port-a net_null0 --queue red", "--queue: 'red'",
                "'droptail', 'codel', 'fq_codel', 'pie'"},
        BadCase{"QueueLimitZeroPackets", "--port-a net_null0 --queue-limit 0p",
                "--queue-limit: '0p'", "at least 1p; allowed bytes with an optional unit (1MiB)"},
        BadCase{"QueueLimitBadUnit", "--port-a net_null0 --queue-limit 10x", "--queue-limit: '10x'",
                "bytes, or packets (1000p)"},
        BadCase{"CodelKeyUnderPie",
                "--port-a net_null0 --limiter spacer --rate 10Mbit --codel-target 7ms --queue pie",
                "codel_target_us (--codel-target)",
                "belongs to queue 'codel' or 'fq_codel', not 'pie'"},
        BadCase{"EcnWithoutAQueueDiscipline",
                "--port-a net_null0 --limiter policer --rate 10Mbit --ecn on", "ecn (--ecn)",
                "belongs to queue 'codel' or 'fq_codel' or 'pie', not 'droptail'"},
        BadCase{"EcnWithThePolicer",
                "--port-a net_null0 --limiter policer --rate 10Mbit --queue codel --ecn on",
                "ecn (--ecn)", "needs a limiter that queues, spacer or trace"},
        BadCase{"QueueDisciplineWithTwoWorkers",
                "--port-a net_null0 --limiter spacer --rate 10Mbit --queue codel --workers 2",
                "a_to_b: queue 'codel'", "run with --workers 1 or shared"},
        BadCase{"QueueLimitInPacketsWithTwoWorkers",
                "--port-a net_null0 --limiter spacer --rate 10Mbit --queue-limit 100p "
                "--workers 2",
                "a_to_b: queue 'droptail' (or a limit in packets)", "--workers 1 or shared"}),
    case_name);

TEST(LinkemdCli, ConfigFileErrorsNameTheKey) {
    struct {
        const char* text;
        const char* mentions;
    } cases[] = {
        {R"({"port_a": "net_null0", "colour": "red"})", "colour"},
        {R"({"port_a": "net_null0", "colour": "red"})", "both directions: 'strategy'"},
        {R"({"port_a": "net_null0", "jitter_us": -1})", "jitter_us (both directions)"},
        {R"({"port_a": "net_null0", "mean_delay_us": 1000, "distribution": "constant",
             "jitter_us": 5})",
         "jitter_us (both directions)"},
        {R"({"port_a": "net_null0", "a_to_b": {"mean_delay": 5}})", "mean_delay"},
        {R"({"port_a": "net_null0", "a_to_b": {"jitter_us": -1}})", "a_to_b.jitter_us"},
        {R"({"port_a": "net_null0", "burst": 1000})", "burst"},
        {R"({"port_a": "net_null0", "hold_mbufs": "yes"})", "hold_mbufs: expected true or false"},
        {R"({"port_a": "net_null0", )", "not valid JSON"},
    };
    for (const auto& c : cases) {
        const std::string path = write_config("bad.json", c.text);
        const Result r = run("--config " + path + " --print-config");
        std::remove(path.c_str());
        EXPECT_EQ(r.code, 2) << c.text;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.text << " -> " << r.err;
    }
}

// The config file's traffic classes (docs/classes.md): read, shown by --print-config in
// their own format, and read back to the same; a bad list is refused at start, naming the
// class and key.
TEST(LinkemdCli, ConfigFileTakesTrafficClasses) {
    const std::string path = write_config("classes.json", R"({
        "port_a": "net_null0", "port_b": "net_null1", "mean_delay_us": 10000,
        "classes": [
          {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
           "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}},
          {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}]})");
    const Result r = run("--config " + path + " --print-config");
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["classes"].size(), 2u);
    EXPECT_EQ(j["classes"][0]["name"], "voip");
    EXPECT_EQ(j["classes"][0]["mean_delay_us"], 80000.0);
    EXPECT_EQ(j["classes"][0]["b_to_a"]["loss_probability"], 0.02);
    EXPECT_EQ(j["classes"][1]["action"], "pass");
    EXPECT_EQ(j["a_to_b"]["mean_delay_us"], 10000.0);
    const std::string again = write_config("classes_again.json", r.out);
    const Result second = run("--config " + again + " --print-config");
    std::remove(path.c_str());
    std::remove(again.c_str());
    ASSERT_EQ(second.code, 0) << second.err;
    EXPECT_EQ(json::parse(second.out), j);
    // Without classes, none are shown.
    const Result plain = run("--port-a net_null0 --print-config");
    ASSERT_EQ(plain.code, 0) << plain.err;
    EXPECT_FALSE(json::parse(plain.out).contains("classes"));
}

TEST(LinkemdCli, ABadClassListIsRefusedAtStartNamingTheField) {
    struct {
        const char* text;
        const char* mentions;
    } cases[] = {
        {R"({"port_a": "net_null0", "port_b": "net_null1", "classes": [
            {"name": "voip", "match": {"protocol": "udp", "b_port": 70000}}]})",
         "classes[0].match.b_port: class 'voip'"},
        {R"({"port_a": "net_null0", "port_b": "net_null1", "classes": [
            {"name": "a", "match": {}}, {"name": "a", "match": {}}]})",
         "classes[1].name"},
        {R"({"port_a": "net_null0", "port_b": "net_null1", "classes": [
            {"name": "ssh", "match": {"b_port": 22}, "action": "pass", "jitter_us": 5}]})",
         "classes[0].jitter_us"},
        {R"({"port_a": "net_null0", "port_b": "net_null1", "classes": {"name": "x"}})",
         "classes: expected a list of classes"},
        {R"({"port_a": "net_null0", "classes": [
            {"name": "voip", "match": {}, "b_to_a": {"jitter_us": 5}}]})",
         "classes[0].b_to_a: class 'voip': there is no port B"},
    };
    for (const auto& c : cases) {
        const std::string path = write_config("bad_classes.json", c.text);
        const Result r = run("--config " + path + " --print-config");
        std::remove(path.c_str());
        EXPECT_EQ(r.code, 2) << c.text;
        EXPECT_NE(r.err.find(c.mentions), std::string::npos) << c.text << " -> " << r.err;
    }
}

// The binary on two net_null ports for 2 s: JSON lines on stdout, the last one final.
TEST(LinkemdCli, RunsOnNullPortsAndPrintsJsonStats) {
    const Result r =
        run("--port-a net_null0 --port-b net_null1 --mean-delay 1ms --jitter 100us "
            "--duration 2s --stats-interval 500ms --stats-json --mbufs 16384");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<json> objs = json_lines(r.out);
    ASSERT_GE(objs.size(), 2u);
    const json& last = objs.back();
    EXPECT_TRUE(last["final"].get<bool>());
    EXPECT_FALSE(objs.front()["final"].get<bool>());
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        const json& c = last[dir];
        EXPECT_GT(c["packets_in"].get<std::uint64_t>(), 0u) << dir;
        EXPECT_EQ(c["packets_in"].get<std::uint64_t>(), c["packets_out"].get<std::uint64_t>() +
                                                            all_drops(c) +
                                                            c["in_flight"].get<std::uint64_t>())
            << dir;
        EXPECT_TRUE(c.contains("tx_queued"));
        EXPECT_TRUE(c.contains("alpha"));
        EXPECT_EQ(c["params_generation"].get<std::uint64_t>(), 0u) << dir;
        EXPECT_GE(c["stall_ns"].get<std::uint64_t>(), c["longest_stall_ns"].get<std::uint64_t>())
            << dir;
        EXPECT_GE(c["stall_ns"].get<std::uint64_t>(), 100000 * c["stalls"].get<std::uint64_t>())
            << dir;
    }
    for (const char* port : {"a", "b"})
        for (const char* key : {"rx", "tx", "rx_missed", "rx_nombuf", "tx_failed"})
            EXPECT_TRUE(last["ports"][port].contains(key)) << port << "." << key;
}

// A queue discipline from the command line: --print-config shows it in both directions.
// Run on net_null ports, which offer some 30 times 10 Mbit/s: CoDel drops at dequeue (its
// queue of 1000 packets holds ~70 ms), and the final stats line has its counters and
// balances. (FQ-CoDel, there, drops the fattest flow's head at each arrival over the limit:
// what it dequeues waited ~2 ms, below CoDel's target.)
TEST(LinkemdCli, QueueDisciplineFlagsShowAndRun) {
    const std::string flags =
        "--port-a net_null0 --port-b net_null1 --limiter spacer --rate 10Mbit --queue fq_codel "
        "--queue-limit 1000p --ecn on";
    const Result r = run(flags + " --print-config");
    ASSERT_EQ(r.code, 0) << r.err;
    const json j = json::parse(r.out);
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        EXPECT_EQ(j[dir]["queue"], "fq_codel") << dir;
        EXPECT_EQ(j[dir]["queue_limit_packets"], 1000) << dir;
        EXPECT_EQ(j[dir]["ecn"], "on") << dir;
    }
    const std::string codel = std::regex_replace(flags, std::regex("fq_codel"), "codel");
    const Result run_r = run(codel +
                             " --duration 1500ms --stats-interval 500ms --stats-json "
                             "--mbufs 16384");
    ASSERT_EQ(run_r.code, 0) << run_r.err;
    const std::vector<json> objs = json_lines(run_r.out);
    ASSERT_GE(objs.size(), 1u);
    const json& c = objs.back()["a_to_b"];
    EXPECT_EQ(
        c["packets_in"].get<std::uint64_t>(),
        c["packets_out"].get<std::uint64_t>() + all_drops(c) + c["in_flight"].get<std::uint64_t>());
    EXPECT_GT(c["drops_aqm"].get<std::uint64_t>(), 0u) << c.dump();
    EXPECT_TRUE(c.contains("ecn_marked")) << c.dump();
}

// More polling lcores than usable CPUs: linkemd says so before it starts (and runs).
TEST(LinkemdCli, WarnsWhenLcoresOutnumberCpus) {
    const Result r =
        run("--port-a net_null0 --port-b net_null1 --workers 3 --duration 200ms "
            "--stats-interval 0 --mbufs 16384");
    ASSERT_EQ(r.code, 0) << r.err;
    const bool warned = r.err.find("polling lcores on") != std::string::npos;
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    if (CPU_COUNT(&set) < 6)  // --workers 3, two directions: 6 polling lcores
        EXPECT_TRUE(warned) << r.err;
    else
        EXPECT_FALSE(warned) << r.err;
    const Result own =
        run("--port-a net_null0 --port-b net_null1 --workers shared "
            "--duration 200ms --stats-interval 0 --mbufs 16384");
    ASSERT_EQ(own.code, 0) << own.err;
    EXPECT_EQ(own.err.find("polling lcores on"), std::string::npos) << own.err;
}

// The trace limiter with several workers a direction: each would deliver the whole trace.
// Refused before DPDK starts, naming the direction, the limiter and what is allowed.
TEST(LinkemdCli, TraceLimiterRefusesSeveralWorkers) {
    const std::string trace = write_config("up.trace", "1\n2\n3\n");
    const Result r = run("--port-a net_null0 --limiter trace --trace-file " + trace +
                         " --workers 2 --print-config");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("a_to_b: limiter 'trace'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--workers 1 or shared"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("EAL"), std::string::npos) << "DPDK was started: " << r.err;
    const Result one = run("--port-a net_null0 --limiter trace --trace-file " + trace +
                           " --workers 1 --print-config");
    std::remove(trace.c_str());
    ASSERT_EQ(one.code, 0) << one.err;
    EXPECT_EQ(json::parse(one.out)["a_to_b"]["limiter"], "trace");
}

// --lcores takes shared and 1 as --workers does, and says so; in a
// config file "workers" may be a number.
TEST(LinkemdCli, LcoresIsTheEarlierNameOfWorkers) {
    const Result r = run("--port-a net_null0 --port-b net_null1 --lcores 1 --print-config");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("--lcores is now called --workers"), std::string::npos) << r.err;
    EXPECT_EQ(json::parse(r.out)["workers"], "1");
    const std::string path =
        write_config("workers.json", R"({"port_a": "net_null0", "workers": 4})");
    const Result f = run("--config " + path + " --print-config");
    std::remove(path.c_str());
    ASSERT_EQ(f.code, 0) << f.err;
    EXPECT_EQ(json::parse(f.out)["workers"], "4");
}

// Two workers on one net_null port's two queues, one direction, sharing one spacer: the
// counters are the workers' sums and balance, the spacer drops what the link cannot take
// (net_null offers far more), the workers reserve the link once per 64 packets, and the
// bytes out over the run's middle are the rate's. That
// last figure is a timing bound: the workers' counters are read at the same instants of the
// data plane's clock unless one of them is held up (a stall).
TEST(LinkemdCli, WorkersOnNullQueuesShareTheSpacer) {
    const Result r =
        run("--port-a net_null0,size=124 --workers 2 --limiter spacer --rate 100Mbit "
            "--duration 4s --stats-interval 500ms --stats-json --mbufs 65536");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("2 workers share one spacer"), std::string::npos) << r.err;
    const std::vector<json> objs = json_lines(r.out);
    ASSERT_GE(objs.size(), 6u) << r.out;
    const json& fin = objs.back()["a_to_b"];
    EXPECT_EQ(fin["packets_in"].get<std::uint64_t>(), fin["packets_out"].get<std::uint64_t>() +
                                                          all_drops(fin) +
                                                          fin["in_flight"].get<std::uint64_t>());
    EXPECT_GT(fin["drops_spacer"].get<std::uint64_t>(), 0u);
    // Each worker takes net_null's full bursts of 16 four at a time: one reservation of the
    // shared link (one compare-and-swap on its word) per 64 packets, not per burst. A count,
    // whatever the machine's load.
    const auto at = r.err.find("the workers reserved the shared link");
    ASSERT_NE(at, std::string::npos) << r.err;
    const auto open = r.err.find('(', at);
    ASSERT_NE(open, std::string::npos) << r.err;
    const double per_reservation = std::stod(r.err.substr(open + 1));
    EXPECT_GT(per_reservation, 60.0) << r.err.substr(at, 120);
    // From the second to the last periodic line: 128-byte frames (124 + FCS).
    const json& a = objs[1];
    const json& b = objs[objs.size() - 2];
    const double secs = (b["t_ns"].get<double>() - a["t_ns"].get<double>()) / 1e9;
    const double bits =
        8.0 * (b["a_to_b"]["bytes_out"].get<double>() - a["a_to_b"]["bytes_out"].get<double>());
    const double stalled =
        (b["a_to_b"]["stall_ns"].get<double>() - a["a_to_b"]["stall_ns"].get<double>()) / 1e9;
    std::printf(
        "2 workers, shared spacer at 100 Mbit/s: %.3f Mbit/s over %.2f s; stalled "
        "%.3f s in all\n",
        bits / secs / 1e6, secs, stalled);
    if (stalled > 0.002 * secs) {
        std::printf(
            "timing bound: skipped (the spacer's rate to 0.5 %%: the workers stalled "
            "%.3f s)\n",
            stalled);
        GTEST_SKIP() << "machine busy: the workers stalled " << stalled << " s";
    }
    std::printf("timing bound: checked (the spacer's rate to 0.5 %%)\n");
    EXPECT_NEAR(bits / secs / 100e6, 1.0, 0.005);
}

// A stall: SIGSTOP halts every thread of linkemd, the polling lcore too, for 50 ms or more,
// once the data plane runs (its first stats line is out). The counters show it, and linkemd
// warns on stderr. linkemd runs until SIGINT, sent once two more stats lines are out after
// SIGCONT: a fixed --duration could end the run before a loaded machine lets the shell send
// SIGSTOP, and then no poll of the lcore sees the gap. The 50 ms count from when every thread
// shows as stopped in /proc: a thread stops when the kernel next handles its signals, which a
// busy machine can delay (a 50 ms sleep right after `kill` once left a gap of 16.8 ms).
TEST(LinkemdCli, CountsAndReportsStalls) {
    const std::string out = "/tmp/linkemd_cli_stall_" + std::to_string(getpid()) + ".out";
    const std::string lines = "$(wc -l <" + out + ")";
    const Result r = run_shell(
        std::string(LINKEMD_PATH) +
        " --no-control --port-a net_null0 --port-b net_null1 --mean-delay 1ms --duration 60s "
        "--stats-interval 200ms --stats-json --mbufs 16384 >" +
        out + " & pid=$!; i=0; while [ ! -s " + out +
        " ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -STOP $pid; "
        "i=0; while grep -q '^State:[[:space:]]*[^T[:space:]]' /proc/$pid/task/*/status && "
        "[ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; sleep 0.05; kill -CONT $pid; n=" +
        lines + "; i=0; while [ " + lines +
        " -lt $((n+2)) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; kill -INT $pid; "
        "wait $pid; rc=$?; cat " +
        out + "; rm -f " + out + "; exit $rc");
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<json> objs = json_lines(r.out);
    ASSERT_GE(objs.size(), 2u) << r.out << r.err;
    const json& last = objs.back();
    ASSERT_TRUE(last["final"].get<bool>());
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        const json& c = last[dir];
        EXPECT_GE(c["stalls"].get<std::uint64_t>(), 1u) << dir << "\n" << r.out << r.err;
        EXPECT_GE(c["longest_stall_ns"].get<std::uint64_t>(), 30'000'000u) << dir << "\n"
                                                                           << r.out << r.err;
        EXPECT_GE(c["stall_ns"].get<std::uint64_t>(), c["longest_stall_ns"].get<std::uint64_t>())
            << dir;
    }
    EXPECT_NE(r.err.find("direction a_to_b: the data plane did not run for"), std::string::npos)
        << r.err;
}

}  // namespace
