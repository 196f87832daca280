// The built-in traffic's settings (the protocol's set_traffic), its frames, and what the
// receiving side measures from them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "linkem/link_params.hpp"
#include "linkem/traffic.hpp"
#include "linkem/traffic_meter.hpp"

namespace linkem {
namespace {

using nlohmann::json;

std::string bad_key(const json& j) {
    try {
        traffic_from_json(j, TrafficConfig{});
    } catch (const ParamError& e) {
        EXPECT_FALSE(e.message().empty());
        return e.field();
    }
    return "(accepted)";
}

TEST(Traffic, SettingsApplyOnTopAndRoundTrip) {
    TrafficConfig base;
    const TrafficConfig t = traffic_from_json(
        json{{"running", true}, {"pattern", "sine"}, {"rate_bps", 1e8}, {"period_us", 1e6}}, base);
    EXPECT_TRUE(t.running);
    EXPECT_EQ(t.spec.pattern, TrafficPattern::sine);
    EXPECT_EQ(t.spec.rate_bps, 1e8);
    EXPECT_EQ(t.spec.period, kNsPerSec);
    EXPECT_EQ(t.spec.frame_bytes, base.spec.frame_bytes);
    EXPECT_EQ(traffic_from_json(to_json(t), TrafficConfig{}), t);
}

TEST(Traffic, BadSettingsNameTheKey) {
    EXPECT_EQ(bad_key(json{{"rate_bps", -1}}), "rate_bps");
    EXPECT_EQ(bad_key(json{{"rate_bps", "10Mbit"}}), "rate_bps");
    EXPECT_EQ(bad_key(json{{"frame_size_bytes", 63}}), "frame_size_bytes");
    EXPECT_EQ(bad_key(json{{"frame_size_bytes", 1519}}), "frame_size_bytes");
    EXPECT_EQ(bad_key(json{{"frame_size_bytes", 100.5}}), "frame_size_bytes");
    EXPECT_EQ(bad_key(json{{"pattern", "burst"}}), "pattern");
    EXPECT_EQ(bad_key(json{{"running", 1}}), "running");
    EXPECT_EQ(bad_key(json{{"period_us", 10}}), "period_us");
    EXPECT_EQ(bad_key(json{{"speed", 1}}), "speed");
    EXPECT_EQ(bad_key(json{{"pattern", "sine"}, {"rate_bps", 2000}, {"period_us", 1000}}),
              "period_us");
}

TEST(Traffic, FramesCarryTheirHeader) {
    std::vector<std::uint8_t> f(60, 0xee);
    GenHeader h;
    h.direction = 1;
    h.run = 7;
    h.seq = 123456789012ULL;
    h.send_ns = -5;
    write_gen_frame(f, h);
    const auto r = read_gen_frame(f);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->direction, 1);
    EXPECT_EQ(r->run, 7u);
    EXPECT_EQ(r->seq, h.seq);
    EXPECT_EQ(r->send_ns, -5);
    restamp_gen_frame(f, 5, 99);
    EXPECT_EQ(read_gen_frame(f)->seq, 5u);
    f[12] = 0x08;  // another ethertype
    EXPECT_FALSE(read_gen_frame(f));
    EXPECT_FALSE(read_gen_frame(std::span<const std::uint8_t>(f.data(), 40)));
}

TEST(Traffic, MeterCountsLossAndOrderAndDelay) {
    TrafficMeter m;
    // 0 1 2 _ 4 3 _ 7: 5 is lost (so far), 6 too; 3 arrived after 4.
    for (std::uint64_t s : {0, 1, 2, 4, 3, 7})
        m.on_frame(s, 1000, 1000 + 10 * static_cast<TimeNs>(s + 1));
    const TrafficCounts c = m.counts(8);
    EXPECT_EQ(c.sent, 8u);
    EXPECT_EQ(c.received, 6u);
    EXPECT_EQ(c.out_of_order, 1u);
    EXPECT_EQ(c.lost, 2u);
    const RunningStats d = m.take_interval();
    EXPECT_EQ(d.count, 6u);
    EXPECT_DOUBLE_EQ(d.min, 10.0);
    EXPECT_DOUBLE_EQ(d.max, 80.0);
    EXPECT_EQ(m.take_interval().count, 0u);
    m.on_frame(5, 0, 1);  // a late one: no longer lost, out of order
    EXPECT_EQ(m.counts(8).lost, 1u);
    EXPECT_EQ(m.counts(8).out_of_order, 2u);
    m.reset();
    EXPECT_EQ(m.counts(0), TrafficCounts{});
}

}  // namespace
}  // namespace linkem
