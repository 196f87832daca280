#include "scenario_control.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "linkem/dataplane/eal.hpp"
#include "linkem/link_flags.hpp"
#include "linkem/scenario_file.hpp"

namespace linkem::linkemd {

using nlohmann::json;
using proto::ErrorCode;

namespace {

[[noreturn]] void refuse(ErrorCode code, const std::string& message,
                         const std::string& field = "") {
    throw proto::ProtocolError(proto::Error{code, message, field});
}

double seconds(DurationNs t) {
    return static_cast<double>(t) / kNsPerSec;
}

std::string seconds_text(DurationNs t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g s", seconds(t));
    return buf;
}

// A request's position_s: seconds within the scenario.
DurationNs position_param(const json& params, const Scenario& s, bool required) {
    for (const auto& [key, value] : params.items())
        if (key != "position_s")
            refuse(ErrorCode::invalid_params, "unknown parameter '" + key + "'; known: position_s",
                   "params." + key);
    if (!params.contains("position_s")) {
        if (required)
            refuse(ErrorCode::invalid_params,
                   "position_s is missing: the position to go to, in seconds since the "
                   "scenario's start",
                   "params.position_s");
        return 0;
    }
    const json& v = params["position_s"];
    const double max = seconds(s.duration);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
        v.get<double>() > max || (s.loop && v.get<double>() >= max))
        refuse(ErrorCode::invalid_params,
               "position_s: " + v.dump() + " is not allowed; allowed 0 .. " +
                   seconds_text(s.duration) +
                   (s.loop ? " (excluded: the loop starts again there)" : "") + " for scenario '" +
                   s.name + "'",
               "params.position_s");
    return static_cast<DurationNs>(std::llround(v.get<double>() * kNsPerSec));
}

// The fields each direction's steps give to `class_name` ("": default's): the rest keeps
// the link's values.
std::array<FieldSet, 2> touched(const Scenario& s, const std::string& class_name = "") {
    std::array<FieldSet, 2> t;
    for (const ScenarioStep& st : s.steps)
        if (st.class_name == class_name)
            for (int d = 0; d < 2; ++d)
                t[d] |= st.dir[d].fields;
    return t;
}

// The base to compile again from (resume, seek, start again): the link in force now, with
// the keys the scenario gives taken from the first base instead, `default`'s and each
// class's (a class of that name in both), so that before a key's first step it has the value
// it had then.
LinkConfig restart_base(const Scenario& s, const LinkConfig& first, const LinkConfig& now) {
    LinkConfig base = first;
    const auto t = touched(s);
    for (std::size_t i = 0; i < link_param_flags().size(); ++i) {
        if (!t[0].test(i)) copy_link_param(i, now.a_to_b, base.a_to_b);
        if (!t[1].test(i)) copy_link_param(i, now.b_to_a, base.b_to_a);
    }
    base.classes = now.classes;
    for (TrafficClass& c : base.classes) {
        const auto old = std::find_if(first.classes.begin(), first.classes.end(),
                                      [&](const TrafficClass& o) { return o.name == c.name; });
        if (old == first.classes.end() || old->action != c.action ||
            old->shares_link_limiter != c.shares_link_limiter)
            continue;
        const auto tc = touched(s, c.name);
        for (unsigned d = 0; d < 2; ++d)
            for (std::size_t i = 0; i < link_param_flags().size(); ++i)
                if (tc[d].test(i)) copy_link_param(i, old->link.direction(d), c.link.direction(d));
    }
    return base;
}

}  // namespace

std::string_view to_string(ScenarioControl::State s) {
    switch (s) {
        case ScenarioControl::State::stopped:
            return "stopped";
        case ScenarioControl::State::playing:
            return "playing";
        case ScenarioControl::State::paused:
            return "paused";
        case ScenarioControl::State::finished:
            return "finished";
    }
    return "?";
}

ScenarioControl::ScenarioControl(dp::Dataplane& dp, std::function<void(const proto::Event&)> event,
                                 std::function<void(std::uint64_t, const std::string&)> applied)
    : dp_(dp), event_(std::move(event)), applied_(std::move(applied)) {}

json ScenarioControl::handle(proto::Method method, const json& params, const std::string& source) {
    // The controller has refused params to the methods that take none (proto::kMethods).
    using M = proto::Method;
    const TimeNs now = dp::now_ns();
    if (method == M::get_scenario) return status(now);
    if (method == M::load_scenario) return load(params, source);
    if (!scenario_)
        refuse(ErrorCode::unavailable,
               "no scenario is loaded: load_scenario first (linkemctl scenario play FILE|NAME)");
    switch (method) {
        case M::start_scenario:
            return start(position_param(params, *scenario_, false), source, "started");
        case M::pause_scenario:
            if (state_ == State::paused) return status(now);
            if (state_ != State::playing)
                refuse(ErrorCode::unavailable, "scenario '" + scenario_->name + "' is " +
                                                   std::string(to_string(state_)) +
                                                   ", not playing: nothing to pause");
            return pause(source, "");
        case M::resume_scenario:
            if (state_ == State::playing) return status(now);
            if (state_ != State::paused)
                refuse(ErrorCode::unavailable,
                       "scenario '" + scenario_->name + "' is " + std::string(to_string(state_)) +
                           ", not paused: start_scenario plays it from the start");
            return start(position_, source, "resumed");
        case M::stop_scenario:
            if (state_ == State::playing) publish(nullptr, in_force(), 0, source);
            state_ = State::stopped;
            position_ = 0;
            state_event("stopped", source, now);
            return status(now);
        case M::seek_scenario: {
            const DurationNs p = position_param(params, *scenario_, true);
            if (state_ == State::playing) return start(p, source, "seeked");
            // Not playing: show the link at that position, paused there.
            if (!tracks_)
                tracks_ = std::make_shared<ScenarioTracks>(
                    compile_scenario(*scenario_, in_force(), dp_.directions(), scenario_->name));
            publish(nullptr, tracks_->at(p), 0, source);
            state_ = State::paused;
            position_ = p;
            state_event("seeked", source, now);
            return status(now);
        }
        default:
            break;
    }
    throw std::logic_error("ScenarioControl::handle: not a scenario method");
}

json ScenarioControl::load(const json& params, const std::string& source) {
    int given = 0;
    for (const auto& [key, value] : params.items()) {
        if (key != "scenario" && key != "path" && key != "name")
            refuse(ErrorCode::invalid_params,
                   "unknown parameter '" + key +
                       "'; known: scenario (the scenario's JSON), path (a "
                       "file linkemd reads), name (a built-in scenario)",
                   "params." + key);
        ++given;
    }
    if (given != 1)
        refuse(ErrorCode::invalid_params,
               "give exactly one of scenario (the scenario's JSON), path (a file linkemd reads) "
               "and name (a built-in scenario: " +
                   builtin_scenario_names() + ")",
               "params");
    Scenario s;
    std::string from, path, field;
    try {
        if (params.contains("scenario")) {
            from = "inline";
            field = "params.scenario";
            s = scenario_from_json(params["scenario"], "scenario");
            if (s.name.empty()) s.name = "unnamed";
        } else if (params.contains("path")) {
            from = "file";
            field = "params.path";
            if (!params["path"].is_string())
                refuse(ErrorCode::invalid_params, "path: expected a file name (a string)", field);
            path = params["path"].get<std::string>();
            std::error_code ec;
            const std::filesystem::path abs = std::filesystem::absolute(path, ec);
            if (!ec) path = abs.string();
            s = read_scenario_file(path);
        } else {
            from = "built-in";
            field = "params.name";
            if (!params["name"].is_string())
                refuse(ErrorCode::invalid_params, "name: expected a built-in scenario's name",
                       field);
            const auto b = builtin_scenario(params["name"].get<std::string>());
            if (!b)
                refuse(ErrorCode::invalid_params,
                       "no built-in scenario '" + params["name"].get<std::string>() +
                           "'; built-in: " + builtin_scenario_names(),
                       field);
            s = *b;
        }
        // Checked against the parameters in force, as it would start now.
        (void)compile_scenario(s, in_force(), dp_.directions(),
                               from == "file"     ? path
                               : from == "inline" ? "scenario"
                                                  : s.name);
    } catch (const ScenarioError& e) {
        refuse(ErrorCode::invalid_params, e.what(),
               from == "inline" && !e.field().empty() ? field + "." + e.field() : field);
    }
    const TimeNs now = dp::now_ns();
    if (state_ == State::playing) {
        publish(nullptr, in_force(), 0, source);
        state_ = State::stopped;
        state_event("stopped", source, now);
    }
    scenario_ = std::move(s);
    scenario_json_ = scenario_to_json(*scenario_);
    from_ = from;
    path_ = path;
    tracks_.reset();
    state_ = State::stopped;
    position_ = 0;
    state_event("loaded", source, now);
    return status(now);
}

void ScenarioControl::play_at_start(const std::string& name_or_path) {
    Scenario s = scenario_by_name_or_path(name_or_path);
    (void)compile_scenario(s, in_force(), dp_.directions(), name_or_path);
    const bool builtin = builtin_scenario(name_or_path) && !std::filesystem::exists(name_or_path);
    scenario_ = std::move(s);
    scenario_json_ = scenario_to_json(*scenario_);
    from_ = builtin ? "built-in" : "file";
    std::error_code ec;
    path_ = builtin ? "" : std::filesystem::absolute(name_or_path, ec).string();
    start(0, "--scenario", "started");
}

json ScenarioControl::start(DurationNs position, const std::string& source,
                            const std::string& action) {
    // Compiled from the parameters in force at the first start after loading. Later (resume,
    // seek, start again) the keys the scenario gives come from that first base, so that
    // before a key's first step it has the value it had then, and the keys it does not give
    // keep the link's values now, including what set_link gave them while it was paused.
    // The traffic classes likewise: the classes in force now, their keys that class steps
    // give from the first base.
    LinkConfig base = in_force();
    if (tracks_) base = restart_base(*scenario_, base_, base);
    try {
        tracks_ = std::make_shared<ScenarioTracks>(
            compile_scenario(*scenario_, base, dp_.directions(), scenario_->name));
    } catch (const ScenarioError& e) {
        refuse(ErrorCode::invalid_params,
               std::string(e.what()) + " (with the parameters in force now; nothing changed)", "");
    }
    base_ = base;
    const TimeNs now = dp::now_ns();
    origin_ = now - position;
    publish(tracks_, tracks_->at(position), origin_, source);
    state_ = State::playing;
    announce_from(position);
    state_event(action, source, now);
    return status(now);
}

json ScenarioControl::pause(const std::string& source, const std::string& why) {
    const TimeNs now = dp::now_ns();
    position_ = position(now);
    state_ = State::paused;
    publish(nullptr, tracks_->at(position_), 0, source);
    state_event(why.empty() ? "paused" : why, source, now);
    return status(now);
}

void ScenarioControl::interrupt(const std::string& source) {
    if (state_ != State::playing) return;
    const TimeNs now = dp::now_ns();
    position_ = position(now);
    state_ = State::paused;
    state_event("paused", source, now);
}

void ScenarioControl::publish(const std::shared_ptr<const ScenarioTracks>& tracks,
                              const LinkConfig& link, TimeNs origin, const std::string& source) {
    const auto [gen, applied] = dp_.update([&](const LinkConfig&) { return link; }, tracks, origin);
    (void)applied;
    dp_.wait_applied(gen, std::chrono::seconds(2));
    applied_(gen, source);
}

DurationNs ScenarioControl::position(TimeNs now) const {
    return state_ == State::playing ? now - origin_ : position_;
}

LinkConfig ScenarioControl::in_force() const {
    if (state_ == State::playing && tracks_) {
        LinkConfig c = tracks_->at(dp::now_ns() - origin_);
        // The seeds in use (a scenario's parameters carry them from the link they started on).
        const LinkConfig link = dp_.link();
        if (c.a_to_b.seed == 0) c.a_to_b.seed = link.a_to_b.seed;
        if (c.b_to_a.seed == 0) c.b_to_a.seed = link.b_to_a.seed;
        return c;
    }
    return dp_.link();
}

void ScenarioControl::announce_from(DurationNs position) {
    const Scenario& s = *scenario_;
    repeat_ = s.loop ? position / s.duration : 0;
    const DurationNs w = s.loop ? position % s.duration : position;
    next_step_ = 0;
    while (next_step_ < s.steps.size() && s.steps[next_step_].at < w)
        ++next_step_;
}

TimeNs ScenarioControl::tick(TimeNs now) {
    if (state_ != State::playing) return 0;
    const Scenario& s = *scenario_;
    const DurationNs pos = position(now);
    // A traffic class's step is not on the tracks the data plane follows: its change is
    // published here, as a new generation with the same tracks, once its time has passed;
    // so is a loop's restart, which gives the classes their first values again.
    bool classes_changed = false;
    for (int budget = 64;; --budget) {
        if (budget == 0) {  // far behind (a stopped process): go on from where it is
            announce_from(pos);
            classes_changed = classes_changed || !tracks_->class_steps.empty();
            break;
        }
        const DurationNs repeat_start = repeat_ * s.duration;
        if (next_step_ < s.steps.size()) {
            const ScenarioStep& st = s.steps[next_step_];
            if (repeat_start + st.at > pos) break;
            const json& body = scenario_json_["steps"][next_step_];
            const json& change = body.contains("set") ? body["set"] : body["ramp"];
            std::string what = st.ramp
                                   ? "ramp until " + seconds_text(st.until) + " to " + change.dump()
                                   : change.dump();
            if (!st.class_name.empty()) what = "class " + st.class_name + ": " + what;
            proto::Event e = proto::Event::info(
                "scenario_step", "scenario " + s.name + ", step " + std::to_string(next_step_) +
                                     " at " + seconds_text(st.at) +
                                     (st.note.empty() ? "" : ": " + st.note) + " (" + what + ")");
            e.name = s.name;
            e.step = next_step_;
            e.at_s = seconds(st.at);
            e.repeat = repeat_;
            e.step_t_ns = origin_ + repeat_start + st.at;
            (st.ramp ? e.ramp : e.set) = proto::decode<proto::LinkUpdate>(change);
            if (!st.class_name.empty()) {
                e.set->class_name = st.class_name;
                classes_changed = true;
            }
            if (st.ramp) e.until_s = seconds(st.until);
            if (!st.note.empty()) e.note = st.note;
            event_(e);
            ++next_step_;
            continue;
        }
        if (s.loop) {
            if (repeat_start + s.duration > pos) break;
            ++repeat_;
            next_step_ = 0;
            classes_changed = classes_changed || !tracks_->class_steps.empty();
            state_event("looped", "scenario", now);
            continue;
        }
        if (pos >= s.duration) {
            state_ = State::finished;
            position_ = s.duration;
            publish(nullptr, tracks_->at(s.duration), 0, "scenario " + s.name);
            state_event("finished", "scenario", now);
            return 0;
        }
        break;
    }
    if (classes_changed) publish(tracks_, tracks_->at(pos), origin_, "scenario " + s.name);
    const DurationNs repeat_start = repeat_ * s.duration;
    DurationNs next = repeat_start + s.duration;  // the end, or the loop's next repeat
    if (next_step_ < s.steps.size()) next = std::min(next, repeat_start + s.steps[next_step_].at);
    return origin_ + next;
}

json ScenarioControl::status(TimeNs now) const {
    proto::ScenarioStatus st;
    st.position.state = to_string(state_);
    if (!scenario_) return proto::to_json(st);
    const Scenario& s = *scenario_;
    st.loaded = true;
    st.position = *scenario_position(now);
    st.description = s.description;
    st.source = s.source;
    st.loop = s.loop;
    st.steps = s.steps.size();
    st.from = from_;
    st.path = path_;
    st.t_ns = now;
    if (state_ == State::playing) st.origin_ns = origin_;
    st.scenario = s;
    return proto::to_json(st);
}

std::optional<proto::ScenarioPosition> ScenarioControl::scenario_position(TimeNs now) const {
    if (!scenario_) return std::nullopt;
    const Scenario& s = *scenario_;
    const DurationNs pos = std::max<DurationNs>(position(now), 0);
    const DurationNs wrapped = s.loop ? pos % s.duration : std::min(pos, s.duration);
    proto::ScenarioPosition p;
    p.name = s.name;
    p.state = to_string(state_);
    p.position_s = seconds(wrapped);
    p.duration_s = seconds(s.duration);
    p.repeat = s.loop ? static_cast<std::uint64_t>(pos / s.duration) : 0;
    p.step = step_in_force(s, wrapped);
    return p;
}

void ScenarioControl::state_event(const std::string& action, const std::string& source,
                                  TimeNs now) {
    const Scenario& s = *scenario_;
    const DurationNs pos = std::max<DurationNs>(position(now), 0);
    const DurationNs wrapped = s.loop ? pos % s.duration : std::min(pos, s.duration);
    proto::Event e =
        proto::Event::info("scenario", "scenario " + s.name + " " + action + " at " +
                                           seconds_text(wrapped) + " (" + source + ")");
    e.name = s.name;
    e.action = action;
    e.state = to_string(state_);
    e.position_s = seconds(wrapped);
    e.source = source;
    event_(e);
}

}  // namespace linkem::linkemd
