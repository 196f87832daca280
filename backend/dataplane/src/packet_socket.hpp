// The kernel's own counters of net_af_packet ports. DPDK 22.11's af_packet PMD reports no
// receive drops (imissed stays 0), yet the kernel drops frames when the PMD's receive ring
// (framecnt frames) is full and counts them per socket in PACKET_STATISTICS (tp_drops).
// PacketSocketStats finds the PMD's sockets (AF_PACKET sockets bound to the interface that
// appeared while the port was probed) and adds up their drops, so that rx_missed shows them.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace linkem::dp::detail {

/// The descriptors of this process's open AF_PACKET sockets bound to `ifindex` (0: any).
std::set<int> packet_sockets(int ifindex);

/// The interface of a net_af_packet devargs string ("net_af_packet0,iface=veth1,..." ->
/// "veth1"), or "" if `devargs` is not one.
std::string af_packet_iface(const std::string& devargs);

class PacketSocketStats {
  public:
    /// before: packet_sockets() before the port was probed; the new ones are the PMD's.
    PacketSocketStats(const std::string& iface, const std::set<int>& before);
    bool active() const { return !fds_.empty(); }
    /// Frames the kernel dropped since the previous reset() (PACKET_STATISTICS reads and
    /// clears the kernel's counters: they are added up here).
    std::uint64_t drops();
    /// Forgets what was dropped so far (the port's rte_eth_stats_reset).
    void reset();
    /// The sockets close when the port stops: no more reads after this.
    void close();

  private:
    void poll_locked();
    std::mutex mu_;
    std::vector<int> fds_;
    std::uint64_t drops_ = 0;
};

}  // namespace linkem::dp::detail
