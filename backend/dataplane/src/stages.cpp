#include "stages.hpp"

#include <algorithm>
#include <limits>

#include <rte_ethdev.h>
#include <rte_ring_elem.h>

#include "exchange.hpp"

namespace linkem::dp::detail {

inline bool flush_pending(Direction& d) {
    if (d.pend_n == 0) return true;
    LINKEM_STAGE_START(t_tx);
    const std::uint16_t s = rte_eth_tx_burst(d.tx_port, 0, d.pending + d.pend_head,
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
inline bool send_pending(Direction& d, std::uint32_t m) {
    LINKEM_STAGE_START(t_tx);
    const std::uint16_t s =
        rte_eth_tx_burst(d.tx_port, 0, d.pending, static_cast<std::uint16_t>(m));
    LINKEM_STAGE_END(d, tx, t_tx);
    LINKEM_STAGE_CALL(d, tx);
    count_sent(d, s);
    if (s == m) return true;
    d.pend_head = s;
    d.pend_n = m - s;
    return false;
}

inline void drain_to_port(Direction& d, TimeNs now) {
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

inline void drain_to_ring(Direction& d, TimeNs now) {
    rte_mbuf* out[kMaxBurst];
    for (int round = 0; round < 4; ++round) {
        // Single producer: the free count can only grow under us, so all m fit.
        const unsigned room = std::min<unsigned>(d.burst, rte_ring_free_count(d.tx_ring.get()));
        if (room == 0) return;
        if (round > 0 && !d.emu->due_at_least(now, room)) return;  // as in drain_to_port
        const std::size_t m = drain(d, now, out, room);
        if (m == 0) return;
        rte_ring_sp_enqueue_burst(d.tx_ring.get(), reinterpret_cast<void* const*>(out),
                                  static_cast<unsigned>(m), nullptr);
        if (m < d.burst) return;
    }
}

inline void tx_from_ring(Direction& d) {
    if (!flush_pending(d)) return;
    const unsigned m = rte_ring_sc_dequeue_burst(
        d.tx_ring.get(), reinterpret_cast<void**>(d.pending), d.burst, nullptr);
    if (m != 0) send_pending(d, m);
}

// One rx_burst from d's port into pkts.
inline std::uint16_t poll_rx(Direction& d, rte_mbuf** pkts) {
    LINKEM_STAGE_START(t_rx);
    const std::uint16_t n = rte_eth_rx_burst(d.rx_port, 0, pkts, d.burst);
    LINKEM_STAGE_END(d, rx, t_rx);
    return n;
}

// Ingests the n packets of a poll_rx() made before `now` was read (and notes the poll).
inline void ingest_polled(Direction& d, rte_mbuf** pkts, std::uint16_t n, TimeNs now) {
    note_poll(d, d.last_rx_poll, now);
    if (n) ingest(d, pkts, n, now);
}

// The timestamp is taken after rx_burst returns: taken before, a preemption between the
// two would stamp packets with a time before they arrived and send them early. The same
// timestamp then serves the drain.
inline TimeNs rx_and_ingest(Direction& d) {
    rte_mbuf* pkts[kMaxBurst];
    const std::uint16_t n = poll_rx(d, pkts);
    const TimeNs now = tsc_now();
    ingest_polled(d, pkts, n, now);
    return now;
}

// Both directions on one lcore: both ports are polled first, and one timestamp, taken after
// both bursts are in, serves both (a TSC read costs some 30 cycles here, a cycle per packet
// at full load). Each burst is stamped no earlier than it arrived, as above; the first one
// up to a second rx_burst call later.
inline void both_rx_and_emulate(Direction& d0, Direction& d1) {
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

// Layout three, rx lcore: stamp and pass on. When the ring is full, keep the burst and
// stop polling the port (the NIC then counts imissed) rather than drop.
inline void rx_to_ring(Direction& d) {
    if (d.hold_n) {
        const unsigned k = rte_ring_sp_enqueue_burst_elem(d.rx_ring.get(), d.hold + d.hold_head,
                                                          sizeof(RxItem), d.hold_n, nullptr);
        d.hold_head += k;
        d.hold_n -= k;
        if (d.hold_n) return;
        d.hold_head = 0;
    }
    rte_mbuf* pkts[kMaxBurst];
    const std::uint16_t n = poll_rx(d, pkts);
    const TimeNs now = tsc_now();
    note_poll(d, d.last_rx_poll, now);
    if (n == 0) return;
    for (std::uint16_t i = 0; i < n; ++i)
        d.hold[i] = RxItem{pkts[i], now};
    const unsigned k =
        rte_ring_sp_enqueue_burst_elem(d.rx_ring.get(), d.hold, sizeof(RxItem), n, nullptr);
    if (k < n) {
        d.hold_head = k;
        d.hold_n = n - k;
    }
}

// Layout three, emulate lcore: ingest runs of equal arrival time (one rx burst each).
inline void ingest_from_ring(Direction& d) {
    RxItem items[kMaxBurst];
    const unsigned n =
        rte_ring_sc_dequeue_burst_elem(d.rx_ring.get(), items, sizeof(RxItem), d.burst, nullptr);
    rte_mbuf* run[kMaxBurst];
    unsigned i = 0;
    while (i < n) {
        const TimeNs t = items[i].t;
        std::uint16_t k = 0;
        while (i < n && items[i].t == t)
            run[k++] = items[i++].m;
        ingest(d, run, k, t);
    }
}

int lcore_main(void* arg) {
    const LcoreTask& task = *static_cast<const LcoreTask*>(arg);
    const std::atomic<bool>& run = *task.run;
    Direction& d0 = *task.dirs[0];
    switch (task.role) {
        case Role::full:
            if (task.n_dirs == 2) {
                Direction& d1 = *task.dirs[1];
                while (run.load(std::memory_order_relaxed)) {
                    adopt_params(d0);
                    adopt_params(d1);
                    both_rx_and_emulate(d0, d1);
                }
                break;
            }
            while (run.load(std::memory_order_relaxed)) {
                adopt_params(d0);
                const TimeNs now = rx_and_ingest(d0);
                drain_to_port(d0, now);
                report_if_due(d0, now);
            }
            break;
        case Role::rx_emulate:
            while (run.load(std::memory_order_relaxed)) {
                adopt_params(d0);
                const TimeNs now = rx_and_ingest(d0);
                drain_to_ring(d0, now);
                report_if_due(d0, now);
            }
            break;
        case Role::rx:
            while (run.load(std::memory_order_relaxed))
                rx_to_ring(d0);
            break;
        case Role::emulate:
            while (run.load(std::memory_order_relaxed)) {
                adopt_params(d0);
                ingest_from_ring(d0);
                const TimeNs now = tsc_now();
                note_poll(d0, d0.last_drain_poll, now);
                drain_to_ring(d0, now);
                report_if_due(d0, now);
            }
            break;
        case Role::tx:
            while (run.load(std::memory_order_relaxed))
                tx_from_ring(d0);
            break;
    }
    return 0;
}

void free_all(Direction& d) {
    if (d.pend_n) rte_pktmbuf_free_bulk(d.pending + d.pend_head, d.pend_n);
    d.pend_n = d.pend_head = 0;
    for (std::uint32_t i = 0; i < d.hold_n; ++i)
        rte_pktmbuf_free(d.hold[d.hold_head + i].m);
    d.hold_n = d.hold_head = 0;
    if (d.rx_ring) {
        RxItem items[64];
        unsigned n;
        while ((n = rte_ring_dequeue_burst_elem(d.rx_ring.get(), items, sizeof(RxItem), 64,
                                                nullptr)) > 0)
            for (unsigned i = 0; i < n; ++i)
                rte_pktmbuf_free(items[i].m);
    }
    rte_mbuf* buf[256];
    if (d.tx_ring) {
        unsigned n;
        while ((n = rte_ring_dequeue_burst(d.tx_ring.get(), reinterpret_cast<void**>(buf), 256,
                                           nullptr)) > 0)
            rte_pktmbuf_free_bulk(buf, n);
    }
    HeldPacket held[256];
    std::size_t n;
    while ((n = d.emu->drain(std::numeric_limits<TimeNs>::max(), held, 256)) > 0)
        for (std::size_t i = 0; i < n; ++i)
            release(d, held[i]);
    teardown_exchange(d);
}

}  // namespace linkem::dp::detail
