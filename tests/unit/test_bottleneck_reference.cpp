// linkem::Bottleneck against the reference queue disciplines (tests/support/aqm_reference.hpp,
// written from the RFCs' pseudocode): the same arrivals, packet by packet the same outcome
// (sent at the same time, marked or not; dropped by the AQM at the same time; dropped at a
// full queue), for random scenarios of each discipline and for the edge cases the RFCs name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "aqm_reference.hpp"
#include "linkem/bottleneck.hpp"
#include "linkem/rng.hpp"

namespace linkem::test {
namespace {

constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();

QueueKind model_kind(AqmKind k) {
    switch (k) {
        case AqmKind::droptail:
            return QueueKind::droptail;
        case AqmKind::codel:
            return QueueKind::codel;
        case AqmKind::fq_codel:
            return QueueKind::fq_codel;
        case AqmKind::pie:
            return QueueKind::pie;
    }
    return QueueKind::droptail;
}

QueueConfig model_config(const AqmConfig& c) {
    QueueConfig m;
    m.kind = model_kind(c.kind);
    m.limit_bytes = c.limit_bytes;
    m.limit_packets = c.limit_packets;
    m.codel_target = c.codel_target;
    m.codel_interval = c.codel_interval;
    m.fq_flows = c.fq_flows;
    m.fq_quantum = c.fq_quantum;
    m.pie_target = c.pie_target;
    m.pie_tupdate = c.pie_tupdate;
    m.pie_max_burst = c.pie_max_burst;
    m.ecn = c.ecn;
    return m;
}

const char* kind_name(AqmKind k) {
    switch (k) {
        case AqmKind::droptail:
            return "droptail";
        case AqmKind::codel:
            return "codel";
        case AqmKind::fq_codel:
            return "fq_codel";
        case AqmKind::pie:
            return "pie";
    }
    return "?";
}

std::string describe(const AqmConfig& c, double rate_bps) {
    std::ostringstream os;
    os << kind_name(c.kind) << " rate " << rate_bps << " bit/s, limit "
       << (c.limit_packets > 0 ? std::to_string(c.limit_packets) + " packets"
                               : std::to_string(c.limit_bytes) + " bytes")
       << ", ecn " << c.ecn;
    if (c.kind == AqmKind::codel || c.kind == AqmKind::fq_codel)
        os << ", target " << c.codel_target << " ns, interval " << c.codel_interval << " ns";
    if (c.kind == AqmKind::fq_codel) os << ", flows " << c.fq_flows << ", quantum " << c.fq_quantum;
    if (c.kind == AqmKind::pie)
        os << ", target " << c.pie_target << " ns, tupdate " << c.pie_tupdate << " ns, max_burst "
           << c.pie_max_burst << " ns";
    return os.str();
}

/// What the bottleneck tells its sink, as outcomes by the packet's index. A packet is
/// marked when the bottleneck had the sink mark it (mark() on an ECN-capable packet), at
/// enqueue (PIE) or at dequeue (CoDel, FQ-CoDel).
struct RecordingSink {
    std::vector<AqmOutcome>* out;
    std::vector<int>* reports;  // how many outcomes each packet got
    std::vector<int>* marks;    // how many times mark() set CE on it
    std::vector<bool>* sent_flag;
    const std::vector<AqmArrival>* arrivals;

    void sent(const std::size_t& i, TimeNs tau, TimeNs tx, bool marked) {
        (*out)[i] = AqmOutcome{AqmFate::sent, tau, (*marks)[i] > 0};
        (*sent_flag)[i] = marked;
        ++(*reports)[i];
        (void)tx;
    }
    void dropped(const std::size_t& i, TimeNs at, DropCause cause) {
        (*out)[i] = AqmOutcome{
            cause == DropCause::aqm ? AqmFate::dropped_aqm : AqmFate::dropped_full, at, false};
        ++(*reports)[i];
    }
    bool mark(const std::size_t& i) {
        if (!(*arrivals)[i].ect) return false;
        ++(*marks)[i];
        return true;
    }
};

struct ModelRun {
    std::vector<AqmOutcome> outcomes;
    std::vector<int> reports;
    std::vector<int> marks;
    std::vector<bool> sent_flag;
};

/// The arrivals through the model: each arrival by arrive() (which serves the dequeues
/// before it), with serve() called at random times in between when `interleave` is set
/// (before the next arrival: the result must not change), then serve() to the end.
ModelRun run_model(const AqmConfig& c, double rate_bps, const std::vector<AqmArrival>& a,
                   std::uint64_t seed, bool interleave) {
    ModelRun r;
    r.outcomes.resize(a.size());
    r.reports.assign(a.size(), 0);
    r.marks.assign(a.size(), 0);
    r.sent_flag.assign(a.size(), false);
    RecordingSink sink{&r.outcomes, &r.reports, &r.marks, &r.sent_flag, &a};
    Bottleneck<std::size_t> b;
    b.configure(model_config(c), rate_bps);
    b.seed(seed);
    Rng when(seed ^ 0x5eed);
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (interleave && i > 0 && a[i].enq > a[i - 1].enq && when.uniform() < 0.3) {
            const TimeNs gap = a[i].enq - a[i - 1].enq;  // serve up to before a[i].enq
            b.serve(a[i - 1].enq + static_cast<TimeNs>(when() % static_cast<std::uint64_t>(gap)),
                    sink);
        }
        const auto admission = b.arrive(a[i].enq, i, a[i].bytes, a[i].flow, sink);
        if (!admission.queued) {
            r.outcomes[i] = AqmOutcome{
                admission.cause == DropCause::aqm ? AqmFate::dropped_aqm : AqmFate::dropped_full,
                a[i].enq, false};
            ++r.reports[i];
        }
    }
    b.serve(kForever, sink);
    return r;
}

/// Compares the model with the reference; on the first mismatch, says where and both
/// outcomes.
::testing::AssertionResult same_outcomes(const AqmConfig& c, double rate_bps,
                                         const std::vector<AqmArrival>& a, std::uint64_t seed) {
    const std::vector<AqmOutcome> want = simulate(c, rate_bps, a, seed);
    for (bool interleave : {false, true}) {
        const ModelRun got = run_model(c, rate_bps, a, seed, interleave);
        for (std::size_t i = 0; i < a.size(); ++i) {
            // One outcome, marked at most once; sent(..., marked = true) only for a packet
            // the sink marked.
            if (got.reports[i] == 1 && got.marks[i] <= 1 &&
                (!got.sent_flag[i] || got.marks[i] == 1) && got.outcomes[i] == want[i])
                continue;
            return ::testing::AssertionFailure()
                   << describe(c, rate_bps) << ", seed " << seed << ", " << a.size() << " packets"
                   << (interleave ? ", serve() between arrivals" : "")
                   << ": first mismatch at packet " << i << " (enq " << a[i].enq << " ns, "
                   << a[i].bytes << " bytes, flow " << a[i].flow << ", ect " << a[i].ect
                   << "): model " << to_string(got.outcomes[i]) << " (" << got.reports[i]
                   << " reports, " << got.marks[i] << " marks, sent's flag " << got.sent_flag[i]
                   << "), reference " << to_string(want[i]);
        }
    }
    return ::testing::AssertionSuccess();
}

// ---- random scenarios --------------------------------------------------------------------

struct Scenario {
    AqmConfig config;
    double rate_bps;
    std::vector<AqmArrival> arrivals;
    std::uint64_t seed;
};

Scenario random_scenario(AqmKind kind, Rng& rng) {
    auto uniform_int = [&](std::int64_t lo, std::int64_t hi) {  // [lo, hi]
        return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
    };
    auto log_uniform = [&](double lo, double hi) {
        return lo * std::exp(rng.uniform() * std::log(hi / lo));
    };
    Scenario s;
    AqmConfig& c = s.config;
    c.kind = kind;
    c.ecn = rng.uniform() < 0.5;
    if (rng.uniform() < 0.5) {
        c.limit_packets = static_cast<std::uint32_t>(rng.uniform() < 0.1 ? uniform_int(1, 3)
                                                                         : uniform_int(4, 1000));
    } else {
        c.limit_packets = 0;
        c.limit_bytes = static_cast<std::uint64_t>(uniform_int(4000, 1'500'000));
    }
    c.codel_target = uniform_int(kNsPerMs / 2, 20 * kNsPerMs);
    c.codel_interval = uniform_int(10 * kNsPerMs, 200 * kNsPerMs);
    const int flows = static_cast<int>(uniform_int(1, 50));
    c.fq_flows = static_cast<std::uint32_t>(rng.uniform() < 0.5 ? uniform_int(flows, 1024) : flows);
    c.fq_quantum = static_cast<std::uint32_t>(uniform_int(64, 3000));
    c.pie_target = uniform_int(kNsPerMs, 30 * kNsPerMs);
    c.pie_tupdate = uniform_int(kNsPerMs, 30 * kNsPerMs);
    c.pie_max_burst = rng.uniform() < 0.2 ? 0 : uniform_int(0, 300 * kNsPerMs);

    // Rates where a byte takes a whole number of microseconds, with arrivals on a microsecond
    // grid, make arrivals and dequeues meet at equal times; the others do not.
    const bool grid = rng.uniform() < 0.3;
    s.rate_bps = grid ? 8e6 / static_cast<double>(uniform_int(1, 8)) : log_uniform(1e6, 1e9);
    const double load = 0.5 + 2.5 * rng.uniform();
    const std::size_t n = static_cast<std::size_t>(uniform_int(500, 4000));
    // Each flow's packet sizes: a fixed size, or 64..1518 at random.
    std::vector<std::int64_t> flow_size(flows);
    std::vector<double> flow_ect(flows);
    for (int f = 0; f < flows; ++f) {
        flow_size[f] = rng.uniform() < 0.5 ? uniform_int(64, 1518) : 0;
        flow_ect[f] = rng.uniform() < 0.3 ? 0.0 : rng.uniform() < 0.5 ? 1.0 : rng.uniform();
    }
    const double mean_bytes = 791;
    const double mean_gap_ns = mean_bytes * 8e9 / s.rate_bps / load;
    TimeNs t = uniform_int(0, 1'000'000);
    const double burstiness = rng.uniform();  // share of packets that come back to back
    for (std::size_t i = 0; i < n; ++i) {
        if (rng.uniform() >= burstiness) {
            const double gap = -std::log(rng.uniform_pos()) * mean_gap_ns / (1 - burstiness + 1e-3);
            t += static_cast<TimeNs>(gap);
            if (grid) t = (t + 999) / 1000 * 1000;
        }
        AqmArrival a;
        a.enq = t;
        a.flow = static_cast<std::uint32_t>(uniform_int(0, flows - 1));
        a.bytes = static_cast<std::uint32_t>(flow_size[a.flow] > 0 ? flow_size[a.flow]
                                                                   : uniform_int(64, 1518));
        a.ect = rng.uniform() < flow_ect[a.flow];
        s.arrivals.push_back(a);
    }
    s.seed = rng() | 1;
    return s;
}

struct Tally {
    std::size_t sent = 0, marked = 0, aqm = 0, full = 0;
    void add(const std::vector<AqmOutcome>& r) {
        for (const AqmOutcome& o : r) {
            sent += o.kind == AqmFate::sent;
            marked += o.marked;
            aqm += o.kind == AqmFate::dropped_aqm;
            full += o.kind == AqmFate::dropped_full;
        }
    }
};

void compare_random(AqmKind kind, std::uint64_t master_seed, int scenarios) {
    Rng rng(master_seed);
    Tally tally;
    int failed = 0;
    for (int k = 0; k < scenarios; ++k) {
        const Scenario s = random_scenario(kind, rng);
        const auto same = same_outcomes(s.config, s.rate_bps, s.arrivals, s.seed);
        if (!same && ++failed <= 3)
            ADD_FAILURE() << "scenario " << k << " of master seed " << master_seed << ": "
                          << same.message();
        tally.add(simulate(s.config, s.rate_bps, s.arrivals, s.seed));
    }
    EXPECT_EQ(failed, 0) << "of " << scenarios << " scenarios";
    // The scenarios exercise what they are meant to.
    std::cout << "[ " << kind_name(kind) << " ] " << scenarios << " scenarios: " << tally.sent
              << " sent (" << tally.marked << " marked), " << tally.aqm << " AQM drops, "
              << tally.full << " queue-full drops\n";
    EXPECT_GT(tally.sent, 0u);
    EXPECT_GT(tally.full, 0u);
    if (kind != AqmKind::droptail) {
        EXPECT_GT(tally.aqm, 0u);
        EXPECT_GT(tally.marked, 0u);
    }
}

TEST(BottleneckReference, DropTailRandomScenarios) {
    compare_random(AqmKind::droptail, 11, 150);
}
TEST(BottleneckReference, CoDelRandomScenarios) {
    compare_random(AqmKind::codel, 12, 150);
}
TEST(BottleneckReference, FqCoDelRandomScenarios) {
    compare_random(AqmKind::fq_codel, 13, 150);
}
TEST(BottleneckReference, PieRandomScenarios) {
    compare_random(AqmKind::pie, 14, 150);
}

// ---- the edge cases ----------------------------------------------------------------------

constexpr double kRate = 12e6;  // 1500 bytes: 1 ms
constexpr TimeNs ms(double v) {
    return static_cast<TimeNs>(v * 1e6);
}

AqmConfig config(AqmKind kind) {
    AqmConfig c;
    c.kind = kind;
    c.limit_packets = 10000;
    return c;
}

/// `bytes`-byte packets on `flow` every `gap` from `from` to before `to`.
void stream(std::vector<AqmArrival>& a, TimeNs from, TimeNs to, TimeNs gap, std::uint32_t bytes,
            std::uint32_t flow = 0, bool ect = false) {
    for (TimeNs t = from; t < to; t += gap)
        a.push_back({t, bytes, flow, ect});
}

std::vector<AqmArrival> by_time(std::vector<AqmArrival> a) {
    std::stable_sort(a.begin(), a.end(),
                     [](const AqmArrival& x, const AqmArrival& y) { return x.enq < y.enq; });
    return a;
}

TEST(BottleneckReference, EqualTimesDequeueBeforeArrival) {
    AqmConfig c = config(AqmKind::droptail);
    c.limit_packets = 1;
    std::vector<AqmArrival> a{{0, 1500, 0, false},
                              {ms(0.5), 1500, 0, false},
                              {ms(1), 1500, 0, false},
                              {ms(1.5), 1500, 0, false}};
    EXPECT_TRUE(same_outcomes(c, kRate, a, 1));
    for (AqmKind k : {AqmKind::codel, AqmKind::fq_codel, AqmKind::pie}) {
        c.kind = k;
        EXPECT_TRUE(same_outcomes(c, kRate, a, 1));
    }
}

TEST(BottleneckReference, CoDelConstantOverloadAndEcn) {
    std::vector<AqmArrival> a;
    stream(a, 0, ms(2000), ms(0.5), 1500);
    for (AqmKind k : {AqmKind::codel, AqmKind::fq_codel}) {
        AqmConfig c = config(k);
        EXPECT_TRUE(same_outcomes(c, kRate, a, 1));
        c.ecn = true;
        EXPECT_TRUE(same_outcomes(c, kRate, a, 1));
        std::vector<AqmArrival> e;
        stream(e, 0, ms(2000), ms(0.5), 1500, 0, true);
        EXPECT_TRUE(same_outcomes(c, kRate, e, 1));
        // half of them ECN-capable
        for (std::size_t i = 0; i < e.size(); i += 2)
            e[i].ect = false;
        EXPECT_TRUE(same_outcomes(c, kRate, e, 1));
    }
}

TEST(BottleneckReference, CoDelReentersTheDroppingStateWithinSixteenIntervals) {
    // Overload, a pause that lets the queue empty, overload again: the second dropping
    // state starts within 16 intervals of the last drop (count = delta), and once more
    // after a long pause (count = 1).
    std::vector<AqmArrival> a;
    stream(a, 0, ms(600), ms(0.5), 1500);
    stream(a, ms(1200), ms(1800), ms(0.5), 1500);
    stream(a, ms(5000), ms(5600), ms(0.5), 1500);
    const auto r = simulate(config(AqmKind::codel), kRate, a, 1);
    std::size_t drops_second = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        drops_second +=
            a[i].enq >= ms(1200) && a[i].enq < ms(1800) && r[i].kind == AqmFate::dropped_aqm;
    EXPECT_GT(drops_second, 0u);
    for (AqmKind k : {AqmKind::codel, AqmKind::fq_codel}) {
        AqmConfig c = config(k);
        EXPECT_TRUE(same_outcomes(c, kRate, a, 1));
        c.ecn = true;
        std::vector<AqmArrival> e = a;
        for (std::size_t i = 0; i < e.size(); i += 3)
            e[i].ect = true;
        EXPECT_TRUE(same_outcomes(c, kRate, e, 1));
    }
}

TEST(BottleneckReference, CoDelMaxPacketBacklog) {
    // The link slower than TARGET per packet: the queue's last MAXPACKET bytes are never
    // dropped.
    std::vector<AqmArrival> a;
    stream(a, 0, ms(3000), ms(10), 1518);
    stream(a, ms(5), ms(3000), ms(40), 64, 1);
    EXPECT_TRUE(same_outcomes(config(AqmKind::codel), 1e6, by_time(a), 1));
    AqmConfig f = config(AqmKind::fq_codel);
    f.fq_flows = 2;
    EXPECT_TRUE(same_outcomes(f, 1e6, by_time(a), 1));
}

TEST(BottleneckReference, FqCoDelSparseFlowsAndNewFlowsThatEmpty) {
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 8;
    // A bulk flow at 1.5x the rate, a sparse flow of small packets (each a new flow that
    // empties at once, moved to old while the bulk flow is there), and a second bulk flow of
    // small packets that comes and goes.
    std::vector<AqmArrival> a;
    stream(a, 0, ms(1500), ms(1.0 / 1.5), 1500, 0);
    stream(a, ms(0.3), ms(3000), ms(7), 100, 1, true);
    stream(a, ms(200), ms(700), ms(0.2), 300, 2);
    stream(a, ms(1600), ms(1650), ms(0.05), 64, 3, true);
    const auto arrivals = by_time(a);
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
    c.ecn = true;
    c.fq_quantum = 300;
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
    c.limit_packets = 50;
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
    c.limit_packets = 0;
    c.limit_bytes = 20000;
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
}

TEST(BottleneckReference, FqCoDelDropsInBatchesAtItsLimit) {
    // A flood of small packets in one flow at 20x the rate beside a TCP-like flow: at the
    // limit each search drops 64 of the flood's packets (half its bytes is more); with a
    // byte limit and odd sizes, half the fat flow's bytes.
    AqmConfig c = config(AqmKind::fq_codel);
    c.fq_flows = 16;
    c.limit_packets = 1000;
    std::vector<AqmArrival> a;
    stream(a, 0, ms(400), ms(0.005), 75, 3);
    stream(a, ms(0.2), ms(400), ms(1.2), 1500, 9);
    stream(a, ms(100), ms(300), ms(0.03), 333, 5);
    const auto arrivals = by_time(a);
    const auto r = simulate(c, kRate, arrivals, 1);
    std::size_t full = 0;
    for (const auto& o : r)
        full += o.kind == AqmFate::dropped_full;
    EXPECT_GT(full, 1000u);
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
    c.limit_packets = 0;
    c.limit_bytes = 60001;
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
}

TEST(BottleneckReference, PieBurstAllowanceAndSteadyOverload) {
    std::vector<AqmArrival> a;
    stream(a, 0, ms(150), ms(0.5), 1500);                  // a 150 ms burst at 2x
    stream(a, ms(400), ms(4000), ms(0.6), 1500, 0, true);  // then a long overload
    const auto arrivals = by_time(a);
    AqmConfig c = config(AqmKind::pie);
    for (std::uint64_t seed : {1, 2, 3}) {
        EXPECT_TRUE(same_outcomes(c, kRate, arrivals, seed));
        c.ecn = true;
        EXPECT_TRUE(same_outcomes(c, kRate, arrivals, seed));
        c.ecn = false;
    }
    c.pie_max_burst = 0;
    EXPECT_TRUE(same_outcomes(c, kRate, arrivals, 1));
    const auto r = simulate(c, kRate, arrivals, 1);
    EXPECT_TRUE(std::any_of(r.begin(), r.end(),
                            [](const AqmOutcome& o) { return o.kind == AqmFate::dropped_aqm; }));
}

}  // namespace
}  // namespace linkem::test
