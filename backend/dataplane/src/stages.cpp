#include "stages.hpp"

#include <algorithm>
#include <limits>

#include <rte_ethdev.h>

#include "exchange.hpp"

namespace linkem::dp::detail {

inline bool flush_pending(Lane& d) {
    if (d.pend_n == 0) return true;
    LINKEM_STAGE_START(t_tx);
    const std::uint16_t s = rte_eth_tx_burst(d.tx_port, d.queue, d.pending + d.pend_head,
                                             static_cast<std::uint16_t>(d.pend_n));
    LINKEM_STAGE_END(d, tx, t_tx);
    LINKEM_STAGE_CALL(d, tx);
    count_sent(d, s);
    d.pend_head += s;
    d.pend_n -= s;
    if (d.pend_n) return false;
    d.pend_head = 0;
    return true;
}

// Sends d.pending[0, m). What the TX queue refuses stays pending, in order, for
// flush_pending() to retry first. True when everything went out.
inline bool send_pending(Lane& d, std::uint32_t m) {
    LINKEM_STAGE_START(t_tx);
    const std::uint16_t s =
        rte_eth_tx_burst(d.tx_port, d.queue, d.pending, static_cast<std::uint16_t>(m));
    LINKEM_STAGE_END(d, tx, t_tx);
    LINKEM_STAGE_CALL(d, tx);
    count_sent(d, s);
    if (s == m) return true;
    d.pend_head = s;
    d.pend_n = m - s;
    return false;
}

inline void drain_to_port(Lane& d, TimeNs now) {
    if (!flush_pending(d)) return;
    // A few bursts per visit so that a backlog of due packets (after a pause or a rate
    // change) is worked off faster than new ones arrive. After the first, only whole ones:
    // a remainder waits for the next visit (a loop later) and leaves with the packets due
    // by then, instead of costing a drain and a TX call of its own.
    for (int round = 0; round < 4; ++round) {
        if (round > 0 && !d.emu->due_at_least(now, d.burst)) return;
        const std::size_t m = drain(d, now, d.pending, d.burst);
        if (m == 0) return;
        if (!send_pending(d, static_cast<std::uint32_t>(m))) return;
        if (m < d.burst) return;
    }
}

// One rx_burst from d's port into pkts.
inline std::uint16_t poll_rx(Lane& d, rte_mbuf** pkts) {
    LINKEM_STAGE_START(t_rx);
    const std::uint16_t n = rte_eth_rx_burst(d.rx_port, d.queue, pkts, d.burst);
    LINKEM_STAGE_END(d, rx, t_rx);
    return n;
}

// rx_bursts while each comes back full, up to d.gather packets. Workers that share a limiter
// reserve the link's time once per Emulator::ingest chunk, with one compare-and-swap on the
// word every worker writes; gathering up to a chunk before ingesting makes that one per 64
// packets instead of one per burst under load, and every worker pays the Emulator's and the
// exchange's per-call costs once per 64 packets (docs/dataplane.md, "Timing"). A burst that
// is not full ends the gathering (the queue is empty), so light traffic is stamped and
// queued as before; under load the first burst's packets are stamped a few rx_burst calls
// later than they arrived, never earlier.
inline std::uint16_t poll_rx_gathered(Lane& d, rte_mbuf** pkts) {
    std::uint16_t n = poll_rx(d, pkts);
    for (std::uint16_t got = n; got == d.burst && n + d.burst <= d.gather; n += got)
        got = poll_rx(d, pkts + n);
    return n;
}

// Ingests the n packets of a poll_rx() made before `now` was read (and notes the poll).
inline void ingest_polled(Lane& d, rte_mbuf** pkts, std::uint16_t n, TimeNs now) {
    note_poll(d, d.last_rx_poll, now);
    if (n) ingest(d, pkts, n, now);
}

// The timestamp is taken after rx_burst returns: taken before, a preemption between the
// two would stamp packets with a time before they arrived and send them early. The same
// timestamp then serves the drain.
inline TimeNs rx_and_ingest(Lane& d) {
    rte_mbuf* pkts[kMaxBurst];
    const std::uint16_t n = poll_rx_gathered(d, pkts);
    const TimeNs now = tsc_now();
    ingest_polled(d, pkts, n, now);
    return now;
}

// Both directions on one lcore: both ports are polled first, and one timestamp, taken after
// both bursts are in, serves both (a TSC read costs some 30 cycles here, a cycle per packet
// at full load). Each burst is stamped no earlier than it arrived, as above; the first one
// up to a second rx_burst call later.
inline void both_rx_and_emulate(Lane& d0, Lane& d1) {
    rte_mbuf* p0[kMaxBurst];
    rte_mbuf* p1[kMaxBurst];
    const std::uint16_t n0 = poll_rx(d0, p0);
    const std::uint16_t n1 = poll_rx(d1, p1);
    const TimeNs now = tsc_now();
    ingest_polled(d0, p0, n0, now);
    drain_to_port(d0, now);
    ingest_polled(d1, p1, n1, now);
    drain_to_port(d1, now);
    report_if_due(d0, now);
    report_if_due(d1, now);
}

int lcore_main(void* arg) {
    const LcoreTask& task = *static_cast<const LcoreTask*>(arg);
    const std::atomic<bool>& run = *task.run;
    Lane& d0 = *task.lanes[0];
    if (task.n_lanes == 2) {
        Lane& d1 = *task.lanes[1];
        while (run.load(std::memory_order_relaxed)) {
            adopt_params(d0);
            adopt_params(d1);
            both_rx_and_emulate(d0, d1);
        }
        return 0;
    }
    while (run.load(std::memory_order_relaxed)) {
        adopt_params(d0);
        const TimeNs now = rx_and_ingest(d0);
        drain_to_port(d0, now);
        report_if_due(d0, now);
    }
    return 0;
}

void free_all(Lane& d) {
    if (d.pend_n) rte_pktmbuf_free_bulk(d.pending + d.pend_head, d.pend_n);
    d.pend_n = d.pend_head = 0;
    HeldPacket held[256];
    std::size_t n;
    while ((n = d.emu->drain(std::numeric_limits<TimeNs>::max(), held, 256)) > 0)
        for (std::size_t i = 0; i < n; ++i)
            release(d, held[i]);
    teardown_exchange(d);
}

}  // namespace linkem::dp::detail
