// Every message of the protocol (docs/protocol.md) as a struct with one JSON codec: what a
// method takes (its params) and answers (its result), and the telemetry bodies. linkemd
// encodes what it sends with these, linkemctl, the GUI and the tests decode what they read
// with them, so that a key is spelled in one place. The method table (linkem/protocol.hpp)
// says which params and result belong to which method (MethodTypes below).
//
// Decoders check what they read: a key of the wrong type, or a required key missing, throws
// std::invalid_argument naming the dotted path ("ports[1].link_up: expected true or false");
// keys a decoder does not know are ignored (a later linkemd may add them, section 6).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/capture.hpp"
#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/protocol.hpp"
#include "linkem/scenario.hpp"
#include "linkem/stats.hpp"
#include "linkem/telemetry.hpp"
#include "linkem/traffic.hpp"

namespace linkem::proto {

/// The params of a method that takes none, and the result `{}` (shutdown's).
struct Empty {
    bool operator==(const Empty&) const = default;
};

// --------------------------------------------------------------------------------- hello
struct HelloParams {
    std::string client;  // up to kMaxClientName characters; empty: not sent
    bool operator==(const HelloParams&) const = default;
};

struct PortInfo {
    std::string port;    // "a" or "b" (kPortNames)
    std::string device;  // as given: "net_null0", "veth1", a PCI address
    bool link_up = false;
    std::uint32_t speed_mbps = 0;
    bool operator==(const PortInfo&) const = default;
};

struct TelemetryInfo {
    std::string endpoint;
    unsigned stats_hz = 0, delay_hz = 0;
    std::uint64_t delay_samples_per_s = 0;
    bool operator==(const TelemetryInfo&) const = default;
};

struct Capabilities {
    bool save_config = false, load_config = false, shutdown = false, traffic = false,
         scenario = false;
    bool classes = false;  // traffic classes: the link's `classes`, set_link's `class`
    bool capture = false;  // capture_start, capture_stop, capture_status
    bool operator==(const Capabilities&) const = default;
};

struct Hello {
    int protocol_version = kVersion;
    std::string linkemd_version;
    std::string instance_id;
    TimeNs uptime_ns = 0, t_ns = 0;
    unsigned directions = 1;  // on the wire: the list of their keys
    std::vector<PortInfo> ports;
    std::uint64_t params_generation = 0;
    std::vector<std::string> methods;
    /// linkemd's link parameters: range, unit, default and help of each. Decoding a hello
    /// without one (an older linkemd) gives this build's (link_schema()).
    LinkSchema link_params_schema;
    TelemetryInfo telemetry;
    Capabilities capabilities;
    bool operator==(const Hello&) const = default;
};

// ------------------------------------------------------------------------------ the link
/// The result of get_link, set_link and load_config: the parameters in force, the link's
/// traffic classes with them (`classes`; decoded as empty when absent, from an older linkemd).
struct LinkState {
    std::uint64_t params_generation = 0;
    unsigned directions = 1;  // b_to_a is a_to_b's copy with one
    LinkConfig link;
    std::optional<bool> applied;                      // set_link, load_config
    std::optional<std::vector<std::string>> ignored;  // load_config
    bool operator==(const LinkState&) const = default;
};

/// set_link's params: some keys for both directions, some for one (docs/protocol.md,
/// set_link), as the command line, the GUI or a scenario step give them. Values are in the
/// unit of their key (link_param_fields()).
struct LinkUpdate {
    std::map<std::string, FieldValue> both;
    std::array<std::map<std::string, FieldValue>, 2> dir;  // a_to_b, b_to_a
    /// `class`: the keys above are that class's (docs/classes.md), not `default`'s; the
    /// class must exist (after `classes`, when both are given).
    std::optional<std::string> class_name;
    /// `classes`: the whole list, replacing the one in force in the same change.
    std::optional<std::vector<TrafficClass>> classes;

    /// Sets one key for one direction (0, 1) or both (-1). Newest wins: a key set for both
    /// removes the directions' own values of it; a direction's own value wins over an older
    /// one for both, as set_link's rule says.
    void set(int direction, const std::string& key, FieldValue value);
    /// Applies `newer` on top of this, key by key, as set() would.
    void merge(const LinkUpdate& newer);
    /// Whether the update gives `key` a value in `direction` (0, 1), for both or its own.
    bool has(int direction, std::string_view key) const;
    /// The value `key` gets in `direction`, if the update gives it one.
    std::optional<FieldValue> value(int direction, std::string_view key) const;
    bool empty() const { return both.empty() && dir[0].empty() && dir[1].empty(); }
    /// Every key of each direction's parameters, as its own (b_to_a only with two
    /// directions); without `seed` unless `with_seed` (a seed left out keeps the streams).
    static LinkUpdate whole(const LinkConfig& link, unsigned directions, bool with_seed);
    bool operator==(const LinkUpdate&) const = default;
};

/// The result of save_config.
struct SavedConfig {
    std::string path;
    std::uint64_t params_generation = 0;
    bool operator==(const SavedConfig&) const = default;
};

// ------------------------------------------------------------------------ built-in traffic
/// The result of get_traffic and set_traffic.
struct TrafficState {
    bool available = false;  // false: this linkemd has no built-in traffic (nothing else)
    TrafficConfig config;
    std::uint64_t run = 0;
    double frames_per_s = 0;
    bool operator==(const TrafficState&) const = default;
};

/// set_traffic's params: the settings given, each optional.
struct TrafficUpdate {
    std::optional<bool> running;
    std::optional<TrafficPattern> pattern;
    std::optional<double> rate_bps;
    std::optional<std::uint32_t> frame_size_bytes;
    std::optional<double> period_us;
    /// Every setting of `t`.
    static TrafficUpdate whole(const TrafficConfig& t);
    bool empty() const {
        return !running && !pattern && !rate_bps && !frame_size_bytes && !period_us;
    }
    bool operator==(const TrafficUpdate&) const = default;
};

// ------------------------------------------------------------------------------ scenarios
/// load_scenario's params: exactly one of the three.
struct LoadScenario {
    std::optional<Scenario> scenario;  // inline
    std::string path;                  // a JSON or CSV file on linkemd's machine
    std::string name;                  // a built-in
    bool operator==(const LoadScenario&) const = default;
};

/// start_scenario's (optional) and seek_scenario's (required) params.
struct ScenarioPositionParams {
    std::optional<double> position_s;
    bool operator==(const ScenarioPositionParams&) const = default;
};

/// Where a scenario is: the `stats` message's "scenario" object, and part of ScenarioStatus.
struct ScenarioPosition {
    std::string name;
    std::string state = "stopped";  // stopped, playing, paused, finished
    double position_s = 0, duration_s = 0;
    std::uint64_t repeat = 0;
    std::int64_t step = -1;  // the last step at or before the position; -1 before the first
    bool operator==(const ScenarioPosition&) const = default;
};

/// The result of get_scenario and of every scenario method.
struct ScenarioStatus {
    bool loaded = false;  // false: only position.state is meaningful
    ScenarioPosition position;
    std::string description, source;
    bool loop = false;
    std::uint64_t steps = 0;
    std::string from;  // built-in, file, inline
    std::string path;  // from a file: the absolute path linkemd read
    TimeNs t_ns = 0;
    std::optional<TimeNs> origin_ns;  // while playing: the data-plane time of position 0
    std::optional<Scenario> scenario;
    bool operator==(const ScenarioStatus&) const = default;
};

// ------------------------------------------------------------------------------ telemetry
struct Header {
    std::string instance_id;
    std::uint64_t seq = 0;
    TimeNs t_ns = 0;
    bool operator==(const Header&) const = default;
};

/// A `stats` message (also get_stats's result).
struct StatsMessage {
    Header header;
    bool final = false;
    LinkStats stats;
    std::optional<ScenarioPosition> scenario;  // while a scenario is loaded
    /// The `capture` block: running, file, records, bytes, missed (the status's other
    /// fields stay at their defaults); all zero when this linkemd never captured.
    linkem::capture::Status capture;
};

/// A `delay` message.
struct DelayMessage {
    Header header;
    unsigned directions = 1;
    DirectionDelay dir[2];
};

/// An `event` message. Keys beside kind, severity and message depend on the kind
/// (docs/protocol.md, the event table); absent ones are not written.
struct Event {
    Header header;
    std::string kind;      // started, params_applied, link, stall, pool, buffer_full, ...
    std::string severity;  // info, warning
    std::string message;
    std::optional<std::string> source, direction, port, method, code, path, name, action, state,
        note;
    std::optional<std::uint64_t> params_generation, stalls, stall_ns, longest_stall_ns, step,
        repeat;
    // capture: action (started, rotated, stopped, missed) and these (capture_event_to_json).
    std::optional<std::string> file, stop_reason, error;
    std::optional<std::uint64_t> records, bytes, capture_missed;
    std::optional<TimeNs> step_t_ns;
    std::optional<bool> link_up;
    std::optional<double> position_s, at_s, until_s;
    std::optional<TrafficConfig> traffic;
    std::optional<LinkUpdate> set, ramp;  // scenario_step: the step's keys, as in its file

    static Event info(std::string kind, std::string message) {
        return make(std::move(kind), "info", std::move(message));
    }
    static Event warning(std::string kind, std::string message) {
        return make(std::move(kind), "warning", std::move(message));
    }
    /// A `capture` event: its keys from the capture's event, severity warning for missed
    /// records and for a stop by a write error.
    static Event capture(const linkem::capture::Event& e);
    static Event make(std::string kind, std::string severity, std::string message) {
        Event e;
        e.kind = std::move(kind);
        e.severity = std::move(severity);
        e.message = std::move(message);
        return e;
    }
};

/// One telemetry message of a known topic, decoded.
struct Telemetry {
    std::string topic;
    Header header;
    std::optional<StatsMessage> stats;
    std::optional<DelayMessage> delay;
    std::optional<Event> event;
};

// ------------------------------------------------------------------------------ the codecs
nlohmann::json to_json(const Empty&);
nlohmann::json to_json(const HelloParams& p);
nlohmann::json to_json(const Hello& h);
nlohmann::json to_json(const LinkState& s);
nlohmann::json to_json(const LinkUpdate& u);
nlohmann::json to_json(const SavedConfig& s);
nlohmann::json to_json(const TrafficState& s);
nlohmann::json to_json(const TrafficUpdate& u);
nlohmann::json to_json(const LoadScenario& p);
nlohmann::json to_json(const ScenarioPositionParams& p);
nlohmann::json to_json(const ScenarioPosition& p);
nlohmann::json to_json(const ScenarioStatus& s);
/// capture_start's params and the capture status (linkem/capture_json.hpp).
nlohmann::json to_json(const capture::Settings& s);
nlohmann::json to_json(const capture::Status& s);
/// Telemetry bodies, with their header keys (v, instance_id, seq, t_ns).
nlohmann::json to_json(const StatsMessage& m);
nlohmann::json to_json(const DelayMessage& m);
nlohmann::json to_json(const Event& e);

/// The decoders: one per message, `decode(j, out)`, so that generic code (a client's typed
/// call) finds them by the type it wants. Throw std::invalid_argument naming the key.
void decode(const nlohmann::json& j, Empty& out);
void decode(const nlohmann::json& j, HelloParams& out);
void decode(const nlohmann::json& j, Hello& out);
/// A link decoded this way is the peer's: a trace_file is named, not read (TraceRef::named).
void decode(const nlohmann::json& j, LinkState& out);
void decode(const nlohmann::json& j, LinkUpdate& out);
void decode(const nlohmann::json& j, SavedConfig& out);
void decode(const nlohmann::json& j, TrafficState& out);
void decode(const nlohmann::json& j, TrafficUpdate& out);
void decode(const nlohmann::json& j, LoadScenario& out);
void decode(const nlohmann::json& j, ScenarioPositionParams& out);
void decode(const nlohmann::json& j, ScenarioPosition& out);
void decode(const nlohmann::json& j, ScenarioStatus& out);
/// Throws std::invalid_argument naming the key (a ParamError's field for Settings).
void decode(const nlohmann::json& j, capture::Settings& out);
void decode(const nlohmann::json& j, capture::Status& out);
void decode(const nlohmann::json& j, Header& out);
void decode(const nlohmann::json& j, StatsMessage& out);
void decode(const nlohmann::json& j, DelayMessage& out);
void decode(const nlohmann::json& j, Event& out);

template <class T>
T decode(const nlohmann::json& j) {
    T out;
    decode(j, out);
    return out;
}

/// A telemetry message's topic and body: nullopt for a topic this build does not know (a
/// later protocol's); throws std::invalid_argument (naming the topic and key) when a known
/// one is not what the protocol says.
std::optional<Telemetry> decode_telemetry(std::string_view topic, const nlohmann::json& body);

// ------------------------------------------------------------------- the methods' messages
/// Each method's params and result (docs/protocol.md, section 3), for typed calls:
/// `client.call<Method::get_link>()` sends ParamsOf<M>'s JSON and decodes ResultOf<M>.
template <Method M>
struct MethodTypes;
#define LINKEM_METHOD_TYPES(M, P, R) \
    template <>                      \
    struct MethodTypes<Method::M> {  \
        using Params = P;            \
        using Result = R;            \
    }
LINKEM_METHOD_TYPES(hello, HelloParams, Hello);
LINKEM_METHOD_TYPES(get_link, Empty, LinkState);
LINKEM_METHOD_TYPES(set_link, LinkUpdate, LinkState);
LINKEM_METHOD_TYPES(get_stats, Empty, StatsMessage);
LINKEM_METHOD_TYPES(save_config, Empty, SavedConfig);
LINKEM_METHOD_TYPES(load_config, Empty, LinkState);
LINKEM_METHOD_TYPES(get_traffic, Empty, TrafficState);
LINKEM_METHOD_TYPES(set_traffic, TrafficUpdate, TrafficState);
LINKEM_METHOD_TYPES(load_scenario, LoadScenario, ScenarioStatus);
LINKEM_METHOD_TYPES(start_scenario, ScenarioPositionParams, ScenarioStatus);
LINKEM_METHOD_TYPES(pause_scenario, Empty, ScenarioStatus);
LINKEM_METHOD_TYPES(resume_scenario, Empty, ScenarioStatus);
LINKEM_METHOD_TYPES(stop_scenario, Empty, ScenarioStatus);
LINKEM_METHOD_TYPES(seek_scenario, ScenarioPositionParams, ScenarioStatus);
LINKEM_METHOD_TYPES(get_scenario, Empty, ScenarioStatus);
LINKEM_METHOD_TYPES(capture_start, capture::Settings, capture::Status);
LINKEM_METHOD_TYPES(capture_stop, Empty, capture::Status);
LINKEM_METHOD_TYPES(capture_status, Empty, capture::Status);
LINKEM_METHOD_TYPES(shutdown, Empty, Empty);
#undef LINKEM_METHOD_TYPES

template <Method M>
using ParamsOf = typename MethodTypes<M>::Params;
template <Method M>
using ResultOf = typename MethodTypes<M>::Result;

}  // namespace linkem::proto
