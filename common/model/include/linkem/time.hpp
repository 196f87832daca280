// Integer-nanosecond time for the emulation model, and an injectable clock.
//
// The model never reads a clock itself: every entry point takes `now` from its caller. The
// data plane passes TSC-derived nanoseconds, the simulator a virtual time, tests a
// ManualClock. Times are plain signed 64-bit nanoseconds (292 years of range), so they cost
// nothing on the packet path and subtract without surprises.
#pragma once

#include <chrono>
#include <cstdint>

namespace linkem {

/// A point in time, in nanoseconds since the epoch of the clock that produced it.
using TimeNs = std::int64_t;
/// A span of time in nanoseconds.
using DurationNs = std::int64_t;

inline constexpr DurationNs kNsPerUs = 1'000;
inline constexpr DurationNs kNsPerMs = 1'000'000;
inline constexpr DurationNs kNsPerSec = 1'000'000'000;

/// A fractional time t (ns) rounded up to whole nanoseconds, as std::ceil would, but inline:
/// without SSE4.1 (linkem builds for baseline x86-64) std::ceil is a call into libm, which
/// the packet path makes for every packet.
inline constexpr TimeNs ceil_ns(double t) {
    const auto r = static_cast<TimeNs>(t);
    return static_cast<double>(r) < t ? r + 1 : r;
}

/// Source of the current time. Implementations must be monotonic.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual TimeNs now() const = 0;
};

/// std::chrono::steady_clock in nanoseconds.
class SteadyClock final : public Clock {
  public:
    TimeNs now() const override {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
};

/// A clock that only moves when told to: for tests and the simulator.
class ManualClock final : public Clock {
  public:
    explicit ManualClock(TimeNs start = 0) : now_(start) {}
    TimeNs now() const override { return now_; }
    void set(TimeNs t) { now_ = t; }
    void advance(DurationNs d) { now_ += d; }

  private:
    TimeNs now_;
};

}  // namespace linkem
