#include "telemetry_model.hpp"

#include <stdexcept>

namespace linkem::gui {

TelemetryModel::Took TelemetryModel::add(std::string_view topic, const nlohmann::json& body,
                                         std::int64_t wall_ms) {
    try {
        const proto::Header h = proto::header_from_json(body);
        if (topic == proto::kTopicStats) {
            LinkStats s = link_stats_from_json(body);
            store_.addStats(s);
            readouts_.addStats(s);
            last_stats_ = std::move(s);
            last_t_ns_ = h.t_ns;
            return Took::stats;
        }
        if (topic == proto::kTopicDelay) {
            const proto::DelayMessage m = proto::delay_message_from_json(body);
            store_.addDelay(m, h.t_ns);
            readouts_.addDelay(m);
            last_t_ns_ = h.t_ns;
            return Took::delay;
        }
        if (topic == proto::kTopicEvent) {
            events_.add(proto::event_from_json(body), wall_ms);
            return Took::event;
        }
        return Took::ignored;  // a topic of a later protocol
    } catch (const std::exception& e) {
        ++refused_;
        last_refusal_ = std::string(topic) + ": " + e.what();
        return Took::refused;
    }
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
