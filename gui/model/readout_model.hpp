// The figures of the Readouts panel and of the stage strip beside each setting, per
// direction, in two scopes: over the charts' time window (from the ChartStore), and since
// the last parameter change (the generation linkemd tags each `delay` interval with), so
// that a change never mixes the link before it into the delays shown.
#pragma once

#include <cstdint>
#include <optional>

#include "chart_store.hpp"
#include "linkem/messages.hpp"
#include "linkem/stats.hpp"

namespace linkem::gui {

/// The delays of one scope, each as docs/glossary.md names it (ns; each RunningStats' count
/// is its sample count).
struct ScopeDelays {
    RunningStats emulated;  // delay_ns over every packet queued (the intervals' `delay`)
    RunningStats lateness;  // over every packet that left (the intervals' `lateness`)
    RunningStats actual;    // actual_ns of the sampled packets
    RunningStats wait;      // scheduled_ns - delay_ns of the sampled packets
    RunningStats measured;  // the built-in traffic's one-way delay
    std::int64_t from_ns = 0, to_ns = 0;  // the data-plane time the scope covers
};

/// Everything the readouts show of one direction.
struct DirectionReadout {
    bool have_link = false;
    LinkParams link;  // in force
    ScopeDelays window, since_change;
    std::uint64_t generation = 0;  // of since_change
    // From the newest `stats` message (not windowed).
    bool have_stats = false;
    double alpha = 0, rate_pps = 0;
    std::uint64_t in_flight = 0;
    std::uint64_t drops_total = 0, drops_since_change = 0;
    bool have_traffic = false;
    std::uint64_t out_of_order = 0, lost = 0;  // since the traffic's run began
    std::uint64_t out_of_order_since_change = 0, lost_since_change = 0;
    std::uint64_t sent_since_change = 0;
    /// Packets into the emulator since the change, and the share the loss model dropped.
    std::uint64_t in_since_change = 0;
    double loss_since_change = 0;
    std::optional<RatePoint> rate;  // the newest rates (two stats messages apart)
    /// Stall time since the previous stats message over its interval (0..1).
    double stalled_fraction = 0;
};

class ReadoutModel {
  public:
    explicit ReadoutModel(const ChartStore& store) : store_(store) {}
    const ChartStore& store() const { return store_; }

    void setWindow(double seconds) { window_ns_ = static_cast<std::int64_t>(seconds * 1e9); }
    void setLink(const LinkConfig& link, unsigned directions, std::uint64_t generation);
    /// A scenario's step at t_ns (linkemd's clock) changed the link without a new generation:
    /// "since change" starts again after the interval that holds the step.
    void stepAt(std::int64_t t_ns);
    /// After the store took them.
    void addDelay(const proto::DelayMessage& msg);
    void addStats(const LinkStats& stats);
    void clear();

    DirectionReadout get(int direction) const;
    /// The newest generation seen in telemetry (stats or delay), 0 before any.
    std::uint64_t telemetryGeneration() const { return telemetry_generation_; }

  private:
    struct Since {
        std::uint64_t generation = 0;
        bool started = false;       // an interval of `generation` ended: what follows is all of it
        std::int64_t after_ns = 0;  // a scenario step: the interval ending at or after it
        std::int64_t from_ns = 0;
        ScopeDelays got;
        // counters when the generation was first seen in stats
        bool have_base = false;
        std::uint64_t base_drops = 0, base_ooo = 0, base_lost = 0, base_sent = 0;
        std::uint64_t base_in = 0, base_loss = 0;
        std::uint64_t base_run = 0;
    };
    void restart(int d, std::uint64_t generation);

    const ChartStore& store_;
    std::int64_t window_ns_ = 30'000'000'000;
    bool have_link_ = false;
    LinkConfig link_;
    unsigned directions_ = 2;
    std::uint64_t telemetry_generation_ = 0;
    std::uint64_t link_generation_ = 0;
    Since since_[2];
    std::optional<LinkStats> last_, prev_;
};

}  // namespace linkem::gui
