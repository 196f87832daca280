#include "packet_socket.hpp"

#include <dirent.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace linkem::dp::detail {

std::set<int> packet_sockets(int ifindex) {
    std::set<int> fds;
    DIR* d = opendir("/proc/self/fd");
    if (!d) return fds;
    const int self = dirfd(d);
    while (const dirent* e = readdir(d)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == self) continue;
        struct stat st {};
        if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        sockaddr_ll sa{};
        socklen_t len = sizeof sa;
        if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&sa), &len) != 0 ||
            sa.sll_family != AF_PACKET)
            continue;
        if (ifindex == 0 || sa.sll_ifindex == ifindex) fds.insert(static_cast<int>(fd));
    }
    closedir(d);
    return fds;
}

std::string af_packet_iface(const std::string& devargs) {
    const std::string head = devargs.substr(0, devargs.find(','));
    if (!head.starts_with("net_af_packet") && !head.starts_with("eth_af_packet")) return "";
    std::size_t at = 0;
    while ((at = devargs.find(',', at)) != std::string::npos) {
        ++at;
        if (devargs.compare(at, 6, "iface=") == 0) {
            const std::size_t end = devargs.find(',', at);
            return devargs.substr(at + 6, end == std::string::npos ? end : end - at - 6);
        }
    }
    return "";
}

PacketSocketStats::PacketSocketStats(const std::string& iface, const std::set<int>& before) {
    const unsigned idx = if_nametoindex(iface.c_str());
    if (idx == 0) return;
    for (int fd : packet_sockets(static_cast<int>(idx)))
        if (!before.contains(fd)) fds_.push_back(fd);
}

void PacketSocketStats::poll_locked() {
    for (int fd : fds_) {
        tpacket_stats st{};
        socklen_t len = sizeof st;
        if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) drops_ += st.tp_drops;
    }
}

std::uint64_t PacketSocketStats::drops() {
    std::lock_guard lock(mu_);
    poll_locked();
    return drops_;
}

void PacketSocketStats::reset() {
    std::lock_guard lock(mu_);
    poll_locked();
    drops_ = 0;
}

void PacketSocketStats::close() {
    std::lock_guard lock(mu_);
    poll_locked();
    fds_.clear();
}

}  // namespace linkem::dp::detail
