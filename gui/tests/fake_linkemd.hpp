// A stand-in for linkemd in the GUI's tests: the real control::Server (real ZeroMQ sockets,
// the real protocol) with a fake Backend that holds a LinkConfig, records every request
// and publishes stats, delay and event telemetry from its own thread. No DPDK. Its capture
// (capture_start, capture_stop, capture_status) writes a few bytes to the file and counts
// 100 records a stats message; it stops by itself after its duration.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/capture.hpp"
#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "server.hpp"

namespace linkem::gui::test {

struct RecordedRequest {
    std::string method;
    nlohmann::json params;
    std::int64_t t_ms;  // steady clock, when the request arrived
};

class FakeLinkemd : public control::Backend {
  public:
    FakeLinkemd(std::string control, std::string telemetry, unsigned directions = 2);
    ~FakeLinkemd() override;

    /// CURVE: the server's key pair file and the allowed client keys' directory (before start).
    void set_curve(std::string secret_file, std::string allow_dir) {
        curve_secret_ = std::move(secret_file);
        curve_allow_ = std::move(allow_dir);
    }
    /// Binds and serves (a new instance id each time; the link as given).
    void start(const LinkConfig& link = {});
    void stop();
    /// stop() + start() with a new instance id, parameters `link`, generation 0.
    void restart(const LinkConfig& link);

    std::string instance_id() const;
    LinkConfig link() const;
    std::uint64_t generation() const;
    std::vector<RecordedRequest> requests(const std::string& method = {}) const;
    void clear_requests();
    /// How often a delay message is published (default 50 ms; 1 ms floods a slow reader).
    void set_delay_period(std::chrono::milliseconds p) {
        delay_period_ms_ = static_cast<int>(p.count());
    }
    /// Publishes an event (from the serving thread, at its next turn).
    void queue_event(const proto::Event& e);
    /// The capture's status now.
    capture::Status capture_status() const;

    nlohmann::json handle(const proto::Request& request, const std::string& source) override;

  private:
    void run();
    proto::StatsMessage stats_message() const;
    /// Ends the running capture (the mutex held) and queues its `stopped` event.
    void stop_capture(capture::StopReason reason);
    void capture_event(capture::Event::Kind kind, std::string message);
    proto::DelayMessage delay_message(std::int64_t start_ns, std::int64_t end_ns);

    std::string control_, telemetry_, curve_secret_, curve_allow_;
    unsigned directions_;
    mutable std::mutex mutex_;
    LinkConfig link_;
    std::uint64_t generation_ = 0;
    std::string instance_;
    std::vector<RecordedRequest> requests_;
    std::vector<proto::Event> events_;
    TrafficConfig traffic_{true, TrafficSpec{TrafficPattern::cbr, 1.2144e8, 1518, 30 * kNsPerSec}};
    std::uint64_t packets_ = 0;
    capture::Status capture_;
    std::int64_t capture_start_ns_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> delay_period_ms_{50};
    std::unique_ptr<control::Server> server_;
    std::thread thread_;
};

}  // namespace linkem::gui::test
