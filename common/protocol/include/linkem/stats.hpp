// The counters of a running link, as linkemd reports them: per direction and per port.
//
// One struct for every surface: linkemd's stats table and --stats-json lines, the `stats`
// telemetry topic and the get_stats reply (docs/protocol.md, section 4). Counters are
// cumulative since start; readers compute rates from two snapshots and their t_ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkem/counters.hpp"
#include "linkem/link_params.hpp"  // kDirectionKeys, kPortNames
#include "linkem/telemetry.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// What the built-in traffic's receiving side measured from its frames, per direction (the
/// `traffic` object of a `stats` message; present only with the built-in traffic).
struct TrafficStats : TrafficCounts {
    bool present = false;
    std::uint64_t run = 0;
    RunningStats delay;  // measured one-way delay since the last set_link or set_traffic, ns
};

struct DirectionStats {
    CounterSnapshot counters;
    std::uint64_t tx_sent = 0;       // accepted by the TX queue
    std::uint64_t tx_queued = 0;     // drained by the Emulator, not yet accepted by the TX queue
    std::uint64_t buffer_limit = 0;  // packets the Emulator may hold (after the mempool cap)
    bool buffer_exchange = false;    // the queue holds packet buffers, not mbufs
    std::uint64_t params_generation = 0;  // the parameter block in use (0: the initial one)
    /// Stalls: gaps of 100 us or more between two polls of the direction by an lcore that
    /// serves it (with several workers: summed over them), i.e. times the data plane did
    /// not run (preempted, interrupted, or its vCPU descheduled). Packets that arrived or
    /// fell due in a stall leave up to its length late.
    std::uint64_t stalls = 0;
    std::uint64_t stall_ns = 0;          // their total length
    std::uint64_t longest_stall_ns = 0;  // the longest since start
    /// Delay samples the data plane could not hand to telemetry (its ring was full).
    std::uint64_t delay_samples_dropped = 0;
    TrafficStats traffic;
};

struct PortStats {
    std::string name;  // the device as given (--port-a): "net_null0", "veth1", a PCI address
    std::uint64_t rx = 0, tx = 0;
    std::uint64_t rx_missed = 0;  // imissed: the NIC had no room (we were too slow)
    std::uint64_t rx_nombuf = 0;  // the mempool ran dry
    std::uint64_t tx_failed = 0;  // oerrors as the PMD reports them
    bool link_up = false;
    std::uint32_t speed_mbps = 0;
};

/// One traffic class's counters (docs/classes.md): its packets of each direction. A `pass`
/// class's packets go out untouched (in = out), a `drop` class's are drops_class.
struct ClassStats {
    std::string name;  // "default" or the class's name
    ClassAction action = ClassAction::emulate;
    CounterSnapshot dir[2];  // a_to_b, b_to_a
};

struct LinkStats {
    TimeNs t_ns = 0;  // the data plane's clock when taken
    unsigned directions = 1;
    DirectionStats dir[2];  // a_to_b, b_to_a (all classes together)
    /// With traffic classes: `default` first, then the link's classes in order (a
    /// direction's counters are their sums); empty without classes.
    std::vector<ClassStats> classes;
    unsigned ports = 1;
    PortStats port[2];  // a, b
};

/// {"t_ns":..,"final":..,"a_to_b":{...},"b_to_a":{...},"ports":{"a":{...},"b":{...}}}: the
/// keys of docs/protocol.md's `stats` topic (without its header keys), and with traffic
/// classes "classes": [{"name":..,"action":..,"a_to_b":{counters},"b_to_a":{...}}, ...].
nlohmann::json to_json(const LinkStats& s, bool final);
/// The inverse, for clients; throws std::invalid_argument naming the key that is missing or
/// of the wrong type. Keys it does not know are ignored; `classes` and `drops_class` are
/// optional (an older linkemd sends neither).
LinkStats link_stats_from_json(const nlohmann::json& j);

}  // namespace linkem
