// The control and telemetry protocol between linkemd and its clients (linkemctl, the GUI,
// scripts): the method table, message envelopes, error codes and set_link's update rule.
// The messages themselves, each with its JSON codec, are linkem/messages.hpp.
// docs/protocol.md is the specification; this is its codec, shared by every side. No ZeroMQ
// here: callers move the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"

namespace linkem::proto {

inline constexpr int kVersion = 1;
inline constexpr const char* kDefaultControl = "tcp://127.0.0.1:7710";
inline constexpr const char* kDefaultTelemetry = "tcp://127.0.0.1:7711";
/// A request above this size gets invalid_request; ZeroMQ drops messages above
/// kMaxMessageBytes (ZMQ_MAXMSGSIZE) and the client's connection with them.
inline constexpr std::size_t kMaxRequestBytes = 65536;
inline constexpr std::int64_t kMaxMessageBytes = 1 << 20;
inline constexpr std::size_t kMaxIdLength = 128;
inline constexpr std::size_t kMaxClientName = 64;
/// An event's `source` for a client that gave no name in its `hello`: this, then its
/// connection's identity in hex (new on each connection).
inline constexpr const char* kUnnamedSourcePrefix = "peer-";

inline constexpr const char* kTopicStats = "stats";
inline constexpr const char* kTopicDelay = "delay";
inline constexpr const char* kTopicEvent = "event";
/// The keys of the two directions (linkem/stats.hpp), as proto:: names them.
using linkem::kDirectionKeys;

/// The methods of section 3.
enum class Method : std::uint8_t {
    hello,
    get_link,
    set_link,
    get_stats,
    save_config,
    load_config,
    get_traffic,
    set_traffic,
    load_scenario,
    start_scenario,
    pause_scenario,
    resume_scenario,
    stop_scenario,
    seek_scenario,
    get_scenario,
    capture_start,
    capture_stop,
    capture_status,
    shutdown,
};

/// The method table: every method of section 3, in the order the spec lists them (and in
/// Method's order), the one place that names them. parse_request accepts these names, hello
/// lists them ("methods"), linkemd's controller dispatches on them, one handler per row.
struct MethodSpec {
    Method method;
    std::string_view name;
    /// false: a request with params gets invalid_params before the method runs.
    bool takes_params;
};
inline constexpr MethodSpec kMethods[] = {
    {Method::hello, "hello", true},  // params: {"client": name}, optional
    {Method::get_link, "get_link", false},
    {Method::set_link, "set_link", true},  // params: a link update
    {Method::get_stats, "get_stats", false},
    {Method::save_config, "save_config", false},
    {Method::load_config, "load_config", false},
    {Method::get_traffic, "get_traffic", false},
    {Method::set_traffic, "set_traffic", true},        // params: traffic settings
    {Method::load_scenario, "load_scenario", true},    // params: scenario | path | name
    {Method::start_scenario, "start_scenario", true},  // params: position_s, optional
    {Method::pause_scenario, "pause_scenario", false},
    {Method::resume_scenario, "resume_scenario", false},
    {Method::stop_scenario, "stop_scenario", false},
    {Method::seek_scenario, "seek_scenario", true},  // params: position_s
    {Method::get_scenario, "get_scenario", false},
    {Method::capture_start, "capture_start", true},  // params: capture settings
    {Method::capture_stop, "capture_stop", false},
    {Method::capture_status, "capture_status", false},
    {Method::shutdown, "shutdown", false},
};
inline constexpr std::size_t kMethodCount = std::size(kMethods);
static_assert(
    [] {
        for (std::size_t i = 0; i < kMethodCount; ++i)
            if (static_cast<std::size_t>(kMethods[i].method) != i) return false;
        return true;
    }(),
    "kMethods lists the methods in Method's order");

/// The row of a method name; nullptr if there is none.
const MethodSpec* find_method(std::string_view name);
/// A method's name on the wire.
constexpr std::string_view name(Method m) {
    return kMethods[static_cast<std::size_t>(m)].name;
}
/// The names of the table, in its order (hello's "methods").
const std::vector<std::string>& method_names();

enum class ErrorCode : std::uint8_t {
    parse_error,
    invalid_request,
    unsupported_version,
    unknown_method,
    invalid_params,
    not_permitted,
    unavailable,
    failed,
};
std::string_view to_string(ErrorCode c);
std::optional<ErrorCode> error_code_from_string(std::string_view s);

struct Error {
    ErrorCode code = ErrorCode::failed;
    std::string message;
    std::string field;  // empty: no single field is at fault
};

/// A request or reply that breaks the protocol. `id` is the request's id when it was found
/// (null otherwise), so the server can still answer it.
class ProtocolError : public std::runtime_error {
  public:
    ProtocolError(Error e, nlohmann::json id = nullptr)
        : std::runtime_error(e.message), error_(std::move(e)), id_(std::move(id)) {}
    const Error& error() const { return error_; }
    const nlohmann::json& id() const { return id_; }

  private:
    Error error_;
    nlohmann::json id_;
};

// ----------------------------------------------------------------------- requests, replies
struct Request {
    nlohmann::json id;  // integer or string
    std::string method;
    nlohmann::json params = nlohmann::json::object();
};

/// Parses and checks a request body (server side): size, JSON, v, id, method (known),
/// params (an object). Throws ProtocolError.
Request parse_request(std::string_view body);
/// Encodes a request (client side).
std::string encode_request(const nlohmann::json& id, std::string_view method,
                           const nlohmann::json& params = nlohmann::json::object());

struct Reply {
    nlohmann::json id;
    nlohmann::json result;       // when ok
    std::optional<Error> error;  // when not
    bool ok() const { return !error; }
};
std::string encode_result(const nlohmann::json& id, const nlohmann::json& result);
std::string encode_error(const nlohmann::json& id, const Error& e);
/// Parses a reply (client side). Throws ProtocolError when it is not one.
Reply parse_reply(std::string_view body);

// ------------------------------------------------------------------------ link parameters
/// {"a_to_b": {...every key...}, "b_to_a": {...}, "classes": [...]} (b_to_a only with two
/// directions, classes only when the link has some; LinkState's JSON writes them always).
nlohmann::json link_to_json(const LinkConfig& link, unsigned directions);
/// Its inverse: b_to_a is a_to_b's parameters when the object has none (one direction);
/// `classes` is optional (none: no classes). Throws ParamError (or std::out_of_range without
/// a_to_b) when the object is not one.
LinkConfig link_from_json(const nlohmann::json& j, TraceFiles traces = TraceFiles::read);

/// set_link's update (section 3): top-level link keys for both directions, "a_to_b" /
/// "b_to_a" objects for one, on top of `current`; keys not given keep their value. Checks
/// the whole update and throws ParamError whose field is the dotted path of the first bad
/// one ("a_to_b.jitter_us", "b_to_a" in single-port mode, "seed" ...); `current` is never
/// changed. A seed of 0 is kept as 0 (the caller draws a new one: "0 = a new random seed").
///
/// Traffic classes (docs/classes.md): "classes" replaces the whole list first (checked with
/// classes_from_json: a ClassError whose field is "classes[1].match.b_port"); then "class"
/// names the class whose parameters the link keys change instead of `default`'s ("default"
/// is the same as no class). Refused, with field "class", a name that is not in the list
/// (after "classes"); with the key's path, link keys for a `pass` or `drop` class and limiter
/// keys for a class sharing the link's limiter (`"limiter": "link"`, which the update may also
/// set: the class's own limiter keys then go back to their defaults). Trace files are read or
/// only named as `traces` says.
LinkConfig apply_link_update(const nlohmann::json& params, const LinkConfig& current,
                             unsigned directions, TraceFiles traces = TraceFiles::read);

/// A fresh instance id: 16 hex digits from the system's random source.
std::string new_instance_id();

}  // namespace linkem::proto
