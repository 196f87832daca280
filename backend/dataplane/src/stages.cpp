#include "stages.hpp"

#include <algorithm>
#include <cstring>
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

// Sends emu's due packets; false when the TX queue left some pending.
inline bool drain_emulator(Lane& d, MbufEmulator& emu, TimeNs now, std::uint8_t slot) {
    // A few bursts per visit so that a backlog of due packets (after a pause or a rate
    // change) is worked off faster than new ones arrive. After the first, only whole ones:
    // a remainder waits for the next visit (a loop later) and leaves with the packets due
    // by then, instead of costing a drain and a TX call of its own.
    for (int round = 0; round < 4; ++round) {
        if (round > 0 && !emu.due_at_least(now, d.burst)) return true;
        const std::size_t m = drain(d, emu, now, d.pending, d.burst, slot);
        if (m == 0) return true;
        if (captures(d, slot, capture::Point::out)) [[unlikely]]
            record_out(d, d.pending, m, now, slot);
        if (!send_pending(d, static_cast<std::uint32_t>(m))) return false;
        if (m < d.burst) return true;
    }
    return true;
}

inline void drain_to_port(Lane& d, TimeNs now) {
    if (!flush_pending(d)) return;
    if (!drain_emulator(d, *d.emu, now, 0)) return;
    // The classes' Emulators (slots 1 .. slots), those that hold packets, in slot order.
    for (unsigned s = 1; s <= d.slots; ++s) {
        MbufEmulator* e = d.slot_emu[s].get();
        if (e && e->in_flight() != 0 && !drain_emulator(d, *e, now, static_cast<std::uint8_t>(s)))
            return;
    }
}

// Packets whose class passes them: out at once, behind what the TX queue has not taken yet
// (in order with it); what finds no room there is freed and counted as the class's drops.
[[gnu::noinline]] void send_passed(Lane& d, rte_mbuf** pkts, const std::uint8_t* slot, unsigned n) {
    unsigned sent = 0;
    if (flush_pending(d)) {
        const std::uint16_t s =
            rte_eth_tx_burst(d.tx_port, d.queue, pkts, static_cast<std::uint16_t>(n));
        count_sent(d, s);
        sent = s;
    } else if (d.pend_head != 0) {
        std::memmove(d.pending, d.pending + d.pend_head, d.pend_n * sizeof(rte_mbuf*));
        d.pend_head = 0;
    }
    for (unsigned i = sent; i < n; ++i) {
        if (d.pend_head + d.pend_n < std::size(d.pending)) {
            d.pending[d.pend_head + d.pend_n++] = pkts[i];
            continue;
        }
        Lane::PlainCounts& c = d.plain[slot[i]];
        --c.out;
        c.out_bytes -= pkts[i]->pkt_len + RTE_ETHER_CRC_LEN;
        ++c.dropped;
        rte_pktmbuf_free(pkts[i]);
    }
}

// Ingests a burst on a lane with classes: each packet's class (the classifier), then each
// class's packets in the order they arrived: `emulate` into its slot's Emulator, `pass` out
// at once, `drop` freed. Counted per slot. `seq`: the packets' numbers when the lane
// captures (capture_lane.hpp), else null.
[[gnu::noinline]] void ingest_classes(Lane& d, rte_mbuf** pkts, std::uint16_t n, TimeNs now,
                                      const std::uint64_t* seq) {
    ClassId id[kMaxBurst];
    d.classifier->classify_burst(pkts, n, static_cast<int>(d.index), id);
    rte_mbuf* emulated[kMaxBurst];
    std::uint8_t emulated_slot[kMaxBurst];
    std::uint64_t emulated_seq[kMaxBurst];  // with seq
    rte_mbuf* passed[kMaxBurst];
    std::uint8_t passed_slot[kMaxBurst];
    rte_mbuf* dropped[kMaxBurst];
    unsigned ne = 0, np = 0, nd = 0;
    std::uint8_t first = 0;
    bool one_slot = true;
    for (std::uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        const std::uint8_t s = d.slot_of[id[i]];
        const std::uint64_t bytes = m->pkt_len + RTE_ETHER_CRC_LEN;
        const ClassAction action = d.action[id[i]];
        if (seq && action != ClassAction::emulate) [[unlikely]] {
            if (captures(d, s, capture::Point::in))
                record_mbuf(d, *d.cap, capture::Point::in, s, seq[i], now, m);
            const auto at =
                action == ClassAction::pass ? capture::Point::out : capture::Point::drop;
            if (captures(d, s, at))
                record_mbuf(d, *d.cap, at, s, seq[i], now, m, DropCause::class_action);
        }
        switch (action) {
            case ClassAction::emulate:
                if (ne == 0) first = s;
                one_slot = one_slot && s == first;
                emulated_slot[ne] = s;
                if (seq) [[unlikely]]
                    emulated_seq[ne] = seq[i];
                emulated[ne++] = m;
                break;
            case ClassAction::pass: {
                Lane::PlainCounts& c = d.plain[s];
                ++c.in;
                c.in_bytes += bytes;
                ++c.out;
                c.out_bytes += bytes;
                passed_slot[np] = s;
                passed[np++] = m;
                break;
            }
            case ClassAction::drop: {
                Lane::PlainCounts& c = d.plain[s];
                ++c.in;
                c.in_bytes += bytes;
                ++c.dropped;
                dropped[nd++] = m;
                break;
            }
        }
    }
    if (nd) rte_pktmbuf_free_bulk(dropped, nd);
    if (np) send_passed(d, passed, passed_slot, np);
    if (ne == 0) return;
    const auto seq_of = [&](std::uint8_t s, const std::uint64_t* numbers) {
        return seq && d.cap->slot_on[s] ? numbers : nullptr;
    };
    if (one_slot) {
        ingest_into(d, *slot_emulator(d, first), emulated, static_cast<std::uint16_t>(ne), now,
                    first, seq_of(first, emulated_seq));
        return;
    }
    // Several classes in the burst: each one's packets in turn, in their order.
    rte_mbuf* mine[kMaxBurst];
    std::uint64_t mine_seq[kMaxBurst];
    std::uint64_t done[(kSlots + 63) / 64] = {};
    for (unsigned i = 0; i < ne; ++i) {
        const std::uint8_t s = emulated_slot[i];
        if (done[s / 64] >> (s % 64) & 1) continue;
        done[s / 64] |= std::uint64_t{1} << (s % 64);
        std::uint16_t k = 0;
        for (unsigned j = i; j < ne; ++j)
            if (emulated_slot[j] == s) {
                if (seq) [[unlikely]]
                    mine_seq[k] = emulated_seq[j];
                mine[k++] = emulated[j];
            }
        ingest_into(d, *slot_emulator(d, s), mine, k, now, s, seq_of(s, mine_seq));
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
    std::uint64_t seq[kMaxBurst];
    const std::uint64_t* numbered = nullptr;
    if (d.cap) [[unlikely]] {
        // The clock as of this poll: the lane's records from now on are no earlier.
        d.cap->ring->set_watermark(now);
        for (std::uint16_t i = 0; i < n; ++i)
            seq[i] = d.cap->seq++;
        numbered = seq;
    }
    if (n == 0) return;
    if (d.classifier) [[unlikely]]
        ingest_classes(d, pkts, n, now, numbered);
    else
        ingest_into(d, *d.emu, pkts, n, now, 0, numbered && d.cap->slot_on[0] ? seq : nullptr);
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
            adopt_capture(d0);
            adopt_capture(d1);
            both_rx_and_emulate(d0, d1);
        }
        return 0;
    }
    while (run.load(std::memory_order_relaxed)) {
        adopt_params(d0);
        adopt_capture(d0);
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
    t_queue_lane = &d;
    for (unsigned s = 0; s <= d.slots; ++s) {
        MbufEmulator* e = slot_emulator(d, s);
        if (!e) continue;
        do {
            n = e->drain(std::numeric_limits<TimeNs>::max(), held, 256);
            for (std::size_t i = 0; i < n; ++i)
                release(d, held[i]);
            for (const auto& ld : e->late_drops())
                release(d, ld.pkt);
        } while (n > 0 || !e->late_drops().empty());
    }
    teardown_exchange(d);
}

}  // namespace linkem::dp::detail
