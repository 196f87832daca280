#include "simulator.hpp"

#include "run_loop.hpp"

namespace linkem::sim {

void validate_config(const SimConfig& cfg) {
    validate(cfg.link);
    const TrafficSpec& t = cfg.traffic;
    if (!(t.rate_bps >= ParamLimits::kMinRate && t.rate_bps <= ParamLimits::kMaxRate))
        throw ParamError("traffic.rate_bps", "must be between 1 kbit/s and 1.6 Tbit/s");
    if (t.frame_bytes < 64 || t.frame_bytes > 65535)
        throw ParamError("traffic.frame_size_bytes", "must be between 64 and 65535 bytes");
    if (t.pattern == TrafficPattern::sine) {
        if (t.period < kNsPerMs || t.period > 3600 * kNsPerSec)
            throw ParamError("traffic.period_us", "must be between 1 ms and 1 h");
        if (t.rate_bps * static_cast<double>(t.period) * 1e-9 / 2 < 2 * t.bits_per_packet())
            throw ParamError("traffic.period_us",
                             "too short for the rate: one period must carry at least 2 packets");
    }
    if (cfg.duration <= 0 || cfg.duration > 30 * 86400 * kNsPerSec)
        throw ParamError("duration_us", "must be greater than 0 and at most 30 days");
    const double packets =
        static_cast<double>(cfg.duration) * 1e-9 * t.rate_bps / t.bits_per_packet();
    if (packets >= static_cast<double>(kMaxPackets))
        throw ParamError("duration_us",
                         "rate * duration exceeds 2^40 packets, the simulator's limit");
    if (!(cfg.utilization >= 0 && cfg.utilization <= 1))
        throw ParamError("utilization", "must be between 0 (no queue) and 1");
    if (cfg.flows < 1 || cfg.flows > kMaxSimFlows)
        throw ParamError("traffic.flows", "must be between 1 and " + std::to_string(kMaxSimFlows));
    if (cfg.queue_series && cfg.queue_series_interval <= 0)
        throw ParamError("queue_series_interval_us", "must be greater than 0");
    if (cfg.series && cfg.series_interval < 0)
        throw ParamError("series_interval_us", "must be 0 (every packet) or greater");
}

RunResult run_once(const SimConfig& cfg) {
    if (cfg.capture) return run_once_captured(cfg);
    return run_emulator<false>(cfg);
}

}  // namespace linkem::sim
