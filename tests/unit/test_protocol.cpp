// The protocol codec (docs/protocol.md): every error case the spec documents, round trips
// of every message type, set_link's update semantics, and the helpers behind them.
#include <gtest/gtest.h>

#include <thread>

#include "linkem/messages.hpp"
#include "linkem/spsc_ring.hpp"
#include "linkem/telemetry_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using proto::ErrorCode;

proto::Error refused(std::string_view body) {
    try {
        proto::parse_request(body);
    } catch (const proto::ProtocolError& e) {
        return e.error();
    }
    ADD_FAILURE() << "accepted: " << body;
    return {};
}

TEST(Protocol, ParsesAWellFormedRequest) {
    const proto::Request r = proto::parse_request(
        R"({"v":1,"id":7,"method":"set_link","params":{"mean_delay_us":20000}})");
    EXPECT_EQ(r.id, 7);
    EXPECT_EQ(r.method, "set_link");
    EXPECT_EQ(r.params["mean_delay_us"], 20000);
    const proto::Request s = proto::parse_request(R"({"v":1,"id":"abc","method":"hello"})");
    EXPECT_EQ(s.id, "abc");
    EXPECT_TRUE(s.params.is_object() && s.params.empty());
}

TEST(Protocol, EveryDocumentedRequestErrorHasItsCodeAndField) {
    struct Case {
        std::string body;
        ErrorCode code;
        std::string field;
        std::string in_message;
    };
    const std::vector<Case> cases = {
        {"{not json", ErrorCode::parse_error, "", "not valid JSON"},
        {"\xff\xfe", ErrorCode::parse_error, "", "not valid JSON"},
        {"[1,2]", ErrorCode::invalid_request, "", "JSON object"},
        {R"({"v":1,"method":"hello"})", ErrorCode::invalid_request, "id", "'id' is missing"},
        {R"({"v":1,"id":[1],"method":"hello"})", ErrorCode::invalid_request, "id",
         "integer or a string"},
        {R"({"v":1,"id":1.5,"method":"hello"})", ErrorCode::invalid_request, "id",
         "integer or a string"},
        {R"({"id":1,"method":"hello"})", ErrorCode::invalid_request, "v", "'v' is missing"},
        {R"({"v":"1","id":1,"method":"hello"})", ErrorCode::invalid_request, "v", "integer"},
        {R"({"v":2,"id":1,"method":"hello"})", ErrorCode::unsupported_version, "v", "supported: 1"},
        {R"({"v":1,"id":1})", ErrorCode::invalid_request, "method", "'method' is missing"},
        {R"({"v":1,"id":1,"method":5})", ErrorCode::invalid_request, "method", "must be a string"},
        {R"({"v":1,"id":1,"method":"set_delay"})", ErrorCode::unknown_method, "method",
         "known: hello"},
        {R"({"v":1,"id":1,"method":"hello","params":[1]})", ErrorCode::invalid_request, "params",
         "object"},
        {R"({"v":1,"id":1,"method":"hello","param":{}})", ErrorCode::invalid_request, "param",
         "unknown key"},
        {std::string(70000, ' '), ErrorCode::invalid_request, "", "at most 65536"},
    };
    for (const Case& c : cases) {
        const proto::Error e = refused(c.body);
        EXPECT_EQ(e.code, c.code) << c.body.substr(0, 60);
        EXPECT_EQ(e.field, c.field) << c.body.substr(0, 60);
        EXPECT_NE(e.message.find(c.in_message), std::string::npos) << e.message;
    }
}

TEST(Protocol, ErrorsAfterTheIdCarryIt) {
    try {
        proto::parse_request(R"({"v":3,"id":"x1","method":"hello"})");
        FAIL();
    } catch (const proto::ProtocolError& e) {
        EXPECT_EQ(e.id(), "x1");
    }
    try {
        proto::parse_request("{bad");
        FAIL();
    } catch (const proto::ProtocolError& e) {
        EXPECT_TRUE(e.id().is_null());
    }
}

TEST(Protocol, BinaryJunkInAMethodNameIsAnsweredNotThrown) {
    // A string with invalid UTF-8 is refused by the parser; a valid but odd one is echoed.
    const proto::Error e = refused("{\"v\":1,\"id\":1,\"method\":\"\xc3\x28\"}");
    EXPECT_EQ(e.code, ErrorCode::parse_error);
    const std::string reply =
        proto::encode_error(1, proto::Error{ErrorCode::unknown_method, "x\xff", ""});
    EXPECT_TRUE(json::accept(reply));
}

TEST(Protocol, RepliesRoundTrip) {
    const proto::Reply ok = proto::parse_reply(proto::encode_result(4, json{{"a", 1}}));
    EXPECT_TRUE(ok.ok());
    EXPECT_EQ(ok.id, 4);
    EXPECT_EQ(ok.result["a"], 1);
    const proto::Reply bad = proto::parse_reply(proto::encode_error(
        "q", proto::Error{ErrorCode::invalid_params, "too big", "a_to_b.jitter_us"}));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error->code, ErrorCode::invalid_params);
    EXPECT_EQ(bad.error->field, "a_to_b.jitter_us");
    EXPECT_EQ(bad.error->message, "too big");
    EXPECT_THROW(proto::parse_reply("{}"), proto::ProtocolError);
    EXPECT_THROW(proto::parse_reply(R"({"v":1,"id":1})"), proto::ProtocolError);
    const json req = json::parse(proto::encode_request(9, "get_link"));
    EXPECT_EQ(req, (json{{"v", 1}, {"id", 9}, {"method", "get_link"}, {"params", json::object()}}));
}

TEST(Protocol, ErrorCodesHaveTheirSpecNames) {
    for (const char* name :
         {"parse_error", "invalid_request", "unsupported_version", "unknown_method",
          "invalid_params", "not_permitted", "unavailable", "failed"}) {
        const auto c = proto::error_code_from_string(name);
        ASSERT_TRUE(c) << name;
        EXPECT_EQ(proto::to_string(*c), name);
    }
    EXPECT_FALSE(proto::error_code_from_string("nope"));
}

LinkConfig two_ways() {
    LinkConfig c;
    c.a_to_b.mean_delay = 5 * kNsPerMs;
    c.b_to_a.mean_delay = 7 * kNsPerMs;
    return c;
}

TEST(ProtocolSetLink, TopLevelKeysSetBothAndDirectionObjectsWin) {
    const LinkConfig next = proto::apply_link_update(
        json{{"mean_delay_us", 20000}, {"b_to_a", {{"mean_delay_us", 40000}, {"jitter_us", 100}}}},
        two_ways(), 2);
    EXPECT_EQ(next.a_to_b.mean_delay, 20 * kNsPerMs);
    EXPECT_EQ(next.b_to_a.mean_delay, 40 * kNsPerMs);
    EXPECT_EQ(next.b_to_a.jitter, 100 * kNsPerUs);
    EXPECT_EQ(next.a_to_b.jitter, 0);
}

TEST(ProtocolSetLink, KeysNotGivenKeepTheirValue) {
    LinkConfig cur = two_ways();
    cur.a_to_b.jitter = 3 * kNsPerMs;
    const LinkConfig next = proto::apply_link_update(json{{"a_to_b", {{"seed", 5}}}}, cur, 2);
    EXPECT_EQ(next.a_to_b.jitter, 3 * kNsPerMs);
    EXPECT_EQ(next.a_to_b.mean_delay, 5 * kNsPerMs);
    EXPECT_EQ(next.a_to_b.seed, 5u);
    EXPECT_EQ(next.b_to_a, cur.b_to_a);
}

// A loss model's own keys on a link without loss choose that model; a model given or
// already chosen stays (docs/parameters.md).
TEST(ProtocolSetLink, ALossKeyWithoutAModelChoosesItsModel) {
    const LinkConfig none = two_ways();
    ASSERT_EQ(none.a_to_b.loss_model, LossModel::none);
    LinkConfig next =
        proto::apply_link_update(json{{"b_to_a", {{"loss_probability", 0.02}}}}, none, 2);
    EXPECT_EQ(next.b_to_a.loss_model, LossModel::bernoulli);
    EXPECT_EQ(next.b_to_a.loss_probability, 0.02);
    EXPECT_EQ(next.a_to_b.loss_model, LossModel::none);
    next = proto::apply_link_update(json{{"ge_p", 0.01}, {"ge_r", 0.2}}, none, 2);
    EXPECT_EQ(next.a_to_b.loss_model, LossModel::gilbert_elliott);
    EXPECT_EQ(next.b_to_a.loss_model, LossModel::gilbert_elliott);
    // given: kept, even none
    next =
        proto::apply_link_update(json{{"loss_model", "none"}, {"loss_probability", 0.02}}, none, 2);
    EXPECT_EQ(next.a_to_b.loss_model, LossModel::none);
    // chosen before: kept
    LinkConfig ge = none;
    ge.a_to_b.loss_model = LossModel::gilbert_elliott;
    next = proto::apply_link_update(json{{"a_to_b", {{"loss_probability", 0.1}}}}, ge, 2);
    EXPECT_EQ(next.a_to_b.loss_model, LossModel::gilbert_elliott);
}

std::string bad_field(const json& params, unsigned dirs = 2) {
    try {
        proto::apply_link_update(params, two_ways(), dirs);
    } catch (const ParamError& e) {
        EXPECT_EQ(std::string(e.what()).find("field '"), 0u);
        EXPECT_FALSE(e.message().empty());
        return e.field();
    }
    return "(accepted)";
}

TEST(ProtocolSetLink, ABadValueNamesItsDottedField) {
    EXPECT_EQ(bad_field(json{{"a_to_b", {{"jitter_us", -1}}}}), "a_to_b.jitter_us");
    EXPECT_EQ(bad_field(json{{"jitter_us", "3ms"}}), "a_to_b.jitter_us");
    EXPECT_EQ(bad_field(json{{"b_to_a", {{"loss_probability", 1.5}}}}), "b_to_a.loss_probability");
    EXPECT_EQ(bad_field(json{{"b_to_a", {{"nonsense", 1}}}}), "b_to_a.nonsense");
    EXPECT_EQ(bad_field(json{{"nonsense", 1}}), "nonsense");
    EXPECT_EQ(bad_field(json{{"a_to_b", 3}}), "a_to_b");
    EXPECT_EQ(bad_field(json{{"b_to_a", json::object()}}, 1), "b_to_a");
    EXPECT_EQ(bad_field(json{{"limiter", "spacer"}}), "a_to_b.rate_bps");
    EXPECT_EQ(bad_field(json::array()), "params");
    EXPECT_EQ(bad_field(json{{"mean_delay_us", 1e300}}), "a_to_b.mean_delay_us");
}

TEST(Protocol, OddValuesInTheEnvelopeAreRefusedWithTheirCode) {
    // Not JSON: NaN, Infinity, numbers beyond double, a comment.
    for (const char* body :
         {R"({"v":1,"id":1,"method":"hello","params":{"x":NaN}})",
          R"({"v":1,"id":1,"method":"hello","params":{"x":Infinity}})",
          R"({"v":1,"id":1,"method":"hello","params":{"x":1e99999}})", "// c\n{}", ""})
        EXPECT_EQ(refused(body).code, ErrorCode::parse_error) << body;
    // Valid JSON, wrong envelope values.
    EXPECT_EQ(refused(R"({"v":1,"id":")" + std::string(129, 'x') + R"(","method":"hello"})").field,
              "id");
    EXPECT_EQ(refused(R"({"v":1,"id":true,"method":"hello"})").field, "id");
    EXPECT_EQ(refused(R"({"v":1,"id":null,"method":"hello"})").field, "id");
    EXPECT_EQ(refused(R"({"v":18446744073709551616,"id":1,"method":"hello"})").field, "v");
    EXPECT_EQ(refused(R"({"v":1.0,"id":1,"method":"hello"})").field, "v");
    EXPECT_EQ(refused(R"({"v":-1,"id":1,"method":"hello"})").code, ErrorCode::unsupported_version);
    EXPECT_EQ(refused(R"({"v":1,"id":1,"method":"hello","params":null})").field, "params");
    EXPECT_EQ(refused(R"({"v":1,"id":1,"method":""})").code, ErrorCode::unknown_method);
    // The id of 128 characters and the largest integers are fine.
    EXPECT_NO_THROW(proto::parse_request(R"({"v":1,"id":")" + std::string(128, 'x') +
                                         R"(","method":"hello"})"));
    EXPECT_NO_THROW(proto::parse_request(R"({"v":1,"id":-9223372036854775808,"method":"hello"})"));
    EXPECT_NO_THROW(proto::parse_request(R"({"v":1,"id":18446744073709551615,"method":"hello"})"));
}

TEST(ProtocolSetLink, GetLinksOutputChangesNothingAndSeedsFollowTheSpec) {
    LinkConfig cur = two_ways();
    cur.a_to_b.seed = 11;
    cur.b_to_a.seed = 12;
    // Every key of get_link's reply, sent back: the same parameters.
    json all = proto::link_to_json(cur, 2);
    EXPECT_EQ(proto::apply_link_update(all, cur, 2), cur);
    // Seed left out: kept; 0: kept as 0 for the data plane to draw a new one; else taken.
    EXPECT_EQ(proto::apply_link_update(json{{"jitter_us", 5}}, cur, 2).a_to_b.seed, 11u);
    const LinkConfig zero = proto::apply_link_update(json{{"seed", 0}}, cur, 2);
    EXPECT_EQ(zero.a_to_b.seed, 0u);
    EXPECT_EQ(zero.b_to_a.seed, 0u);
    EXPECT_EQ(proto::apply_link_update(json{{"b_to_a", {{"seed", 99}}}}, cur, 2).b_to_a.seed, 99u);
    EXPECT_EQ(proto::apply_link_update(json{{"b_to_a", {{"seed", 99}}}}, cur, 2).a_to_b.seed, 11u);
    // An empty update is the current parameters.
    EXPECT_EQ(proto::apply_link_update(json::object(), cur, 2), cur);
}

TEST(ProtocolSetLink, LinkFromJsonIsLinkToJsonsInverse) {
    LinkConfig cur = two_ways();
    cur.b_to_a.seed = 77;
    EXPECT_EQ(proto::link_from_json(proto::link_to_json(cur, 2)), cur);
    // One direction: B->A is A->B's parameters.
    const LinkConfig one = proto::link_from_json(proto::link_to_json(cur, 1));
    EXPECT_EQ(one.a_to_b, cur.a_to_b);
    EXPECT_EQ(one.b_to_a, cur.a_to_b);
    EXPECT_ANY_THROW(proto::link_from_json(json{{"b_to_a", json::object()}}));
    EXPECT_ANY_THROW(proto::link_from_json(json{{"a_to_b", {{"jitter_us", "x"}}}}));
    EXPECT_EQ(direction_of_key("a_to_b"), 0);
    EXPECT_EQ(direction_of_key("b_to_a"), 1);
    EXPECT_EQ(direction_of_key("a"), -1);
}

TEST(ProtocolSetLink, SinglePortKeepsBothHalvesEqual) {
    const LinkConfig next = proto::apply_link_update(json{{"mean_delay_us", 1000}}, two_ways(), 1);
    EXPECT_EQ(next.a_to_b, next.b_to_a);
    EXPECT_EQ(proto::link_to_json(next, 1).size(), 1u);
    EXPECT_EQ(proto::link_to_json(next, 2).size(), 2u);
}

LinkStats sample_stats() {
    LinkStats s;
    s.t_ns = 123456789;
    s.directions = 2;
    s.dir[0].counters.packets_in = 100;
    s.dir[0].counters.packets_out = 90;
    s.dir[0].counters.drops[DropCause::loss] = 4;
    s.dir[0].counters.in_flight = 6;
    s.dir[0].counters.waited = 5;
    s.dir[0].counters.alpha = 0.25;
    s.dir[0].counters.rate_pps = 1000.5;
    s.dir[0].stalls = 3;
    s.dir[0].delay_samples_dropped = 2;
    s.dir[1].params_generation = 4;
    s.ports = 2;
    s.port[0].name = "net_null0";
    s.port[0].rx = 100;
    s.port[0].link_up = true;
    s.port[1].speed_mbps = 10000;
    return s;
}

json stats_message(const proto::Header& h, const LinkStats& s) {
    proto::StatsMessage m;
    m.header = h;
    m.stats = s;
    return proto::to_json(m);
}

json delay_message(const proto::Header& h, proto::DelayMessage m) {
    m.header = h;
    return proto::to_json(m);
}

TEST(ProtocolTelemetry, StatsRoundTripAndBalance) {
    const LinkStats s = sample_stats();
    EXPECT_TRUE(balances(s.dir[0].counters));
    const json body = stats_message(proto::Header{"00ff", 12, s.t_ns}, s);
    const auto h = proto::decode<proto::Header>(body);
    EXPECT_EQ(h.instance_id, "00ff");
    EXPECT_EQ(h.seq, 12u);
    EXPECT_EQ(body["v"], 1);
    const LinkStats back = link_stats_from_json(body);
    EXPECT_EQ(back.t_ns, s.t_ns);
    EXPECT_EQ(back.directions, 2u);
    EXPECT_EQ(back.dir[0].counters.packets_in, 100u);
    EXPECT_EQ(back.dir[0].counters.alpha, 0.25);
    EXPECT_EQ(back.dir[0].counters.waited, 5u);
    EXPECT_EQ(back.dir[0].stalls, 3u);
    EXPECT_EQ(back.dir[0].delay_samples_dropped, 2u);
    EXPECT_EQ(back.dir[1].params_generation, 4u);
    EXPECT_EQ(back.ports, 2u);
    EXPECT_EQ(back.port[0].name, "net_null0");
    EXPECT_TRUE(back.port[0].link_up);
    EXPECT_EQ(back.port[1].speed_mbps, 10000u);
    json broken = body;
    broken["a_to_b"].erase("packets_out");
    EXPECT_THROW(link_stats_from_json(broken), std::invalid_argument);
    for (const DropCauseInfo& c : kDropCauses)
        EXPECT_EQ(back.dir[0].counters.drops[c.cause], s.dir[0].counters.drops[c.cause]) << c.key;
    // `waited` is optional (linkemd builds without it): 0 when absent.
    json older = body;
    older["a_to_b"].erase("waited");
    EXPECT_EQ(link_stats_from_json(older).dir[0].counters.waited, 0u);
}

// The counters' JSON, byte for byte: one key per counter, the drops as drops_<cause>.
TEST(ProtocolTelemetry, CountersKeepTheirKeys) {
    CounterSnapshot c;
    c.packets_in = 1;
    c.bytes_in = 2;
    c.packets_out = 3;
    c.bytes_out = 4;
    c.drops[DropCause::loss] = 5;
    c.drops[DropCause::policer] = 6;
    c.drops[DropCause::spacer] = 7;
    c.drops[DropCause::buffer_full] = 8;
    c.drops[DropCause::class_action] = 14;
    c.drops[DropCause::aqm] = 15;
    c.delays_clamped = 9;
    c.waited = 10;
    c.ecn_marked = 16;
    c.in_flight = 11;
    c.alpha = 0.5;
    c.rate_pps = 12.5;
    c.rate_intervals = 13;
    EXPECT_EQ(linkem::to_json(c).dump(),
              "{\"alpha\":0.5,\"bytes_in\":2,\"bytes_out\":4,\"delays_clamped\":9,"
              "\"drops_aqm\":15,"
              "\"drops_buffer_full\":8,\"drops_class\":14,\"drops_loss\":5,\"drops_policer\":6,"
              "\"drops_spacer\":7,\"ecn_marked\":16,"
              "\"in_flight\":11,\"packets_in\":1,\"packets_out\":3,\"rate_intervals\":13,"
              "\"rate_pps\":12.5,\"waited\":10}");
    EXPECT_EQ(c.drops.total(), 5u + 6 + 7 + 8 + 14 + 15);
}

TEST(ProtocolTelemetry, DelayMessageRoundTrip) {
    proto::DelayMessage m;
    m.directions = 2;
    m.dir[0].start_ns = 10;
    m.dir[0].end_ns = 50000010;
    m.dir[0].samples = {{100, 20000000, 20000100, 20001000}, {200, 19000000, 19000000, 19000500}};
    m.dir[0].delay.shift = 2e7;
    for (double x : {19e6, 20e6, 21e6})
        m.dir[0].delay.add(x);
    m.dir[0].samples_dropped = 3;
    m.dir[0].wait = WaitSums{4, 400.0, 1000.0};
    const json body = delay_message(proto::Header{"ab", 1, 99}, m);
    EXPECT_EQ(body["a_to_b"]["samples"]["actual_ns"][1], 19000500);
    EXPECT_EQ(body["b_to_a"]["delay"], (json{{"count", 0}}));
    EXPECT_EQ(body["a_to_b"]["wait"], (json{{"count", 4},
                                            {"mean_ns", 350.0},
                                            {"spacer_mean_ns", 100.0},
                                            {"order_mean_ns", 250.0}}));
    EXPECT_EQ(body["b_to_a"]["wait"], (json{{"count", 0}}));
    const proto::DelayMessage back = proto::decode<proto::DelayMessage>(body);
    ASSERT_EQ(back.dir[0].samples.size(), 2u);
    EXPECT_EQ(back.dir[0].samples[0].scheduled_ns, 20000100);
    EXPECT_EQ(back.dir[0].delay.count, 3u);
    EXPECT_DOUBLE_EQ(back.dir[0].delay.mean(), 20e6);
    EXPECT_NEAR(back.dir[0].delay.jitter(), m.dir[0].delay.jitter(), 1e-6);
    EXPECT_EQ(back.dir[0].delay.min, 19e6);
    EXPECT_EQ(back.dir[0].samples_dropped, 3u);
    EXPECT_EQ(back.dir[1].delay.count, 0u);
    EXPECT_FALSE(back.dir[0].params_generation.has_value());
    EXPECT_FALSE(back.dir[0].has_measured);
    EXPECT_EQ(back.dir[0].wait.count, 4u);
    EXPECT_DOUBLE_EQ(back.dir[0].wait.spacer_ns, 400.0);
    EXPECT_DOUBLE_EQ(back.dir[0].wait.order_ns, 1000.0);
    EXPECT_EQ(back.dir[1].wait.count, 0u);
    // The jitter goes out as jitter_ns only; a peer that sends its retired name sd_ns alone
    // is still read.
    EXPECT_TRUE(body["a_to_b"]["delay"].contains("jitter_ns"));
    EXPECT_FALSE(body["a_to_b"]["delay"].contains("sd_ns"));
    json sd_only = body;
    sd_only["a_to_b"]["delay"]["sd_ns"] = sd_only["a_to_b"]["delay"]["jitter_ns"];
    sd_only["a_to_b"]["delay"].erase("jitter_ns");
    EXPECT_NEAR(proto::decode<proto::DelayMessage>(sd_only).dir[0].delay.jitter(),
                m.dir[0].delay.jitter(), 1e-6);
    // A linkemd from before `wait` existed: read as no wait.
    json old = body;
    old["a_to_b"].erase("wait");
    EXPECT_EQ(proto::decode<proto::DelayMessage>(old).dir[0].wait.count, 0u);
    json broken = body;
    broken["a_to_b"]["samples"]["delay_ns"].erase(0);
    EXPECT_THROW(proto::decode<proto::DelayMessage>(broken), std::invalid_argument);
}

// The generation a direction ran with and the built-in traffic's keys (measured samples,
// measured_delay in `delay`; traffic in `stats`) travel and come back.
TEST(ProtocolTelemetry, GenerationAndTrafficKeysRoundTrip) {
    proto::DelayMessage m;
    m.directions = 1;
    m.dir[0].params_generation = 7;
    m.dir[0].has_measured = true;
    m.dir[0].measured = {{1000, 20'500'000}, {2000, 21'000'000}};
    m.dir[0].measured_delay.shift = 2e7;
    m.dir[0].measured_delay.add(20.5e6);
    const json body = delay_message(proto::Header{"ab", 1, 99}, m);
    EXPECT_EQ(body["a_to_b"]["params_generation"], 7);
    EXPECT_EQ(body["a_to_b"]["measured"]["delay_ns"][1], 21'000'000);
    const proto::DelayMessage back = proto::decode<proto::DelayMessage>(body);
    EXPECT_EQ(back.dir[0].params_generation, std::optional<std::uint64_t>(7));
    ASSERT_TRUE(back.dir[0].has_measured);
    ASSERT_EQ(back.dir[0].measured.size(), 2u);
    EXPECT_EQ(back.dir[0].measured[1].send_ns, 2000);
    EXPECT_EQ(back.dir[0].measured_delay.count, 1u);
    json bad = body;
    bad["a_to_b"]["measured"]["send_ns"].erase(0);
    EXPECT_THROW(proto::decode<proto::DelayMessage>(bad), std::invalid_argument);

    LinkStats s = sample_stats();
    s.dir[0].traffic.present = true;
    s.dir[0].traffic.sent = 10;
    s.dir[0].traffic.out_of_order = 2;
    s.dir[0].traffic.delay.add(5.0);
    const LinkStats sb = link_stats_from_json(stats_message({"00ff", 1, 5}, s));
    EXPECT_TRUE(sb.dir[0].traffic.present);
    EXPECT_EQ(sb.dir[0].traffic.sent, 10u);
    EXPECT_EQ(sb.dir[0].traffic.out_of_order, 2u);
    EXPECT_EQ(sb.dir[0].traffic.delay.count, 1u);
    EXPECT_FALSE(sb.dir[1].traffic.present);
}

TEST(ProtocolTelemetry, EventRoundTrip) {
    proto::Event e =
        proto::Event::info("params_applied", "parameters applied (generation 3) from x");
    e.params_generation = 3;
    e.source = "x";
    e.header = {"ab", 0, 5};
    const json body = proto::to_json(e);
    EXPECT_EQ(body["params_generation"], 3);
    EXPECT_EQ(body["source"], "x");
    EXPECT_FALSE(body.contains("port"));  // absent keys are not written
    const auto back = proto::decode<proto::Event>(body);
    EXPECT_EQ(back.kind, "params_applied");
    EXPECT_EQ(back.params_generation, std::optional<std::uint64_t>(3));
    EXPECT_EQ(back.header.seq, 0u);
    EXPECT_FALSE(back.port.has_value());
}

TEST(ProtocolTelemetry, InstanceIdsAreSixteenHexDigitsAndDiffer) {
    const std::string a = proto::new_instance_id(), b = proto::new_instance_id();
    EXPECT_EQ(a.size(), 16u);
    EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_NE(a, b);
}

TEST(RunningStats, MergeEqualsOneSeriesWhateverTheShifts) {
    RunningStats all, a, b;
    a.shift = 1e7;
    b.shift = -5;
    std::vector<double> xs;
    for (int i = 0; i < 1000; ++i)
        xs.push_back(1e7 + (i % 37) * 1000.0 - (i % 11) * 333.0);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        all.add(xs[i]);
        (i % 3 ? a : b).add(xs[i]);
    }
    RunningStats m = a;
    m.merge(b);
    EXPECT_EQ(m.count, all.count);
    EXPECT_NEAR(m.mean(), all.mean(), 1e-6);
    EXPECT_NEAR(m.jitter(), all.jitter(), 1e-3);
    EXPECT_EQ(m.min, all.min);
    EXPECT_EQ(m.max, all.max);
    // A 10 ms series with 1 us of spread keeps its sd when summed around its mean.
    RunningStats tight;
    tight.shift = 1e7;
    for (int i = 0; i < 100000; ++i)
        tight.add(1e7 + (i % 2 ? 1000.0 : -1000.0));
    EXPECT_NEAR(tight.jitter(), 1000.0, 1e-6);
}

TEST(SpscRing, KeepsOrderRefusesWhenFullAndWorksAcrossThreads) {
    SpscRing<int> r(3);
    EXPECT_EQ(r.capacity(), 4u);
    for (int i = 0; i < 4; ++i)
        EXPECT_TRUE(r.try_push(i));
    EXPECT_FALSE(r.try_push(9));
    int out[8];
    ASSERT_EQ(r.pop(out, 8), 4u);
    EXPECT_EQ(out[3], 3);
    SpscRing<std::uint64_t> big(1024);
    constexpr std::uint64_t kN = 200000;
    std::uint64_t refused = 0;
    std::thread producer([&] {
        for (std::uint64_t i = 0; i < kN;)
            if (big.try_push(i))
                ++i;
            else
                ++refused;
    });
    std::uint64_t expect = 0, buf[64];
    while (expect < kN) {
        const std::size_t n = big.pop(buf, 64);
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(buf[i], expect++);
    }
    producer.join();
    EXPECT_EQ(big.size(), 0u);
}

}  // namespace
}  // namespace linkem
