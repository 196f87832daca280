// A client of linkemd's control and telemetry sockets (docs/protocol.md), for linkemctl, the
// GUI and tests: a control connection that sends a request and waits for its reply, a
// telemetry subscriber, and CURVE keys in ZeroMQ certificate files. No DPDK, no Qt.
//
// The control connection is a DEALER socket used in the "Lazy Pirate" way: one request at a
// time, matched to its reply by id (replies to requests given up on are skipped), and after
// a timeout the socket is closed without lingering (the unsent request is dropped, so
// linkemd never acts on it later) and a new one is opened for the next call.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/curve.hpp"
#include "linkem/messages.hpp"
#include "linkem/protocol.hpp"

namespace linkem::client {

/// Every error of this library.
class ClientError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// linkemd answered with an error (docs/protocol.md, section 5).
class Refused : public ClientError {
  public:
    explicit Refused(proto::Error e);
    const proto::Error& error() const { return error_; }

  private:
    proto::Error error_;
};

/// No answer within the timeout (nothing listening, linkemd busy or gone, a CURVE key it
/// does not let in), or an answer that is not a protocol reply.
class NoAnswer : public ClientError {
  public:
    using ClientError::ClientError;
};

/// A reply whose result is not what the protocol says the method answers (a typed call's
/// decoder refused it): a linkemd of another protocol, or a bug.
class BadReply : public NoAnswer {
  public:
    using NoAnswer::NoAnswer;
};

/// A call given up on from another thread (Cancel::cancel).
class Cancelled : public ClientError {
  public:
    using ClientError::ClientError;
};

/// Bad local input: an endpoint ZeroMQ does not accept, a key file that cannot be read.
class SetupError : public ClientError {
  public:
    using ClientError::ClientError;
};

// ---------------------------------------------------------------------------- CURVE keys
/// A CURVE key pair as Z85 text (linkem/curve.hpp: the key files, shared with the server).
using curve::KeyPair;

/// A new key pair (zmq_curve_keypair). Throws SetupError when libzmq has no CURVE.
KeyPair generate_key_pair();
/// A ZeroMQ certificate file's text (curve::certificate_text).
using curve::certificate_text;
/// Reads a certificate file: its public key, and its secret key when it has one. Throws
/// SetupError naming the file and what is wrong.
KeyPair read_certificate(const std::string& path);
/// Writes DIR/NAME.key (public) and DIR/NAME.key_secret (both keys, mode 0600), creating DIR.
/// Refuses to overwrite either unless `overwrite`. Returns the two paths.
std::pair<std::string, std::string> write_certificates(const std::string& dir,
                                                       const std::string& name, const KeyPair& keys,
                                                       bool overwrite);

/// The keys a CURVE client needs: the server's public key and its own pair.
struct CurveOptions {
    std::string server_public_key;  // Z85
    KeyPair client;                 // Z85, both keys
};
/// From the server's public certificate (NAME.key) and the client's secret one.
CurveOptions curve_from_files(const std::string& server_key_file,
                              const std::string& client_secret_file);

// ------------------------------------------------------------------------------- control
/// Gives up a Control's calls from another thread: once cancel() was called, a call waiting
/// for its reply throws Cancelled at once, and so does every later call. Thread-safe.
class Cancel {
  public:
    Cancel();
    ~Cancel();
    Cancel(const Cancel&) = delete;
    Cancel& operator=(const Cancel&) = delete;
    void cancel();
    bool cancelled() const;
    /// Readable once cancelled (an eventfd), for poll.
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
};

struct ControlOptions {
    std::string endpoint = proto::kDefaultControl;
    std::optional<CurveOptions> curve;
    /// Sent as hello's "client" once per connection, before the first call (empty: no hello
    /// of our own; linkemd then names us peer-<hex> in events).
    std::string client_name;
    /// Lets another thread give up the calls (a GUI that disconnects or closes).
    std::shared_ptr<Cancel> cancel;
};

inline constexpr std::chrono::milliseconds kDefaultTimeout{5000};

class Control {
  public:
    /// Checks the endpoint and keys (SetupError); connects lazily.
    explicit Control(ControlOptions options);
    ~Control();
    Control(const Control&) = delete;
    Control& operator=(const Control&) = delete;

    /// Sends {"v":1,"id":N,"method":method,"params":params} and waits up to `timeout` for
    /// its reply. Returns the result; throws Refused (an error reply), NoAnswer (no reply in
    /// time, or not a valid one; the connection is then reopened for the next call).
    nlohmann::json call(const std::string& method,
                        const nlohmann::json& params = nlohmann::json::object(),
                        std::chrono::milliseconds timeout = kDefaultTimeout);
    nlohmann::json call(proto::Method method,
                        const nlohmann::json& params = nlohmann::json::object(),
                        std::chrono::milliseconds timeout = kDefaultTimeout) {
        return call(std::string(proto::name(method)), params, timeout);
    }

    /// A typed call: the method's params and result as the protocol's messages
    /// (proto::MethodTypes, linkem/messages.hpp). Throws as call(), and BadReply when the
    /// result does not decode.
    template <proto::Method M>
    proto::ResultOf<M> call(const proto::ParamsOf<M>& params = {},
                            std::chrono::milliseconds timeout = kDefaultTimeout) {
        return decode<M>(call(M, proto::to_json(params), timeout));
    }
    /// Decodes a result of method M (from call(M, ...)); throws BadReply naming the key.
    template <proto::Method M>
    proto::ResultOf<M> decode(const nlohmann::json& result) const {
        try {
            return proto::decode<proto::ResultOf<M>>(result);
        } catch (const std::invalid_argument& e) {
            throw BadReply(bad_reply(M, e.what()));
        }
    }

    const std::string& endpoint() const { return options_.endpoint; }
    /// Connections opened so far (1 after the first call; +1 after every timeout).
    unsigned connections() const { return connections_; }

  private:
    struct Socket;
    void open();
    std::string bad_reply(proto::Method m, const std::string& why) const;
    // `asked`, `timeout`: the call's method and timeout, for the NoAnswer message.
    nlohmann::json exchange(const std::string& method, const nlohmann::json& params,
                            std::chrono::steady_clock::time_point deadline,
                            const std::string& asked, std::chrono::milliseconds timeout);

    ControlOptions options_;
    std::unique_ptr<Socket> s_;
    std::int64_t next_id_ = 1;
    bool said_hello_ = false;
    unsigned connections_ = 0;
};

// ----------------------------------------------------------------------------- telemetry
struct TelemetryMessage {
    std::string topic;
    nlohmann::json body;
};

class Subscriber {
  public:
    /// Subscribes to `topics` (empty: all). Throws SetupError on a bad endpoint or keys.
    /// `queue`: messages ZeroMQ keeps for a reader that falls behind (ZMQ_RCVHWM); newer
    /// ones are dropped beyond it (the seq gap shows them).
    Subscriber(const std::string& endpoint, const std::vector<std::string>& topics,
               const std::optional<CurveOptions>& curve = std::nullopt, int queue = 1000);
    ~Subscriber();
    Subscriber(const Subscriber&) = delete;
    Subscriber& operator=(const Subscriber&) = delete;

    /// The next message, waiting up to `timeout`; nullopt when none came. Messages that are
    /// not [topic][JSON object] are skipped and counted.
    std::optional<TelemetryMessage> receive(std::chrono::milliseconds timeout);
    /// The next message decoded (proto::decode_telemetry); messages of topics this build does
    /// not know are skipped. Throws std::invalid_argument naming the topic and key of a
    /// message that is not what the protocol says (the caller counts it and goes on).
    std::optional<proto::Telemetry> receive_decoded(std::chrono::milliseconds timeout);
    std::uint64_t skipped() const { return skipped_; }

  private:
    struct Socket;
    std::unique_ptr<Socket> s_;
    std::uint64_t skipped_ = 0;
};

}  // namespace linkem::client
