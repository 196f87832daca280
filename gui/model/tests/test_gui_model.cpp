// linkem-gui's model layer without Qt (GoogleTest): the telemetry model decodes each message
// once and refuses a bad one whole; readouts since the last change leave the link before it
// out; the event log coalesces; slider scales keep the drag bound; Ctrl+Z's history;
// Gilbert-Elliott figures; preset matching.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "class_rows.hpp"
#include "event_log.hpp"
#include "link_history.hpp"
#include "link_match.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/messages.hpp"
#include "linkem/telemetry_json.hpp"
#include "scenario_timeline.hpp"
#include "slider_scale.hpp"
#include "telemetry_model.hpp"

using namespace linkem;
using namespace linkem::gui;
using nlohmann::json;

namespace {

constexpr std::int64_t kMs = 1'000'000;

// A delay message of one interval [start, end) per direction: `n` packets with emulated
// delays mean ± jitter (every packet), 10 samples, tagged with `generation` (none: untagged).
json delayMessage(std::int64_t start, std::int64_t end, double mean_ns, double jitter_ns,
                  std::optional<std::uint64_t> generation, std::uint64_t seq) {
    proto::DelayMessage m;
    m.directions = 2;
    for (int d = 0; d < 2; ++d) {
        DirectionDelay& dd = m.dir[d];
        dd.start_ns = start;
        dd.end_ns = end;
        dd.delay.shift = mean_ns;
        // two values mean ± jitter: mean and (population) jitter exactly
        for (int i = 0; i < 500; ++i) {
            dd.delay.add(mean_ns - jitter_ns);
            dd.delay.add(mean_ns + jitter_ns);
        }
        dd.lateness.add(1000);
        for (int i = 0; i < 10; ++i) {
            const std::int64_t t = start + (end - start) * i / 10;
            const auto v = static_cast<DurationNs>(mean_ns);
            dd.samples.push_back(DelaySample{t, v, v + 100, v + 150});
        }
        dd.params_generation = generation;
    }
    m.header = proto::Header{"00000000000000aa", seq, end};
    return proto::to_json(m);
}

json statsMessage(std::int64_t t, std::uint64_t generation, std::uint64_t in, std::uint64_t loss,
                  std::uint64_t ooo, std::uint64_t seq) {
    proto::StatsMessage m;
    m.header = proto::Header{"00000000000000aa", seq, t};
    LinkStats& s = m.stats;
    s.t_ns = t;
    s.directions = 2;
    for (auto& d : s.dir) {
        d.counters.packets_in = in;
        d.counters.drops[DropCause::loss] = loss;
        d.counters.packets_out = in - loss;
        d.params_generation = generation;
        d.traffic.present = true;
        d.traffic.run = 1;
        d.traffic.out_of_order = ooo;
    }
    return proto::to_json(m);
}

// What the GUI's client does with a message before the model sees it: the protocol's decoder
// (a refusal, naming the key, goes to the model as such; an unknown topic is ignored).
TelemetryModel::Took feed(TelemetryModel& m, std::string_view topic, const json& body) {
    try {
        const auto t = proto::decode_telemetry(topic, body);
        return t ? m.add(*t, 0) : TelemetryModel::Took::ignored;
    } catch (const std::invalid_argument& e) {
        return m.refuse(e.what());
    }
}

proto::Event event(const char* kind, const char* severity, const char* message) {
    return proto::Event::make(kind, severity, message);
}

LinkConfig link(double mean_ms, double jitter_ms) {
    LinkConfig l;
    l.a_to_b.mean_delay = l.b_to_a.mean_delay = static_cast<DurationNs>(mean_ms * kMs);
    l.a_to_b.jitter = l.b_to_a.jitter = static_cast<DurationNs>(jitter_ms * kMs);
    return l;
}

}  // namespace

TEST(GuiModel, OneStatisticsTypeDividesByN) {
    // The protocol's RunningStats: the population jitter, as jitter_ns and jitter_us are.
    RunningStats s;
    for (double x : {1.0, 2.0, 3.0, 4.0})
        addCentred(s, x);
    EXPECT_DOUBLE_EQ(s.mean(), 2.5);
    EXPECT_NEAR(s.jitter(), std::sqrt(1.25), 1e-12);
    // centred on its first value: 10 s ± 1 µs in ns keeps its digits
    RunningStats big;
    for (double x : {1e10 - 1000, 1e10 + 1000})
        addCentred(big, x);
    EXPECT_NEAR(big.jitter(), 1000, 1e-6);
}

TEST(GuiModel, StoreScopesMatchBruteForce) {
    SampleRing ring;
    std::mt19937_64 g(3);
    std::vector<DelayPoint> all;
    for (int i = 0; i < 20'000; ++i) {
        const std::int64_t d = 20 * kMs + static_cast<std::int64_t>(g() % 4'000'000);
        const std::int64_t s = d + static_cast<std::int64_t>(g() % 500'000);
        all.push_back(DelayPoint{i * 50'000, d, s, s + 3000});
        ring.add(all.back());
    }
    const std::int64_t lo = 123'456'789, hi = 876'543'210;
    RunningStats a, w;
    for (const DelayPoint& p : all)
        if (p.t_ns >= lo && p.t_ns <= hi) {
            a.add(static_cast<double>(p.actual_ns));
            w.add(static_cast<double>(p.scheduled_ns - p.delay_ns));
        }
    const RunningStats ra = ring.actual(lo, hi), rw = ring.wait(lo, hi);
    EXPECT_EQ(ra.count, a.count);
    EXPECT_NEAR(ra.mean(), a.mean(), 1e-3);
    EXPECT_NEAR(ra.jitter(), a.jitter(), 1e-3);
    EXPECT_EQ(rw.count, w.count);
    EXPECT_NEAR(rw.mean(), w.mean(), 1e-3);
    EXPECT_EQ(rw.max, w.max);
}

TEST(GuiModel, TelemetryDecodedOnceAndRefusedWhole) {
    TelemetryModel m;
    EXPECT_EQ(feed(m, "delay", delayMessage(0, 50 * kMs, 20e6, 4e6, 1, 0)),
              TelemetryModel::Took::delay);
    EXPECT_EQ(m.store().dir(0).samples.size(), 10u);
    EXPECT_EQ(m.store().dir(1).intervals.size(), 1u);
    EXPECT_EQ(feed(m, "stats", statsMessage(100 * kMs, 1, 1000, 10, 0, 0)),
              TelemetryModel::Took::stats);
    ASSERT_TRUE(m.lastStats().has_value());
    EXPECT_EQ(m.lastStats()->dir[1].counters.packets_in, 1000u);
    // A message that breaks the protocol is dropped whole: nothing of it is stored.
    json bad = delayMessage(50 * kMs, 100 * kMs, 20e6, 4e6, 1, 1);
    bad["b_to_a"]["samples"]["actual_ns"].erase(0);
    EXPECT_EQ(feed(m, "delay", bad), TelemetryModel::Took::refused);
    EXPECT_EQ(m.refused(), 1u);
    EXPECT_NE(m.lastRefusal().find("b_to_a.samples.actual_ns"), std::string::npos)
        << m.lastRefusal();
    EXPECT_EQ(m.store().dir(0).samples.size(), 10u);
    json no_t = statsMessage(200 * kMs, 1, 2000, 10, 0, 1);
    no_t.erase("t_ns");
    EXPECT_EQ(feed(m, "stats", no_t), TelemetryModel::Took::refused);
    EXPECT_EQ(feed(m, "something_new", json::object()), TelemetryModel::Took::refused);
    json later = statsMessage(300 * kMs, 1, 3000, 10, 0, 2);
    EXPECT_EQ(feed(m, "something_new", later), TelemetryModel::Took::ignored);
}

// After a change, "since change" holds only what ran under the new generation: the first
// interval tagged with it (which may hold packets of the link before) is left out, and so are
// the samples that arrived before its end; the window mixes both.
TEST(GuiModel, ReadoutsSinceChangeLeaveTheLinkBeforeOut) {
    TelemetryModel m;
    m.setWindow(30);
    m.setLink(link(20, 4), 2, 1);
    std::uint64_t seq = 0;
    std::int64_t t = 0;
    for (int i = 0; i < 40; ++i, t += 50 * kMs)
        feed(m, "delay", delayMessage(t, t + 50 * kMs, 20e6, 4e6, 1, seq++));
    feed(m, "stats", statsMessage(t, 1, 100'000, 500, 3, 0));
    m.setLink(link(80, 4), 2, 2);  // the set_link reply: generation 2
    DirectionReadout r = m.readouts().get(0);
    EXPECT_EQ(r.generation, 2u);
    EXPECT_EQ(r.since_change.emulated.count, 0u);  // waiting for the first interval
    // the first interval tagged 2 mixes both links: its mean is 50 ms
    feed(m, "delay", delayMessage(t, t + 50 * kMs, 50e6, 30e6, 2, seq++));
    t += 50 * kMs;
    EXPECT_EQ(m.readouts().get(0).since_change.emulated.count, 0u);
    for (int i = 0; i < 20; ++i, t += 50 * kMs)
        feed(m, "delay", delayMessage(t, t + 50 * kMs, 80e6, 4e6, 2, seq++));
    feed(m, "stats", statsMessage(t, 2, 150'000, 600, 5, 1));
    feed(m, "stats", statsMessage(t + 100 * kMs, 2, 160'000, 700, 9, 2));
    r = m.readouts().get(1);
    EXPECT_EQ(r.since_change.emulated.count, 20u * 1000u);
    EXPECT_NEAR(r.since_change.emulated.mean(), 80e6, 1);
    EXPECT_NEAR(r.since_change.emulated.jitter(), 4e6, 1);
    EXPECT_EQ(r.since_change.actual.count, 200u);
    EXPECT_NEAR(r.since_change.actual.mean(), 80e6 + 150, 1);
    EXPECT_NEAR(r.since_change.wait.mean(), 100, 1e-6);
    // the counters since the change: from the first stats message of generation 2
    EXPECT_EQ(r.in_since_change, 10'000u);
    EXPECT_NEAR(r.loss_since_change, 0.01, 1e-12);
    EXPECT_EQ(r.out_of_order_since_change, 4u);
    // the 30 s window holds both links (and the mixed interval)
    EXPECT_EQ(r.window.emulated.count, 61u * 1000u);
    EXPECT_GT(r.window.emulated.jitter(), 20e6);
}

// A scenario's step changes the link without a new generation: "since change" starts again
// after the interval that holds the step (here at 1.025 s, in the interval 1.0-1.05 s).
TEST(GuiModel, ReadoutsSinceChangeStartAgainAtAScenarioStep) {
    TelemetryModel m;
    m.setLink(link(10, 0), 2, 1);
    std::uint64_t seq = 0;
    std::int64_t t = 0;
    for (int i = 0; i < 20; ++i, t += 50 * kMs)
        feed(m, "delay", delayMessage(t, t + 50 * kMs, 10e6, 1e3, 1, seq++));
    EXPECT_NEAR(m.readouts().get(0).since_change.emulated.mean(), 10e6, 1);
    m.readouts().stepAt(t + 25 * kMs);
    EXPECT_EQ(m.readouts().get(0).since_change.emulated.count, 0u);
    feed(m, "delay", delayMessage(t, t + 50 * kMs, 55e6, 45e6, 1, seq++));  // holds the step
    t += 50 * kMs;
    for (int i = 0; i < 10; ++i, t += 50 * kMs)
        feed(m, "delay", delayMessage(t, t + 50 * kMs, 100e6, 1e3, 1, seq++));
    const DirectionReadout r = m.readouts().get(1);
    EXPECT_EQ(r.generation, 1u);
    EXPECT_EQ(r.since_change.emulated.count, 10u * 1000u);
    EXPECT_NEAR(r.since_change.emulated.mean(), 100e6, 1);
}

TEST(GuiModel, ReadoutsWithoutGenerationTagsFollowTheStats) {
    // A linkemd that does not tag its intervals: the newest stats message's generation.
    TelemetryModel m;
    m.setLink(link(20, 4), 2, 1);
    std::int64_t t = 0;
    feed(m, "stats", statsMessage(t, 1, 0, 0, 0, 0));
    for (int i = 0; i < 5; ++i, t += 50 * kMs)
        feed(m, "delay", delayMessage(t, t + 50 * kMs, 20e6, 4e6, std::nullopt, i));
    feed(m, "stats", statsMessage(t, 2, 5000, 0, 0, 1));
    for (int i = 0; i < 5; ++i, t += 50 * kMs)
        feed(m, "delay", delayMessage(t, t + 50 * kMs, 80e6, 4e6, std::nullopt, 5 + i));
    const DirectionReadout r = m.readouts().get(0);
    EXPECT_EQ(r.generation, 2u);
    EXPECT_EQ(r.since_change.emulated.count, 4u * 1000u);  // the first one left out
    EXPECT_NEAR(r.since_change.emulated.mean(), 80e6, 1);
}

// Each connection of a client without a `hello` name has a source of its own (peer-<hex>):
// their events share one row per kind, with the last one's message; a named client keeps
// its own row.
TEST(GuiModel, EventsOfUnnamedClientsShareARowPerKind) {
    EventLog log;
    for (int i = 0; i < 300; ++i) {
        char peer[32];
        std::snprintf(peer, sizeof peer, "peer-%08x", 0x1000 + i);
        proto::Event e = proto::Event::warning(
            "request_refused", std::string("request (unparsed) from ") + peer + ": not JSON");
        e.source = peer;
        log.add(e, 1000 + i);
    }
    proto::Event named = event("request_refused", "warning", "set_link from linkemctl: ...");
    named.source = "linkemctl";
    log.add(named, 2000);
    ASSERT_EQ(log.rows().size(), 2u);
    const EventRow* unnamed = log.find("request_refused", kUnnamedClients);
    ASSERT_TRUE(unnamed);
    EXPECT_EQ(unnamed->count, 300u);
    EXPECT_NE(unnamed->message.find("peer-0000112b"), std::string::npos) << unnamed->message;
    ASSERT_TRUE(log.find("request_refused", "linkemctl"));
}

TEST(GuiModel, EventsCoalescePerKindAndDirection) {
    EventLog log;
    for (int i = 0; i < 50; ++i)
        for (const char* dir : {"a_to_b", "b_to_a"}) {
            const std::uint64_t stalled = 1'000'000 + static_cast<std::uint64_t>(i % 7) * 3'000'000;
            proto::Event e = event("stall", "warning", "warning: direction ...");
            e.direction = dir;
            e.stall_ns = stalled;
            e.stalls = 3;
            e.longest_stall_ns = 9'775'000;
            log.add(e, 1000 + i);
        }
    ASSERT_EQ(log.rows().size(), 2u);
    const EventRow* a = log.find("stall", "A→B");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->count, 50u);
    EXPECT_EQ(a->last_ms, 1049);
    EXPECT_EQ(a->first_ms, 1000);
    EXPECT_EQ(a->worst, 19e6);  // 1 + 6 x 3 ms
    EXPECT_NE(a->worst_text.find("19.0 ms"), std::string::npos) << a->worst_text;
    EXPECT_FALSE(a->needs_action);  // explained, not alarming
    EXPECT_FALSE(EventLog::explanation("stall").empty());
    // Only what needs action is marked: a link down, a full buffer.
    proto::Event down = event("link", "warning", "port net_ring0: link down");
    down.port = "a";
    down.link_up = false;
    log.add(down, 2000);
    proto::Event up = event("link", "info", "port net_ring0: link up");
    up.port = "a";
    up.link_up = true;
    log.add(up, 2001);
    const EventRow* l = log.find("link", "port a");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->count, 2u);
    EXPECT_FALSE(l->needs_action);  // up again
    proto::Event full = event("buffer_full", "warning", "b");
    full.direction = "b_to_a";
    log.add(full, 2002);
    EXPECT_TRUE(log.find("buffer_full", "B→A")->needs_action);
    // the GUI's own lines: the same text is one row
    log.note("warning", "set_link not answered: timeout", 3000);
    log.note("warning", "set_link not answered: timeout", 3001);
    EXPECT_EQ(log.find("gui", "set_link not answered: timeout")->count, 2u);
    EXPECT_EQ(log.rows().size(), 5u);
}

// No 100-pixel drag moves a slider's value more than 3x, whatever its length; a long slider
// covers the whole working range, a short one a window of it around the value.
TEST(GuiModel, SliderScalesKeepTheDragBound) {
    const json schema = link_params_schema();
    for (const char* key :
         {"mean_delay_us", "jitter_us", "half_life_us", "rate_bps", "loss_probability"}) {
        const WorkingRange r = workingRange(key, schema[key]["min"], schema[key]["max"], 20000);
        for (int px : {120, 200, 400, 700, 1000, 1400, 2000}) {
            for (double around : {0.0, r.low, std::sqrt(r.low * r.high), r.high}) {
                const SliderScale s = SliderScale::fit(r, px, around);
                SCOPED_TRACE(std::string(key) + " " + std::to_string(px) + " px around " +
                             std::to_string(around));
                EXPECT_LE(s.maxRatio(100), kMaxRatioPer100Px * (1 + 1e-9));
                EXPECT_GE(s.lo, r.low * (1 - 1e-9));
                EXPECT_LE(s.hi, r.high * (1 + 1e-9));
                for (int p = 0; p <= s.steps; p += 7)
                    EXPECT_EQ(s.position(s.value(p)), p);
                EXPECT_LE(s.steps, px);  // one position a pixel, or fewer
                if (s.whole) {
                    EXPECT_DOUBLE_EQ(s.lo, r.low);
                    EXPECT_DOUBLE_EQ(s.hi, r.high);
                } else if (around > 0) {
                    EXPECT_TRUE(s.comfortable(around) || around <= r.low || around >= r.high);
                }
            }
        }
    }
    // jitter: 0 .. max(mean, 100 ms); the mean delay: 0 .. 1 s, with 0 at the left end
    EXPECT_EQ(workingRange("jitter_us", 0, 1e7, 20000).high, 1e5);
    EXPECT_EQ(workingRange("jitter_us", 0, 1e7, 600000).high, 6e5);
    const SliderScale mean =
        SliderScale::fit(workingRange("mean_delay_us", 0, 1e7, 0), 1000, 20000);
    EXPECT_TRUE(mean.whole);
    EXPECT_EQ(mean.value(0), 0.0);
    EXPECT_DOUBLE_EQ(mean.value(mean.steps), 1e6);
    // one arrow step: about 1 %
    EXPECT_LT(mean.value(501) / mean.value(500), 1.012);
}

// Every slider position lands on a round value: at most 3 significant digits in the unit
// people read, increasing with the position, and the slider maps it back to its position;
// over every slider's working range (both ends of the jitter's), every length and window.
TEST(GuiModel, SliderPositionsLandOnRoundValues) {
    const json schema = link_params_schema();
    int checked = 0;
    for (const LinkParamField& f : link_param_fields()) {
        if (f.slider.high <= 0) continue;
        for (double followed : {0.0, 20000.0, 654321.0}) {
            const WorkingRange r =
                workingRange(f.key, schema[f.key]["min"], schema[f.key]["max"], followed);
            for (int px = 20; px <= 2400; px += (px < 300 ? 1 : 37)) {
                for (double around :
                     {0.0, r.low, r.low * 1.37, std::sqrt(r.low * r.high), r.high / 2.9, r.high}) {
                    const SliderScale s = SliderScale::fit(r, px, around);
                    SCOPED_TRACE(f.key + " " + std::to_string(px) + " px around " +
                                 std::to_string(around));
                    ASSERT_LE(s.steps, std::max(px, 20));
                    double last = -1;
                    for (int p = 0; p <= s.steps; ++p) {
                        const double v = s.value(p);
                        ASSERT_LE(significantDigits(v, r.per), 3)
                            << "position " << p << ": " << v / r.per << " " << f.shown.name;
                        ASSERT_GT(v, last) << "position " << p;
                        ASSERT_EQ(s.position(v), p) << v / r.per << " " << f.shown.name;
                        ASSERT_NEAR(std::log(v > 0 ? v : 1), std::log(v > 0 ? s.exactValue(p) : 1),
                                    0.5 * std::log(kMinStepRatio * 1.02));
                        last = v;
                        ++checked;
                    }
                }
            }
        }
    }
    EXPECT_GT(checked, 1'000'000);
    // What a drag gives: 94.7 ms, not 94.658 ms.
    const SliderScale mean = SliderScale::fit(workingRange("mean_delay_us", 0, 1e7, 0), 700, 0);
    const int p = mean.position(94658);
    EXPECT_EQ(mean.value(p), 95000);  // 95 ms: 2 digits say it at this slider's resolution
    EXPECT_EQ(mean.position(94658), mean.position(95000));
    EXPECT_EQ(roundToDigits(94.658, 3), 94.7);
    EXPECT_EQ(significantDigits(0.02), 1);
    EXPECT_EQ(significantDigits(1500, 1000), 2);
}

// The field table says how each parameter is shown: labels, units people read (loss in %),
// working ranges and the rules it depends on.
TEST(GuiModel, FieldTableShowsParametersToPeople) {
    const LinkParamField& loss = *link_param_field("loss_probability");
    EXPECT_EQ(loss.label_text(), "Loss");
    EXPECT_EQ(loss.shown.name, "%");
    EXPECT_EQ(loss.shown_text(0.05), "5 %");
    EXPECT_EQ(loss.shown_text(0.00123), "0.123 %");
    EXPECT_EQ(link_param_field("mean_delay_us")->shown_text(94700), "94.7 ms");
    EXPECT_EQ(link_param_field("mean_delay_us")->shown_text(1e7), "10000 ms");
    EXPECT_EQ(link_param_field("rate_bps")->shown_text(1.25e7), "12.5 Mbit/s");
    EXPECT_EQ(link_param_field("queue_limit_bytes")->shown_text(1048576, 8), "1048576 bytes");
    EXPECT_EQ(link_param_field("limiter")->label, "Limiter (&bandwidth)");
    EXPECT_EQ(link_param_field("rate_window_us")->label_text(), "rate_window_us");  // no control
    LinkParams p;
    const LinkParamField& half = *link_param_field("half_life_us");
    const LinkParamField& rate = *link_param_field("rate_bps");
    const LinkParamField& jitter = *link_param_field("jitter_us");
    for (Strategy st :
         {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered, Strategy::smooth}) {
        p.strategy = st;
        EXPECT_EQ(link_param_applies(half, p), st == Strategy::correlated || st == Strategy::smooth)
            << to_string(st);
    }
    for (Limiter l : {Limiter::none, Limiter::spacer, Limiter::policer, Limiter::trace}) {
        p.limiter = l;
        EXPECT_EQ(link_param_applies(rate, p), l == Limiter::spacer || l == Limiter::policer);
    }
    p.distribution = Distribution::constant;
    EXPECT_FALSE(link_param_applies(jitter, p));
    p.distribution = Distribution::gamma;
    EXPECT_TRUE(link_param_applies(jitter, p));
    EXPECT_TRUE(link_param_applies(*link_param_field("mean_delay_us"), p));
    p.loss_model = LossModel::gilbert_elliott;
    EXPECT_TRUE(link_param_applies(*link_param_field("ge_r"), p));
    EXPECT_FALSE(link_param_applies(loss, p));
    // The mnemonics of one direction's controls differ (Alt+letter reaches one field).
    std::set<char> mnemonics;
    for (const LinkParamField& f : link_param_fields()) {
        const std::size_t amp = f.label.find('&');
        if (amp == std::string::npos) continue;
        ASSERT_LT(amp + 1, f.label.size()) << f.key;
        EXPECT_TRUE(mnemonics.insert(static_cast<char>(std::tolower(f.label[amp + 1]))).second)
            << f.key << ": mnemonic " << f.label[amp + 1] << " used twice";
    }
    EXPECT_GE(mnemonics.size(), 10u);
    // Each rule names a field and values it has; each followed field exists.
    for (const LinkParamField& f : link_param_fields()) {
        if (!f.applies.key.empty()) {
            const LinkParamField* on = link_param_field(f.applies.key);
            ASSERT_TRUE(on) << f.key;
            for (const std::string& v : f.applies.values)
                EXPECT_NE(std::find(on->values.begin(), on->values.end(), v), on->values.end())
                    << f.key << ": " << f.applies.key << " has no value " << v;
        }
        if (!f.slider.follows.empty()) {
            EXPECT_TRUE(link_param_field(f.slider.follows)) << f.key;
        }
        if (f.slider.high > 0) {
            EXPECT_GT(f.slider.low, 0) << f.key;
            EXPECT_GE(f.slider.low, f.min) << f.key;
            EXPECT_LE(f.slider.high, f.max) << f.key;
        }
    }
}

TEST(GuiModel, HistoryUndoesWholeChanges) {
    LinkHistory h;
    const LinkConfig a = link(20, 4), b = link(50, 4), c = link(50, 9);
    h.beforeEdit(a, "mean_delay_us", 0);
    h.beforeEdit(b, "mean_delay_us", 100);  // the same drag: one change
    h.beforeEdit(b, "jitter_us", 3000);
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(*h.undo(), b);
    EXPECT_EQ(*h.undo(), a);
    EXPECT_FALSE(h.undo().has_value());
    h.beforeEdit(c, "preset", 10'000);
    h.beforeEdit(a, "mean_delay_us", 20'000);  // > kJoinMs later: its own change
    h.beforeEdit(b, "mean_delay_us", 21'600);
    EXPECT_EQ(h.size(), 3u);
}

TEST(GuiModel, PresetMatchingIgnoresSeeds) {
    std::vector<Preset> presets(2);
    presets[0].link = link(10, 1);
    presets[1].link = link(20, 4);
    LinkConfig in_force = link(20, 4);
    in_force.a_to_b.seed = 77;
    EXPECT_EQ(matchingPreset(presets, in_force, 2), 1);
    in_force.b_to_a.jitter = 5 * kMs;
    EXPECT_EQ(matchingPreset(presets, in_force, 2), -1);  // "Custom"
    EXPECT_EQ(matchingPreset(presets, in_force, 1), 1);   // single-port: A→B only
    const json u =
        proto::to_json(compareStrategiesUpdate(in_force.a_to_b, "correlated", "uncorrelated"));
    EXPECT_EQ(u["a_to_b"]["strategy"], "correlated");
    EXPECT_EQ(u["b_to_a"]["strategy"], "uncorrelated");
    EXPECT_EQ(u["b_to_a"]["jitter_us"], u["a_to_b"]["jitter_us"]);
    EXPECT_FALSE(u["a_to_b"].contains("seed"));
}

// The scenario strip's model: one lane per parameter the scenario touches (both directions
// in one lane when they are the same), steps as two points at one time, a ramp as a slope;
// while playing, the delay targets at each step's data-plane time (origin + at) and along a
// ramp every ramp_every_ns, each once.
TEST(GuiModel, ScenarioTimelineLanesAndTargetsAtStepTimes) {
    const json scenario = json::parse(R"({"name": "t", "duration_s": 30, "steps": [
        {"at_s": 0, "set": {"mean_delay_us": 10000, "jitter_us": 0}},
        {"at_s": 10, "set": {"mean_delay_us": 100000}},
        {"at_s": 20, "until_s": 25, "ramp": {"b_to_a": {"mean_delay_us": 20000}}}]})");
    LinkConfig base;
    base.a_to_b.mean_delay = 5 * kMs;
    base.b_to_a = base.a_to_b;
    ScenarioTimeline tl;
    json r = {{"loaded", true},     {"name", "t"}, {"state", "stopped"},  {"position_s", 0.0},
              {"duration_s", 30.0}, {"step", -1},  {"scenario", scenario}};
    std::string err;
    ASSERT_TRUE(tl.setStatus(proto::decode<proto::ScenarioStatus>(r), base, 2, &err)) << err;
    ASSERT_TRUE(tl.loaded());
    // mean_delay_us differs per direction (the ramp is B→A's): two lanes; jitter one lane.
    std::vector<std::string> lanes;
    for (const auto& l : tl.lanes())
        lanes.push_back(l.key + "/" + std::to_string(l.dir));
    EXPECT_EQ(lanes,
              (std::vector<std::string>{"mean_delay_us/0", "mean_delay_us/1", "jitter_us/-1"}));
    const auto& a = tl.lanes()[0].points;
    // A→B: 10 ms until 10 s, then 100 ms (a vertical step: two points at 10 s)
    EXPECT_EQ(a.front(), (std::pair<double, double>{0.0, 10000.0}));
    EXPECT_EQ(a.back(), (std::pair<double, double>{30.0, 100000.0}));
    EXPECT_DOUBLE_EQ(tl.lanes()[0].lo, 10000.0);
    EXPECT_DOUBLE_EQ(tl.lanes()[0].hi, 100000.0);
    // B→A: the ramp from 100 ms at 20 s to 20 ms at 25 s
    const auto& b = tl.lanes()[1].points;
    auto at = [&](double t) {
        for (std::size_t i = 0; i + 1 < b.size(); ++i)
            if (b[i].first == t) return b[i + 1].first == t ? b[i + 1].second : b[i].second;
        return -1.0;
    };
    EXPECT_DOUBLE_EQ(at(20.0), 100000.0);
    EXPECT_DOUBLE_EQ(b.back().second, 20000.0);

    // Playing from origin 1000 s: the targets come at origin + 10 s exactly, and along the
    // ramp every 100 ms; a second call for the same time gives nothing again.
    const std::int64_t origin = 1000 * kNsPerSec;
    r["state"] = "playing";
    r["origin_ns"] = origin;
    ASSERT_TRUE(tl.setStatus(proto::decode<proto::ScenarioStatus>(r), base, 2));
    std::vector<std::pair<std::int64_t, double>> got;  // (time, A→B mean us)
    std::vector<double> b_means;
    auto take = [&](std::int64_t t, const LinkConfig& l) {
        got.emplace_back(t, static_cast<double>(l.a_to_b.mean_delay) / 1e3);
        b_means.push_back(static_cast<double>(l.b_to_a.mean_delay) / 1e3);
    };
    tl.changesUntil(origin + 1 * kNsPerSec, 100 * kMs, take);  // the first: where it is
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], (std::pair<std::int64_t, double>{origin + kNsPerSec, 10000.0}));
    tl.changesUntil(origin + 15 * kNsPerSec, 100 * kMs, take);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1], (std::pair<std::int64_t, double>{origin + 10 * kNsPerSec, 100000.0}));
    tl.changesUntil(origin + 15 * kNsPerSec, 100 * kMs, take);
    EXPECT_EQ(got.size(), 2u);
    tl.changesUntil(origin + 29 * kNsPerSec, 100 * kMs, take);
    // the ramp: 20 s, then every 100 ms up to its end at 25 s (50 more)
    EXPECT_EQ(got.size(), 2u + 1u + 50u);
    EXPECT_EQ(got[2].first, origin + 20 * kNsPerSec);
    EXPECT_EQ(got.back().first, origin + 25 * kNsPerSec);
    EXPECT_DOUBLE_EQ(b_means.back(), 20000.0);
    for (std::size_t i = 3; i < b_means.size(); ++i)
        EXPECT_LT(b_means[i], b_means[i - 1]);

    // The chart store takes them at their times: the band's step is at origin + 10 s.
    ChartStore store;
    for (const auto& [t, mean] : got) {
        LinkConfig l = base;
        l.a_to_b.mean_delay = static_cast<DurationNs>(mean * 1e3);
        l.b_to_a = l.a_to_b;
        store.setLinkAt(l, 2, t);
    }
    ASSERT_EQ(store.dir(0).targets.size(), 2u);  // 10 ms, then 100 ms (repeats merged)
    EXPECT_EQ(store.dir(0).targets[1].since_ns, origin + 10 * kNsPerSec);
    EXPECT_DOUBLE_EQ(store.dir(0).targets[1].mean_us, 100000.0);
    // an earlier time replaces what came after it (a seek back)
    LinkConfig l = base;
    l.a_to_b.mean_delay = 50 * kMs;
    l.b_to_a = l.a_to_b;
    store.setLinkAt(l, 2, origin + 5 * kNsPerSec);
    ASSERT_EQ(store.dir(0).targets.size(), 2u);
    EXPECT_EQ(store.dir(0).targets[1].since_ns, origin + 5 * kNsPerSec);

    // not loaded: cleared
    ASSERT_TRUE(tl.setStatus(proto::ScenarioStatus{}, base, 2));
    EXPECT_FALSE(tl.loaded());
    EXPECT_TRUE(tl.lanes().empty());
}

// ---- the Classes table's rows (class_rows.hpp) ----

TEST(ClassRows, MatchTextIsTheModelsText) {
    const auto classes = classes_from_json(json::parse(R"([
        {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"}},
        {"name": "web", "match": [{"protocol": "tcp", "b_port": 443}, {"a_net": "10.0.0.0/8"}]},
        {"name": "all", "match": {}}])"));
    EXPECT_EQ(matchText(classes[0].match), "protocol=udp,b_port=5060-5061");
    EXPECT_EQ(matchText(classes[1].match), "protocol=tcp,b_port=443; a_net=10.0.0.0/8");
    EXPECT_EQ(matchText(classes[2].match), "any");
}

TEST(ClassRows, ErrorsPickTheRowAndColumn) {
    EXPECT_EQ(classCellError("classes[1].match.b_port", "m"),
              (ClassCellError{1, "match", "classes[1].match.b_port", "m"}));
    EXPECT_EQ(classCellError("classes[0].name", "m")->column, "name");
    EXPECT_EQ(classCellError("classes[2].action", "m")->column, "action");
    EXPECT_EQ(classCellError("classes[2].limiter", "m")->column, "limiter");
    EXPECT_EQ(classCellError("classes[3].b_to_a.loss_probability", "m")->column, "parameters");
    EXPECT_EQ(classCellError("classes[3]", "m")->column, "name");
    EXPECT_FALSE(classCellError("classes", "m"));
    EXPECT_FALSE(classCellError("a_to_b.jitter_us", "m"));
}

TEST(ClassRows, RowsCheckedAsLinkemdChecksThem) {
    const TrafficClass voip = classes_from_json(json::parse(R"([{"name": "voip", "match": {},
        "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}}])"))[0];
    std::vector<ClassRow> rows{classRow(voip),
                               {"ssh", "protocol=tcp,b_port=22", "pass", false, {}},
                               {"bulk", "protocol=tcp", "emulate", true, {}}};
    rows[0].match = "protocol=udp,b_port=5060-5061";
    CheckedClasses ok = checkClassRows(rows);
    ASSERT_FALSE(ok.error) << ok.error->field << ": " << ok.error->message;
    ASSERT_EQ(ok.classes.size(), 3u);
    EXPECT_EQ(ok.classes[0].link, voip.link);  // its parameters kept
    EXPECT_EQ(ok.classes[1].action, ClassAction::pass);
    EXPECT_TRUE(ok.classes[2].shares_link_limiter);
    EXPECT_EQ(parametersText(ok.classes[0]),
              "mean_delay_us=80000, b_to_a.loss_model=bernoulli, b_to_a.loss_probability=0.02");
    EXPECT_EQ(parametersText(ok.classes[2]), "limiter=link");
    EXPECT_EQ(parametersText(ok.classes[1]), "");

    // a pass class keeps no link parameters (they are dropped, not refused)
    rows[0].action = "pass";
    EXPECT_FALSE(checkClassRows(rows).error);
    rows[0].action = "emulate";

    auto error = [&rows] { return checkClassRows(rows).error.value_or(ClassCellError{}); };
    rows[1].match = "protocol=tcp,b_port=70000";
    EXPECT_EQ(error().field, "classes[1].match.b_port");
    EXPECT_EQ(error().column, "match");
    rows[1].match = "protocol=tcp,b_port=22";
    rows[2].name = "ssh";
    EXPECT_EQ(error().index, 2u);
    EXPECT_EQ(error().column, "name");
    EXPECT_NE(error().message.find("ssh"), std::string::npos);
    rows[2].name = "Bulk";
    EXPECT_EQ(error().column, "name");
    rows[2].name = "bulk";
    rows[2].action = "slow";
    EXPECT_EQ(error().column, "action");
    rows[2].action = "emulate";
    rows[2].match = "protocol=tcp;";
    EXPECT_EQ(error().field, "classes[2].match[1]");
}

// ---- traffic classes in the charts' store ----

TEST(ChartStoreClasses, EachClassKeepsItsOwnSamplesRatesAndTargets) {
    ChartStore store;
    LinkConfig link;
    link.a_to_b.mean_delay = link.b_to_a.mean_delay = 10'000'000;
    link.classes = classes_from_json(json::parse(R"([
        {"name": "voip", "match": {"protocol": "udp"}, "mean_delay_us": 80000},
        {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}])"));
    store.setLink(link, 2);
    ASSERT_EQ(store.classCount(), 2u);
    EXPECT_EQ(store.className(0), "default");
    EXPECT_EQ(store.className(2), "ssh");

    proto::DelayMessage m;
    m.directions = 2;
    for (int i = 0; i < 30; ++i) {
        const std::uint8_t id = static_cast<std::uint8_t>(i % 3);
        const std::int64_t x = id == 0 ? 10 * kMs : id == 1 ? 80 * kMs : 0;
        DelaySample s{1000 * kMs + i * kMs, x, x, x};
        s.class_id = id;
        m.dir[0].samples.push_back(s);
    }
    store.addDelay(m, 1030 * kMs);
    EXPECT_EQ(store.dir(0).samples.size(), 30u);  // the totals keep every sample
    EXPECT_EQ(store.classDir(0, 1).samples.size(), 10u);
    store.setShownClass(1);
    EXPECT_EQ(&store.shown(0), &store.classDir(0, 1));
    EXPECT_DOUBLE_EQ(store.shown(0).samples.actual(0, 2000 * kMs).mean(), 80.0 * kMs);
    EXPECT_DOUBLE_EQ(store.shown(0).targets.back().mean_us, 80000);
    store.setShownClass(2);
    EXPECT_DOUBLE_EQ(store.shown(0).targets.back().mean_us, 0);  // pass: no delay
    EXPECT_EQ(store.histogram(0, 0, 2000 * kMs, 1000).samples, 10u);
    store.setShownClass(-1);
    EXPECT_EQ(&store.shown(0), &store.dir(0));

    // stats' classes: each class's rates
    for (int k = 1; k <= 2; ++k) {
        LinkStats st;
        st.t_ns = 1000 * kMs + k * 1000 * kMs;
        st.directions = 2;
        st.classes.resize(3);
        for (std::size_t i = 0; i < 3; ++i)
            st.classes[i].dir[0].bytes_out = static_cast<std::uint64_t>(k) * (i + 1) * 1000;
        store.addStats(st);
    }
    ASSERT_EQ(store.classDir(0, 2).rates.size(), 1u);
    EXPECT_DOUBLE_EQ(store.classDir(0, 2).rates.back().out_bps, 3000 * 8);
    EXPECT_DOUBLE_EQ(store.classDir(0, 1).rates.back().out_bps, 2000 * 8);

    // the class shown stays, by name, when the list changes; its data starts over
    store.setShownClass(2);
    std::swap(link.classes[0], link.classes[1]);
    store.setLink(link, 2);
    EXPECT_EQ(store.shownClass(), 1);
    EXPECT_EQ(store.className(1), "ssh");
    EXPECT_EQ(store.shown(0).samples.size(), 0u);
    // without classes nothing is kept twice
    link.classes.clear();
    store.setLink(link, 2);
    EXPECT_EQ(store.classCount(), 0u);
    EXPECT_EQ(store.shownClass(), -1);
}

// The queue chart's data: the delay topic's queue object per interval, and the ECN marks'
// rate from stats' ecn_marked.
TEST(ChartStoreQueue, DelayQueueObjectAndEcnRate) {
    ChartStore store;
    store.setLink(LinkConfig{}, 2);
    const json j = json::parse(R"({"start_ns": 1000000000, "end_ns": 1100000000,
        "samples": {"arrival_ns": [], "delay_ns": [], "scheduled_ns": [], "actual_ns": []},
        "delay": {"count": 0}, "lateness": {"count": 0}, "samples_dropped": 0,
        "queue": {"backlog_bytes": 1048576, "backlog_packets": 690, "sojourn_count": 80,
                  "sojourn_mean_ns": 838860800.0, "sojourn_max_ns": 839000000}})");
    proto::DelayMessage m;
    m.directions = 2;
    m.dir[0] = direction_delay_from_json(j);
    store.addDelay(m, 1100 * kMs);
    ASSERT_EQ(store.dir(0).intervals.size(), 1u);
    const QueueReport& q = store.dir(0).intervals.back().queue;
    EXPECT_EQ(q.backlog_bytes, 1048576u);
    EXPECT_EQ(q.backlog_packets, 690u);
    EXPECT_EQ(q.sojourn_count, 80u);
    EXPECT_NEAR(q.sojourn_mean_ns(), 838860800.0, 1e-3);
    EXPECT_EQ(q.sojourn_max_ns, 839000000);

    for (int k = 0; k <= 1; ++k) {
        LinkStats st;
        st.t_ns = 1000 * kMs + k * 500 * kMs;
        st.directions = 2;
        st.dir[1].counters.ecn_marked = static_cast<std::uint64_t>(k) * 40;
        st.dir[1].counters.drops[DropCause::aqm] = static_cast<std::uint64_t>(k) * 10;
        store.addStats(st);
    }
    ASSERT_EQ(store.dir(1).rates.size(), 1u);
    EXPECT_DOUBLE_EQ(store.dir(1).rates.back().ecn_marked_per_s, 80);
    EXPECT_DOUBLE_EQ(store.dir(1).rates.back().drops_per_s[cause_index(DropCause::aqm)], 20);
}

// The bufferbloat view's link: the same loaded link both ways, drop-tail against FQ-CoDel,
// read by linkemd as a whole link; and the numbers its lanes promise.
TEST(GuiModel, BufferbloatLinkAndExpectations) {
    LinkParams in_force;
    in_force.mean_delay = 50 * kMs;
    in_force.jitter = 4 * kMs;
    in_force.loss_model = LossModel::bernoulli;
    in_force.loss_probability = 0.005;
    in_force.seed = 9;
    const json u = proto::to_json(bufferbloatUpdate(in_force));
    LinkConfig got;
    got.a_to_b = link_params_from_json(u["a_to_b"], LinkParams{});
    got.b_to_a = link_params_from_json(u["b_to_a"], LinkParams{});
    for (const LinkParams* p : {&got.a_to_b, &got.b_to_a}) {
        EXPECT_EQ(p->limiter, Limiter::spacer);
        EXPECT_DOUBLE_EQ(p->rate_bps, 10e6);
        EXPECT_EQ(p->queue_limit_bytes, 1048576u);
        EXPECT_EQ(p->mean_delay, 20 * kMs);
        EXPECT_EQ(p->jitter, 0);
        EXPECT_EQ(p->loss_model, LossModel::none);
        EXPECT_EQ(p->ecn, Ecn::off);
    }
    EXPECT_EQ(got.a_to_b.queue, QueueKind::droptail);
    EXPECT_EQ(got.b_to_a.queue, QueueKind::fq_codel);
    EXPECT_FALSE(u["a_to_b"].contains("seed"));
    // 1 MiB * 8 / 10 Mbit/s = 0.8389 s
    EXPECT_EQ(queueExpectation(got.a_to_b),
              "drop-tail: the sojourn grows to limit / rate = 1 MiB × 8 / 10 Mbit/s = 0.84 s");
    EXPECT_EQ(queueExpectation(got.b_to_a),
              "FQ-CoDel: near its 5 ms target for flows that back off (RFC 8290); a constant-rate "
              "overload cycles");
    LinkParams none;
    EXPECT_EQ(queueExpectation(none), "");  // no limiter, no queue
}
