// The queue disciplines' reads and writes of a held packet (PacketTraits<HeldPacket>, dpdk.hpp):
// its flow (FQ-CoDel), its ECN mark, and the capture note of its dequeue. Called only with a
// queue discipline in force, on the thread that runs the lane t_queue_lane.
#include "capture_lane.hpp"
#include "linkem/packet_headers.hpp"

namespace linkem::dp::detail {

thread_local Lane* t_queue_lane = nullptr;

namespace {
// The frame's first bytes, contiguous: len of them.
std::uint8_t* frame_of(const HeldPacket& p, std::uint32_t& len) {
    if (p.is_buffer()) {
        len = p.len();
        return static_cast<std::uint8_t*>(p.addr(t_queue_lane->buf_base)) + RTE_PKTMBUF_HEADROOM;
    }
    rte_mbuf* m = p.as_mbuf();
    len = m->data_len;
    return rte_pktmbuf_mtod(m, std::uint8_t*);
}
}  // namespace

}  // namespace linkem::dp::detail

namespace linkem {

using dp::detail::HeldPacket;

std::uint32_t PacketTraits<HeldPacket>::flow_hash(const HeldPacket& p) {
    std::uint32_t len;
    const std::uint8_t* f = dp::detail::frame_of(p, len);
    return linkem::flow_hash(f, len);
}

bool PacketTraits<HeldPacket>::mark_ce(const HeldPacket& p) {
    std::uint32_t len;
    std::uint8_t* f = dp::detail::frame_of(p, len);
    return linkem::mark_ce(f, len);
}

void PacketTraits<HeldPacket>::dequeued(const HeldPacket& p, TimeNs tx, DurationNs wait,
                                        bool marked) {
    const dp::detail::Lane* d = dp::detail::t_queue_lane;
    if (!d->cap || !(d->cap->points & static_cast<unsigned>(capture::Point::out))) return;
    dp::detail::CaptureNote* note = dp::detail::note_of(*d, p);
    if (!note || note->tag != d->cap->tag) return;
    note->tx = tx;
    note->limiter_wait = wait;
    note->marked = marked;
}

}  // namespace linkem
