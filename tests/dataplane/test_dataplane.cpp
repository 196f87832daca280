// The data plane in process, on ring-backed ports: the test injects frames that carry a
// sequence number and their send time (now_ns(), the data plane's own TSC clock) and reads
// back what the data plane transmitted. EAL: initialised once for the process, --no-huge,
// unique --file-prefix, four worker lcores (two workers per direction need four).
//
// Timing tolerances are wide enough for a machine of 2 CPUs shared with builds, where the
// busy-polling lcore and the test thread get preempted now and then; see each test.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "linkem/capture.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/dataplane/eal.hpp"
#include "linkem/dataplane/virtual_port.hpp"
#include "pool_check.hpp"
#include "tshark.hpp"

namespace linkem::dp {
namespace {

Eal* g_eal = nullptr;
bool g_hold_mbufs = false;

class EalEnvironment : public ::testing::Environment {
  public:
    void SetUp() override {
        EalOptions o;
        o.program = "linkem_dataplane_tests";
        o.worker_lcores = 4;
        o.memory_mib = 768;
        o.file_prefix = "linkem-dptest-" + std::to_string(getpid());
        o.raw_args = {"--log-level", "lib.eal:warning"};
        eal_ = std::make_unique<Eal>(o);
        g_eal = eal_.get();
    }
    void TearDown() override {
        g_eal = nullptr;
        eal_.reset();
    }

  private:
    std::unique_ptr<Eal> eal_;
};

// Frame: Ethernet header (local experimental EtherType; the flow tag in the source
// address, so that flows spread over a multi-queue port's queues), then seq, send time,
// flow tag.
constexpr std::size_t kSeqOff = 14, kTimeOff = 22, kTagOff = 30;

constexpr std::uint16_t kExperimental = 0x88B5;  // local experimental EtherType

void write_frame(std::span<std::uint8_t> f, std::uint64_t seq, TimeNs sent, std::uint32_t tag,
                 std::uint16_t ethertype = kExperimental) {
    std::memset(f.data(), 0, 14);
    f[0] = 0x02;  // locally administered unicast
    f[6] = 0x02;
    std::memcpy(f.data() + 7, &tag, 4);
    f[12] = static_cast<std::uint8_t>(ethertype >> 8);
    f[13] = static_cast<std::uint8_t>(ethertype);
    std::memcpy(f.data() + kSeqOff, &seq, 8);
    std::memcpy(f.data() + kTimeOff, &sent, 8);
    std::memcpy(f.data() + kTagOff, &tag, 4);
}

struct Probe {
    std::uint64_t seq;
    TimeNs sent;
    TimeNs received;
    std::size_t length = 0;  // of the frame as received
    double delay_ms() const { return static_cast<double>(received - sent) / 1e6; }
};

// One stream: frames sent paced into `in`, received from `out`.
struct Flow {
    Flow(VirtualPort* i, VirtualPort* o, std::uint64_t n, double rate, std::size_t len = 64)
        : in(i), out(o), count(n), pps(rate), length(len) {
        static std::uint32_t next_tag = 1;
        tag = next_tag++;
        // Room for every probe, its pages touched now: growing the vector while receiving
        // (a copy of megabytes into fresh pages) stalled this thread for up to 20 ms, and the
        // frames that came out meanwhile were recorded as that much late.
        got.resize(n);
        got.clear();
    }
    std::uint32_t tag;
    VirtualPort* in;
    VirtualPort* out;
    std::uint64_t count;  // frames to send
    double pps;
    std::size_t length;
    std::uint16_t ethertype = kExperimental;  // what a traffic class can tell flows apart by
    std::uint64_t sent = 0;
    std::vector<Probe> got;
};

// Stretches in which this thread did not run its polling loop (preempted): frames that
// came out meanwhile were received late by us, not sent late by the data plane.
struct Gaps {
    static constexpr DurationNs kMin = 100 * kNsPerUs;  // shorter ones are not recorded
    // How long after a gap this thread is still busy receiving what piled up meanwhile.
    static constexpr DurationNs kCatchUp = 100 * kNsPerUs;
    std::vector<std::pair<TimeNs, TimeNs>> spans;  // [from, to]
    DurationNs total = 0;
    // Whether a frame due at `due` and received at `received` may have waited for us: it
    // was received right after a gap that ended after it was due.
    Gaps& operator+=(const Gaps& o) {
        spans.insert(spans.end(), o.spans.begin(), o.spans.end());
        total += o.total;
        return *this;
    }
    bool explains(TimeNs due, TimeNs received) const {
        for (const auto& [from, to] : spans)
            if (to >= due && received >= to && received - to <= kCatchUp) return true;
        return false;
    }
};

// Time all threads of this process have spent runnable but waiting for a CPU, from
// /proc/self/task/*/schedstat (its second field); -1 when the kernel does not provide it.
// The difference across a run says how much of it the data-plane lcore and this thread
// lost to other work on the machine.
DurationNs runqueue_wait() {
    DurationNs sum = 0;
    bool any = false;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        std::ifstream in(e.path() / "schedstat");
        long long on_cpu = 0, waiting = 0;
        if (in >> on_cpu >> waiting) {
            sum += waiting;
            any = true;
        }
    }
    return any ? sum : -1;
}

// What the machine took from a flow, from the run's own measurements: every data-plane
// stall in both directions (their number and total time, not only the longest), the time
// this process's threads (the polling lcores and the test's sending and receiving thread)
// waited for a CPU, and this thread's own gaps (its lateness against its sending schedule
// and in reading what came out). A timing bound is only meaningful when all are small;
// exact properties (every frame once, intact, never early, order, conservation, pool
// whole) do not depend on them and are checked in every run.
class Disturbance {
  public:
    explicit Disturbance(const Dataplane& dp)
        : dp_(dp), t0_(now_ns()), wait0_(runqueue_wait()), s0_(dp.stats()) {}
    /// The flow is over; `gaps`: those of the thread that sent and received it.
    void finish(const Gaps& gaps) {
        run_ = now_ns() - t0_;
        waited_ = wait0_ < 0 ? 0 : runqueue_wait() - wait0_;
        const DataplaneStats s1 = dp_.stats();
        for (unsigned d = 0; d < s1.directions; ++d) {
            stalls_ += s1.dir[d].stalls - s0_.dir[d].stalls;
            stall_ns_ += static_cast<DurationNs>(s1.dir[d].stall_ns - s0_.dir[d].stall_ns);
            if (s1.dir[d].longest_stall_ns > s0_.dir[d].longest_stall_ns)
                longest_ = std::max(longest_, static_cast<DurationNs>(s1.dir[d].longest_stall_ns));
        }
        directions_ = s1.directions;
        for (unsigned d = 0; d < s1.directions; ++d)
            full_ += s1.dir[d].counters.drops[DropCause::buffer_full] -
                     s0_.dir[d].counters.drops[DropCause::buffer_full];
        gaps_ = gaps.total;
        gap_n_ = gaps.spans.size();
        std::printf(
            "disturbance over the %.0f ms flow: %llu data-plane stalls, %.3f ms in all%s; "
            "our threads waited %.3f ms for a CPU; this thread's gaps %zu, %.3f ms\n",
            static_cast<double>(run_) / 1e6, static_cast<unsigned long long>(stalls_),
            static_cast<double>(stall_ns_) / 1e6,
            longest_ ? (", longest " + std::to_string(longest_ / kNsPerUs) + " us").c_str() : "",
            static_cast<double>(waited_) / 1e6, gap_n_, static_cast<double>(gaps_) / 1e6);
    }
    /// What a timing bound judges. `spread`: a tail or a standard deviation, which many
    /// short stalls widen (each makes the frames due during it a little late) although
    /// their sum is small. `centre`: a median, a mean or a rate, which they do not move:
    /// only the time the machine took in all, a long stall or the test's own threads'
    /// waits do.
    enum class Bound { spread, centre };
    /// Why the run was too disturbed for the timing bound; empty when it was not.
    /// `share`: the part of the flow (per direction for stalls) the machine may take.
    std::string reason(double share = 0.01, Bound bound = Bound::spread) const {
        std::string r;
        auto add = [&](const std::string& s) { r += (r.empty() ? "" : "; ") + s; };
        const double run = static_cast<double>(run_);
        const double per_dir = run * std::max(1u, directions_);
        if (static_cast<double>(stall_ns_) > share * per_dir)
            add("the data plane stalled " + ms(stall_ns_) + " in " + std::to_string(stalls_) +
                " stalls (over " + pct(share) + " of the flow)");
        // Quiet here: ~12 stalls per second of 0.1-3 ms.
        else if (bound == Bound::spread && static_cast<double>(stalls_) > 40 * per_dir / 1e9)
            add("the data plane stalled " + std::to_string(stalls_) + " times (" + ms(stall_ns_) +
                ")");
        if (longest_ >= 10 * kNsPerMs) add("one stall lasted " + ms(longest_));
        if (full_) add(std::to_string(full_) + " frames dropped for a full buffer");
        if (static_cast<double>(waited_) > share * run)
            add("our threads waited " + ms(waited_) + " for a CPU (over " + pct(share) +
                " of the flow)");
        if (static_cast<double>(gaps_) > 2 * share * run)
            add("the sending and receiving thread was preempted for " + ms(gaps_) + " (over " +
                pct(2 * share) + ")");
        return r;
    }
    DurationNs stall_ns() const { return stall_ns_; }
    std::uint64_t stalls() const { return stalls_; }

  private:
    static std::string ms(DurationNs ns) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f ms", static_cast<double>(ns) / 1e6);
        return b;
    }
    static std::string pct(double x) {
        char b[32];
        std::snprintf(b, sizeof b, "%g %%", x * 100);
        return b;
    }
    const Dataplane& dp_;
    TimeNs t0_;
    DurationNs wait0_;
    DataplaneStats s0_;
    DurationNs run_ = 0, waited_ = 0, stall_ns_ = 0, longest_ = 0, gaps_ = 0;
    std::uint64_t stalls_ = 0, full_ = 0;
    std::size_t gap_n_ = 0;
    unsigned directions_ = 1;
};

std::string join_reasons(std::string a, const std::string& b) {
    if (a.empty()) return b;
    if (!b.empty()) a += "; " + b;
    return a;
}

// The verdict on a timing bound, one greppable line ("timing bound: checked (...)" or
// "timing bound: skipped (...: why)"); a disturbed run skips the rest of the test, whose
// exact checks must come before.
#define TIMING_BOUND_OR_SKIP(what, why)                                             \
    do {                                                                            \
        const std::string why_ = (why);                                             \
        if (!why_.empty()) {                                                        \
            std::printf("timing bound: skipped (%s: %s)\n", what, why_.c_str());    \
            GTEST_SKIP() << "machine busy: " << (what) << " not checked: " << why_; \
        }                                                                           \
        std::printf("timing bound: checked (%s)\n", what);                          \
    } while (0)

// Sends every flow's frames paced at its rate (catching up in bursts after a preemption,
// with the real send time) and collects what comes out (frames go to their flow by tag),
// until all frames are sent and either everything has come back or nothing has been sent
// or received for `drain_time` while `dp` (when given) holds none of them any more: on a
// loaded machine the data plane may fall seconds behind and still deliver every frame.
// `tick(now)`, when given, is called on every round of the loop. Returns this thread's own
// gaps.
// Whether the data plane still holds frames of these flows (queued, waiting to be sent, or
// not yet taken from an input ring).
bool holds_frames(const Dataplane& dp, const std::vector<Flow*>& flows) {
    const DataplaneStats s = dp.stats();
    for (unsigned d = 0; d < s.directions; ++d)
        if (s.dir[d].counters.in_flight + s.dir[d].tx_queued > 0) return true;
    for (const Flow* f : flows)
        if (f->in->rx_backlog() > 0) return true;
    return false;
}

Gaps run_flows(std::vector<Flow*> flows, DurationNs drain_time,
               const std::function<void(TimeNs)>& tick = {}, const Dataplane* dp = nullptr) {
    const TimeNs start = now_ns();
    TimeNs last_progress = start;
    Gaps gaps;
    TimeNs prev = start;
    std::vector<VirtualPort*> outs;
    for (Flow* f : flows)
        if (std::find(outs.begin(), outs.end(), f->out) == outs.end()) outs.push_back(f->out);
    std::uint64_t strays = 0;
    for (;;) {
        const TimeNs now = now_ns();
        if (now - prev > Gaps::kMin) {
            gaps.spans.emplace_back(prev, now);
            gaps.total += now - prev;
        }
        prev = now;
        if (tick) tick(now);
        bool all_sent = true, all_back = true;
        for (Flow* f : flows) {
            const std::uint64_t due = std::min<std::uint64_t>(
                f->count,
                static_cast<std::uint64_t>(static_cast<double>(now - start) * f->pps / 1e9) + 1);
            if (f->sent < due) {
                const std::size_t n = f->in->send_burst(
                    due - f->sent, f->length, [&](std::size_t i, std::span<std::uint8_t> b) {
                        write_frame(b, f->sent + i, now, f->tag, f->ethertype);
                    });
                f->sent += n;
                last_progress = now;
            }
        }
        for (VirtualPort* out : outs) {
            out->receive(
                [&](std::span<const std::uint8_t> b) {
                    Probe p;
                    std::uint32_t tag;
                    std::memcpy(&p.seq, b.data() + kSeqOff, 8);
                    std::memcpy(&p.sent, b.data() + kTimeOff, 8);
                    std::memcpy(&tag, b.data() + kTagOff, 4);
                    p.received = now_ns();
                    p.length = b.size();
                    last_progress = p.received;
                    for (Flow* f : flows)
                        if (f->tag == tag) {
                            f->got.push_back(p);
                            return;
                        }
                    ++strays;
                },
                256);
        }
        for (Flow* f : flows) {
            all_sent = all_sent && f->sent == f->count;
            all_back = all_back && f->got.size() == f->count;
        }
        if (all_sent && (all_back || now - last_progress > drain_time)) {
            if (all_back || !dp || !holds_frames(*dp, flows)) break;
            last_progress = now - drain_time + 20 * kNsPerMs;  // look again in 20 ms
        }
        if (now - start > 60 * kNsPerSec) {
            ADD_FAILURE() << "traffic did not complete within 60 s";
            for (Flow* f : flows)
                ADD_FAILURE() << "flow: sent " << f->sent << " of " << f->count << ", got "
                              << f->got.size() << ", backlog " << f->in->rx_backlog();
            break;
        }
    }
    EXPECT_EQ(strays, 0u) << "frames of no running flow came out";
    return gaps;
}

DataplaneConfig two_port(const VirtualPort& a, const VirtualPort& b, const LinkParams& p) {
    DataplaneConfig c;
    c.port_a = a.name();
    c.port_b = b.name();
    c.workers = Workers{.shared = true};
    // 2^16: a direction holds ~28 k packets, a second and more of the tests' flows, so a
    // data plane held back for a second by a loaded machine still has room for the backlog.
    c.mbufs = 65536;
    c.hold_mbufs = g_hold_mbufs;
    c.link = {p, p};
    return c;
}

void expect_conservation(const DataplaneStats& s, unsigned dirs) {
    for (unsigned d = 0; d < dirs; ++d) {
        const CounterSnapshot& c = s.dir[d].counters;
        SCOPED_TRACE(d == 0 ? "a_to_b" : "b_to_a");
        EXPECT_EQ(c.packets_in, c.packets_out + c.drops.total() + c.in_flight);
        EXPECT_EQ(c.packets_out, s.dir[d].tx_sent + s.dir[d].tx_queued);
    }
}

// Frames direction `dir` dropped because its buffer was full. Only a data plane held back by
// the machine for longer than its pool holds traffic drops so (a finite buffer, as
// documented); every other frame sent must come out.
std::uint64_t full_drops(const Dataplane& dp, unsigned dir) {
    const std::uint64_t n = dp.stats().dir[dir].counters.drops[DropCause::buffer_full];
    if (n)
        std::printf("direction %u: %llu frames dropped for a full buffer\n", dir,
                    static_cast<unsigned long long>(n));
    return n;
}

bool in_order(const std::vector<Probe>& got) {
    for (std::size_t i = 1; i < got.size(); ++i)
        if (got[i].seq <= got[i - 1].seq) return false;
    return true;
}

// What the machine adds: the zero-delay latency through the data plane right now. The
// data-plane lcore and this thread both busy-poll; on this 2-CPU machine shared with
// compilers and benchmarks either is often preempted for milliseconds (we measured the
// lcore getting a quarter of a CPU and a zero-delay median latency of 12 ms under a load
// of 8). Timing tolerances of a few hundred microseconds are only testable when that
// noise is small; otherwise the tests check what does not depend on the scheduler (no
// packet early, none lost, order) and skip the tight bounds, saying why.
struct Noise {
    double p99_us = 0;
    bool quiet() const { return p99_us <= 150; }
    std::string reason() const {
        return quiet() ? ""
                       : "zero-delay latency p99 " + std::to_string(p99_us) + " us before the flow";
    }
};

Noise measure_noise(Dataplane& dp, VirtualPort& a, VirtualPort& b, double pps) {
    LinkParams zero;
    zero.distribution = Distribution::constant;
    const LinkConfig keep = dp.link();
    EXPECT_TRUE(dp.wait_applied(dp.apply({zero, zero}), std::chrono::seconds(10)));
    Flow f(&a, &b, static_cast<std::uint64_t>(pps * 0.3), pps);
    // Until the data plane holds none of the probe's frames: one still queued when the test's
    // own flow starts would come out in it as a frame of no running flow.
    run_flows({&f}, 1000 * kNsPerMs, {}, &dp);
    EXPECT_TRUE(dp.wait_applied(dp.apply(keep), std::chrono::seconds(10)));
    std::vector<double> lat;
    for (const Probe& pr : f.got)
        lat.push_back(pr.delay_ms() * 1000);
    std::sort(lat.begin(), lat.end());
    Noise n;
    n.p99_us = lat.empty() ? 1e9 : lat[lat.size() * 99 / 100];
    std::printf("scheduler noise: zero-delay latency p50 %.1f us, p99 %.1f us (%s)\n",
                lat.empty() ? 0 : lat[lat.size() / 2], n.p99_us,
                n.quiet() ? "quiet: tight timing checks on" : "busy: tight timing checks off");
    return n;
}

// Waits until direction `dir` has taken n packets in (the lcore may be preempted: beside two
// loaded ctest runs it was held up for over 5 s, so up to 30 s).
bool wait_ingested(const Dataplane& dp, unsigned dir, std::uint64_t n) {
    const TimeNs until = now_ns() + 30 * kNsPerSec;
    while (dp.stats().dir[dir].counters.packets_in < n)
        if (now_ns() > until) return false;
    return true;
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

// -----------------------------------------------------------------------------------------
// Every packet that enters is accounted for: sent on, dropped with a cause, or in flight.
TEST(Dataplane, ConservationBothDirections) {
    VirtualPort a(*g_eal, "cons_a"), b(*g_eal, "cons_b");
    LinkParams ab;
    ab.mean_delay = 2 * kNsPerMs;
    ab.jitter = 1 * kNsPerMs;
    ab.loss_model = LossModel::bernoulli;
    ab.loss_probability = 0.05;
    ab.seed = 1;
    LinkParams ba;
    ba.mean_delay = 1 * kNsPerMs;
    ba.distribution = Distribution::constant;
    ba.loss_model = LossModel::gilbert_elliott;
    ba.ge_p = 0.01;
    ba.ge_r = 0.3;
    ba.seed = 2;
    DataplaneConfig cfg = two_port(a, b, ab);
    cfg.link.b_to_a = ba;
    Dataplane dp(*g_eal, cfg);
    dp.start();
    Flow fab(&a, &b, 20000, 20000), fba(&b, &a, 20000, 20000);
    run_flows({&fab, &fba}, 1000 * kNsPerMs, {}, &dp);
    // Then stop with packets still queued: they count as in flight. The longest delay
    // allowed, so that none of them falls due before the stop however long a loaded machine
    // keeps this thread from running (any that left would wait in a ring no one reads).
    LinkParams slow = ab;
    slow.mean_delay = ParamLimits::kMaxDelay;
    ASSERT_TRUE(dp.wait_applied(dp.apply({slow, ba}), std::chrono::seconds(10)));
    Flow late(&a, &b, 500, 50000);
    run_flows({&late}, 20 * kNsPerMs);
    ASSERT_TRUE(wait_ingested(dp, 0, fab.sent + late.sent));
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    const DataplaneStats s = dp.stats();
    expect_conservation(s, 2);
    const CounterSnapshot& c0 = s.dir[0].counters;
    const CounterSnapshot& c1 = s.dir[1].counters;
    EXPECT_EQ(c0.packets_in, fab.sent + late.sent);
    EXPECT_EQ(c1.packets_in, fba.sent);
    EXPECT_EQ(s.dir[0].tx_sent, fab.got.size() + late.got.size());
    EXPECT_EQ(s.dir[1].tx_sent, fba.got.size());
    EXPECT_GT(c0.in_flight, 400u);  // the 500 late ones, less the 5% loss
    EXPECT_GT(c0.drops[DropCause::loss], 0u);
    EXPECT_GT(c1.drops[DropCause::loss], 0u);
    EXPECT_EQ(c0.drops[DropCause::buffer_full] + c1.drops[DropCause::buffer_full], 0u);
    EXPECT_EQ(s.port[0].rx_nombuf + s.port[1].rx_nombuf, 0u);
}

// One seed for both directions: each draws from its own stream. Loss decisions depend only
// on a packet's place in its direction's sequence, not on timing, so with one shared stream
// both directions would drop exactly the same sequence numbers.
TEST(Dataplane, DirectionsWithOneSeedDrawIndependently) {
    VirtualPort a(*g_eal, "seed_a"), b(*g_eal, "seed_b");
    LinkParams p;
    p.mean_delay = 1 * kNsPerMs;
    p.distribution = Distribution::constant;
    p.loss_model = LossModel::bernoulli;
    p.loss_probability = 0.5;
    p.seed = 9;
    Dataplane dp(*g_eal, two_port(a, b, p));
    EXPECT_EQ(dp.seed(0), 9u);
    EXPECT_EQ(dp.seed(1), 9u);
    dp.start();
    Flow fab(&a, &b, 2000, 20000), fba(&b, &a, 2000, 20000);
    run_flows({&fab, &fba}, 200 * kNsPerMs, {}, &dp);
    dp.stop();
    auto seqs = [](const Flow& f) {
        std::vector<std::uint64_t> v;
        for (const Probe& pr : f.got)
            v.push_back(pr.seq);
        std::sort(v.begin(), v.end());
        return v;
    };
    const auto got_ab = seqs(fab), got_ba = seqs(fba);
    ASSERT_EQ(fab.sent, 2000u);
    ASSERT_EQ(fba.sent, 2000u);
    EXPECT_NEAR(static_cast<double>(got_ab.size()), 1000.0, 150.0);
    EXPECT_NEAR(static_cast<double>(got_ba.size()), 1000.0, 150.0);
    EXPECT_NE(got_ab, got_ba) << "both directions dropped the same packets";
}

// Correlated delays keep the order of arrival (FIFO).
TEST(Dataplane, CorrelatedKeepsOrder) {
    VirtualPort a(*g_eal, "fifo_a"), b(*g_eal, "fifo_b");
    LinkParams p;
    p.mean_delay = 5 * kNsPerMs;
    p.jitter = 2 * kNsPerMs;
    p.seed = 3;
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    Flow f(&a, &b, 20000, 20000);
    run_flows({&f}, 2000 * kNsPerMs, {}, &dp);
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    ASSERT_EQ(f.got.size() + full_drops(dp, 0), f.sent);
    EXPECT_TRUE(in_order(f.got));
    expect_conservation(dp.stats(), 2);
}

// Reordered delays go through the calendar queue, which keeps each packet's 64 ns bin in
// the low bits of its queued handle (next to the buffer's offset and the frame length):
// every frame comes out once, with its length and contents, none before it was sent, and
// in an order other than the sending one. Both directions, two frame lengths.
TEST(Dataplane, ReorderedDeliversEveryFrameIntact) {
    VirtualPort a(*g_eal, "reord_a"), b(*g_eal, "reord_b");
    LinkParams p;
    p.strategy = Strategy::reordered;
    p.mean_delay = 5 * kNsPerMs;
    p.jitter = 2 * kNsPerMs;
    p.seed = 11;
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    Flow ab(&a, &b, 30000, 30000, 64), ba(&b, &a, 30000, 30000, 1000);
    Disturbance dist(dp);
    dist.finish(run_flows({&ab, &ba}, 2000 * kNsPerMs, {}, &dp));
    dp.stop();
    std::vector<double> medians;
    EXPECT_EQ(test::pool_check(dp), "");
    for (Flow* f : {&ab, &ba}) {
        SCOPED_TRACE(f == &ab ? "a_to_b, 64 B" : "b_to_a, 1000 B");
        ASSERT_EQ(f->got.size() + full_drops(dp, f == &ab ? 0 : 1), f->sent);
        std::vector<bool> seen(f->sent, false);
        std::size_t inversions = 0, bad = 0;
        std::vector<double> d;
        for (std::size_t i = 0; i < f->got.size(); ++i) {
            const Probe& pr = f->got[i];
            if (pr.seq >= f->sent || seen[pr.seq] || pr.length != f->length ||
                pr.received < pr.sent) {
                ++bad;
                continue;
            }
            seen[pr.seq] = true;
            if (i > 0 && pr.seq < f->got[i - 1].seq) ++inversions;
            d.push_back(pr.delay_ms());
        }
        EXPECT_EQ(bad, 0u) << "frames out of range, twice, of the wrong length or early";
        EXPECT_GT(inversions, f->sent / 10) << "reordered mode reorders";
        medians.push_back(d.empty() ? 0 : quantile(d, 0.5));
    }
    expect_conservation(dp.stats(), 2);
    std::printf("reordered: median delay %.3f ms (a_to_b), %.3f ms (b_to_a)\n", medians[0],
                medians[1]);
    // Mean 5 ms, sd 2 ms; the median does not move with a preempted lcore's late tail, but
    // it does when the lcore or this thread lose the CPU for a good part of the flow.
    TIMING_BOUND_OR_SKIP("reordered median delay 5 +- 0.5 ms",
                         dist.reason(0.01, Disturbance::Bound::centre));
    for (double m : medians)
        EXPECT_NEAR(m, 5.0, 0.5);
}

// A constant delay is met by every packet: none is early (exact: the emulator schedules on
// the arrival timestamp taken after rx_burst) and, when the machine is quiet, 99 % are at
// most 200 us late. Not 100 %: on 2 shared CPUs, even at raised priority, a few tenths of
// a percent of the packets leave 0.2-1.6 ms late (docs/testing.md): preemptions of the lcore or of
// this thread, which the test cannot tell apart from a late data plane.
TEST(Dataplane, ConstantDelayPerPacket) {
    VirtualPort a(*g_eal, "const_a"), b(*g_eal, "const_b");
    LinkParams p;
    p.mean_delay = 5 * kNsPerMs;
    p.distribution = Distribution::constant;
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    const Noise noise = measure_noise(dp, a, b, 10000);
    Flow f(&a, &b, 20000, 10000);
    Disturbance dist(dp);
    const Gaps gaps = run_flows({&f}, 2000 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    ASSERT_EQ(f.got.size() + full_drops(dp, 0), f.sent);
    EXPECT_TRUE(in_order(f.got));
    std::vector<double> err;
    std::size_t early = 0, late = 0, ours = 0;  // late: by more than 200 us
    for (const Probe& pr : f.got) {
        err.push_back((pr.delay_ms() - 5.0) * 1000);
        if (err.back() < -1.0) ++early;
        if (err.back() > 200) {
            // Received right after this thread was preempted: our lateness, not the data
            // plane's (it may have sent the frame on time).
            if (gaps.explains(pr.sent + 5 * kNsPerMs, pr.received))
                ++ours;
            else
                ++late;
        }
    }
    std::printf(
        "constant 5 ms: error p0 %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us; "
        "%zu late frames received right after this thread's own %zu gaps\n",
        quantile(err, 0), quantile(err, 0.5), quantile(err, 0.99), quantile(err, 1), ours,
        gaps.spans.size());
    EXPECT_EQ(early, 0u) << "packets that left before their delay";
    // Each ms the lcore or this thread waits for a CPU makes ~10 frames late (10 kpps).
    TIMING_BOUND_OR_SKIP("constant delay: 99 % within 200 us",
                         join_reasons(noise.reason(), dist.reason(0.005)));
    // The data plane's own record of the time it did not run (stalls of 100 us or more, the
    // machine's, some 0.5 % of the time on a 2-CPU VM). A frame due during a stall leaves late,
    // so each 100 us of stall excuses one frame (10 kpps) beyond the 1%.
    const std::size_t excused = static_cast<std::size_t>(dist.stall_ns() / (100 * kNsPerUs));
    EXPECT_LE(late, f.got.size() / 100 + excused)
        << "packets more than 200 us late (not explained by this thread's gaps or the data "
           "plane's stalls), worst "
        << quantile(err, 1) << " us";
}

// Mean and jitter of correlated delays, 10 ms +- 1 ms at 50 kpps for 8 s (seed fixed).
// Paper Table 4 (CBR, 1 ms jitter): mean +1.2 %, jitter -0.5 %. Our tolerance: mean within
// 3 %, standard deviation within 15 %. Why: with t_h = 21 ms the delay process decorrelates
// over ~30 ms, so 8 s hold ~270 independent stretches: the standard error of the mean is
// 1 ms / sqrt(270) = 0.6 % and of the standard deviation ~ 1/sqrt(2 * 270) = 4.3 %; the
// tolerances are ~3-5 such errors plus a margin for scheduling noise.
//
// The tight checks use the median and the interquartile range (IQR / 1.349), which for the
// normal law the delays follow estimate its mean and standard deviation: on a 2-CPU machine
// the lcore and this thread both poll, every other thread on the machine preempts one of
// them, and a preempted lcore sends the frames due meanwhile a few ms late: a tail of a few
// tenths of a percent of frames 5 sd above the mean moves the sample sd by up to ~30 %
// while the IQR estimate stays within a few percent (docs/testing.md has a measured run). The
// sample mean and sd are still checked, loosely, for gross errors.
TEST(Dataplane, CorrelatedMeanAndJitter) {
    VirtualPort a(*g_eal, "corr_a", 16384, 32767), b(*g_eal, "corr_b", 16384, 8191);
    LinkParams p;
    p.mean_delay = 10 * kNsPerMs;
    p.jitter = 1 * kNsPerMs;
    p.seed = 42;
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    const Noise noise = measure_noise(dp, a, b, 50000);
    Flow f(&a, &b, 400000, 50000);
    Disturbance dist(dp);
    // R as the counters show it while the flow runs (from 1 s to 7 s of its 8 s), every
    // 20 ms: each value is one 10 ms interval (T_min), which a preemption of this (sending)
    // thread stretches; a single value read at the end fell to 35 kpps in one CI run.
    std::vector<double> rates;
    const TimeNs t0 = now_ns();
    TimeNs next_sample = t0 + kNsPerSec;
    dist.finish(run_flows(
        {&f}, 2000 * kNsPerMs,
        [&](TimeNs now) {
            if (now < next_sample || now > t0 + 7 * kNsPerSec) return;
            rates.push_back(dp.stats().dir[0].counters.rate_pps);
            next_sample = now + 20 * kNsPerMs;
        },
        &dp));
    dp.stop();
    ASSERT_EQ(f.got.size() + full_drops(dp, 0), f.sent);
    EXPECT_TRUE(in_order(f.got));
    // Skip the first 100 ms: the rate estimator needs its first interval.
    std::vector<double> d;
    for (const Probe& pr : f.got)
        if (pr.sent - f.got.front().sent > 100 * kNsPerMs) d.push_back(pr.delay_ms());
    const double mean = std::accumulate(d.begin(), d.end(), 0.0) / d.size();
    double ss = 0;
    for (double x : d)
        ss += (x - mean) * (x - mean);
    const double sd = std::sqrt(ss / (d.size() - 1));
    const double median = quantile(d, 0.5);
    const double iqr_sd = (quantile(d, 0.75) - quantile(d, 0.25)) / 1.349;
    RecordProperty("mean_ms", std::to_string(mean));
    RecordProperty("jitter_ms", std::to_string(sd));
    std::printf(
        "correlated delay: mean %.4f ms, sd %.4f ms; median %.4f ms, IQR/1.349 %.4f ms; "
        "p99.9 %.3f ms; over %zu packets\n",
        mean, sd, median, iqr_sd, quantile(d, 0.999), d.size());
    const DataplaneStats s = dp.stats();
    EXPECT_GE(quantile(d, 0), 5.0);  // normal, 1 ms sd: 5 sd below the mean is ~never reached
    // The data plane's own record of the times it did not run during the flow. Without
    // isolated CPUs it stalls for 0.1-3 ms now and then, well under 1 % of the time, which
    // moves none of the figures below; under load, stalls of hundreds of ms in 8 s widen the
    // sample sd (docs/testing.md). Such stalls are the machine's, not
    // a fault of the emulation: the bounds are then not checked, and the test says so.
    TIMING_BOUND_OR_SKIP("correlated rate, mean and jitter",
                         join_reasons(noise.reason(), dist.reason()));
    ASSERT_GT(rates.size(), 100u);
    std::printf(
        "rate estimate during the flow: median %.0f pps, min %.0f, max %.0f (%zu samples)\n",
        quantile(rates, 0.5), quantile(rates, 0), quantile(rates, 1), rates.size());
    EXPECT_NEAR(quantile(rates, 0.5), 50000, 5000);
    EXPECT_GT(s.dir[0].counters.alpha, 0.99);  // t_h R ~ 1000 packets
    EXPECT_NEAR(median, 10.0, 0.3);
    EXPECT_NEAR(iqr_sd, 1.0, 0.15);
    EXPECT_NEAR(mean, 10.0, 0.5);
    EXPECT_NEAR(sd, 1.0, 0.4);
}

// A delay change while packets are queued: none is lost, the queued ones keep the delay
// they were given, order is kept, and later packets get the new delay.
TEST(Dataplane, DelayChangeWhileQueued) {
    VirtualPort a(*g_eal, "chg_a"), b(*g_eal, "chg_b");
    LinkParams p;
    p.mean_delay = 200 * kNsPerMs;
    p.distribution = Distribution::constant;
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    Disturbance dist(dp);
    Flow f1(&a, &b, 1000, 10000);  // 100 ms of packets, all queued at the change
    Gaps gaps = run_flows({&f1}, 0);
    ASSERT_TRUE(wait_ingested(dp, 0, 1000));
    LinkParams q = p;
    q.mean_delay = 20 * kNsPerMs;
    const std::uint64_t gen = dp.apply({q, q});
    ASSERT_TRUE(dp.wait_applied(gen, std::chrono::seconds(10)));
    // All queued at the change, unless the machine held the data plane back meanwhile.
    const std::uint64_t queued = dp.stats().dir[0].counters.in_flight;
    gaps += run_flows({&f1}, 2000 * kNsPerMs, {}, &dp);  // collect the rest
    Flow f2(&a, &b, 1000, 10000);
    gaps += run_flows({&f2}, 2000 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    ASSERT_EQ(f1.got.size(), 1000u);
    ASSERT_EQ(f2.got.size(), 1000u);
    EXPECT_TRUE(in_order(f1.got));
    EXPECT_TRUE(in_order(f2.got));
    // Never early; late only by what the scheduler adds (tens of ms at worst here, far
    // from the 180 ms that tell the two delays apart).
    std::vector<double> d1, d2;
    for (const Probe& pr : f1.got)
        d1.push_back(pr.delay_ms());
    for (const Probe& pr : f2.got)
        d2.push_back(pr.delay_ms());
    EXPECT_GE(quantile(d1, 0), 199.999);
    EXPECT_GE(quantile(d2, 0), 19.999);
    const DataplaneStats s = dp.stats();
    EXPECT_EQ(s.dir[0].counters.drops.total(), 0u);
    expect_conservation(s, 2);
    TIMING_BOUND_OR_SKIP(
        "delay change: medians under 260 and 80 ms",
        join_reasons(
            dist.reason(0.05, Disturbance::Bound::centre),
            queued > 900 ? "" : std::to_string(queued) + " of 1000 frames queued at the change"));
    EXPECT_LT(quantile(d1, 0.5), 260.0);
    EXPECT_LT(quantile(d2, 0.5), 80.0);
}

// A spacer rate change while a backlog is queued: no loss; packets that arrive after the
// change leave at the new rate once the backlog (timed at the old rate) has gone.
TEST(Dataplane, SpacerRateChangeWhileQueued) {
    VirtualPort a(*g_eal, "spc_a"), b(*g_eal, "spc_b");
    LinkParams p;
    p.limiter = Limiter::spacer;
    p.rate_bps = 8e6;                 // 1000-byte frames (+4 FCS): ~996 per second
    p.queue_limit_bytes = 64u << 20;  // no spacer drops in this test
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    Disturbance dist(dp);
    Flow f1(&a, &b, 500, 1e6, 1000);  // a burst: half a second of backlog
    Gaps gaps = run_flows({&f1}, 0);
    ASSERT_TRUE(wait_ingested(dp, 0, 500));  // all scheduled at the old rate
    LinkParams q = p;
    q.rate_bps = 80e6;
    ASSERT_TRUE(dp.wait_applied(dp.apply({q, q}), std::chrono::seconds(10)));
    Flow f2(&a, &b, 4000, 1e6, 1000);
    gaps += run_flows({&f1, &f2}, 3000 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    dp.stop();
    ASSERT_EQ(f1.got.size(), 500u);
    ASSERT_EQ(f2.got.size(), 4000u);
    EXPECT_TRUE(in_order(f2.got));
    // Old backlog: ~996 per second. New packets: ~9960 per second. Measured over 0.4-0.5 s
    // each, so a preemption of a few tens of ms moves a rate by a few percent.
    const double old_rate =
        499e9 / static_cast<double>(f1.got.back().received - f1.got.front().received);
    const double new_rate =
        3999e9 / static_cast<double>(f2.got.back().received - f2.got.front().received);
    std::printf("spacer: %.0f pps before the change, %.0f pps after\n", old_rate, new_rate);
    EXPECT_GE(f2.got.front().received, f1.got.back().received);
    const DataplaneStats s = dp.stats();
    EXPECT_EQ(s.dir[0].counters.drops.total(), 0u);
    expect_conservation(s, 2);
    TIMING_BOUND_OR_SKIP("spacer rates within 10 % and 15 %",
                         dist.reason(0.02, Disturbance::Bound::centre));
    EXPECT_NEAR(old_rate, 996, 996 * 0.10);
    EXPECT_NEAR(new_rate, 9960, 9960 * 0.15);
}

// Frames a NIC would put into the data plane's own pool have their buffers exchanged (the
// queue holds buffers, the mbuf headers go back to work); frames from anywhere else are
// held as whole mbufs. Both kinds come out complete, in order, none early, and every
// buffer is back at stop (otherwise stop() logs a warning and the pool stays parked).
TEST(Dataplane, ExchangedAndHeldFramesBothForward) {
    VirtualPort a(*g_eal, "xch_a"), b(*g_eal, "xch_b", 8192, 16383, VirtualPort::FramePool::own);
    LinkParams p;
    p.mean_delay = 3 * kNsPerMs;
    p.jitter = 1 * kNsPerMs;
    p.seed = 5;
    Dataplane dp(*g_eal, two_port(a, b, p));
    const DataplaneStats before = dp.stats();
    EXPECT_EQ(before.dir[0].buffer_exchange, !g_hold_mbufs);
    EXPECT_EQ(before.dir[1].buffer_exchange, !g_hold_mbufs);
    dp.start();
    Flow fab(&a, &b, 20000, 40000, 200), fba(&b, &a, 20000, 40000, 300);
    run_flows({&fab, &fba}, 1000 * kNsPerMs, {}, &dp);
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    ASSERT_EQ(fab.got.size() + full_drops(dp, 0), 20000u);
    ASSERT_EQ(fba.got.size() + full_drops(dp, 1), 20000u);
    EXPECT_TRUE(in_order(fab.got));
    EXPECT_TRUE(in_order(fba.got));
    for (const Flow* f : {&fab, &fba})
        for (const Probe& pr : f->got) {
            ASSERT_GE(pr.delay_ms(), 0.0) << pr.seq;
            ASSERT_EQ(pr.length, f->length) << pr.seq;
        }
    const DataplaneStats s = dp.stats();
    expect_conservation(s, 2);
    EXPECT_EQ(s.dir[0].counters.in_flight + s.dir[1].counters.in_flight, 0u);
    EXPECT_EQ(s.dir[0].counters.bytes_out, 20000u * (200 + 4));
    EXPECT_EQ(s.dir[1].counters.bytes_out, 20000u * (300 + 4));
}

// Frames in the data plane's own pool that are not as a NIC delivers them: chained, with
// more headroom, or with a second reference held elsewhere. Their buffers must not be
// exchanged (the queue would keep only the first segment, lose the offset, or take a buffer
// from under its other owner): each comes out whole, byte for byte, in order, and a shared
// mbuf is left as it was.
TEST(Dataplane, UnusualFramesOfTheOwnPoolComeOutWhole) {
    VirtualPort a(*g_eal, "shape_a"), b(*g_eal, "shape_b");
    LinkParams p;
    p.mean_delay = 1 * kNsPerMs;
    p.distribution = Distribution::constant;
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    using Shape = VirtualPort::FrameShape;
    const Shape shapes[] = {Shape{},
                            Shape{.two_segments = true},
                            Shape{.headroom = 64},
                            Shape{.shared = true},
                            Shape{.two_segments = true, .headroom = 32, .shared = true},
                            Shape{}};
    // In batches of 10, each received before the next is sent: mbufs of the own pool held
    // whole are capped (beyond: buffer_full drops, so that the pool keeps headers).
    constexpr std::size_t kPerShape = 100, kBatch = 10;
    std::vector<std::vector<std::uint8_t>> sent, got;
    for (std::size_t k = 0; k < std::size(shapes); ++k) {
        const std::size_t len = 100 + 37 * k;
        for (std::size_t first = 0; first < kPerShape; first += kBatch) {
            const std::size_t n = a.send_burst(
                kBatch, len,
                [&](std::size_t i, std::span<std::uint8_t> bytes) {
                    for (std::size_t j = 0; j < bytes.size(); ++j)
                        bytes[j] = static_cast<std::uint8_t>(k * 71 + (first + i) * 13 + j);
                    sent.emplace_back(bytes.begin(), bytes.end());
                },
                shapes[k]);
            ASSERT_EQ(n, kBatch) << "shape " << k;
            const TimeNs until = now_ns() + 2 * kNsPerSec;
            while (got.size() < sent.size() && now_ns() < until)
                b.receive(
                    [&](std::span<const std::uint8_t> f) { got.emplace_back(f.begin(), f.end()); });
        }
    }
    const std::size_t changed = a.release_shared();
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    ASSERT_EQ(got.size(), sent.size());
    for (std::size_t i = 0; i < sent.size(); ++i)
        ASSERT_EQ(got[i], sent[i]) << "frame " << i << " (shape " << i / kPerShape << ")";
    EXPECT_EQ(changed, 0u) << "shared mbufs altered by the data plane";
    const DataplaneStats s = dp.stats();
    expect_conservation(s, 2);
    EXPECT_EQ(s.dir[0].counters.drops.total(), 0u);
}

// Every choice of workers forwards every packet, each flow in order, no earlier than the
// delay; here in single-port mode (packets go back out of the port they came in on), six
// flows spread over the port's queues.
class WorkersTest : public ::testing::TestWithParam<Workers> {};

TEST_P(WorkersTest, SinglePortForwardsEachFlowInOrder) {
    const Workers w = GetParam();
    VirtualPort a(*g_eal, "wk" + to_string(w), 8192, 16383, VirtualPort::FramePool::rx_queue,
                  queues_per_port(w));
    DataplaneConfig cfg;
    cfg.port_a = a.name();
    cfg.workers = w;
    cfg.mbufs = 8192 * queues_per_port(w);
    cfg.hold_mbufs = g_hold_mbufs;
    cfg.link.a_to_b.mean_delay = 1 * kNsPerMs;
    cfg.link.a_to_b.distribution = Distribution::constant;
    Dataplane dp(*g_eal, cfg);
    ASSERT_EQ(dp.directions(), 1u);
    dp.start();
    std::vector<std::unique_ptr<Flow>> flows;
    std::vector<Flow*> fs;
    for (int i = 0; i < 6; ++i) {
        flows.push_back(std::make_unique<Flow>(&a, &a, 1000, 1000));
        fs.push_back(flows.back().get());
    }
    run_flows(fs, 2000 * kNsPerMs, {}, &dp);
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    std::uint64_t sent = 0, got = 0;
    for (const Flow* f : fs) {
        sent += f->sent;
        got += f->got.size();
        EXPECT_TRUE(in_order(f->got)) << "flow " << f->tag;
        for (const Probe& pr : f->got)
            EXPECT_GE(pr.delay_ms(), 0.999) << pr.seq;
    }
    ASSERT_EQ(got + full_drops(dp, 0), sent);
    const DataplaneStats s = dp.stats();
    EXPECT_EQ(s.ports, 1u);
    expect_conservation(s, 1);
    EXPECT_EQ(s.dir[0].counters.packets_in, sent);
}

INSTANTIATE_TEST_SUITE_P(Workers, WorkersTest,
                         ::testing::Values(Workers{.shared = true}, Workers{false, 1},
                                           Workers{false, 2}, Workers{false, 3}),
                         [](const auto& info) {
                             const std::string w = to_string(info.param);
                             return w == "shared" ? w : "workers_" + w;
                         });

// Frames of which flows a queue of `port` gets: a flow keeps to one queue.
std::vector<unsigned> queues_of_flows(const VirtualPort& port, const std::vector<Flow*>& flows) {
    std::vector<unsigned> q;
    std::vector<std::uint8_t> frame(64);
    for (const Flow* f : flows) {
        write_frame(frame, 0, 0, f->tag);
        q.push_back(port.queue_of(frame));
    }
    return q;
}

// Two workers per direction, both directions: flows spread over the queues each keep their
// order through a correlated delay whose workers draw independently (so frames of different
// queues do pass each other), every frame comes out once, and each direction's counters are
// its workers' sums.
TEST(Dataplane, WorkersPerDirectionKeepEachFlowAndConserve) {
    constexpr unsigned kWorkers = 2;
    VirtualPort a(*g_eal, "wpa", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    VirtualPort b(*g_eal, "wpb", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    LinkParams p;
    p.strategy = Strategy::correlated;
    p.mean_delay = 5 * kNsPerMs;
    p.jitter = 2 * kNsPerMs;
    p.half_life = 2 * kNsPerMs;
    p.seed = 11;
    DataplaneConfig cfg = two_port(a, b, p);
    cfg.workers = Workers{false, kWorkers};
    cfg.mbufs = 65536 * kWorkers;
    Dataplane dp(*g_eal, cfg);
    dp.start();
    std::vector<std::unique_ptr<Flow>> flows;
    std::vector<Flow*> fs;
    for (int i = 0; i < 8; ++i) {
        flows.push_back(i % 2 == 0 ? std::make_unique<Flow>(&a, &b, 3000, 3000)
                                   : std::make_unique<Flow>(&b, &a, 3000, 3000));
        fs.push_back(flows.back().get());
    }
    const std::vector<unsigned> qa = queues_of_flows(a, fs);
    EXPECT_NE(std::count(qa.begin(), qa.end(), 0u), 0) << "no flow on queue 0";
    EXPECT_NE(std::count(qa.begin(), qa.end(), 1u), 0) << "no flow on queue 1";
    run_flows(fs, 2000 * kNsPerMs, {}, &dp);
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    std::uint64_t sent[2] = {0, 0}, got[2] = {0, 0};
    bool passed = false;  // frames of different flows that left in another order than sent
    for (std::size_t i = 0; i < fs.size(); ++i) {
        const Flow* f = fs[i];
        sent[i % 2] += f->sent;
        got[i % 2] += f->got.size();
        EXPECT_TRUE(in_order(f->got)) << "flow " << f->tag;
    }
    for (unsigned d = 0; d < 2; ++d)
        EXPECT_EQ(got[d] + full_drops(dp, d), sent[d]) << "direction " << d;
    // The workers' delay processes are independent: two flows of different queues, sent side
    // by side, come out with different delays at some point (one a ms ahead of the other).
    for (std::size_t i = 0; i + 2 < fs.size() && !passed; i += 2)
        for (std::size_t j = i + 2; j < fs.size() && !passed; j += 2) {
            if (qa[i] == qa[j]) continue;
            const auto& x = fs[i]->got;
            const auto& y = fs[j]->got;
            for (std::size_t k = 0; k < std::min(x.size(), y.size()) && !passed; k += 100)
                passed = std::abs(x[k].delay_ms() - y[k].delay_ms()) > 1.0;
        }
    EXPECT_TRUE(passed) << "the flows of the two workers saw the same delays";
    const DataplaneStats fin = dp.stats();
    expect_conservation(fin, 2);
    for (unsigned d = 0; d < 2; ++d) {
        EXPECT_EQ(fin.dir[d].counters.packets_in, sent[d]);
        EXPECT_EQ(fin.dir[d].counters.packets_out + fin.dir[d].counters.drops.total(), sent[d]);
        EXPECT_EQ(fin.dir[d].counters.in_flight, 0u);
    }
}

// A parameter change reaches every worker of a direction under one generation: once
// wait_applied() returns, the direction reports that generation (the oldest of its
// workers'), and every flow's frames sent afterwards get the new delay.
TEST(Dataplane, WorkersAdoptAChangeAsOneGeneration) {
    constexpr unsigned kWorkers = 3;
    VirtualPort a(*g_eal, "wga", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    LinkParams p;
    p.distribution = Distribution::constant;
    p.mean_delay = 1 * kNsPerMs;
    DataplaneConfig cfg;
    cfg.port_a = a.name();
    cfg.workers = Workers{false, kWorkers};
    cfg.mbufs = 16384 * kWorkers;
    cfg.hold_mbufs = g_hold_mbufs;
    cfg.link = {p, p};
    Dataplane dp(*g_eal, cfg);
    dp.start();
    std::vector<std::unique_ptr<Flow>> flows;
    std::vector<Flow*> fs;
    for (int i = 0; i < 9; ++i) {
        flows.push_back(std::make_unique<Flow>(&a, &a, 4000, 2000));
        fs.push_back(flows.back().get());
    }
    std::uint64_t gen = 0;
    TimeNs applied_at = 0;
    run_flows(
        fs, 2000 * kNsPerMs,
        [&](TimeNs) {
            if (gen == 0 && fs[0]->sent >= 1000) {
                LinkParams q = p;
                q.mean_delay = 4 * kNsPerMs;
                gen = dp.apply({q, q});
                EXPECT_TRUE(dp.wait_applied(gen, std::chrono::seconds(30)));
                applied_at = now_ns();
            }
        },
        &dp);
    ASSERT_NE(gen, 0u);
    // The workers report every 50 ms: the stats show the generation once all have reported.
    const TimeNs until = now_ns() + 10 * kNsPerSec;
    while (dp.stats().dir[0].params_generation < gen && now_ns() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(dp.stats().dir[0].params_generation, gen);
    dp.stop();
    std::size_t after = 0;
    for (const Flow* f : fs) {
        EXPECT_TRUE(in_order(f->got)) << "flow " << f->tag;
        for (const Probe& pr : f->got)
            if (pr.sent > applied_at) {
                ++after;
                EXPECT_GE(pr.delay_ms(), 3.999) << "flow " << f->tag << " frame " << pr.seq;
            }
    }
    EXPECT_GT(after, 1000u);
    EXPECT_EQ(test::pool_check(dp), "");
}

// Three workers share one spacer: frames offered far above its rate over many flows leave
// at the link's rate in all, not at three times it. The lower bound is exact (the link's
// time given out never overlaps, so the last frame cannot leave before the bytes before it
// took the link); the upper bound, which the machine's stalls can stretch, is a timing bound.
// Flows of 1000-byte frames sent all at once through one spacer at `rate_bps`: how long they
// took from the first send to the last arrival, and the link's time for their frames (each
// charged 1004 bytes with its FCS). Every flow must have come out whole and in order.
struct SpacerSpan {
    std::uint64_t frames = 0;
    double took_ns = 0, least_ns = 0, link_ns = 0;
};

SpacerSpan spacer_span(const std::vector<Flow*>& fs, double rate_bps) {
    SpacerSpan s;
    TimeNs first_sent = std::numeric_limits<TimeNs>::max(), last_out = 0;
    for (const Flow* f : fs) {
        EXPECT_EQ(f->got.size(), f->count) << "flow " << f->tag;
        EXPECT_TRUE(in_order(f->got));
        s.frames += f->got.size();
        for (const Probe& pr : f->got) {
            first_sent = std::min(first_sent, pr.sent);
            last_out = std::max(last_out, pr.received);
        }
    }
    s.link_ns = 1004 * 8 / rate_bps * 1e9;
    s.took_ns = static_cast<double>(last_out - first_sent);
    s.least_ns = static_cast<double>(s.frames - 1) * s.link_ns;
    return s;
}

TEST(Dataplane, WorkersShareOneSpacer) {
    constexpr unsigned kWorkers = 3;
    VirtualPort a(*g_eal, "wsa", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    LinkParams p;
    p.distribution = Distribution::constant;
    p.limiter = Limiter::spacer;
    p.rate_bps = 40e6;
    p.queue_limit_bytes = std::uint64_t{64} << 20;
    DataplaneConfig cfg;
    cfg.port_a = a.name();
    cfg.workers = Workers{false, kWorkers};
    cfg.mbufs = 16384 * kWorkers;
    cfg.hold_mbufs = g_hold_mbufs;
    cfg.link = {p, p};
    Dataplane dp(*g_eal, cfg);
    dp.start();
    Disturbance dist(dp);
    std::vector<std::unique_ptr<Flow>> flows;
    std::vector<Flow*> fs;
    for (int i = 0; i < 12; ++i) {
        flows.push_back(std::make_unique<Flow>(&a, &a, 500, 1e9, 1000));  // all at once
        fs.push_back(flows.back().get());
    }
    const Gaps gaps = run_flows(fs, 2000 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    dp.stop();
    // Each 1000-byte frame is charged 1004 bytes (with its FCS): 201 us at 40 Mbit/s.
    const SpacerSpan span = spacer_span(fs, 40e6);
    const std::uint64_t frames = span.frames;
    const double took = span.took_ns, least = span.least_ns, link_ns = span.link_ns;
    std::printf(
        "%llu frames through a shared 40 Mbit/s spacer in %.1f ms (the link's time for "
        "them: %.1f ms)\n",
        static_cast<unsigned long long>(frames), took / 1e6, least / 1e6);
    EXPECT_GE(took, least - 2000);  // whole-ns rounding of each reservation
    EXPECT_EQ(dp.stats().dir[0].counters.drops.total(), 0u);
    EXPECT_EQ(test::pool_check(dp), "");
    TIMING_BOUND_OR_SKIP("the workers' spacer keeps its rate to 0.5 %",
                         dist.reason(0.002, Disturbance::Bound::centre));
    EXPECT_LE(took, 1.005 * (least + link_ns));
}

// Invalid parameters are refused by apply() with the field named, and change nothing.
TEST(Dataplane, ApplyRejectsInvalidParameters) {
    VirtualPort a(*g_eal, "bad_a"), b(*g_eal, "bad_b");
    Dataplane dp(*g_eal, two_port(a, b, LinkParams{}));
    LinkParams bad;
    bad.loss_probability = 1.5;
    try {
        dp.apply({LinkParams{}, bad});
        FAIL() << "no ParamError";
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "b_to_a.loss_probability");
    }
    EXPECT_EQ(dp.link().b_to_a.loss_probability, 0.0);
}

// ------------------------------------------------------------------------ classes
// Classes told apart by EtherType: the tests' frames are not IP, and a match object without IP
// keys holds them.
TrafficClass ethertype_class(const std::string& name, std::uint16_t ethertype,
                             ClassAction action = ClassAction::emulate, DurationNs delay = 0) {
    TrafficClass c;
    c.name = name;
    ClassMatch m;
    m.ethertype = ethertype;
    c.match = {m};
    c.action = action;
    if (action == ClassAction::emulate) {
        c.link.a_to_b.distribution = c.link.b_to_a.distribution = Distribution::constant;
        c.link.a_to_b.mean_delay = c.link.b_to_a.mean_delay = delay;
    }
    return c;
}

LinkParams constant_delay(DurationNs d) {
    LinkParams p;
    p.distribution = Distribution::constant;
    p.mean_delay = d;
    return p;
}

// The frames of a flow whose delay is below `least` (ms): never on a correct data plane.
std::size_t early(const Flow& f, double least_ms) {
    return static_cast<std::size_t>(std::count_if(
        f.got.begin(), f.got.end(), [&](const Probe& p) { return p.delay_ms() < least_ms; }));
}

// Each flow gets its class's conditions: `default` 2 ms, `slow` 20 ms, `fast` passes
// untouched, `gone` drops; each class's counters count its own packets.
TEST(DataplaneClasses, EachFlowGetsItsClass) {
    VirtualPort a(*g_eal, "cls_a"), b(*g_eal, "cls_b");
    DataplaneConfig cfg = two_port(a, b, constant_delay(2 * kNsPerMs));
    cfg.link.classes = {ethertype_class("slow", 0x88B6, ClassAction::emulate, 20 * kNsPerMs),
                        ethertype_class("fast", 0x88B7, ClassAction::pass),
                        ethertype_class("gone", 0x88B8, ClassAction::drop)};
    Dataplane dp(*g_eal, cfg);
    dp.start();
    Disturbance dist(dp);
    Flow plain(&a, &b, 2000, 5000), slow(&a, &b, 2000, 5000), fast(&a, &b, 2000, 5000),
        gone(&a, &b, 1000, 5000), back(&b, &a, 1000, 5000);
    slow.ethertype = back.ethertype = 0x88B6;
    fast.ethertype = 0x88B7;
    gone.ethertype = 0x88B8;
    gone.count = 1000;
    const Gaps gaps = run_flows({&plain, &slow, &fast, &back}, 300 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    run_flows({&gone}, 50 * kNsPerMs);
    ASSERT_TRUE(wait_ingested(dp, 0, plain.sent + slow.sent + fast.sent + gone.sent));
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    EXPECT_EQ(plain.got.size(), plain.count);
    EXPECT_EQ(slow.got.size(), slow.count);
    EXPECT_EQ(fast.got.size(), fast.count);
    EXPECT_EQ(back.got.size(), back.count);
    EXPECT_EQ(gone.got.size(), 0u);
    EXPECT_TRUE(in_order(plain.got) && in_order(slow.got) && in_order(fast.got));
    EXPECT_EQ(early(plain, 2.0), 0u);
    EXPECT_EQ(early(slow, 20.0), 0u);
    EXPECT_EQ(early(back, 20.0), 0u);
    const DataplaneStats s = dp.stats();
    expect_conservation(s, 2);
    ASSERT_EQ(s.classes.size(), 4u);
    EXPECT_EQ(s.classes[0].name, "default");
    EXPECT_EQ(s.classes[1].name, "slow");
    EXPECT_EQ(s.classes[0].dir[0].packets_in, plain.sent);
    EXPECT_EQ(s.classes[1].dir[0].packets_in, slow.sent);
    EXPECT_EQ(s.classes[1].dir[1].packets_in, back.sent);
    EXPECT_EQ(s.classes[2].action, ClassAction::pass);
    EXPECT_EQ(s.classes[2].dir[0].packets_in, fast.sent);
    EXPECT_EQ(s.classes[2].dir[0].packets_out, fast.sent);
    EXPECT_EQ(s.classes[3].dir[0].packets_in, gone.sent);
    EXPECT_EQ(s.classes[3].dir[0].drops[DropCause::class_action], gone.sent);
    EXPECT_EQ(s.dir[0].counters.packets_in, plain.sent + slow.sent + fast.sent + gone.sent);
    EXPECT_EQ(s.dir[0].counters.drops[DropCause::class_action], gone.sent);
    // The medians: `default` 2 ms, `fast` (passed) at once.
    std::vector<double> d_plain, d_fast;
    for (const Probe& p : plain.got)
        d_plain.push_back(p.delay_ms());
    for (const Probe& p : fast.got)
        d_fast.push_back(p.delay_ms());
    std::printf("median delay: default %.3f ms (2 ms), pass %.3f ms\n", quantile(d_plain, 0.5),
                quantile(d_fast, 0.5));
    TIMING_BOUND_OR_SKIP("the classes' median delays",
                         dist.reason(0.02, Disturbance::Bound::centre));
    EXPECT_LT(quantile(d_plain, 0.5), 3.0);
    EXPECT_LT(quantile(d_fast, 0.5), 1.0);
}

// A swap storm: the class list is replaced hundreds of times while traffic flows, in forms that
// move each class to another place and slot (ClassId) and add classes no flow hits, while each
// flow's conditions stay the same. A packet classified by one list and handled by another
// list's actions or parameters would come out early or be lost; none may.
TEST(DataplaneClasses, SwapStormUnderTraffic) {
    VirtualPort a(*g_eal, "swap_a"), b(*g_eal, "swap_b");
    DataplaneConfig cfg = two_port(a, b, constant_delay(1 * kNsPerMs));
    const TrafficClass slow = ethertype_class("slow", 0x88B6, ClassAction::emulate, 12 * kNsPerMs);
    const TrafficClass mid = ethertype_class("mid", 0x88B7, ClassAction::emulate, 6 * kNsPerMs);
    TrafficClass mid_too = mid;  // the same conditions under another name: another slot
    mid_too.name = "mid2";
    const std::vector<std::vector<TrafficClass>> lists = {
        {slow, mid},
        {mid, ethertype_class("x", 0x9000, ClassAction::drop), slow},
        {ethertype_class("y", 0x9001, ClassAction::pass), slow, mid_too},
        {mid_too, slow},
    };
    cfg.link.classes = lists[0];
    Dataplane dp(*g_eal, cfg);
    dp.start();
    Flow f0(&a, &b, 6000, 10000), f1(&a, &b, 6000, 10000), f2(&a, &b, 6000, 10000);
    f1.ethertype = 0x88B6;
    f2.ethertype = 0x88B7;
    std::size_t swaps = 0;
    TimeNs next = 0;
    run_flows(
        {&f0, &f1, &f2}, 300 * kNsPerMs,
        [&](TimeNs now) {
            // Every 200 us (or as fast as the control side builds the lists on a loaded
            // machine): hundreds of replacements while the frames flow.
            if (now < next) return;
            next = now + 200 * kNsPerUs;
            LinkConfig l = dp.link();
            l.classes = lists[++swaps % lists.size()];
            dp.apply(l);
        },
        &dp);
    dp.stop();
    std::printf("%zu list replacements while 18000 frames flowed\n", swaps);
    EXPECT_GT(swaps, 100u);
    EXPECT_EQ(test::pool_check(dp), "");
    EXPECT_EQ(f0.got.size(), f0.count);
    EXPECT_EQ(f1.got.size(), f1.count);
    EXPECT_EQ(f2.got.size(), f2.count);
    EXPECT_EQ(early(f0, 1.0), 0u);
    EXPECT_EQ(early(f1, 12.0), 0u);
    EXPECT_EQ(early(f2, 6.0), 0u);
    const DataplaneStats s = dp.stats();
    expect_conservation(s, 2);
    EXPECT_EQ(s.dir[0].counters.drops.total(), 0u);
}

// Classes with "limiter": "link" share the default class's spacer: together they keep its
// rate, each with its own delay.
TEST(DataplaneClasses, SharedLinkLimiterKeepsTheRateForAll) {
    VirtualPort a(*g_eal, "shl_a"), b(*g_eal, "shl_b");
    LinkParams p = constant_delay(1 * kNsPerMs);
    p.limiter = Limiter::spacer;
    p.rate_bps = 40e6;
    p.queue_limit_bytes = std::uint64_t{64} << 20;
    DataplaneConfig cfg = two_port(a, b, p);
    TrafficClass bulk = ethertype_class("bulk", 0x88B6, ClassAction::emulate, 5 * kNsPerMs);
    bulk.shares_link_limiter = true;
    cfg.link.classes = {bulk};
    Dataplane dp(*g_eal, cfg);
    dp.start();
    Disturbance dist(dp);
    Flow f0(&a, &b, 1500, 1e9, 1000), f1(&a, &b, 1500, 1e9, 1000);  // all at once
    f1.ethertype = 0x88B6;
    const Gaps gaps = run_flows({&f0, &f1}, 2000 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    dp.stop();
    const SpacerSpan span = spacer_span({&f0, &f1}, 40e6);
    const double took = span.took_ns, least = span.least_ns, link_ns = span.link_ns;
    std::printf(
        "3000 frames of two classes through one 40 Mbit/s spacer in %.1f ms (the link's "
        "time for them: %.1f ms)\n",
        took / 1e6, least / 1e6);
    EXPECT_GE(took, least - 2000);
    EXPECT_EQ(early(f1, 5.0), 0u);
    EXPECT_EQ(test::pool_check(dp), "");
    TIMING_BOUND_OR_SKIP("two classes share one spacer's rate to 0.5 %",
                         dist.reason(0.002, Disturbance::Bound::centre));
    EXPECT_LE(took, 1.005 * (least + link_ns) + 5e6);
}

// With several workers a class's own spacer is one link for all of them, as default's is.
TEST(DataplaneClasses, WorkersShareAClassSpacer) {
    constexpr unsigned kWorkers = 3;
    VirtualPort a(*g_eal, "wcs", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    DataplaneConfig cfg;
    cfg.port_a = a.name();
    cfg.workers = Workers{false, kWorkers};
    cfg.mbufs = 16384 * kWorkers;
    cfg.hold_mbufs = g_hold_mbufs;
    TrafficClass bulk = ethertype_class("bulk", 0x88B6, ClassAction::emulate, 0);
    for (unsigned k = 0; k < 2; ++k) {
        LinkParams& p = bulk.link.direction(k);
        p.limiter = Limiter::spacer;
        p.rate_bps = 40e6;
        p.queue_limit_bytes = std::uint64_t{64} << 20;
    }
    cfg.link.classes = {bulk};
    Dataplane dp(*g_eal, cfg);
    dp.start();
    Disturbance dist(dp);
    std::vector<std::unique_ptr<Flow>> flows;
    std::vector<Flow*> fs;
    for (int i = 0; i < 12; ++i) {
        flows.push_back(std::make_unique<Flow>(&a, &a, 250, 1e9, 1000));  // all at once
        flows.back()->ethertype = 0x88B6;
        fs.push_back(flows.back().get());
    }
    const Gaps gaps = run_flows(fs, 2000 * kNsPerMs, {}, &dp);
    dist.finish(gaps);
    dp.stop();
    const SpacerSpan span = spacer_span(fs, 40e6);
    const std::uint64_t frames = span.frames;
    const double took = span.took_ns, least = span.least_ns;
    std::printf(
        "%llu frames of one class on %u workers through its 40 Mbit/s spacer in %.1f ms "
        "(the link's time for them: %.1f ms)\n",
        static_cast<unsigned long long>(frames), kWorkers, took / 1e6, least / 1e6);
    EXPECT_GE(took, least - 2000);
    const DataplaneStats s = dp.stats();
    ASSERT_EQ(s.classes.size(), 2u);
    EXPECT_EQ(s.classes[1].dir[0].packets_out, frames);
    EXPECT_EQ(test::pool_check(dp), "");
}

// A bad class list is refused with the class and key named, and nothing changes.
TEST(DataplaneClasses, ApplyRefusesABadListAndKeepsTheOld) {
    VirtualPort a(*g_eal, "clsbad_a"), b(*g_eal, "clsbad_b");
    DataplaneConfig cfg = two_port(a, b, LinkParams{});
    cfg.link.classes = {ethertype_class("voip", 0x88B6, ClassAction::emulate, kNsPerMs)};
    Dataplane dp(*g_eal, cfg);
    const std::uint64_t gen = dp.generation();
    LinkConfig bad = dp.link();
    bad.classes.push_back(ethertype_class("voip", 0x88B7));
    try {
        dp.apply(bad);
        FAIL() << "no ParamError";
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "classes[1].name");
    }
    LinkConfig trace_shared = dp.link();
    trace_shared.a_to_b.limiter = Limiter::spacer;
    trace_shared.a_to_b.rate_bps = 1e6;
    trace_shared.classes[0].shares_link_limiter = true;
    EXPECT_NO_THROW(dp.apply(trace_shared));
    EXPECT_EQ(dp.link().classes.size(), 1u);
    EXPECT_EQ(dp.link().classes[0].name, "voip");
    EXPECT_EQ(dp.generation(), gen + 1);
}

}  // namespace
}  // namespace linkem::dp

namespace linkem::dp {
namespace {

// ------------------------------------------------------------------------ capture
// What tshark reads of a capture: per packet its interface, time (ns since 1970), the
// linkem comment's fields, and the frame's payload after the Ethernet header (hex).
struct Captured {
    unsigned interface = 0;
    TimeNs t = 0;
    std::map<std::string, std::string> f;
    std::uint64_t frame_seq = 0;  // the test frame's own sequence number
    std::int64_t num(const std::string& k) const {
        auto it = f.find(k);
        return it == f.end() ? -1 : std::stoll(it->second);
    }
};

std::vector<Captured> read_capture(const std::string& file, int& rc) {
    const test::TsharkRows t = test::tshark_fields(
        file, {"frame.interface_id", "frame.time_epoch", "frame.comment", "data.data"});
    rc = t.rc;
    std::vector<Captured> out;
    for (const auto& col : t.rows) {
        Captured c;
        c.interface = static_cast<unsigned>(std::stoul(col[0]));
        c.t = test::epoch_ns(col[1]);
        c.f = test::comment_fields(col[2]);
        // The payload's first 8 bytes: the frame's seq, little-endian.
        const std::string& hex = col[3];
        for (int i = 7; i >= 0 && hex.size() >= 16; --i)
            c.frame_seq = c.frame_seq << 8 | std::stoul(hex.substr(i * 2, 2), nullptr, 16);
        out.push_back(std::move(c));
    }
    return out;
}

// A capture of every point while classes emulate, pass and drop and the loss model drops:
// tshark reads a record for every packet in, out and dropped, as many as the counters say
// by cause; each out record's delay is its class's, its parts add up, and the frame's own
// sequence number ties it to the probe the test received.
TEST(DataplaneCapture, EveryPacketsFateIsRecorded) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh)";
    VirtualPort a(*g_eal, "cap_a"), b(*g_eal, "cap_b");
    LinkParams p = constant_delay(5 * kNsPerMs);
    p.loss_model = LossModel::bernoulli;
    p.loss_probability = 0.05;
    DataplaneConfig cfg = two_port(a, b, p);
    cfg.link.classes = {ethertype_class("slow", 0x88B6, ClassAction::emulate, 20 * kNsPerMs),
                        ethertype_class("fast", 0x88B7, ClassAction::pass),
                        ethertype_class("gone", 0x88B8, ClassAction::drop)};
    Dataplane dp(*g_eal, cfg);
    dp.start();
    const std::string file = "/tmp/linkem-dp-capture-" + std::to_string(getpid()) + ".pcapng";
    capture::Settings cs;
    cs.file = file;
    cs.points = capture::kAllPoints;
    cs.snaplen = 64;
    const capture::Status started = dp.start_capture(cs);
    EXPECT_TRUE(started.running);
    EXPECT_THROW(dp.start_capture(cs), capture::Busy);
    Flow plain(&a, &b, 2000, 4000), slow(&a, &b, 1000, 4000), fast(&a, &b, 500, 4000),
        gone(&a, &b, 300, 4000), back(&b, &a, 1000, 4000);
    slow.ethertype = 0x88B6;
    fast.ethertype = 0x88B7;
    gone.ethertype = 0x88B8;
    run_flows({&plain, &slow, &fast, &back}, 300 * kNsPerMs, {}, &dp);
    run_flows({&gone}, 50 * kNsPerMs);
    ASSERT_TRUE(wait_ingested(dp, 0, plain.sent + slow.sent + fast.sent + gone.sent));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the counters' report
    const DataplaneStats s = dp.stats();
    const capture::Status st = dp.stop_capture();
    EXPECT_FALSE(st.running);
    EXPECT_EQ(st.reason, capture::StopReason::stopped);
    EXPECT_EQ(st.missed, 0u);
    const auto events = dp.take_capture_events();
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.front().kind, capture::Event::Kind::started);
    EXPECT_EQ(events.back().kind, capture::Event::Kind::stopped);
    dp.stop();
    int rc = 0;
    const std::vector<Captured> recs = read_capture(file, rc);
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(recs.size(), st.records);
    // Interfaces: 0 a_to_b in, 1 a_to_b out, 2 b_to_a in, 3 b_to_a out, 4 drops.
    std::uint64_t per_if[5] = {};
    std::map<std::string, std::uint64_t> drops;
    std::map<std::string, std::uint64_t> out_by_class;
    TimeNs last = 0;
    std::size_t backwards = 0, bad_parts = 0, bad_delay = 0, early_out = 0;
    // a_to_b's `default` (the flow `plain`) by the frame's seq.
    std::map<std::pair<std::uint32_t, std::uint64_t>, const Captured*> out_of;
    for (const Captured& c : recs) {
        ASSERT_LT(c.interface, 5u);
        ++per_if[c.interface];
        backwards += c.t < last;
        last = c.t;
        if (c.interface == 4) ++drops[c.f.at("drop")];
        if (c.interface != 1 && c.interface != 3) continue;
        const std::string cls = c.f.at("class");
        ++out_by_class[cls];
        if (cls == "fast") continue;  // passed at once: no delay
        const std::int64_t delay = c.num("delay_ns"), scheduled = c.num("scheduled_ns");
        bad_delay += delay != (cls == "slow" ? 20 : 5) * kNsPerMs;
        bad_parts += scheduled != delay + c.num("limiter_wait_ns") + c.num("order_wait_ns") ||
                     c.num("order_wait_ns") != 0 || c.num("lateness_ns") < 0;
        // Egress - arrival = scheduled + lateness, never less than the delay.
        early_out += c.t - c.num("arrived_ns") != scheduled + c.num("lateness_ns");
        if (c.interface == 1 && cls == "default") out_of[{0u, c.frame_seq}] = &c;
    }
    EXPECT_EQ(backwards, 0u) << "records in time order";
    EXPECT_EQ(bad_delay, 0u);
    EXPECT_EQ(bad_parts, 0u);
    EXPECT_EQ(early_out, 0u);
    EXPECT_EQ(per_if[0], s.dir[0].counters.packets_in);
    EXPECT_EQ(per_if[1], s.dir[0].counters.packets_out);
    EXPECT_EQ(per_if[2], s.dir[1].counters.packets_in);
    EXPECT_EQ(per_if[3], s.dir[1].counters.packets_out);
    for (const DropCauseInfo& c : kDropCauses)
        EXPECT_EQ(drops[c.name],
                  s.dir[0].counters.drops[c.cause] + s.dir[1].counters.drops[c.cause])
            << c.name;
    EXPECT_GT(drops["loss"], 0u);
    EXPECT_EQ(drops["class"], gone.sent);
    EXPECT_EQ(out_by_class["fast"], fast.sent);
    EXPECT_EQ(out_by_class["slow"], slow.got.size());
    // Each frame the test received from the default class has its record, whose hold
    // (egress - arrival) is within what the test measured from send to receive.
    std::size_t missing = 0, longer = 0;
    for (const Probe& pr : plain.got) {
        auto it = out_of.find({0u, pr.seq});
        if (it == out_of.end()) {
            ++missing;
            continue;
        }
        const Captured& c = *it->second;
        if (c.t - c.num("arrived_ns") > pr.received - pr.sent && longer++ < 5)
            std::printf("seq %llu: record %lld ns (lateness %lld), test %lld ns\n",
                        static_cast<unsigned long long>(pr.seq),
                        static_cast<long long>(c.t - c.num("arrived_ns")),
                        static_cast<long long>(c.num("lateness_ns")),
                        static_cast<long long>(pr.received - pr.sent));
    }
    EXPECT_EQ(missing, 0u);
    EXPECT_EQ(longer, 0u) << "the data plane held no frame longer than the test saw it take";
    std::remove(file.c_str());
}

// Two workers a direction: four lanes, four rings; the writer's merge puts every record in time
// order, each lane's packets numbered apart (worker, seq), as many in and out as the counters.
TEST(DataplaneCapture, WorkersRecordsMergeInTimeOrder) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh)";
    constexpr unsigned kWorkers = 2;
    VirtualPort a(*g_eal, "capw_a", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    VirtualPort b(*g_eal, "capw_b", 8192, 16383, VirtualPort::FramePool::rx_queue, kWorkers);
    LinkParams p = constant_delay(3 * kNsPerMs);
    DataplaneConfig cfg = two_port(a, b, p);
    cfg.workers = Workers{false, kWorkers};
    cfg.mbufs = 65536 * kWorkers;
    Dataplane dp(*g_eal, cfg);
    dp.start();
    const std::string file = "/tmp/linkem-dp-capw-" + std::to_string(getpid()) + ".pcapng";
    capture::Settings cs;
    cs.file = file;
    cs.points = capture::kAllPoints;
    dp.start_capture(cs);
    std::vector<std::unique_ptr<Flow>> flows;
    std::vector<Flow*> fs;
    for (int i = 0; i < 8; ++i) {
        flows.push_back(i % 2 == 0 ? std::make_unique<Flow>(&a, &b, 1000, 2000)
                                   : std::make_unique<Flow>(&b, &a, 1000, 2000));
        fs.push_back(flows.back().get());
    }
    run_flows(fs, 500 * kNsPerMs, {}, &dp);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const DataplaneStats s = dp.stats();
    const capture::Status st = dp.stop_capture();
    dp.stop();
    EXPECT_EQ(st.missed, 0u);
    int rc = 0;
    const std::vector<Captured> recs = read_capture(file, rc);
    EXPECT_EQ(rc, 0);
    std::uint64_t per_if[5] = {}, backwards = 0, dup = 0;
    TimeNs last = 0;
    std::set<std::tuple<unsigned, std::string, std::int64_t>> numbers;  // (iface, worker, seq)
    std::set<std::string> workers[2];
    for (const Captured& c : recs) {
        ASSERT_LT(c.interface, 5u);
        ++per_if[c.interface];
        backwards += c.t < last;
        last = c.t;
        const unsigned dir = c.f.at("dir") == "a_to_b" ? 0 : 1;
        workers[dir].insert(c.f.at("worker"));
        if (!numbers.insert({c.interface, c.f.at("worker"), c.num("seq")}).second && dup++ < 5)
            std::printf("twice: interface %u worker %s seq %lld at %lld\n", c.interface,
                        c.f.at("worker").c_str(), static_cast<long long>(c.num("seq")),
                        static_cast<long long>(c.t));
    }
    EXPECT_EQ(backwards, 0u) << "the four lanes' records merged in time order";
    EXPECT_EQ(dup, 0u) << "a packet's number is its worker's";
    for (unsigned k = 0; k < 2; ++k) {
        EXPECT_EQ(workers[k].size(), kWorkers) << "records of both workers of " << k;
        EXPECT_EQ(per_if[2 * k], s.dir[k].counters.packets_in);
        EXPECT_EQ(per_if[2 * k + 1], s.dir[k].counters.packets_out);
    }
    std::remove(file.c_str());
}

// Bad settings are refused, naming what was wrong, and nothing starts.
TEST(DataplaneCapture, BadSettingsAreRefused) {
    VirtualPort a(*g_eal, "capbad_a");
    DataplaneConfig cfg;
    cfg.port_a = a.name();
    cfg.mbufs = 16384;
    cfg.hold_mbufs = g_hold_mbufs;
    Dataplane dp(*g_eal, cfg);
    dp.start();
    const auto field = [&](const capture::Settings& s) {
        try {
            dp.start_capture(s);
        } catch (const ParamError& e) {
            return e.field();
        }
        dp.stop_capture();
        return std::string("started");
    };
    capture::Settings s;
    s.file = "/nonexistent-dir/x.pcapng";
    EXPECT_EQ(field(s), "file");
    s.file = "/tmp/linkem-capbad-" + std::to_string(getpid()) + ".pcapng";
    s.direction = 1;
    EXPECT_EQ(field(s), "direction") << "one port: no b_to_a";
    s.direction.reset();
    s.class_name = "voip";
    EXPECT_EQ(field(s), "class");
    s.class_name = "default";
    s.snaplen = 8;
    EXPECT_EQ(field(s), "snaplen_bytes");
    s.snaplen = 128;
    EXPECT_FALSE(dp.capture_status().running);
    EXPECT_EQ(field(s), "started");
    dp.stop();
    std::remove(s.file.c_str());
}

// ------------------------------------------------------------------ queue disciplines
// IPv4/UDP frames, for the queue disciplines read their flow (the 5-tuple) and mark the IP
// header: Ethernet, IPv4 from 10.0.0.1 to 10.0.0.2 with the flow's ECN codepoint and a valid
// header checksum, UDP from the flow's port to port 9, then the frame's seq.
constexpr std::size_t kIp = 14, kUdpSeqOff = 14 + 20 + 8;

std::uint16_t load_be16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

// The IPv4 header checksum computed from scratch (RFC 791): the one's complement of the
// one's-complement sum of the header's words, its own field taken as 0.
std::uint16_t ipv4_checksum_of(const std::uint8_t* ip) {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < 20; i += 2)
        if (i != 10) sum += load_be16(ip + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

void write_udp_frame(std::span<std::uint8_t> f, std::uint64_t seq, std::uint16_t port,
                     std::uint8_t ecn) {
    std::memset(f.data(), 0, f.size());
    f[0] = 0x02;
    f[6] = 0x02;
    f[12] = 0x08;  // IPv4
    std::uint8_t* ip = f.data() + kIp;
    const auto put = [](std::uint8_t* p, std::uint16_t v) {
        p[0] = static_cast<std::uint8_t>(v >> 8);
        p[1] = static_cast<std::uint8_t>(v);
    };
    ip[0] = 0x45;
    ip[1] = ecn;
    put(ip + 2, static_cast<std::uint16_t>(f.size() - kIp));
    put(ip + 4, static_cast<std::uint16_t>(seq));
    ip[8] = 64;
    ip[9] = 17;
    ip[12] = 10, ip[15] = 1;
    ip[16] = 10, ip[19] = 2;
    put(ip + 10, ipv4_checksum_of(ip));
    put(ip + 20, port);
    put(ip + 22, 9);
    put(ip + 24, static_cast<std::uint16_t>(f.size() - kIp - 20));  // UDP checksum 0: none
    std::memcpy(f.data() + kUdpSeqOff, &seq, 8);
}

// One UDP flow into a port; what came out of it, checked frame by frame.
struct UdpFlow {
    UdpFlow(VirtualPort* i, std::uint16_t p, std::uint8_t e, std::uint64_t n, double rate)
        : in(i), port(p), ecn(e), count(n), pps(rate) {}
    VirtualPort* in;
    std::uint16_t port;
    std::uint8_t ecn;  // the codepoint it sends
    std::uint64_t count;
    double pps;
    std::size_t length = 200;
    std::uint64_t sent = 0;
    std::vector<std::uint64_t> got;  // the seqs received, in order
    std::uint64_t ce = 0;            // received marked CE (sent ECT)
    std::uint64_t bad_checksum = 0;  // whose IPv4 checksum is not the one computed from scratch
    std::uint64_t altered = 0;       // other than as sent, or as sent with CE set
    // A frame that came out: as sent, or (ECT sent) as sent with CE and its checksum updated.
    void check(std::span<const std::uint8_t> b, std::uint64_t seq) {
        got.push_back(seq);
        const std::uint8_t* ip = b.data() + kIp;
        if (load_be16(ip + 10) != ipv4_checksum_of(ip)) ++bad_checksum;
        std::vector<std::uint8_t> want(length);
        write_udp_frame(want, seq, port, ecn);
        if (ecn != 0 && ecn != 3 && b.size() == length && (ip[1] & 3) == 3) {
            ++ce;
            want[kIp + 1] |= 3;
            const std::uint16_t c = ipv4_checksum_of(want.data() + kIp);
            want[kIp + 10] = static_cast<std::uint8_t>(c >> 8);
            want[kIp + 11] = static_cast<std::uint8_t>(c);
        }
        if (b.size() != want.size() || !std::equal(b.begin(), b.end(), want.begin())) ++altered;
    }
    bool in_order() const { return std::is_sorted(got.begin(), got.end()) && unique(); }
    bool unique() const {
        return std::set<std::uint64_t>(got.begin(), got.end()).size() == got.size();
    }
};

// Sends the flows paced (catching up after a preemption) into direction 0 and takes what
// comes out of `out`, until every frame is sent, the data plane took them all and holds
// none (every one sent on or dropped) and every frame it counted out came back, or 60 s.
// `tick(now)`, when given, runs on every round.
void run_udp_flows(Dataplane& dp, const std::vector<UdpFlow*>& flows, VirtualPort& out,
                   const std::function<void(TimeNs)>& tick = {}) {
    const TimeNs start = now_ns();
    std::uint64_t strays = 0, received = 0;
    for (;;) {
        const TimeNs now = now_ns();
        if (tick) tick(now);
        bool all_sent = true;
        std::uint64_t total = 0;
        for (UdpFlow* f : flows) {
            const std::uint64_t due = std::min<std::uint64_t>(
                f->count,
                static_cast<std::uint64_t>(static_cast<double>(now - start) * f->pps / 1e9) + 1);
            if (f->sent < due)
                f->sent += f->in->send_burst(due - f->sent, f->length,
                                             [&](std::size_t i, std::span<std::uint8_t> b) {
                                                 write_udp_frame(b, f->sent + i, f->port, f->ecn);
                                             });
            all_sent = all_sent && f->sent == f->count;
            total += f->sent;
        }
        received += out.receive(
            [&](std::span<const std::uint8_t> b) {
                if (b.size() < kUdpSeqOff + 8) {
                    ++strays;
                    return;
                }
                const std::uint16_t port = load_be16(b.data() + kIp + 20);
                std::uint64_t seq;
                std::memcpy(&seq, b.data() + kUdpSeqOff, 8);
                for (UdpFlow* f : flows)
                    if (f->port == port) {
                        f->check(b, seq);
                        return;
                    }
                ++strays;
            },
            256);
        if (all_sent) {
            const DataplaneStats s = dp.stats();
            const CounterSnapshot& c = s.dir[0].counters;
            bool backlog = false;
            for (const UdpFlow* f : flows)
                backlog = backlog || f->in->rx_backlog() > 0;
            if (!backlog && c.packets_in == total && c.in_flight == 0 && s.dir[0].tx_queued == 0 &&
                received == c.packets_out)
                break;
        }
        if (now - start > 60 * kNsPerSec) {
            ADD_FAILURE() << "traffic did not complete within 60 s";
            break;
        }
    }
    EXPECT_EQ(strays, 0u) << "frames of no running flow came out";
}

// The spacer at 4 Mbit/s: 200-byte frames (+4 FCS) leave at ~2450 per second.
LinkParams slow_spacer(QueueKind q, Ecn ecn) {
    LinkParams p;
    p.limiter = Limiter::spacer;
    p.rate_bps = 4e6;
    p.queue = q;
    p.queue_limit_packets = 1000;
    p.ecn = ecn;
    return p;
}

std::uint64_t sum_got(const std::vector<UdpFlow*>& fs) {
    std::uint64_t n = 0;
    for (const UdpFlow* f : fs)
        n += f->got.size();
    return n;
}

// CoDel without ECN on a spacer fed 2.4 times its rate for a second: it drops at dequeue
// (drops_aqm), the limit drops the rest of the excess; every frame sent is counted in and
// either came out (exactly once, in order, unchanged: ECN off marks nothing even of ECT
// frames) or is counted dropped by its cause; every buffer is back at stop.
TEST(DataplaneQueues, CodelDropsAnOverloadAndAccountsForEveryFrame) {
    VirtualPort a(*g_eal, "qcd_a"), b(*g_eal, "qcd_b");
    const LinkParams p = slow_spacer(QueueKind::codel, Ecn::off);
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    UdpFlow f(&a, 7000, /*ECT(0)*/ 2, 6000, 6000);
    run_udp_flows(dp, {&f}, b);
    const DataplaneStats s = dp.stats();
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    const CounterSnapshot& c = s.dir[0].counters;
    std::printf("codel: in %llu, out %llu, drops aqm %llu, limit %llu, buffer_full %llu\n",
                static_cast<unsigned long long>(c.packets_in),
                static_cast<unsigned long long>(c.packets_out),
                static_cast<unsigned long long>(c.drops[DropCause::aqm]),
                static_cast<unsigned long long>(c.drops[DropCause::spacer]),
                static_cast<unsigned long long>(c.drops[DropCause::buffer_full]));
    expect_conservation(s, 2);
    EXPECT_EQ(c.packets_in, f.sent);
    EXPECT_EQ(c.in_flight, 0u);
    EXPECT_EQ(c.packets_out, f.got.size());
    EXPECT_EQ(c.packets_in, c.packets_out + c.drops[DropCause::aqm] + c.drops[DropCause::spacer] +
                                c.drops[DropCause::buffer_full]);
    EXPECT_GT(c.drops[DropCause::aqm], 0u);
    EXPECT_EQ(c.ecn_marked, 0u);
    EXPECT_EQ(f.ce, 0u);
    EXPECT_EQ(f.altered, 0u);
    EXPECT_EQ(f.bad_checksum, 0u);
    EXPECT_TRUE(f.in_order());
}

// FQ-CoDel with ECN on, three flows each above its share: the Not-ECT flow's excess is
// dropped (drops_aqm), the ECT(0) and ECT(1) flows' is marked CE instead (ecn_marked, no
// drops of theirs by the discipline). Every marked frame comes out with CE and an IPv4
// header checksum equal to one computed from scratch, otherwise as sent; as many CE frames
// come out as ecn_marked counts.
TEST(DataplaneQueues, FqCodelWithEcnMarksEctFramesAndDropsTheOthers) {
    VirtualPort a(*g_eal, "qfq_a"), b(*g_eal, "qfq_b");
    const LinkParams p = slow_spacer(QueueKind::fq_codel, Ecn::on);
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    UdpFlow plain(&a, 7001, 0, 3000, 3000), ect0(&a, 7002, 2, 3000, 3000),
        ect1(&a, 7003, 1, 3000, 3000);
    const std::vector<UdpFlow*> fs{&plain, &ect0, &ect1};
    run_udp_flows(dp, fs, b);
    const DataplaneStats s = dp.stats();
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    const CounterSnapshot& c = s.dir[0].counters;
    std::printf(
        "fq_codel, ecn: in %llu, out %llu (plain %zu, ect0 %zu, ect1 %zu), drops aqm %llu, "
        "limit %llu, marked %llu (ect0 %llu, ect1 %llu)\n",
        static_cast<unsigned long long>(c.packets_in),
        static_cast<unsigned long long>(c.packets_out), plain.got.size(), ect0.got.size(),
        ect1.got.size(), static_cast<unsigned long long>(c.drops[DropCause::aqm]),
        static_cast<unsigned long long>(c.drops[DropCause::spacer]),
        static_cast<unsigned long long>(c.ecn_marked), static_cast<unsigned long long>(ect0.ce),
        static_cast<unsigned long long>(ect1.ce));
    expect_conservation(s, 2);
    EXPECT_EQ(c.in_flight, 0u);
    EXPECT_EQ(c.packets_out, sum_got(fs));
    EXPECT_GT(c.drops[DropCause::aqm], 0u);
    EXPECT_GT(c.ecn_marked, 0u);
    EXPECT_GT(ect0.ce, 0u);
    EXPECT_GT(ect1.ce, 0u);
    EXPECT_EQ(ect0.ce + ect1.ce, c.ecn_marked);
    // The discipline dropped only Not-ECT frames: the ECT flows lost only to the limit.
    EXPECT_LE(c.drops[DropCause::aqm], plain.sent - plain.got.size());
    for (const UdpFlow* f : fs) {
        SCOPED_TRACE(f->port);
        EXPECT_EQ(f->altered, 0u);
        EXPECT_EQ(f->bad_checksum, 0u);
        EXPECT_TRUE(f->in_order());
    }
}

// The discipline changed four times while a second of frames is queued behind the spacer:
// fq_codel, pie, codel, droptail with a byte limit (the spacer's own queue) and codel
// again, their targets too long to drop or mark anything. Every frame comes out once, in
// order, unchanged, and every buffer is back at stop.
TEST(DataplaneQueues, SwitchingTheDisciplineWhileQueuedLosesNothing) {
    VirtualPort a(*g_eal, "qsw_a"), b(*g_eal, "qsw_b");
    LinkParams p = slow_spacer(QueueKind::droptail, Ecn::off);
    p.queue_limit_packets = 10000;  // droptail through the queue discipline's queue
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    std::vector<LinkParams> steps;
    for (QueueKind q : {QueueKind::fq_codel, QueueKind::pie, QueueKind::codel, QueueKind::droptail,
                        QueueKind::codel}) {
        LinkParams x = p;
        x.queue = q;
        x.ecn = q == QueueKind::droptail ? Ecn::off : Ecn::on;
        x.codel_target = x.codel_interval = ParamLimits::kMaxAqmTime;
        x.pie_target = ParamLimits::kMaxAqmTime;
        if (q == QueueKind::droptail) {
            x.queue_limit_packets = 0;
            x.queue_limit_bytes = 64u << 20;
        }
        steps.push_back(x);
    }
    UdpFlow f(&a, 7004, 2, 3000, 20000);  // 0.15 s to send, 1.2 s to leave
    std::size_t next = 0;
    std::vector<std::uint64_t> queued_at_change;
    TimeNs last_change = 0;
    run_udp_flows(dp, {&f}, b, [&](TimeNs now) {
        if (next == steps.size() || f.sent < f.count || now - last_change < 100 * kNsPerMs) return;
        queued_at_change.push_back(dp.stats().dir[0].counters.in_flight);
        ASSERT_TRUE(
            dp.wait_applied(dp.apply({steps[next], steps[next]}), std::chrono::seconds(10)));
        ++next;
        last_change = now_ns();
    });
    const DataplaneStats s = dp.stats();
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    ASSERT_EQ(next, steps.size());
    std::printf("queued at each change:");
    for (std::uint64_t n : queued_at_change)
        std::printf(" %llu", static_cast<unsigned long long>(n));
    std::printf("\n");
    EXPECT_GT(queued_at_change.front(), 1000u) << "the first change found the queue full";
    const CounterSnapshot& c = s.dir[0].counters;
    expect_conservation(s, 2);
    EXPECT_EQ(c.drops.total(), 0u);
    EXPECT_EQ(c.ecn_marked, 0u);
    EXPECT_EQ(f.got.size(), f.count);
    EXPECT_TRUE(f.in_order());
    EXPECT_EQ(f.altered, 0u);
    EXPECT_EQ(f.bad_checksum, 0u);
}

// A queue discipline (or a droptail limit in packets) needs one worker per direction:
// refused with two, at construction and by apply(), naming the direction's `queue`; droptail
// with a byte limit is fine.
TEST(DataplaneQueues, SeveralWorkersRefuseAQueueDiscipline) {
    VirtualPort a(*g_eal, "qwk_a", 8192, 16383, VirtualPort::FramePool::rx_queue, 2);
    VirtualPort b(*g_eal, "qwk_b", 8192, 16383, VirtualPort::FramePool::rx_queue, 2);
    const LinkParams codel = slow_spacer(QueueKind::codel, Ecn::off);
    DataplaneConfig cfg = two_port(a, b, codel);
    cfg.workers = Workers{false, 2};
    try {
        Dataplane dp(*g_eal, cfg);
        FAIL() << "no ParamError";
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "a_to_b.queue");
        EXPECT_NE(std::string(e.message()).find("'codel'"), std::string::npos) << e.message();
        EXPECT_NE(std::string(e.message()).find("--workers 1 or shared"), std::string::npos)
            << e.message();
    }
    LinkParams bytes = codel;
    bytes.queue = QueueKind::droptail;
    bytes.queue_limit_packets = 0;
    cfg.link = {bytes, bytes};
    Dataplane dp(*g_eal, cfg);
    for (QueueKind q : {QueueKind::codel, QueueKind::fq_codel, QueueKind::pie}) {
        LinkParams x = slow_spacer(q, Ecn::on);
        try {
            dp.apply({bytes, x});
            ADD_FAILURE() << "no ParamError for " << to_string(q);
        } catch (const ParamError& e) {
            EXPECT_EQ(e.field(), "b_to_a.queue") << to_string(q);
        }
    }
    LinkParams packets = bytes;
    packets.queue_limit_packets = 100;
    EXPECT_THROW(dp.apply({packets, bytes}), ParamError) << "droptail with a limit in packets";
    EXPECT_EQ(dp.link().a_to_b.queue, QueueKind::droptail);
    EXPECT_EQ(dp.link().b_to_a.queue_limit_packets, 0u);
}

// The capture of an FQ-CoDel link with ECN, its Not-ECT flow dropped and its ECT flow marked:
// tshark reads a drop=aqm record for each drops_aqm, an out record with ecn=ce for each
// ecn_marked, and its own reading of the IP header agrees: as many out frames with ECN field
// 3 (none in), every IPv4 header checksum good, the discipline's drops all Not-ECT.
TEST(DataplaneCapture, QueueDropsAndCeMarksAreRecorded) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh)";
    VirtualPort a(*g_eal, "qcap_a"), b(*g_eal, "qcap_b");
    const LinkParams p = slow_spacer(QueueKind::fq_codel, Ecn::on);
    Dataplane dp(*g_eal, two_port(a, b, p));
    dp.start();
    const std::string file = "/tmp/linkem-dp-qcap-" + std::to_string(getpid()) + ".pcapng";
    capture::Settings cs;
    cs.file = file;
    cs.points = capture::kAllPoints;
    cs.snaplen = 64;
    ASSERT_TRUE(dp.start_capture(cs).running);
    UdpFlow plain(&a, 7005, 0, 3000, 3000), ect(&a, 7006, 2, 3000, 3000);
    run_udp_flows(dp, {&plain, &ect}, b);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const DataplaneStats s = dp.stats();
    const capture::Status st = dp.stop_capture();
    dp.stop();
    EXPECT_EQ(test::pool_check(dp), "");
    EXPECT_EQ(st.missed, 0u);
    const CounterSnapshot& c = s.dir[0].counters;
    ASSERT_GT(c.drops[DropCause::aqm], 0u);
    ASSERT_GT(c.ecn_marked, 0u);
    EXPECT_EQ(ect.ce, c.ecn_marked);
    const test::TsharkRows t = test::tshark_fields(
        file, {"frame.interface_id", "frame.comment", "ip.dsfield.ecn", "ip.checksum.status"},
        "-o ip.check_checksum:TRUE");
    EXPECT_EQ(t.rc, 0);
    EXPECT_EQ(t.rows.size(), st.records);
    // Interfaces: 0 a_to_b in, 1 a_to_b out, 2 b_to_a in, 3 b_to_a out, 4 drops.
    std::uint64_t per_if[5] = {}, ce_comment = 0, ce_field_out = 0, ce_field_in = 0,
                  bad_checksum = 0, unverified = 0, aqm_ect = 0;
    std::map<std::string, std::uint64_t> drops;
    for (const auto& row : t.rows) {
        const unsigned iface = static_cast<unsigned>(std::stoul(row[0]));
        ASSERT_LT(iface, 5u);
        ++per_if[iface];
        const auto f = test::comment_fields(row[1]);
        if (iface == 4) ++drops[f.at("drop")];
        // The discipline marks ECT frames where it would drop: its drops are all Not-ECT.
        if (iface == 4 && f.at("drop") == "aqm" && row[2] != "0") ++aqm_ect;
        if (iface == 1 && f.count("ecn") && f.at("ecn") == "ce") ++ce_comment;
        if (iface != 1 && f.count("ecn")) ADD_FAILURE() << "ecn= on a record not out: " << row[1];
        if (row[2] == "3") ++(iface == 1 ? ce_field_out : ce_field_in);
        bad_checksum += row[3] == "0";
        unverified += row[3] != "1";
    }
    std::printf("capture: %llu records, drop=aqm %llu, ecn=ce %llu, ip.dsfield.ecn == 3 out %llu\n",
                static_cast<unsigned long long>(t.rows.size()),
                static_cast<unsigned long long>(drops["aqm"]),
                static_cast<unsigned long long>(ce_comment),
                static_cast<unsigned long long>(ce_field_out));
    EXPECT_EQ(per_if[0], c.packets_in);
    EXPECT_EQ(per_if[1], c.packets_out);
    for (const DropCauseInfo& k : kDropCauses)
        EXPECT_EQ(drops[k.name],
                  s.dir[0].counters.drops[k.cause] + s.dir[1].counters.drops[k.cause])
            << k.name;
    EXPECT_EQ(drops["aqm"], c.drops[DropCause::aqm]);
    EXPECT_EQ(aqm_ect, 0u) << "drop=aqm records of ECT frames";
    EXPECT_EQ(ce_comment, c.ecn_marked);
    EXPECT_EQ(ce_field_out, c.ecn_marked);
    EXPECT_EQ(ce_field_in, 0u) << "frames arrive unmarked; a dropped one was never marked";
    EXPECT_EQ(bad_checksum, 0u);
    EXPECT_EQ(unverified, 0u) << "tshark checked every IPv4 header checksum";
    std::remove(file.c_str());
}

}  // namespace
}  // namespace linkem::dp

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    // --hold-mbufs: run every test with DataplaneConfig::hold_mbufs (ctest runs both ways).
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--hold-mbufs") linkem::dp::g_hold_mbufs = true;
    ::testing::AddGlobalTestEnvironment(new linkem::dp::EalEnvironment);
    return RUN_ALL_TESTS();
}
