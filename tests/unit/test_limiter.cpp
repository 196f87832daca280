// The limiter stage: spacer (rate, spacer limit) and policer (token bucket), directly and
// through the Emulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "linkem/emulator.hpp"
#include "linkem/limiter.hpp"
#include "linkem/rng.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using test::Packet;
constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();

LinkParams limiter_params(Limiter l, double rate_bps) {
    LinkParams p;
    p.strategy = Strategy::uncorrelated;
    p.limiter = l;
    p.rate_bps = rate_bps;
    p.seed = 1;
    return p;
}

struct Sent {
    TimeNs tx;
    std::uint32_t bytes;
};

// Bytes whose transmission time falls in any closed window [t, t + T] must not exceed
// rate*T plus one frame (the one that starts at the window's end). Transmission times are
// whole nanoseconds, rounded up from the spacer's exact start times, so a window of T
// holds starts from an interval of up to T + 1 ns: the bound is rate*(T + 1 ns) + max frame.
void check_sliding_windows(const std::vector<Sent>& sent, double rate_bps,
                           std::uint32_t max_frame) {
    for (DurationNs window :
         {DurationNs{100}, kNsPerUs, 10 * kNsPerUs, 100 * kNsPerUs, kNsPerMs, 10 * kNsPerMs}) {
        const double limit = rate_bps / 8e9 * static_cast<double>(window + 1) + max_frame;
        std::size_t j = 0;
        std::uint64_t bytes = 0;  // bytes of sent[i .. j)
        double worst = 0;
        for (std::size_t i = 0; i < sent.size(); ++i) {
            if (j < i) {
                j = i;
                bytes = 0;
            }
            while (j < sent.size() && sent[j].tx <= sent[i].tx + window)
                bytes += sent[j++].bytes;
            worst = std::max(worst, static_cast<double>(bytes));
            ASSERT_LE(static_cast<double>(bytes), limit) << "window " << window << " at " << i;
            bytes -= sent[i].bytes;
        }
        // The load is well above the rate, so some window is nearly full: the check bites.
        EXPECT_GT(worst, 0.9 * (limit - max_frame)) << "window " << window;
    }
}

// The departures' rounding to whole nanoseconds: std::ceil's results, inline.
TEST(Time, CeilNsIsStdCeil) {
    linkem::Rng rng(7);
    std::vector<double> ts{0.0,    -0.0,   1.0,  1e-9, 0.5,        1.5,
                           -0.5,   -1.5,   -2.0, 1e15, 1e15 + 0.5, 4503599627370495.5,
                           9.0e18, -9.0e18};
    for (int i = 0; i < 100000; ++i)
        ts.push_back((rng.uniform() - 0.25) * std::pow(10.0, 1 + i % 17));
    const std::size_t n = ts.size();
    for (std::size_t i = 0; i < n; ++i) {  // and each one's neighbours
        ts.push_back(std::nextafter(ts[i], 1e300));
        ts.push_back(std::nextafter(ts[i], -1e300));
    }
    for (double t : ts)
        ASSERT_EQ(linkem::ceil_ns(t), static_cast<linkem::TimeNs>(std::ceil(t))) << t;
}

// Random bursts of mixed sizes offered at ~2x the rate, behind i.i.d. delay jitter (so the
// spacer sees out-of-order t_d), with frame and wire accounting.
TEST(Spacer, OutputNeverExceedsTheRate) {
    for (auto acct : {ByteAccounting::frame, ByteAccounting::wire}) {
        const double rate = 1e9;
        LinkParams p = limiter_params(Limiter::spacer, rate);
        p.distribution = Distribution::normal;
        p.mean_delay = 200 * kNsPerUs;
        p.jitter = 50 * kNsPerUs;
        p.byte_accounting = acct;
        p.queue_limit_bytes = 256 * 1024;
        Emulator<Packet> e(p);
        const std::uint32_t overhead = acct == ByteAccounting::wire ? 20 : 0;
        Rng rng(17);
        std::vector<Sent> sent;
        Packet burst[32], out[256];
        TimeNs tx[256];
        TimeNs now = 0;
        std::uint64_t seq = 0, offered_bytes = 0;
        for (int b = 0; b < 20'000; ++b) {
            const std::size_t n = 1 + rng() % 32;
            for (std::size_t i = 0; i < n; ++i) {
                const std::uint32_t len = 64 + static_cast<std::uint32_t>(rng() % (1518 - 63));
                burst[i] = Packet{seq++, now, len};
                offered_bytes += len + overhead;
            }
            e.ingest(burst, n, now);
            // mean burst 16.5 x 791 B = 13 kB every 52 us = 2 Gbit/s offered
            now += static_cast<TimeNs>(rng() % (104 * kNsPerUs));
            for (std::size_t k; (k = e.drain(now, out, 256, tx)) > 0;)
                for (std::size_t i = 0; i < k; ++i)
                    sent.push_back({tx[i], out[i].length + overhead});
        }
        for (std::size_t k; (k = e.drain(kForever, out, 256, tx)) > 0;)
            for (std::size_t i = 0; i < k; ++i)
                sent.push_back({tx[i], out[i].length + overhead});
        ASSERT_TRUE(std::is_sorted(sent.begin(), sent.end(),
                                   [](const Sent& a, const Sent& b) { return a.tx < b.tx; }));
        check_sliding_windows(sent, rate, 1518 + overhead);
        const auto s = e.snapshot();
        EXPECT_GT(s.drops[DropCause::spacer], 0u);  // 2x overload into a finite limit
        EXPECT_EQ(s.packets_in, seq);
        EXPECT_EQ(s.packets_out + s.drops.total(), seq);
        // Overloaded, the spacer runs at its rate: bytes over the busy period match it to 1%.
        std::uint64_t bytes = 0;
        for (const Sent& x : sent)
            bytes += x.bytes;
        const double secs = static_cast<double>(sent.back().tx - sent.front().tx) * 1e-9;
        EXPECT_NEAR(bytes * 8 / secs / rate, 1.0, 0.01);
        EXPECT_GT(offered_bytes, bytes * 3 / 2);
    }
}

TEST(Spacer, WireAccountingSpacesFramesPlus20Bytes) {
    for (auto acct : {ByteAccounting::frame, ByteAccounting::wire}) {
        LinkParams p = limiter_params(Limiter::spacer, 8e9);  // 1 byte per ns
        p.byte_accounting = acct;
        Emulator<Packet> e(p);
        Packet in[5], out[5];
        TimeNs tx[5];
        for (std::uint64_t i = 0; i < 5; ++i)
            in[i] = Packet{i, 1000, 1000};
        ASSERT_EQ(e.ingest(in, 5, 1000), 0u);
        ASSERT_EQ(e.drain(kForever, out, 5, tx), 5u);
        const DurationNs gap = acct == ByteAccounting::wire ? 1020 : 1000;
        for (int i = 0; i < 5; ++i)
            EXPECT_EQ(tx[i], 1000 + i * gap);
    }
}

// Reference spacer at 1 byte/ns in integers: exact, so every decision can be compared.
struct RefSpacer {
    std::int64_t free = std::numeric_limits<std::int64_t>::min() / 2;
    std::int64_t limit;
    bool schedule(std::int64_t t, std::int64_t bytes, std::int64_t& tx) {
        const std::int64_t backlog = std::max<std::int64_t>(0, free - t);
        if (backlog + bytes > limit) return false;
        tx = std::max(t, free);
        free = tx + bytes;
        return true;
    }
};

TEST(Spacer, FillLimitDropsWhenTheBacklogWouldExceedItAndOnlyThen) {
    // By hand: rate 1 byte/ns, limit 10000 bytes, 1000-byte packets.
    Spacer s;
    s.configure(8e9, 10'000);
    TimeNs tx;
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(s.schedule(0, 1000, tx)) << i;  // backlog 0, 1000, ..., 9000
        EXPECT_EQ(tx, i * 1000);
    }
    EXPECT_FALSE(s.schedule(0, 1000, tx));    // 10000 + 1000 > 10000
    EXPECT_FALSE(s.schedule(0, 1, tx));       // even 1 byte
    EXPECT_TRUE(s.schedule(1000, 1000, tx));  // backlog 9000: 9000 + 1000 == limit fits
    EXPECT_EQ(tx, 10'000);
    EXPECT_FALSE(s.schedule(1000, 1, tx));
    EXPECT_TRUE(s.schedule(1001, 1, tx));  // backlog 9999 + 1
    EXPECT_DOUBLE_EQ(s.backlog_bytes(1001), 10'000);

    // Randomised against the integer reference, through the Emulator: alternating over-
    // and under-load so drops start and stop.
    LinkParams p = limiter_params(Limiter::spacer, 8e9);
    p.queue_limit_bytes = 20'000;
    Emulator<Packet> e(p);
    RefSpacer ref{.limit = 20'000};
    Rng rng(23);
    TimeNs now = 0;
    std::uint64_t ref_drops = 0, seq = 0;
    Packet in[16], dropped[16], out[64];
    TimeNs txs[64];
    std::vector<TimeNs> ref_tx;
    std::vector<std::uint64_t> ref_seq;
    for (int b = 0; b < 20'000; ++b) {
        const std::size_t n = 1 + rng() % 16;
        std::set<std::uint64_t> expect_dropped;
        for (std::size_t i = 0; i < n; ++i) {
            in[i] = Packet{seq, now, 64 + static_cast<std::uint32_t>(rng() % 1455)};
            std::int64_t t;
            if (ref.schedule(now, in[i].length, t)) {
                ref_tx.push_back(t);
                ref_seq.push_back(seq);
            } else {
                expect_dropped.insert(seq);
                ++ref_drops;
            }
            ++seq;
        }
        const std::size_t nd = e.ingest(in, n, now, dropped);
        ASSERT_EQ(nd, expect_dropped.size()) << "burst " << b;
        for (std::size_t i = 0; i < nd; ++i)
            ASSERT_TRUE(expect_dropped.count(dropped[i].seq));
        // Phases of 2000 bursts: ~2.6x the rate, then ~0.5x.
        const bool heavy = (b / 2000) % 2 == 0;
        now += static_cast<TimeNs>(rng() % (heavy ? 6'000 : 32'000));
    }
    std::size_t got = 0;
    for (std::size_t k; (k = e.drain(kForever, out, 64, txs)) > 0;)
        for (std::size_t i = 0; i < k; ++i, ++got) {
            ASSERT_EQ(out[i].seq, ref_seq[got]);
            ASSERT_EQ(txs[i], ref_tx[got]);
        }
    EXPECT_EQ(got, ref_seq.size());
    EXPECT_EQ(e.snapshot().drops[DropCause::spacer], ref_drops);
    EXPECT_GT(ref_drops, 1000u);
    EXPECT_LT(ref_drops, seq / 2);
}

// fits_whole() may accept a batch only if schedule() would drop none of it and gives the
// times schedule_fit() gives: random batches at non-decreasing times, against limits just
// above, at and below what the batch needs.
TEST(Spacer, FitsWholeOnlyWhenNoPacketOfTheBatchCanBeDropped) {
    Rng rng(5);
    std::size_t accepted = 0, rejected = 0;
    for (int trial = 0; trial < 20'000; ++trial) {
        const double rate = 1e6 * static_cast<double>(1 + rng() % 100'000);  // 1 Mbit/s..100 Gbit/s
        const std::size_t n = 1 + rng() % 16;
        std::vector<std::uint32_t> len(n);
        std::uint64_t total = 0;
        for (auto& l : len)
            total += l = 64 + static_cast<std::uint32_t>(rng() % 9000);
        // A backlog left by earlier traffic, then the batch at t_min and later.
        const std::uint64_t limit = total / 2 + rng() % (2 * total + 1);
        Spacer s;
        s.configure(rate, limit);
        TimeNs tx;
        double t = 0;
        for (std::uint64_t k = rng() % 8; k > 0; --k)
            s.schedule(t, 1 + static_cast<std::uint32_t>(rng() % 3000), tx);
        t = static_cast<double>(rng() % 200'000);
        const double t_min = t;
        if (!s.fits_whole(t_min, total)) {
            ++rejected;
            continue;
        }
        ++accepted;
        Spacer fast = s;
        for (std::size_t i = 0; i < n; ++i) {
            TimeNs a, b;
            ASSERT_TRUE(s.schedule(t, len[i], a)) << "trial " << trial << " packet " << i;
            fast.schedule_fit(t, len[i], b);
            ASSERT_EQ(a, b);
            if (rng() % 2) t += static_cast<double>(rng() % 20'000);  // times never decrease
        }
    }
    // Both outcomes occur (the test is not vacuous either way).
    EXPECT_GT(accepted, 1000u);
    EXPECT_GT(rejected, 1000u);
}

// Policer at 8 Mbit/s = 1 byte per us, bucket 3060 bytes, 1000-byte frames. By hand:
//                        frame (costs 1000)        wire (costs 1020)
//   t=0      p0..p3      3060: p0 p1 p2 ok, 60     3060: p0 p1 p2 ok, 0
//                        left; p3 dropped          left; p3 dropped
//   t=500us  p4          560 < 1000: dropped       500: dropped
//   t=940us  p5          1000 == cost: ok, 0 left  940: dropped (takes nothing)
//   t=940us  p6          0: dropped                940: dropped
//   t=1940us p7          1000: ok                  1940: ok, 920 left
//   t=10s    p8..p11     refilled to the cap 3060: p8 p9 p10 ok, p11 dropped
TEST(Policer, DropsExactlyWhatExceedsTheContract) {
    const TimeNs times[] = {0,
                            0,
                            0,
                            0,
                            500 * kNsPerUs,
                            940 * kNsPerUs,
                            940 * kNsPerUs,
                            1940 * kNsPerUs,
                            10 * kNsPerSec,
                            10 * kNsPerSec,
                            10 * kNsPerSec,
                            10 * kNsPerSec};
    for (auto acct : {ByteAccounting::frame, ByteAccounting::wire}) {
        LinkParams p = limiter_params(Limiter::policer, 8e6);
        p.policer_burst_bytes = 3060;
        p.byte_accounting = acct;
        Emulator<Packet> e(p);
        std::set<std::uint64_t> dropped;
        for (std::uint64_t i = 0; i < std::size(times); ++i) {
            Packet in{i, times[i], 1000}, d{};
            if (e.ingest(&in, 1, times[i], &d) == 1) dropped.insert(d.seq);
        }
        const std::set<std::uint64_t> expected = acct == ByteAccounting::frame
                                                     ? std::set<std::uint64_t>{3, 4, 6, 11}
                                                     : std::set<std::uint64_t>{3, 4, 5, 6, 11};
        EXPECT_EQ(dropped, expected) << to_string(acct);
        EXPECT_EQ(e.snapshot().drops[DropCause::policer], expected.size());
        EXPECT_EQ(e.snapshot().drops.total(), expected.size());
        EXPECT_EQ(e.in_flight(), std::size(times) - expected.size());
    }
    // The same by the class itself, with the token count visible.
    Policer pol;
    pol.configure(8e6, 3060);
    EXPECT_TRUE(pol.admit(0, 3000));
    EXPECT_DOUBLE_EQ(pol.tokens_bytes(), 60);
    EXPECT_FALSE(pol.admit(0, 61));
    EXPECT_DOUBLE_EQ(pol.tokens_bytes(), 60);  // a dropped packet takes no tokens
    EXPECT_TRUE(pol.admit(1 * kNsPerUs, 61));  // one byte accrued per us
    EXPECT_DOUBLE_EQ(pol.tokens_bytes(), 0);
    EXPECT_FALSE(pol.admit(1 * kNsPerUs + 999, 1));  // 0.999 bytes: not enough
    EXPECT_TRUE(pol.admit(2 * kNsPerUs, 1));
}

// Randomised against GCRA (virtual scheduling), an independent formulation of the same
// contract: a packet of L bytes conforms iff the theoretical arrival time TAT satisfies
// TAT - t <= (B - L)/rate; conforming packets push TAT to max(TAT, t) + L/rate. At 8 Mbit/s
// L/rate = 1000*L ns, so the reference is exact in integers.
TEST(Policer, MatchesGcraReferenceOnRandomTraffic) {
    constexpr std::int64_t kBurst = 20'000;
    LinkParams p = limiter_params(Limiter::policer, 8e6);
    p.policer_burst_bytes = kBurst;
    Emulator<Packet> e(p);
    Rng rng(5);
    std::int64_t tat = std::numeric_limits<std::int64_t>::min() / 2;
    TimeNs now = 0;
    std::uint64_t seq = 0, ref_drops = 0;
    Packet in[8], dropped[8];
    for (int b = 0; b < 50'000; ++b) {
        const std::size_t n = 1 + rng() % 8;
        std::set<std::uint64_t> expect;
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t len = 64 + static_cast<std::int64_t>(rng() % 1455);
            in[i] = Packet{seq, now, static_cast<std::uint32_t>(len)};
            const std::int64_t t0 = std::max(tat, now);
            if (t0 - now <= (kBurst - len) * 1000) {
                tat = t0 + len * 1000;
            } else {
                expect.insert(seq);
                ++ref_drops;
            }
            ++seq;
        }
        const std::size_t nd = e.ingest(in, n, now, dropped);
        ASSERT_EQ(nd, expect.size()) << "burst " << b;
        for (std::size_t i = 0; i < nd; ++i)
            ASSERT_TRUE(expect.count(dropped[i].seq));
        now += static_cast<TimeNs>(rng() % (5 * kNsPerMs));  // ~1.3x the rate on average
    }
    EXPECT_EQ(e.snapshot().drops[DropCause::policer], ref_drops);
    EXPECT_GT(ref_drops, 1000u);
}

TEST(Limiter, NoneNeverDrops) {
    LinkParams p = limiter_params(Limiter::none, 1e3);
    Emulator<Packet> e(p);
    std::vector<Packet> in(10'000);
    for (std::uint64_t i = 0; i < in.size(); ++i)
        in[i] = Packet{i, 0, 1500};
    EXPECT_EQ(e.ingest(in.data(), in.size(), 0), 0u);
    EXPECT_EQ(e.in_flight(), in.size());
}

}  // namespace
}  // namespace linkem
