#include "exchange.hpp"

#include <algorithm>

namespace linkem::dp::detail {

bool setup_exchange(Lane& d, rte_mempool* pool, std::uint32_t donors, std::uint32_t held_cap) {
    d.stash_cap = kStashBursts * d.gather;
    if (rte_eal_iova_mode() != RTE_IOVA_VA) {
        log("direction %u worker %u: IOVA as physical addresses: packets are queued as whole mbufs",
            d.index, d.queue);
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
        log("direction %u worker %u: the pool's buffers are too far apart or not 64-byte aligned: "
            "packets are queued as whole mbufs",
            d.index, d.queue);
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
        log("direction %u worker %u: cannot set up buffer exchange; packets are queued as whole "
            "mbufs",
            d.index, d.queue);
        return false;
    }
    d.pool = pool;
    d.free_bufs = d.free_store.data();
    d.free_n = donors;
    d.held_cap = held_cap;
    d.exchange = true;
    return true;
}

void teardown_exchange(Lane& d) {
    if (!d.exchange) return;
    if (d.free_n != d.donors.size() + d.stash_n) {
        // Cannot happen unless a buffer went astray; keep the headers out (the pool stays
        // parked) rather than give two headers one buffer.
        log("warning: direction %u worker %u: %u free buffers for %zu donor and %u stash mbufs at "
            "stop",
            d.index, d.queue, d.free_n, d.donors.size(), d.stash_n);
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

}  // namespace linkem::dp::detail
