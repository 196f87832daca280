// A DPDK ethdev owned by the data plane: probed (or found), configured with one receive and
// one transmit queue per worker (several: RSS spreads flows over the receive queues where
// the device offers it), started, and stopped and removed again at the end.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <rte_dev.h>
#include <rte_ethdev.h>

#include "dpdk.hpp"
#include "lane.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "packet_socket.hpp"

namespace linkem::dp::detail {

class EthPort {
  public:
    explicit EthPort(const PortSpec& spec) : spec_(spec) {
        if (rte_eth_dev_get_port_by_name(spec.name.c_str(), &id_) == 0) return;  // exists
        const std::string iface = af_packet_iface(spec.devargs);
        const std::set<int> before = iface.empty() ? std::set<int>{} : packet_sockets(0);
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
        if (!iface.empty()) {
            kernel_ = std::make_unique<PacketSocketStats>(iface, before);
            if (!kernel_->active())
                log("port %s: the kernel's drop counters of its AF_PACKET socket were not "
                    "found; frames the kernel drops will not show in rx_missed",
                    spec.text.c_str());
        }
    }
    ~EthPort() {
        for (unsigned q = 0; q < queues_; ++q)
            detail::set_rx_pool(id_, q, nullptr);
        if (kernel_) kernel_->close();
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

    /// One receive queue per pool (rx_pools[q] for queue q) and as many transmit queues.
    void configure(const std::vector<rte_mempool*>& rx_pools) {
        const auto nq = static_cast<std::uint16_t>(rx_pools.size());
        rte_eth_dev_info info{};
        int ret = rte_eth_dev_info_get(id_, &info);
        if (ret != 0) fail("cannot read device info", ret);
        if (info.max_rx_queues < nq || info.max_tx_queues < nq)
            throw DataplaneError(
                "port '" + spec_.text + "' offers " + std::to_string(info.max_rx_queues) +
                " receive and " + std::to_string(info.max_tx_queues) +
                " transmit queue(s); --workers " + std::to_string(nq) + " needs " +
                std::to_string(nq) + " of each" +
                (spec_.devargs.find("af_packet") != std::string::npos
                     ? " (net_af_packet: add qpairs=" + std::to_string(nq) + " to its devargs)"
                     : ""));
        rte_eth_conf conf{};
        // Several queues: flows spread over them by the device's hash of addresses and ports
        // (RSS), each flow on one queue. Devices without RSS fill their queues themselves
        // (net_af_packet: the kernel's fanout group hashes flows onto its sockets; net_null
        // and net_ring: each queue on its own).
        const std::uint64_t hash =
            (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
        if (nq > 1 && hash != 0) {
            conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf = hash;
        }
        ret = rte_eth_dev_configure(id_, nq, nq, &conf);
        if (ret != 0) fail("cannot configure", ret);
        queues_ = nq;
        rss_ = nq > 1 && hash != 0;
        nb_rxd_ = kRxDesc;
        nb_txd_ = kTxDesc;
        ret = rte_eth_dev_adjust_nb_rx_tx_desc(id_, &nb_rxd_, &nb_txd_);
        if (ret != 0) fail("cannot adjust descriptor counts", ret);
        for (std::uint16_t q = 0; q < nq; ++q) {
            ret = rte_eth_rx_queue_setup(id_, q, nb_rxd_, socket(), nullptr, rx_pools[q]);
            if (ret != 0) fail("cannot set up an RX queue", ret);
            ret = rte_eth_tx_queue_setup(id_, q, nb_txd_, socket(), nullptr);
            if (ret != 0) fail("cannot set up a TX queue", ret);
        }
        ret = rte_eth_promiscuous_enable(id_);
        if (ret != 0 && ret != -ENOTSUP)
            log("port %s: cannot enable promiscuous mode: %s", spec_.text.c_str(),
                detail::rte_error_text(-ret).c_str());
        ret = rte_eth_dev_start(id_);
        if (ret != 0) fail("cannot start", ret);
        started_ = true;
        for (std::uint16_t q = 0; q < nq; ++q)
            detail::set_rx_pool(id_, q, rx_pools[q]);
        rte_eth_stats_reset(id_);
        if (kernel_) kernel_->reset();
    }

    void stop() {
        for (unsigned q = 0; q < queues_; ++q)
            detail::set_rx_pool(id_, q, nullptr);
        if (kernel_) kernel_->close();  // the PMD closes its sockets when it stops
        if (started_) rte_eth_dev_stop(id_);
        started_ = false;
    }

    std::uint16_t id() const { return id_; }
    const PortSpec& spec() const { return spec_; }
    std::uint16_t rx_desc() const { return nb_rxd_; }
    unsigned queues() const { return queues_; }
    /// Whether the device spreads flows over its receive queues by RSS.
    bool rss() const { return rss_; }
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
            // net_af_packet: the frames the kernel dropped because the PMD's receive ring
            // was full (PACKET_STATISTICS); the PMD itself reports none.
            ps.rx_missed = st.imissed + (kernel_ ? kernel_->drops() : 0);
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
    unsigned queues_ = 0;
    bool rss_ = false;
    rte_dev_iterator iter_{};
    std::unique_ptr<PacketSocketStats> kernel_;  // net_af_packet only
};

}  // namespace linkem::dp::detail
