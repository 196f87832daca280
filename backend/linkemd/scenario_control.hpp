// linkemd's scenario player: the scenario loaded, where it is, and the protocol's scenario
// methods (docs/protocol.md, docs/scenarios.md). The steps themselves are made by the data
// plane (Dataplane::update with the compiled tracks: each Emulator follows its direction's
// track on the data plane's clock); this side changes what it follows (start, pause,
// resume, stop, seek) and reports each step as an event when its time has passed. All of it
// lives in linkemd: a scenario plays on whether or not any client is connected.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "linkem/dataplane/dataplane.hpp"
#include "linkem/messages.hpp"
#include "linkem/scenario.hpp"

namespace linkem::linkemd {

class ScenarioControl {
  public:
    enum class State { stopped, playing, paused, finished };

    /// `event`: publishes an event; `applied`: a parameter generation was published (the
    /// controller's params_applied event).
    ScenarioControl(dp::Dataplane& dp, std::function<void(const proto::Event&)> event,
                    std::function<void(std::uint64_t, const std::string&)> applied);

    /// The protocol's scenario methods (load_scenario ... get_scenario); throws
    /// proto::ProtocolError or ParamError for a request it refuses, changing nothing.
    nlohmann::json handle(proto::Method method, const nlohmann::json& params,
                          const std::string& source);

    /// linkemd --scenario: loads a built-in's name or a file and starts it. Throws
    /// ScenarioError.
    void play_at_start(const std::string& name_or_path);

    /// The parameters in force now: while a scenario plays, those at its position.
    LinkConfig in_force() const;
    /// A change of the parameters from elsewhere (set_link, load_config, SIGHUP) is about to
    /// be published: a playing scenario pauses (where it is), so that the change holds until
    /// the scenario is resumed. Publishes nothing itself.
    void interrupt(const std::string& source);

    /// Reports the steps whose time has passed, and the end of a scenario that does not
    /// loop. Returns the data-plane time it wants to be called again at (0: no need).
    TimeNs tick(TimeNs now);
    /// The `scenario` object of a stats message; nullopt when none is loaded.
    std::optional<proto::ScenarioPosition> scenario_position(TimeNs now) const;

  private:
    nlohmann::json load(const nlohmann::json& params, const std::string& source);
    nlohmann::json start(DurationNs position, const std::string& source, const std::string& action);
    nlohmann::json pause(const std::string& source, const std::string& why);
    nlohmann::json status(TimeNs now) const;
    // Publishes the tracks from `position` on (playing) or fixed parameters (no tracks).
    void publish(const std::shared_ptr<const ScenarioTracks>& tracks, const LinkConfig& link,
                 TimeNs origin, const std::string& source);
    DurationNs position(TimeNs now) const;
    void state_event(const std::string& action, const std::string& source, TimeNs now);
    void announce_from(DurationNs position);

    dp::Dataplane& dp_;
    std::function<void(const proto::Event&)> event_;
    std::function<void(std::uint64_t, const std::string&)> applied_;

    std::optional<Scenario> scenario_;
    nlohmann::json scenario_json_;  // its JSON form, for get_scenario
    std::string from_;              // "built-in", "file", "inline"
    std::string path_;              // the file's path when from_ is "file"
    State state_ = State::stopped;
    std::shared_ptr<const ScenarioTracks> tracks_;  // compiled at the last start
    LinkConfig base_;                               // the parameters they were compiled from
    TimeNs origin_ = 0;                             // data-plane time of position 0 (playing)
    DurationNs position_ = 0;                       // paused, finished, stopped
    // The next step to announce: its index, in which repeat of a looping scenario.
    std::size_t next_step_ = 0;
    std::int64_t repeat_ = 0;
};

std::string_view to_string(ScenarioControl::State s);

}  // namespace linkem::linkemd
