// One direction of the link as the data-plane lcores see it: its Emulator, the stage rings,
// the parameter hand-off from the control thread, the stall counters, the buffer exchange's
// state and (with -DLINKEM_DP_PROFILE=ON) the stage profile. Internal to the data plane.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "dpdk.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/spsc_ring.hpp"
#include "linkem/telemetry.hpp"

namespace linkem::dp::detail {

inline constexpr std::uint16_t kRxDesc = 1024;
inline constexpr std::uint16_t kTxDesc = 1024;
inline constexpr unsigned kStageRing = 4096;
inline constexpr unsigned kPoolCache = 256;
// Buffer exchange (below): at most this many mbuf headers kept ready for the drain per
// direction (kStashBursts bursts), and how many mbufs of its own pool a direction may hold in its
// queue as whole mbufs (pool / 16 within these bounds).
inline constexpr unsigned kStashBursts = 4;
inline constexpr unsigned kStash = kStashBursts * kMaxBurst;
inline constexpr std::uint32_t kHeldCapMin = 64, kHeldCapMax = 1024;
// A gap of at least this between two polls of a direction is a stall (DirectionStats).
inline constexpr TimeNs kStallNs = 100 * kNsPerUs;

// ------------------------------------------------------------------------ stage profile
//
// Built with -DLINKEM_DP_PROFILE=ON, the data plane counts the TSC cycles each stage of the
// packet path takes, per direction, and logs them per received packet at stop: where a
// mode's time goes in place, which sampling (perf has only cpu-clock in these VMs, and
// its samples slide onto neighbouring instructions) cannot say. Each timed stage costs two
// TSC reads per burst, which the figures include (~25 cycles a read on the 2.1 GHz VMs of
// docs/performance.md, ~10 cycles per packet in all at burst 32: compare modes within a profile
// build, not with the normal build's rates). The normal build has none of it.
#ifdef LINKEM_DP_PROFILE
struct StageProfile {
    // Each on the line of the lcore that times it (layouts two and three split the stages).
    alignas(64) std::uint64_t rx = 0;        // rte_eth_rx_burst
    alignas(64) std::uint64_t exchange = 0;  // buffer exchange before the Emulator
    std::uint64_t ingest = 0;                // Emulator::ingest (delay, limiter, loss, queue push)
    std::uint64_t drain = 0;                 // Emulator::drain (queue pop; the calendar's sort)
    std::uint64_t headers = 0;               // mbuf headers for the drained buffers
    std::uint64_t packets = 0;               // handed to Emulator::ingest
    alignas(64) std::uint64_t tx = 0;        // rte_eth_tx_burst
    std::uint64_t tx_calls = 0;              // rte_eth_tx_burst calls
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

// ------------------------------------------------------------------------- directions
struct ParamBlock {
    std::uint64_t generation;
    LinkParams params;  // buffer limit already capped by the pool
    // A scenario's track for the Emulator to follow from `origin` on (buffer limits capped
    // likewise), or none: the parameters stay.
    std::shared_ptr<const ScenarioTrack> track;
    TimeNs origin = 0;
};

// A packet with its arrival time, on the ring from the rx stage to the emulate stage.
struct RxItem {
    rte_mbuf* m;
    TimeNs t;
};
static_assert(sizeof(RxItem) == 16, "ring elements must be a multiple of 4 bytes");

struct alignas(64) Direction {
    unsigned index = 0;
    std::uint16_t rx_port = 0, tx_port = 0;
    std::uint16_t burst = 16;
    std::uint64_t buffer_cap = 0;
    std::unique_ptr<MbufEmulator> emu;
    detail::Ring rx_ring;  // layout three: rx -> emulate
    detail::Ring tx_ring;  // layouts two, three: emulate -> tx

    // Parameter hand-off. Written by the control thread...
    alignas(64) std::atomic<const ParamBlock*> block{nullptr};
    std::atomic<std::uint64_t> published{0};
    // ...and acknowledged by the lcore that owns the Emulator.
    alignas(64) std::atomic<std::uint64_t> acked{0};
    std::uint64_t adopted = 0;

    // TX stage (owner: the lcore that calls tx_burst).
    alignas(64) std::atomic<std::uint64_t> tx_sent{0};
    std::uint32_t pend_head = 0, pend_n = 0;
    rte_mbuf* pending[kMaxBurst];

    // RX stage of layout three.
    alignas(64) std::uint32_t hold_head = 0, hold_n = 0;
    RxItem hold[kMaxBurst];

    // Stalls: poll gaps of kStallNs or more. Each of the two polling stages (the one that
    // stamps arrivals, and with layout three the emulate stage that drains) keeps its own
    // last poll time; both add to the counts (rarely: an atomic add or maximum each).
    alignas(64) TimeNs last_rx_poll = 0;
    TimeNs last_drain_poll = 0;
    std::atomic<std::uint64_t> stalls{0}, stall_ns{0}, longest_stall_ns{0};

    // Buffer exchange (owner: the lcore that owns the Emulator).
    alignas(64) bool exchange = false;
    rte_mempool* pool = nullptr;  // the pool this direction receives into
    std::uintptr_t buf_base = 0;  // the lowest packet buffer address of `pool`
    std::uint32_t free_n = 0;     // free_bufs[0, free_n): packet buffers without a header
    void** free_bufs = nullptr;
    std::uint32_t stash_n = 0;                 // headers (without a buffer) ready for the drain
    std::uint32_t stash_cap = 0;               // kStashBursts bursts
    std::uint64_t held_own = 0, held_cap = 0;  // mbufs of `pool` held whole in the queue
    bool warned_headers = false;
    rte_mbuf* stash[kStash];
    std::vector<void*> free_store;
    std::vector<rte_mbuf*> donors;  // the headers whose buffers were given to the queue

    // Telemetry (owner: the lcore that owns the Emulator): an interval report every
    // kReportPeriod, and the delay samples the Emulator completes.
    alignas(64) TimeNs next_report = 0;
    std::atomic<std::uint64_t> reports_dropped{0};
    std::unique_ptr<SpscRing<IntervalReport>> reports;
    std::unique_ptr<SpscRing<DelaySample>> samples;

#ifdef LINKEM_DP_PROFILE
    alignas(64) StageProfile prof;
#endif
};

[[gnu::noinline, gnu::cold]] inline void report(Direction& d, TimeNs now) {
    if (d.next_report != 0 && !d.reports->try_push(d.emu->take_report(now, d.adopted)))
        d.reports_dropped.fetch_add(1, std::memory_order_relaxed);
    if (d.next_report == 0) d.emu->take_report(now, d.adopted);  // starts the first interval
    d.next_report = now + kReportPeriod;
}

// After a visit that moved d's packets at `now`: the interval report when it is due.
inline void report_if_due(Direction& d, TimeNs now) {
    if (now >= d.next_report) [[unlikely]]
        report(d, now);
}

// Adopts a newly published parameter block. The generation is read first (acquire): the
// block pointer stored before it is then visible. set_params copies the block, so once
// `acked` is stored (release) this lcore holds no reference to any older block and the
// control thread may free them.
inline void adopt_params(Direction& d) {
    if (d.published.load(std::memory_order_acquire) == d.adopted) [[likely]]
        return;
    const ParamBlock* b = d.block.load(std::memory_order_acquire);
    d.emu->set_params(b->params);
    d.emu->follow(b->track.get(), b->origin);
    d.adopted = b->generation;
    d.acked.store(b->generation, std::memory_order_release);
}

[[gnu::noinline, gnu::cold]] inline void count_stall(Direction& d, TimeNs gap) {
    const auto g = static_cast<std::uint64_t>(gap);
    d.stalls.fetch_add(1, std::memory_order_relaxed);
    d.stall_ns.fetch_add(g, std::memory_order_relaxed);
    std::uint64_t longest = d.longest_stall_ns.load(std::memory_order_relaxed);
    while (g > longest &&
           !d.longest_stall_ns.compare_exchange_weak(longest, g, std::memory_order_relaxed)) {
    }
}

// A poll of a direction at `now`; `last` is the stage's previous poll (0: none yet).
inline void note_poll(Direction& d, TimeNs& last, TimeNs now) {
    const TimeNs gap = now - last;
    if (gap >= kStallNs && last != 0) [[unlikely]]
        count_stall(d, gap);
    last = now;
}

inline void count_sent(Direction& d, std::uint32_t n) {
    if (n) Counters::add(d.tx_sent, n);
}

}  // namespace linkem::dp::detail
