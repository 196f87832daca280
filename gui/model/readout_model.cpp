#include "readout_model.hpp"

#include <algorithm>

namespace linkem::gui {

void ReadoutModel::setLink(const LinkConfig& link, unsigned directions, std::uint64_t generation) {
    have_link_ = true;
    link_ = link;
    directions_ = std::clamp(directions, 1u, 2u);
    link_generation_ = generation;
    for (unsigned d = 0; d < directions_; ++d)
        if (generation > since_[d].generation) restart(static_cast<int>(d), generation);
}

void ReadoutModel::stepAt(std::int64_t t_ns) {
    for (unsigned d = 0; d < 2; ++d) {
        restart(static_cast<int>(d), since_[d].generation);
        since_[d].after_ns = t_ns;
    }
}

void ReadoutModel::restart(int d, std::uint64_t generation) {
    since_[d] = Since{};
    since_[d].generation = generation;
}

void ReadoutModel::addDelay(const proto::DelayMessage& msg) {
    for (unsigned d = 0; d < msg.directions && d < 2; ++d) {
        const DirectionDelay& j = msg.dir[d];
        // A linkemd that does not tag intervals: the generation of the newest stats message.
        std::uint64_t gen = j.params_generation.value_or(last_ ? last_->dir[d].params_generation
                                                               : link_generation_);
        telemetry_generation_ = std::max(telemetry_generation_, gen);
        Since& s = since_[d];
        if (gen < s.generation) continue;  // the link before the change
        if (gen > s.generation) restart(static_cast<int>(d), gen);
        const bool interval = j.end_ns > 0 || j.delay.count > 0;
        if (!s.started) {
            // The first interval of the generation may hold packets of the one before: what
            // follows its end is all of this generation (after a scenario's step: the
            // interval that holds the step, and what follows it).
            if (!interval || j.end_ns < s.after_ns) continue;
            s.started = true;
            s.from_ns = s.got.from_ns = s.got.to_ns = j.end_ns;
            continue;
        }
        if (interval) {
            s.got.emulated.merge(j.delay);
            s.got.lateness.merge(j.lateness);
            s.got.measured.merge(j.measured_delay);
            s.got.to_ns = std::max(s.got.to_ns, j.end_ns);
        }
        for (const DelaySample& p : j.samples) {
            if (p.arrival_ns < s.from_ns) continue;
            addCentred(s.got.actual, static_cast<double>(p.actual_ns));
            addCentred(s.got.wait, static_cast<double>(p.scheduled_ns - p.delay_ns));
        }
    }
}

void ReadoutModel::addStats(const LinkStats& st) {
    prev_ = last_;
    last_ = st;
    for (unsigned d = 0; d < st.directions && d < 2; ++d) {
        const DirectionStats& ds = st.dir[d];
        telemetry_generation_ = std::max(telemetry_generation_, ds.params_generation);
        Since& s = since_[d];
        if (ds.params_generation > s.generation) restart(static_cast<int>(d), ds.params_generation);
        if (ds.params_generation != s.generation) continue;
        const bool new_run = ds.traffic.present && s.have_base && ds.traffic.run != s.base_run;
        if (!s.have_base) {
            s.have_base = true;
            s.base_drops = ds.counters.drops.total();
            s.base_in = ds.counters.packets_in;
            s.base_loss = ds.counters.drops[DropCause::loss];
        }
        if (new_run || s.base_run == 0) {
            // the traffic's counters start again with each run (set_traffic)
            s.base_ooo = ds.traffic.out_of_order;
            s.base_lost = ds.traffic.lost;
            s.base_sent = ds.traffic.sent;
            s.base_run = ds.traffic.present ? ds.traffic.run : 0;
        }
    }
}

void ReadoutModel::clear() {
    for (Since& s : since_)
        s = Since{};
    last_.reset();
    prev_.reset();
    telemetry_generation_ = 0;
    link_generation_ = 0;
    have_link_ = false;
}

DirectionReadout ReadoutModel::get(int d) const {
    DirectionReadout r;
    if (d < 0 || d > 1) return r;
    r.have_link = have_link_;
    r.link = link_.direction(d);
    // The window: the charts' time window up to the newest data.
    const ChartStore::Direction& D = store_.dir(d);
    const std::int64_t hi = store_.latestNs(), lo = hi - window_ns_;
    ScopeDelays& w = r.window;
    w.from_ns = lo;
    w.to_ns = hi;
    for (auto it = D.intervals.rbegin(); it != D.intervals.rend(); ++it) {
        if (it->end_ns < lo) break;
        if (it->start_ns > hi) continue;
        w.emulated.merge(it->delay);
        w.lateness.merge(it->lateness);
        w.measured.merge(it->measured);
    }
    if (w.measured.count == 0) w.measured = D.measured.actual(lo, hi);
    w.actual = D.samples.actual(lo, hi);
    w.wait = D.samples.wait(lo, hi);
    const Since& s = since_[d];
    r.generation = s.generation;
    r.since_change = s.got;
    if (!s.started) r.since_change = ScopeDelays{};
    if (last_ && static_cast<unsigned>(d) < last_->directions) {
        const DirectionStats& ds = last_->dir[d];
        r.have_stats = true;
        r.alpha = ds.counters.alpha;
        r.rate_pps = ds.counters.rate_pps;
        r.in_flight = ds.counters.in_flight;
        r.drops_total = ds.counters.drops.total();
        if (s.have_base && ds.params_generation == s.generation) {
            r.drops_since_change = r.drops_total - std::min(r.drops_total, s.base_drops);
            const CounterSnapshot& c = ds.counters;
            r.in_since_change = c.packets_in - std::min(c.packets_in, s.base_in);
            const std::uint64_t loss = c.drops[DropCause::loss];
            const std::uint64_t lost = loss - std::min(loss, s.base_loss);
            r.loss_since_change = r.in_since_change > 0 ? static_cast<double>(lost) /
                                                              static_cast<double>(r.in_since_change)
                                                        : 0.0;
            if (ds.traffic.present) {
                r.out_of_order_since_change =
                    ds.traffic.out_of_order - std::min(ds.traffic.out_of_order, s.base_ooo);
                r.lost_since_change = ds.traffic.lost - std::min(ds.traffic.lost, s.base_lost);
                r.sent_since_change = ds.traffic.sent - std::min(ds.traffic.sent, s.base_sent);
            }
        }
        r.have_traffic = ds.traffic.present;
        r.out_of_order = ds.traffic.out_of_order;
        r.lost = ds.traffic.lost;
        if (prev_ && static_cast<unsigned>(d) < prev_->directions && last_->t_ns > prev_->t_ns &&
            ds.stall_ns >= prev_->dir[d].stall_ns)
            r.stalled_fraction = static_cast<double>(ds.stall_ns - prev_->dir[d].stall_ns) /
                                 static_cast<double>(last_->t_ns - prev_->t_ns);
    }
    if (!D.rates.empty()) r.rate = D.rates.back();
    return r;
}

}  // namespace linkem::gui
