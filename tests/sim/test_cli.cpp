#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace linkem::sim {
namespace {

CliOptions parse(const std::vector<const char*>& args) {
    std::vector<const char*> argv = {"linkem-sim"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_cli(static_cast<int>(argv.size()), argv.data());
}

// The UsageError for these arguments; fails the test if they parse.
UsageError error_of(const std::vector<const char*>& args) {
    try {
        parse(args);
    } catch (const UsageError& e) {
        return e;
    }
    ADD_FAILURE() << "arguments were accepted";
    return UsageError("", "");
}

TEST(Cli, BuildsLinkParamsAndTrafficFromTheSharedVocabulary) {
    const CliOptions o = parse({"--strategy",
                                "reordered",
                                "--mean-delay",
                                "3ms",
                                "--jitter",
                                "300us",
                                "--half-life",
                                "70ms",
                                "--traffic-rate",
                                "1Gbit",
                                "--frame-size",
                                "64",
                                "--duration",
                                "2s",
                                "--seed",
                                "9",
                                "--utilization",
                                "0.8",
                                "--distribution",
                                "gamma",
                                "--runs",
                                "4",
                                "--traffic-pattern",
                                "poisson",
                                "--limiter",
                                "spacer",
                                "--rate",
                                "900Mbit",
                                "--json"});
    EXPECT_EQ(o.cfg.link.strategy, Strategy::reordered);
    EXPECT_EQ(o.cfg.link.mean_delay, 3 * kNsPerMs);
    EXPECT_EQ(o.cfg.link.jitter, 300 * kNsPerUs);
    EXPECT_EQ(o.cfg.link.half_life, 70 * kNsPerMs);
    EXPECT_EQ(o.cfg.link.distribution, Distribution::gamma);
    EXPECT_EQ(o.cfg.link.seed, 9u);
    EXPECT_EQ(o.cfg.link.limiter, Limiter::spacer);
    EXPECT_DOUBLE_EQ(o.cfg.link.rate_bps, 900e6);   // --rate: the limiter's rate_bps, as in linkemd
    EXPECT_DOUBLE_EQ(o.cfg.traffic.rate_bps, 1e9);  // --traffic-rate: traffic.rate_bps
    EXPECT_EQ(o.cfg.traffic.frame_bytes, 64u);
    EXPECT_EQ(o.cfg.traffic.pattern, TrafficPattern::poisson);
    EXPECT_EQ(o.cfg.duration, 2 * kNsPerSec);
    EXPECT_DOUBLE_EQ(o.cfg.utilization, 0.8);
    EXPECT_EQ(o.runs, 4);
    EXPECT_TRUE(o.json);
}

TEST(Cli, DefaultsAreThePapersSetting) {
    const CliOptions o = parse({});
    EXPECT_EQ(o.cfg.link.strategy, Strategy::correlated);
    EXPECT_EQ(o.cfg.link.mean_delay, 10 * kNsPerMs);
    EXPECT_EQ(o.cfg.link.half_life, 21 * kNsPerMs);
    EXPECT_EQ(o.cfg.traffic.frame_bytes, 1518u);
    EXPECT_EQ(o.cfg.link.seed, 1u);
}

TEST(Cli, BadValuesNameTheFlagAndWhatIsAllowed) {
    struct Case {
        std::vector<const char*> args;
        std::string flag, says;
    };
    const std::vector<Case> cases = {
        {{"--mean-delay", "10"}, "--mean-delay", "unit"},
        {{"--strategy", "fifo"}, "--strategy", "'correlated', 'uncorrelated', 'reordered'"},
        {{"--distribution", "pareto"}, "--distribution", "lognormal"},
        {{"--traffic-pattern", "bursty"}, "--traffic-pattern", "cbr, poisson, sine"},
        {{"--traffic-rate", "fast"}, "--traffic-rate", "bit rate"},
        {{"--traffic-rate", "10bps"}, "--traffic-rate", "1 kbit/s"},
        {{"--rate", "fast"}, "--rate", "bit rate"},
        {{"--buffer-limit", "0"}, "--buffer-limit", "1 .. 268435456"},
        {{"--traffic-rates", "1Gbit"}, "--traffic-rates", "--sweep"},
        // --rate is the limiter's rate: without a limiter it would do nothing, and the error
        // names --traffic-rate, the offered traffic's rate.
        {{"--rate", "1Gbit"}, "--rate", "--traffic-rate"},
        {{"--utilization", "1.5"}, "--utilization", "0 .. 1"},
        {{"--loss-probability", "2"}, "--loss-probability", "0 .. 1"},
        {{"--runs", "0"}, "--runs", "1 .. 10000"},
        {{"--frame-size", "20"}, "--frame-size", "64 and 65535"},
        {{"--sweep", "fig2"}, "--sweep", "fig1, fig3"},
        {{"--plot", "x.png"}, "--plot", "--sweep"},
        {{"--duration", "0s"}, "--duration", "greater than 0"},
        // Combination rules of linkem::validate, reported with the flag and the JSON field.
        {{"--distribution", "constant", "--jitter", "1ms"}, "--jitter", "jitter_us"},
        {{"--limiter", "spacer"}, "--rate", "rate_bps"},
        {{"--mean-delay", "11s"}, "--mean-delay", "mean_delay_us"},
    };
    for (const Case& c : cases) {
        const UsageError e = error_of(c.args);
        EXPECT_EQ(e.flag(), c.flag) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos)
            << "'" << e.what() << "' should mention '" << c.says << "'";
    }
}

TEST(Cli, RunCliExitsWithTwoOnBadArgumentsAndZeroOnHelp) {
    std::ostringstream out, err;
    const char* bad[] = {"linkem-sim", "--jitter", "lots"};
    EXPECT_EQ(run_cli(3, bad, out, err), 2);
    EXPECT_NE(err.str().find("--jitter"), std::string::npos);
    EXPECT_TRUE(out.str().empty());

    std::ostringstream out2, err2;
    const char* unknown[] = {"linkem-sim", "--colour", "red"};
    EXPECT_EQ(run_cli(3, unknown, out2, err2), 2);
    EXPECT_NE(err2.str().find("--colour"), std::string::npos);

    std::ostringstream out3, err3;
    const char* help[] = {"linkem-sim", "--help"};
    EXPECT_EQ(run_cli(2, help, out3, err3), 0);
    EXPECT_NE(out3.str().find("--rate RATE"), std::string::npos);
    EXPECT_NE(out3.str().find("--traffic-rate RATE"), std::string::npos);
    EXPECT_EQ(out3.str().find("--limiter-rate"), std::string::npos);  // no such flag
}

TEST(Cli, SmallRunPrintsJsonWithSummary) {
    std::ostringstream out, err;
    const char* argv[] = {"linkem-sim", "--jitter", "1ms", "--traffic-rate", "1Gbit", "--duration",
                          "200ms",      "--runs",   "2",   "--json",         "-q"};
    ASSERT_EQ(run_cli(11, argv, out, err), 0) << err.str();
    const std::string s = out.str();
    for (const char* key : {"\"summary\"", "\"mean_delay_dev_pct\"", "\"ci95\"", "\"results\"",
                            "\"swaps_per_packet\"", "\"passage_time_ms\"", "\"traffic\""})
        EXPECT_NE(s.find(key), std::string::npos) << key;
}

}  // namespace
}  // namespace linkem::sim
