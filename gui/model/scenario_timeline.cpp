#include "scenario_timeline.hpp"

#include <algorithm>
#include <cmath>

namespace linkem::gui {

void ScenarioTimeline::clear() {
    *this = ScenarioTimeline{};
}

bool ScenarioTimeline::setStatus(const proto::ScenarioStatus& r, const LinkConfig& base,
                                 unsigned directions, std::string* error) {
    if (!r.loaded || !r.scenario) {
        clear();
        if (r.loaded && error) *error = "linkemd sent no scenario";
        return !r.loaded;
    }
    try {
        if (!loaded_ || !(*r.scenario == scenario_)) {
            tracks_ = compile(*r.scenario, base, std::clamp(directions, 1u, 2u));
            scenario_ = *r.scenario;
            buildLanes();
        }
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        clear();
        return false;
    }
    loaded_ = true;
    name_ = r.position.name.empty() ? scenario_.name : r.position.name;
    from_ = r.from;
    state_ = r.position.state;
    position_s_ = r.position.position_s;
    duration_s_ = r.position.duration_s > 0 ? r.position.duration_s
                                            : static_cast<double>(scenario_.duration) / 1e9;
    step_ = static_cast<int>(r.position.step);
    repeat_ = r.position.repeat;
    have_origin_ = state_ == "playing" && r.origin_ns.has_value();
    origin_ns_ = have_origin_ ? *r.origin_ns : 0;
    given_pos_ns_ = -1;
    return true;
}

void ScenarioTimeline::setPosition(const proto::ScenarioPosition& s) {
    if (!loaded_) return;
    state_ = s.state;
    position_s_ = s.position_s;
    step_ = static_cast<int>(s.step);
    repeat_ = s.repeat;
    if (!playing()) have_origin_ = false;
}

std::string ScenarioTimeline::stepNote() const {
    if (step_ < 0 || static_cast<std::size_t>(step_) >= scenario_.steps.size()) return {};
    return scenario_.steps[static_cast<std::size_t>(step_)].note;
}

void ScenarioTimeline::buildLanes() {
    lanes_.clear();
    const auto& fields = link_param_fields();
    const unsigned dirs = tracks_.directions;
    const std::int64_t dur = tracks_.dir[0].duration();
    for (std::size_t f = 0; f < fields.size() && f < kMaxLinkParamFields; ++f) {
        if (fields[f].type != "number" && fields[f].type != "integer") continue;
        std::vector<Lane> per;
        for (unsigned d = 0; d < dirs && d < 2; ++d) {
            bool touched = false;
            for (const ScenarioStep& st : scenario_.steps)
                touched |= st.dir[d].fields.test(f);
            if (!touched) continue;
            Lane l;
            l.dir = static_cast<int>(d);
            l.field = f;
            l.key = fields[f].key;
            const ScenarioTrack& t = tracks_.dir[d];
            for (const auto& seg : t.segments()) {
                const std::int64_t a = std::min(seg.start, dur);
                const std::int64_t b = std::min(std::max(seg.end, a), dur);
                l.points.emplace_back(static_cast<double>(a) / 1e9, t.number_at(f, a));
                const double vb = seg.ramp.test(f) ? link_param_number(f, seg.to)
                                                   : link_param_number(f, seg.from);
                l.points.emplace_back(static_cast<double>(b) / 1e9, vb);
            }
            if (l.points.empty()) continue;
            if (l.points.back().first < static_cast<double>(dur) / 1e9)
                l.points.emplace_back(static_cast<double>(dur) / 1e9, l.points.back().second);
            l.lo = l.hi = l.points.front().second;
            for (const auto& p : l.points) {
                l.lo = std::min(l.lo, p.second);
                l.hi = std::max(l.hi, p.second);
            }
            per.push_back(std::move(l));
        }
        if (per.size() == 2 && per[0].points == per[1].points) {
            per[0].dir = -1;
            per.pop_back();
        }
        for (Lane& l : per)
            lanes_.push_back(std::move(l));
    }
}

}  // namespace linkem::gui
