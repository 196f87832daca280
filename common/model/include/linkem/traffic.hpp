// Traffic: arrival times of packets of one frame size, for the simulator's run loop and
// linkemd's built-in traffic generator, and the settings that describe it (the same names
// in linkem-sim's and linkemd's flags, and in the protocol's set_traffic, whose JSON is
// linkem/traffic_json.hpp).
//
// Every source is a plain class with next() -> arrival time in integer nanoseconds from 0
// (non-decreasing); a run loop can be a template over the source type, so the per-packet
// call is inlined and CBR arrivals are computed (k * interval), never queued.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>

#include "linkem/rng.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// Nearest integer nanosecond of a non-negative time (inline; std::llround is a libm call
/// and cost 7 % of the CBR run loop).
inline TimeNs round_ns(double t) {
    return static_cast<TimeNs>(t + 0.5);
}

enum class TrafficPattern : std::uint8_t { cbr, poisson, sine };
std::string_view to_string(TrafficPattern p);

struct TrafficSpec {
    TrafficPattern pattern = TrafficPattern::cbr;
    /// cbr, poisson: the (mean) rate; sine: the peak rate. Bits per second, counting the
    /// frame's bytes (frame_bytes * 8 per packet, no preamble or inter-frame gap).
    double rate_bps = 10e9;
    std::uint32_t frame_bytes = 1518;
    DurationNs period = 30 * kNsPerSec;  // sine only

    double bits_per_packet() const { return 8.0 * frame_bytes; }
    double interval_ns() const { return bits_per_packet() * 1e9 / rate_bps; }
    bool operator==(const TrafficSpec&) const = default;
};

/// The built-in generator's settings: a spec, and whether it sends.
struct TrafficConfig {
    bool running = false;
    TrafficSpec spec;
    bool operator==(const TrafficConfig&) const = default;
};

/// Limits of linkemd's generator (the simulator has its own, wider ones).
struct TrafficLimits {
    static constexpr double kMinRate = 1e3, kMaxRate = 1e11;          // bit/s
    static constexpr std::uint32_t kMinFrame = 64, kMaxFrame = 1518;  // bytes, with FCS
    static constexpr DurationNs kMinPeriod = kNsPerMs, kMaxPeriod = 3600 * kNsPerSec;
};

/// Constant bit rate: packet k arrives at round(k * interval).
class CbrSource {
  public:
    explicit CbrSource(const TrafficSpec& s) : interval_(s.interval_ns()) {}
    TimeNs next() { return round_ns(static_cast<double>(k_++) * interval_); }

  private:
    double interval_;
    std::uint64_t k_ = 0;
};

/// Poisson process: exponential gaps of mean `interval`, first packet at 0. Its own RNG
/// (seeded from the run seed), so the emulator's random stream is the same as with CBR.
class PoissonSource {
  public:
    PoissonSource(const TrafficSpec& s, std::uint64_t seed)
        : interval_(s.interval_ns()), rng_(seed ^ 0x5bd1e9955bd1e995ULL) {}
    TimeNs next() {
        const TimeNs t = round_ns(t_);
        t_ -= interval_ * std::log(rng_.uniform_pos());
        return t;
    }

  private:
    double interval_;
    double t_ = 0;
    Rng rng_;
};

/// Sinusoidal rate like the paper's VI-D: rate(t) = peak * (1 + sin(2 pi t / period)) / 2,
/// i.e. from 0 to `peak` and back once per period, starting at peak/2 and rising; the mean
/// rate is peak/2. Packet k arrives when the expected count F(t) = integral of rate / bits
/// reaches k, found by safeguarded Newton iteration (F is monotone; its slope vanishes for
/// an instant at each trough, where bisection takes over).
class SineSource {
  public:
    explicit SineSource(const TrafficSpec& s)
        : peak_pps_(s.rate_bps / s.bits_per_packet() * 1e-9),  // packets per ns
          omega_(2 * std::numbers::pi / static_cast<double>(s.period)),
          period_(static_cast<double>(s.period)) {}

    TimeNs next() {
        const double target = static_cast<double>(k_++);
        if (target > 0) t_ = solve(target);
        return round_ns(t_);
    }

  private:
    double count(double t) const {
        return 0.5 * peak_pps_ * (t + (1 - std::cos(omega_ * t)) / omega_);
    }
    double rate(double t) const { return 0.5 * peak_pps_ * (1 + std::sin(omega_ * t)); }

    double solve(double target) const {
        // One period always adds peak * period / 2 >= 1 packets (checked by validation), so
        // the root lies in [t_, t_ + period].
        double lo = t_, hi = t_ + period_;
        double x = t_ + (rate(t_) > 0 ? 1.0 / rate(t_) : 0.5 * period_);
        for (int i = 0; i < 100; ++i) {
            if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
            const double f = count(x) - target;
            if (f > 0)
                hi = x;
            else
                lo = x;
            if (hi - lo < 1e-3) break;
            const double r = rate(x);
            const double step = r > 0 ? f / r : 0;
            if (std::fabs(step) < 1e-3) return x - step;
            x -= step;
        }
        return 0.5 * (lo + hi);
    }

    double peak_pps_, omega_, period_;
    double t_ = 0;
    std::uint64_t k_ = 0;
};

}  // namespace linkem
