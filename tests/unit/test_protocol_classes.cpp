// Traffic classes on the protocol (docs/protocol.md, docs/classes.md): the link body's
// `classes`, set_link's `classes` and `class` (apply_link_update, with every refusal the
// spec lists), the per-class counters of `stats`, the delay samples' class_id and hello's
// capability. Old messages (without classes) keep their bytes and still decode.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/classes_json.hpp"
#include "linkem/messages.hpp"
#include "linkem/telemetry_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;

template <class T>
T round_trip(const T& m) {
    return proto::decode<T>(json::parse(proto::to_json(m).dump()));
}

const json kClassesJson = json::parse(R"([
    {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
     "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}},
    {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"},
    {"name": "bulk", "match": [{"protocol": "tcp", "b_port": 5201}, {"dscp": 8}],
     "limiter": "link", "mean_delay_us": 5000},
    {"name": "junk", "match": {"ethertype": "arp"}, "action": "drop"}])");

LinkConfig with_classes() {
    LinkConfig link;
    link.a_to_b.mean_delay = link.b_to_a.mean_delay = 10 * kNsPerMs;
    link.classes = classes_from_json(kClassesJson);
    return link;
}

/// The field of the ParamError that apply_link_update throws, "(accepted)" if none; the
/// message goes to `message`.
std::string refused_field(const json& params, const LinkConfig& cur, unsigned dirs = 2,
                          std::string* message = nullptr) {
    try {
        proto::apply_link_update(params, cur, dirs);
    } catch (const ParamError& e) {
        EXPECT_EQ(std::string(e.what()).find("field '"), 0u) << e.what();
        if (message) *message = e.message();
        return e.field();
    }
    return "(accepted)";
}

TEST(ProtocolClasses, LinkStateCarriesTheClassesAndReadsLinksWithout) {
    proto::LinkState s;
    s.params_generation = 2;
    s.directions = 2;
    s.link = with_classes();
    const json j = proto::to_json(s);
    EXPECT_EQ(j["classes"], classes_to_json(s.link.classes));
    EXPECT_EQ(j["classes"][0]["name"], "voip");
    EXPECT_EQ(j["classes"][2]["limiter"], "link");
    EXPECT_EQ(round_trip(s), s);
    // Without classes: an empty list, written always.
    EXPECT_EQ(proto::to_json(proto::LinkState{})["classes"], json::array());
    // An older linkemd sends none: no classes.
    json old = j;
    old.erase("classes");
    EXPECT_TRUE(proto::decode<proto::LinkState>(old).link.classes.empty());
    // A bad list names the class and key.
    json bad = j;
    bad["classes"][1]["match"]["b_port"] = 70000;
    try {
        proto::decode<proto::LinkState>(bad);
        ADD_FAILURE() << "decoded";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("classes[1].match.b_port: class 'ssh'", 0), 0u)
            << e.what();
    }
    // link_to_json / link_from_json: classes only when there are some.
    EXPECT_FALSE(proto::link_to_json(LinkConfig{}, 2).contains("classes"));
    EXPECT_EQ(proto::link_from_json(proto::link_to_json(s.link, 2)), s.link);
}

TEST(ProtocolClasses, LinkUpdateEncodesClassAndClasses) {
    proto::LinkUpdate u;
    u.set(-1, "mean_delay_us", 90000.0);
    u.set(1, "loss_probability", 0.05);
    u.class_name = "voip";
    u.classes = classes_from_json(kClassesJson);
    const json j = proto::to_json(u);
    EXPECT_EQ(j["class"], "voip");
    EXPECT_EQ(j["classes"], classes_to_json(*u.classes));
    EXPECT_EQ(round_trip(u), u);
    // Without them, the keys are the ones an older client sends.
    proto::LinkUpdate plain;
    plain.set(-1, "jitter_us", 1.0);
    EXPECT_EQ(proto::to_json(plain), (json{{"jitter_us", 1.0}}));
    EXPECT_EQ(round_trip(plain), plain);
    // What the update says is what linkemd applies.
    const LinkConfig after = proto::apply_link_update(j, LinkConfig{}, 2);
    ASSERT_EQ(after.classes.size(), 4u);
    EXPECT_EQ(after.classes[0].link.a_to_b.mean_delay, 90 * kNsPerMs);
    EXPECT_EQ(after.classes[0].link.b_to_a.loss_probability, 0.05);
    EXPECT_EQ(after.a_to_b, LinkParams{});  // default's untouched
    json bad = j;
    bad["class"] = 3;
    EXPECT_THROW(proto::decode<proto::LinkUpdate>(bad), std::invalid_argument);
}

TEST(ProtocolClasses, ClassesReplaceTheWholeList) {
    const LinkConfig cur = with_classes();
    const json one = json::array({{{"name", "games"}, {"match", {{"protocol", "udp"}}}}});
    const LinkConfig next =
        proto::apply_link_update(json{{"classes", one}, {"mean_delay_us", 1000}}, cur, 2);
    ASSERT_EQ(next.classes.size(), 1u);
    EXPECT_EQ(next.classes[0].name, "games");
    EXPECT_EQ(next.a_to_b.mean_delay, kNsPerMs);  // no class: the keys are default's
    EXPECT_TRUE(proto::apply_link_update(json{{"classes", json::array()}}, cur, 2).classes.empty());
    // Other keys leave the list alone.
    EXPECT_EQ(proto::apply_link_update(json{{"jitter_us", 5}}, cur, 2).classes, cur.classes);
}

TEST(ProtocolClasses, ClassKeysChangeThatClassOnly) {
    const LinkConfig cur = with_classes();
    LinkConfig next =
        proto::apply_link_update(json{{"class", "voip"}, {"mean_delay_us", 100000}}, cur, 2);
    EXPECT_EQ(next.classes[0].link.a_to_b.mean_delay, 100 * kNsPerMs);
    EXPECT_EQ(next.classes[0].link.b_to_a.mean_delay, 100 * kNsPerMs);
    EXPECT_EQ(next.classes[0].link.b_to_a.loss_probability, 0.02);  // kept
    EXPECT_EQ(next.a_to_b, cur.a_to_b);
    EXPECT_EQ(next.b_to_a, cur.b_to_a);
    EXPECT_EQ(next.classes[1], cur.classes[1]);
    // One direction.
    next = proto::apply_link_update(
        json{{"class", "voip"}, {"a_to_b", {{"loss_probability", 0.1}}}}, cur, 2);
    EXPECT_EQ(next.classes[0].link.a_to_b.loss_probability, 0.1);
    EXPECT_EQ(next.classes[0].link.a_to_b.loss_model, LossModel::bernoulli);
    EXPECT_EQ(next.classes[0].link.b_to_a.loss_probability, 0.02);
    // "default" is no class.
    next = proto::apply_link_update(json{{"class", "default"}, {"jitter_us", 300}}, cur, 2);
    EXPECT_EQ(next.a_to_b.jitter, 300 * kNsPerUs);
    EXPECT_EQ(next.classes, cur.classes);
    // A class sharing the link's limiter takes its other keys.
    next = proto::apply_link_update(json{{"class", "bulk"}, {"jitter_us", 700}}, cur, 2);
    EXPECT_EQ(next.classes[2].link.b_to_a.jitter, 700 * kNsPerUs);
    EXPECT_TRUE(next.classes[2].shares_link_limiter);
    // A class named after `classes` in the same update: the new list's.
    const json list = json::array({{{"name", "games"}, {"match", {{"protocol", "udp"}}}}});
    next = proto::apply_link_update(
        json{{"classes", list}, {"class", "games"}, {"mean_delay_us", 40000}}, cur, 2);
    ASSERT_EQ(next.classes.size(), 1u);
    EXPECT_EQ(next.classes[0].link.a_to_b.mean_delay, 40 * kNsPerMs);
    // Single-port mode: the class's b_to_a is its a_to_b.
    next = proto::apply_link_update(json{{"class", "voip"}, {"jitter_us", 9}}, cur, 1);
    EXPECT_EQ(next.classes[0].link.a_to_b.jitter, next.classes[0].link.b_to_a.jitter);
    // "limiter": "link" makes a class share the link's limiter; its limiter keys go back to
    // their defaults.
    LinkConfig own = cur;
    own.classes[0].link.a_to_b.limiter = own.classes[0].link.b_to_a.limiter = Limiter::policer;
    own.classes[0].link.a_to_b.rate_bps = own.classes[0].link.b_to_a.rate_bps = 1e6;
    next = proto::apply_link_update(json{{"class", "voip"}, {"limiter", "link"}}, own, 2);
    EXPECT_TRUE(next.classes[0].shares_link_limiter);
    EXPECT_EQ(next.classes[0].link.a_to_b.limiter, Limiter::none);
    EXPECT_EQ(next.classes[0].link.a_to_b.rate_bps, 0.0);
    EXPECT_EQ(next.classes[0].link.a_to_b.mean_delay, 80 * kNsPerMs);
}

TEST(ProtocolClasses, EveryRefusalNamesItsFieldAndChangesNothing) {
    const LinkConfig cur = with_classes();
    std::string msg;
    // A class that is not in the list.
    EXPECT_EQ(refused_field(json{{"class", "video"}, {"jitter_us", 1}}, cur, 2, &msg), "class");
    EXPECT_EQ(msg, "no class 'video'; the link's classes: default, voip, ssh, bulk, junk");
    EXPECT_EQ(refused_field(json{{"class", "voip"}, {"classes", json::array()}}, cur, 2, &msg),
              "class");
    EXPECT_EQ(msg, "no class 'voip'; the link's classes: default");
    EXPECT_EQ(refused_field(json{{"class", 7}}, cur), "class");
    // pass and drop classes take no link keys.
    EXPECT_EQ(refused_field(json{{"class", "ssh"}, {"mean_delay_us", 1}}, cur, 2, &msg),
              "mean_delay_us");
    EXPECT_NE(msg.find("class 'ssh' has action 'pass', which takes no link parameters"),
              std::string::npos)
        << msg;
    EXPECT_EQ(refused_field(json{{"class", "junk"}, {"b_to_a", {{"jitter_us", 1}}}}, cur, 2, &msg),
              "b_to_a.jitter_us");
    EXPECT_NE(msg.find("action 'drop'"), std::string::npos) << msg;
    // A class sharing the link's limiter refuses its own limiter keys.
    EXPECT_EQ(refused_field(json{{"class", "bulk"}, {"rate_bps", 1e6}}, cur, 2, &msg), "rate_bps");
    EXPECT_NE(msg.find("shares the link's limiter"), std::string::npos) << msg;
    EXPECT_EQ(refused_field(json{{"class", "bulk"}, {"a_to_b", {{"limiter", "spacer"}}}}, cur),
              "a_to_b.limiter");
    EXPECT_EQ(refused_field(json{{"class", "voip"}, {"b_to_a", {{"limiter", "link"}}}}, cur),
              "b_to_a.limiter");
    EXPECT_EQ(refused_field(json{{"limiter", "link"}}, cur), "a_to_b.limiter");  // default
    // A bad value of a class's key: its dotted path, as for default.
    EXPECT_EQ(refused_field(json{{"class", "voip"}, {"jitter_us", -1}}, cur), "a_to_b.jitter_us");
    EXPECT_EQ(refused_field(json{{"class", "voip"}, {"b_to_a", {{"nonsense", 1}}}}, cur),
              "b_to_a.nonsense");
    EXPECT_EQ(refused_field(json{{"class", "voip"}, {"b_to_a", {{"jitter_us", 1}}}}, cur, 1),
              "b_to_a");
    // A bad list: the ClassError's path; not a list: "classes".
    json list = kClassesJson;
    list[1]["match"]["b_port"] = 70000;
    EXPECT_EQ(refused_field(json{{"classes", list}}, cur, 2, &msg), "classes[1].match.b_port");
    EXPECT_NE(msg.find("class 'ssh'"), std::string::npos) << msg;
    EXPECT_EQ(refused_field(json{{"classes", {{"name", "x"}}}}, cur), "classes");
    list = kClassesJson;
    list[3]["name"] = "voip";
    EXPECT_EQ(refused_field(json{{"classes", list}}, cur), "classes[3].name");
    list = kClassesJson;
    list[0]["name"] = "default";
    EXPECT_EQ(refused_field(json{{"classes", list}}, cur), "classes[0].name");
    list = kClassesJson;
    list[1]["mean_delay_us"] = 5;
    EXPECT_EQ(refused_field(json{{"classes", list}}, cur), "classes[1].mean_delay_us");
    list = json::array();
    for (int i = 0; i <= static_cast<int>(kMaxClasses); ++i)
        list.push_back({{"name", "c" + std::to_string(i)}, {"match", json::object()}});
    EXPECT_EQ(refused_field(json{{"classes", list}}, cur, 2, &msg), "classes[64]");
    EXPECT_NE(msg.find("at most 64"), std::string::npos) << msg;
    // The refusal lists the new keys among the known ones.
    EXPECT_EQ(refused_field(json{{"klass", "voip"}}, cur, 2, &msg), "klass");
    EXPECT_NE(msg.find("'class' and 'classes'"), std::string::npos) << msg;
}

// ---- a match as text: linkemctl's --match and the GUI's Classes table ----

TEST(ClassMatchText, RoundTrips) {
    const auto classes = classes_from_json(json::parse(R"([
        {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"}},
        {"name": "web", "match": [{"protocol": "tcp", "b_port": 443}, {"a_net": "10.0.0.0/8"}]},
        {"name": "lab", "match": {"dscp": 46, "vlan": 7, "b_net": "2001:db8::/32",
                                  "a_port": 22, "ethertype": "ipv6"}},
        {"name": "all", "match": {}}])"));
    const char* texts[] = {"protocol=udp,b_port=5060-5061",
                           "protocol=tcp,b_port=443; a_net=10.0.0.0/8",
                           "ethertype=ipv6,b_net=2001:db8::/32,a_port=22,vlan=7,dscp=46", "any"};
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const TrafficClass& c = classes[i];
        const json j = to_json(c)["match"];
        EXPECT_EQ(class_match_text(j), texts[i]);
        const json back = class_match_json_from_text(class_match_text(j));
        std::vector<ClassMatch> m;
        for (const json& o : back.is_array() ? back : json::array({back}))
            m.push_back(class_match_from_json(o));
        EXPECT_EQ(m, c.match) << c.name;
    }
}

TEST(ClassMatchText, ReadsEveryForm) {
    EXPECT_EQ(class_match_json_from_text(" protocol = udp , b_port=22 "),
              json::parse(R"({"protocol": "udp", "b_port": 22})"));
    EXPECT_EQ(class_match_json_from_text("any"), json::object());
    EXPECT_EQ(class_match_json_from_text("*"), json::object());
    EXPECT_EQ(class_match_json_from_text(R"({"protocol": "tcp", "b_port": "22"})"),
              json::parse(R"({"protocol": "tcp", "b_port": "22"})"));
    EXPECT_EQ(class_match_json_from_text("protocol=icmp; any"),
              json::parse(R"([{"protocol": "icmp"}, {}])"));
    // digits only are a number (any size that fits 64 bits), everything else a string
    EXPECT_EQ(class_match_json_from_text("b_port=0022,a_port=99999999999999999999"),
              json::parse(R"({"b_port": 22, "a_port": "99999999999999999999"})"));
    // keys of a later linkemd print by name, after the known ones
    EXPECT_EQ(class_match_text(json::parse(R"({"zz": "x", "protocol": "udp"})")),
              "protocol=udp,zz=x");
}

// Found by the match_text fuzzer: `linkemctl classes add --match $'b_port=5060-50\x8d'`
// reached class_match_from_json with a string that is not UTF-8, and the refusal's dump()
// threw json::type_error (316) and ended linkemctl. Such text is now refused whole, naming
// it (bytes shown as U+FFFD); the codec's own messages show such values the same way.
TEST(ClassMatchText, TextNotUtf8IsRefused) {
    for (const char* text : {"protocol=udp,b_port=5060-50\x8d", "protocol=\xff", "a_net=10.\xc3"}) {
        try {
            class_match_json_from_text(text);
            ADD_FAILURE() << text;
        } catch (const ParamError& e) {
            EXPECT_EQ(e.field(), "match");
            EXPECT_NE(e.message().find("not UTF-8"), std::string::npos) << e.message();
            EXPECT_NE(e.message().find("\xEF\xBF\xBD"), std::string::npos) << e.message();
        }
    }
    json j = json::object();
    j["b_port"] = std::string("5060-50\x8d");
    try {
        class_match_from_json(j);
        ADD_FAILURE();
    } catch (const ParamError& e) {
        EXPECT_NE(e.message().find("\xEF\xBF\xBD"), std::string::npos) << e.message();
    }
}

TEST(ClassMatchText, BadTextNamesTheObjectAndWhatIsAllowed) {
    for (const char* text :
         {"", "  ", "protocol", "protocol=", "=udp", "{\"a\":", "[1]", "protocol=udp,"}) {
        try {
            class_match_json_from_text(text);
            ADD_FAILURE() << text;
        } catch (const ParamError& e) {
            EXPECT_EQ(e.field(), "match") << text;
            EXPECT_NE(e.message().find("allowed"), std::string::npos) << e.message();
        }
    }
    try {
        class_match_json_from_text("protocol=tcp; b_port=1,b_port=2");
        ADD_FAILURE();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "match[1].b_port");
    }
    try {
        class_match_json_from_text("protocol=tcp;;b_port=1", "classes[2].match");
        ADD_FAILURE();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "classes[2].match[1]");
    }
}

TEST(ProtocolClasses, StatsCarryEachClassesCounters) {
    LinkStats s;
    s.t_ns = 5;
    s.directions = 2;
    s.dir[0].counters.packets_in = 30;
    s.dir[0].counters.drops[DropCause::class_action] = 4;
    s.classes.resize(3);
    s.classes[0].name = "default";
    s.classes[0].dir[0].packets_in = 20;
    s.classes[1].name = "ssh";
    s.classes[1].action = ClassAction::pass;
    s.classes[1].dir[1].packets_out = 6;
    s.classes[2].name = "junk";
    s.classes[2].action = ClassAction::drop;
    s.classes[2].dir[0].drops[DropCause::class_action] = 4;
    const json j = to_json(s, false);
    ASSERT_EQ(j["classes"].size(), 3u);
    EXPECT_EQ(j["classes"][1]["action"], "pass");
    EXPECT_EQ(j["classes"][2]["a_to_b"]["drops_class"], 4);
    EXPECT_EQ(j["classes"][0]["b_to_a"], to_json(CounterSnapshot{}));
    const LinkStats back = link_stats_from_json(j);
    ASSERT_EQ(back.classes.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(back.classes[i].name, s.classes[i].name);
        EXPECT_EQ(back.classes[i].action, s.classes[i].action);
        for (int d = 0; d < 2; ++d)
            EXPECT_EQ(to_json(back.classes[i].dir[d]), to_json(s.classes[i].dir[d]));
    }
    EXPECT_EQ(back.dir[0].counters.drops[DropCause::class_action], 4u);
    // Without classes: no key, and none read.
    s.classes.clear();
    EXPECT_FALSE(to_json(s, false).contains("classes"));
    EXPECT_TRUE(link_stats_from_json(to_json(s, false)).classes.empty());
    // An older linkemd sends no drops_class: 0.
    json old = to_json(s, false);
    old["a_to_b"].erase("drops_class");
    EXPECT_EQ(link_stats_from_json(old).dir[0].counters.drops[DropCause::class_action], 0u);
    // Bad entries name their path.
    json bad = j;
    bad["classes"][2]["action"] = "slow";
    try {
        link_stats_from_json(bad);
        ADD_FAILURE() << "decoded";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("classes[2].action", 0), 0u) << e.what();
    }
    bad = j;
    bad["classes"][1]["b_to_a"].erase("packets_out");
    EXPECT_THROW(link_stats_from_json(bad), std::invalid_argument);
}

TEST(ProtocolClasses, DelaySamplesCarryTheirClassOnlyWithClasses) {
    proto::DelayMessage m;
    m.directions = 2;
    m.dir[0].samples = {{100, 1, 2, 3, 0}, {200, 4, 5, 6, 2}};
    m.dir[1].samples = {{300, 7, 8, 9, 0}};
    const json j = proto::to_json(m);
    EXPECT_EQ(j["a_to_b"]["samples"]["class_id"], json::array({0, 2}));
    EXPECT_EQ(j["b_to_a"]["samples"]["class_id"], json::array({0}));  // both, once any has one
    const proto::DelayMessage back = proto::decode<proto::DelayMessage>(j);
    EXPECT_EQ(back.dir[0].samples[1].class_id, 2);
    EXPECT_EQ(back.dir[1].samples[0].class_id, 0);
    // Every sample default's: the message an older linkemd sends, byte for byte.
    m.dir[0].samples[1].class_id = 0;
    const json plain = proto::to_json(m);
    EXPECT_FALSE(plain["a_to_b"]["samples"].contains("class_id"));
    EXPECT_FALSE(plain["b_to_a"]["samples"].contains("class_id"));
    EXPECT_EQ(proto::decode<proto::DelayMessage>(plain).dir[0].samples[1].class_id, 0);
    json bad = j;
    bad["a_to_b"]["samples"]["class_id"] = json::array({0});
    EXPECT_THROW(proto::decode<proto::DelayMessage>(bad), std::invalid_argument);
    bad["a_to_b"]["samples"]["class_id"] = json::array({0, 65});
    EXPECT_THROW(proto::decode<proto::DelayMessage>(bad), std::invalid_argument);
}

TEST(ProtocolClasses, HelloSaysItKnowsClasses) {
    proto::Hello h;
    h.instance_id = "00";
    h.capabilities.classes = true;
    const json j = proto::to_json(h);
    EXPECT_EQ(j["capabilities"]["classes"], true);
    EXPECT_TRUE(round_trip(h).capabilities.classes);
    json old = j;
    old["capabilities"].erase("classes");
    EXPECT_FALSE(proto::decode<proto::Hello>(old).capabilities.classes);
}

}  // namespace
}  // namespace linkem
