// linkem-gui's model of what linkemd reports, independent of Qt: each telemetry message
// (docs/protocol.md, section 4), decoded once by the protocol's codecs (the client's threads
// do it), is handed to the charts' store, the readouts and the event log. A message the
// decoders refused is dropped whole and counted, never half taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chart_store.hpp"
#include "event_log.hpp"
#include "readout_model.hpp"

namespace linkem::gui {

class TelemetryModel {
  public:
    enum class Took { stats, delay, event, ignored, refused };

    TelemetryModel() : readouts_(store_) {}
    TelemetryModel(const TelemetryModel&) = delete;
    TelemetryModel& operator=(const TelemetryModel&) = delete;

    /// One telemetry message; `wall_ms` (ms since the epoch) stamps events.
    Took add(const proto::Telemetry& message, std::int64_t wall_ms);
    /// A message the decoders refused: `why` names its topic and key.
    Took refuse(const std::string& why);
    /// The link in force (get_link, set_link), its directions and generation.
    void setLink(const LinkConfig& link, unsigned directions, std::uint64_t generation);
    /// The readouts' time window (the charts').
    void setWindow(double seconds) { readouts_.setWindow(seconds); }
    /// A new linkemd instance: forget its data (the event log stays).
    void clear();

    const ChartStore& store() const { return store_; }
    ChartStore& store() { return store_; }
    const ReadoutModel& readouts() const { return readouts_; }
    ReadoutModel& readouts() { return readouts_; }
    EventLog& events() { return events_; }
    const EventLog& events() const { return events_; }
    const std::optional<LinkStats>& lastStats() const { return last_stats_; }
    /// The newest message's t_ns (its header's).
    std::int64_t lastTimeNs() const { return last_t_ns_; }
    std::uint64_t refused() const { return refused_; }
    const std::string& lastRefusal() const { return last_refusal_; }

  private:
    ChartStore store_;
    ReadoutModel readouts_;
    EventLog events_;
    std::optional<LinkStats> last_stats_;
    std::int64_t last_t_ns_ = 0;
    std::uint64_t refused_ = 0;
    std::string last_refusal_;
};

}  // namespace linkem::gui
