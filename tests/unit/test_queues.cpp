// The buffer stage: FIFO order, and the calendar queue against two oracles
// (BinaryHeapQueue on (tx, arrival) and std::stable_sort by tx).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "binary_heap_queue.hpp"
#include "linkem/emulator.hpp"
#include "linkem/huge_page_queue.hpp"
#include "linkem/huge_pages.hpp"
#include "linkem/queues.hpp"
#include "linkem/rng.hpp"
#include "test_support.hpp"

namespace linkem {
namespace test {
/// A handle that carries its calendar bin in its low bits, as the data plane's does: the
/// sequence number above them.
struct BinPacket {
    std::uint64_t bits;
};
}  // namespace test

template <>
struct CalendarBins<test::BinPacket> : CalendarBinsInLowBits<test::BinPacket> {};

namespace {

using test::BinPacket;
using test::Packet;
constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();
constexpr DurationNs kBucket = DurationNs{1} << CalendarQueue<Packet>::kShift;  // 65.5 us
constexpr DurationNs kHorizon = kBucket * CalendarQueue<Packet>::kSlots;        // 2.1 s
constexpr DurationNs kResolution = CalendarQueue<Packet>::kResolution;          // 64 ns

// A transmission time as the calendar queue keeps it (rounded up to its resolution).
TimeNs rounded(TimeNs tx) {
    return CalendarQueue<Packet>::round(tx);
}

TEST(CalendarQueue, RoundsTransmissionTimesUpToItsResolution) {
    static_assert(kResolution == 64);
    EXPECT_EQ(rounded(0), 0);
    EXPECT_EQ(rounded(1), 64);
    EXPECT_EQ(rounded(64), 64);
    EXPECT_EQ(rounded(65), 128);
    EXPECT_EQ(rounded(-1), 0);
    EXPECT_EQ(rounded(-64), -64);
    EXPECT_EQ(rounded(-65), -64);
    // A packet is never sent before its time, and no later than the resolution.
    CalendarQueue<Packet> q;
    Packet out[2];
    TimeNs tx[2];
    q.push(kNsPerSec + 1, Packet{1, 0, 64});
    EXPECT_EQ(q.pop_due(kNsPerSec + 63, out, tx, 2), 0u);
    ASSERT_EQ(q.pop_due(kNsPerSec + 64, out, tx, 2), 1u);
    EXPECT_EQ(tx[0], kNsPerSec + 64);
}

Packet pkt(std::uint64_t seq) {
    return Packet{seq, 0, 64};
}

TEST(FifoQueue, SaysExactlyWhetherKPacketsAreDue) {
    FifoQueue<Packet> q;
    EXPECT_FALSE(q.due_at_least(100, 1));
    for (std::uint64_t i = 0; i < 5; ++i)
        q.push(static_cast<TimeNs>(10 * i), pkt(i));  // 0, 10, 20, 30, 40
    EXPECT_TRUE(q.due_at_least(0, 1));
    EXPECT_FALSE(q.due_at_least(0, 2));
    EXPECT_TRUE(q.due_at_least(29, 3));
    EXPECT_FALSE(q.due_at_least(29, 4));
    EXPECT_TRUE(q.due_at_least(40, 5));
    EXPECT_FALSE(q.due_at_least(1000, 6));  // only five held
    Packet out[2];
    ASSERT_EQ(q.pop_due(15, out, nullptr, 2), 2u);
    EXPECT_TRUE(q.due_at_least(30, 2));
    EXPECT_FALSE(q.due_at_least(30, 3));
}

// Within the active bucket the answer is exact (the sort's bin ends say how many are due);
// once the next bucket has begun it may say yes with fewer (that bucket is not sorted yet).
TEST(CalendarQueue, SaysWhetherKPacketsAreDue) {
    for (const std::size_t n : {20u, 200u}) {  // rank-sorted and counting-sorted buckets
        SCOPED_TRACE(n);
        CalendarQueue<Packet> q;
        const TimeNs base = 1000 * kBucket;
        for (std::uint64_t i = 0; i < n; ++i)  // bins 1, 2, ..: one packet each
            q.push(base + static_cast<TimeNs>((i + 1) * kResolution), pkt(i));
        q.push(base + 3 * kBucket, pkt(n));  // a later bucket
        EXPECT_FALSE(q.due_at_least(base - 1, 1));
        Packet out[4];
        ASSERT_EQ(q.pop_due(base + 2 * kResolution, out, nullptr, 4), 2u);  // activates
        for (std::size_t k = 1; k <= 10; ++k) {
            const TimeNs now = base + static_cast<TimeNs>((2 + 5) * kResolution);  // 5 more due
            EXPECT_EQ(q.due_at_least(now, k), k <= 5) << "k " << k;
        }
        // All of the bucket is due, and the next has not begun: exact.
        EXPECT_TRUE(q.due_at_least(base + kBucket - 1, n - 2));
        EXPECT_FALSE(q.due_at_least(base + kBucket - 1, n - 1));
        // The later bucket's packet is due too.
        EXPECT_TRUE(q.due_at_least(base + 3 * kBucket, n - 1));
        EXPECT_FALSE(q.due_at_least(base + 3 * kBucket, n));  // more than are held
    }
}

TEST(FifoQueue, KeepsArrivalOrderAcrossGrowthAndWrapAround) {
    FifoQueue<Packet> q;
    EXPECT_FALSE(q.next_time().has_value());
    std::uint64_t pushed = 0, popped = 0;
    Packet out[100];
    TimeNs tx[100];
    // Keep ~700 queued while pushing 10^5: the ring wraps many times and grows past 1024.
    for (int round = 0; round < 1000; ++round) {
        for (int i = 0; i < (round < 20 ? 135 : 100); ++i, ++pushed)
            q.push(static_cast<TimeNs>(pushed), pkt(pushed));
        ASSERT_EQ(*q.next_time(), static_cast<TimeNs>(popped));
        const std::size_t n = q.pop_due(static_cast<TimeNs>(popped + 99), out, tx, 100);
        ASSERT_EQ(n, 100u);
        for (std::size_t i = 0; i < n; ++i, ++popped) {
            ASSERT_EQ(out[i].seq, popped);
            ASSERT_EQ(tx[i], static_cast<TimeNs>(popped));
        }
    }
    EXPECT_EQ(q.size(), pushed - popped);
    // pop_due stops at the first packet not yet due, even if later ones are "due": FIFO.
    FifoQueue<Packet> f;
    f.push(10, pkt(0));
    f.push(5, pkt(1));
    EXPECT_EQ(f.pop_due(9, out, tx, 10), 0u);
    EXPECT_EQ(f.pop_due(10, out, tx, 10), 2u);
}

// Packets numbered in push order, and their number back. A BinPacket's whole word is
// compared: a bin the calendar failed to clear shows as a wrong number.
template <class P>
struct Handle;
template <>
struct Handle<Packet> {
    static Packet make(std::uint64_t seq) { return pkt(seq); }
    static std::uint64_t seq(const Packet& p) { return p.seq; }
};
template <>
struct Handle<BinPacket> {
    static BinPacket make(std::uint64_t seq) { return {seq << kCalendarBinBits}; }
    static std::uint64_t seq(const BinPacket& p) { return p.bits; }
};

// Drives a CalendarQueue and the BinaryHeapQueue oracle with identical operations and
// requires identical results after every operation. The oracle gets the times rounded as
// the calendar keeps them.
template <class P>
class QueuePairOf {
  public:
    void push(TimeNs tx) {
        cal_.push(tx, Handle<P>::make(seq_));
        heap_.push(rounded(tx), Handle<P>::make(seq_));
        ++seq_;
        ++pushes_;
    }
    void pop(TimeNs now, std::size_t max) {
        max = std::min(max, size() + 1);
        if (a_.size() < max) {
            a_.resize(max);
            b_.resize(max);
            ta_.resize(max);
            tb_.resize(max);
        }
        // A quarter of the calls with transmission times, a quarter without (the calendar then
        // skips reading the bins), half through pop_due_view, as the
        // data plane pops (the packets may be left in the sorted bucket), with the times (as
        // linkemd's telemetry takes them) and without.
        const int how = static_cast<int>(pops_++ % 4);
        const bool with_tx = how == 0 || how == 3;
        const bool cal_due = cal_.due_at_least(now, max);
        const bool heap_due = heap_.due_at_least(now, max);
        std::size_t na;
        if (how >= 2) {
            const auto [p, n] =
                cal_.pop_due_view(now, a_.data(), max, with_tx ? ta_.data() : nullptr);
            if (p != a_.data()) std::copy(p, p + n, a_.data());
            na = n;
        } else {
            na = cal_.pop_due(now, a_.data(), with_tx ? ta_.data() : nullptr, max);
        }
        const std::size_t nb = heap_.pop_due(now, b_.data(), tb_.data(), max);
        ASSERT_EQ(na, nb) << "pop_due(" << now << ", " << max << ")";
        // due_at_least may say yes with fewer due, never no with enough.
        if (na == max) {
            ASSERT_TRUE(cal_due) << "due_at_least(" << now << ", " << max << ")";
            ASSERT_TRUE(heap_due);
        }
        for (std::size_t i = 0; i < na; ++i) {
            if (with_tx) {
                ASSERT_EQ(ta_[i], tb_[i]) << "entry " << i;
            }
            ASSERT_EQ(Handle<P>::seq(a_[i]), Handle<P>::seq(b_[i])) << "tx " << tb_[i];
            ASSERT_LE(tb_[i], now);
        }
        popped_ += na;
    }
    void check_next() {
        const auto a = cal_.next_time();
        const auto b = heap_.next_time();
        ASSERT_EQ(a.has_value(), b.has_value());
        if (a) {
            ASSERT_EQ(*a, *b);
        }
        ASSERT_EQ(cal_.size(), heap_.size());
        ASSERT_EQ(cal_.empty(), heap_.empty());
    }
    std::size_t size() const { return heap_.size(); }
    std::uint64_t pushes() const { return pushes_; }
    std::uint64_t popped() const { return popped_; }

  private:
    CalendarQueue<P> cal_;
    BinaryHeapQueue<P> heap_;
    std::uint64_t seq_ = 0, pushes_ = 0, popped_ = 0, pops_ = 0;
    std::vector<P> a_, b_;
    std::vector<TimeNs> ta_, tb_;
};
using QueuePair = QueuePairOf<Packet>;

// The oracle tests run for both kinds of handle: bins kept apart from the packets, and bins
// in the packet handle (the data plane's).
template <class P>
class CalendarOracle : public ::testing::Test {};
using Handles = ::testing::Types<Packet, BinPacket>;
TYPED_TEST_SUITE(CalendarOracle, Handles);

// ~6*10^5 random operations. Transmission times mix: near future (the common case), the
// active bucket and the past (late heap), exact ties (stable order), bucket edges, around
// the ring horizon and far beyond it (overflow), while `now` creeps, sometimes jumps by
// seconds, and the queue is sometimes drained empty and refilled (re-anchoring).
TYPED_TEST(CalendarOracle, MatchesBinaryHeapOracleOverRandomOperations) {
    QueuePairOf<TypeParam> q;
    Rng rng(2718);
    TimeNs now = 10 * kNsPerSec;
    std::vector<TimeNs> recent;  // earlier tx values, reused to create ties
    auto below = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
    int empties = 0;
    for (int op = 0; op < 600'000; ++op) {
        const std::uint64_t r = rng() % 1000;
        if (r < 560) {
            TimeNs tx;
            switch (rng() % 9) {
                case 0:
                    tx = now + below(2 * kNsPerMs);
                    break;
                case 1:
                    tx = now + below(kBucket);
                    break;
                case 2:
                    tx = now - below(kNsPerMs);
                    break;  // already due
                case 3:
                    tx = recent.empty() ? now : recent[rng() % recent.size()];
                    break;
                case 4:
                    tx = now + kHorizon + below(8 * kNsPerSec);
                    break;  // overflow
                case 5:
                    tx = now + kHorizon - kNsPerMs + below(2 * kNsPerMs);
                    break;
                case 6:
                    tx = ((now >> 17) + below(20)) << 17;
                    break;  // bucket edges
                case 7:
                    tx = (now / 1000 + below(300)) * 1000;
                    break;  // coarse grid: ties
                default:
                    tx = now + below(20 * kNsPerMs);
                    break;
            }
            q.push(tx);
            if (recent.size() < 64)
                recent.push_back(tx);
            else
                recent[rng() % 64] = tx;
        } else if (r < 860) {
            q.pop(now, 1 + rng() % 64);
        } else if (r < 960) {
            q.check_next();
        } else if (r < 995) {
            now += below(200 * kNsPerUs);
        } else if (r < 999) {
            now += below(3 * kNsPerSec);
        } else {
            // Drain completely (time moves to the last departure), then refill.
            while (q.size() > 0) {
                now += kNsPerSec;
                q.pop(now, 1 << 20);
            }
            ++empties;
            recent.clear();
        }
        if (::testing::Test::HasFatalFailure()) FAIL() << "at operation " << op;
    }
    q.pop(kForever, 1 << 22);
    q.check_next();
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.popped(), q.pushes());
    EXPECT_GT(empties, 100);
}

// Full buckets (hundreds of packets each, the counting-sort path) drained in small steps
// of time and count, as the data plane drains: every pop, with or without transmission
// times, matches the oracle, including pops that stop inside a 64 ns bin.
TYPED_TEST(CalendarOracle, MatchesBinaryHeapOracleInFullBuckets) {
    QueuePairOf<TypeParam> q;
    Rng rng(1618);
    TimeNs now = 3 * kNsPerSec;
    for (int round = 0; round < 40; ++round) {
        for (int i = 0; i < 3000; ++i)
            q.push(now + kBucket + static_cast<TimeNs>(rng() % (6 * kBucket)));
        for (int step = 0; step < 4000 && q.size() > 0; ++step) {
            now += static_cast<TimeNs>(rng() % 400);
            q.pop(now, 1 + rng() % 48);
            if (step % 97 == 0) q.check_next();
            if (::testing::Test::HasFatalFailure()) FAIL() << "round " << round << " step " << step;
        }
    }
    q.pop(kForever, 1 << 22);
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.popped(), q.pushes());
}

// Emptied queue refilled with times before everything seen so far, then after: the
// calendar re-anchors on the first push. Time does not have to be monotone.
TEST(CalendarQueue, EmptyThenRefillAtEarlierAndLaterTimes) {
    QueuePair q;
    Rng rng(31);
    TimeNs base = 50 * kNsPerSec;
    for (int cycle = 0; cycle < 200; ++cycle) {
        const int n = 1 + static_cast<int>(rng() % 500);
        for (int i = 0; i < n; ++i)
            q.push(base + static_cast<TimeNs>(rng() % (3 * kNsPerMs)));
        q.check_next();
        q.pop(base + kNsPerMs, 1 << 20);
        q.check_next();
        q.pop(kForever, 1 << 20);
        q.check_next();
        ASSERT_EQ(q.size(), 0u);
        // Next cycle: far earlier, far later, or the same bucket again.
        switch (cycle % 3) {
            case 0:
                base -= static_cast<TimeNs>(rng() % (10 * kNsPerSec));
                break;
            case 1:
                base += static_cast<TimeNs>(rng() % (10 * kNsPerSec));
                break;
            default:
                break;
        }
    }
}

TYPED_TEST(CalendarOracle, MatchesStableSortForAnyPushOrder) {
    // 2*10^5 pushes spread over 6 s (ring and overflow) on a 1 us grid (many ties), then
    // drained in chunks: the output must be the input stably sorted by tx.
    using H = Handle<TypeParam>;
    constexpr std::size_t n = 200'000;
    Rng rng(77);
    CalendarQueue<TypeParam> q;
    std::vector<std::pair<TimeNs, std::uint64_t>> in(n);
    const TimeNs t0 = 3 * kNsPerSec;
    for (std::size_t i = 0; i < n; ++i) {
        const TimeNs tx = t0 + static_cast<TimeNs>(rng() % 6'000'000) * 1000;
        in[i] = {rounded(tx), i};
        q.push(tx, H::make(i));
    }
    std::stable_sort(in.begin(), in.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<TypeParam> out(n);
    std::vector<TimeNs> tx(n);
    std::size_t got = 0;
    TimeNs now = t0;
    while (got < n) {
        ASSERT_EQ(*q.next_time(), in[got].first);
        now += static_cast<TimeNs>(rng() % (20 * kNsPerMs));
        got += q.pop_due(now, out.data() + got, tx.data() + got, 1 + rng() % 5000);
    }
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(tx[i], in[i].first) << i;
        ASSERT_EQ(H::seq(out[i]), H::seq(H::make(in[i].second))) << i;
    }
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(q.next_time().has_value());
}

TEST(CalendarQueue, EqualTimesLeaveInArrivalOrderOnEveryPath) {
    CalendarQueue<Packet> q;
    Packet out[1000];
    TimeNs tx[1000];
    const TimeNs t = rounded(7 * kNsPerSec + 12345);
    // 500 in a future bucket (radix-sorted path), then the bucket is activated by
    // next_time(), then 500 more with the same tx (late heap path).
    for (std::uint64_t i = 0; i < 500; ++i)
        q.push(t, pkt(i));
    q.push(t - 5 * kNsPerMs, pkt(10'000));  // an earlier bucket, so t's bucket is not current
    ASSERT_EQ(q.pop_due(t - 5 * kNsPerMs, out, tx, 1000), 1u);
    ASSERT_EQ(*q.next_time(), t);  // activates t's bucket early
    for (std::uint64_t i = 500; i < 1000; ++i)
        q.push(t, pkt(i));
    ASSERT_EQ(q.pop_due(t - 1, out, tx, 1000), 0u);
    ASSERT_EQ(q.pop_due(t, out, tx, 1000), 1000u);
    for (std::uint64_t i = 0; i < 1000; ++i) {
        ASSERT_EQ(out[i].seq, i);
        ASSERT_EQ(tx[i], t);
    }
    // Same through the overflow list: far beyond the horizon, then pulled into the ring.
    ASSERT_TRUE(q.empty());
    q.push(90 * kNsPerSec, pkt(999));  // anchors the calendar at 90 s
    for (std::uint64_t i = 0; i < 100; ++i)
        q.push(100 * kNsPerSec, pkt(i));
    ASSERT_EQ(q.pop_due(90 * kNsPerSec, out, tx, 1000), 1u);
    EXPECT_EQ(*q.next_time(), 100 * kNsPerSec);
    ASSERT_EQ(q.pop_due(100 * kNsPerSec, out, tx, 1000), 100u);
    for (std::uint64_t i = 0; i < 100; ++i)
        ASSERT_EQ(out[i].seq, i);
}

TEST(CalendarQueue, FarFutureBeyondTheHorizonWaitsInOverflow) {
    CalendarQueue<Packet> q;
    Packet out[8];
    TimeNs tx[8];
    const TimeNs now = kNsPerSec;
    q.push(now + kNsPerMs, pkt(0));  // anchors the calendar
    q.push(now + 5 * kNsPerSec, pkt(1));
    q.push(now + 30 * kNsPerSec, pkt(2));
    EXPECT_EQ(*q.next_time(), now + kNsPerMs);
    EXPECT_EQ(q.pop_due(now + 4 * kNsPerSec, out, tx, 8), 1u);
    EXPECT_EQ(out[0].seq, 0u);
    EXPECT_EQ(*q.next_time(), now + 5 * kNsPerSec);
    EXPECT_EQ(q.pop_due(now + 5 * kNsPerSec - 1, out, tx, 8), 0u);
    EXPECT_EQ(q.pop_due(now + 5 * kNsPerSec, out, tx, 8), 1u);
    EXPECT_EQ(out[0].seq, 1u);
    EXPECT_EQ(*q.next_time(), now + 30 * kNsPerSec);
    EXPECT_EQ(q.pop_due(kForever, out, tx, 8), 1u);
    EXPECT_EQ(tx[0], now + 30 * kNsPerSec);
    EXPECT_TRUE(q.empty());
}

// The push's inlined range check: the first and last ring buckets, one bucket beyond the
// ring (overflow), the active bucket and the past (late heap), each exactly at its edges.
TEST(CalendarQueue, PushesAtTheEdgesOfTheRingKeepTheirOrder) {
    QueuePair q;
    const TimeNs anchor = 40 * kNsPerSec + 5 * kBucket + 77;  // calendar: just before it
    q.push(anchor);
    const TimeNs b0 = anchor & ~(kBucket - 1);  // start of the anchor's bucket
    // The ring holds the anchor's bucket and the kSlots - 2 after it. Times round up to the
    // queue's resolution: E - kResolution is the last time kept before an edge E, and
    // E - kResolution + 1 the first one kept at E.
    const TimeNs last = -kResolution, first = -kResolution + 1;
    const TimeNs edges[] = {
        b0 + kBucket + last,              // the anchor's bucket, last time
        b0 + kBucket + first,             // the next one, first time
        b0 + kBucket,                     // the same, exactly
        b0 + kHorizon - kBucket + last,   // the last bucket of the ring, last time
        b0 + kHorizon - kBucket + first,  // the first bucket beyond it: overflow
        b0 + kHorizon - 1,
        b0 + kHorizon,
        b0 + 2 * kHorizon,
    };
    for (int round = 0; round < 2; ++round)
        for (const TimeNs t : edges) {
            q.push(t);
            q.push(t);  // a tie on the same path
        }
    q.check_next();
    q.pop(anchor, 64);  // activates the anchor's bucket: the ring now ends one bucket later
    for (const TimeNs t : edges)
        q.push(t);  // ties with the earlier pushes, some of which wait in the overflow heap
    // Now the active bucket and the past: late heap.
    q.push(anchor - kNsPerMs);
    q.push(b0);
    q.push(b0 + kBucket + last);
    q.check_next();
    for (TimeNs now = anchor; q.size() > 0; now += kBucket / 2) {
        q.pop(now, 3);
        q.check_next();
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_EQ(q.popped(), q.pushes());
}

// No reserve(): the chunk storage grows (and moves, past 2 MiB into the large-page
// allocation) while a bucket is being drained and the next one is being prefetched.
TEST(CalendarQueue, ChunkStorageGrowsWhileABucketIsBeingDrained) {
    QueuePair q;
    Rng rng(4242);
    TimeNs now = 20 * kNsPerSec;
    for (int i = 0; i < 3000; ++i)  // two well-filled buckets
        q.push(now + static_cast<TimeNs>(rng() % (2 * kBucket)));
    for (int step = 0; step < 400; ++step) {
        q.pop(now, 7);
        // Spread over the whole ring: one new chunk per packet for a long while.
        for (int i = 0; i < 400; ++i)
            q.push(now + static_cast<TimeNs>(rng() % kHorizon));
        q.check_next();
        if (::testing::Test::HasFatalFailure()) return;
        now += static_cast<TimeNs>(rng() % (kBucket / 64));
    }
    q.pop(kForever, 1 << 22);
    EXPECT_EQ(q.size(), 0u);
    EXPECT_EQ(q.popped(), q.pushes());
}

// A bucket of more than 2^16 packets (the sort's positions are 32-bit; earlier versions
// packed them into 16 bits), next to a smaller one. Ties on a 16 ns grid (four times more
// after rounding), pushes into the active bucket while it drains.
TEST(CalendarQueue, VeryFullBucketsKeepTheirOrder) {
    QueuePair q;
    Rng rng(515);
    const TimeNs t0 = 30 * kNsPerSec;  // a bucket edge
    q.push(t0 - kNsPerMs);             // anchors the calendar before both buckets
    for (int i = 0; i < 90'000; ++i) {
        const TimeNs b = i % 7 == 0 ? kBucket : 0;  // ~77k in the first, ~13k in the next
        q.push(t0 + b + static_cast<TimeNs>(rng() % (kBucket / 16)) * 16);
    }
    TimeNs now = t0 - kNsPerMs;
    while (q.size() > 0) {
        q.pop(now, 1 + rng() % 3000);
        if (rng() % 4 == 0) q.push(now + static_cast<TimeNs>(rng() % (kBucket / 4)));
        q.check_next();
        if (::testing::Test::HasFatalFailure()) return;
        now += static_cast<TimeNs>(rng() % 2000);
    }
    EXPECT_EQ(q.popped(), q.pushes());
}

// ---------------------------------------------------------------------------------------
// Through the Emulator: FIFO strategies never reorder, the reordering one sends by tx.

std::vector<std::pair<std::uint64_t, TimeNs>> run(Strategy s, std::size_t n) {
    LinkParams p;
    p.strategy = s;
    p.distribution = Distribution::normal;
    p.mean_delay = kNsPerMs;
    p.jitter = kNsPerMs;  // delays vary by far more than the 1 us spacing
    p.half_life = 20 * kNsPerUs;
    p.rate_window = 100 * kNsPerUs;
    p.seed = 9;
    Emulator<Packet> e(p);
    std::vector<std::pair<std::uint64_t, TimeNs>> out;
    Packet burst[4], got[256];
    TimeNs tx[256];
    for (std::size_t i = 0; i < n; i += 4) {
        const TimeNs now = static_cast<TimeNs>(i) * kNsPerUs;
        for (std::size_t j = 0; j < 4; ++j)
            burst[j] = Packet{i + j, now, 100};
        e.ingest(burst, 4, now);
        for (std::size_t k; (k = e.drain(now, got, 256, tx)) > 0;)
            for (std::size_t j = 0; j < k; ++j) {
                EXPECT_GE(tx[j], got[j].t_arr);
                EXPECT_LE(tx[j], now);
                out.emplace_back(got[j].seq, tx[j]);
            }
    }
    for (std::size_t k; (k = e.drain(kForever, got, 256, tx)) > 0;)
        for (std::size_t j = 0; j < k; ++j)
            out.emplace_back(got[j].seq, tx[j]);
    EXPECT_EQ(out.size(), n);
    return out;
}

// for_next shows the packets the next pop_due will return first (the Emulator prefetches
// them a drain ahead). The FIFO shows all k; the calendar queue what its active bucket
// holds (pop_due may go on into the next bucket).
template <class Queue>
void expect_for_next_matches_pop(Queue& q, TimeNs now, bool shows_all) {
    std::vector<std::uint64_t> peeked;
    q.for_next(16, [&](const Packet& p) { peeked.push_back(p.seq); });
    EXPECT_LE(peeked.size(), 16u);
    Packet out[16];
    TimeNs tx[16];
    const std::size_t n = q.pop_due(now, out, tx, 16);
    if (shows_all) {
        EXPECT_EQ(peeked.size(), std::min<std::size_t>(16, q.size() + n));
    }
    for (std::size_t i = 0; i < std::min(n, peeked.size()); ++i)
        EXPECT_EQ(out[i].seq, peeked[i]) << i;
}

TEST(QueueLookahead, ForNextShowsWhatTheNextPopReturns) {
    FifoQueue<Packet> f;
    CalendarQueue<Packet> c;
    Rng rng(7);
    // The first push is the earliest, so none lands before the calendar's anchor (those go
    // to the late heap, which for_next does not show).
    for (std::uint64_t i = 0; i < 5000; ++i) {
        const auto t = static_cast<TimeNs>(1'000'000 + (i ? rng() % 20'000'000 : 0));
        f.push(static_cast<TimeNs>(i), pkt(i));
        c.push(t, pkt(i));
    }
    std::size_t visits = 0;
    f.for_next(0, [&](const Packet&) { ++visits; });
    EXPECT_EQ(visits, 0u);
    for (TimeNs now = 0; now < 30'000'000; now += 50'000) {
        expect_for_next_matches_pop(f, now / 5'000, true);
        expect_for_next_matches_pop(c, now, false);
    }
    // Nothing left: nothing to show.
    Packet out[8192];
    f.pop_due(kForever, out, nullptr, 8192);
    c.pop_due(kForever, out, nullptr, 8192);
    f.for_next(16, [&](const Packet&) { ++visits; });
    c.for_next(16, [&](const Packet&) { ++visits; });
    EXPECT_EQ(visits, 0u);
}

TEST(HugePages, BlocksAreAlignedWholePagesThatWork) {
    EXPECT_EQ(huge_pages_round(1), kHugePageSize);
    EXPECT_EQ(huge_pages_round(kHugePageSize), kHugePageSize);
    EXPECT_EQ(huge_pages_round(kHugePageSize + 1), 2 * kHugePageSize);
    const std::size_t bytes = 3 * kHugePageSize + 123;
    auto* p = static_cast<unsigned char*>(huge_pages_allocate(bytes, /*prefault=*/true));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHugePageSize, 0u);
    EXPECT_EQ(p[0], 0);  // zeroed
    p[0] = 1;
    p[bytes - 1] = 2;
    EXPECT_LE(huge_pages_backed(p, bytes), huge_pages_round(bytes));  // THP is only advice
    huge_pages_free(p, bytes);
    // The queue's chunk storage crosses 2 MiB and goes through it.
    HugePageCalendarQueue<Packet> c;
    c.reserve(200'000);
    c.push(5, pkt(1));
    Packet out[1];
    EXPECT_EQ(c.pop_due(kForever, out, nullptr, 1), 1u);
    EXPECT_EQ(out[0].seq, 1u);
}

TEST(EmulatorOrder, FifoStrategiesNeverReorder) {
    for (auto s : {Strategy::correlated, Strategy::uncorrelated}) {
        const auto out = run(s, 200'000);
        for (std::size_t i = 0; i < out.size(); ++i) {
            ASSERT_EQ(out[i].first, i) << to_string(s);
            if (i) {
                ASSERT_GE(out[i].second, out[i - 1].second) << to_string(s);
            }
        }
    }
}

TEST(EmulatorOrder, ReorderedSendsInTransmissionTimeOrder) {
    const auto out = run(Strategy::reordered, 200'000);
    std::size_t inversions = 0;
    std::vector<bool> seen(out.size(), false);
    for (std::size_t i = 0; i < out.size(); ++i) {
        ASSERT_FALSE(seen[out[i].first]);
        seen[out[i].first] = true;
        if (i) {
            ASSERT_GE(out[i].second, out[i - 1].second);
            inversions += out[i].first < out[i - 1].first;
        }
    }
    EXPECT_GT(inversions, out.size() / 10);  // it really reorders
}

}  // namespace
}  // namespace linkem
