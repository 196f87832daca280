#include "linkem/dataplane/virtual_port.hpp"

#include <cstring>
#include <vector>

#include <rte_bus_vdev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dpdk.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/dataplane/eal.hpp"

namespace linkem::dp {

struct VirtualPort::Impl {
    std::string name;
    std::uint16_t port = 0;
    std::vector<detail::Ring> rx;  // per queue: far end enqueues, the port's RX dequeues
    std::vector<detail::Ring> tx;  // per queue: the port's TX enqueues, far end dequeues
    unsigned next_tx = 0;          // receive(): the queue to read first
    detail::Mempool pool;
    FramePool frames = FramePool::rx_queue;
    struct Shared {
        rte_mbuf* m;
        void* buf_addr;
        std::vector<std::uint8_t> bytes;
    };
    std::vector<Shared> shared;  // FrameShape::shared frames, with what they held when sent
};

VirtualPort::VirtualPort(Eal&, const std::string& name, unsigned ring_size, unsigned mbufs,
                         FramePool frames, unsigned queues)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.frames = frames;
    const int socket = static_cast<int>(rte_socket_id());
    if (queues < 1 || queues > kMaxWorkers)
        throw DataplaneError("virtual port " + name + ": " + std::to_string(queues) +
                             " queues; allowed 1 .. " + std::to_string(kMaxWorkers));
    std::vector<rte_ring*> rx_rings, tx_rings;
    for (unsigned q = 0; q < queues; ++q) {
        m.rx.emplace_back(rte_ring_create(detail::unique_name("vp_rx").c_str(), ring_size, socket,
                                          RING_F_SP_ENQ | RING_F_SC_DEQ));
        m.tx.emplace_back(rte_ring_create(detail::unique_name("vp_tx").c_str(), ring_size, socket,
                                          RING_F_SP_ENQ | RING_F_SC_DEQ));
        if (!m.rx.back() || !m.tx.back())
            throw DataplaneError("virtual port " + name +
                                 ": cannot create rings: " + detail::rte_error_text());
        rx_rings.push_back(m.rx.back().get());
        tx_rings.push_back(m.tx.back().get());
    }
    m.pool = detail::make_pktmbuf_pool(detail::unique_name("vp_pool"), mbufs, socket);
    // The ring PMD names the ethdev "net_ring_" + name.
    const int port = rte_eth_from_rings(name.c_str(), rx_rings.data(), queues, tx_rings.data(),
                                        queues, static_cast<unsigned>(socket));
    if (port < 0)
        throw DataplaneError("virtual port " + name +
                             ": cannot create the ring ethdev: " + detail::rte_error_text());
    m.port = static_cast<std::uint16_t>(port);
    char ethdev_name[RTE_ETH_NAME_MAX_LEN];
    if (rte_eth_dev_get_name_by_port(m.port, ethdev_name) != 0)
        throw DataplaneError("virtual port " + name + ": the ring ethdev has no name");
    m.name = ethdev_name;
}

VirtualPort::~VirtualPort() {
    Impl& m = *impl_;
    rte_eth_dev_stop(m.port);
    rte_eth_dev_close(m.port);
    rte_vdev_uninit(m.name.c_str());
    void* objs[256];
    for (auto* rings : {&m.rx, &m.tx})
        for (detail::Ring& r : *rings) {
            unsigned n;
            while ((n = rte_ring_dequeue_burst(r.get(), objs, 256, nullptr)) > 0)
                rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(objs), n);
        }
    m.pool.reset();
    detail::collect_parked_pools();
}

const std::string& VirtualPort::name() const {
    return impl_->name;
}

bool VirtualPort::send(std::span<const std::uint8_t> frame) {
    return send_burst(1, frame.size(), [&](std::size_t, std::span<std::uint8_t> out) {
               std::memcpy(out.data(), frame.data(), frame.size());
           }) == 1;
}

namespace {

// Writes `frame` into the fresh mbuf m as `shape` says (a second segment from m's pool).
bool shape_frame(rte_mbuf* m, std::span<const std::uint8_t> frame,
                 const VirtualPort::FrameShape& shape) {
    if (shape.headroom > rte_pktmbuf_tailroom(m)) return false;
    m->data_off = static_cast<std::uint16_t>(m->data_off + shape.headroom);
    const std::size_t first = shape.two_segments ? frame.size() / 2 : frame.size();
    char* data = rte_pktmbuf_append(m, static_cast<std::uint16_t>(first));
    if (!data) return false;
    std::memcpy(data, frame.data(), first);
    if (shape.two_segments) {
        rte_mbuf* tail = rte_pktmbuf_alloc(m->pool);
        if (!tail) return false;
        char* rest = rte_pktmbuf_append(tail, static_cast<std::uint16_t>(frame.size() - first));
        if (!rest || rte_pktmbuf_chain(m, tail) != 0) {
            rte_pktmbuf_free(tail);
            return false;
        }
        std::memcpy(rest, frame.data() + first, frame.size() - first);
    }
    return true;
}

}  // namespace

unsigned VirtualPort::queues() const {
    return static_cast<unsigned>(impl_->rx.size());
}

unsigned VirtualPort::queue_of(std::span<const std::uint8_t> frame) const {
    const unsigned nq = queues();
    if (nq == 1) return 0;
    // FNV-1a over the addresses, the EtherType and, for IPv4, the protocol, the addresses and
    // (TCP, UDP) the ports.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&](std::size_t off, std::size_t len) {
        for (std::size_t i = off; i < off + len && i < frame.size(); ++i) {
            h ^= frame[i];
            h *= 0x100000001b3ULL;
        }
    };
    mix(0, 14);
    if (frame.size() >= 34 && frame[12] == 0x08 && frame[13] == 0x00) {
        const std::size_t ihl = static_cast<std::size_t>(frame[14] & 0x0f) * 4;
        const std::uint8_t proto = frame[23];
        mix(23, 1);
        mix(26, 8);
        if (proto == 6 || proto == 17) mix(14 + ihl, 4);
    }
    return static_cast<unsigned>((h ^ (h >> 32)) % nq);
}

std::size_t VirtualPort::send_burst(
    std::size_t n, std::size_t length,
    const std::function<void(std::size_t, std::span<std::uint8_t>)>& fill,
    const FrameShape& shape) {
    Impl& m = *impl_;
    if (m.rx.size() > 1) return send_spread(n, length, fill, shape);
    constexpr std::size_t kStep = 64;
    const bool plain = !shape.two_segments && shape.headroom == 0 && !shape.shared;
    std::vector<std::uint8_t> frame(plain ? 0 : length);
    std::size_t done = 0;
    while (done < n) {
        const unsigned k = static_cast<unsigned>(std::min(kStep, n - done));
        rte_mbuf* pkts[kStep];
        // Like a NIC: into mbufs of the pool the data plane gave the port's RX queue; when
        // that has none to spare (or no data plane runs), from our own.
        rte_mempool* rx = m.frames == FramePool::rx_queue ? detail::rx_pool(m.port, 0) : nullptr;
        if ((!rx || rte_pktmbuf_alloc_bulk(rx, pkts, k) != 0) &&
            rte_pktmbuf_alloc_bulk(m.pool.get(), pkts, k) != 0)
            break;
        for (unsigned i = 0; i < k; ++i) {
            bool ok;
            if (plain) {
                char* data = rte_pktmbuf_append(pkts[i], static_cast<std::uint16_t>(length));
                ok = data != nullptr;
                if (ok)
                    fill(done + i,
                         std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(data), length));
            } else {
                fill(done + i, frame);
                ok = shape_frame(pkts[i], frame, shape);
            }
            if (!ok) {
                rte_pktmbuf_free_bulk(pkts, k);
                throw DataplaneError("virtual port: frame of " + std::to_string(length) +
                                     " bytes does not fit an mbuf");
            }
            if (shape.shared) {
                rte_pktmbuf_refcnt_update(pkts[i], 1);  // every segment
                m.shared.push_back(Impl::Shared{pkts[i], pkts[i]->buf_addr, frame});
            }
        }
        const unsigned q =
            rte_ring_sp_enqueue_burst(m.rx[0].get(), reinterpret_cast<void**>(pkts), k, nullptr);
        if (q < k) rte_pktmbuf_free_bulk(pkts + q, k - q);
        done += q;
        if (q < k) break;
    }
    return done;
}

// Several queues: each frame written once (a scratch copy), then into an mbuf of the pool of
// the queue its flow hashes to, on that queue's ring. Stops at the first frame that does not
// fit, so that every frame before it, and none after, was sent.
std::size_t VirtualPort::send_spread(
    std::size_t n, std::size_t length,
    const std::function<void(std::size_t, std::span<std::uint8_t>)>& fill,
    const FrameShape& shape) {
    Impl& m = *impl_;
    std::vector<std::uint8_t> frame(length);
    for (std::size_t i = 0; i < n; ++i) {
        fill(i, frame);
        const unsigned q = queue_of(frame);
        rte_mempool* rx = m.frames == FramePool::rx_queue ? detail::rx_pool(m.port, q) : nullptr;
        rte_mbuf* mb = rx ? rte_pktmbuf_alloc(rx) : nullptr;
        if (!mb) mb = rte_pktmbuf_alloc(m.pool.get());
        if (!mb) return i;
        if (!shape_frame(mb, frame, shape)) {
            rte_pktmbuf_free(mb);
            throw DataplaneError("virtual port: frame of " + std::to_string(length) +
                                 " bytes does not fit an mbuf");
        }
        if (rte_ring_sp_enqueue(m.rx[q].get(), mb) != 0) {
            rte_pktmbuf_free(mb);
            return i;
        }
        if (shape.shared) {
            rte_pktmbuf_refcnt_update(mb, 1);
            m.shared.push_back(Impl::Shared{mb, mb->buf_addr, frame});
        }
    }
    return n;
}

std::size_t VirtualPort::receive(const std::function<void(std::span<const std::uint8_t>)>& sink,
                                 std::size_t max) {
    Impl& m = *impl_;
    constexpr std::size_t kStep = 64;
    std::size_t done = 0;
    for (unsigned empty = 0; done < max && empty < m.tx.size();) {
        void* objs[kStep];
        rte_ring* ring = m.tx[m.next_tx].get();
        m.next_tx = (m.next_tx + 1) % static_cast<unsigned>(m.tx.size());
        const unsigned n = rte_ring_sc_dequeue_burst(
            ring, objs, static_cast<unsigned>(std::min(kStep, max - done)), nullptr);
        empty = n == 0 ? empty + 1 : 0;
        if (n == 0) continue;
        for (unsigned i = 0; i < n; ++i) {
            rte_mbuf* mb = static_cast<rte_mbuf*>(objs[i]);
            if (mb->nb_segs == 1) {
                sink(std::span<const std::uint8_t>(rte_pktmbuf_mtod(mb, const std::uint8_t*),
                                                   mb->pkt_len));
            } else {
                std::vector<std::uint8_t> flat(mb->pkt_len);
                rte_pktmbuf_read(mb, 0, mb->pkt_len, flat.data());
                sink(flat);
            }
        }
        rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(objs), n);
        done += n;
    }
    return done;
}

std::size_t VirtualPort::release_shared() {
    Impl& m = *impl_;
    std::size_t changed = 0;
    for (Impl::Shared& sh : m.shared) {
        rte_mbuf* mb = sh.m;
        std::vector<std::uint8_t> now(mb->pkt_len);
        const bool same = mb->buf_addr == sh.buf_addr && mb->pkt_len == sh.bytes.size() &&
                          std::memcmp(rte_pktmbuf_read(mb, 0, mb->pkt_len, now.data()),
                                      sh.bytes.data(), sh.bytes.size()) == 0;
        if (!same) ++changed;
        rte_pktmbuf_free(mb);
    }
    m.shared.clear();
    return changed;
}

std::size_t VirtualPort::rx_backlog() const {
    std::size_t n = 0;
    for (const detail::Ring& r : impl_->rx)
        n += rte_ring_count(r.get());
    return n;
}

}  // namespace linkem::dp
