// Internal to the data-plane library: the only place (with the .cpp files next to it) that
// includes DPDK. RAII owners for pools and rings, the TSC clock, mbuf traits, logging.
#pragma once

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
#include "linkem/time.hpp"

namespace linkem {

// The Emulator charges a packet's length to the limiters and counts it in bytes_in/out.
// NICs strip the 4-byte FCS on receive and append it on transmit, so pkt_len lacks it. We
// add it back: "frame" accounting then charges the Ethernet frame as it is on the wire
// (64 bytes for a minimum-size frame) and "wire" accounting (frame + 20 for preamble, SFD
// and inter-frame gap) charges exactly the line time, 84 bytes for that frame. Byte
// counters therefore include the FCS, unlike most PMDs' ibytes/obytes.
template <>
struct PacketTraits<rte_mbuf*> {
    static std::uint32_t length(rte_mbuf* const& m) { return m->pkt_len + RTE_ETHER_CRC_LEN; }
    // Drained mbufs were last touched one delay ago and are cold: the Emulator prefetches a
    // whole burst before reading lengths, so the misses overlap instead of queueing up. Both
    // header lines: freeing reads `next` in the second one (rte_pktmbuf_free, in the TX path).
    static void prefetch(rte_mbuf* const& m) {
        rte_prefetch0(m);
        rte_prefetch0(RTE_PTR_ADD(m, RTE_CACHE_LINE_MIN_SIZE));
    }
};

}  // namespace linkem

namespace linkem::dp::detail {

using MbufEmulator = Emulator<rte_mbuf*>;

// ns = (tsc - base) * mult / 2^32 with mult = 1e9 * 2^32 / hz, in 128-bit arithmetic: no
// overflow for centuries, and the rounding of mult costs < 1 ns per second of drift.
struct Tsc {
    std::uint64_t base = 0;
    std::uint64_t mult = 0;
};
extern Tsc g_tsc;
void init_tsc();

inline TimeNs tsc_now() {
    const std::uint64_t d = rte_rdtsc() - g_tsc.base;
    return static_cast<TimeNs>((static_cast<unsigned __int128>(d) * g_tsc.mult) >> 32);
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

/// Unique DPDK object names within the process.
std::string unique_name(const std::string& stem);

}  // namespace linkem::dp::detail
