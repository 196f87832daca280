// linkemd's controller: the one place that changes the running link and reports on it. It
// serves the control protocol's methods (as the Backend of control::Server), the SIGHUP
// reload, and the telemetry pump (stats and delay messages from the data plane's interval
// reports and samples).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "generator.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "options.hpp"
#include "scenario_control.hpp"
#include "server.hpp"

namespace linkem::linkemd {

class Controller : public control::Backend {
  public:
    /// generator: the built-in traffic (virtual ports), or nullptr.
    Controller(const CommandLine& cl, const Options& options, dp::Dataplane& dp,
               std::string instance_id, gen::Generator* generator);

    /// The server to publish on (none: --no-control; events then only go to stderr).
    void attach(control::Server* server);

    nlohmann::json handle(const proto::Request& request, const std::string& source) override;

    /// SIGHUP: re-reads --config and applies it, logging what happened (never throws); a file
    /// it cannot apply changes nothing and is also a request_refused event.
    void reload(const std::string& source);

    /// Periodic work on the main thread: publishes a `delay` message every kReportPeriod and
    /// a `stats` message at --telemetry-hz. Returns when it wants to be called next.
    std::chrono::steady_clock::time_point tick(std::chrono::steady_clock::time_point now);
    /// Publishes an event (and prints its message on stderr).
    void event(const proto::Event& e);
    /// The last `stats` message, sent with final = true at stop.
    void publish_final(const dp::DataplaneStats& s);

    bool shutdown_requested() const { return shutdown_; }
    /// linkemd --capture: starts the capture (throws ParamError, capture::Busy as
    /// Dataplane::start_capture) and publishes its event.
    void start_capture(const capture::Settings& s);
    /// At stop: ends a running capture (StopReason::shutdown) and publishes its events.
    void stop_capture();
    /// The scenario player (linkemd --scenario starts one through it).
    ScenarioControl& scenario() { return scenario_; }

  private:
    nlohmann::json hello() const;
    proto::LinkState link_state(std::uint64_t generation, const LinkConfig& link) const;
    nlohmann::json set_link(const nlohmann::json& params, const std::string& source);
    nlohmann::json load_config(const std::string& source);
    nlohmann::json save_config();
    void applied(std::uint64_t generation, const std::string& source);
    void refused_reload(std::string why, proto::ErrorCode code);
    void publish_stats();
    void publish_delay();
    nlohmann::json traffic_result() const;
    nlohmann::json set_traffic(const nlohmann::json& params, const std::string& source);
    nlohmann::json capture_start(const nlohmann::json& params, const std::string& source);
    /// Publishes the data plane's capture events (and finishes a capture that ended).
    void capture_events();
    // Measured traffic: the generator's reports, accumulated for the stats topic.
    void take_traffic(proto::DelayMessage* m);

    const CommandLine& cl_;
    const Options& options_;
    dp::Dataplane& dp_;
    std::string instance_id_;
    control::Server* server_ = nullptr;
    bool shutdown_ = false;
    proto::StatsMessage last_stats_;  // the newest stats message (get_stats answers it)
    dp::TelemetryBatch batch_;
    gen::Generator* generator_;
    std::vector<TrafficReport> traffic_reports_;
    std::vector<MeasuredSample> traffic_samples_[2];  // taken, not yet counted by a report
    std::vector<MeasuredSample> counted_samples_;
    TimeNs traffic_counted_to_ns_ = 0;  // the end of the newest report of the run taken
    TrafficCounts traffic_counts_[2];
    RunningStats measured_since_[2];     // measured delay since the parameters in force applied
    RunningStats measured_interval_[2];  // measured delay since the last delay message
    std::uint32_t traffic_run_ = 0;
    std::chrono::steady_clock::time_point next_delay_{}, next_stats_{};
    ScenarioControl scenario_;
};

}  // namespace linkem::linkemd
