// The built-in traffic's settings (the protocol's set_traffic), its frames, and what the
// receiving side measures from them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "linkem/link_params.hpp"
#include "linkem/traffic.hpp"
#include "linkem/traffic_json.hpp"
#include "traffic_meter.hpp"

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

// Feeds sequence numbers of run 1, each with delay 10 * (seq + 1) ns.
TrafficMeter meter_with(std::initializer_list<std::uint64_t> seqs) {
    TrafficMeter m;
    m.start_run(1);
    for (std::uint64_t s : seqs)
        m.on_frame(1, s, 1000, 1000 + 10 * static_cast<TimeNs>(s + 1));
    return m;
}

TEST(Traffic, MeterCountsLossAndOrderAndDelay) {
    TrafficMeter m = meter_with({0, 1, 2, 4, 3, 7});
    // 0 1 2 _ 4 3 _ 7: 5 is lost (so far), 6 too; 3 arrived after 4.
    const TrafficCounts c = m.counts(8);
    EXPECT_EQ(c.sent, 8u);
    EXPECT_EQ(c.received, 6u);
    EXPECT_EQ(c.out_of_order, 1u);
    EXPECT_EQ(c.lost, 2u);
    EXPECT_EQ(c.duplicates, 0u);
    const RunningStats d = m.take_interval();
    EXPECT_EQ(d.count, 6u);
    EXPECT_DOUBLE_EQ(d.min, 10.0);
    EXPECT_DOUBLE_EQ(d.max, 80.0);
    EXPECT_EQ(m.take_interval().count, 0u);
    EXPECT_EQ(m.on_frame(1, 5, 0, 1), DurationNs{1});  // a late one: no longer lost, out of order
    EXPECT_EQ(m.counts(8).lost, 1u);
    EXPECT_EQ(m.counts(8).out_of_order, 2u);
}

TEST(Traffic, MeterCountsGapsAsLoss) {
    // A run that starts with a gap (0..2 lost), gaps in the middle, nothing after the last.
    const TrafficCounts c = meter_with({3, 4, 10, 11, 1000}).counts(2000);
    EXPECT_EQ(c.received, 5u);
    EXPECT_EQ(c.lost, 3u + 5u + 988u);
    EXPECT_EQ(c.out_of_order, 0u);
    // The frames after the highest received are in flight or lost: not counted yet.
    EXPECT_EQ(c.sent - c.received - c.lost, 999u);
}

TEST(Traffic, MeterTellsDuplicatesFromReordering) {
    TrafficMeter m = meter_with({0, 1, 3, 2, 2, 3, 0, 4});
    const TrafficCounts c = m.counts(5);
    EXPECT_EQ(c.received, 5u);
    EXPECT_EQ(c.duplicates, 3u);  // the second 2, 3 and 0
    EXPECT_EQ(c.out_of_order, 1u);
    EXPECT_EQ(c.lost, 0u);
    EXPECT_EQ(m.take_interval().count, 5u);  // duplicates give no delay
    EXPECT_FALSE(m.on_frame(1, 4, 0, 1));
}

TEST(Traffic, MeterDuplicatesAcrossTheWindow) {
    TrafficMeter m;
    m.start_run(1);
    const std::uint64_t w = TrafficMeter::kWindow;
    m.on_frame(1, 0, 0, 1);
    m.on_frame(1, 5, 0, 1);
    // A jump of more than the window forgets everything below: 5 is taken as a late first
    // copy (out of order), not a duplicate.
    m.on_frame(1, 5 + 2 * w, 0, 1);
    m.on_frame(1, 5, 0, 1);
    EXPECT_EQ(m.counts(0).duplicates, 0u);
    EXPECT_EQ(m.counts(0).out_of_order, 1u);
    // Inside the window, after the bits were recycled: w + 7 is new, then a duplicate.
    m.on_frame(1, 3 * w, 0, 1);
    m.on_frame(1, 2 * w + 7, 0, 1);
    m.on_frame(1, 2 * w + 7, 0, 1);
    EXPECT_EQ(m.counts(0).duplicates, 1u);
    EXPECT_EQ(m.counts(0).out_of_order, 2u);
    // Step by step over several windows: every bit is cleared as the window slides.
    TrafficMeter n;
    n.start_run(1);
    for (std::uint64_t s = 0; s < 3 * w; s += 3)
        n.on_frame(1, s, 0, 1);
    for (std::uint64_t s = 3 * w - w / 2; s < 3 * w; ++s)
        n.on_frame(1, s, 0, 1);
    std::uint64_t again = 0;  // the second pass's numbers the first pass sent already
    for (std::uint64_t s = 3 * w - w / 2; s < 3 * w; ++s)
        again += s % 3 == 0;
    const TrafficCounts c = n.counts(0);
    EXPECT_EQ(c.duplicates, again);
    EXPECT_EQ(c.out_of_order, w / 2 - again - 2);  // all but the two above the first maximum
    EXPECT_EQ(c.received + c.lost, 3 * w);
}

// A delay message's samples are frames its measured_delay counted: a sample that arrived
// after the newest report waits for the next message; another run's samples are dropped.
TEST(Traffic, SamplesWaitForTheReportThatCountsThem) {
    std::vector<MeasuredSample> held = {
        {100, 50, 3},  // received at 150
        {120, 40, 2},  // the run before
        {160, 40, 3},  // received at 200: exactly at the report's end, counted
        {180, 30, 3},  // received at 210: after the report
    };
    std::vector<MeasuredSample> out;
    take_counted_samples(held, 3, 200, out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].received_ns(), 150);
    EXPECT_EQ(out[1].received_ns(), 200);
    ASSERT_EQ(held.size(), 1u);
    EXPECT_EQ(held[0].received_ns(), 210);
    // The next report takes it.
    out.clear();
    take_counted_samples(held, 3, 250, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].send_ns, 180);
    EXPECT_TRUE(held.empty());
}

TEST(Traffic, MeterIgnoresOtherRunsAndStartsAgain) {
    TrafficMeter m = meter_with({0, 1, 2, 5});
    EXPECT_EQ(m.counts(6).lost, 2u);
    m.start_run(2);
    EXPECT_EQ(m.run(), 2u);
    EXPECT_EQ(m.counts(0), TrafficCounts{});
    EXPECT_EQ(m.take_interval().count, 0u);
    EXPECT_FALSE(m.on_frame(1, 3, 0, 1));  // the old run's frame still in flight
    EXPECT_FALSE(m.on_frame(1, 100, 0, 1));
    EXPECT_EQ(m.counts(0), TrafficCounts{});
    // The new run's numbering starts at 0 again, and the old maximum is forgotten.
    EXPECT_TRUE(m.on_frame(2, 0, 0, 5));
    EXPECT_TRUE(m.on_frame(2, 1, 0, 5));
    EXPECT_EQ(m.counts(2).received, 2u);
    EXPECT_EQ(m.counts(2).lost, 0u);
    EXPECT_EQ(m.counts(2).out_of_order, 0u);
    EXPECT_EQ(m.take_interval().mean(), 5.0);
}

}  // namespace
}  // namespace linkem
