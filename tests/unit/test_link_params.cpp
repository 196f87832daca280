// LinkParams: validation naming the field, JSON round trip, schema completeness.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_flags.hpp"
#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;

// Expects link_params_from_json(j, base) to throw ParamError naming `field`, and base to
// be untouched.
void expect_error(const json& j, const std::string& field, const LinkParams& base = {}) {
    const LinkParams copy = base;
    try {
        (void)link_params_from_json(j, base);
        ADD_FAILURE() << "no error for " << j.dump();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), field) << j.dump() << " -> " << e.what();
        EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
    EXPECT_EQ(base, copy);
}

// Every field set to something other than its default.
LinkParams non_default() {
    LinkParams p;
    p.strategy = Strategy::reordered;
    p.distribution = Distribution::lognormal;
    p.mean_delay = 12'345'678;  // 12345.678 us
    p.jitter = 1'001;           // 1.001 us
    p.half_life = 3 * kNsPerMs + 7;
    p.rate_window = 250 * kNsPerUs;
    p.limiter = Limiter::policer;
    p.rate_bps = 2.5e9;
    p.queue_limit_bytes = 123'456;
    p.policer_burst_bytes = 9'000;
    p.byte_accounting = ByteAccounting::wire;
    p.loss_model = LossModel::gilbert_elliott;
    p.loss_probability = 0.125;
    p.ge_p = 0.01;
    p.ge_r = 0.3;
    p.ge_loss_good = 0.001;
    p.ge_loss_bad = 0.75;
    p.buffer_limit_packets = 4096;
    p.seed = 0xdeadbeefcafebabeULL;  // above 2^63
    // The queue's keys, those of every discipline (a whole link's JSON keeps them all).
    p.queue = QueueKind::fq_codel;
    p.queue_limit_packets = 700;
    p.codel_target = 7 * kNsPerMs;
    p.codel_interval = 150 * kNsPerMs;
    p.fq_flows = 512;
    p.fq_quantum_bytes = 3000;
    p.pie_target = 20 * kNsPerMs;
    p.pie_tupdate = 30 * kNsPerMs;
    p.pie_max_burst = 100 * kNsPerMs;
    return p;
}

TEST(LinkParams, DefaultsAreValid) {
    EXPECT_NO_THROW(validate(LinkParams{}));
    EXPECT_EQ(link_params_from_json(json::object()), LinkParams{});
    EXPECT_NO_THROW(validate(non_default()));
}

TEST(LinkParams, OutOfRangeNumbersNameTheField) {
    const std::vector<std::pair<std::string, json>> bad = {
        {"mean_delay_us", -1},
        {"mean_delay_us", 1e7 + 1},  // > 10 s
        {"jitter_us", -0.5},
        {"jitter_us", 2e7},
        {"half_life_us", 0},
        {"half_life_us", 0.5},
        {"half_life_us", 1e8},
        {"rate_window_us", 0},
        {"rate_window_us", 1e7 + 1},
        {"rate_bps", -1},
        {"rate_bps", 2e12},
        {"queue_limit_bytes", 63},
        {"queue_limit_bytes", (1ULL << 36) + 1},
        {"queue_limit_bytes", -1},
        {"policer_burst_bytes", 10},
        {"loss_probability", 1.5},
        {"loss_probability", -0.1},
        {"ge_p", 2},
        {"ge_r", -1},
        {"ge_loss_good", 1.01},
        {"ge_loss_bad", -0.5},
        {"buffer_limit_packets", 0},
        {"buffer_limit_packets", (1ULL << 28) + 1},
        {"seed", -1},
    };
    for (const auto& [key, value] : bad)
        expect_error({{key, value}}, key);
}

TEST(LinkParams, WrongTypesNameTheField) {
    const std::vector<std::pair<std::string, json>> bad = {
        {"mean_delay_us", "10ms"},
        {"jitter_us", true},
        {"rate_bps", nullptr},
        {"rate_bps", json::array({1, 2})},
        {"half_life_us", json::object()},
        {"queue_limit_bytes", 1.5},  // not a whole number
        {"buffer_limit_packets", "100"},
        {"seed", 1.0e3},
        {"strategy", 1},
        {"distribution", nullptr},
        {"loss_model", json::array()},
        {"loss_probability", "0.1"},
    };
    for (const auto& [key, value] : bad)
        expect_error({{key, value}}, key);
}

TEST(LinkParams, UnknownKeysAreRejected) {
    expect_error({{"mean_delay", 10}}, "mean_delay");  // the CLI name, not the JSON key
    expect_error({{"foo", 1}}, "foo");
    expect_error({{"mean_delay_us", 10}, {"Jitter_us", 1}}, "Jitter_us");
}

TEST(LinkParams, BadEnumStringsNameTheFieldAndListTheValues) {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"strategy", "reorder"},      {"strategy", ""},      {"distribution", "Normal"},
        {"distribution", "pareto"},   {"limiter", "shaper"}, {"loss_model", "ge"},
        {"byte_accounting", "bytes"},
    };
    for (const auto& [key, value] : bad)
        expect_error({{key, value}}, key);
    try {
        (void)link_params_from_json({{"strategy", "reorder"}});
        FAIL();
    } catch (const ParamError& e) {
        const std::string what = e.what();
        for (const char* v : {"correlated", "uncorrelated", "reordered"})
            EXPECT_NE(what.find(v), std::string::npos) << what;
    }
}

TEST(LinkParams, CrossFieldRules) {
    expect_error({{"limiter", "spacer"}}, "rate_bps");  // rate 0
    expect_error({{"limiter", "policer"}, {"rate_bps", 999}}, "rate_bps");
    EXPECT_NO_THROW(link_params_from_json({{"limiter", "policer"}, {"rate_bps", 1000}}));
    expect_error({{"distribution", "constant"}, {"jitter_us", 5}}, "jitter_us");
    EXPECT_NO_THROW(link_params_from_json({{"distribution", "constant"}, {"mean_delay_us", 5}}));
    for (const char* d : {"gamma", "lognormal"}) {
        expect_error({{"distribution", d}, {"jitter_us", 5}}, "mean_delay_us");
        EXPECT_NO_THROW(link_params_from_json({{"distribution", d}, {"mean_delay_us", 0}}));
        EXPECT_NO_THROW(
            link_params_from_json({{"distribution", d}, {"mean_delay_us", 1}, {"jitter_us", 5}}));
    }
    // normal and uniform may have mean 0 with jitter (negative delays are clamped).
    EXPECT_NO_THROW(link_params_from_json({{"jitter_us", 5}}));
    expect_error({{"loss_model", "gilbert_elliott"}, {"ge_p", 0}, {"ge_r", 0}}, "ge_r");
    EXPECT_NO_THROW(
        link_params_from_json({{"loss_model", "gilbert_elliott"}, {"ge_r", 0}, {"ge_p", 0.1}}));
    // The rules also hold for validate() on a struct.
    LinkParams p;
    p.limiter = Limiter::spacer;
    try {
        validate(p);
        FAIL();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "rate_bps");
    }
    p = LinkParams{};
    p.jitter = -1;
    try {
        validate(p);
        FAIL();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "jitter_us");
    }
}

TEST(LinkParams, ErrorsLeaveTheBaseUnchanged) {
    const LinkParams base = non_default();
    // A good key before a bad one: nothing of the update may stick.
    expect_error({{"mean_delay_us", 5}, {"seed", 7}, {"jitter_us", -1}}, "jitter_us", base);
    expect_error({{"ge_p", 0}, {"ge_r", 0}}, "ge_r", base);
    expect_error({{"limiter", "spacer"}, {"rate_bps", 0}}, "rate_bps", base);
    expect_error({{"rate_window_us", 100}, {"bogus", 1}}, "bogus", base);
    EXPECT_THROW(link_params_from_json(json::array(), base), ParamError);
    EXPECT_THROW(link_params_from_json(json(5), base), ParamError);
    EXPECT_EQ(base, non_default());
    // A good update applies only the given keys.
    const LinkParams upd = link_params_from_json({{"jitter_us", 2}}, base);
    LinkParams want = base;
    want.jitter = 2 * kNsPerUs;
    EXPECT_EQ(upd, want);
}

TEST(LinkParams, JsonRoundTripOfNonDefaultParams) {
    const LinkParams p = non_default();
    const json j = to_json(p);
    const json d = to_json(LinkParams{});
    ASSERT_EQ(j.size(), d.size());
    for (const auto& [key, value] : d.items()) {
        if (key == "trace_file") continue;  // a trace needs a file: test_trace_link.cpp has one
        // ecn on needs a limiter that queues, and this set has the policer (its burst):
        // test_queue_disciplines.cpp reads ecn back.
        if (key == "ecn") continue;
        EXPECT_NE(j.at(key), value) << key << " not set";
    }
    EXPECT_EQ(link_params_from_json(j), p);
    // Also through text, as a config file or the protocol carries it.
    EXPECT_EQ(link_params_from_json(json::parse(j.dump())), p);
    EXPECT_EQ(link_params_from_json(json::parse(j.dump()), LinkParams{}), p);
    // Units in the keys: 12345.678 us, 2.5e9 bit/s.
    EXPECT_DOUBLE_EQ(j.at("mean_delay_us").get<double>(), 12345.678);
    EXPECT_DOUBLE_EQ(j.at("rate_bps").get<double>(), 2.5e9);
    EXPECT_EQ(j.at("strategy"), "reordered");
    EXPECT_EQ(j.at("seed").get<std::uint64_t>(), 0xdeadbeefcafebabeULL);
}

TEST(LinkParams, SchemaHasAnEntryForEveryKey) {
    const json schema = link_params_schema();
    const json d = to_json(LinkParams{});
    EXPECT_EQ(schema.size(), d.size());
    for (const auto& [key, value] : d.items()) {
        ASSERT_TRUE(schema.contains(key)) << key;
        const json& s = schema.at(key);
        EXPECT_EQ(s.at("default"), value) << key;
        const std::string type = s.at("type");
        if (type == "enum") {
            const auto values = s.at("values").get<std::vector<std::string>>();
            EXPECT_NE(std::find(values.begin(), values.end(), value.get<std::string>()),
                      values.end())
                << key;
        } else if (type == "path") {
            EXPECT_EQ(key, "trace_file");
            EXPECT_EQ(value, "");
        } else {
            EXPECT_TRUE(type == "number" || type == "integer") << key;
            EXPECT_LE(s.at("min").get<double>(), value.get<double>()) << key;
            EXPECT_GE(s.at("max").get<double>(), value.get<double>()) << key;
            EXPECT_TRUE(s.contains("unit")) << key;
        }
        EXPECT_FALSE(s.at("help").get<std::string>().empty()) << key;
    }
    EXPECT_EQ(schema.at("mean_delay_us").at("unit"), "us");
    EXPECT_EQ(schema.at("mean_delay_us").at("max").get<double>(), 1e7);
}

TEST(LinkParamFlags, OneFlagPerKeyNamedWithoutTheUnit) {
    const json d = to_json(LinkParams{});
    const auto& flags = link_param_flags();
    EXPECT_EQ(flags.size(), d.size());
    for (const LinkParamFlag& f : flags) {
        EXPECT_TRUE(d.contains(f.key)) << f.key;
        EXPECT_FALSE(f.example.empty()) << f.key;
        EXPECT_EQ(link_param_flag(f.key), &f);
        // Every example is accepted by the flag it illustrates (enums list their names).
        const std::string example = f.example.substr(0, f.example.find('|'));
        EXPECT_NO_THROW(link_param_from_text(f.key, example, "--" + f.flag)) << f.key;
    }
    EXPECT_EQ(link_param_flag("mean_delay_us")->flag, "mean-delay");
    EXPECT_EQ(link_param_flag("rate_bps")->flag, "rate");
    EXPECT_EQ(link_param_flag("queue_limit_bytes")->flag, "queue-limit");
    EXPECT_EQ(link_param_flag("buffer_limit_packets")->flag, "buffer-limit");
    EXPECT_EQ(link_param_flag("loss_probability")->flag, "loss-probability");
    EXPECT_EQ(link_param_flag("ge_loss_bad")->flag, "ge-loss-bad");
    EXPECT_EQ(link_param_flag("mean_delay_us")->value_name, "DURATION");
    EXPECT_EQ(link_param_flag("rate_bps")->value_name, "RATE");
    EXPECT_EQ(link_param_flag("policer_burst_bytes")->value_name, "BYTES");
    EXPECT_EQ(link_param_flag("limiter")->value_name, "NAME");
    EXPECT_EQ(link_param_flag("mean_delay"), nullptr);
}

TEST(LinkParamFlags, TextBecomesTheValueInTheKeysUnit) {
    EXPECT_EQ(link_param_from_text("mean_delay_us", "10ms", "--mean-delay"), 10000.0);
    EXPECT_EQ(link_param_from_text("jitter_us", "1.5us", "--jitter"), 1.5);
    EXPECT_EQ(link_param_from_text("half_life_us", "10s", "--half-life"), 1e7);  // the maximum
    EXPECT_EQ(link_param_from_text("rate_bps", "10Gbit", "--rate"), 1e10);
    EXPECT_EQ(link_param_from_text("rate_bps", "100Mbit/s", "--rate"), 1e8);
    EXPECT_EQ(link_param_from_text("queue_limit_bytes", "1MiB", "--spacer-limit"), 1048576u);
    EXPECT_EQ(link_param_from_text("policer_burst_bytes", "1518", "--policer-burst"), 1518u);
    EXPECT_EQ(link_param_from_text("loss_probability", "0.01", "--loss-probability"), 0.01);
    EXPECT_EQ(link_param_from_text("ge_r", "1", "--ge-r"), 1.0);
    EXPECT_EQ(link_param_from_text("buffer_limit_packets", "100000", "--buffer-limit"), 100000u);
    EXPECT_EQ(link_param_from_text("seed", "18446744073709551615", "--seed"),
              std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(link_param_from_text("limiter", "policer", "--limiter"), "policer");
    EXPECT_EQ(link_param_from_text("loss_model", "gilbert_elliott", "--loss-model"),
              "gilbert_elliott");

    // The values are what link_params_from_json reads: flags and config files agree.
    const json j = {
        {"mean_delay_us", link_param_from_text("mean_delay_us", "12.5ms", "--mean-delay")},
        {"limiter", link_param_from_text("limiter", "spacer", "--limiter")},
        {"rate_bps", link_param_from_text("rate_bps", "2.5G", "--rate")}};
    const LinkParams p = link_params_from_json(j);
    EXPECT_EQ(p.mean_delay, 12'500 * kNsPerUs);
    EXPECT_EQ(p.limiter, Limiter::spacer);
    EXPECT_DOUBLE_EQ(p.rate_bps, 2.5e9);
}

TEST(LinkParamFlags, BadTextNamesTheFlagTheKeyAndWhatIsAllowed) {
    struct Case {
        const char* key;
        const char* text;
        std::vector<std::string> says;  // besides the flag, the text and the key
    };
    const Case cases[] = {
        // Durations need a unit; the range is given in the flag's units.
        {"mean_delay_us", "10", {"not a duration with a unit", "e.g. 10ms", "0ns .. 10s"}},
        // Negative: out of range, not "not a duration" (it has a unit).
        {"mean_delay_us", "-3ms", {"out of range", "0ns .. 10s"}},
        {"rate_bps", "-1Gbit", {"out of range", "1.6Tbit/s"}},
        {"queue_limit_bytes", "-1KiB", {"out of range", "64 .. 68719476736 bytes"}},
        {"jitter_us", "-x", {"not a duration"}},
        {"jitter_us", "20s", {"out of range", "0ns .. 10s"}},
        {"half_life_us", "0ns", {"out of range", "1us .. 10s"}},
        // Rates.
        {"rate_bps", "fast", {"not a bit rate", "e.g. 100Mbit", "1.6Tbit/s"}},
        {"rate_bps", "2Tbit", {"out of range", "1.6Tbit/s"}},
        {"rate_bps", "100", {"not a bit rate"}},  // no unit: bits or bytes? not guessed
        // Sizes.
        {"queue_limit_bytes", "1 parsec", {"not a size in bytes", "64 .. 68719476736 bytes"}},
        {"policer_burst_bytes", "10", {"out of range", "64 .. 68719476736 bytes"}},
        // Probabilities.
        {"loss_probability", "1.5", {"out of range", "0 .. 1"}},
        {"ge_p", "-0.1", {"out of range", "0 .. 1"}},
        {"ge_loss_bad", "half", {"not a number", "0 .. 1"}},
        {"ge_r", "", {"not a number"}},
        // Whole numbers.
        {"buffer_limit_packets", "0", {"out of range", "1 .. 268435456 packets"}},
        {"buffer_limit_packets", "1e5", {"not a whole number"}},
        {"seed", "-1", {"not a whole number", "0 .. 18446744073709551615"}},
        {"seed", "18446744073709551616", {"not a whole number"}},  // 2^64
        // Enums list their names.
        {"strategy", "sideways", {"not allowed", "'correlated', 'uncorrelated', 'reordered'"}},
        {"byte_accounting", "Frame", {"not allowed", "'frame', 'wire'"}},
    };
    for (const Case& c : cases) {
        const std::string flag = "--a-to-b-" + link_param_flag(c.key)->flag;
        try {
            (void)link_param_from_text(c.key, c.text, flag);
            ADD_FAILURE() << c.key << " accepted '" << c.text << "'";
        } catch (const FlagError& e) {
            const std::string what = e.what();
            EXPECT_EQ(e.flag(), flag);
            EXPECT_EQ(e.field(), c.key);
            EXPECT_EQ(what.rfind(flag + ": '" + c.text + "'", 0), 0u) << what;
            EXPECT_NE(what.find(std::string("[") + c.key + "]"), std::string::npos) << what;
            for (const std::string& s : c.says)
                EXPECT_NE(what.find(s), std::string::npos) << what << " should say '" << s << "'";
        }
    }
}

}  // namespace
}  // namespace linkem

namespace {
linkem::LinkFlagText flag_text(
    std::initializer_list<std::tuple<std::string, int, std::string>> given) {
    linkem::LinkFlagText t(linkem::link_param_flags().size());
    for (const auto& [key, layer, text] : given) {
        const auto& flags = linkem::link_param_flags();
        for (std::size_t i = 0; i < flags.size(); ++i)
            if (flags[i].key == key) t[i][static_cast<std::size_t>(layer)] = text;
    }
    return t;
}
}  // namespace

// The one flag -> update conversion of linkemd and linkemctl set: the config file's shape.
TEST(LinkParamFlags, FlagsBecomeTheConfigFilesPartialUpdate) {
    using linkem::link_update_from_flags;
    EXPECT_EQ(link_update_from_flags(flag_text({})), nlohmann::json::object());
    const nlohmann::json u = link_update_from_flags(flag_text({{"mean_delay_us", 0, "20ms"},
                                                               {"loss_probability", 2, "0.01"},
                                                               {"jitter_us", 1, "1ms"},
                                                               {"jitter_us", 2, "2ms"}}));
    EXPECT_EQ(u, (nlohmann::json{{"mean_delay_us", 20000.0},
                                 {"a_to_b", {{"jitter_us", 1000.0}}},
                                 {"b_to_a", {{"loss_probability", 0.01}, {"jitter_us", 2000.0}}}}));
    EXPECT_EQ(linkem::link_flag_name(*linkem::link_param_flag("loss_probability"), 2),
              "--b-to-a-loss-probability");
    try {
        link_update_from_flags(flag_text({{"jitter_us", 2, "3"}}));
        FAIL() << "a duration without a unit was taken";
    } catch (const linkem::FlagError& e) {
        EXPECT_EQ(e.flag(), "--b-to-a-jitter");
        EXPECT_EQ(e.field(), "jitter_us");
        EXPECT_NE(std::string(e.what()).find("unit"), std::string::npos) << e.what();
    }
}
