#include "linkem/dataplane/dataplane.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring_elem.h>

#include "dpdk.hpp"

namespace linkem::dp {

using detail::HeldPacket;
using detail::log;
using detail::MbufEmulator;
using detail::tsc_now;

namespace {

constexpr std::uint16_t kRxDesc = 1024;
constexpr std::uint16_t kTxDesc = 1024;
constexpr unsigned kStageRing = 4096;
constexpr unsigned kPoolCache = 256;
// Buffer exchange (below): at most this many mbuf headers kept ready for the drain per
// direction (kStashBursts bursts), and how many mbufs of its own pool a direction may hold in its
// queue as whole mbufs (pool / 16 within these bounds).
constexpr unsigned kStashBursts = 4;
constexpr unsigned kStash = kStashBursts * kMaxBurst;
constexpr std::uint32_t kHeldCapMin = 64, kHeldCapMax = 1024;
// A gap of at least this between two polls of a direction is a stall (DirectionStats).
constexpr TimeNs kStallNs = 100 * kNsPerUs;

// ------------------------------------------------------------------------------ ports
class EthPort {
  public:
    explicit EthPort(const PortSpec& spec) : spec_(spec) {
        if (rte_eth_dev_get_port_by_name(spec.name.c_str(), &id_) == 0) return;  // exists
        const int ret = rte_dev_probe(spec.devargs.c_str());
        if (ret < 0)
            throw DataplaneError("cannot probe port '" + spec.text + "' (devargs '" + spec.devargs +
                                 "'): " + detail::rte_error_text(-ret) +
                                 " (is the driver or device name right?)");
        if (rte_eth_dev_get_port_by_name(spec.name.c_str(), &id_) != 0) {
            // Some drivers name their ports differently from the devargs: take the port
            // whose device matches what we probed.
            bool found = false;
            std::uint16_t p;
            RTE_ETH_FOREACH_MATCHING_DEV(p, spec.devargs.c_str(), &iter_) {
                if (!found) id_ = p;
                found = true;
            }
            if (!found)
                throw DataplaneError("port '" + spec.text + "' was probed but no ethdev appeared");
        }
        owned_ = true;
    }
    ~EthPort() {
        detail::set_rx_pool(id_, nullptr);
        if (started_) rte_eth_dev_stop(id_);
        if (owned_) {
            rte_eth_dev_info info{};
            const bool have_info = rte_eth_dev_info_get(id_, &info) == 0;
            rte_device* dev = have_info ? info.device : nullptr;
            rte_eth_dev_close(id_);
            if (dev) rte_dev_remove(dev);
        }
    }
    EthPort(const EthPort&) = delete;
    EthPort& operator=(const EthPort&) = delete;

    void configure(rte_mempool* rx_pool) {
        rte_eth_dev_info info{};
        int ret = rte_eth_dev_info_get(id_, &info);
        if (ret != 0) fail("cannot read device info", ret);
        rte_eth_conf conf{};
        ret = rte_eth_dev_configure(id_, 1, 1, &conf);
        if (ret != 0) fail("cannot configure", ret);
        nb_rxd_ = kRxDesc;
        nb_txd_ = kTxDesc;
        ret = rte_eth_dev_adjust_nb_rx_tx_desc(id_, &nb_rxd_, &nb_txd_);
        if (ret != 0) fail("cannot adjust descriptor counts", ret);
        ret = rte_eth_rx_queue_setup(id_, 0, nb_rxd_, socket(), nullptr, rx_pool);
        if (ret != 0) fail("cannot set up the RX queue", ret);
        ret = rte_eth_tx_queue_setup(id_, 0, nb_txd_, socket(), nullptr);
        if (ret != 0) fail("cannot set up the TX queue", ret);
        ret = rte_eth_promiscuous_enable(id_);
        if (ret != 0 && ret != -ENOTSUP)
            log("port %s: cannot enable promiscuous mode: %s", spec_.text.c_str(),
                detail::rte_error_text(-ret).c_str());
        ret = rte_eth_dev_start(id_);
        if (ret != 0) fail("cannot start", ret);
        started_ = true;
        detail::set_rx_pool(id_, rx_pool);
        rte_eth_stats_reset(id_);
    }

    void stop() {
        detail::set_rx_pool(id_, nullptr);
        if (started_) rte_eth_dev_stop(id_);
        started_ = false;
    }

    std::uint16_t id() const { return id_; }
    const PortSpec& spec() const { return spec_; }
    std::uint16_t rx_desc() const { return nb_rxd_; }
    std::uint16_t tx_desc() const { return nb_txd_; }
    int socket() const {
        const int s = rte_eth_dev_socket_id(id_);
        return s < 0 ? static_cast<int>(rte_socket_id()) : s;
    }

    PortStats stats() const {
        PortStats ps;
        ps.name = spec_.text;
        rte_eth_stats st{};
        if (rte_eth_stats_get(id_, &st) == 0) {
            ps.rx = st.ipackets;
            ps.tx = st.opackets;
            ps.rx_missed = st.imissed;
            ps.rx_nombuf = st.rx_nombuf;
            ps.tx_failed = st.oerrors;
        }
        rte_eth_link link{};
        if (rte_eth_link_get_nowait(id_, &link) == 0) {
            ps.link_up = link.link_status == RTE_ETH_LINK_UP;
            ps.speed_mbps = link.link_speed;
        }
        return ps;
    }

    std::string link_text() const {
        rte_eth_link link{};
        if (rte_eth_link_get_nowait(id_, &link) != 0) return "link state unknown";
        if (link.link_status != RTE_ETH_LINK_UP) return "link down";
        return "link up, " + std::to_string(link.link_speed) + " Mbps, " +
               (link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX ? "full" : "half") + " duplex";
    }

  private:
    [[noreturn]] void fail(const char* what, int ret) const {
        throw DataplaneError("port '" + spec_.text + "': " + what + ": " +
                             detail::rte_error_text(ret < 0 ? -ret : ret));
    }

    PortSpec spec_;
    std::uint16_t id_ = 0;
    bool owned_ = false;
    bool started_ = false;
    std::uint16_t nb_rxd_ = 0, nb_txd_ = 0;
    rte_dev_iterator iter_{};
};

// ------------------------------------------------------------------------ stage profile
//
// Built with -DLINKEM_DP_PROFILE=ON, the data plane counts the TSC cycles each stage of the
// packet path takes, per direction, and logs them per received packet at stop: where a
// mode's time goes in place, which sampling (perf has only cpu-clock in these VMs, and
// its samples slide onto neighbouring instructions) cannot say. Each timed stage costs two
// TSC reads per burst, which the figures include (~25 cycles a read on the 2.1 GHz VMs of docs/performance.md,
// ~10 cycles per packet in all at burst 32: compare modes within a profile build, not with
// the normal build's rates). The normal build has none of it.
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

#ifdef LINKEM_DP_PROFILE
    alignas(64) StageProfile prof;
#endif
};

// Adopts a newly published parameter block. The generation is read first (acquire): the
// block pointer stored before it is then visible. set_params copies the block, so once
// `acked` is stored (release) this lcore holds no reference to any older block and the
// control thread may free them.
inline void adopt_params(Direction& d) {
    if (d.published.load(std::memory_order_acquire) == d.adopted) [[likely]]
        return;
    const ParamBlock* b = d.block.load(std::memory_order_acquire);
    d.emu->set_params(b->params);
    d.adopted = b->generation;
    d.acked.store(b->generation, std::memory_order_release);
}

[[gnu::noinline, gnu::cold]] void count_stall(Direction& d, TimeNs gap) {
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
// them; net_null does not look at them). At start, the direction takes most of its pool's
// mbufs out (the donors) and lists their buffers as free; at stop, every buffer is back and
// the donors get one each before they return to the pool.
//
// A buffer is exchanged only when that is invisible: a single-segment, direct mbuf of this
// direction's pool, reference count 1, data at the default headroom, IOVA as VA (so
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

inline bool exchangeable(const Direction& d, const rte_mbuf* m) {
    std::uint64_t rearm;
    std::memcpy(&rearm, &m->rearm_data, sizeof rearm);
    return m->pool == d.pool && (rearm & kRearmMask) == kRearmWant && RTE_MBUF_DIRECT(m) &&
           HeldPacket::fits(m->buf_addr, d.buf_base);
}

// A held mbuf leaves the queue: mbufs of the own pool stop counting against held_cap.
inline rte_mbuf* unhold(Direction& d, HeldPacket p) {
    rte_mbuf* m = p.as_mbuf();
    if (d.exchange && m->pool == d.pool) d.held_own -= m->nb_segs;
    return m;
}

// A packet the Emulator dropped, or one left over at stop: its buffer goes back to the free
// list, a held mbuf to its pool.
inline void release(Direction& d, HeldPacket p) {
    if (p.is_buffer())
        d.free_bufs[d.free_n++] = p.addr(d.buf_base);
    else
        rte_pktmbuf_free(unhold(d, p));
}

inline void ingest(Direction& d, rte_mbuf** pkts, std::uint16_t n, TimeNs now) {
    LINKEM_STAGE_START(t_exchange);
    HeldPacket held[kMaxBurst];
    std::uint16_t k = 0;
    if (!d.exchange) {
        for (std::uint16_t i = 0; i < n; ++i)
            held[i] = HeldPacket::mbuf(pkts[i]);
        k = n;
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
            d.emu->refuse(n_refused, refused_bytes, DropCause::buffer_full);
            rte_pktmbuf_free_bulk(refused, n_refused);
        }
    }
    HeldPacket dropped[kMaxBurst];
    LINKEM_STAGE_END(d, exchange, t_exchange);
    LINKEM_STAGE_START(t_ingest);
    const std::size_t nd = d.emu->ingest(held, k, now, dropped);
    LINKEM_STAGE_END(d, ingest, t_ingest);
    LINKEM_STAGE_COUNT(d, k);
    for (std::size_t j = 0; j < nd; ++j)
        release(d, dropped[j]);
}

// Drains up to max due packets as mbufs ready to transmit.
inline std::size_t drain(Direction& d, TimeNs now, rte_mbuf** out, std::size_t max) {
    HeldPacket held[kMaxBurst];
    if (!d.exchange) {
        LINKEM_STAGE_START(t_drain);
        const std::size_t n = d.emu->drain(now, held, max);
        LINKEM_STAGE_END(d, drain, t_drain);
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
            log("warning: direction %u: no mbuf header free for a due packet; packets wait "
                "(raise --mbufs)",
                d.index);
        }
        if (d.stash_n == 0) return 0;
        max = std::min<std::size_t>(max, d.stash_n);
    }
    LINKEM_STAGE_END(d, headers, t_stash);
    LINKEM_STAGE_START(t_drain);
    const auto [drained, n] = d.emu->drain_view(now, held, max);
    LINKEM_STAGE_END(d, drain, t_drain);
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
// taken) when exchange is not possible here.
bool setup_exchange(Direction& d, rte_mempool* pool, std::uint32_t donors, std::uint32_t held_cap) {
    d.stash_cap = kStashBursts * d.burst;
    if (rte_eal_iova_mode() != RTE_IOVA_VA) {
        log("direction %u: IOVA as physical addresses: packets are queued as whole mbufs", d.index);
        return false;
    }
    // The queue keeps buffers as offsets from the pool's lowest buffer address; every
    // buffer of the pool must fit (it does unless the pool spans more than 8 TiB or its
    // buffers are not 64-byte aligned).
    struct Span {
        std::uintptr_t lo = UINTPTR_MAX;
        bool fit = true;
    } span;
    rte_mempool_obj_iter(
        pool,
        [](rte_mempool*, void* arg, void* obj, unsigned) {
            auto* sp = static_cast<Span*>(arg);
            sp->lo = std::min(
                sp->lo, reinterpret_cast<std::uintptr_t>(static_cast<rte_mbuf*>(obj)->buf_addr));
        },
        &span);
    rte_mempool_obj_iter(
        pool,
        [](rte_mempool*, void* arg, void* obj, unsigned) {
            auto* sp = static_cast<Span*>(arg);
            sp->fit = sp->fit && HeldPacket::fits(static_cast<rte_mbuf*>(obj)->buf_addr, sp->lo);
        },
        &span);
    if (!span.fit) {
        log("direction %u: the pool's buffers are too far apart or not 64-byte aligned: "
            "packets are queued as whole mbufs",
            d.index);
        return false;
    }
    d.buf_base = span.lo;
    d.donors.resize(donors);
    // Free buffers: at most one per buffer-less header, the donors and the stash.
    d.free_store.resize(donors + kStash);
    constexpr std::uint32_t kChunk = 4096;
    std::uint32_t taken = 0;
    bool ok = true;
    while (ok && taken < donors) {
        const std::uint32_t c = std::min(kChunk, donors - taken);
        ok = rte_mempool_get_bulk(pool, reinterpret_cast<void**>(d.donors.data() + taken), c) == 0;
        if (ok) taken += c;
    }
    for (std::uint32_t i = 0; ok && i < taken; ++i) {
        rte_mbuf* m = d.donors[i];  // its buffer fits: the walk above checked every one
        ok = m->buf_iova == static_cast<rte_iova_t>(reinterpret_cast<std::uintptr_t>(m->buf_addr));
        d.free_store[i] = m->buf_addr;
    }
    if (!ok) {
        if (taken) rte_mempool_put_bulk(pool, reinterpret_cast<void**>(d.donors.data()), taken);
        d.donors.clear();
        d.free_store.clear();
        log("direction %u: cannot set up buffer exchange; packets are queued as whole mbufs",
            d.index);
        return false;
    }
    d.pool = pool;
    d.free_bufs = d.free_store.data();
    d.free_n = donors;
    d.held_cap = held_cap;
    d.exchange = true;
    return true;
}

// At stop, after every packet came back: the headers of the stash and the donors go back to
// the pool, each with one of the free buffers.
void teardown_exchange(Direction& d) {
    if (!d.exchange) return;
    if (d.free_n != d.donors.size() + d.stash_n) {
        // Cannot happen unless a buffer went astray; keep the headers out (the pool stays
        // parked) rather than give two headers one buffer.
        log("warning: direction %u: %u free buffers for %zu donor and %u stash mbufs at stop",
            d.index, d.free_n, d.donors.size(), d.stash_n);
        return;
    }
    for (std::uint32_t j = 0; j < d.stash_n; ++j)
        detail::set_buffer_va(d.stash[j], d.free_bufs[--d.free_n]);
    if (d.stash_n) rte_mempool_put_bulk(d.pool, reinterpret_cast<void**>(d.stash), d.stash_n);
    d.stash_n = 0;
    for (rte_mbuf* m : d.donors)
        detail::set_buffer_va(m, d.free_bufs[--d.free_n]);
    rte_mempool_put_bulk(d.pool, reinterpret_cast<void**>(d.donors.data()),
                         static_cast<unsigned>(d.donors.size()));
    d.donors.clear();
    d.exchange = false;
}

// Retries what the TX queue refused last time; true when nothing is left pending.
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

enum class Role : std::uint8_t { full, rx_emulate, rx, emulate, tx };

struct LcoreTask {
    const std::atomic<bool>* run = nullptr;
    Role role = Role::full;
    std::array<Direction*, 2> dirs{};
    unsigned n_dirs = 0;
    unsigned lcore = 0;
};

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
                drain_to_port(d0, rx_and_ingest(d0));
            }
            break;
        case Role::rx_emulate:
            while (run.load(std::memory_order_relaxed)) {
                adopt_params(d0);
                drain_to_ring(d0, rx_and_ingest(d0));
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

std::string strip_field_prefix(const ParamError& e) {
    const std::string what = e.what();
    const std::string prefix = "field '" + e.field() + "': ";
    return what.starts_with(prefix) ? what.substr(prefix.size()) : what;
}

}  // namespace

// ------------------------------------------------------------------------------- Impl
struct Dataplane::Impl {
    Impl(Eal& e, DataplaneConfig c) : eal(e), cfg(std::move(c)) {}

    Eal& eal;
    DataplaneConfig cfg;
    unsigned n_dirs = 1;
    std::uint32_t pool_size = 0;
    std::vector<detail::Mempool> pools;           // one per receiving port
    std::vector<std::unique_ptr<EthPort>> ports;  // a, b
    std::array<std::unique_ptr<Direction>, 2> dirs;
    std::vector<LcoreTask> tasks;
    std::atomic<bool> run{false};
    bool launched = false, stopped = false;

    mutable std::mutex mu;  // control side: apply, reclaim, stats
    std::uint64_t generation = 0;
    std::array<std::unique_ptr<ParamBlock>, 2> current;
    struct Retired {
        std::unique_ptr<ParamBlock> block;
        unsigned dir;
        std::uint64_t replaced_by;  // generation of the block that replaced it
    };
    mutable std::vector<Retired> retired;
    LinkConfig link;
    std::optional<DataplaneStats> final_stats;

    LinkParams capped(const LinkParams& p, const Direction& d) const {
        LinkParams q = p;
        q.buffer_limit_packets = std::min<std::uint64_t>(q.buffer_limit_packets, d.buffer_cap);
        return q;
    }

    void reclaim() const {
        std::erase_if(retired, [this](const auto& r) {
            return dirs[r.dir]->acked.load(std::memory_order_acquire) >= r.replaced_by;
        });
    }

    DataplaneStats collect() const {
        DataplaneStats s;
        s.t_ns = tsc_now();
        s.directions = n_dirs;
        for (unsigned k = 0; k < n_dirs; ++k) {
            const Direction& d = *dirs[k];
            DirectionStats& ds = s.dir[k];
            // Before the counters: an interval whose two ends show the same generation was
            // spent entirely under that parameter block.
            ds.params_generation = d.acked.load(std::memory_order_acquire);
            ds.tx_sent = d.tx_sent.load(std::memory_order_acquire);
            ds.counters = d.emu->snapshot();
            ds.tx_queued =
                ds.counters.packets_out > ds.tx_sent ? ds.counters.packets_out - ds.tx_sent : 0;
            ds.buffer_limit = std::min<std::uint64_t>(
                k == 0 ? link.a_to_b.buffer_limit_packets : link.b_to_a.buffer_limit_packets,
                d.buffer_cap);
            ds.buffer_exchange = d.exchange;
            ds.stalls = d.stalls.load(std::memory_order_relaxed);
            ds.stall_ns = d.stall_ns.load(std::memory_order_relaxed);
            ds.longest_stall_ns = d.longest_stall_ns.load(std::memory_order_relaxed);
        }
        s.ports = static_cast<unsigned>(ports.size());
        for (unsigned k = 0; k < ports.size(); ++k)
            s.port[k] = ports[k]->stats();
        return s;
    }
};

Dataplane::Dataplane(Eal& eal, DataplaneConfig config)
    : impl_(std::make_unique<Impl>(eal, std::move(config))) {
    Impl& m = *impl_;
    DataplaneConfig& cfg = m.cfg;
    if (cfg.burst < 1 || cfg.burst > kMaxBurst)
        throw ParamError("burst", std::to_string(cfg.burst) + " is out of range; allowed 1 .. " +
                                      std::to_string(kMaxBurst));
    m.n_dirs = cfg.port_b.empty() ? 1 : 2;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        const char* name = k == 0 ? "a_to_b" : "b_to_a";
        try {
            validate(k == 0 ? cfg.link.a_to_b : cfg.link.b_to_a);
        } catch (const ParamError& e) {
            throw ParamError(std::string(name) + "." + e.field(), strip_field_prefix(e));
        }
    }
    const PortSpec spec_a = resolve_port(cfg.port_a, "port_a");
    std::optional<PortSpec> spec_b;
    if (m.n_dirs == 2) {
        spec_b = resolve_port(cfg.port_b, "port_b");
        if (spec_b->name == spec_a.name)
            throw ParamError("port_b",
                             "is the same device as port_a; omit port_b for "
                             "single-port mode");
    }
    const unsigned needed = worker_lcores_needed(cfg.layout, m.n_dirs);
    std::vector<unsigned> lcores;
    unsigned lc;
    RTE_LCORE_FOREACH_WORKER(lc) lcores.push_back(lc);
    if (lcores.size() < needed)
        throw DataplaneError("lcore layout '" + std::string(to_string(cfg.layout)) + "' with " +
                             std::to_string(m.n_dirs) + " direction(s) needs " +
                             std::to_string(needed) + " worker lcores; the EAL has " +
                             std::to_string(lcores.size()));

    m.ports.push_back(std::make_unique<EthPort>(spec_a));
    if (spec_b) m.ports.push_back(std::make_unique<EthPort>(*spec_b));

    const std::uint32_t total = cfg.mbufs ? cfg.mbufs : default_mbufs(cfg.link, m.n_dirs);
    cfg.mbufs = total;
    m.pool_size = total / static_cast<std::uint32_t>(m.ports.size());
    for (auto& port : m.ports) {
        m.pools.push_back(
            detail::make_pktmbuf_pool(detail::unique_name("lk_rx"), m.pool_size, port->socket()));
        port->configure(m.pools.back().get());
    }
    log("%u mbufs in %zu pool(s) of %u", total, m.pools.size(), m.pool_size);
    for (auto& port : m.ports)
        log("port %s: %s", port->spec().text.c_str(), port->link_text().c_str());

    const bool staged = cfg.layout == Layout::two || cfg.layout == Layout::three;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        auto d = std::make_unique<Direction>();
        d->index = k;
        const EthPort& rx = *m.ports[k];
        const EthPort& tx = *m.ports[m.ports.size() == 1 ? 0 : 1 - k];
        d->rx_port = rx.id();
        d->tx_port = tx.id();
        d->burst = static_cast<std::uint16_t>(cfg.burst);
        // The Emulator may hold what the pool has left once every other place an mbuf of
        // it can wait is full: RX descriptors, the TX descriptors of the sending port,
        // stage rings, pending arrays and the per-lcore caches. It then drops excess
        // packets as buffer_full instead of starving the port of mbufs.
        const std::uint64_t elsewhere = rx.rx_desc() + tx.tx_desc() +
                                        (staged ? 2 * kStageRing : 0) + 2 * cfg.burst +
                                        kPoolCache * 3 / 2 * (needed + 1);
        d->buffer_cap = m.pool_size > elsewhere + 1024 ? m.pool_size - elsewhere : 1024;
        // Buffer exchange: headers for all those places, the stash, held mbufs and a margin
        // for the drain's top-up circulate; the buffers of all other mbufs are the queue's.
        const std::uint32_t held_cap = std::clamp(m.pool_size / 16, kHeldCapMin, kHeldCapMax);
        const std::uint64_t headers =
            elsewhere + kStashBursts * cfg.burst + held_cap + 2u * cfg.burst;
        if (cfg.hold_mbufs) {
            log("direction %u: --hold-mbufs: packets are queued as whole mbufs", k);
        } else if (m.pool_size < headers + 4096) {
            log("direction %u: a pool of %u mbufs is too small for buffer exchange (it needs "
                "more than %llu); packets are queued as whole mbufs",
                k, m.pool_size, static_cast<unsigned long long>(headers + 4096));
        } else if (setup_exchange(*d, m.pools[k].get(),
                                  static_cast<std::uint32_t>(m.pool_size - headers), held_cap)) {
            d->buffer_cap = d->donors.size() - cfg.burst;
            log("direction %u: buffer exchange: %zu packet buffers for the queue, %llu mbuf "
                "headers circulate",
                k, d->donors.size(), static_cast<unsigned long long>(headers));
        }
        if (staged) {
            d->tx_ring.reset(rte_ring_create(detail::unique_name("lk_tx").c_str(), kStageRing,
                                             rx.socket(), RING_F_SP_ENQ | RING_F_SC_DEQ));
            if (cfg.layout == Layout::three)
                d->rx_ring.reset(rte_ring_create_elem(detail::unique_name("lk_rx").c_str(),
                                                      sizeof(RxItem), kStageRing, rx.socket(),
                                                      RING_F_SP_ENQ | RING_F_SC_DEQ));
            if (!d->tx_ring || (cfg.layout == Layout::three && !d->rx_ring))
                throw DataplaneError("cannot create stage rings: " + detail::rte_error_text());
        }
        const LinkParams& user = k == 0 ? cfg.link.a_to_b : cfg.link.b_to_a;
        const LinkParams p = m.capped(user, *d);
        // Reserve both queue kinds, so that a run-time switch of strategy between FIFO and
        // reordering does not allocate either.
        LinkParams other = p;
        other.strategy =
            p.strategy == Strategy::reordered ? Strategy::correlated : Strategy::reordered;
        d->emu = std::make_unique<MbufEmulator>(other, k);  // a random stream per direction
        d->emu->reserve(p.buffer_limit_packets + kMaxBurst);
        d->emu->set_params(p);
        d->emu->set_prefetch_ahead(!d->exchange);  // exchanged buffers are never read here
        d->emu->reserve(p.buffer_limit_packets + kMaxBurst);
        LinkParams& stored = k == 0 ? m.link.a_to_b : m.link.b_to_a;
        stored = user;
        stored.seed = d->emu->seed();
        m.current[k] = std::make_unique<ParamBlock>(ParamBlock{0, p});
        m.current[k]->params.seed = stored.seed;
        d->block.store(m.current[k].get(), std::memory_order_relaxed);
        m.dirs[k] = std::move(d);
    }
    if (m.n_dirs == 1) m.link.b_to_a = m.link.a_to_b;
    log("the emulator holds at most %llu packets per direction (what the pool of %u mbufs "
        "allows; beyond: buffer_full drops; raise --mbufs for more)",
        static_cast<unsigned long long>(m.dirs[0]->buffer_cap), m.pool_size);

    // Lcore tasks.
    auto add = [&](Role role, std::initializer_list<Direction*> ds) {
        LcoreTask t;
        t.run = &m.run;
        t.role = role;
        for (Direction* d : ds)
            t.dirs[t.n_dirs++] = d;
        t.lcore = lcores[m.tasks.size()];
        m.tasks.push_back(t);
    };
    Direction* d0 = m.dirs[0].get();
    Direction* d1 = m.n_dirs == 2 ? m.dirs[1].get() : nullptr;
    switch (cfg.layout) {
        case Layout::shared:
            if (d1)
                add(Role::full, {d0, d1});
            else
                add(Role::full, {d0});
            break;
        case Layout::one:
            for (Direction* d : {d0, d1})
                if (d) add(Role::full, {d});
            break;
        case Layout::two:
            for (Direction* d : {d0, d1})
                if (d) {
                    add(Role::rx_emulate, {d});
                    add(Role::tx, {d});
                }
            break;
        case Layout::three:
            for (Direction* d : {d0, d1})
                if (d) {
                    add(Role::rx, {d});
                    add(Role::emulate, {d});
                    add(Role::tx, {d});
                }
            break;
    }
}

Dataplane::~Dataplane() {
    stop();
    impl_->ports.clear();  // before the pools the ports' queues point into
    impl_->pools.clear();
    detail::collect_parked_pools();
}

void Dataplane::start() {
    Impl& m = *impl_;
    if (m.launched) return;
    m.run.store(true, std::memory_order_release);
    for (LcoreTask& t : m.tasks) {
        const int ret = rte_eal_remote_launch(lcore_main, &t, t.lcore);
        if (ret != 0) {
            m.run.store(false);
            for (LcoreTask& u : m.tasks)
                if (&u != &t) rte_eal_wait_lcore(u.lcore);
            throw DataplaneError("cannot launch lcore " + std::to_string(t.lcore) + ": " +
                                 detail::rte_error_text(-ret));
        }
    }
    m.launched = true;
    std::string desc;
    for (const LcoreTask& t : m.tasks) {
        desc += ' ';
        desc += std::to_string(t.lcore);
    }
    log("data plane running: layout '%s', burst %u, lcores%s",
        std::string(to_string(m.cfg.layout)).c_str(), m.cfg.burst, desc.c_str());
}

bool Dataplane::running() const {
    return impl_->launched && !impl_->stopped;
}

void Dataplane::stop() {
    Impl& m = *impl_;
    if (m.stopped) return;
    m.stopped = true;
    m.run.store(false, std::memory_order_release);
    if (m.launched)
        for (const LcoreTask& t : m.tasks)
            rte_eal_wait_lcore(t.lcore);
    {
        std::lock_guard lock(m.mu);
        m.final_stats = m.collect();
    }
#ifdef LINKEM_DP_PROFILE
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        const StageProfile& p = m.dirs[k]->prof;
        const double n = p.packets ? static_cast<double>(p.packets) : 1.0;
        log("profile: direction %u: TSC cycles per packet: rx %.1f, exchange %.1f, ingest %.1f, "
            "drain %.1f, headers %.1f, tx %.1f (%llu packets, %.1f per tx burst, TSC %.3f GHz)",
            k, static_cast<double>(p.rx) / n, static_cast<double>(p.exchange) / n,
            static_cast<double>(p.ingest) / n, static_cast<double>(p.drain) / n,
            static_cast<double>(p.headers) / n, static_cast<double>(p.tx) / n,
            static_cast<unsigned long long>(p.packets),
            static_cast<double>(p.packets) / static_cast<double>(p.tx_calls ? p.tx_calls : 1),
            static_cast<double>(rte_get_tsc_hz()) * 1e-9);
    }
#endif
    for (unsigned k = 0; k < m.n_dirs; ++k)
        free_all(*m.dirs[k]);
    for (auto& port : m.ports)
        port->stop();
}

std::uint64_t Dataplane::apply(const LinkConfig& link) {
    Impl& m = *impl_;
    std::array<LinkParams, 2> next{link.a_to_b, link.b_to_a};
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        try {
            validate(next[k]);
        } catch (const ParamError& e) {
            throw ParamError(std::string(k == 0 ? "a_to_b." : "b_to_a.") + e.field(),
                             strip_field_prefix(e));
        }
    }
    std::lock_guard lock(m.mu);
    m.reclaim();
    const std::uint64_t gen = ++m.generation;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        Direction& d = *m.dirs[k];
        LinkParams& stored = k == 0 ? m.link.a_to_b : m.link.b_to_a;
        const std::uint64_t seed = next[k].seed;
        auto block = std::make_unique<ParamBlock>(ParamBlock{gen, m.capped(next[k], d)});
        stored = next[k];
        // Seed 0 means "keep the seed in use" for a running emulator.
        if (seed == 0) stored.seed = m.current[k]->params.seed;
        block->params.seed = stored.seed;
        d.block.store(block.get(), std::memory_order_release);
        d.published.store(gen, std::memory_order_release);
        m.retired.push_back(Impl::Retired{std::move(m.current[k]), k, gen});
        m.current[k] = std::move(block);
    }
    if (m.n_dirs == 1) m.link.b_to_a = m.link.a_to_b;
    return gen;
}

bool Dataplane::wait_applied(std::uint64_t gen, std::chrono::milliseconds timeout) const {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        bool all = true;
        for (unsigned k = 0; k < impl_->n_dirs; ++k)
            all = all && impl_->dirs[k]->acked.load(std::memory_order_acquire) >= gen;
        if (all) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

LinkConfig Dataplane::link() const {
    std::lock_guard lock(impl_->mu);
    return impl_->link;
}

DataplaneStats Dataplane::stats() const {
    std::lock_guard lock(impl_->mu);
    impl_->reclaim();
    if (impl_->final_stats) return *impl_->final_stats;
    return impl_->collect();
}

unsigned Dataplane::directions() const {
    return impl_->n_dirs;
}
const DataplaneConfig& Dataplane::config() const {
    return impl_->cfg;
}
std::uint64_t Dataplane::seed(unsigned direction) const {
    std::lock_guard lock(impl_->mu);
    return direction == 0 ? impl_->link.a_to_b.seed : impl_->link.b_to_a.seed;
}
std::uint32_t Dataplane::mbufs_per_pool() const {
    return impl_->pool_size;
}

std::string Dataplane::pool_check() const {
    std::string problems;
    for (std::size_t k = 0; k < impl_->pools.size(); ++k) {
        rte_mempool* mp = impl_->pools[k].get();
        if (!mp) continue;
        // Each mbuf's own buffer lies right after its header and private area; after any
        // number of exchanges the buffers in use must be exactly that set.
        struct Walk {
            std::vector<std::uintptr_t> own, in_use;
        } w;
        w.own.reserve(mp->size);
        w.in_use.reserve(mp->size);
        rte_mempool_obj_iter(
            mp,
            [](rte_mempool* pool, void* arg, void* obj, unsigned) {
                auto* walk = static_cast<Walk*>(arg);
                auto* m = static_cast<rte_mbuf*>(obj);
                walk->own.push_back(reinterpret_cast<std::uintptr_t>(m) + sizeof(rte_mbuf) +
                                    rte_pktmbuf_priv_size(pool));
                walk->in_use.push_back(reinterpret_cast<std::uintptr_t>(m->buf_addr));
            },
            &w);
        std::sort(w.own.begin(), w.own.end());
        std::sort(w.in_use.begin(), w.in_use.end());
        const auto shared = std::adjacent_find(w.in_use.begin(), w.in_use.end());
        char line[160];
        if (shared != w.in_use.end()) {
            std::snprintf(line, sizeof line, "pool %zu: two mbufs share the buffer at %#lx; ", k,
                          static_cast<unsigned long>(*shared));
            problems += line;
        } else if (w.own != w.in_use) {
            std::snprintf(line, sizeof line, "pool %zu: an mbuf holds a buffer not of the pool; ",
                          k);
            problems += line;
        }
        const unsigned back = rte_mempool_avail_count(mp);
        if (back != mp->size) {
            std::snprintf(line, sizeof line, "pool %zu: %u of %u mbufs back; ", k, back, mp->size);
            problems += line;
        }
    }
    return problems;
}

}  // namespace linkem::dp
