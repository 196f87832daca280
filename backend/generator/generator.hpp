// linkemd's built-in traffic: a source that sends numbered, timestamped frames into the
// emulator's ports and a sink that receives them where they come out and measures their
// one-way delay, loss and order (traffic_meter.hpp). It runs on virtual ports
// (dp::VirtualPort: the source fills the port's receive ring as a NIC would, the sink takes
// what the data plane transmitted), on a thread of its own that sleeps between frames, so
// it needs no CPU of its own at demo rates; it hands its reports to the control thread
// through SPSC rings, like the data plane.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "linkem/spsc_ring.hpp"
#include "linkem/traffic.hpp"
#include "traffic_meter.hpp"

namespace linkem::dp {
class VirtualPort;
}

namespace linkem::gen {

/// How often the generator reports (as the data plane).
inline constexpr DurationNs kReportPeriod = 50 * kNsPerMs;
/// The longest the thread sleeps while nothing is due: the sink's polling period, which
/// its receive times can be late by.
inline constexpr DurationNs kPollPeriod = 20 * kNsPerUs;

class Generator {
  public:
    /// a: the port of direction a_to_b's source (and b_to_a's sink); b: the other one
    /// (nullptr: single-port mode, a_to_b only, back out of a). samples_per_s: measured
    /// delay samples per second and direction (0: none).
    Generator(dp::VirtualPort* a, dp::VirtualPort* b, unsigned samples_per_s,
              const TrafficConfig& initial);
    ~Generator();
    Generator(const Generator&) = delete;
    Generator& operator=(const Generator&) = delete;

    void start();
    void stop();

    /// New settings (checked by traffic_from_json). A change of the pattern, rate, frame
    /// size or period starts a new run: sequence numbers and counts begin again. Returns
    /// the run number in force.
    std::uint32_t apply(const TrafficConfig& c);
    TrafficConfig config() const;
    /// The run number in force (frames and reports of other runs are not counted).
    std::uint32_t run_number() const;
    unsigned directions() const { return b_ ? 2 : 1; }

    /// Control thread: the reports and measured samples since the last call.
    void take(std::vector<TrafficReport>& reports, std::vector<MeasuredSample> samples[2]);

  private:
    struct Loop;  // the thread's state and its steps (generator.cpp)
    void run();

    dp::VirtualPort* a_;
    dp::VirtualPort* b_;
    DurationNs sample_period_;
    mutable std::mutex mu_;  // pending_ and run_
    TrafficConfig pending_;
    std::uint32_t run_ = 1;
    std::atomic<std::uint64_t> changes_{0};
    std::atomic<bool> go_{false};
    std::thread thread_;
    SpscRing<TrafficReport> reports_{256};
    std::unique_ptr<SpscRing<MeasuredSample>> samples_[2];
};

}  // namespace linkem::gen
