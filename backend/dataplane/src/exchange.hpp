// The buffer exchange between received mbufs and the Emulator's queue: ingest() and drain()
// of one lane's packets (inlined into the lcore loops), set-up and tear-down.
#pragma once

#include <bit>
#include <cstddef>
#include <cstring>

#include "capture_lane.hpp"
#include "lane.hpp"

namespace linkem::dp::detail {

// ------------------------------------------------------------------ buffer exchange
//
// A packet held for a delay of 10 ms at 10 Mpps is one of 10^5 in flight. Queued as its
// mbuf, it costs two cache misses when it leaves (the header is read to transmit and to
// free it), and whenever the backlog grows (a correlated delay swings it by thousands of
// packets within a millisecond) the RX path allocates mbufs that have long left the cache
// and writes both header lines of each. With the packet path otherwise at ~50 ns, those
// misses halved the forwarding rate.
//
// So the queue holds packet *buffers*, not mbufs. On ingest, the buffer of each received
// mbuf goes into the queue (address and length, 8 bytes: HeldPacket) and the mbuf header
// goes back to work at once: kept for the drain without a buffer (the stash), or, when the
// stash is full, returned to the pool with a free buffer in exchange. On drain, a header
// from the stash takes the queued buffer and is transmitted. (Headers the stash takes from
// the pool when it runs short give their buffers to the free list first.) So a packet
// that passes through the stash costs no free-list traffic at all. Headers circulate in a
// small, hot set; the buffers in the queue are not touched by the CPU at all (the NIC DMAs
// them; net_null does not look at them). At start, the lane takes most of its pool's
// mbufs out (the donors) and lists their buffers as free; at stop, every buffer is back and
// the donors get one each before they return to the pool.
//
// A buffer is exchanged only when that is invisible: a single-segment, direct mbuf of this
// lane's pool, reference count 1, data at the default headroom, IOVA as VA (so
// buf_iova = buf_addr). Anything else (chained or external-buffer mbufs, mbufs of another
// pool, e.g. a test's ring port) is held as the mbuf itself, as with --hold-mbufs; at most
// kHeldCap mbufs of the own pool are held that way (beyond: buffer_full drops), so the
// headers never run out. Nothing here creates indirect mbufs (rte_pktmbuf_clone/attach):
// those find their buffer's owner from the buffer address, which exchange invalidates.

// data_off, refcnt and nb_segs are the first six bytes of the mbuf's rearm word (which PMDs
// write in one store): one load and compare for the three.
constexpr std::uint64_t kRearmMask = 0xFFFF'FFFF'FFFF;
constexpr std::uint64_t kRearmWant = RTE_PKTMBUF_HEADROOM | std::uint64_t{1} << 16 /* refcnt */ |
                                     std::uint64_t{1} << 32 /* nb_segs */;
static_assert(offsetof(rte_mbuf, refcnt) == offsetof(rte_mbuf, data_off) + 2 &&
                  offsetof(rte_mbuf, nb_segs) == offsetof(rte_mbuf, data_off) + 4 &&
                  offsetof(rte_mbuf, rearm_data) == offsetof(rte_mbuf, data_off),
              "the rearm word's layout");
static_assert(std::endian::native == std::endian::little, "the rearm word as little-endian");

inline bool exchangeable(const Lane& d, const rte_mbuf* m) {
    std::uint64_t rearm;
    std::memcpy(&rearm, &m->rearm_data, sizeof rearm);
    return m->pool == d.pool && (rearm & kRearmMask) == kRearmWant && RTE_MBUF_DIRECT(m) &&
           HeldPacket::fits(m->buf_addr, d.buf_base);
}

// A held mbuf leaves the queue: mbufs of the own pool stop counting against held_cap.
inline rte_mbuf* unhold(Lane& d, HeldPacket p) {
    rte_mbuf* m = p.as_mbuf();
    if (d.exchange && m->pool == d.pool) d.held_own -= m->nb_segs;
    return m;
}

// A packet the Emulator dropped, or one left over at stop: its buffer goes back to the free
// list, a held mbuf to its pool.
inline void release(Lane& d, HeldPacket p) {
    if (p.is_buffer())
        d.free_bufs[d.free_n++] = p.addr(d.buf_base);
    else
        rte_pktmbuf_free(unhold(d, p));
}

// The packets `emu`'s queue discipline dropped in its last call (Emulator::late_drops):
// recorded when the lane captures drops, then released.
inline void release_late_drops(Lane& d, MbufEmulator& emu, std::uint8_t slot) {
    if (emu.late_drops().empty()) [[likely]]
        return;
    if (captures(d, slot, capture::Point::drop)) record_late_drops(d, slot, emu.late_drops());
    for (const auto& ld : emu.late_drops())
        release(d, ld.pkt);
}

// Hands n received packets to `emu` (the lane's Emulator, or its class's: slot `slot`).
// `seq`: the packets' numbers when the lane captures this slot (capture_lane.hpp), else null.
inline void ingest_into(Lane& d, MbufEmulator& emu, rte_mbuf** pkts, std::uint16_t n, TimeNs now,
                        std::uint8_t slot = 0, const std::uint64_t* seq = nullptr) {
    t_queue_lane = &d;
    LINKEM_STAGE_START(t_exchange);
    HeldPacket held[kMaxBurst];
    std::uint64_t held_seq[kMaxBurst];  // with seq: the numbers of held[]
    std::uint16_t k = 0;
    if (!d.exchange) {
        for (std::uint16_t i = 0; i < n; ++i)
            held[i] = HeldPacket::mbuf(pkts[i]);
        k = n;
        if (seq) [[unlikely]]
            std::copy(seq, seq + n, held_seq);
    } else {
        rte_mbuf* spare[kMaxBurst];  // headers beyond the stash's room
        rte_mbuf* refused[kMaxBurst];
        unsigned n_spare = 0, n_refused = 0;
        std::uint64_t refused_bytes = 0;
        // Locals: the stores into the mbufs could otherwise alias the counts.
        void** const free_bufs = d.free_bufs;
        std::uint32_t free_n = d.free_n, stash_n = d.stash_n;
        const std::uint32_t stash_cap = d.stash_cap;
        const std::uintptr_t base = d.buf_base;
        for (std::uint16_t i = 0; i < n; ++i) {
            rte_mbuf* m = pkts[i];
            if (seq) [[unlikely]]
                held_seq[k] = seq[i];
            if (exchangeable(d, m) && (stash_n < stash_cap || free_n != 0)) [[likely]] {
                held[k++] = HeldPacket::buffer(m->buf_addr, base, m->data_len);
                if (stash_n < stash_cap) [[likely]] {
                    d.stash[stash_n++] = m;  // its buffer stays with the queue
                } else {                     // back to the pool, with a free buffer
                    detail::set_buffer_va(m, free_bufs[--free_n]);
                    spare[n_spare++] = m;
                }
                continue;
            }
            if (m->pool == d.pool) {
                if (d.held_own + m->nb_segs > d.held_cap) {
                    if (seq && captures(d, slot, capture::Point::drop)) [[unlikely]]
                        record_mbuf(d, *d.cap, capture::Point::drop, slot, seq[i], now, m,
                                    DropCause::buffer_full);
                    refused[n_refused++] = m;
                    refused_bytes += m->pkt_len + RTE_ETHER_CRC_LEN;
                    continue;
                }
                d.held_own += m->nb_segs;
            }
            held[k++] = HeldPacket::mbuf(m);
        }
        d.free_n = free_n;
        d.stash_n = stash_n;
        // Single-segment direct mbufs with reference count 1: in the state the pool keeps.
        if (n_spare) rte_mempool_put_bulk(d.pool, reinterpret_cast<void**>(spare), n_spare);
        if (n_refused) {
            emu.refuse(n_refused, refused_bytes, DropCause::buffer_full);
            rte_pktmbuf_free_bulk(refused, n_refused);
        }
    }
    HeldPacket dropped[kMaxBurst];
    LINKEM_STAGE_END(d, exchange, t_exchange);
    LINKEM_STAGE_START(t_ingest);
    const std::size_t nd = seq ? ingest_captured(d, emu, held, k, now, slot, held_seq, dropped)
                               : emu.ingest(held, k, now, dropped);
    LINKEM_STAGE_END(d, ingest, t_ingest);
    LINKEM_STAGE_COUNT(d, k);
    for (std::size_t j = 0; j < nd; ++j)
        release(d, dropped[j]);
    release_late_drops(d, emu, slot);
}

// Drains up to max due packets of `emu` as mbufs ready to transmit.
inline std::size_t drain(Lane& d, MbufEmulator& emu, TimeNs now, rte_mbuf** out, std::size_t max,
                         std::uint8_t slot = 0) {
    HeldPacket held[kMaxBurst];
    t_queue_lane = &d;
    if (!d.exchange) {
        LINKEM_STAGE_START(t_drain);
        const std::size_t n = emu.drain(now, held, max);
        LINKEM_STAGE_END(d, drain, t_drain);
        release_late_drops(d, emu, slot);
        for (std::size_t i = 0; i < n; ++i)
            out[i] = held[i].as_mbuf();
        return n;
    }
    LINKEM_STAGE_START(t_stash);
    if (d.stash_n < max) {
        // Every exchanged packet needs a header. The pool is sized so that this succeeds
        // (headers elsewhere are bounded: descriptors, rings, caches, held mbufs); if it
        // does not, fewer packets leave now and the rest wait for headers to come back.
        const unsigned need = static_cast<unsigned>(max - d.stash_n);
        if (rte_mempool_get_bulk(d.pool, reinterpret_cast<void**>(d.stash + d.stash_n), need) ==
            0) {
            for (unsigned j = 0; j < need; ++j)  // stash headers carry no buffer
                d.free_bufs[d.free_n++] = d.stash[d.stash_n + j]->buf_addr;
            d.stash_n += need;
        } else if (!d.warned_headers) {
            d.warned_headers = true;
            log("warning: direction %u worker %u: no mbuf header free for a due packet; packets "
                "wait "
                "(raise --mbufs)",
                d.index, d.queue);
        }
        if (d.stash_n == 0) return 0;
        max = std::min<std::size_t>(max, d.stash_n);
    }
    LINKEM_STAGE_END(d, headers, t_stash);
    LINKEM_STAGE_START(t_drain);
    const auto [drained, n] = emu.drain_view(now, held, max);
    LINKEM_STAGE_END(d, drain, t_drain);
    release_late_drops(d, emu, slot);
    LINKEM_STAGE_START(t_headers);
    const std::uintptr_t base = d.buf_base;
    std::uint32_t stash_n = d.stash_n;
    for (std::size_t i = 0; i < n; ++i) {
        const HeldPacket p = drained[i];
        if (!p.is_buffer()) [[unlikely]] {
            out[i] = unhold(d, p);
            continue;
        }
        rte_mbuf* h = d.stash[--stash_n];
        detail::set_buffer_va(h, p.addr(base));
        h->data_off = RTE_PKTMBUF_HEADROOM;
        h->data_len = p.len();
        h->pkt_len = p.len();
        h->ol_flags = 0;  // no RX flags, no TX offloads
        h->packet_type = 0;
        out[i] = h;
    }
    d.stash_n = stash_n;
    LINKEM_STAGE_END(d, headers, t_headers);
    return n;
}

// Takes the donors out of the pool and lists their buffers as free. False (and nothing

// Takes the donors out of the pool and lists their buffers as free. False (and nothing
// taken) when exchange is not possible here.
bool setup_exchange(Lane& d, rte_mempool* pool, std::uint32_t donors, std::uint32_t held_cap);
// At stop, after every packet came back: the headers of the stash and the donors go back to
// the pool, each with one of the free buffers.
void teardown_exchange(Lane& d);

}  // namespace linkem::dp::detail
