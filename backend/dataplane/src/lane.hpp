// A lane: what one worker lcore does for one direction of the link. It receives from its
// queue of the direction's receiving port, runs its own Emulator and transmits on its queue
// of the sending port. Here: the Emulator, the parameter hand-off from the control thread,
// the stall counters, the buffer exchange's state, telemetry and (with
// -DLINKEM_DP_PROFILE=ON) the stage profile. A direction has one lane per worker (one with
// `shared`, where one lcore runs both directions' lanes). Internal to the data plane.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "acl_classifier.hpp"
#include "dpdk.hpp"
#include "linkem/capture.hpp"
#include "linkem/classes.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/shared_link.hpp"
#include "linkem/spsc_ring.hpp"
#include "linkem/telemetry.hpp"

namespace linkem::dp::detail {

inline constexpr std::uint16_t kRxDesc = 1024;
inline constexpr std::uint16_t kTxDesc = 1024;
inline constexpr unsigned kPoolCache = 256;
// Buffer exchange (below): at most this many mbuf headers kept ready for the drain per
// lane (kStashBursts bursts), and how many mbufs of its own pool a lane may hold in its
// queue as whole mbufs (pool / 16 within these bounds).
inline constexpr unsigned kStashBursts = 4;
inline constexpr unsigned kStash = kStashBursts * kMaxBurst;
inline constexpr std::uint32_t kHeldCapMin = 64, kHeldCapMax = 1024;
// A gap of at least this between two polls of a lane is a stall (DirectionStats).
inline constexpr TimeNs kStallNs = 100 * kNsPerUs;

// ------------------------------------------------------------------------ stage profile
//
// Built with -DLINKEM_DP_PROFILE=ON, the data plane counts the TSC cycles each stage of the
// packet path takes, per lane, and logs them per received packet at stop: where a
// mode's time goes in place, which sampling cannot say where perf has only cpu-clock (as in
// many VMs) or its samples slide onto neighbouring instructions. Each timed stage costs two
// TSC reads per burst, which the figures include: compare modes within a profile build, not
// with the normal build's rates (docs/performance.md, "Reproducing the figures"). The
// normal build has none of it.
#ifdef LINKEM_DP_PROFILE
struct StageProfile {
    std::uint64_t rx = 0;        // rte_eth_rx_burst
    std::uint64_t exchange = 0;  // buffer exchange before the Emulator
    std::uint64_t ingest = 0;    // Emulator::ingest (delay, limiter, loss, queue push)
    std::uint64_t drain = 0;     // Emulator::drain (queue pop; the calendar's sort)
    std::uint64_t headers = 0;   // mbuf headers for the drained buffers
    std::uint64_t packets = 0;   // handed to Emulator::ingest
    std::uint64_t tx = 0;        // rte_eth_tx_burst
    std::uint64_t tx_calls = 0;  // rte_eth_tx_burst calls
};
#define LINKEM_STAGE_START(t) const std::uint64_t t = rte_rdtsc()
#define LINKEM_STAGE_END(d, stage, t) ((d).prof.stage += rte_rdtsc() - (t))
#define LINKEM_STAGE_COUNT(d, n) ((d).prof.packets += (n))
#define LINKEM_STAGE_CALL(d, stage) (++(d).prof.stage##_calls)
#else
#define LINKEM_STAGE_START(t)
#define LINKEM_STAGE_END(d, stage, t)
#define LINKEM_STAGE_COUNT(d, n)
#define LINKEM_STAGE_CALL(d, stage)
#endif

// ------------------------------------------------------------------------------ lanes
// Traffic classes (docs/classes.md). Every class of the list has a slot in each lane, by its
// name: slot 0 is `default` (the lane's `emu`), slots 1 .. kMaxClasses the classes'. A name
// keeps its slot while it stays in the list (its queued packets, counters and random streams
// with it); a new name takes a slot never used, or one whose name left the list. An emulate
// class's slot has its own Emulator, made by the control thread before the first block that
// names the slot is published and kept until stop: packets queued in a class that was
// removed or changed leave as scheduled.
inline constexpr unsigned kSlots = kMaxClasses + 1;

// One class of a parameter block.
struct ClassBlock {
    ClassAction action = ClassAction::emulate;
    std::uint8_t slot = 0;
    // emulate: the limiter's shared link: the direction's (`"limiter": "link"`), the class's
    // own one of the direction's workers (several workers), or none (the Emulator's own).
    SharedLink* limiter = nullptr;
    LinkParams params;  // emulate: as lane_params() makes them
    DelayTables tables;
};

// A lane's counters per slot, cumulative: an emulate class's Emulator's counters plus what
// passed or was dropped by its action; c[0] is `default`'s.
struct SlotReport {
    unsigned slots = 0;  // c[0 .. slots] are valid
    std::array<CounterSnapshot, kSlots> c{};
};

// Made by the control thread, immutable once published. `tables`: what the parameters need
// that is costly to derive (MbufEmulator::prepare: smooth's gamma quantile table, up to ~5
// ms), built here so that the lane only adopts it; shared by the blocks of a direction's
// lanes and by later blocks with the same delay law.
struct ParamBlock {
    std::uint64_t generation;
    LinkParams params;  // buffer limit already split between the workers and capped by the pool
    DelayTables tables;
    // A scenario's track for the Emulator to follow from `origin` on (buffer limits capped
    // likewise), or none: the parameters stay.
    std::shared_ptr<const ScenarioTrack> track;
    TimeNs origin = 0;
    // Traffic classes: the classifier (null: none, every packet is `default`'s) and class i
    // of the list at classes[i] (ClassId i + 1); slots 1 .. slots have been named so far.
    std::shared_ptr<const AclClassifier> classifier;
    std::vector<ClassBlock> classes;
    bool default_shares = false;  // `default` goes through the direction's shared link
    unsigned slots = 0;
};

// Capture (docs/capture.md): what a lane records, made by the control thread for a capture
// and published to the lane (Lane::capture_pub). The lane writes the records into `ring`
// (never waiting: a full ring counts the record missed) and a note of each queued packet's
// fate into its buffer's headroom, which the drain reads back.
struct LaneCapture {
    capture::CaptureRing* ring = nullptr;
    unsigned points = 0;  // capture::Point bits
    std::uint32_t snaplen = 0;
    std::uint64_t tag = 0;               // this capture's mark on the notes it writes
    std::array<bool, kSlots> slot_on{};  // the classes recorded
    std::uint64_t seq = 0;               // owner: the lane; the next packet's number
};

struct alignas(64) Lane {
    unsigned index = 0;  // the direction: 0 a_to_b, 1 b_to_a
    unsigned queue = 0;  // the worker within the direction: its queue on both ports
    std::uint16_t rx_port = 0, tx_port = 0;
    std::uint16_t burst = 16;
    // The most packets taken in one go from consecutive full bursts (a multiple of burst):
    // burst itself with `shared`, else up to what one reservation of a shared link covers
    // (see poll_rx_gathered).
    std::uint16_t gather = 16;
    std::uint64_t buffer_cap = 0;
    std::unique_ptr<MbufEmulator> emu;

    // Parameter hand-off. Written by the control thread...
    alignas(64) std::atomic<const ParamBlock*> block{nullptr};
    std::atomic<std::uint64_t> published{0};
    std::atomic<LaneCapture*> capture_pub{nullptr};  // a capture's, or none
    // ...and acknowledged by the lcore that owns the Emulator.
    alignas(64) std::atomic<std::uint64_t> acked{0};
    std::uint64_t adopted = 0;
    std::atomic<LaneCapture*> capture_seen{nullptr};  // the capture the lane took up
    LaneCapture* cap = nullptr;                       // owner: the lane's lcore

    // Traffic classes (owner: the lane's lcore, from the adopted block; slot_emu and
    // slot_samples are made by the control thread, see ClassBlock above).
    alignas(64) const AclClassifier* classifier = nullptr;
    unsigned slots = 0;                          // slots 1 .. slots may hold packets
    std::array<ClassAction, kSlots> action{};    // by ClassId
    std::array<std::uint8_t, kSlots> slot_of{};  // by ClassId
    SharedLink* link = nullptr;                  // the direction's shared limiter
    std::array<std::unique_ptr<MbufEmulator>, kSlots> slot_emu;  // [0] unused: emu
    std::array<std::unique_ptr<SpscRing<DelaySample>>, kSlots> slot_samples;
    struct PlainCounts {  // pass and drop classes' packets, by slot
        std::uint64_t in = 0, in_bytes = 0, out = 0, out_bytes = 0;
        std::uint64_t dropped = 0;  // drop: all; pass: no room to send
    };
    std::array<PlainCounts, kSlots> plain{};
    std::unique_ptr<SpscRing<SlotReport>> slot_reports;

    // Transmit (owner: the lane's lcore). Room for a drain's burst and a burst of packets
    // that pass (their class's action) behind what the TX queue has not taken yet.
    alignas(64) std::atomic<std::uint64_t> tx_sent{0};
    std::uint32_t pend_head = 0, pend_n = 0;
    rte_mbuf* pending[2 * kMaxBurst];

    // Stalls: poll gaps of kStallNs or more.
    alignas(64) TimeNs last_rx_poll = 0;
    std::atomic<std::uint64_t> stalls{0}, stall_ns{0}, longest_stall_ns{0};

    // Buffer exchange (owner: the lane's lcore).
    alignas(64) bool exchange = false;
    rte_mempool* pool = nullptr;  // the pool this lane receives into
    std::uintptr_t buf_base = 0;  // the lowest packet buffer address of `pool`
    std::uint32_t free_n = 0;     // free_bufs[0, free_n): packet buffers without a header
    void** free_bufs = nullptr;
    std::uint32_t stash_n = 0;                 // headers (without a buffer) ready for the drain
    std::uint32_t stash_cap = 0;               // kStashBursts gathers
    std::uint64_t held_own = 0, held_cap = 0;  // mbufs of `pool` held whole in the queue
    bool warned_headers = false;
    rte_mbuf* stash[kStash];
    std::vector<void*> free_store;
    std::vector<rte_mbuf*> donors;  // the headers whose buffers were given to the queue

    // Telemetry (owner: the lane's lcore): an interval report at every multiple of
    // kReportPeriod, and the delay samples the Emulator completes.
    alignas(64) TimeNs next_report = 0;
    std::atomic<std::uint64_t> reports_dropped{0};
    std::unique_ptr<SpscRing<IntervalReport>> reports;
    std::unique_ptr<SpscRing<DelaySample>> samples;

#ifdef LINKEM_DP_PROFILE
    alignas(64) StageProfile prof;
#endif
};

// Adds c's counters to s (sums; the rate estimates summed; the correlation weight s's).
// merge_into: adds x's counters and statistics to m (a direction's workers, or a lane's classes):
// sums, the delay and lateness statistics merged, the oldest generation. The correlation weight
// stays m's (merge_reports averages it over workers).
inline void add_counters(CounterSnapshot& s, const CounterSnapshot& c) {
    s.packets_in += c.packets_in;
    s.bytes_in += c.bytes_in;
    s.packets_out += c.packets_out;
    s.bytes_out += c.bytes_out;
    s.drops += c.drops;
    s.delays_clamped += c.delays_clamped;
    s.waited += c.waited;
    s.ecn_marked += c.ecn_marked;
    s.in_flight += c.in_flight;
    s.rate_pps += c.rate_pps;
    s.rate_intervals = std::max(s.rate_intervals, c.rate_intervals);
}

inline void merge_into(IntervalReport& m, const IntervalReport& x) {
    add_counters(m.counters, x.counters);
    m.start_ns = std::min(m.start_ns, x.start_ns);
    m.end_ns = std::max(m.end_ns, x.end_ns);
    m.params_generation = std::min(m.params_generation, x.params_generation);
    m.delay.merge(x.delay);
    m.lateness.merge(x.lateness);
    m.queue.merge(x.queue);
    m.samples_dropped += x.samples_dropped;
}

// What slot s's pass or drop action did, added to its counters.
inline void add_plain(CounterSnapshot& c, const Lane::PlainCounts& p) {
    c.packets_in += p.in;
    c.bytes_in += p.in_bytes;
    c.packets_out += p.out;
    c.bytes_out += p.out_bytes;
    c.drops[DropCause::class_action] += p.dropped;
}

inline MbufEmulator* slot_emulator(const Lane& d, unsigned s) {
    return s == 0 ? d.emu.get() : d.slot_emu[s].get();
}

// The lane's counters of slots 0 .. slots as they are now (on the control thread: before the
// lcores start or after they stopped).
inline SlotReport slot_counts(const Lane& d, unsigned slots) {
    SlotReport r;
    r.slots = slots;
    for (unsigned s = 0; s <= slots; ++s) {
        if (const MbufEmulator* e = slot_emulator(d, s)) r.c[s] = e->snapshot();
        add_plain(r.c[s], d.plain[s]);
    }
    return r;
}

// The interval report of a lane with classes: every slot's Emulator's, merged, with what
// passed and was dropped by class actions; each slot's counters go to slot_reports.
inline IntervalReport take_class_report(Lane& d, TimeNs now) {
    IntervalReport m = d.emu->take_report(now, d.adopted);
    SlotReport sr;
    sr.slots = d.slots;
    sr.c[0] = m.counters;
    for (unsigned s = 1; s <= d.slots; ++s) {
        CounterSnapshot& c = sr.c[s];
        if (MbufEmulator* e = d.slot_emu[s].get()) {
            const IntervalReport r = e->take_report(now, d.adopted);
            merge_into(m, r);
            c = r.counters;
        }
        add_plain(c, d.plain[s]);
        add_plain(m.counters, d.plain[s]);
    }
    d.slot_reports->try_push(sr);  // cumulative: a report the ring has no room for is not missed
    return m;
}

// The lanes of a direction report at the same instants (the multiples of kReportPeriod), so
// that their reports cover the same intervals and add up.
[[gnu::noinline, gnu::cold]] inline void report(Lane& d, TimeNs now) {
    const IntervalReport r =
        d.slots ? take_class_report(d, now) : d.emu->take_report(now, d.adopted);
    // The first report only starts the first interval.
    if (d.next_report != 0 && !d.reports->try_push(r))
        d.reports_dropped.fetch_add(1, std::memory_order_relaxed);
    d.next_report = (now / kReportPeriod + 1) * kReportPeriod;
}

// After a visit that moved d's packets at `now`: the interval report when it is due.
inline void report_if_due(Lane& d, TimeNs now) {
    if (now >= d.next_report) [[unlikely]]
        report(d, now);
}

// The lane whose Emulator runs on this thread now: the queue disciplines' packet traits
// (queue_traits.cpp) find its buffers through it. Set before each call that moves
// packets or changes the parameters.
extern thread_local Lane* t_queue_lane;

// Adopts a newly published parameter block. The generation is read first (acquire): the
// block pointer stored before it is then visible. set_params copies the parameters and
// shares the block's tables (no costly work here), dropping its share of the previous
// block's, which that block still holds: the last reference to a table is always the
// control thread's, which frees it. Once `acked` is stored (release) this lcore holds no
// reference to any older block and the control thread may free them.
inline void adopt_params(Lane& d) {
    if (d.published.load(std::memory_order_acquire) == d.adopted) [[likely]]
        return;
    const ParamBlock* b = d.block.load(std::memory_order_acquire);
    t_queue_lane = &d;  // a change into fq_codel hashes the queued packets' headers
    d.emu->set_params(b->params, b->tables);
    d.emu->follow(b->track.get(), b->origin);
    d.emu->share_limiter(b->default_shares ? d.link : nullptr);
    d.classifier = b->classifier.get();
    d.slots = std::max(d.slots, b->slots);
    for (std::size_t i = 0; i < b->classes.size(); ++i) {
        const ClassBlock& c = b->classes[i];
        d.action[i + 1] = c.action;
        d.slot_of[i + 1] = c.slot;
        if (c.action != ClassAction::emulate) continue;
        MbufEmulator& e = *d.slot_emu[c.slot];
        e.set_params(c.params, c.tables);
        e.share_limiter(c.limiter);
    }
    d.adopted = b->generation;
    d.acked.store(b->generation, std::memory_order_release);
}

// Takes up a newly published capture (or its end) at a loop boundary and says so: once
// capture_seen is the control thread's new value, the lane no longer touches the old one.
inline void adopt_capture(Lane& d) {
    LaneCapture* c = d.capture_pub.load(std::memory_order_acquire);
    if (c != d.cap) [[unlikely]] {
        d.cap = c;
        d.capture_seen.store(c, std::memory_order_release);
    }
}

[[gnu::noinline, gnu::cold]] inline void count_stall(Lane& d, TimeNs gap) {
    const auto g = static_cast<std::uint64_t>(gap);
    d.stalls.fetch_add(1, std::memory_order_relaxed);
    d.stall_ns.fetch_add(g, std::memory_order_relaxed);
    std::uint64_t longest = d.longest_stall_ns.load(std::memory_order_relaxed);
    while (g > longest &&
           !d.longest_stall_ns.compare_exchange_weak(longest, g, std::memory_order_relaxed)) {
    }
}

// A poll of a lane at `now`; `last` is its previous poll (0: none yet).
inline void note_poll(Lane& d, TimeNs& last, TimeNs now) {
    const TimeNs gap = now - last;
    if (gap >= kStallNs && last != 0) [[unlikely]]
        count_stall(d, gap);
    last = now;
}

inline void count_sent(Lane& d, std::uint32_t n) {
    if (n) Counters::add(d.tx_sent, n);
}

}  // namespace linkem::dp::detail
