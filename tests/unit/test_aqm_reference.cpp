// The reference queue disciplines (tests/support/aqm_reference.hpp) on small scenarios whose
// outcomes are worked out by hand from RFC 8289 (CoDel), RFC 8290 (FQ-CoDel) and RFC 8033
// (PIE): the oracle is checked on its own before the bottleneck is compared with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <list>
#include <stdexcept>
#include <utility>
#include <vector>

#include "aqm_reference.hpp"
#include "linkem/rng.hpp"

namespace linkem::test {
namespace {

using aqm_ref::Packet;

// 12 Mbit/s: a 1500-byte packet takes exactly 1 ms.
constexpr double kRate = 12e6;
constexpr TimeNs ms(double v) {
    return static_cast<TimeNs>(v * 1e6);
}

AqmOutcome sent(TimeNs at, bool marked = false) {
    return {AqmFate::sent, at, marked};
}
AqmOutcome aqm_drop(TimeNs at) {
    return {AqmFate::dropped_aqm, at, false};
}
AqmOutcome full_drop(TimeNs at) {
    return {AqmFate::dropped_full, at, false};
}

void expect_outcomes(const std::vector<AqmOutcome>& got, const std::vector<AqmOutcome>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(got[i], want[i])
            << "packet " << i << ": " << to_string(got[i]) << ", expected " << to_string(want[i]);
}

AqmConfig config(AqmKind kind) {
    AqmConfig c;
    c.kind = kind;
    c.limit_packets = 10000;
    return c;
}

// Where the struct-level tests record drops.
struct Record {
    std::vector<AqmOutcome> result = std::vector<AqmOutcome>(1000);
    std::vector<bool> done = std::vector<bool>(1000, false);
    aqm_ref::Outcomes out{result, done};
};

// ---- the link and droptail ---------------------------------------------------------------

TEST(AqmReference, DropTailDequeueAtATimeComesBeforeLaterArrivalsThen) {
    // Four packets at 0 with room for two: #0 finds the queue empty and the link free, so
    // its dequeue is at 0, before #1 arrives at 0 (an arrival at t after every dequeue at
    // tau <= t). #1 and #2 fill the queue; #3 is dropped.
    AqmConfig c = config(AqmKind::droptail);
    c.limit_packets = 2;
    std::vector<AqmArrival> a(4, AqmArrival{0, 1500, 0, false});
    expect_outcomes(simulate(c, kRate, a, 1), {sent(0), sent(ms(1)), sent(ms(2)), full_drop(0)});
}

TEST(AqmReference, DropTailDequeueBeforeLaterArrivalNotAtTheSameTime) {
    // Room for one packet. #0 leaves at 0 (before #1 arrives at 0.5 ms), so #1 fits and waits
    // for the link until 1 ms; the dequeue at 1 ms comes before #2's arrival at 1 ms, so #2
    // fits too; #3 at 1.5 ms finds #2 waiting and is dropped.
    AqmConfig c = config(AqmKind::droptail);
    c.limit_packets = 1;
    std::vector<AqmArrival> a{{0, 1500, 0, false},
                              {ms(0.5), 1500, 0, false},
                              {ms(1), 1500, 0, false},
                              {ms(1.5), 1500, 0, false}};
    expect_outcomes(simulate(c, kRate, a, 1),
                    {sent(0), sent(ms(1)), sent(ms(2)), full_drop(ms(1.5))});
}

TEST(AqmReference, DropTailByteLimitCountsWaitingPacketsOnly) {
    AqmConfig c = config(AqmKind::droptail);
    c.limit_packets = 0;
    c.limit_bytes = 3000;
    // At 0: #0 leaves the queue for the link (its dequeue at 0 comes before #1's arrival);
    // #1 and #2 (1 byte) wait: 1501 bytes. At 0.5 ms #3 (1500) would make 3001: dropped;
    // #4 (1) fits. The link sends #1 at 1 ms, #2 at 2 ms and #4 after #2's 1 byte
    // (0.667 us, rounded up).
    std::vector<AqmArrival> a{{0, 1500, 0, false},
                              {0, 1500, 0, false},
                              {0, 1, 0, false},
                              {ms(0.5), 1500, 0, false},
                              {ms(0.5), 1, 0, false}};
    expect_outcomes(simulate(c, kRate, a, 1),
                    {sent(0), sent(ms(1)), sent(ms(2)), full_drop(ms(0.5)), sent(2000667)});
}

TEST(AqmReference, LinkFreeTimeIsRoundedUpToTheNextNanosecond) {
    // 100 bytes at 3 Gbit/s: 266.67 ns. F = 266.67 -> 267; 267 + 266.67 = 533.67 -> 534.
    std::vector<AqmArrival> a(3, AqmArrival{0, 100, 0, false});
    expect_outcomes(simulate(config(AqmKind::droptail), 3e9, a, 1),
                    {sent(0), sent(267), sent(534)});
    // An arrival after the link went idle starts at its own time.
    std::vector<AqmArrival> b{{0, 100, 0, false}, {1000, 100, 0, false}};
    expect_outcomes(simulate(config(AqmKind::droptail), 3e9, b, 1), {sent(0), sent(1000)});
}

TEST(AqmReference, RejectsBadInput) {
    std::vector<AqmArrival> a{{ms(1), 1500, 0, false}, {0, 1500, 0, false}};
    EXPECT_THROW(simulate(config(AqmKind::droptail), kRate, a, 1), std::invalid_argument);
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 4;
    std::vector<AqmArrival> b{{0, 1500, 4, false}};
    EXPECT_THROW(simulate(c, kRate, b, 1), std::invalid_argument);
    EXPECT_THROW(simulate(c, 0, b, 1), std::invalid_argument);
}

// ---- CoDel -------------------------------------------------------------------------------

// 1500-byte packets every 0.5 ms at 12 Mbit/s (twice the rate), for `duration`.
std::vector<AqmArrival> double_rate(TimeNs duration, bool ect = false) {
    std::vector<AqmArrival> a;
    for (TimeNs t = 0; t < duration; t += ms(0.5))
        a.push_back({t, 1500, 0, ect});
    return a;
}

TEST(AqmReference, CoDelFirstDropsUnderConstantOverload) {
    // Packet k leaves at k ms with sojourn k/2 ms until the first drop. At 10 ms the sojourn
    // reaches TARGET (5 ms): first_above_time = 110 ms. At 110 ms #110 is dropped, #111 sent
    // in its place, count = 1, drop_next = 210 ms. At 210 ms (#211 at the head) it drops
    // #211, count = 2, drop_next = 210 ms + 100 ms / sqrt(2) = 280.710678 ms; the next dequeue
    // after that is at 281 ms (#283): count = 3, drop_next += 100 ms / sqrt(3) = 338.445704
    // ms -> the drop at 339 ms (#342).
    const auto a = double_rate(ms(400));
    const auto r = simulate(config(AqmKind::codel), kRate, a, 1);
    for (std::size_t k = 0; k < 110; ++k)
        EXPECT_EQ(r[k], sent(ms(k))) << k;
    EXPECT_EQ(r[110], aqm_drop(ms(110)));
    for (std::size_t k = 111; k < 211; ++k)
        EXPECT_EQ(r[k], sent(ms(k - 1))) << k;
    EXPECT_EQ(r[211], aqm_drop(ms(210)));
    for (std::size_t k = 212; k < 283; ++k)
        EXPECT_EQ(r[k], sent(ms(k - 2))) << k;
    EXPECT_EQ(r[283], aqm_drop(ms(281)));
    for (std::size_t k = 284; k < 342; ++k)
        EXPECT_EQ(r[k], sent(ms(k - 3))) << k;
    EXPECT_EQ(r[342], aqm_drop(ms(339)));
    EXPECT_EQ(r[343], sent(ms(339)));
}

TEST(AqmReference, CoDelMarksEcnCapablePacketsInsteadOfDropping) {
    // The same overload, all ECT, ecn on: the packets CoDel would drop are marked and sent at
    // once (nothing else is dequeued in their place), so packet k leaves at k ms; the marks
    // are at 110 ms, 210 ms, 281 ms (drop_next 280.710678 ms) and 339 ms (338.445704 ms).
    AqmConfig c = config(AqmKind::codel);
    c.ecn = true;
    const auto a = double_rate(ms(400), true);
    const auto r = simulate(c, kRate, a, 1);
    for (std::size_t k = 0; k < 350; ++k) {
        const bool marked = k == 110 || k == 210 || k == 281 || k == 339;
        EXPECT_EQ(r[k], sent(ms(k), marked)) << k;
    }
    // ecn off, or not ECN-capable: dropped as before.
    const auto not_ect = simulate(c, kRate, double_rate(ms(400)), 1);
    EXPECT_EQ(not_ect[110], aqm_drop(ms(110)));
    c.ecn = false;
    const auto off = simulate(c, kRate, a, 1);
    EXPECT_EQ(off[110], aqm_drop(ms(110)));
}

// A queue of n 1500-byte packets enqueued at `t`, indices from `first`.
void fill(aqm_ref::Queue& q, int n, TimeNs t, std::size_t first) {
    for (int i = 0; i < n; ++i)
        q.enqueue(Packet{first + static_cast<std::size_t>(i), t, 1500, false, false});
}

TEST(AqmReference, CoDelReentryWithinSixteenIntervalsResumesCountDelta) {
    Record rec;
    aqm_ref::CoDel codel;  // TARGET 5 ms, INTERVAL 100 ms
    aqm_ref::Queue q;
    fill(q, 100, 0, 0);
    ASSERT_TRUE(codel.dequeue(q, ms(10), rec.out));  // sojourn 10 ms: first_above_time = 110
    ASSERT_EQ(*codel.first_above_time_, ms(110));
    ASSERT_TRUE(codel.dequeue(q, ms(110), rec.out));  // first drop, count 1
    EXPECT_TRUE(codel.dropping_);
    EXPECT_EQ(codel.count_, 1u);
    EXPECT_EQ(codel.lastcount_, 1u);
    EXPECT_EQ(codel.drop_next_, ms(210));
    ASSERT_TRUE(codel.dequeue(q, ms(210), rec.out));  // count 2
    EXPECT_EQ(codel.drop_next_, ms(210) + 70710678);
    ASSERT_TRUE(codel.dequeue(q, ms(210) + 70710678, rec.out));  // count 3
    EXPECT_EQ(codel.count_, 3u);
    EXPECT_EQ(codel.drop_next_, ms(210) + 70710678 + 57735026);
    EXPECT_EQ(q.length(), 100u - 7u);  // 4 sent, 3 dropped
    // The queue empties: CoDel leaves the dropping state.
    q = aqm_ref::Queue{};
    EXPECT_FALSE(codel.dequeue(q, ms(300), rec.out));
    EXPECT_FALSE(codel.dropping_);
    EXPECT_FALSE(codel.first_above_time_);
    // A new standing queue: above TARGET again from 310 ms, ok to drop at 410 ms. delta =
    // count - lastcount = 2 > 1 and 410 ms - drop_next (338.445704 ms) < 16 intervals: the
    // drop rate resumes at count = 2, drop_next = 410 ms + 100 ms / sqrt(2).
    fill(q, 100, ms(300), 100);
    ASSERT_TRUE(codel.dequeue(q, ms(310), rec.out));
    EXPECT_FALSE(codel.dropping_);
    ASSERT_TRUE(codel.dequeue(q, ms(410), rec.out));
    EXPECT_TRUE(codel.dropping_);
    EXPECT_EQ(codel.count_, 2u);
    EXPECT_EQ(codel.lastcount_, 2u);
    EXPECT_EQ(codel.drop_next_, ms(410) + 70710678);
    // The next drop at drop_next: count 3.
    ASSERT_TRUE(codel.dequeue(q, ms(410) + 70710678, rec.out));
    EXPECT_EQ(codel.count_, 3u);
    EXPECT_EQ(codel.drop_next_, ms(410) + 70710678 + 57735026);
    int dropped = 0;
    for (bool d : rec.done)
        dropped += d;
    EXPECT_EQ(dropped, 5);
    EXPECT_EQ(rec.result[1], aqm_drop(ms(110)));
    EXPECT_EQ(rec.result[101], aqm_drop(ms(410)));
    EXPECT_EQ(rec.result[103], aqm_drop(ms(410) + 70710678));
}

TEST(AqmReference, CoDelReentryAfterSixteenIntervalsRestartsAtCountOne) {
    Record rec;
    aqm_ref::CoDel codel;
    aqm_ref::Queue q;
    fill(q, 100, 0, 0);
    codel.dequeue(q, ms(10), rec.out);
    codel.dequeue(q, ms(110), rec.out);
    codel.dequeue(q, ms(210), rec.out);
    codel.dequeue(q, ms(210) + 70710678, rec.out);
    ASSERT_EQ(codel.count_, 3u);
    q = aqm_ref::Queue{};
    codel.dequeue(q, ms(300), rec.out);
    // 2110 ms - 338.445704 ms >= 1600 ms: count = 1.
    fill(q, 100, ms(2000), 100);
    codel.dequeue(q, ms(2010), rec.out);
    codel.dequeue(q, ms(2110), rec.out);
    EXPECT_TRUE(codel.dropping_);
    EXPECT_EQ(codel.count_, 1u);
    EXPECT_EQ(codel.drop_next_, ms(2210));
}

TEST(AqmReference, CoDelReentryWithDeltaOneRestartsAtCountOne) {
    Record rec;
    aqm_ref::CoDel codel;
    aqm_ref::Queue q;
    fill(q, 100, 0, 0);
    codel.dequeue(q, ms(10), rec.out);
    codel.dequeue(q, ms(110), rec.out);
    codel.dequeue(q, ms(210), rec.out);
    ASSERT_EQ(codel.count_, 2u);  // delta will be 2 - 1 = 1
    q = aqm_ref::Queue{};
    codel.dequeue(q, ms(250), rec.out);
    fill(q, 100, ms(250), 100);
    codel.dequeue(q, ms(260), rec.out);
    codel.dequeue(q, ms(360), rec.out);
    EXPECT_EQ(codel.count_, 1u);
    EXPECT_EQ(codel.drop_next_, ms(460));
}

TEST(AqmReference, CoDelDoesNotDropTheLastMaxPacketOfBacklog) {
    // However long it waited, a packet that leaves at most MAXPACKET (1518) bytes behind
    // resets first_above_time.
    Record rec;
    aqm_ref::CoDel codel;
    aqm_ref::Queue q;
    fill(q, 2, 0, 0);                   // #0 #1
    codel.dequeue(q, ms(10), rec.out);  // #0 leaves 1500 bytes: below
    EXPECT_FALSE(codel.first_above_time_);
    fill(q, 1, 0, 2);                           // #1 #2
    q.enqueue(Packet{3, 0, 18, false, false});  // #1 #2 #3
    codel.dequeue(q, ms(20), rec.out);          // #1 leaves 1518: below
    EXPECT_FALSE(codel.first_above_time_);
    q.enqueue(Packet{4, 0, 1, false, false});  // #2 #3 #4
    codel.dequeue(q, ms(30), rec.out);         // #2 leaves 19
    EXPECT_FALSE(codel.first_above_time_);
    fill(q, 2, 0, 5);                   // #3 #4 #5 #6
    codel.dequeue(q, ms(40), rec.out);  // #3 leaves 3001: above
    ASSERT_TRUE(codel.first_above_time_);
    EXPECT_EQ(*codel.first_above_time_, ms(140));
    // A sojourn just below TARGET resets it too.
    fill(q, 5, ms(36), 7);  // #4 #5 #6, then #7 .. #11 from 36 ms
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(codel.dequeue(q, ms(40), rec.out));
    ASSERT_TRUE(codel.first_above_time_);
    EXPECT_EQ(codel.dequeue(q, ms(41) - 1, rec.out)->index, 7u);  // sojourn 4.999999 ms
    EXPECT_FALSE(codel.first_above_time_);
    for (bool d : rec.done)
        EXPECT_FALSE(d);
}

// ---- FQ-CoDel ----------------------------------------------------------------------------

TEST(AqmReference, FqCoDelSparseFlowGoesBeforeTheBulkBacklog) {
    // Flow 0: 20 x 1500 bytes at 0. Flow 1: one 100-byte packet at 5.5 ms, sent at the next
    // dequeue (6 ms) ahead of flow 0's 14 waiting packets; the link is free again at
    // 6 ms + 66666.67 ns -> 6066667 ns, and flow 0 goes on from there.
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 2;
    std::vector<AqmArrival> a(20, AqmArrival{0, 1500, 0, false});
    a.push_back({ms(5.5), 100, 1, false});
    const auto r = simulate(c, kRate, a, 1);
    for (std::size_t k = 0; k < 6; ++k)
        EXPECT_EQ(r[k], sent(ms(k))) << k;
    EXPECT_EQ(r[20], sent(ms(6)));
    for (std::size_t k = 6; k < 20; ++k)
        EXPECT_EQ(r[k], sent(6066667 + ms(k - 6))) << k;
}

std::vector<std::uint32_t> flows_of(const std::list<std::uint32_t>& l) {
    return {l.begin(), l.end()};
}

TEST(AqmReference, FqCoDelNewFlowThatEmptiesMovesToOldWhenOldIsNotEmpty) {
    Record rec;
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 2;
    aqm_ref::FqCoDel fq(c);
    std::size_t idx = 0;
    for (int i = 0; i < 20; ++i)
        fq.enqueue(Packet{idx++, 0, 100, false, false}, 0, 0, rec.out);
    EXPECT_EQ(flows_of(fq.new_flows), std::vector<std::uint32_t>{0});
    EXPECT_EQ(fq.flows[0].deficit, 1514);
    // 16 packets of 100 bytes: deficit 1514 -> -86; the 17th visit refills it (1428) and
    // moves flow 0 to old, then sends.
    for (int i = 0; i < 17; ++i)
        ASSERT_EQ(fq.dequeue(0, rec.out)->index, static_cast<std::size_t>(i));
    EXPECT_TRUE(fq.new_flows.empty());
    EXPECT_EQ(flows_of(fq.old_flows), std::vector<std::uint32_t>{0});
    EXPECT_EQ(fq.flows[0].deficit, 1328);
    // Flow 1 is new: it is served first; when it has emptied, it goes to the tail of old
    // (old is not empty) and flow 0 sends.
    fq.enqueue(Packet{idx++, 0, 100, false, false}, 1, 0, rec.out);  // #20
    EXPECT_EQ(flows_of(fq.new_flows), std::vector<std::uint32_t>{1});
    EXPECT_EQ(fq.dequeue(0, rec.out)->index, 20u);
    EXPECT_EQ(fq.dequeue(0, rec.out)->index, 17u);
    EXPECT_TRUE(fq.new_flows.empty());
    EXPECT_EQ(flows_of(fq.old_flows), (std::vector<std::uint32_t>{0, 1}));
    // A packet for flow 1 now is not a new flow's: flow 0, at the head of old, goes first.
    fq.enqueue(Packet{idx++, 0, 100, false, false}, 1, 0, rec.out);  // #21
    EXPECT_TRUE(fq.new_flows.empty());
    EXPECT_EQ(fq.dequeue(0, rec.out)->index, 18u);
    EXPECT_EQ(fq.dequeue(0, rec.out)->index, 19u);
    EXPECT_EQ(fq.dequeue(0, rec.out)->index, 21u);
    EXPECT_EQ(fq.total_packets, 0u);
    EXPECT_EQ(fq.total_bytes, 0u);
}

TEST(AqmReference, FqCoDelNewFlowThatEmptiesIsRemovedWhenOldIsEmpty) {
    Record rec;
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 2;
    aqm_ref::FqCoDel fq(c);
    fq.enqueue(Packet{0, 0, 1500, false, false}, 1, 0, rec.out);
    EXPECT_EQ(fq.dequeue(0, rec.out)->index, 0u);
    EXPECT_EQ(fq.flows[1].deficit, 14);
    EXPECT_EQ(flows_of(fq.new_flows), std::vector<std::uint32_t>{1});
    EXPECT_FALSE(fq.dequeue(0, rec.out));
    EXPECT_TRUE(fq.new_flows.empty());
    EXPECT_TRUE(fq.old_flows.empty());
    EXPECT_EQ(fq.flows[1].list, aqm_ref::FqCoDel::List::none);
    // Back as a new flow with a full quantum.
    fq.enqueue(Packet{1, 0, 1500, false, false}, 1, 0, rec.out);
    EXPECT_EQ(flows_of(fq.new_flows), std::vector<std::uint32_t>{1});
    EXPECT_EQ(fq.flows[1].deficit, 1514);
}

TEST(AqmReference, FqCoDelIsByteFairBetweenBulkFlowsOfDifferentPacketSizes) {
    // Flow 0 sends 1500-byte packets, flow 1 500-byte ones, both backlogged from 0 (CoDel out
    // of the way: TARGET 100 s). Deficit round robin with quantum Q: after r rounds a flow has
    // sent r*Q - deficit bytes, the deficit in (-1500, 0], so the two totals never differ by
    // more than Q + 2*1500 bytes.
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 8;
    c.codel_target = 100 * kNsPerSec;
    std::vector<AqmArrival> a;
    for (int i = 0; i < 300; ++i)
        a.push_back({0, 1500, 0, false});
    for (int i = 0; i < 900; ++i)
        a.push_back({0, 500, 1, false});
    const auto r = simulate(c, kRate, a, 1);
    // Replay the departures in time order.
    std::vector<std::pair<TimeNs, std::size_t>> order;
    for (std::size_t i = 0; i < r.size(); ++i) {
        ASSERT_EQ(r[i].kind, AqmFate::sent);
        order.push_back({r[i].at, i});
    }
    std::sort(order.begin(), order.end());
    std::int64_t bytes[2] = {0, 0};
    std::int64_t worst = 0;
    for (const auto& [t, i] : order) {
        bytes[a[i].flow] += a[i].bytes;
        if (bytes[0] < 450000 && bytes[1] < 450000)  // both still backlogged
            worst = std::max(worst, std::abs(bytes[0] - bytes[1]));
    }
    EXPECT_LE(worst, 1514 + 2 * 1500);
    EXPECT_GT(worst, 0);
    // Halfway through, the shares are equal within that bound.
    std::int64_t half[2] = {0, 0};
    for (std::size_t k = 0; k < order.size() / 2; ++k)
        half[a[order[k].second].flow] += a[order[k].second].bytes;
    EXPECT_LE(std::abs(half[0] - half[1]), 1514 + 2 * 1500);
}

TEST(AqmReference, FqCoDelOverTheLimitDropsTheFattestFlowsHead) {
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 4;
    c.limit_packets = 4;
    // 6 packets at 0: #0 goes to the link at 0 (before #1 arrives); then flow 0 holds 4500
    // bytes (#1-#3), flow 1 200: at #5, 5 packets, flow 0's head goes, and the next until
    // half of its 4500 bytes are gone: #1 and #2 (1500, then 3000 >= 2250).
    std::vector<AqmArrival> a{{0, 1500, 0, false}, {0, 1500, 0, false}, {0, 1500, 0, false},
                              {0, 1500, 0, false}, {0, 100, 1, false},  {0, 100, 1, false}};
    const auto r = simulate(c, kRate, a, 1);
    EXPECT_EQ(r[1], full_drop(0));
    EXPECT_EQ(r[2], full_drop(0));
    for (std::size_t k : {0, 3, 4, 5})
        EXPECT_EQ(r[k].kind, AqmFate::sent) << k;
    // The arriving packet itself, when its flow is the fattest.
    c.limit_packets = 2;
    // (#0 goes to the link at 0; #1 and #2 of flow 0 wait, 200 bytes; #3 of flow 1 is the
    // fattest flow's head.)
    std::vector<AqmArrival> b{
        {0, 100, 0, false}, {0, 100, 0, false}, {0, 100, 0, false}, {0, 1500, 1, false}};
    const auto rb = simulate(c, kRate, b, 1);
    EXPECT_EQ(rb[3], full_drop(0));
    for (std::size_t k : {0, 1, 2})
        EXPECT_EQ(rb[k].kind, AqmFate::sent) << k;
    // Ties go to the lowest flow index; the drop is at the time of the arrival that
    // overfilled the queue.
    // At 1 Mbit/s #0 holds the link until 4 ms; at 3 ms flows 2, 1 and 3 hold 500 bytes
    // each: flow 1's #2 goes, at 3 ms.
    std::vector<AqmArrival> t{
        {0, 500, 0, false}, {ms(1), 500, 2, false}, {ms(2), 500, 1, false}, {ms(3), 500, 3, false}};
    const auto rt = simulate(c, 1e6, t, 1);
    EXPECT_EQ(rt[2], full_drop(ms(3)));
    EXPECT_EQ(rt[0], sent(0));
    EXPECT_EQ(rt[1], sent(ms(4)));
    EXPECT_EQ(rt[3], sent(ms(8)));
    // In bytes.
    c.limit_packets = 0;
    c.limit_bytes = 3000;
    // (#0 goes to the link at 0; #1 and #2 of flow 0 fill the 3000 bytes; #3 overfills
    // them: flow 0 holds 4500, and #1 and #2 go.)
    std::vector<AqmArrival> d{
        {0, 100, 1, false}, {0, 1500, 0, false}, {0, 1500, 0, false}, {0, 1500, 0, false}};
    const auto rd = simulate(c, kRate, d, 1);
    EXPECT_EQ(rd[1], full_drop(0));
    EXPECT_EQ(rd[2], full_drop(0));
    for (std::size_t k : {0, 3})
        EXPECT_EQ(rd[k].kind, AqmFate::sent) << k;
}

// The batch: half the fat flow's bytes, but at most 64 packets; odd bytes round the half
// down (Linux's backlog >> 1).
TEST(AqmReference, FqCoDelDropsAtMost64PacketsOrHalfTheFatFlowsBytes) {
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 4;
    c.limit_packets = 200;
    // #0 to the link at 0; #1-#200 fill the limit in flow 2; #201 overfills it: flow 2 holds
    // 201 packets of 100 bytes, half of it would be 101 packets: 64 go, #1-#64.
    std::vector<AqmArrival> a(202, AqmArrival{0, 100, 2, false});
    const auto r = simulate(c, kRate, a, 1);
    for (std::size_t k = 1; k <= 64; ++k)
        EXPECT_EQ(r[k], full_drop(0)) << k;
    for (std::size_t k : {std::size_t{0}, std::size_t{65}, std::size_t{200}, std::size_t{201}})
        EXPECT_EQ(r[k].kind, AqmFate::sent) << k;
    // Odd bytes: flow 1 holds 100 + 101 bytes, half of it is 100 (not 100.5): #1 alone goes.
    c.limit_packets = 2;
    std::vector<AqmArrival> b{
        {0, 64, 0, false}, {0, 100, 1, false}, {0, 101, 1, false}, {0, 64, 3, false}};
    const auto rb = simulate(c, kRate, b, 1);
    EXPECT_EQ(rb[1], full_drop(0));
    for (std::size_t k : {0, 2, 3})
        EXPECT_EQ(rb[k].kind, AqmFate::sent) << k;
}

TEST(AqmReference, FqCoDelRunsCoDelPerFlow) {
    // Flow 0 at twice the rate alone: the same drops as CoDel (the flow's own backlog).
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 16;
    const auto a = double_rate(ms(300));
    const auto r = simulate(c, kRate, a, 1);
    EXPECT_EQ(r, simulate(config(AqmKind::codel), kRate, a, 1));
    EXPECT_EQ(r[110], aqm_drop(ms(110)));
}

// ---- PIE ---------------------------------------------------------------------------------

TEST(AqmReference, PieDropProbabilityUnderAConstantQueueingDelay) {
    // 30 packets at 0, then one every ms from 1 ms, at the link's rate: packet k < 30 leaves
    // at k ms (sojourn k ms), every later one after 29 ms. PIE's updates at 15, 30, 45 ...
    // ms come before the dequeue at the same time, so they see the sojourn of the packet that
    // left 1 ms earlier: 14 ms at 15 ms, 29 ms from 30 ms on.
    AqmConfig c = config(AqmKind::pie);
    Rng rng(1);
    aqm_ref::Pie pie(c, rng);
    std::vector<AqmOutcome> result(400);
    std::vector<bool> done(400, false);
    aqm_ref::Outcomes out{result, done};
    aqm_ref::Link<aqm_ref::Pie> link{pie, kRate, out};
    std::size_t idx = 0;
    auto arrive = [&](TimeNs t) {
        link.serve_before(t);
        link.updates_until(t);
        if (pie.empty()) link.ready = std::max(link.ready, t);
        pie.enqueue(Packet{idx++, t, 1500, false, false}, t, out);
    };
    for (int i = 0; i < 30; ++i)
        arrive(0);
    const double a = 0.125, b = 1.25, ref = 0.015;
    std::vector<double> want_prob;
    // u = 15 ms: qdelay 14 ms, qdelay_old 0, drop_prob 0: p / 2048.
    double prob = (a * (0.014 - ref) + b * 0.014) / 2048;
    want_prob.push_back(prob);
    // u = 30 ms: 29 ms, old 14 ms; drop_prob 8.5e-6 < 1e-5: p / 512.
    prob += (a * (0.029 - ref) + b * (0.029 - 0.014)) / 512;
    want_prob.push_back(prob);
    // u = 45 .. 90 ms: 29 ms, old 29 ms: p = a * 14 ms; drop_prob < 1e-4: p / 128.
    for (int k = 0; k < 4; ++k) {
        ASSERT_LT(prob, 1e-4);
        prob += a * (0.029 - ref) / 128;
        want_prob.push_back(prob);
    }
    // u = 105 .. 150 ms: drop_prob in [1e-4, 1e-3): p / 32.
    ASSERT_GE(prob, 1e-4);
    for (int k = 0; k < 4; ++k) {
        prob += a * (0.029 - ref) / 32;
        want_prob.push_back(prob);
    }
    ASSERT_LT(prob, 1e-3);
    for (int k = 1; k <= 10; ++k) {
        // The packets up to just before the update at 15k ms.
        for (TimeNs t = ms(15 * (k - 1) + 1); t < ms(15 * k); t += ms(1))
            arrive(t);
        EXPECT_EQ(pie.burst_allowance_, ms(150 - 15 * (k - 1))) << k;
        EXPECT_EQ(pie.accu_prob_, 0.0) << "drop_early ran during the burst allowance, k=" << k;
        arrive(ms(15 * k));  // the update at 15k ms, then the arrival
        EXPECT_NEAR(pie.drop_prob_, want_prob[k - 1], 1e-15) << k;
        EXPECT_EQ(pie.burst_allowance_, ms(150 - 15 * k)) << k;
        EXPECT_EQ(pie.qdelay_old_, k == 1 ? 0.014 : 0.029) << k;
    }
    // The burst allowance ran out at the update at 150 ms: the arrival at 150 ms went through
    // drop_early (accu_prob = drop_prob, far below 0.85: no draw, enqueued).
    EXPECT_EQ(pie.accu_prob_, pie.drop_prob_);
    link.serve_all();
    for (std::size_t i = 0; i < idx; ++i)
        EXPECT_EQ(result[i].kind, AqmFate::sent) << i;
    EXPECT_EQ(result[130], sent(ms(130)));
}

TEST(AqmReference, PieLetsABurstThroughAndThenDropsEarly) {
    // A hot PIE (drop_prob 0.5, qdelay_old 100 ms) with 4 packets queued: while
    // burst_allowance > 0 nothing is dropped early; once it is 0, drop_early accumulates
    // 0.5 per packet, draws from the second on (accu_prob 1.0 >= 0.85), drops when the draw is
    // below 0.5 and then restarts the accumulation.
    AqmConfig c = config(AqmKind::pie);
    Record rec;
    const std::uint64_t seed = 42;
    Rng rng(seed);
    aqm_ref::Pie pie(c, rng);
    std::size_t idx = 0;
    for (int i = 0; i < 4; ++i)
        pie.enqueue(Packet{idx++, 0, 1500, false, false}, 0, rec.out);
    pie.drop_prob_ = 0.5;
    pie.qdelay_old_ = 0.1;
    for (int i = 0; i < 50; ++i)
        pie.enqueue(Packet{idx++, 0, 1500, false, false}, 0, rec.out);
    EXPECT_EQ(pie.queue_.length(), 54u);
    EXPECT_EQ(pie.accu_prob_, 0.0);

    pie.burst_allowance_ = 0;
    Rng mirror(seed);
    double accu = 0;
    int drops = 0;
    for (int i = 0; i < 200; ++i) {
        const std::size_t k = idx++;
        pie.enqueue(Packet{k, 0, 1500, false, false}, 0, rec.out);
        accu += 0.5;
        bool drop = false;
        if (accu >= 8.5) {
            drop = true;  // certain, no draw
        } else if (accu >= 0.85 && mirror.uniform() < 0.5) {
            drop = true;
            accu = 0;
        }
        EXPECT_EQ(rec.done[k], drop) << i;
        if (drop) {
            EXPECT_EQ(rec.result[k], aqm_drop(0));
        }
        drops += drop;
    }
    EXPECT_EQ(pie.accu_prob_, accu);
    EXPECT_GT(drops, 40);
    EXPECT_LT(drops, 120);
}

TEST(AqmReference, PieDropEarlyBranches) {
    AqmConfig c = config(AqmKind::pie);
    Record rec;
    Rng rng(7);
    aqm_ref::Pie pie(c, rng);
    // Work-conserving safeguard: at most 2 * 1518 bytes queued before this packet.
    pie.burst_allowance_ = 0;
    pie.drop_prob_ = 1.0;
    pie.qdelay_old_ = 0.1;
    pie.accu_prob_ = 100;
    pie.enqueue(Packet{0, 0, 1518, false, false}, 0, rec.out);
    pie.enqueue(Packet{1, 0, 1518, false, false}, 0, rec.out);
    pie.enqueue(Packet{2, 0, 1518, false, false}, 0, rec.out);  // 3036 queued before: kept
    EXPECT_EQ(pie.queue_.length(), 3u);
    EXPECT_EQ(pie.accu_prob_, 100.0);
    pie.enqueue(Packet{3, 0, 64, false, false}, 0, rec.out);  // 4554 before: accu >= 8.5, drop
    EXPECT_EQ(rec.result[3], aqm_drop(0));
    EXPECT_EQ(pie.accu_prob_, 101.0);  // the certain drop does not reset the accumulation
    // Low delay and drop_prob < 0.2: kept, nothing accumulated.
    pie.qdelay_old_ = 0.007;
    pie.drop_prob_ = 0.19;
    pie.enqueue(Packet{4, 0, 64, false, false}, 0, rec.out);
    EXPECT_FALSE(rec.done[4]);
    EXPECT_EQ(pie.accu_prob_, 101.0);
    // drop_prob 0 resets the accumulation.
    pie.qdelay_old_ = 0.1;
    pie.drop_prob_ = 0;
    pie.enqueue(Packet{5, 0, 64, false, false}, 0, rec.out);
    EXPECT_EQ(pie.accu_prob_, 0.0);
    EXPECT_FALSE(rec.done[5]);
}

TEST(AqmReference, PieMarksEcnCapablePacketsWhileDropProbIsAtMostTenPercent) {
    AqmConfig c = config(AqmKind::pie);
    c.ecn = true;
    c.limit_packets = 100;
    Record rec;
    Rng rng(7);
    aqm_ref::Pie pie(c, rng);
    for (int i = 0; i < 3; ++i)
        pie.enqueue(Packet{static_cast<std::size_t>(i), 0, 1500, false, false}, 0, rec.out);
    pie.burst_allowance_ = 0;
    pie.qdelay_old_ = 0.1;
    pie.drop_prob_ = 0.1;
    pie.accu_prob_ = 8.5;                                      // a certain drop
    pie.enqueue(Packet{3, 0, 1500, true, false}, 0, rec.out);  // ECT: marked, enqueued
    EXPECT_FALSE(rec.done[3]);
    EXPECT_TRUE(pie.queue_.packets.back().marked);
    pie.enqueue(Packet{4, 0, 1500, false, false}, 0, rec.out);  // not ECT: dropped
    EXPECT_EQ(rec.result[4], aqm_drop(0));
    pie.drop_prob_ = 0.11;
    pie.enqueue(Packet{5, 0, 1500, true, false}, 0, rec.out);  // above 10%: dropped
    EXPECT_EQ(rec.result[5], aqm_drop(0));
    // The marked packet leaves marked.
    aqm_ref::Link<aqm_ref::Pie> link{pie, kRate, rec.out};
    link.ready = 0;
    link.serve_all();
    EXPECT_EQ(rec.result[3], sent(ms(3), true));
    EXPECT_EQ(rec.result[2], sent(ms(2), false));
}

TEST(AqmReference, PieBurstAllowanceIsRestoredWhenTheQueueIsCalm) {
    // A lone packet every 20 ms: its sojourn is 0, drop_prob stays 0 and every update
    // restores the full burst allowance.
    std::vector<AqmArrival> a;
    for (int i = 0; i < 50; ++i)
        a.push_back({ms(20 * i), 1500, 0, false});
    const auto r = simulate(config(AqmKind::pie), kRate, a, 1);
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(r[i], sent(ms(20 * i))) << i;
}

TEST(AqmReference, PieUpdatesStartAtTheFirstPacket) {
    AqmConfig c = config(AqmKind::pie);
    Record rec;
    Rng rng(1);
    aqm_ref::Pie pie(c, rng);
    pie.update_until(ms(1000));
    EXPECT_FALSE(pie.next_update);
    pie.enqueue(Packet{0, ms(7), 1500, false, false}, ms(7), rec.out);
    ASSERT_TRUE(pie.next_update);
    EXPECT_EQ(*pie.next_update, ms(22));
    pie.update_until(ms(52) - 1);
    EXPECT_EQ(*pie.next_update, ms(52));
}

}  // namespace
}  // namespace linkem::test
