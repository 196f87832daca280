// One linkemd per port: a linkemd claims each port it drives before the EAL opens it, so that
// a second linkemd given the same kernel interface (net_af_packet, or a device's iface=) or
// PCI device is refused with a message naming the port and the process that holds it,
// instead of also reading and sending on it (every frame would then go through twice).
//
// The claim is a listening abstract Unix socket named "linkemd/port/KIND:NAME" (no file, held
// as long as the process lives, released by the kernel when it ends, however it ends). An
// interface is claimed per network namespace, as interface names are.
#pragma once

#include <string>
#include <vector>

namespace linkem::linkemd {

/// What a port value claims: "iface:NAME" for a kernel interface (an interface name, or
/// devargs with iface=NAME), "pci:ADDRESS" for a PCI device, "" for a device nothing else
/// can share (net_null, net_ring, the virtual ports).
std::string port_claim_key(const std::string& port);

/// Holds the claims of one linkemd's ports; released when destroyed.
class PortClaims {
  public:
    /// Claims each port (flag: "--port-a", "--port-b"). Throws UsageError naming the flag, the
    /// port and the pid of the linkemd that holds it.
    explicit PortClaims(const std::vector<std::pair<std::string, std::string>>& flag_and_port);
    ~PortClaims();
    PortClaims(const PortClaims&) = delete;
    PortClaims& operator=(const PortClaims&) = delete;

  private:
    std::vector<int> fds_;
    std::vector<std::string> keys_;
};

}  // namespace linkem::linkemd
