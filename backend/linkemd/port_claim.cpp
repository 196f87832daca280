#include "port_claim.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "linkem/dataplane/dataplane.hpp"
#include "options.hpp"

namespace linkem::linkemd {

namespace {

// The value of `key=` among devargs' comma-separated settings ("" when absent).
std::string devarg(const std::string& devargs, const std::string& key) {
    std::size_t at = 0;
    while ((at = devargs.find(',', at)) != std::string::npos) {
        ++at;
        if (devargs.compare(at, key.size() + 1, key + "=") == 0) {
            const std::size_t from = at + key.size() + 1;
            const std::size_t end = devargs.find(',', from);
            return devargs.substr(from, end == std::string::npos ? end : end - from);
        }
    }
    return "";
}

sockaddr_un claim_address(const std::string& key, socklen_t& len) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string name = "linkemd/port/" + key;
    // Abstract: sun_path[0] is 0, the name follows (not 0-terminated).
    const std::size_t n = std::min(name.size(), sizeof a.sun_path - 1);
    std::memcpy(a.sun_path + 1, name.data(), n);
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
    return a;
}

// The pid of the process listening on the claim `key`, or -1.
long holder(const std::string& key) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    socklen_t len = 0;
    const sockaddr_un a = claim_address(key, len);
    long pid = -1;
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a), len) == 0) {
        ucred cred{};
        socklen_t cl = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) pid = cred.pid;
    }
    close(fd);
    return pid;
}

}  // namespace

std::string port_claim_key(const std::string& port) {
    if (port.empty() || port == "virtual") return "";
    dp::PortSpec spec;
    try {
        spec = dp::resolve_port(port, "port");
    } catch (const std::exception&) {
        return "";  // refused later, with its own message
    }
    if (spec.interface) return "iface:" + port;
    if (spec.pci) return "pci:" + spec.name;
    const std::string iface = devarg(spec.devargs, "iface");
    return iface.empty() ? "" : "iface:" + iface;
}

PortClaims::PortClaims(const std::vector<std::pair<std::string, std::string>>& flag_and_port) {
    for (const auto& [flag, port] : flag_and_port) {
        const std::string key = port_claim_key(port);
        // Both ports on one interface are this linkemd's own affair, not a second linkemd.
        if (key.empty() || std::find(keys_.begin(), keys_.end(), key) != keys_.end()) continue;
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
        socklen_t len = 0;
        const sockaddr_un a = claim_address(key, len);
        if (bind(fd, reinterpret_cast<const sockaddr*>(&a), len) == 0 && listen(fd, 4) == 0) {
            fds_.push_back(fd);
            keys_.push_back(key);
            continue;
        }
        const int err = errno;
        close(fd);
        if (err != EADDRINUSE)  // the claim is a safeguard: without it linkemd still runs
            continue;
        const long pid = holder(key);
        const std::string what =
            key.starts_with("pci:") ? "PCI device " + key.substr(4) : "interface " + key.substr(6);
        for (int f : fds_)
            close(f);
        fds_.clear();
        throw UsageError(flag + " " + port + ": the " + what + " is in use by another linkemd" +
                         (pid > 0 ? " (pid " + std::to_string(pid) + ")" : std::string()) +
                         "; each port can be driven by one linkemd at a time");
    }
}

PortClaims::~PortClaims() {
    for (int fd : fds_)
        close(fd);
}

}  // namespace linkem::linkemd
