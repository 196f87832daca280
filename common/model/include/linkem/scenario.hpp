// Scenarios: link parameters that change over time, per direction, on one clock.
//
// A Scenario is what a scenario file says (scenario_file.hpp reads and writes them): steps
// ("at t, these keys take these values") and ramps ("from t1 to t2, these numeric keys move
// linearly to these values"), each for both directions or one, over exactly the keys of
// LinkParams. compile() turns it into one ScenarioTrack per direction against the
// parameters in force when it starts (keys the scenario never sets keep those values): a
// function from the scenario's position to the LinkParams in force, which the Emulator
// follows as packets arrive (Emulator::follow), in the data plane and in the simulator
// alike. No JSON here.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "linkem/link_params.hpp"
#include "linkem/smooth_delay.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// Fields by their index in link_param_fields().
using FieldSet = std::bitset<kMaxLinkParamFields>;

/// One direction's part of a step: the fields it gives and their values (the other fields
/// of `values` are unused).
struct ScenarioChange {
    FieldSet fields;
    LinkParams values;
    bool empty() const { return fields.none(); }
    bool operator==(const ScenarioChange& o) const;
};

/// A step: at `at`, the fields of each direction's change take their values. A ramp
/// (until > at): from `at` to `until` the fields (numbers only) move linearly from the
/// values they have at `at` to those of the change, and hold them from `until` on.
struct ScenarioStep {
    DurationNs at = 0;
    DurationNs until = 0;  // a ramp's end; equal to `at` for a step
    bool ramp = false;
    std::array<ScenarioChange, 2> dir;  // a_to_b, b_to_a
    std::string note;                   // what happens, for people: "enters the tunnel"
    /// The traffic class whose parameters the step changes (docs/classes.md); empty: the
    /// `default` class, the link's own. A class's step is a set (no ramp): its fields take
    /// their values at `at`, on top of the class's parameters in force when the scenario
    /// started.
    std::string class_name;
    /// Where the step comes from, for errors: "steps[3]" (a JSON file), "line 12" (CSV).
    std::string where;
    bool operator==(const ScenarioStep& o) const {
        return at == o.at && until == o.until && ramp == o.ramp && dir == o.dir && note == o.note &&
               class_name == o.class_name;
    }
};

struct Scenario {
    std::string name;                 // short, shown in lists and telemetry
    std::string description;          // what it shows, one or two sentences
    std::string source;               // where its numbers come from (public figures, cited)
    bool loop = false;                // start again at 0 after `duration`
    DurationNs duration = 0;          // the timeline's length (> 0; not before any step's end)
    std::vector<ScenarioStep> steps;  // `at` non-decreasing
    bool operator==(const Scenario&) const = default;
};

/// A ramp moves its fields in steps of this (or less, at its ends): the parameters in force
/// for a packet in a ramp are those of the last grid point at or before its arrival.
inline constexpr DurationNs kRampStep = kNsPerMs;
inline constexpr DurationNs kNever = std::numeric_limits<DurationNs>::max();

/// One direction of a compiled scenario: the LinkParams in force at each position.
class ScenarioTrack {
  public:
    /// A piece of the timeline without a step inside: from `start` to the next piece's
    /// start, the fields of `ramp` move linearly from their values in `from` (at start) to
    /// those in `to` (at end); the other fields are `from`'s.
    struct Segment {
        DurationNs start = 0, end = 0;
        LinkParams from, to;
        FieldSet ramp;
    };

    /// The parameters in force at `position` (ns since the scenario's start; negative counts
    /// as 0). With loop, positions past the duration wrap; without, they get the end's.
    LinkParams at(DurationNs position) const;
    /// The next position after `position` at which at() may give something else (a step, a
    /// ramp's next grid point, a loop's restart); kNever when nothing changes any more.
    /// Positions are not wrapped: the loop's repeats count on.
    DurationNs next_change(DurationNs position) const;
    /// The value of field i (in its key's unit) at `position`, as at() gives it.
    double number_at(std::size_t field, DurationNs position) const;

    DurationNs duration() const { return duration_; }
    bool loop() const { return loop_; }
    const std::vector<Segment>& segments() const { return segments_; }
    /// The smooth strategy's gamma table for p, if p is a law the track puts in force and
    /// needs one (else null). compile_track() makes them all, off the packet path: following
    /// the track builds none (a ramp of a gamma law's jitter would otherwise build a table,
    /// 0.25 to ~5 ms, at every grid point).
    std::shared_ptr<const GammaQuantileTable> gamma_table(const LinkParams& p) const;
    /// Applies f to every parameter set of the track (the data plane caps the buffer limit).
    template <class F>
    void for_each_params(F f) {
        for (Segment& s : segments_) {
            f(s.from);
            f(s.to);
        }
    }

  private:
    friend ScenarioTrack compile_track(const Scenario&, unsigned, const LinkParams&);
    const Segment& segment(DurationNs wrapped) const;
    DurationNs wrap(DurationNs position) const;
    void prepare_tables();
    std::vector<Segment> segments_;  // cover [0, duration_); the last one holds after it
    std::vector<std::shared_ptr<const GammaQuantileTable>> gamma_tables_;  // by shape
    DurationNs duration_ = 0;
    bool loop_ = false;
};

/// A step of a traffic class, compiled: at `at` (within a repeat), the fields of each
/// direction's change take their values in class `index` of the list.
struct ClassStep {
    DurationNs at = 0;
    std::size_t index = 0;
    std::array<ScenarioChange, 2> dir;
};

/// Both directions of a compiled scenario (b_to_a unused in single-port mode), and the
/// link's traffic classes with the steps that change them.
struct ScenarioTracks {
    std::array<ScenarioTrack, 2> dir;
    unsigned directions = 2;
    /// The classes in force when the scenario was compiled: a playing scenario keeps them,
    /// changed only by its class steps (class_steps, in time order).
    std::vector<TrafficClass> classes;
    std::vector<ClassStep> class_steps;
    /// The link at `position`: the `default` class's parameters from the tracks, and the
    /// classes with the class steps at or before the position (within its repeat) applied.
    LinkConfig at(DurationNs position) const;
    /// The classes alone, as at() gives them.
    std::vector<TrafficClass> classes_at(DurationNs position) const;
};

/// Direction d's track of `s`, starting from `base` (the parameters in force): at 0 the
/// base with the steps at 0 applied; keys no step gives keep the base's values throughout.
/// Checks what only the whole timeline shows and throws ParamError naming the step and the
/// key ("steps[3].a_to_b.jitter_us", "line 12.mean_delay_us"): a ramp over a key that is
/// not a number or the seed, two ramps of one key at once, a step giving a key that a ramp
/// is moving, a ramp that does not end after it starts, a step past the duration, and
/// parameters that are invalid together (validate()) at any step's time or ramp's end.
ScenarioTrack compile_track(const Scenario& s, unsigned d, const LinkParams& base);
/// Both directions (one in single-port mode: b_to_a changes are then refused), and the steps
/// of base's traffic classes. A class step is refused (ParamError naming the step: "steps[3]
/// .class", "steps[3].a_to_b.rate_bps") for a class not in base's list, a ramp, link keys of
/// a `pass` or `drop` class, limiter keys of a class that shares the link's limiter, and a
/// class whose parameters the step makes invalid.
ScenarioTracks compile(const Scenario& s, const LinkConfig& base, unsigned directions);

/// The index of the last step whose time (`at`) is at or before `position` within its
/// repeat, -1 before the first.
int step_in_force(const Scenario& s, DurationNs position);

}  // namespace linkem
