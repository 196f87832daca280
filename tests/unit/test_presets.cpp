// Presets and link files: every built-in preset loads and validates, the figures keep
// the file's conventions (A->B upload, B->A download), the JSON round trips, and errors name
// the preset and the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/classes_json.hpp"
#include "linkem/emulator.hpp"
#include "linkem/gilbert_elliott.hpp"
#include "linkem/link_flags.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/presets.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const Preset* find(const std::vector<Preset>& v, const std::string& id) {
    for (const Preset& p : v)
        if (p.id == id) return &p;
    return nullptr;
}

// Every field set to something other than its default (valid: the checks pass).
LinkParams non_default(int k) {
    LinkParams p;
    p.strategy = Strategy::reordered;
    p.distribution = Distribution::lognormal;
    p.mean_delay = 12'345'678 + k;
    p.jitter = 1'001;
    p.half_life = 3 * kNsPerMs + 7;
    p.rate_window = 250 * kNsPerUs;
    p.limiter = Limiter::policer;
    p.rate_bps = 123.5e6;
    p.queue_limit_bytes = 4096;
    p.policer_burst_bytes = 9000;
    p.byte_accounting = ByteAccounting::wire;
    p.loss_model = LossModel::gilbert_elliott;
    p.loss_probability = 0.125;
    p.ge_p = 0.01;
    p.ge_r = 0.3;
    p.ge_loss_good = 0.001;
    p.ge_loss_bad = 0.75;
    p.buffer_limit_packets = 777;
    p.seed = 18'000'000'000'000'000'000ULL;
    return p;
}

// Expects presets_from_json to throw std::invalid_argument whose message contains every
// one of `parts`.
void expect_file_error(const json& file, const std::vector<std::string>& parts) {
    try {
        (void)presets_from_json(file);
        ADD_FAILURE() << "no error for " << file.dump();
    } catch (const std::invalid_argument& e) {
        for (const std::string& part : parts)
            EXPECT_THAT(e.what(), HasSubstr(part)) << file.dump();
    }
}

json one_preset(const json& link, const std::string& id = "p") {
    return {{"presets", {{{"id", id}, {"name", "P"}, {"link", link}}}}};
}

TEST(BuiltinPresets, EveryOneLoadsAndValidates) {
    const std::vector<Preset>& all = builtin_presets();
    ASSERT_GE(all.size(), 20u);
    const std::set<std::string> categories = {"Wired",     "Wi-Fi",     "Mobile",
                                              "Satellite", "Long haul", "Teaching"};
    std::set<std::string> ids;
    for (const Preset& p : all) {
        SCOPED_TRACE(p.id);
        EXPECT_TRUE(ids.insert(p.id).second) << "duplicate id";
        EXPECT_FALSE(p.name.empty());
        EXPECT_EQ(categories.count(p.category), 1u) << p.category;
        EXPECT_FALSE(p.description.empty());
        EXPECT_GT(p.source.size(), 80u) << "a source says where every figure comes from";
        EXPECT_NO_THROW(validate(p.link.a_to_b));
        EXPECT_NO_THROW(validate(p.link.b_to_a));
        EXPECT_EQ(p.link.a_to_b.seed, 0u);  // presets leave the seed to the run
        EXPECT_EQ(p.link.b_to_a.seed, 0u);
        // Varying delay in a preset is correlated normal (order kept): none is about
        // reordering.
        for (const LinkParams* d : {&p.link.a_to_b, &p.link.b_to_a}) {
            if (d->jitter == 0) continue;
            EXPECT_EQ(d->distribution, Distribution::normal);
            EXPECT_EQ(d->strategy, Strategy::correlated);
        }
    }
}

TEST(BuiltinPresets, CoverTheLinksAndToolsTheyPromise) {
    const std::vector<Preset>& all = builtin_presets();
    for (const char* id : {"lan",
                           "wifi",
                           "wifi_lossy",
                           "lte",
                           "chrome_3g",
                           "chrome_slow_4g",
                           "chrome_fast_4g",
                           "atc_3g_good",
                           "atc_edge_lossy",
                           "atc_2g_developing_rural",
                           "comcast_gprs_good",
                           "comcast_edge_good",
                           "comcast_3g_hsdpa_good",
                           "comcast_dialup_good",
                           "comcast_dsl_poor",
                           "comcast_dsl_good",
                           "comcast_wifi_good",
                           "comcast_starlink",
                           "geo_satellite",
                           "intercontinental_fra_nyc",
                           "bufferbloat",
                           "right_sized_buffer",
                           "bursty_loss"})
        EXPECT_NE(find(all, id), nullptr) << id;
}

// A->B is the upload (the client is on port A), B->A the download: where a preset limits
// both directions to different rates, the download is the faster one, as on every access
// link the presets describe.
TEST(BuiltinPresets, DownloadIsBToA) {
    int asymmetric = 0;
    for (const Preset& p : builtin_presets()) {
        const LinkParams& up = p.link.a_to_b;
        const LinkParams& down = p.link.b_to_a;
        if (up.limiter == Limiter::none || down.limiter == Limiter::none) continue;
        if (up.rate_bps == down.rate_bps) continue;
        ++asymmetric;
        EXPECT_GT(down.rate_bps, up.rate_bps) << p.id;
        EXPECT_TRUE(p.asymmetric()) << p.id;
    }
    EXPECT_GE(asymmetric, 8);
}

TEST(BuiltinPresets, FiguresAsTheirSourcesGiveThem) {
    const std::vector<Preset>& all = builtin_presets();
    auto get = [&](const char* id) {
        const Preset* p = find(all, id);
        if (!p) throw std::runtime_error(std::string("no preset ") + id);
        return *p;
    };
    // Chrome DevTools: the target RTT, halved, not the request-level latency.
    const Preset slow4g = get("chrome_slow_4g");
    EXPECT_EQ(slow4g.link.a_to_b.mean_delay, 75 * kNsPerMs);
    EXPECT_EQ(slow4g.link.b_to_a.mean_delay, 75 * kNsPerMs);
    EXPECT_EQ(slow4g.link.b_to_a.rate_bps, 1.6e6);
    EXPECT_EQ(slow4g.link.a_to_b.rate_bps, 750e3);
    EXPECT_EQ(get("chrome_3g").link.a_to_b.mean_delay, 200 * kNsPerMs);
    EXPECT_EQ(get("chrome_fast_4g").link.b_to_a.mean_delay, 30 * kNsPerMs);
    // ATC: per direction as given (up 100 ms, down 90 ms), kbit/s x 1000.
    const Preset atc = get("atc_3g_good");
    EXPECT_EQ(atc.link.a_to_b.mean_delay, 100 * kNsPerMs);
    EXPECT_EQ(atc.link.b_to_a.mean_delay, 90 * kNsPerMs);
    EXPECT_EQ(atc.link.a_to_b.rate_bps, 420e3);
    EXPECT_EQ(atc.link.b_to_a.rate_bps, 850e3);
    const Preset edge = get("atc_edge_lossy");
    EXPECT_EQ(edge.link.a_to_b.loss_model, LossModel::bernoulli);
    EXPECT_DOUBLE_EQ(edge.link.b_to_a.loss_probability, 0.01);
    // Comcast: its latency once per round trip, so half per direction.
    EXPECT_EQ(get("comcast_gprs_good").link.a_to_b.mean_delay, 250 * kNsPerMs);
    EXPECT_EQ(get("comcast_starlink").link.a_to_b.limiter, Limiter::none);
    // Bursty Wi-Fi loss: Gilbert-Elliott with a mean loss of p/(p+r) = 4.8 %.
    const LinkParams& lossy = get("wifi_lossy").link.b_to_a;
    ASSERT_EQ(lossy.loss_model, LossModel::gilbert_elliott);
    EXPECT_NEAR(lossy.ge_p / (lossy.ge_p + lossy.ge_r), 0.0476, 0.0001);
    EXPECT_EQ(1 / lossy.ge_r, 2.0);  // mean burst: 2 packets
    // LTE: more down than up, jitter per direction.
    const Preset lte = get("lte");
    EXPECT_GT(lte.link.b_to_a.rate_bps, lte.link.a_to_b.rate_bps);
    EXPECT_NE(lte.link.a_to_b.jitter, lte.link.b_to_a.jitter);
    // Physics: a GEO hop takes at least 238.7 ms one way; fibre ~5 us/km.
    EXPECT_GE(get("geo_satellite").link.a_to_b.mean_delay, 238'700 * kNsPerUs);
    EXPECT_EQ(get("intercontinental_fra_nyc").link.b_to_a.mean_delay, 31 * kNsPerMs);
}

// The largest delay (departure - arrival) and the share dropped of 10 s of CBR traffic,
// 1000 frames/s of 1518 B (linkemd --demo's), through one direction of a link.
struct Overload {
    double max_delay_ns = 0, dropped = 0;
};
Overload overload(const LinkParams& p) {
    Emulator<test::Packet> e(p);
    std::vector<test::Packet> out(4096);
    double max_delay = 0;
    std::size_t dropped = 0, n = 10000;
    auto drain = [&](TimeNs t) {
        const std::size_t k = e.drain(t, out.data(), out.size());
        for (std::size_t i = 0; i < k; ++i)
            max_delay = std::max(max_delay, static_cast<double>(t - out[i].t_arr));
    };
    TimeNs t = kNsPerMs;
    for (std::size_t i = 0; i < n; ++i, t += kNsPerMs) {
        test::Packet pk{i, t, 1518};
        dropped += e.ingest(&pk, 1, t);
        for (TimeNs u = t; u < t + kNsPerMs; u += 50 * kNsPerUs)  // drained every 50 us
            drain(u);
    }
    for (; e.in_flight() > 0; t += 50 * kNsPerUs)
        drain(t);
    return {max_delay, static_cast<double>(dropped) / static_cast<double>(n)};
}

// The teaching presets show what they are named for, with the built-in traffic of linkemd
// --demo (12.1 Mbit/s): the deep buffer fills to 1.518 s of queueing and then drops the
// third of the traffic that 8 Mbit/s cannot carry; one bandwidth-delay product holds the
// queueing to 40 ms and drops as much; the bursty loss keeps Starlink's average.
TEST(BuiltinPresets, TeachingPresetsShowWhatTheyAreFor) {
    const std::vector<Preset>& all = builtin_presets();
    const Preset* bloat = find(all, "bufferbloat");
    const Preset* sized = find(all, "right_sized_buffer");
    const Preset* bursty = find(all, "bursty_loss");
    const Preset* starlink = find(all, "comcast_starlink");
    ASSERT_TRUE(bloat && sized && bursty && starlink);
    // Drained every 50 us: a departure is up to 50 us late; a frame takes 1.518 ms at 8 Mbit/s.
    constexpr double kSlack = 2e6;
    const Overload b = overload(bloat->link.a_to_b);
    EXPECT_GT(b.max_delay_ns, 20e6 + 1.518e9 - kSlack);
    EXPECT_LT(b.max_delay_ns, 20e6 + 1.518e9 + kSlack);
    const double carried = 8e6 / (1000 * 8 * 1518.0);  // 66 % of the frames fit
    // 10 s of arrivals, the first ~3 s filling the buffer: ~(10 - 2.9) s x 34 % dropped.
    EXPECT_NEAR(b.dropped, (1 - carried) * (10 - 2.93) / 10, 0.01);
    const Overload s = overload(sized->link.a_to_b);
    EXPECT_LT(s.max_delay_ns, 20e6 + 40e6 + kSlack);
    EXPECT_GT(s.max_delay_ns, 20e6 + 40e6 - kSlack);
    EXPECT_NEAR(s.dropped, 1 - carried, 0.01);
    for (const Preset* p : {bloat, sized}) {
        EXPECT_EQ(p->link.a_to_b.rate_bps, 8e6) << p->id;
        EXPECT_EQ(p->link.a_to_b.loss_model, LossModel::none) << p->id;
        EXPECT_EQ(p->link.a_to_b, p->link.b_to_a) << p->id;
    }
    // Bursty loss: Starlink's delay and average loss, in bursts of 5.
    const LinkParams& g = bursty->link.b_to_a;
    ASSERT_EQ(g.loss_model, LossModel::gilbert_elliott);
    const GeLossAndBurst f = ge_loss_and_burst({g.ge_p, g.ge_r, g.ge_loss_good, g.ge_loss_bad});
    EXPECT_NEAR(f.average_loss, starlink->link.b_to_a.loss_probability, 1e-12);
    EXPECT_NEAR(f.mean_burst, 5.0, 1e-9);
    EXPECT_EQ(g.mean_delay, starlink->link.b_to_a.mean_delay);
    EXPECT_EQ(g.limiter, Limiter::none);
}

TEST(PresetFile, BuiltinsRoundTrip) {
    const std::vector<Preset>& all = builtin_presets();
    const json j = presets_to_json(all);
    const std::vector<Preset> back = presets_from_json(j);
    ASSERT_EQ(back.size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        SCOPED_TRACE(all[i].id);
        EXPECT_EQ(back[i].id, all[i].id);
        EXPECT_EQ(back[i].name, all[i].name);
        EXPECT_EQ(back[i].category, all[i].category);
        EXPECT_EQ(back[i].description, all[i].description);
        EXPECT_EQ(back[i].source, all[i].source);
        EXPECT_EQ(back[i].link, all[i].link);
    }
    // Through text, as a user's file is.
    const std::vector<Preset> again = presets_from_json(json::parse(j.dump(2)));
    ASSERT_EQ(again.size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(again[i].link, all[i].link) << all[i].id;
}

TEST(PresetFile, EveryKeyOfEveryDirectionIsWritten) {
    Preset p;
    p.id = "mine-1";
    p.name = "Mine";
    p.category = "User";
    p.link.a_to_b = non_default(0);
    p.link.b_to_a = non_default(1);
    const json j = presets_to_json({p});
    const json& link = j["presets"][0]["link"];
    EXPECT_EQ(link.size(), 2u);  // a_to_b and b_to_a only
    for (const char* dir : {"a_to_b", "b_to_a"})
        for (const LinkParamFlag& f : link_param_flags())
            EXPECT_TRUE(link[dir].contains(f.key)) << dir << "." << f.key;
    const std::vector<Preset> back = presets_from_json(json::parse(j.dump()));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].link, p.link);
    EXPECT_TRUE(back[0].asymmetric());
    EXPECT_EQ(back[0].description, "");
}

TEST(PresetFile, OptionalFieldsHaveDefaults) {
    const std::vector<Preset> v = presets_from_json(one_preset({{"mean_delay_us", 5000}}));
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].category, "User");
    EXPECT_EQ(v[0].description, "");
    EXPECT_EQ(v[0].source, "");
    EXPECT_EQ(v[0].link.a_to_b.mean_delay, 5 * kNsPerMs);
    EXPECT_EQ(v[0].link.b_to_a.mean_delay, 5 * kNsPerMs);
    EXPECT_FALSE(v[0].asymmetric());
    EXPECT_TRUE(presets_from_json({{"presets", json::array()}}).empty());
}

TEST(PresetFile, TopLevelKeysForBothDirectionsObjectsOverride) {
    const std::vector<Preset> v = presets_from_json(one_preset(
        {{"mean_delay_us", 10000}, {"jitter_us", 2000}, {"b_to_a", {{"mean_delay_us", 40000}}}}));
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].link.a_to_b.mean_delay, 10 * kNsPerMs);
    EXPECT_EQ(v[0].link.b_to_a.mean_delay, 40 * kNsPerMs);
    EXPECT_EQ(v[0].link.b_to_a.jitter, 2 * kNsPerMs);
}

TEST(PresetFile, ErrorsNameThePresetAndTheKey) {
    const json good = {{"id", "ok"}, {"name", "OK"}, {"link", json::object()}};
    json two = {
        {"presets",
         {good, {{"id", "lte"}, {"name", "LTE"}, {"link", {{"a_to_b", {{"jitter_us", -1}}}}}}}}};
    expect_file_error(two, {"presets[1] (lte): link.a_to_b.jitter_us: -1 is out of range",
                            "allowed 0 .. 10000000 us"});
    expect_file_error(one_preset({{"jitter_us", -1}}), {"presets[0] (p): link.jitter_us: "});
    expect_file_error(one_preset({{"limiter", "spacer"}}),
                      {"presets[0] (p): link.a_to_b.rate_bps: must be at least"});
    // A rule broken only where a direction's own key meets a top-level one.
    expect_file_error(
        one_preset({{"distribution", "constant"}, {"b_to_a", {{"jitter_us", 5}}}}),
        {"presets[0] (p): link.b_to_a.jitter_us: must be 0 when distribution is 'constant'"});
    expect_file_error(one_preset({{"mean_delay", 5}}),
                      {"presets[0] (p): link.mean_delay: unknown key", "'a_to_b', 'b_to_a'"});
    expect_file_error(one_preset({{"b_to_a", {{"meandelay_us", 5}}}}),
                      {"presets[0] (p): link.b_to_a.meandelay_us: unknown parameter; known:"});
    expect_file_error(one_preset({{"a_to_b", 5}}),
                      {"presets[0] (p): link.a_to_b: expected an object of link parameters"});
    expect_file_error(one_preset(5), {"presets[0] (p): link: expected a JSON object"});
    expect_file_error(one_preset(json::object(), "LTE!"),
                      {"presets[0]: id: 'LTE!' is not allowed; allowed: a-z, 0-9, '_' and '-'"});
    expect_file_error({{"presets", {good, good}}},
                      {"presets[1] (ok): id: 'ok' is taken by presets[0]"});
    expect_file_error({{"presets", {{{"id", "x"}, {"link", json::object()}}}}},
                      {"presets[0] (x): name: required"});
    expect_file_error({{"presets", {{{"id", "x"}, {"name", ""}, {"link", json::object()}}}}},
                      {"presets[0] (x): name: expected a non-empty string"});
    expect_file_error({{"presets", {{{"id", "x"}, {"name", "X"}}}}},
                      {"presets[0] (x): link: required"});
    expect_file_error({{"presets", {{{"name", "X"}, {"link", json::object()}}}}},
                      {"presets[0]: id: required"});
    expect_file_error(
        {{"presets", {{{"id", "x"}, {"name", "X"}, {"colour", "red"}, {"link", json::object()}}}}},
        {"presets[0] (x): colour: unknown key; allowed 'id', 'name'"});
    expect_file_error(
        {{"presets", {{{"id", "x"}, {"name", "X"}, {"source", 3}, {"link", json::object()}}}}},
        {"presets[0] (x): source: expected a string, got 3"});
    expect_file_error({{"presets", {7}}}, {"presets[0]: expected an object, got number"});
    expect_file_error(json::array(), {"expected a JSON object"});
    expect_file_error(json::object(), {"presets: required, an array"});
    expect_file_error({{"presets", json::object()}}, {"presets: required, an array"});
    expect_file_error({{"presets", json::array()}, {"version", 1}},
                      {"version: unknown key; allowed 'about', 'presets'"});
}

// --- Link files (linkemd --config) ---

LinkConfig asymmetric_link() {
    LinkConfig link;
    link.a_to_b = non_default(0);
    link.b_to_a = non_default(1);
    link.b_to_a.strategy = Strategy::correlated;
    link.b_to_a.limiter = Limiter::spacer;
    link.b_to_a.loss_model = LossModel::bernoulli;
    return link;
}

TEST(LinkFile, KeepsBaseKeysAndReplacesTheLinkKeys) {
    const json base = {{"port_a", "veth-a"},
                       {"port_b", "veth-b"},
                       {"lcores", "2"},
                       {"burst", 32},
                       {"stats_interval_us", 500000},
                       {"mean_delay_us", 10000},
                       {"jitter_us", 2000},
                       {"a_to_b", {{"mean_delay_us", 1}}},
                       {"b_to_a", {{"rate_bps", 1e6}}}};
    const LinkConfig link = asymmetric_link();
    const json out = link_file_to_json(link, 2, base);
    EXPECT_EQ(out["port_a"], "veth-a");
    EXPECT_EQ(out["port_b"], "veth-b");
    EXPECT_EQ(out["lcores"], "2");
    EXPECT_EQ(out["burst"], 32);
    EXPECT_EQ(out["stats_interval_us"], 500000);
    EXPECT_FALSE(out.contains("mean_delay_us"));  // top-level link keys are gone
    EXPECT_FALSE(out.contains("jitter_us"));
    EXPECT_EQ(out.size(), 7u);  // the 5 base keys kept + a_to_b + b_to_a
    EXPECT_EQ(out["a_to_b"], to_json(link.a_to_b));
    EXPECT_EQ(out["b_to_a"], to_json(link.b_to_a));
    EXPECT_EQ(out["a_to_b"].size(), link_param_flags().size());  // every key
    EXPECT_EQ(base["mean_delay_us"], 10000);                     // base untouched

    const json one = link_file_to_json(link, 1, {{"port_a", "veth-a"}});
    EXPECT_EQ(one["port_a"], "veth-a");
    EXPECT_EQ(one["a_to_b"], to_json(link.a_to_b));
    EXPECT_FALSE(one.contains("b_to_a"));  // linkemd refuses b_to_a without port B
    EXPECT_EQ(link_file_to_json(link, 2, json()).size(), 2u);  // no base: the link only
    EXPECT_THROW((void)link_file_to_json(link, 2, json::array()), std::invalid_argument);
    EXPECT_THROW((void)link_file_to_json(link, 3, json::object()), std::invalid_argument);
}

TEST(LinkFile, RoundTrips) {
    const json base = {{"port_a", "veth-a"}, {"port_b", "veth-b"}, {"burst", 16}};
    std::vector<LinkConfig> links = {asymmetric_link(), LinkConfig{}};
    for (const Preset& p : builtin_presets())
        links.push_back(p.link);
    for (const LinkConfig& link : links) {
        const json text = json::parse(link_file_to_json(link, 2, base).dump());
        EXPECT_EQ(link_file_from_json(text, 2), link);
        const LinkConfig one = link_file_from_json(link_file_to_json(link, 1, base), 1);
        EXPECT_EQ(one.a_to_b, link.a_to_b);
        EXPECT_EQ(one.b_to_a, link.a_to_b);  // single port: as linkemd, b_to_a = a_to_b
    }
}

// linkemd's reading of a config file: top-level link keys for both directions, a_to_b /
// b_to_a objects override them for one, other keys are not link parameters.
TEST(LinkFile, ReadsAsLinkemdDoes) {
    const json file = {{"port_a", "veth-a"},
                       {"port_b", "veth-b"},
                       {"lcores", "shared"},
                       {"burst", 32},
                       {"mbufs", 65536},
                       {"hold_mbufs", true},
                       {"stats_interval_us", 1e6},
                       {"mean_delay_us", 10000},
                       {"jitter_us", 2000},
                       {"limiter", "spacer"},
                       {"rate_bps", 1e8},
                       {"a_to_b", {{"rate_bps", 5e7}}},
                       {"b_to_a", {{"mean_delay_us", 40000}}}};
    const LinkConfig link = link_file_from_json(file, 2);
    EXPECT_EQ(link.a_to_b.mean_delay, 10 * kNsPerMs);
    EXPECT_EQ(link.a_to_b.jitter, 2 * kNsPerMs);
    EXPECT_EQ(link.a_to_b.rate_bps, 5e7);
    EXPECT_EQ(link.b_to_a.mean_delay, 40 * kNsPerMs);
    EXPECT_EQ(link.b_to_a.jitter, 2 * kNsPerMs);
    EXPECT_EQ(link.b_to_a.rate_bps, 1e8);
    EXPECT_EQ(link.b_to_a.limiter, Limiter::spacer);
    EXPECT_EQ(link.a_to_b.half_life, LinkParams{}.half_life);  // defaults underneath

    EXPECT_EQ(link_file_from_json(json::object(), 2), LinkConfig{});
    const LinkConfig one = link_file_from_json({{"port_a", "x"}, {"jitter_us", 5}}, 1);
    EXPECT_EQ(one.a_to_b.jitter, 5 * kNsPerUs);
    EXPECT_EQ(one.b_to_a, one.a_to_b);
}

// Expects link_file_from_json to throw ParamError naming `field`.
void expect_link_file_error(const json& file, unsigned directions, const std::string& field,
                            const std::string& part) {
    try {
        (void)link_file_from_json(file, directions);
        ADD_FAILURE() << "no error for " << file.dump();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), field) << file.dump() << " -> " << e.what();
        EXPECT_THAT(e.message(), HasSubstr(part)) << e.what();
        EXPECT_THAT(e.what(), HasSubstr(field));
    }
}

TEST(LinkFile, ErrorsNameTheDottedField) {
    expect_link_file_error({{"b_to_a", {{"jitter_us", -1}}}}, 2, "b_to_a.jitter_us",
                           "-1 is out of range");
    expect_link_file_error({{"jitter_us", -1}}, 2, "jitter_us", "-1 is out of range");
    expect_link_file_error({{"port_a", "x"}, {"limiter", "spacer"}}, 2, "a_to_b.rate_bps",
                           "must be at least");
    expect_link_file_error({{"limiter", "spacer"}, {"a_to_b", {{"rate_bps", 1e6}}}}, 2,
                           "b_to_a.rate_bps", "must be at least");
    expect_link_file_error({{"a_to_b", {{"jiter_us", 1}}}}, 2, "a_to_b.jiter_us",
                           "unknown parameter");
    expect_link_file_error({{"a_to_b", "fast"}}, 2, "a_to_b", "expected an object");
    expect_link_file_error({{"b_to_a", json::object()}}, 1, "b_to_a", "there is no port B");
    expect_link_file_error(json::array(), 2, "", "expected a JSON object");
    EXPECT_THROW((void)link_file_from_json(json::object(), 0), std::invalid_argument);
    EXPECT_THROW((void)link_file_from_json(json::object(), 3), std::invalid_argument);
}

// Traffic classes in a link file and a preset's link: written when the link has some, read
// back to the same; a base's old list never survives a link without one; a bad list names
// the class and key.
TEST(LinkFile, CarriesTheLinksTrafficClasses) {
    const json list = json::parse(R"([
        {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
         "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}},
        {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}])");
    LinkConfig link;
    link.a_to_b.mean_delay = link.b_to_a.mean_delay = 10 * kNsPerMs;
    link.classes = classes_from_json(list);
    const json base = {{"port_a", "veth-a"}, {"classes", json::array({list[1]})}};
    const json out = link_file_to_json(link, 2, base);
    EXPECT_EQ(out["classes"], classes_to_json(link.classes));
    EXPECT_EQ(link_file_from_json(json::parse(out.dump()), 2), link);
    EXPECT_FALSE(link_file_to_json(LinkConfig{}, 2, base).contains("classes"));
    Preset p;
    p.id = "classy";
    p.name = "Classy";
    p.category = "User";
    p.link = link;
    const std::vector<Preset> back = presets_from_json(json::parse(presets_to_json({p}).dump()));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].link, link);
    json bad = list;
    bad[0]["match"]["b_port"] = 70000;
    expect_link_file_error({{"classes", bad}}, 2, "classes[0].match.b_port", "class 'voip'");
    expect_link_file_error({{"classes", list}}, 1, "classes[0].b_to_a", "there is no port B");
    // Single-port mode: a class's b_to_a is its a_to_b.
    const LinkConfig one = link_file_from_json({{"classes", json::array({list[1]})}}, 1);
    ASSERT_EQ(one.classes.size(), 1u);
    EXPECT_EQ(one.classes[0].link.a_to_b, one.classes[0].link.b_to_a);
}

}  // namespace
}  // namespace linkem
