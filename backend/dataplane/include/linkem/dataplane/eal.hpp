// The DPDK Environment Abstraction Layer, owned by one RAII object per process.
//
// DPDK can initialise its EAL once per process and never again after rte_eal_cleanup(), so
// an Eal lives as long as anything that uses DPDK (ports, pools, the data plane). This
// header, like every header of the data-plane library, shows no rte_* type: only
// backend/dataplane/src includes DPDK.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "linkem/time.hpp"

namespace linkem::dp {

/// A failure of DPDK itself (EAL, port or pool set-up): linkemd exits with code 1.
class DataplaneError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct EalOptions {
    std::string program = "linkemd";
    /// Worker lcores to create (the main lcore comes on top). Ignored when raw_args choose
    /// the lcores themselves (-l, -c, --lcores).
    unsigned worker_lcores = 1;
    /// Memory to ask for when running without hugepages (-m); 0: EAL's default.
    std::size_t memory_mib = 0;
    /// PCI devices to probe (passed as -a); empty: --no-pci.
    std::vector<std::string> pci_devices;
    /// --file-prefix; empty: "linkemd-<pid>" so that several processes can run at once.
    /// DPDK's runtime directory for it is removed at exit (not so for a --file-prefix
    /// given in raw_args).
    std::string file_prefix;
    /// Passed to rte_eal_init() after ours, unchanged; an option given here replaces the
    /// default we would have added for it (--file-prefix, -m, --no-huge, -l/--lcores...).
    std::vector<std::string> raw_args;
};

class Eal {
  public:
    /// Builds the EAL arguments (see args()) and initialises the EAL. Throws
    /// DataplaneError if DPDK refuses. Without mounted hugepages it runs with --no-huge and
    /// -m memory_mib, and logs that it does so.
    explicit Eal(const EalOptions& options);
    ~Eal();
    Eal(const Eal&) = delete;
    Eal& operator=(const Eal&) = delete;

    /// The argument vector given to rte_eal_init (without argv[0]).
    const std::vector<std::string>& args() const { return args_; }
    bool no_huge() const { return no_huge_; }
    /// Worker lcores the EAL has (the main lcore excluded).
    unsigned worker_lcores() const;

    /// True when a hugetlbfs is mounted and has free pages.
    static bool hugepages_available();
    /// CPUs this process may run on.
    static unsigned usable_cpus();

  private:
    std::vector<std::string> args_;
    bool no_huge_ = false;
    std::string own_prefix_;  // the --file-prefix we chose (its runtime dir is removed)
};

/// Nanoseconds since the EAL started, from the TSC at the rate measured against
/// CLOCK_MONOTONIC_RAW (one clock for the data plane, the tests and the traffic
/// generator; re-checked every 10 s without steps). Valid once an Eal exists.
TimeNs now_ns();
/// The TSC rate now_ns() uses, ticks per second.
double tsc_hz();

}  // namespace linkem::dp
