#include "chart_store.hpp"

#include <algorithm>
#include <cmath>

namespace linkem::gui {

// ---- distributions ----

double distributionDensity(const std::string& distribution, double mean, double jitter, double x) {
    if (!(jitter > 0) || distribution == "constant") return 0;
    constexpr double kSqrt2Pi = 2.5066282746310002;
    if (distribution == "uniform") {
        const double half = std::sqrt(3.0) * jitter;
        return x >= mean - half && x <= mean + half ? 1.0 / (2 * half) : 0.0;
    }
    if (distribution == "gamma") {
        if (!(mean > 0) || !(x > 0)) return 0;
        const double cv = jitter / mean;
        const double k = 1.0 / (cv * cv), theta = jitter * cv;
        return std::exp((k - 1) * std::log(x) - x / theta - std::lgamma(k) - k * std::log(theta));
    }
    if (distribution == "lognormal") {
        if (!(mean > 0) || !(x > 0)) return 0;
        const double cv = jitter / mean;
        const double s = std::sqrt(std::log1p(cv * cv));
        const double mu = std::log(mean) - 0.5 * s * s;
        const double z = (std::log(x) - mu) / s;
        return std::exp(-0.5 * z * z) / (x * s * kSqrt2Pi);
    }
    // normal (and anything unknown: the protocol's default)
    const double z = (x - mean) / jitter;
    return std::exp(-0.5 * z * z) / (jitter * kSqrt2Pi);
}

// ---- ChartData ----

void ChartStore::touch(std::int64_t t_ns) {
    if (!have_data_ || t_ns > latest_ns_) latest_ns_ = t_ns;
    have_data_ = true;
}

void ChartStore::addDelay(const proto::DelayMessage& msg, std::int64_t t_ns) {
    if (t_ns > 0) touch(t_ns);
    for (unsigned d = 0; d < msg.directions && d < 2; ++d) {
        const DirectionDelay& j = msg.dir[d];
        Direction& D = dirs_[d];
        const bool have_interval = j.end_ns > 0 || j.delay.count > 0;
        if (have_interval) touch(j.end_ns);
        std::vector<Direction>& classes = class_dirs_[d];
        for (const DelaySample& s : j.samples) {
            touch(s.arrival_ns);
            const DelayPoint p{s.arrival_ns, s.delay_ns, s.scheduled_ns, s.actual_ns};
            D.samples.add(p);
            const bool recent =
                column_ns_ > 0 && s.arrival_ns >= latest_ns_ - keep_ns_ - column_ns_;
            if (recent) {
                D.actual_cols.add(s.arrival_ns, static_cast<float>(p.actual_us()));
                changed(s.arrival_ns);
            }
            if (s.class_id < classes.size()) {
                Direction& C = classes[s.class_id];
                C.samples.add(p);
                if (recent) C.actual_cols.add(s.arrival_ns, static_cast<float>(p.actual_us()));
            }
        }
        // The built-in traffic's measured samples (send time, one-way delay).
        for (const MeasuredDelay& m : j.measured) {
            D.measured.add(DelayPoint{m.send_ns, m.delay_ns, m.delay_ns, m.delay_ns});
            if (column_ns_ > 0 &&
                m.send_ns >= latest_ns_ - keep_ns_ - column_ns_ * kMeasuredColumnSpan) {
                D.measured_cols.add(m.send_ns, static_cast<float>(m.delay_ns * 1e-3));
                changed(m.send_ns);
            }
        }
        if (have_interval) {
            Interval iv;
            iv.start_ns = j.start_ns;
            iv.end_ns = j.end_ns;
            iv.delay = j.delay;
            iv.lateness = j.lateness;
            iv.measured = j.measured_delay;
            iv.queue = j.queue;
            iv.generation = j.params_generation;
            D.intervals.push_back(iv);
            changed(j.start_ns);
        }
    }
    trim();
}

void ChartStore::addStats(const LinkStats& st) {
    touch(st.t_ns);
    const std::int64_t t = st.t_ns;
    for (unsigned d = 0; d < st.directions && d < 2; ++d) {
        addCounters(dirs_[d], st.dir[d].counters, t);
        // stats' classes: `default` first, then the classes in list order, as the ids
        for (std::size_t i = 0; i < st.classes.size() && i < class_dirs_[d].size(); ++i)
            addCounters(class_dirs_[d][i], st.classes[i].dir[d], t);
    }
    trim();
}

void ChartStore::addCounters(Direction& D, const CounterSnapshot& k, std::int64_t t) {
    {
        double c[kCounterColumns] = {
            static_cast<double>(k.packets_in), static_cast<double>(k.bytes_in),
            static_cast<double>(k.packets_out), static_cast<double>(k.bytes_out)};
        for (std::size_t i = 0; i < kDropCauseCount; ++i)
            c[4 + i] = static_cast<double>(k.drops[kDropCauses[i].cause]);
        c[4 + kDropCauseCount] = static_cast<double>(k.ecn_marked);
        if (D.have_prev && t == D.prev_t_ns) return;  // the same message again
        bool monotonic = D.have_prev && t > D.prev_t_ns;
        for (std::size_t i = 0; i < kCounterColumns && monotonic; ++i)
            monotonic = c[i] >= D.prev[i];
        if (monotonic) {
            const double dt = static_cast<double>(t - D.prev_t_ns) / 1e9;
            RatePoint r;
            r.t_ns = t;
            r.in_pps = (c[0] - D.prev[0]) / dt;
            r.in_bps = (c[1] - D.prev[1]) * 8 / dt;
            r.out_pps = (c[2] - D.prev[2]) / dt;
            r.out_bps = (c[3] - D.prev[3]) * 8 / dt;
            for (std::size_t i = 0; i < kDropCauseCount; ++i)
                r.drops_per_s[i] = (c[4 + i] - D.prev[4 + i]) / dt;
            r.ecn_marked_per_s = (c[4 + kDropCauseCount] - D.prev[4 + kDropCauseCount]) / dt;
            D.rates.push_back(r);
            changed(t);
        }
        // Otherwise (first message, counters went back: linkemd restarted) start again.
        D.have_prev = true;
        D.prev_t_ns = t;
        std::copy(c, c + kCounterColumns, D.prev);
    }
}

void ChartStore::setLink(const LinkConfig& link, unsigned directions) {
    setLinkAt(link, directions, have_data_ ? latest_ns_ : std::numeric_limits<std::int64_t>::min());
}

void ChartStore::setLinkAt(const LinkConfig& link, unsigned directions, std::int64_t since_ns) {
    std::vector<std::string> names;
    for (const TrafficClass& c : link.classes)
        names.push_back(c.name);
    if (names != class_names_) {
        // Another list numbers the classes afresh: their own data starts over (the class
        // shown stays, by its name, while the list has it).
        const std::string shown =
            shown_class_ >= 0 ? className(static_cast<std::size_t>(shown_class_)) : "";
        class_names_ = names;
        setClassCount(0);
        setClassCount(names.size());
        if (shown == kDefaultClassName && !names.empty()) shown_class_ = 0;
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == shown) shown_class_ = static_cast<int>(i) + 1;
    }
    for (unsigned d = 0; d < directions && d < 2; ++d) {
        addTarget(dirs_[d], link.direction(d), since_ns);
        std::vector<Direction>& classes = class_dirs_[d];
        if (classes.empty()) continue;
        addTarget(classes[0], link.direction(d), since_ns);
        for (std::size_t i = 0; i < link.classes.size(); ++i) {
            const TrafficClass& c = link.classes[i];
            // a pass class's packets see no delay: its target is 0
            addTarget(classes[i + 1],
                      c.action == ClassAction::pass ? LinkParams{} : c.link.direction(d), since_ns);
        }
    }
}

void ChartStore::setClassCount(std::size_t n) {
    const std::size_t ids = n == 0 ? 0 : n + 1;
    if (ids == class_dirs_[0].size()) return;
    for (std::vector<Direction>& v : class_dirs_) {
        v.clear();
        v.resize(ids);
        for (Direction& D : v) {
            D.actual_cols.reset(column_ns_);
            D.measured_cols.reset(column_ns_ * kMeasuredColumnSpan);
        }
    }
    if (shown_class_ >= static_cast<int>(ids)) shown_class_ = -1;
}

void ChartStore::setShownClass(int id) {
    if (id >= static_cast<int>(classCount()) + 1) id = -1;
    if (id == shown_class_) return;
    shown_class_ = id;
}

void ChartStore::addTarget(Direction& D, const LinkParams& p, std::int64_t since_ns) {
    {
        Target t;
        t.since_ns = since_ns;
        t.mean_us = static_cast<double>(p.mean_delay) / 1e3;
        t.jitter_us = static_cast<double>(p.jitter) / 1e3;
        t.distribution = std::string(to_string(p.distribution));
        t.strategy = std::string(to_string(p.strategy));
        // a target at or after since_ns was in force only until this one
        while (D.targets.size() > 1 && D.targets.back().since_ns >= t.since_ns)
            D.targets.pop_back();
        if (!D.targets.empty()) {
            const Target& b = D.targets.back();
            if (b.mean_us == t.mean_us && b.jitter_us == t.jitter_us &&
                b.distribution == t.distribution && b.strategy == t.strategy)
                return;
            if (b.since_ns >= t.since_ns) D.targets.pop_back();
        }
        D.targets.push_back(t);
        if (since_ns != std::numeric_limits<std::int64_t>::min()) changed(since_ns);
    }
}

void ChartStore::setColumns(std::int64_t column_ns, std::int64_t keep_ns) {
    if (column_ns == column_ns_ && keep_ns == keep_ns_) return;
    column_ns_ = column_ns;
    keep_ns_ = keep_ns;
    for (Direction& D : dirs_)
        rebuildColumns(D);
    for (std::vector<Direction>& v : class_dirs_)
        for (Direction& D : v)
            rebuildColumns(D);
}

void ChartStore::rebuildColumns(Direction& D) {
    const std::int64_t column_ns = column_ns_, keep_ns = keep_ns_;
    {
        D.actual_cols.reset(column_ns);
        D.measured_cols.reset(column_ns * kMeasuredColumnSpan);
        if (column_ns <= 0 || !have_data_) return;
        const std::int64_t lo = latest_ns_ - keep_ns - column_ns;
        D.samples.forEach(lo, latest_ns_, [&](const DelayPoint& p) {
            D.actual_cols.add(p.t_ns, static_cast<float>(p.actual_us()));
        });
        D.measured.forEach(lo - column_ns * (kMeasuredColumnSpan - 1), latest_ns_,
                           [&](const DelayPoint& p) {
                               D.measured_cols.add(p.t_ns, static_cast<float>(p.actual_us()));
                           });
    }
}

void ChartStore::trim() {
    const std::int64_t cutoff = latest_ns_ - kRetentionNs;
    std::vector<Direction*> all{&dirs_[0], &dirs_[1]};
    for (std::vector<Direction>& v : class_dirs_)
        for (Direction& D : v)
            all.push_back(&D);
    for (Direction* P : all) {
        Direction& D = *P;
        D.samples.trimBefore(cutoff);
        D.measured.trimBefore(cutoff);
        while (!D.intervals.empty() && D.intervals.front().end_ns < cutoff)
            D.intervals.pop_front();
        while (!D.rates.empty() && D.rates.front().t_ns < cutoff)
            D.rates.pop_front();
        while (D.targets.size() >= 2 && D.targets[1].since_ns <= cutoff)
            D.targets.pop_front();
        if (column_ns_ > 0) {
            D.actual_cols.trimBefore(latest_ns_ - keep_ns_ - column_ns_);
            D.measured_cols.trimBefore(latest_ns_ - keep_ns_ - column_ns_ * kMeasuredColumnSpan);
        }
    }
}

void ChartStore::clear() {
    for (Direction& D : dirs_) {
        D = Direction{};
        D.actual_cols.reset(column_ns_);
        D.measured_cols.reset(column_ns_);
    }
    for (std::vector<Direction>& v : class_dirs_)
        for (Direction& D : v) {
            D = Direction{};
            D.actual_cols.reset(column_ns_);
            D.measured_cols.reset(column_ns_);
        }
    latest_ns_ = 0;
    have_data_ = false;
}

Histogram ChartStore::histogram(int d, std::int64_t lo, std::int64_t hi,
                                std::size_t max_used) const {
    Histogram h;
    const SampleRing& ring = shown(d).samples;
    const RunningStats all = ring.actual(lo, hi);
    if (all.count == 0) return h;
    // in microseconds, as the charts draw them
    const double jitter = all.jitter() * 1e-3, mean = all.mean() * 1e-3;
    const double mn = all.min * 1e-3, mx = all.max * 1e-3;
    double a = std::max(mn, mean - 6 * jitter), b = std::min(mx, mean + 6 * jitter);
    if (!(b - a > 1e-3)) {
        a = mean - 0.5;
        b = mean + 0.5;
    }
    const std::size_t bins = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(all.count)))), 10, 100);
    h.lo_us = a;
    h.bin_us = (b - a) / static_cast<double>(bins);
    h.samples = all.count;
    std::vector<std::uint64_t> counts(bins, 0);
    const std::uint64_t stride =
        max_used > 0 && all.count > max_used ? (all.count + max_used - 1) / max_used : 1;
    // runs of 64 consecutive samples (512 bytes) spread evenly over the window: a fraction
    // of the cache misses of every stride-th sample alone, for as many samples
    ring.forEachStrided(
        lo, hi, stride,
        [&](const DelayPoint& p) {
            ++h.used;
            const double x = p.actual_us();
            if (x < a || x > b) return;
            std::size_t i = static_cast<std::size_t>((x - a) / h.bin_us);
            if (i >= bins) i = bins - 1;
            ++counts[i];
        },
        64);
    h.density.resize(bins);
    for (std::size_t i = 0; i < bins; ++i)
        h.density[i] =
            h.used ? static_cast<double>(counts[i]) / (static_cast<double>(h.used) * h.bin_us)
                   : 0.0;
    return h;
}

std::size_t ChartStore::storedBytes() const {
    std::size_t b = 0;
    for (const Direction& D : dirs_)
        b += D.samples.bytes() + D.measured.bytes();
    for (const std::vector<Direction>& v : class_dirs_)
        for (const Direction& D : v)
            b += D.samples.bytes() + D.measured.bytes();
    return b;
}

}  // namespace linkem::gui
