// LinkParams: validation naming the field, JSON round trip, schema completeness.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

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
    p.spacer_limit_bytes = 123'456;
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
        {"spacer_limit_bytes", 63},
        {"spacer_limit_bytes", (1ULL << 36) + 1},
        {"spacer_limit_bytes", -1},
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
        {"spacer_limit_bytes", 1.5},  // not a whole number
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
    for (const auto& [key, value] : d.items())
        EXPECT_NE(j.at(key), value) << key << " not set";
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

}  // namespace
}  // namespace linkem
