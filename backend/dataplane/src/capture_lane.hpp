// A lane's side of a capture (docs/capture.md): records into the lane's CaptureRing, and the
// note of each queued packet's fate, kept in its buffer's headroom from ingest to drain.
// Everything here runs only while a capture is published to the lane (Lane::cap).
#pragma once

#include <algorithm>
#include <cstring>

#include "lane.hpp"

namespace linkem::dp::detail {

// What ingest learnt of a queued packet (Emulator::ingest's fate), in the 64 bytes of its
// buffer's headroom before its data (DPDK's default headroom is 128 bytes; the buffer
// exchange needs the default, a held mbuf with less headroom goes without a note). `tag`
// tells a note of this capture from one a buffer kept from an earlier one.
struct CaptureNote {
    std::uint64_t tag;
    TimeNs arrived, tx;
    DurationNs delay, limiter_wait;
    std::uint64_t seq;
    std::uint64_t marked;  // a queue discipline marked it CE (written at its dequeue)
};
inline constexpr std::uint16_t kNoteRoom = 64;
static_assert(sizeof(CaptureNote) <= kNoteRoom && RTE_PKTMBUF_HEADROOM >= kNoteRoom);

inline CaptureNote* note_of(rte_mbuf* m) {
    if (m->data_off < kNoteRoom) return nullptr;
    return reinterpret_cast<CaptureNote*>(static_cast<std::uint8_t*>(m->buf_addr) + m->data_off -
                                          kNoteRoom);
}
inline CaptureNote* note_of(const Lane& d, HeldPacket p) {
    if (!p.is_buffer()) return note_of(p.as_mbuf());
    return reinterpret_cast<CaptureNote*>(static_cast<std::uint8_t*>(p.addr(d.buf_base)) +
                                          RTE_PKTMBUF_HEADROOM - kNoteRoom);
}

// A record of `len` frame bytes at `now`, its frame bytes still to copy (the caller commits
// it); nullptr when the ring is full (counted missed).
inline capture::RecordHeader* begin_record(const Lane& d, LaneCapture& c, capture::Point point,
                                           std::uint8_t slot, std::uint64_t seq, TimeNs now,
                                           std::uint32_t len) {
    capture::RecordHeader* h = c.ring->reserve(std::min(len, c.snaplen));
    if (!h) return nullptr;
    h->point = point;
    h->direction = static_cast<std::uint8_t>(d.index);
    h->slot = slot;
    h->cause = 0;
    h->worker = static_cast<std::uint16_t>(d.queue);
    h->flags = capture::RecordHeader::kHasSeq;
    h->frame_len = len;
    h->time_ns = now;
    h->arrived_ns = now;
    h->tx_ns = now;
    h->delay_ns = 0;
    h->limiter_wait_ns = 0;
    h->seq = seq;
    return h;
}

// The frame's first h->cap_len bytes after the header.
inline void copy_frame(capture::RecordHeader* h, const rte_mbuf* m) {
    void* dst = h + 1;
    const void* src = rte_pktmbuf_read(m, 0, h->cap_len, dst);
    if (src && src != dst) std::memcpy(dst, src, h->cap_len);
}
inline void copy_frame(const Lane& d, capture::RecordHeader* h, HeldPacket p) {
    if (!p.is_buffer()) return copy_frame(h, p.as_mbuf());
    std::memcpy(h + 1, static_cast<const std::uint8_t*>(p.addr(d.buf_base)) + RTE_PKTMBUF_HEADROOM,
                h->cap_len);
}
inline std::uint32_t frame_len(HeldPacket p) {
    return p.is_buffer() ? p.len() : p.as_mbuf()->pkt_len;
}

// A packet as it arrived or, with a class whose action passes or drops it, as it left or was
// dropped at once.
inline void record_mbuf(const Lane& d, LaneCapture& c, capture::Point point, std::uint8_t slot,
                        std::uint64_t seq, TimeNs now, const rte_mbuf* m,
                        DropCause cause = DropCause::loss) {
    capture::RecordHeader* h = begin_record(d, c, point, slot, seq, now, m->pkt_len);
    if (!h) return;
    if (point == capture::Point::drop) h->cause = static_cast<std::uint8_t>(cause);
    if (point == capture::Point::out) h->flags |= capture::RecordHeader::kHasFate;  // held 0
    copy_frame(h, m);
    c.ring->commit();
}

// Emulator::ingest with fates, for a lane that captures slot `slot`'s packets (their numbers
// in seq): the `in` records, each queued packet's note, the `drop` records.
[[gnu::noinline]] inline std::size_t ingest_captured(Lane& d, MbufEmulator& emu,
                                                     const HeldPacket* held, std::uint16_t k,
                                                     TimeNs now, std::uint8_t slot,
                                                     const std::uint64_t* seq,
                                                     HeldPacket* dropped) {
    LaneCapture& c = *d.cap;
    using capture::Point;
    if (c.points & static_cast<unsigned>(Point::in))
        for (std::uint16_t i = 0; i < k; ++i)
            if (capture::RecordHeader* h =
                    begin_record(d, c, Point::in, slot, seq[i], now, frame_len(held[i]))) {
                copy_frame(d, h, held[i]);
                c.ring->commit();
            }
    PacketFate fate[kMaxBurst];
    const bool out = (c.points & static_cast<unsigned>(Point::out)) != 0;
    // The notes' lines are not the frame's (the NIC wrote those): fetched for writing while
    // the Emulator runs, so that their misses overlap.
    if (out)
        for (std::uint16_t i = 0; i < k; ++i)
            if (CaptureNote* note = note_of(d, held[i])) __builtin_prefetch(note, 1, 3);
    const std::size_t nd = emu.ingest(held, k, now, dropped, fate);
    const bool drop = (c.points & static_cast<unsigned>(Point::drop)) != 0;
    for (std::uint16_t i = 0; i < k; ++i) {
        const PacketFate& f = fate[i];
        if (f.outcome == PacketFate::kQueued) {
            if (!out) continue;
            if (CaptureNote* note = note_of(d, held[i]))
                *note = CaptureNote{c.tag, now, f.tx, f.delay, f.limiter_wait, seq[i], 0};
            continue;
        }
        if (!drop) continue;
        capture::RecordHeader* h =
            begin_record(d, c, Point::drop, slot, seq[i], now, frame_len(held[i]));
        if (!h) continue;
        h->cause = f.outcome;
        h->flags |= capture::RecordHeader::kHasFate;
        h->delay_ns = f.delay;
        h->limiter_wait_ns = f.limiter_wait;
        copy_frame(d, h, held[i]);
        c.ring->commit();
    }
    return nd;
}

// The `out` records of n packets drained from slot `slot`'s Emulator at `now`, about to be
// handed to the TX queue: each with the fate its note kept.
[[gnu::noinline]] inline void record_out(const Lane& d, rte_mbuf* const* pkts, std::size_t n,
                                         TimeNs now, std::uint8_t slot) {
    LaneCapture& c = *d.cap;
    // Their notes and first lines, long out of the cache: fetched for the whole burst first.
    for (std::size_t i = 0; i < n; ++i) {
        if (const CaptureNote* note = note_of(pkts[i])) rte_prefetch0(note);
        rte_prefetch0(rte_pktmbuf_mtod(pkts[i], const void*));
    }
    for (std::size_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        capture::RecordHeader* h =
            begin_record(d, c, capture::Point::out, slot, 0, now, m->pkt_len);
        if (!h) {  // the ring is full: so for the rest of the burst
            c.ring->miss(n - i - 1);
            return;
        }
        const CaptureNote* note = note_of(m);
        const bool known = note && note->tag == c.tag;
        if (known) h->seq = note->seq;
        if (!known) h->flags = 0;
        if (known) {
            h->flags |= capture::RecordHeader::kHasFate;
            if (note->marked) h->flags |= capture::RecordHeader::kEcnCe;
            h->arrived_ns = note->arrived;
            h->tx_ns = note->tx;
            h->delay_ns = note->delay;
            h->limiter_wait_ns = note->limiter_wait;
        }
        copy_frame(h, m);
        c.ring->commit();
    }
}

// The `drop` records of packets a queue discipline dropped after ingest took them (the
// Emulator's late drops): each with what its note kept.
template <class LateDrops>
[[gnu::noinline]] void record_late_drops(const Lane& d, std::uint8_t slot, const LateDrops& drops) {
    LaneCapture& c = *d.cap;
    for (const auto& ld : drops) {
        const CaptureNote* note = note_of(d, ld.pkt);
        const bool known = note && note->tag == c.tag;
        capture::RecordHeader* h = begin_record(d, c, capture::Point::drop, slot,
                                                known ? note->seq : 0, ld.at, frame_len(ld.pkt));
        if (!h) continue;
        h->cause = static_cast<std::uint8_t>(ld.cause);
        if (known) {
            h->flags |= capture::RecordHeader::kHasFate;
            h->arrived_ns = note->arrived;
            h->delay_ns = note->delay;
            h->limiter_wait_ns = ld.at - note->arrived - note->delay;
        } else {
            h->flags = 0;
        }
        copy_frame(d, h, ld.pkt);
        c.ring->commit();
    }
}

// Whether lane d records slot s's packets at point p.
inline bool captures(const Lane& d, std::uint8_t s, capture::Point p) {
    return d.cap && d.cap->slot_on[s] && (d.cap->points & static_cast<unsigned>(p));
}

}  // namespace linkem::dp::detail
