#include "linkem/traffic_flags.hpp"

#include <cstdint>

#include "linkem/traffic.hpp"
#include "linkem/units.hpp"

namespace linkem {

using nlohmann::json;

const std::vector<TrafficFlag>& traffic_flags() {
    static const std::vector<TrafficFlag> kFlags = {
        {"pattern", "--traffic-pattern", "NAME", "sine", "traffic pattern: cbr, poisson or sine"},
        {"rate_bps", "--traffic-rate", "RATE", "100Mbit",
         "rate of the traffic (sine: its peak), e.g. 100Mbit"},
        {"frame_size_bytes", "--frame-size", "BYTES", "1518", "frame size in bytes, with FCS"},
        {"period_us", "--period", "DURATION", "30s", "period of the sine traffic"},
    };
    return kFlags;
}

namespace {

json value_from_text(const TrafficFlag& f, const std::string& t) {
    auto not_a = [&](std::string_view form) {
        return FlagError(f.flag, f.key,
                         "'" + t + "' is not " + std::string(form) + ", e.g. " + f.example);
    };
    if (f.key == "pattern") {
        std::string names;
        for (TrafficPattern p :
             {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine}) {
            if (t == to_string(p)) return t;
            names += (names.empty() ? "" : ", ") + std::string(to_string(p));
        }
        throw FlagError(f.flag, f.key, "'" + t + "' is not allowed; allowed: " + names);
    }
    if (f.key == "rate_bps") {
        const auto r = parse_rate(t);
        if (!r) throw not_a(kRateForm);
        return *r;
    }
    if (f.key == "frame_size_bytes") {
        const auto b = parse_bytes(t);
        if (!b) throw not_a(kBytesForm);
        return *b;
    }
    const auto d = parse_duration(t);
    if (!d) throw not_a(kDurationForm);
    return static_cast<double>(*d) / kNsPerUs;
}

}  // namespace

json traffic_update_from_flags(const TrafficFlagText& text) {
    const std::vector<TrafficFlag>& flags = traffic_flags();
    json update = json::object();
    for (std::size_t i = 0; i < flags.size() && i < text.size(); ++i) {
        if (text[i].empty()) continue;
        update[flags[i].key] = value_from_text(flags[i], text[i]);
        if (flags[i].key == "pattern") update["running"] = true;
    }
    return update;
}

}  // namespace linkem
