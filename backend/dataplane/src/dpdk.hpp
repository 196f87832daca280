// Internal to the data-plane library: the only place (with the .cpp files next to it) that
// includes DPDK. RAII owners for pools and rings, the TSC clock, mbuf traits, logging.
#pragma once

#include <cassert>
#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "linkem/emulator.hpp"
#include "linkem/huge_page_queue.hpp"
#include "linkem/time.hpp"
#include "linkem/tsc_clock.hpp"

namespace linkem {

// The Emulator charges a packet's length to the limiters and counts it in bytes_in/out.
// NICs strip the 4-byte FCS on receive and append it on transmit, so pkt_len lacks it. We
// add it back: "frame" accounting then charges the Ethernet frame as it is on the wire
// (64 bytes for a minimum-size frame) and "wire" accounting (frame + 20 for preamble, SFD
// and inter-frame gap) charges exactly the line time, 84 bytes for that frame. Byte
// counters therefore include the FCS, unlike most PMDs' ibytes/obytes.
namespace dp::detail {

/// Gives mbuf m the packet buffer at b. IOVA as VA: a buffer's IOVA is its address (the
/// only mode in which linkemd's own pools and buffer exchange are used).
inline void set_buffer_va(rte_mbuf* m, void* b) {
    m->buf_addr = b;
    m->buf_iova = static_cast<rte_iova_t>(reinterpret_cast<std::uintptr_t>(b));
}

/// What the Emulator queues for one packet in the data plane: 8 bytes, either
///  - a packet buffer taken out of its mbuf (buffer exchange, the usual case): the buffer's
///    offset from the start of its pool's memory (`base`, per direction) and the frame
///    length; the mbuf header went straight back to work, and a fresh one carries the
///    buffer out, or
///  - the mbuf itself (held: a packet whose buffer cannot be exchanged, or --hold-mbufs).
/// See "Buffer exchange" in dataplane.cpp. The low kCalendarBinBits bits are zero: the
/// calendar queue keeps a packet's 64 ns bin there while it waits (CalendarBins below).
///
///   bit 63     1: buffer                      0: mbuf
///   62..47     frame length                   \ the mbuf's address << 10
///   46..10     buffer offset / 64 (8 TiB)     /  (below 2^53)
///   9..0       calendar bin (0 outside the queue)
struct HeldPacket {
    static constexpr std::uint64_t kBufferTag = std::uint64_t{1} << 63;
    static constexpr unsigned kLenShift = 47;
    static constexpr unsigned kBinBits = kCalendarBinBits;
    /// Buffer offsets that fit: multiples of 64 below 2^43; stored shifted left by 4, so the
    /// offset's bits 6..42 land on bits 10..46.
    static constexpr std::uint64_t kOffsetMask =
        ((std::uint64_t{1} << 43) - 1) & ~std::uint64_t{63};
    static constexpr unsigned kOffsetShift = 4;

    std::uint64_t bits;

    /// m must be below 2^53 (user-space addresses are below 2^47 on x86-64 and arm64).
    static HeldPacket mbuf(rte_mbuf* m) {
        assert((reinterpret_cast<std::uintptr_t>(m) >> (63 - kBinBits)) == 0);
        return {reinterpret_cast<std::uintptr_t>(m) << kBinBits};
    }
    /// addr must fit (see fits()).
    static HeldPacket buffer(const void* addr, std::uintptr_t base, std::uint16_t len) {
        return {kBufferTag | (std::uint64_t{len} << kLenShift) |
                ((reinterpret_cast<std::uintptr_t>(addr) - base) << kOffsetShift)};
    }
    /// Whether a buffer at addr can be queued as an offset from base.
    static bool fits(const void* addr, std::uintptr_t base) {
        return ((reinterpret_cast<std::uintptr_t>(addr) - base) & ~kOffsetMask) == 0;
    }
    bool is_buffer() const { return (bits & kBufferTag) != 0; }
    rte_mbuf* as_mbuf() const { return reinterpret_cast<rte_mbuf*>(bits >> kBinBits); }
    void* addr(std::uintptr_t base) const {
        return reinterpret_cast<void*>(base + ((bits >> kOffsetShift) & kOffsetMask));
    }
    std::uint16_t len() const { return static_cast<std::uint16_t>(bits >> kLenShift); }
};
static_assert(sizeof(HeldPacket) == 8);

}  // namespace dp::detail

// The Emulator charges a packet's length to the limiters and counts it in bytes_in/out.
// NICs strip the 4-byte FCS on receive and append it on transmit, so pkt_len lacks it. We
// add it back: "frame" accounting then charges the Ethernet frame as it is on the wire
// (64 bytes for a minimum-size frame) and "wire" accounting (frame + 20 for preamble, SFD
// and inter-frame gap) charges exactly the line time, 84 bytes for that frame. Byte
// counters therefore include the FCS, unlike most PMDs' ibytes/obytes.
template <>
struct PacketTraits<dp::detail::HeldPacket> {
    using HeldPacket = dp::detail::HeldPacket;
    static std::uint32_t length(const HeldPacket& p) {
        return (p.is_buffer() ? p.len() : p.as_mbuf()->pkt_len) + RTE_ETHER_CRC_LEN;
    }
    // A held mbuf was last touched one delay ago and is cold: the Emulator prefetches a
    // whole burst before reading lengths, so the misses overlap instead of queueing up. Both
    // header lines: freeing reads `next` in the second one (rte_pktmbuf_free, in the TX path).
    // An exchanged buffer needs nothing: its length is in the handle and the CPU never
    // reads the packet.
    static void prefetch(const HeldPacket& p) {
        if (p.is_buffer()) return;
        rte_prefetch0(p.as_mbuf());
        rte_prefetch0(RTE_PTR_ADD(p.as_mbuf(), RTE_CACHE_LINE_MIN_SIZE));
    }
    // The queue disciplines' reads and writes of the packet (linkem/packet_headers.hpp) and
    // the capture's note of its dequeue: out of line (queue_traits.cpp), on the lane's
    // buffers (dp::detail::QueueLaneScope says which lane runs).
    static std::uint32_t flow_hash(const HeldPacket& p);
    static bool mark_ce(const HeldPacket& p);
    static void dequeued(const HeldPacket& p, TimeNs tx, DurationNs wait, bool marked);
};

template <>
struct CalendarBins<dp::detail::HeldPacket> : CalendarBinsInLowBits<dp::detail::HeldPacket> {};

}  // namespace linkem

namespace linkem::dp::detail {

using MbufEmulator = Emulator<HeldPacket, PacketTraits<HeldPacket>, HugePageCalendarQueue>;

// The data plane's one clock: TSC ticks to ns at the rate measured against
// CLOCK_MONOTONIC_RAW at start and re-checked in the background (linkem/tsc_clock.hpp;
// eal.cpp). Every timestamp, due time, stall length and rate estimate comes from here.
extern TscClock g_clock;
void init_tsc();
/// Starts/stops the background re-check of the TSC rate (eal.cpp), on the control side.
void start_tsc_recheck();
void stop_tsc_recheck();
double tsc_hz();

inline TimeNs tsc_now() {
    return g_clock.to_ns(rte_rdtsc());
}

void log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string rte_error_text(int err = rte_errno);

struct MempoolRelease {
    void operator()(rte_mempool* mp) const;
};
/// Owns a pool. Release is deferred while mbufs of the pool are still out (e.g. sitting
/// in a VirtualPort's ring): the pool is parked and freed once all have come back.
using Mempool = std::unique_ptr<rte_mempool, MempoolRelease>;
Mempool make_pktmbuf_pool(const std::string& name, unsigned n, int socket);
/// Frees parked pools whose mbufs have all come back.
void collect_parked_pools();

struct RingFree {
    void operator()(rte_ring* r) const { rte_ring_free(r); }
};
using Ring = std::unique_ptr<rte_ring, RingFree>;

/// The pool the data plane gave a port's receive queue (null: none): VirtualPort puts
/// frames where a NIC would, into mbufs of that pool, so that they take the same path
/// (buffer exchange) as on a real port. Set while the port is configured.
void set_rx_pool(std::uint16_t port, unsigned queue, rte_mempool* mp);
rte_mempool* rx_pool(std::uint16_t port, unsigned queue);

/// Unique DPDK object names within the process.
std::string unique_name(const std::string& stem);

}  // namespace linkem::dp::detail
