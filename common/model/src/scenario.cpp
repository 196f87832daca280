#include "linkem/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace linkem {

namespace {

std::string seconds(DurationNs t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g s", static_cast<double>(t) / kNsPerSec);
    return buf;
}

const std::string& key_of(std::size_t i) {
    return link_param_fields()[i].key;
}

// A ramp in progress while the track is compiled.
struct Ramp {
    std::size_t field;
    double from, to;
    DurationNs t0, t1;
    const ScenarioStep* step;
    double value(DurationNs t) const {
        return from + (to - from) * (static_cast<double>(t - t0) / static_cast<double>(t1 - t0));
    }
};

}  // namespace

bool ScenarioChange::operator==(const ScenarioChange& o) const {
    if (fields != o.fields) return false;
    for (std::size_t i = 0; i < link_param_fields().size(); ++i) {
        if (!fields.test(i)) continue;
        LinkParams a, b;
        copy_link_param(i, values, a);
        copy_link_param(i, o.values, b);
        if (!(a == b)) return false;
    }
    return true;
}

ScenarioTrack compile_track(const Scenario& s, unsigned d, const LinkParams& base) {
    if (s.duration <= 0)
        throw ParamError("duration_s", "must be greater than 0 (the timeline's length)");
    const std::string dir = kDirectionKeys[d];
    // The times at which something starts or ends: the track's pieces lie between them.
    std::vector<DurationNs> times = {0, s.duration};
    DurationNs last_at = 0;
    for (const ScenarioStep& st : s.steps) {
        if (st.at < last_at)
            throw ParamError(st.where + ".at_s",
                             seconds(st.at) + " goes back (the step before is at " +
                                 seconds(last_at) + "); steps come in time order");
        last_at = st.at;
        if (st.ramp && st.until <= st.at)
            throw ParamError(st.where + ".until_s", "a ramp must end after it starts (at " +
                                                        seconds(st.at) + ", until " +
                                                        seconds(st.until) + ")");
        const DurationNs end = st.ramp ? st.until : st.at;
        if (end > s.duration || (s.loop && st.at >= s.duration))
            throw ParamError(st.where + (st.ramp ? ".until_s" : ".at_s"),
                             seconds(end) + " is past the scenario's duration (" +
                                 seconds(s.duration) + ")" +
                                 (s.loop ? "; with loop a step must come before the end, where "
                                           "the scenario starts again"
                                         : ""));
        times.push_back(st.at);
        if (st.ramp) times.push_back(st.until);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());

    ScenarioTrack track;
    track.duration_ = s.duration;
    track.loop_ = s.loop;
    LinkParams p = base;
    std::vector<Ramp> active;
    std::size_t next = 0;
    for (std::size_t bi = 0; bi < times.size(); ++bi) {
        const DurationNs b = times[bi];
        const ScenarioStep* changed = nullptr;  // the step to blame for an invalid state at b
        for (auto it = active.begin(); it != active.end();) {
            if (it->t1 == b) {
                set_link_param_number(it->field, p, it->to);
                changed = it->step;
                it = active.erase(it);
            } else {
                set_link_param_number(it->field, p, it->value(b));
                ++it;
            }
        }
        for (; next < s.steps.size() && s.steps[next].at == b; ++next) {
            const ScenarioStep& st = s.steps[next];
            if (!st.class_name.empty()) continue;  // a traffic class's (compile())
            const ScenarioChange& c = st.dir[d];
            for (std::size_t i = 0; i < link_param_fields().size(); ++i) {
                if (!c.fields.test(i)) continue;
                const std::string field = st.where + "." + dir + "." + key_of(i);
                for (const Ramp& r : active)
                    if (r.field == i)
                        throw ParamError(field, "a ramp (" + r.step->where + ") moves it until " +
                                                    seconds(r.t1) + "; give it after that");
                if (!st.ramp) {
                    copy_link_param(i, c.values, p);
                    continue;
                }
                if (!link_param_is_number(i) || key_of(i) == "seed")
                    throw ParamError(field,
                                     "a ramp moves numbers only (durations, rates, sizes, "
                                     "probabilities); give '" +
                                         key_of(i) + "' in a step");
                active.push_back(Ramp{i, link_param_number(i, p), link_param_number(i, c.values), b,
                                      st.until, &st});
            }
            if (!c.empty()) changed = &st;
        }
        if (changed) {
            try {
                validate(p);
            } catch (const ParamError& e) {
                throw ParamError(changed->where + "." + dir + "." + e.field(),
                                 "at " + seconds(b) + ": " + e.message());
            }
        }
        ScenarioTrack::Segment seg;
        seg.start = b;
        seg.end = bi + 1 < times.size() ? times[bi + 1] : b;
        seg.from = p;
        seg.to = p;
        for (const Ramp& r : active) {
            seg.ramp.set(r.field);
            set_link_param_number(r.field, seg.to, r.value(seg.end));
        }
        track.segments_.push_back(std::move(seg));
    }
    track.prepare_tables();
    return track;
}

namespace {
double smooth_gamma_shape(const LinkParams& p) {
    if (p.strategy != Strategy::smooth || p.jitter <= 0) return 0;
    return SmoothDelay::gamma_shape(p.distribution, static_cast<double>(p.mean_delay),
                                    static_cast<double>(p.jitter));
}
}  // namespace

void ScenarioTrack::prepare_tables() {
    std::vector<double> shapes;
    for (const Segment& s : segments_) {
        shapes.push_back(smooth_gamma_shape(s.from));
        shapes.push_back(smooth_gamma_shape(s.to));
        if (s.ramp.any() && (smooth_gamma_shape(s.from) != 0 || smooth_gamma_shape(s.to) != 0))
            for (DurationNs t = s.start; t < s.end; t += kRampStep)
                shapes.push_back(smooth_gamma_shape(at(t)));
    }
    std::sort(shapes.begin(), shapes.end());
    shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
    gamma_tables_.clear();
    for (const double k : shapes) {
        if (k == 0) continue;
        auto t = std::make_shared<GammaQuantileTable>();
        t->build(k);
        gamma_tables_.push_back(std::move(t));
    }
}

std::shared_ptr<const GammaQuantileTable> ScenarioTrack::gamma_table(const LinkParams& p) const {
    const double k = smooth_gamma_shape(p);
    if (k == 0) return nullptr;
    auto it = std::lower_bound(gamma_tables_.begin(), gamma_tables_.end(), k,
                               [](const auto& t, double v) { return t->shape() < v; });
    return it != gamma_tables_.end() && (*it)->shape() == k ? *it : nullptr;
}

namespace {

// The steps of traffic classes, checked against base's classes and applied in order.
std::vector<ClassStep> compile_class_steps(const Scenario& s, const LinkConfig& base,
                                           unsigned directions) {
    std::vector<ClassStep> out;
    std::vector<TrafficClass> classes = base.classes;
    for (const ScenarioStep& st : s.steps) {
        if (st.class_name.empty()) continue;
        const auto it = std::find_if(classes.begin(), classes.end(), [&](const TrafficClass& c) {
            return c.name == st.class_name;
        });
        if (it == classes.end()) {
            std::string names = kDefaultClassName;
            for (const TrafficClass& c : classes)
                names += ", " + c.name;
            throw ParamError(st.where + ".class",
                             "no class '" + st.class_name + "'; the link's classes: " + names);
        }
        if (st.ramp)
            throw ParamError(st.where + ".ramp",
                             "a ramp on a traffic class is not supported; allowed for class '" +
                                 st.class_name + "': 'set' (its keys take their values at at_s)");
        TrafficClass& c = *it;
        ClassStep cs{st.at, static_cast<std::size_t>(it - classes.begin()), st.dir};
        if (directions < 2) cs.dir[1] = cs.dir[0];
        for (unsigned d = 0; d < 2; ++d) {
            const std::string dir = kDirectionKeys[d];
            for (std::size_t i = 0; i < link_param_fields().size(); ++i) {
                if (!cs.dir[d].fields.test(i)) continue;
                const std::string field = st.where + "." + dir + "." + key_of(i);
                if (c.action != ClassAction::emulate)
                    throw ParamError(field, "class '" + c.name + "' has action '" +
                                                std::string(to_string(c.action)) +
                                                "', which takes no link parameters; allowed "
                                                "only for a class with action 'emulate'");
                if (c.shares_link_limiter && is_limiter_key(key_of(i)))
                    throw ParamError(field, "class '" + c.name +
                                                "' shares the link's limiter ('limiter': "
                                                "'link'); allowed: its own limiter keys left out");
                copy_link_param(i, cs.dir[d].values, c.link.direction(d));
            }
        }
        try {
            validate(c, cs.index);
        } catch (const ClassError& e) {
            throw ParamError(st.where + "." + e.key(), "at " + seconds(st.at) + ": " + e.message());
        }
        out.push_back(std::move(cs));
    }
    return out;
}

}  // namespace

ScenarioTracks compile(const Scenario& s, const LinkConfig& base, unsigned directions) {
    ScenarioTracks t;
    t.directions = directions;
    t.dir[0] = compile_track(s, 0, base.a_to_b);
    // Single-port mode has no b_to_a: its changes are not played.
    t.dir[1] = directions == 2 ? compile_track(s, 1, base.b_to_a) : t.dir[0];
    t.classes = base.classes;
    t.class_steps = compile_class_steps(s, base, directions);
    return t;
}

std::vector<TrafficClass> ScenarioTracks::classes_at(DurationNs position) const {
    std::vector<TrafficClass> out = classes;
    if (class_steps.empty()) return out;
    const ScenarioTrack& t = dir[0];
    const DurationNs w = position <= 0 ? 0
                         : t.loop()    ? position % t.duration()
                                       : std::min(position, t.duration());
    for (const ClassStep& cs : class_steps) {
        if (cs.at > w) break;
        for (unsigned d = 0; d < 2; ++d)
            for (std::size_t i = 0; i < link_param_fields().size(); ++i)
                if (cs.dir[d].fields.test(i))
                    copy_link_param(i, cs.dir[d].values, out[cs.index].link.direction(d));
    }
    return out;
}

LinkConfig ScenarioTracks::at(DurationNs position) const {
    LinkConfig c{dir[0].at(position), dir[1].at(position), classes_at(position)};
    if (directions < 2) c.b_to_a = c.a_to_b;
    return c;
}

DurationNs ScenarioTrack::wrap(DurationNs position) const {
    if (position <= 0) return 0;
    if (loop_) return position % duration_;
    return std::min(position, duration_);
}

const ScenarioTrack::Segment& ScenarioTrack::segment(DurationNs wrapped) const {
    auto it = std::upper_bound(segments_.begin(), segments_.end(), wrapped,
                               [](DurationNs t, const Segment& s) { return t < s.start; });
    return *(it - 1);
}

LinkParams ScenarioTrack::at(DurationNs position) const {
    const DurationNs w = wrap(position);
    const Segment& s = segment(w);
    if (s.ramp.none()) return s.from;
    const DurationNs q = s.start + (w - s.start) / kRampStep * kRampStep;
    const double f = static_cast<double>(q - s.start) / static_cast<double>(s.end - s.start);
    LinkParams p = s.from;
    for (std::size_t i = 0; i < kMaxLinkParamFields; ++i) {
        if (!s.ramp.test(i)) continue;
        const double a = link_param_number(i, s.from), b = link_param_number(i, s.to);
        set_link_param_number(i, p, a + (b - a) * f);
    }
    return p;
}

double ScenarioTrack::number_at(std::size_t field, DurationNs position) const {
    const DurationNs w = wrap(position);
    const Segment& s = segment(w);
    const double a = link_param_number(field, s.from);
    if (!s.ramp.test(field)) return a;
    const DurationNs q = s.start + (w - s.start) / kRampStep * kRampStep;
    const double f = static_cast<double>(q - s.start) / static_cast<double>(s.end - s.start);
    return a + (link_param_number(field, s.to) - a) * f;
}

DurationNs ScenarioTrack::next_change(DurationNs position) const {
    if (position < 0) return 0;
    if (!loop_ && position >= duration_) return kNever;
    const DurationNs repeat = loop_ ? position - position % duration_ : 0;
    const DurationNs w = position - repeat;
    const Segment& s = segment(w);
    DurationNs n = s.end;
    if (s.ramp.any()) n = std::min(s.end, s.start + ((w - s.start) / kRampStep + 1) * kRampStep);
    return repeat + n;
}

int step_in_force(const Scenario& s, DurationNs position) {
    DurationNs w = std::max<DurationNs>(position, 0);
    if (s.loop && s.duration > 0) w %= s.duration;
    int k = -1;
    for (std::size_t i = 0; i < s.steps.size() && s.steps[i].at <= w; ++i)
        k = static_cast<int>(i);
    return k;
}

}  // namespace linkem
