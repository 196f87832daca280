#include "linkem/dataplane/virtual_port.hpp"

#include <cstring>
#include <vector>

#include <rte_bus_vdev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dpdk.hpp"
#include "linkem/dataplane/eal.hpp"

namespace linkem::dp {

struct VirtualPort::Impl {
    std::string name;
    std::uint16_t port = 0;
    detail::Ring rx;  // far end enqueues, the port's RX dequeues
    detail::Ring tx;  // the port's TX enqueues, far end dequeues
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
                         FramePool frames)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.frames = frames;
    const int socket = static_cast<int>(rte_socket_id());
    m.rx.reset(rte_ring_create(detail::unique_name("vp_rx").c_str(), ring_size, socket,
                               RING_F_SP_ENQ | RING_F_SC_DEQ));
    m.tx.reset(rte_ring_create(detail::unique_name("vp_tx").c_str(), ring_size, socket,
                               RING_F_SP_ENQ | RING_F_SC_DEQ));
    if (!m.rx || !m.tx)
        throw DataplaneError("virtual port " + name +
                             ": cannot create rings: " + detail::rte_error_text());
    m.pool = detail::make_pktmbuf_pool(detail::unique_name("vp_pool"), mbufs, socket);
    rte_ring* rx_rings[1] = {m.rx.get()};
    rte_ring* tx_rings[1] = {m.tx.get()};
    // The ring PMD names the ethdev "net_ring_" + name.
    const int port =
        rte_eth_from_rings(name.c_str(), rx_rings, 1, tx_rings, 1, static_cast<unsigned>(socket));
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
    for (rte_ring* r : {m.rx.get(), m.tx.get()}) {
        unsigned n;
        while ((n = rte_ring_dequeue_burst(r, objs, 256, nullptr)) > 0)
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

std::size_t VirtualPort::send_burst(
    std::size_t n, std::size_t length,
    const std::function<void(std::size_t, std::span<std::uint8_t>)>& fill,
    const FrameShape& shape) {
    Impl& m = *impl_;
    constexpr std::size_t kStep = 64;
    const bool plain = !shape.two_segments && shape.headroom == 0 && !shape.shared;
    std::vector<std::uint8_t> frame(plain ? 0 : length);
    std::size_t done = 0;
    while (done < n) {
        const unsigned k = static_cast<unsigned>(std::min(kStep, n - done));
        rte_mbuf* pkts[kStep];
        // Like a NIC: into mbufs of the pool the data plane gave the port's RX queue; when
        // that has none to spare (or no data plane runs), from our own.
        rte_mempool* rx = m.frames == FramePool::rx_queue ? detail::rx_pool(m.port) : nullptr;
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
            rte_ring_sp_enqueue_burst(m.rx.get(), reinterpret_cast<void**>(pkts), k, nullptr);
        if (q < k) rte_pktmbuf_free_bulk(pkts + q, k - q);
        done += q;
        if (q < k) break;
    }
    return done;
}

std::size_t VirtualPort::receive(const std::function<void(std::span<const std::uint8_t>)>& sink,
                                 std::size_t max) {
    Impl& m = *impl_;
    constexpr std::size_t kStep = 64;
    std::size_t done = 0;
    while (done < max) {
        void* objs[kStep];
        const unsigned n = rte_ring_sc_dequeue_burst(
            m.tx.get(), objs, static_cast<unsigned>(std::min(kStep, max - done)), nullptr);
        if (n == 0) break;
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
    return rte_ring_count(impl_->rx.get());
}

}  // namespace linkem::dp
