#include "telemetry_model.hpp"

namespace linkem::gui {

TelemetryModel::Took TelemetryModel::add(const proto::Telemetry& t, std::int64_t wall_ms) {
    if (t.stats) {
        const LinkStats& s = t.stats->stats;
        store_.addStats(s);
        readouts_.addStats(s);
        last_stats_ = s;
        last_t_ns_ = t.header.t_ns;
        return Took::stats;
    }
    if (t.delay) {
        store_.addDelay(*t.delay, t.header.t_ns);
        readouts_.addDelay(*t.delay);
        last_t_ns_ = t.header.t_ns;
        return Took::delay;
    }
    if (t.event) {
        events_.add(*t.event, wall_ms);
        return Took::event;
    }
    return Took::ignored;
}

TelemetryModel::Took TelemetryModel::refuse(const std::string& why) {
    ++refused_;
    last_refusal_ = why;
    return Took::refused;
}

void TelemetryModel::setLink(const LinkConfig& link, unsigned directions,
                             std::uint64_t generation) {
    store_.setLink(link, directions);
    readouts_.setLink(link, directions, generation);
}

void TelemetryModel::clear() {
    store_.clear();
    readouts_.clear();
    last_stats_.reset();
    last_t_ns_ = 0;
}

}  // namespace linkem::gui
