// The scenario loaded in linkemd, as linkem-gui's scenario strip draws it, independent of Qt:
// the scenario (get_scenario's "scenario"), compiled against the link in force with the
// model's own code (linkem::compile), its state and position (get_scenario, the `stats`
// message's "scenario" object), one lane per parameter it touches (the value over the
// timeline, per direction, both directions in one lane when they are the same), and the
// delay targets over data-plane time that the delay chart's band follows while it plays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "linkem/scenario.hpp"

namespace linkem::gui {

class ScenarioTimeline {
  public:
    /// One parameter of one direction (or both, `dir` -1) over the timeline: the value (in
    /// its key's unit) at each point; steps are two points at one time, ramps a slope.
    struct Lane {
        int dir = -1;  // 0 a_to_b, 1 b_to_a, -1 both the same
        std::size_t field = 0;
        std::string key;
        std::vector<std::pair<double, double>> points;  // (position s, value)
        double lo = 0, hi = 0;                          // the values' range
    };

    /// get_scenario's (or a scenario method's) result with the link in force as the base for
    /// the keys the scenario does not set. False (and an error) when it cannot be drawn; a
    /// status that is not loaded clears.
    bool setStatus(const proto::ScenarioStatus& status, const LinkConfig& base, unsigned directions,
                   std::string* error = nullptr);
    /// A `stats` message's "scenario" object (name, state, position_s, ...).
    void setPosition(const proto::ScenarioPosition& position);
    void clear();

    bool loaded() const { return loaded_; }
    const std::string& name() const { return name_; }
    const std::string& state() const { return state_; }
    const std::string& from() const { return from_; }
    double positionS() const { return position_s_; }
    double durationS() const { return duration_s_; }
    int step() const { return step_; }
    std::uint64_t repeat() const { return repeat_; }
    bool playing() const { return state_ == "playing"; }
    /// The scenario (what File → Save scenario writes).
    const Scenario& scenario() const { return scenario_; }
    const std::vector<Lane>& lanes() const { return lanes_; }
    /// The note of the step in force ("" if none).
    std::string stepNote() const;

    /// While playing: the link in force at each change of the scenario (a step, and every
    /// `ramp_every_ns` of a ramp) after the last one given and up to data-plane time t_ns,
    /// with the data-plane time it took force (origin_ns + position). Calls f(time, link).
    template <class F>
    void changesUntil(std::int64_t t_ns, std::int64_t ramp_every_ns, F f);

  private:
    void buildLanes();
    bool loaded_ = false;
    std::string name_, state_ = "stopped", from_;
    double position_s_ = 0, duration_s_ = 0;
    int step_ = -1;
    std::uint64_t repeat_ = 0;
    std::int64_t origin_ns_ = 0;
    bool have_origin_ = false;
    std::int64_t given_pos_ns_ = -1;  // position of the last change given to changesUntil
    Scenario scenario_;
    ScenarioTracks tracks_;
    std::vector<Lane> lanes_;
};

template <class F>
void ScenarioTimeline::changesUntil(std::int64_t t_ns, std::int64_t ramp_every_ns, F f) {
    if (!loaded_ || !playing() || !have_origin_) return;
    const std::int64_t dur = tracks_.dir[0].duration();
    std::int64_t until = t_ns - origin_ns_;
    if (!scenario_.loop) until = std::min(until, dur);
    if (until < 0) return;
    std::int64_t pos = given_pos_ns_;
    if (pos < 0) {
        pos = std::max<std::int64_t>(0, until);  // from where it is now
        f(origin_ns_ + pos, tracks_.at(pos));
        given_pos_ns_ = pos;
        return;
    }
    for (int guard = 0; guard < 100000; ++guard) {
        std::int64_t next = kNever;
        for (unsigned d = 0; d < tracks_.directions && d < 2; ++d)
            next = std::min(next, tracks_.dir[d].next_change(pos));
        if (next == kNever || next > until) break;
        // within a ramp: every ramp_every_ns, not every millisecond
        if (next - pos < ramp_every_ns) {
            std::int64_t n2 = pos + ramp_every_ns;
            // a step before that comes first
            for (unsigned d = 0; d < tracks_.directions && d < 2; ++d)
                for (const auto& s : tracks_.dir[d].segments())
                    if (s.start > pos && s.start < n2) n2 = s.start;
            if (n2 > until) break;
            next = n2;
        }
        pos = next;
        f(origin_ns_ + pos, tracks_.at(pos));
    }
    given_pos_ns_ = pos;
}

}  // namespace linkem::gui
