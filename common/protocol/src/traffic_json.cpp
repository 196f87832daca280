#include "linkem/traffic_json.hpp"

#include <cmath>
#include <string>

namespace linkem {

using nlohmann::json;

json to_json(const TrafficConfig& t) {
    return {{"running", t.running},
            {"pattern", std::string(to_string(t.spec.pattern))},
            {"rate_bps", t.spec.rate_bps},
            {"frame_size_bytes", t.spec.frame_bytes},
            {"period_us", static_cast<double>(t.spec.period) / kNsPerUs}};
}

namespace {

std::string num(double v) {
    std::string s = json(v).dump();
    if (s.ends_with(".0")) s.resize(s.size() - 2);
    return s;
}

double number(const json& v, const std::string& key, double lo, double hi,
              const std::string& unit) {
    const std::string range = num(lo) + " .. " + num(hi) + " " + unit;
    if (!v.is_number()) throw ParamError(key, "expected a number (" + unit + "), got " + v.dump());
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
        throw ParamError(key, v.dump() + " is out of range; allowed " + range);
    return x;
}

}  // namespace

TrafficConfig traffic_from_json(const json& j, const TrafficConfig& base) {
    using L = TrafficLimits;
    if (!j.is_object())
        throw ParamError(
            "", "expected an object of traffic settings, got " + std::string(j.type_name()));
    TrafficConfig t = base;
    for (const auto& [key, v] : j.items()) {
        if (key == "running") {
            if (!v.is_boolean()) throw ParamError(key, "expected true or false, got " + v.dump());
            t.running = v.get<bool>();
        } else if (key == "pattern") {
            bool ok = false;
            for (TrafficPattern p :
                 {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine})
                if (v.is_string() && v.get<std::string>() == to_string(p)) {
                    t.spec.pattern = p;
                    ok = true;
                }
            if (!ok)
                throw ParamError(key,
                                 v.dump() + " is not allowed; allowed 'cbr', 'poisson', 'sine'");
        } else if (key == "rate_bps") {
            t.spec.rate_bps = number(v, key, L::kMinRate, L::kMaxRate, "bit/s");
        } else if (key == "frame_size_bytes") {
            const double x = number(v, key, L::kMinFrame, L::kMaxFrame, "bytes");
            if (x != std::floor(x))
                throw ParamError(key, v.dump() + " is not a whole number of bytes");
            t.spec.frame_bytes = static_cast<std::uint32_t>(x);
        } else if (key == "period_us") {
            t.spec.period = static_cast<DurationNs>(
                std::llround(number(v, key, static_cast<double>(L::kMinPeriod) / kNsPerUs,
                                    static_cast<double>(L::kMaxPeriod) / kNsPerUs, "us") *
                             kNsPerUs));
        } else {
            throw ParamError(key,
                             "unknown traffic setting; known: running, pattern, rate_bps, "
                             "frame_size_bytes, period_us");
        }
    }
    if (t.spec.pattern == TrafficPattern::sine && t.spec.rate_bps / t.spec.bits_per_packet() *
                                                          static_cast<double>(t.spec.period) /
                                                          kNsPerSec / 2 <
                                                      1)
        throw ParamError("period_us",
                         "a sine of this peak rate and period sends less than one frame per "
                         "period; raise rate_bps or period_us");
    return t;
}

}  // namespace linkem
