// Scenarios: the timeline a file describes (steps at their time, ramps in steps of at most
// 1 ms, loops, keys not given keeping the link's values), the JSON and CSV readers with every
// kind of bad input refused naming the file, line or step and the key, the built-in
// scenarios, and the Emulator following a track: each packet gets the parameters of its
// arrival time, none is lost or sent twice by a change, and the order in which the data
// plane and the simulator hand over the parameters does not change the delay series.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "linkem/classes_json.hpp"
#include "linkem/emulator.hpp"
#include "linkem/scenario.hpp"
#include "linkem/scenario_file.hpp"

namespace linkem {
namespace {

using nlohmann::json;

constexpr DurationNs kS = kNsPerSec;
constexpr DurationNs kMs = kNsPerMs;

Scenario from(const json& j) {
    return scenario_from_json(j, "test.json");
}

ScenarioTracks compiled(const json& j, const LinkConfig& base = {}, unsigned dirs = 2) {
    return compile_scenario(from(j), base, dirs, "test.json");
}

const json kSteps = {{"name", "steps"},
                     {"duration_s", 30},
                     {"steps",
                      {{{"at_s", 0}, {"set", {{"mean_delay_us", 10000}, {"jitter_us", 0}}}},
                       {{"at_s", 10}, {"set", {{"mean_delay_us", 100000}}}},
                       {{"at_s", 20}, {"set", {{"mean_delay_us", 10000}}}}}}};

TEST(ScenarioTrack, StepsTakeForceAtTheirTime) {
    const ScenarioTracks t = compiled(kSteps);
    for (const ScenarioTrack& d : t.dir) {
        EXPECT_EQ(d.at(0).mean_delay, 10 * kMs);
        EXPECT_EQ(d.at(-5 * kS).mean_delay, 10 * kMs);  // before the start: as at 0
        EXPECT_EQ(d.at(10 * kS - 1).mean_delay, 10 * kMs);
        EXPECT_EQ(d.at(10 * kS).mean_delay, 100 * kMs);
        EXPECT_EQ(d.at(20 * kS - 1).mean_delay, 100 * kMs);
        EXPECT_EQ(d.at(20 * kS).mean_delay, 10 * kMs);
        EXPECT_EQ(d.at(100 * kS).mean_delay, 10 * kMs);  // after the end: as at the end
        EXPECT_EQ(d.next_change(0), 10 * kS);
        EXPECT_EQ(d.next_change(10 * kS), 20 * kS);
        EXPECT_EQ(d.next_change(25 * kS), 30 * kS);
        EXPECT_EQ(d.next_change(30 * kS), kNever);
    }
}

TEST(ScenarioTrack, RampsMoveInStepsOfAtMostAMillisecond) {
    const ScenarioTracks t =
        compiled({{"duration_s", 20},
                  {"steps",
                   {{{"at_s", 0}, {"set", {{"mean_delay_us", 10000}}}},
                    {{"at_s", 5}, {"until_s", 15}, {"ramp", {{"mean_delay_us", 20000}}}}}}});
    const ScenarioTrack& d = t.dir[0];
    EXPECT_EQ(d.at(5 * kS).mean_delay, 10 * kMs);
    EXPECT_EQ(d.at(5 * kS + kMs - 1).mean_delay, 10 * kMs);
    EXPECT_EQ(d.at(5 * kS + kMs).mean_delay, 10 * kMs + 1000);  // 10 ms over 10 s: 1 us a ms
    EXPECT_EQ(d.at(10 * kS).mean_delay, 15 * kMs);
    EXPECT_EQ(d.at(15 * kS - 1).mean_delay, 20 * kMs - 1000);
    EXPECT_EQ(d.at(15 * kS).mean_delay, 20 * kMs);
    EXPECT_EQ(d.next_change(5 * kS + 300 * kNsPerUs), 5 * kS + kMs);
    EXPECT_EQ(d.next_change(15 * kS - 1), 15 * kS);
    EXPECT_EQ(d.number_at(static_cast<std::size_t>(link_param_index("mean_delay_us")), 10 * kS),
              15000.0);
    // Every step of the ramp is at most a millisecond, and it moves monotonically.
    DurationNs p = 5 * kS, last = 10 * kMs;
    while (p < 15 * kS) {
        const DurationNs n = d.next_change(p);
        EXPECT_LE(n - p, kMs);
        EXPECT_GE(d.at(n).mean_delay, last);
        last = d.at(n).mean_delay;
        p = n;
    }
}

TEST(ScenarioTrack, LoopsStartAgainAtTheirEnd) {
    json j = kSteps;
    j["loop"] = true;
    const ScenarioTracks t = compiled(j);
    const ScenarioTrack& d = t.dir[0];
    EXPECT_EQ(d.at(35 * kS).mean_delay, 10 * kMs);
    EXPECT_EQ(d.at(45 * kS).mean_delay, 100 * kMs);
    EXPECT_EQ(d.next_change(25 * kS), 30 * kS);  // the restart
    EXPECT_EQ(d.next_change(30 * kS), 40 * kS);
    EXPECT_EQ(d.next_change(3 * 30 * kS + 15 * kS), 3 * 30 * kS + 20 * kS);
}

TEST(ScenarioTrack, KeysNotGivenKeepTheLinksValuesAndDirectionsTheirOwn) {
    LinkConfig base;
    base.a_to_b.loss_model = LossModel::bernoulli;
    base.a_to_b.loss_probability = 0.01;
    base.b_to_a.mean_delay = 3 * kMs;
    const ScenarioTracks t =
        compiled({{"duration_s", 10},
                  {"steps",
                   {{{"at_s", 2}, {"set", {{"a_to_b", {{"mean_delay_us", 7000}}}}}},
                    {{"at_s", 4}, {"set", {{"b_to_a", {{"jitter_us", 1000}}}}}}}}},
                 base);
    EXPECT_EQ(t.dir[0].at(1 * kS).mean_delay, 0);
    EXPECT_EQ(t.dir[0].at(3 * kS).mean_delay, 7 * kMs);
    EXPECT_EQ(t.dir[0].at(9 * kS).loss_probability, 0.01);
    EXPECT_EQ(t.dir[0].at(9 * kS).jitter, 0);
    EXPECT_EQ(t.dir[1].at(9 * kS).mean_delay, 3 * kMs);
    EXPECT_EQ(t.dir[1].at(9 * kS).jitter, 1 * kMs);
    EXPECT_EQ(t.at(9 * kS).b_to_a, t.dir[1].at(9 * kS));
    EXPECT_EQ(step_in_force(from({{"duration_s", 10},
                                  {"steps",
                                   {{{"at_s", 2}, {"set", {{"jitter_us", 1}}}},
                                    {{"at_s", 4}, {"set", {{"jitter_us", 2}}}}}}}),
                            3 * kS),
              0);
}

// ------------------------------------------------------------------------- bad input
void expect_refused(const json& j, const std::string& field, const std::string& what,
                    const LinkConfig& base = {}) {
    try {
        (void)compile_scenario(from(j), base, 2, "test.json");
        FAIL() << "accepted: " << j.dump();
    } catch (const ScenarioError& e) {
        EXPECT_EQ(e.place(), "test.json");
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_NE(e.message().find(what), std::string::npos) << e.what();
    }
}

json with_step(const json& step) {
    json j = kSteps;
    j["steps"].push_back(step);
    return j;
}

TEST(ScenarioFile, RefusesBadInputNamingTheStepAndKey) {
    // Keys, types and ranges.
    expect_refused({{"name", "x"}, {"stepz", json::array()}}, "stepz", "unknown key");
    expect_refused({{"mean_delay_us", 5}, {"steps", kSteps["steps"]}}, "mean_delay_us",
                   "link parameters go into a step's set");
    expect_refused({{"name", "x"}}, "steps", "expected an array of at least one step");
    expect_refused(with_step({{"at_s", 25}, {"sett", {{"jitter_us", 1}}}}), "steps[3].sett",
                   "unknown key");
    expect_refused(with_step({{"at_s", 25}, {"set", {{"jiter_us", 1}}}}), "steps[3].set.jiter_us",
                   "unknown parameter");
    expect_refused(with_step({{"at_s", 25}, {"set", {{"b_to_a", {{"jitter_us", -1}}}}}}),
                   "steps[3].set.b_to_a.jitter_us", "-1 is out of range");
    expect_refused(with_step({{"at_s", 25}, {"set", {{"loss_probability", 2}}}}),
                   "steps[3].set.loss_probability", "out of range");
    expect_refused(with_step({{"at_s", 25}, {"set", json::object()}}), "steps[3].set", "empty");
    expect_refused(with_step({{"at_s", -1}, {"set", {{"jitter_us", 1}}}}), "steps[3].at_s",
                   "out of range");
    expect_refused(with_step({{"at_s", "12s"}, {"set", {{"jitter_us", 1}}}}), "steps[3].at_s",
                   "expected a number of seconds");
    // Time going back, a ramp that does not end after it starts, set and ramp together.
    expect_refused(with_step({{"at_s", 15}, {"set", {{"jitter_us", 1}}}}), "steps[3].at_s",
                   "goes back");
    expect_refused(with_step({{"at_s", 25}, {"until_s", 25}, {"ramp", {{"jitter_us", 1}}}}),
                   "steps[3].until_s", "must be after at_s");
    expect_refused(with_step({{"at_s", 25}, {"ramp", {{"jitter_us", 1}}}}), "steps[3].until_s",
                   "missing");
    expect_refused(with_step({{"at_s", 25}, {"set", {{"jitter_us", 1}}}, {"ramp", json::object()}}),
                   "steps[3]", "exactly one of 'set'");
    // The timeline's length.
    json late = with_step({{"at_s", 25}, {"until_s", 35}, {"ramp", {{"jitter_us", 1}}}});
    expect_refused(late, "duration_s", "ends before the last step");
    json loop = with_step({{"at_s", 30}, {"set", {{"jitter_us", 1}}}});
    loop["loop"] = true;
    expect_refused(loop, "steps[3].at_s", "the scenario starts again");
}

TEST(ScenarioFile, RefusesTimelinesThatCannotBePlayed) {
    // A ramp moves numbers only.
    expect_refused(
        with_step({{"at_s", 25}, {"until_s", 28}, {"ramp", {{"strategy", "reordered"}}}}),
        "steps[3].a_to_b.strategy", "a ramp moves numbers only");
    expect_refused(with_step({{"at_s", 25}, {"until_s", 28}, {"ramp", {{"seed", 5}}}}),
                   "steps[3].a_to_b.seed", "a ramp moves numbers only");
    // One key, one ramp at a time; no step into a ramp.
    json two = kSteps;
    two["steps"].push_back({{"at_s", 21}, {"until_s", 25}, {"ramp", {{"jitter_us", 100}}}});
    two["steps"].push_back({{"at_s", 22}, {"until_s", 26}, {"ramp", {{"jitter_us", 200}}}});
    expect_refused(two, "steps[4].a_to_b.jitter_us", "a ramp (steps[3]) moves it until 25 s");
    json into = kSteps;
    into["steps"].push_back({{"at_s", 21}, {"until_s", 25}, {"ramp", {{"jitter_us", 100}}}});
    into["steps"].push_back({{"at_s", 23}, {"set", {{"b_to_a", {{"jitter_us", 5}}}}}});
    expect_refused(into, "steps[4].b_to_a.jitter_us", "moves it until 25 s");
    // Parameters that do not go together at a step's time (here: with the link's own).
    LinkConfig constant;
    constant.a_to_b.distribution = Distribution::constant;
    expect_refused(with_step({{"at_s", 25}, {"set", {{"a_to_b", {{"jitter_us", 1000}}}}}}),
                   "steps[3].a_to_b.jitter_us",
                   "at 25 s: must be 0 when distribution is 'constant'", constant);
    expect_refused(with_step({{"at_s", 25}, {"set", {{"limiter", "spacer"}}}}),
                   "steps[3].a_to_b.rate_bps", "must be at least");
}

std::string write(const std::string& name, const std::string& text) {
    const std::string path = testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

TEST(ScenarioFile, MalformedFilesAreRefusedWithTheLine) {
    const std::string bad = write("linkem_bad.json", "{\n  \"name\": \"x\",\n  \"steps\": [\n}\n");
    try {
        (void)read_scenario_file(bad);
        FAIL();
    } catch (const ScenarioError& e) {
        EXPECT_EQ(e.place(), bad);
        EXPECT_NE(e.message().find("not valid JSON"), std::string::npos) << e.what();
        EXPECT_NE(e.message().find("line 4"), std::string::npos) << e.what();
    }
    try {
        (void)read_scenario_file(bad + ".missing");
        FAIL();
    } catch (const ScenarioError& e) {
        EXPECT_NE(e.message().find("cannot open"), std::string::npos) << e.what();
    }
    std::filesystem::remove(bad);
}

TEST(ScenarioFile, JsonRoundTrips) {
    json j = {{"name", "rt"},
              {"description", "d"},
              {"source", "s"},
              {"loop", true},
              {"duration_s", 40},
              {"steps",
               {{{"at_s", 0},
                 {"set", {{"mean_delay_us", 10000}, {"limiter", "spacer"}, {"rate_bps", 1e6}}}},
                {{"at_s", 5}, {"set", {{"a_to_b", {{"loss_model", "bernoulli"}}}}}, {"note", "n"}},
                {{"at_s", 10.5}, {"until_s", 20}, {"ramp", {{"b_to_a", {{"rate_bps", 5e6}}}}}}}}};
    const Scenario s = from(j);
    EXPECT_EQ(s.steps.size(), 3u);
    EXPECT_EQ(s.steps[2].at, 10 * kS + 500 * kMs);
    EXPECT_TRUE(s.steps[2].ramp);
    const json out = scenario_to_json(s);
    EXPECT_EQ(from(out), s);
    EXPECT_EQ(out["steps"][1]["set"], json({{"a_to_b", {{"loss_model", "bernoulli"}}}}));
    EXPECT_EQ(out["steps"][1]["note"], "n");
}

// -------------------------------------------------------------------------------- CSV
Scenario csv(const std::string& text) {
    std::istringstream in(text);
    return scenario_from_csv(in, "path.csv");
}

void expect_csv_refused(const std::string& text, const std::string& place, const std::string& field,
                        const std::string& what) {
    try {
        (void)csv(text);
        FAIL() << "accepted: " << text;
    } catch (const ScenarioError& e) {
        EXPECT_EQ(e.place(), place) << e.what();
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_NE(e.message().find(what), std::string::npos) << e.what();
    }
}

// ------------------------------------------------------------------------ traffic classes
LinkConfig with_classes() {
    LinkConfig link;
    link.classes = classes_from_json(json::parse(R"([
        {"name": "voip", "match": {"protocol": "udp"}, "mean_delay_us": 80000},
        {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"},
        {"name": "bulk", "match": {"protocol": "tcp"}, "limiter": "link"}])"));
    return link;
}

// A scenario keeps the link's classes; a step naming a class changes that class's parameters
// at its time (a set), and default's tracks not at all.
TEST(ScenarioClasses, AClassStepChangesThatClassAtItsTime) {
    const LinkConfig base = with_classes();
    const json j = {
        {"name", "c"},
        {"duration_s", 30},
        {"steps",
         {{{"at_s", 0}, {"set", {{"mean_delay_us", 10000}}}},
          {{"at_s", 10}, {"class", "voip"}, {"set", {{"mean_delay_us", 150000}}}},
          {{"at_s", 20},
           {"class", "voip"},
           {"set", {{"b_to_a", {{"loss_model", "bernoulli"}, {"loss_probability", 0.1}}}}}}}}};
    const ScenarioTracks t = compiled(j, base);
    EXPECT_EQ(t.at(0).classes, base.classes);  // the trap: never dropped
    EXPECT_EQ(t.at(5 * kS).a_to_b.mean_delay, 10 * kMs);
    EXPECT_EQ(t.at(15 * kS).a_to_b.mean_delay, 10 * kMs);  // default's: untouched by voip's
    EXPECT_EQ(t.at(10 * kS - 1).classes[0].link.a_to_b.mean_delay, 80 * kMs);
    EXPECT_EQ(t.at(10 * kS).classes[0].link.a_to_b.mean_delay, 150 * kMs);
    EXPECT_EQ(t.at(10 * kS).classes[0].link.b_to_a.mean_delay, 150 * kMs);
    EXPECT_EQ(t.at(10 * kS).classes[0].link.b_to_a.loss_probability, 0.0);
    EXPECT_EQ(t.at(25 * kS).classes[0].link.b_to_a.loss_probability, 0.1);
    EXPECT_EQ(t.at(25 * kS).classes[0].link.b_to_a.loss_model, LossModel::bernoulli);
    EXPECT_EQ(t.at(25 * kS).classes[0].link.a_to_b.loss_probability, 0.0);
    EXPECT_EQ(t.at(100 * kS).classes[0].link.a_to_b.mean_delay, 150 * kMs);  // the end's
    EXPECT_EQ(t.at(25 * kS).classes[1], base.classes[1]);
    // With loop, each repeat starts from the classes of the start.
    json loop = j;
    loop["loop"] = true;
    const ScenarioTracks l = compiled(loop, base);
    EXPECT_EQ(l.at(35 * kS).classes[0].link.a_to_b.mean_delay, 80 * kMs);
    EXPECT_EQ(l.at(45 * kS).classes[0].link.a_to_b.mean_delay, 150 * kMs);
    // The file round trips with its class; "default" is the link's own.
    EXPECT_EQ(from(scenario_to_json(from(j))), from(j));
    EXPECT_EQ(scenario_to_json(from(j))["steps"][1]["class"], "voip");
    json d = j;
    d["steps"][1]["class"] = "default";
    EXPECT_EQ(compiled(d, base).at(15 * kS).a_to_b.mean_delay, 150 * kMs);
    EXPECT_FALSE(scenario_to_json(from(d))["steps"][1].contains("class"));
}

TEST(ScenarioClasses, BadClassStepsAreRefusedNamingTheStep) {
    const LinkConfig base = with_classes();
    expect_refused(with_step({{"at_s", 25}, {"class", "video"}, {"set", {{"jitter_us", 1}}}}),
                   "steps[3].class", "no class 'video'; the link's classes: default, voip", base);
    expect_refused(with_step({{"at_s", 25}, {"class", "voip"}, {"set", {{"jitter_us", 1}}}}),
                   "steps[3].class", "no class 'voip'; the link's classes: default");
    expect_refused(with_step({{"at_s", 25}, {"class", "Voip!"}, {"set", {{"jitter_us", 1}}}}),
                   "steps[3].class", "not a class name", base);
    expect_refused(with_step({{"at_s", 25}, {"class", 3}, {"set", {{"jitter_us", 1}}}}),
                   "steps[3].class", "expected a string", base);
    expect_refused(
        with_step({{"at_s", 25}, {"until_s", 28}, {"class", "voip"}, {"ramp", {{"jitter_us", 1}}}}),
        "steps[3].ramp", "a ramp on a traffic class is not supported", base);
    expect_refused(with_step({{"at_s", 25}, {"class", "ssh"}, {"set", {{"jitter_us", 1}}}}),
                   "steps[3].a_to_b.jitter_us", "action 'pass'", base);
    expect_refused(with_step({{"at_s", 25}, {"class", "bulk"}, {"set", {{"rate_bps", 1e6}}}}),
                   "steps[3].a_to_b.rate_bps", "shares the link's limiter", base);
    expect_refused(with_step({{"at_s", 25}, {"class", "voip"}, {"set", {{"limiter", "spacer"}}}}),
                   "steps[3].a_to_b.rate_bps", "at 25 s", base);
}

TEST(ScenarioCsv, RowsAreStepsOfTheirCells) {
    const Scenario s =
        csv("# name: measured\n# source: a drive test\n# loop: true\n"
            "time_s,mean_delay_us,jitter_us,rate_bps,b_to_a.loss_probability\n"
            "0,20000,2000,50e6,0.001\n"
            "1.5,24000,,45e6,\n"
            "3,,1000,,0.01\n");
    EXPECT_EQ(s.name, "measured");
    EXPECT_EQ(s.source, "a drive test");
    EXPECT_TRUE(s.loop);
    ASSERT_EQ(s.steps.size(), 3u);
    EXPECT_EQ(s.duration, 4500 * kMs);  // the last row lasts as long as the one before
    const ScenarioTracks t = compile_scenario(s, LinkConfig{}, 2, "path.csv");
    EXPECT_EQ(t.dir[0].at(2 * kS).mean_delay, 24 * kMs);
    EXPECT_EQ(t.dir[0].at(2 * kS).jitter, 2 * kMs);
    EXPECT_EQ(t.dir[0].at(2 * kS).rate_bps, 45e6);
    // A rate needs a limiter, a loss probability a loss model: added to the first row.
    EXPECT_EQ(t.dir[0].at(0).limiter, Limiter::spacer);
    EXPECT_EQ(t.dir[1].at(0).loss_model, LossModel::bernoulli);
    EXPECT_EQ(t.dir[0].at(0).loss_model, LossModel::none);
    EXPECT_EQ(t.dir[1].at(3 * kS).loss_probability, 0.01);
}

TEST(ScenarioCsv, RefusesBadInputNamingTheLine) {
    expect_csv_refused("", "path.csv", "", "no header line");
    expect_csv_refused("t,mean_delay_us\n0,1\n", "path.csv:1", "column 1", "must be time_s");
    expect_csv_refused("time_s,mean_delay_us,secret\n", "path.csv:1", "column 3",
                       "not a link parameter's key");
    expect_csv_refused("time_s,mean_delay_us\n0,1\n1,x\n", "path.csv:3", "mean_delay_us",
                       "not a number");
    expect_csv_refused("time_s,mean_delay_us\n0,1\n1,-5\n", "path.csv:3", "mean_delay_us",
                       "out of range");
    expect_csv_refused("time_s,mean_delay_us\n0,1\n2,1\n1,1\n", "path.csv:4", "time_s",
                       "not after the row before");
    expect_csv_refused("time_s,mean_delay_us\n0,1,2\n", "path.csv:2", "", "3 cells");
    expect_csv_refused("time_s,mean_delay_us\n", "path.csv", "", "no rows");
    // A row with every value empty sets nothing; its JSON form ("set": {}) is refused too.
    expect_csv_refused("time_s,queue\n0,\n", "path.csv:2", "", "no value");
    expect_csv_refused("time_s,mean_delay_us\n0,1\n1,\n", "path.csv:3", "", "no value");
    // Rules that only the timeline shows name the line too.
    try {
        (void)compile_scenario(csv("time_s,distribution,jitter_us\n0,constant,0\n1,,5\n"),
                               LinkConfig{}, 2, "path.csv");
        FAIL();
    } catch (const ScenarioError& e) {
        EXPECT_EQ(e.place(), "path.csv:3") << e.what();
        EXPECT_EQ(e.field(), "a_to_b.jitter_us") << e.what();
    }
}

// ------------------------------------------------------------------------- built-ins
TEST(BuiltinScenarios, EachIsSourcedAndPlays) {
    std::vector<std::string> names;
    for (const BuiltinScenario& b : builtin_scenarios()) {
        SCOPED_TRACE(b.name);
        names.push_back(b.name);
        const auto s = builtin_scenario(b.name);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->name, b.name);
        EXPECT_GE(s->description.size(), 20u);
        EXPECT_GE(s->source.size(), 20u);
        for (unsigned dirs : {2u, 1u})
            EXPECT_NO_THROW((void)compile_scenario(*s, LinkConfig{}, dirs, b.name));
        EXPECT_EQ(scenario_by_name_or_path(b.name), *s);
    }
    for (const char* want : {"step-response", "wifi-lte-handover", "train-tunnel", "leo-satellite",
                             "congested-evening", "bufferbloat"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    EXPECT_FALSE(builtin_scenario("no-such"));
    EXPECT_THROW((void)scenario_by_name_or_path("no-such"), ScenarioError);
}

// ----------------------------------------------------------------- the Emulator follows
struct Pkt {
    std::uint64_t seq;
    std::uint32_t length;
};

TEST(ScenarioEmulator, EachPacketGetsTheParametersOfItsArrival) {
    const ScenarioTracks t = compiled(kSteps);
    LinkParams base;
    base.distribution = Distribution::constant;
    Emulator<Pkt> emu(base);
    emu.follow(&t.dir[0], 1000 * kS);  // the scenario starts at 1000 s
    const TimeNs origin = 1000 * kS;
    const TimeNs arrivals[] = {origin,
                               origin + 10 * kS - 1,
                               origin + 10 * kS,
                               origin + 15 * kS,
                               origin + 20 * kS - 100 * kMs - 1,
                               origin + 20 * kS,
                               origin + 90 * kS};
    const DurationNs want[] = {10 * kMs,  10 * kMs, 100 * kMs, 100 * kMs,
                               100 * kMs, 10 * kMs, 10 * kMs};
    std::map<std::uint64_t, TimeNs> tx;
    for (std::uint64_t i = 0; i < std::size(arrivals); ++i) {
        const Pkt p{i, 100};
        emu.ingest(&p, 1, arrivals[i]);
        Pkt out[8];
        TimeNs when[8];
        const std::size_t n = emu.drain(std::numeric_limits<TimeNs>::max(), out, 8, when);
        for (std::size_t k = 0; k < n; ++k)
            tx[out[k].seq] = when[k];
    }
    // (The packet before 20 s leaves at 20 s - 1 ns, before the one at 20 s, which order
    // keeping would hold back otherwise.)
    for (std::uint64_t i = 0; i < std::size(arrivals); ++i)
        EXPECT_EQ(tx[i] - arrivals[i], want[i]) << "packet " << i;
    emu.follow(nullptr, 0);  // stops following: the parameters stay
    const Pkt p{99, 100};
    emu.ingest(&p, 1, origin + 200 * kS);
    EXPECT_EQ(emu.params().mean_delay, 10 * kMs);
}

// smooth with a gamma law needs a quantile table per shape (0.25 to ~5 ms to build): the
// track makes them when it is compiled, so following a ramp of the jitter builds none on
// the packet path: at every grid point the Emulator holds the track's own table.
TEST(ScenarioEmulator, AGammaRampUsesTheTracksTables) {
    LinkParams base;
    base.strategy = Strategy::smooth;
    base.distribution = Distribution::gamma;
    base.mean_delay = 10 * kMs;
    base.jitter = 1 * kMs;
    const ScenarioTracks t =
        compiled({{"duration_s", 2},
                  {"steps", {{{"at_s", 0}, {"until_s", 2}, {"ramp", {{"jitter_us", 5000}}}}}}},
                 LinkConfig{base, base});
    const ScenarioTrack& d = t.dir[0];
    Emulator<Pkt> emu(base);
    emu.follow(&d, 0);
    std::uint64_t seq = 0, shapes = 0;
    const GammaQuantileTable* last = nullptr;
    for (TimeNs now = 0; now <= 2 * kS; now += kMs / 2) {
        const Pkt p{seq++, 100};
        emu.ingest(&p, 1, now);
        const auto want = d.gamma_table(d.at(now));
        ASSERT_TRUE(want) << "no table made for " << now << " ns";
        // (At the start the Emulator keeps the one it made for the same law itself.)
        if (want->shape() != d.gamma_table(base)->shape()) {
            ASSERT_EQ(emu.delayer().tables().gamma, want) << now << " ns";
        }
        ASSERT_EQ(emu.delayer().tables().gamma->shape(), want->shape()) << now << " ns";
        shapes += want.get() != last;
        last = want.get();
    }
    // Shape 100 down to 4 on 64 steps an octave: ~297 tables, not one per grid point (2000).
    EXPECT_GT(shapes, 250u);
    EXPECT_LT(shapes, 350u);
}

TEST(ScenarioEmulator, NoPacketIsLostOrDuplicatedByAChange) {
    // Every kind of change while packets are queued: the strategy between FIFO and
    // reordering, the limiter, a buffer limit below what is queued, loss, a ramp of the
    // delay. Each packet leaves once or is counted as dropped, and the counters balance.
    const json j = {
        {"duration_s", 12},
        {"steps",
         {{{"at_s", 0}, {"set", {{"mean_delay_us", 20000}, {"jitter_us", 5000}}}},
          {{"at_s", 1}, {"set", {{"strategy", "reordered"}}}},
          {{"at_s", 2}, {"set", {{"limiter", "spacer"}, {"rate_bps", 5e6}}}},
          {{"at_s", 3}, {"set", {{"strategy", "uncorrelated"}, {"buffer_limit_packets", 20}}}},
          {{"at_s", 4}, {"set", {{"limiter", "policer"}, {"buffer_limit_packets", 100000}}}},
          {{"at_s", 5}, {"set", {{"loss_model", "bernoulli"}, {"loss_probability", 0.1}}}},
          {{"at_s", 6}, {"until_s", 9}, {"ramp", {{"mean_delay_us", 200000}, {"rate_bps", 1e6}}}},
          {{"at_s", 9}, {"set", {{"strategy", "correlated"}, {"limiter", "none"}}}},
          {{"at_s", 10}, {"set", {{"strategy", "reordered"}, {"loss_model", "none"}}}}}}};
    const ScenarioTracks t = compiled(j);
    LinkParams base;
    base.seed = 3;
    Emulator<Pkt> emu(base);
    emu.follow(&t.dir[0], 0);
    std::vector<int> seen;
    std::uint64_t dropped = 0, out_n = 0;
    Pkt drop[64], out[256];
    std::mt19937_64 rng(11);
    std::uint64_t seq = 0;
    for (TimeNs now = 0; now < 14 * kS; now += 200 * kNsPerUs) {
        Pkt burst[16];
        const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 16)(rng);
        for (std::size_t i = 0; i < n; ++i)
            burst[i] = Pkt{seq++, 200 + static_cast<std::uint32_t>(rng() % 1300)};
        seen.resize(seq, 0);
        const std::size_t d = emu.ingest(burst, n, now, drop);
        for (std::size_t i = 0; i < d; ++i)
            ++seen[drop[i].seq];
        dropped += d;
        std::size_t m;
        while ((m = emu.drain(now, out, 256)) > 0) {
            for (std::size_t i = 0; i < m; ++i)
                ++seen[out[i].seq];
            out_n += m;
        }
        const CounterSnapshot c = emu.snapshot();
        ASSERT_EQ(c.packets_in, c.packets_out + c.drops.total() + c.in_flight);
    }
    std::size_t m;
    while ((m = emu.drain(std::numeric_limits<TimeNs>::max(), out, 256)) > 0) {
        for (std::size_t i = 0; i < m; ++i)
            ++seen[out[i].seq];
        out_n += m;
    }
    for (std::uint64_t i = 0; i < seq; ++i)
        ASSERT_EQ(seen[i], 1) << "packet " << i;
    const CounterSnapshot c = emu.snapshot();
    EXPECT_EQ(c.packets_in, seq);
    EXPECT_EQ(c.packets_out, out_n);
    EXPECT_EQ(c.in_flight, 0u);
    EXPECT_GT(c.drops[DropCause::buffer_full], 0u);
    EXPECT_GT(c.drops[DropCause::loss], 0u);
    EXPECT_EQ(dropped, seq - out_n);
}

TEST(ScenarioEmulator, TheHandOverDoesNotChangeTheSeries) {
    // linkemd's lcore builds its Emulator, sets the start-up parameters, then adopts the
    // scenario's block (set_params and follow); linkem-sim builds its Emulator with the start
    // parameters and follows. For the same arrivals and seed the two give the same delays
    // and losses, packet by packet.
    const ScenarioTracks t = compiled(
        {{"duration_s", 10},
         {"steps",
          {{{"at_s", 0},
            {"set",
             {{"mean_delay_us", 20000},
              {"jitter_us", 4000},
              {"loss_model", "bernoulli"},
              {"loss_probability", 0.02}}}},
           {{"at_s", 3}, {"until_s", 6}, {"ramp", {{"mean_delay_us", 60000}, {"jitter_us", 1000}}}},
           {{"at_s", 7}, {"set", {{"loss_probability", 0.1}}}}}}});
    LinkParams base;
    base.seed = 42;
    LinkParams other = base;
    other.strategy = Strategy::reordered;
    Emulator<Pkt> dp(other, 0);
    dp.set_params(base);
    dp.set_params(t.dir[0].at(0));
    dp.follow(&t.dir[0], 0);
    Emulator<Pkt> sim(base, 0);
    sim.follow(&t.dir[0], 0);
    std::vector<std::pair<std::uint64_t, TimeNs>> a, b;
    Pkt out[64];
    TimeNs tx[64];
    auto drain_all = [&](Emulator<Pkt>& e, auto& v) {
        std::size_t m;
        while ((m = e.drain(std::numeric_limits<TimeNs>::max(), out, 64, tx)) > 0)
            for (std::size_t i = 0; i < m; ++i)
                v.emplace_back(out[i].seq, tx[i]);
    };
    TimeNs now = 1234;
    for (std::uint64_t i = 0; i < 20000; ++i, now += 487'000) {
        const Pkt p{i, 1518};
        dp.ingest(&p, 1, now);
        sim.ingest(&p, 1, now);
    }
    drain_all(dp, a);
    drain_all(sim, b);
    EXPECT_GT(dp.snapshot().drops[DropCause::loss], 0u);
    EXPECT_EQ(dp.snapshot().drops[DropCause::loss], sim.snapshot().drops[DropCause::loss]);
    EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace linkem
