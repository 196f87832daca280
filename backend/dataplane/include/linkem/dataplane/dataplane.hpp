// The data plane: two ports (or one), one Emulator per direction and worker, lcores that
// move packets
//
//   rx_burst -> timestamp (TSC ns, one per burst) -> Emulator::ingest -> drain -> tx_burst
//
// Workers: one lcore for both directions (`shared`), or N per direction, each with its own
// receive and transmit queue on the ports and its own Emulator for the flows the port puts
// on its queue (RSS; net_af_packet: the kernel's hash fanout). A direction's workers are one
// link: its counters are their sums, a parameter change reaches all of them with one
// generation, and its limiter (spacer or policer) is shared (linkem/shared_link.hpp).
//
// Packets the TX queue does not take stay queued (a per-direction pending array retried
// first, in order); nothing is dropped except by the Emulator (loss, limiter, full buffer).
//
// Run-time changes: apply() builds an immutable parameter block per direction and
// publishes it through an atomic pointer + generation; the lcore that owns the Emulator
// adopts it at a loop boundary (Emulator::set_params keeps queued packets, EMA and rate
// state) and acknowledges the generation; a block is freed only after that
// acknowledgement. This is the hook the control server uses.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "linkem/capture.hpp"
#include "linkem/counters.hpp"
#include "linkem/dataplane/eal.hpp"
#include "linkem/link_params.hpp"
#include "linkem/scenario.hpp"
#include "linkem/stats.hpp"
#include "linkem/telemetry.hpp"

namespace linkem::dp {

/// The data plane's worker lcores: `shared` (one lcore serves both directions, one queue
/// each) or `per_direction` lcores for each direction, each serving its own queue pair.
struct Workers {
    bool shared = false;
    unsigned per_direction = 1;
    bool operator==(const Workers&) const = default;
};
inline constexpr unsigned kMaxWorkers = 64;  // per direction

/// "shared", or a number 1 .. kMaxWorkers (workers per direction); nullopt otherwise.
std::optional<Workers> parse_workers(std::string_view s);
std::string to_string(Workers w);
/// Worker lcores needed for the given number of directions.
unsigned worker_lcores_needed(Workers w, unsigned directions);
/// Queues per port (receive and transmit alike).
unsigned queues_per_port(Workers w);
/// Throws ParamError("limiter", ...) when p cannot run on `queues` workers a direction: the
/// trace limiter is each worker's own, so several would each deliver the whole trace.
void refuse_unshared(const LinkParams& p, unsigned queues);
/// "shared" below 4 usable CPUs, else one per direction.
Workers default_workers(unsigned cpus);

inline constexpr unsigned kMaxBurst = 512;
inline constexpr std::uint32_t kMinMbufs = 8192;
inline constexpr std::uint32_t kMaxMbufs = 1u << 24;

/// A port given by the user, resolved to what DPDK probes.
struct PortSpec {
    std::string text;     // as given
    std::string devargs;  // what rte_dev_probe gets
    std::string name;     // the ethdev name to look up
    bool pci = false;
    bool interface = false;  // a kernel interface, driven through net_af_packet
};
/// The net_af_packet settings linkemd adds for a port given by its interface name (the
/// receive and transmit rings: 8192 frames of 2048 bytes in blocks of 64 KiB, 16 MiB each).
inline constexpr const char* kAfPacketDevargs =
    "blocksz=65536,framesz=2048,framecnt=8192,qdisc_bypass=1";
/// Resolves a --port-a/--port-b value: a DPDK device name or devargs ("net_null0",
/// "net_tap0,iface=lk0"), a PCI address ("0000:3b:00.0"), or a kernel interface name
/// ("veth1" -> "net_af_packet_veth1,iface=veth1,<kAfPacketDevargs>", with ",qpairs=N" for
/// queues > 1). Throws ParamError(field) when it is none of these.
PortSpec resolve_port(const std::string& text, const std::string& field, unsigned queues = 1);

/// Default mbuf count: enough for the largest configured rate (limiter rate, or 10 GbE
/// line rate of minimum-size frames) x (mean delay + 4 jitter + 1 ms) + the spacer backlog,
/// per direction, clamped to 65535 .. 262143, times the workers per direction.
std::uint32_t default_mbufs(const LinkConfig& link, unsigned directions, unsigned workers = 1);
/// EAL memory (MiB) for --no-huge runs holding `mbufs` mbufs.
std::size_t eal_memory_mib(std::uint32_t mbufs);

struct DataplaneConfig {
    std::string port_a;
    std::string port_b;  // empty: single-port mode (packets go back out of port A)
    Workers workers{.shared = true};
    unsigned burst = 16;      // 1 .. kMaxBurst
    std::uint32_t mbufs = 0;  // total over all pools (one per receive queue); 0: default_mbufs()
    /// Queue whole mbufs instead of exchanging packet buffers (see dataplane.cpp, "Buffer
    /// exchange"): for comparison, and for code that needs the received mbuf itself.
    bool hold_mbufs = false;
    LinkConfig link;
    /// Telemetry beyond the interval reports (which are always made): the lateness of every
    /// departure, and sampled packets followed end to end (docs/protocol.md, `delay`).
    bool telemetry = false;
    unsigned delay_samples_per_s = 2000;  // 0 .. kMaxDelaySamplesPerS; 0: none
};

inline constexpr unsigned kMaxDelaySamplesPerS = 20000;
/// A capture's ring per lane, and the most all lanes' rings take together.
inline constexpr std::size_t kCaptureRingBytes = std::size_t{8} << 20;
inline constexpr std::size_t kCaptureMemory = std::size_t{64} << 20;
/// How often each direction's lcores report their counters and delay statistics (at the
/// multiples of this period of the data plane's clock, so that a direction's workers report
/// together).
inline constexpr DurationNs kReportPeriod = 50 * kNsPerMs;

/// What the lcores reported since the last Dataplane::take_telemetry(), per direction (a
/// direction's workers merged: one report per period, the samples of all of them in order
/// of arrival).
struct TelemetryBatch {
    std::vector<IntervalReport> reports[2];
    std::vector<DelaySample> samples[2];
    void clear() {
        for (int k = 0; k < 2; ++k) {
            reports[k].clear();
            samples[k].clear();
        }
    }
};

using LinkConfig = linkem::LinkConfig;

/// The counters of a running data plane (linkem/stats.hpp: one struct for every surface).
using DirectionStats = linkem::DirectionStats;
using PortStats = linkem::PortStats;
using DataplaneStats = linkem::LinkStats;

class Dataplane {
  public:
    /// Probes and starts the ports, creates the pools and rings, builds the Emulators
    /// (queues reserved so the packet path never allocates). Throws DataplaneError on a
    /// DPDK failure, ParamError on invalid link parameters.
    Dataplane(Eal& eal, DataplaneConfig config);
    ~Dataplane();
    Dataplane(const Dataplane&) = delete;
    Dataplane& operator=(const Dataplane&) = delete;

    /// Launches the data-plane lcores.
    void start();
    /// Stops the lcores (idempotent), records the final counters (stats() returns them
    /// from then on), frees every packet still held and stops the ports.
    void stop();
    bool running() const;

    /// Validates and publishes new parameters for both directions without stopping
    /// traffic. Throws ParamError (field prefixed with "a_to_b." / "b_to_a.") and then
    /// changes nothing. A seed of 0 draws a new random seed (as at start). Returns the
    /// generation; see wait_applied().
    std::uint64_t apply(const LinkConfig& link);
    /// Publishes f(the parameters in force), under the same lock as apply(): a change
    /// built from the current parameters (a partial update, one direction) cannot lose a
    /// concurrent one. f gives parameters that validate() accepted (the protocol's decoders,
    /// the config file's reader and compile_scenario check them, so that a refusal names
    /// the field before anything changes; apply() checks them itself); f may throw
    /// (ParamError: nothing changes). What the data plane alone refuses (a trace limiter
    /// shared by several workers) throws ParamError here. Returns the generation and the
    /// parameters now in force (with the seeds in use).
    std::pair<std::uint64_t, LinkConfig> update(
        const std::function<LinkConfig(const LinkConfig&)>& f);
    /// update(), after which each direction's parameters follow a scenario: those in force
    /// for a packet that arrives at t are tracks.dir[k].at(t - origin_ns), changed by the
    /// lcore as the packets arrive (Emulator::follow), without further generations. f gives
    /// the parameters to publish (those at the position the scenario is at). Any later
    /// update() without tracks stops following.
    std::pair<std::uint64_t, LinkConfig> update(
        const std::function<LinkConfig(const LinkConfig&)>& f,
        std::shared_ptr<const ScenarioTracks> tracks, TimeNs origin_ns);
    /// True once every direction runs with generation >= gen (false after the timeout).
    bool wait_applied(std::uint64_t gen, std::chrono::milliseconds timeout) const;
    /// The parameters in force (last applied, with each direction's seed in use).
    LinkConfig link() const;
    /// The generation of the parameters last applied (0: the start-up ones).
    std::uint64_t generation() const;

    /// Counters per direction and port. While the data plane runs, each direction's counters
    /// are the sums over its workers of their newest interval reports (each taken by its
    /// lcore between two bursts, so in = out + drops + in_flight holds), at most
    /// kReportPeriod old; its parameter generation is the oldest any of them runs.
    DataplaneStats stats() const;
    /// Moves the interval reports and delay samples made since the last call into `out`
    /// (cleared first). Keeps at most ~10 s of reports between calls.
    void take_telemetry(TelemetryBatch& out);
    unsigned directions() const;
    /// The configuration; its `link` is the parameters in force (as link(), with the seeds
    /// in use). Read it on the thread that applies changes (it is not locked).
    const DataplaneConfig& config() const;
    /// Seed in use per direction (drawn at construction when the parameters say 0). Each
    /// worker draws its own random streams from it.
    std::uint64_t seed(unsigned direction) const;
    /// Starts a capture (docs/capture.md): each lane of the directions captured records into
    /// a ring of its own (kCaptureRingBytes, capture_ring_bytes()), a writer thread on the
    /// calling thread's CPUs writes the file. Throws ParamError(field, message) for bad
    /// settings (capture::validate; "direction" not a direction of this link; "class" not a
    /// class of the link nor `default`; "file" not creatable: the path and the reason) and
    /// capture::Busy while one runs; then nothing changes. Returns once the running lanes
    /// record (every packet received from then on has its records), with the status.
    capture::Status start_capture(const capture::Settings& s);
    /// Stops the running capture (its records written, the statistics blocks, the file
    /// closed). None running: the last capture's status, unchanged.
    capture::Status stop_capture(capture::StopReason reason = capture::StopReason::stopped);
    capture::Status capture_status() const;
    /// The capture events since the last call. Ends a capture that ended on its own
    /// (duration, packets, a write error): the control thread calls this regularly.
    std::vector<capture::Event> take_capture_events();
    /// The bytes of each lane's capture ring (kCaptureRingBytes, less with more than
    /// kCaptureMemory / kCaptureRingBytes lanes, at least 1 MiB).
    std::size_t capture_ring_bytes() const;

    /// Mbufs per pool (one pool per receive queue).
    std::uint32_t mbufs_per_pool() const;
    /// The names of the mbuf pools (DPDK mempools), in creation order: for checks that walk
    /// them after stop() (tests/support/pool_check.hpp).
    std::vector<std::string> mempool_names() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace linkem::dp
