// The protocol's messages (linkem/messages.hpp): each encodes to the keys docs/protocol.md
// gives and decodes back to what was encoded; decoders name the key at fault and ignore keys
// they do not know; set_link's update follows set_link's rule on both sides (what a client
// encodes is what linkemd applies).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "linkem/limiter.hpp"
#include "linkem/messages.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/traffic_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using proto::Method;

template <class T>
T round_trip(const T& m) {
    return proto::decode<T>(json::parse(proto::to_json(m).dump()));
}

/// The message `what` names in a decoder's error.
template <class T>
std::string refusal(const json& j) {
    try {
        proto::decode<T>(j);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(decoded)";
}

proto::Hello sample_hello() {
    proto::Hello h;
    h.linkemd_version = "0.1.0";
    h.instance_id = "5f1c9a03d2b7e411";
    h.uptime_ns = h.t_ns = 12'873'345'112;
    h.directions = 2;
    h.ports = {{"a", "net_null0", true, 10000}, {"b", "net_null1", false, 0}};
    h.params_generation = 3;
    h.methods = proto::method_names();
    h.link_params_schema = link_schema();
    h.telemetry = {"tcp://127.0.0.1:7711", 10, 20, 2000};
    h.capabilities = {.save_config = true, .traffic = true, .scenario = true};
    return h;
}

TEST(Messages, HelloRoundTripAndTheKeysOfTheSpec) {
    const proto::Hello h = sample_hello();
    EXPECT_EQ(round_trip(h), h);
    const json j = proto::to_json(h);
    EXPECT_EQ(j["directions"], (json{"a_to_b", "b_to_a"}));
    EXPECT_EQ(j["ports"][1]["device"], "net_null1");
    EXPECT_EQ(j["capabilities"]["save_config"], true);
    EXPECT_EQ(j["telemetry"]["delay_samples_per_s"], 2000);
    EXPECT_EQ(j["link_params_schema"], link_params_schema());
    EXPECT_EQ(j["methods"].size(), proto::kMethodCount);
    // An older linkemd: no schema (this build's is taken), no capabilities (none).
    json older = j;
    older.erase("link_params_schema");
    older.erase("capabilities");
    const auto o = proto::decode<proto::Hello>(older);
    EXPECT_EQ(o.link_params_schema, link_schema());
    EXPECT_FALSE(o.capabilities.traffic);
    // A later one: keys this build does not know are ignored.
    json later = j;
    later["something_new"] = {1, 2};
    later["capabilities"]["compression"] = true;
    EXPECT_EQ(proto::decode<proto::Hello>(later), h);
    // What is wrong is named.
    json bad = j;
    bad["ports"][1]["link_up"] = "yes";
    EXPECT_EQ(refusal<proto::Hello>(bad), "ports[1].link_up: expected true or false, got \"yes\"");
    bad = j;
    bad.erase("instance_id");
    EXPECT_EQ(refusal<proto::Hello>(bad), "instance_id: missing");
    bad = j;
    bad["directions"] = {"b_to_a"};
    EXPECT_NE(refusal<proto::Hello>(bad).find("directions: expected"), std::string::npos);
}

TEST(Messages, SchemaRoundTripKeepsTheTablesOrder) {
    const LinkSchema s = link_schema();
    ASSERT_EQ(s.params.size(), link_param_fields().size());
    EXPECT_EQ(s.params.front().key, link_param_fields().front().key);
    EXPECT_EQ(link_schema_from_json(to_json(s)), s);
    const ParamSchema* m = s.find("mean_delay_us");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->unit, "us");
    EXPECT_EQ(m->max, 1e7);
    const ParamSchema* st = s.find("strategy");
    ASSERT_TRUE(st);
    EXPECT_EQ(st->default_value, FieldValue(std::string("correlated")));
    EXPECT_EQ(s.find("seed")->default_value, FieldValue(std::uint64_t{0}));
    json j = to_json(s);
    j["new_key_us"] = {{"type", "number"}, {"unit", "us"}, {"min", 0}, {"max", 1}, {"help", "h"}};
    const LinkSchema later = link_schema_from_json(j);
    EXPECT_EQ(later.params.back().key, "new_key_us");  // after the ones this build knows
    j["jitter_us"].erase("max");
    EXPECT_THROW(link_schema_from_json(j), std::invalid_argument);
}

TEST(Messages, LinkStateRoundTripNamesTracesWithoutReadingThem) {
    proto::LinkState s;
    s.params_generation = 4;
    s.directions = 2;
    s.link.a_to_b.mean_delay = 20 * kNsPerMs;
    s.link.b_to_a.limiter = Limiter::trace;
    s.link.b_to_a.trace = TraceRef::named("/on/linkemds/machine/down.trace");
    s.applied = true;
    s.ignored = std::vector<std::string>{"port_a"};
    const auto back = round_trip(s);
    EXPECT_EQ(back, s);
    EXPECT_EQ(back.link.b_to_a.trace.get()->path, "/on/linkemds/machine/down.trace");
    const json j = proto::to_json(s);
    EXPECT_EQ(j["a_to_b"]["mean_delay_us"], 20000.0);
    EXPECT_EQ(j["applied"], true);
    EXPECT_FALSE(proto::to_json(proto::LinkState{}).contains("applied"));
    // one direction: b_to_a is a_to_b's
    json one = j;
    one.erase("b_to_a");
    const auto o = proto::decode<proto::LinkState>(one);
    EXPECT_EQ(o.directions, 1u);
    EXPECT_EQ(o.link.b_to_a, o.link.a_to_b);
    json bad = j;
    bad["b_to_a"]["jitter_us"] = -1;
    EXPECT_NE(refusal<proto::LinkState>(bad).find("b_to_a.jitter_us: -1 is out of range"),
              std::string::npos)
        << refusal<proto::LinkState>(bad);
}

// The client's update and set_link's rule on linkemd's side agree: what LinkUpdate says a
// direction gets is what apply_link_update gives it.
TEST(Messages, LinkUpdateFollowsSetLinksRule) {
    proto::LinkUpdate u;
    u.set(0, "mean_delay_us", 5000.0);
    u.set(-1, "jitter_us", 1000.0);
    u.set(1, "jitter_us", 2000.0);       // a direction's own wins over both
    u.set(-1, "mean_delay_us", 7000.0);  // newer for both: the direction's own goes
    u.set(1, "loss_model", std::string("bernoulli"));
    u.set(1, "loss_probability", 0.01);
    EXPECT_EQ(u.value(0, "mean_delay_us"), FieldValue(7000.0));
    EXPECT_EQ(u.value(1, "jitter_us"), FieldValue(2000.0));
    EXPECT_EQ(u.value(0, "jitter_us"), FieldValue(1000.0));
    EXPECT_TRUE(u.has(1, "loss_model"));
    EXPECT_FALSE(u.has(0, "loss_model"));
    const LinkConfig after = proto::apply_link_update(proto::to_json(u), LinkConfig{}, 2);
    for (int d = 0; d < 2; ++d)
        for (const LinkParamField& f : link_param_fields()) {
            if (const auto v = u.value(d, f.key)) {
                EXPECT_EQ(f.get(after.direction(static_cast<unsigned>(d))), *v)
                    << kDirectionKeys[d] << "." << f.key;
            }
        }
    EXPECT_EQ(round_trip(u), u);
    // merge: the newer update's values win, key by key
    proto::LinkUpdate newer;
    newer.set(-1, "jitter_us", 3000.0);
    u.merge(newer);
    EXPECT_EQ(u.value(1, "jitter_us"), FieldValue(3000.0));
    EXPECT_EQ(u.value(0, "mean_delay_us"), FieldValue(7000.0));
    // whole: every key but the seed, per direction
    const proto::LinkUpdate w = proto::LinkUpdate::whole(after, 2, false);
    EXPECT_EQ(w.dir[1].size(), link_param_fields().size() - 1);
    EXPECT_FALSE(w.has(0, "seed"));
    EXPECT_EQ(proto::apply_link_update(proto::to_json(w), LinkConfig{}, 2).b_to_a.loss_model,
              LossModel::bernoulli);
}

TEST(Messages, TrafficRoundTrip) {
    proto::TrafficState t{true, {true, {TrafficPattern::sine, 2e8, 512, 10 * kNsPerSec}}, 2, 5e4};
    EXPECT_EQ(round_trip(t), t);
    EXPECT_EQ(proto::to_json(proto::TrafficState{}), (json{{"available", false}}));
    const proto::TrafficUpdate u = proto::TrafficUpdate::whole(t.config);
    EXPECT_EQ(round_trip(u), u);
    EXPECT_EQ(traffic_from_json(proto::to_json(u), TrafficConfig{}), t.config);
    proto::TrafficUpdate some;
    some.rate_bps = 1e6;
    EXPECT_EQ(proto::to_json(some), (json{{"rate_bps", 1e6}}));
    EXPECT_NE(refusal<proto::TrafficUpdate>(json{{"pattern", "square"}}).find("pattern"),
              std::string::npos);
}

TEST(Messages, ScenarioStatusRoundTrip) {
    proto::ScenarioStatus s;
    s.loaded = true;
    s.position = {"step-response", "playing", 12.5, 30, 0, 1};
    s.description = "d";
    s.source = "src";
    s.steps = 3;
    s.from = "built-in";
    s.t_ns = 40'122'334'455;
    s.origin_ns = 27'619'331'402;
    s.scenario = builtin_scenario("step-response");
    EXPECT_EQ(round_trip(s), s);
    const json j = proto::to_json(s);
    EXPECT_EQ(j["state"], "playing");
    EXPECT_EQ(j["scenario"]["name"], "step-response");
    EXPECT_FALSE(j.contains("path"));
    proto::ScenarioStatus none;
    EXPECT_EQ(proto::to_json(none), (json{{"loaded", false}, {"state", "stopped"}}));
    EXPECT_EQ(round_trip(none), none);
    EXPECT_EQ(round_trip(proto::LoadScenario{s.scenario, "", ""}).scenario, s.scenario);
    EXPECT_EQ(proto::to_json(proto::ScenarioPositionParams{}), json::object());
}

TEST(Messages, TelemetryDecodesByTopicAndNamesTheKey) {
    proto::StatsMessage m;
    m.header = {"00ff", 7, 1000};
    m.stats.t_ns = 1000;
    m.stats.directions = 2;
    m.scenario = proto::ScenarioPosition{"x", "paused", 1, 2, 0, 0};
    const auto t = proto::decode_telemetry("stats", proto::to_json(m));
    ASSERT_TRUE(t && t->stats);
    EXPECT_EQ(t->header, m.header);
    EXPECT_EQ(t->stats->scenario, m.scenario);
    EXPECT_FALSE(t->delay || t->event);
    EXPECT_FALSE(proto::decode_telemetry("capture", proto::to_json(m)));  // a later topic
    json bad = proto::to_json(m);
    bad["b_to_a"]["packets_in"] = -3;
    try {
        proto::decode_telemetry("stats", bad);
        FAIL() << "decoded";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "stats: b_to_a.packets_in: expected a whole number >= 0, got -3");
    }
    proto::Event e = proto::Event::warning("stall", "m");
    e.direction = "a_to_b";
    e.stall_ns = 5;
    const auto te = proto::decode_telemetry("event", proto::to_json(e));
    ASSERT_TRUE(te && te->event);
    EXPECT_EQ(te->event->stall_ns, std::optional<std::uint64_t>(5));
    EXPECT_FALSE(te->event->port);
}

TEST(Messages, EveryMethodHasItsTypes) {
    // The method table and the typed table name the same methods: a typed call of each
    // encodes its params as the method takes them.
    EXPECT_EQ(proto::name(Method::seek_scenario), "seek_scenario");
    EXPECT_EQ(proto::to_json(proto::ParamsOf<Method::get_link>{}), json::object());
    EXPECT_EQ(proto::to_json(proto::ParamsOf<Method::seek_scenario>{2.5}),
              (json{{"position_s", 2.5}}));
    static_assert(std::is_same_v<proto::ResultOf<Method::load_config>, proto::LinkState>);
    static_assert(std::is_same_v<proto::ResultOf<Method::shutdown>, proto::Empty>);
}

}  // namespace
}  // namespace linkem
