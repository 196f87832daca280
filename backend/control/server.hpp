// The control and telemetry server of linkemd (docs/protocol.md): a ROUTER socket that
// answers requests, a PUB socket that publishes telemetry, and, with CURVE, a ZAP handler
// that admits only the allowed client keys. It runs on the calling thread (linkemd's main
// thread), never on a data-plane lcore, and never blocks on a client: replies and telemetry
// are sent without waiting, and ZeroMQ drops what a slow peer does not take.
//
// The server knows the protocol, not the emulator: it checks each request's envelope and
// hands the method to a Backend (linkemd's Controller, a fake in tests), which answers or
// throws proto::ProtocolError / ParamError.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/messages.hpp"
#include "linkem/protocol.hpp"

namespace linkem::control {

/// A server that cannot start (bad endpoint, address in use, missing keys): linkemd exits 2.
class ServerError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct ServerOptions {
    std::string control = proto::kDefaultControl;      // empty: no control socket
    std::string telemetry = proto::kDefaultTelemetry;  // empty: no telemetry socket
    /// CURVE: the server's key pair (a zcert .key_secret file) and a directory of allowed
    /// client public keys (*.key). Both or neither.
    std::string curve_secret;
    std::string curve_allow;
    /// Bind a non-loopback address without CURVE (warned about at start).
    bool insecure_listen = false;
};

/// True for ipc://, inproc:// and tcp:// endpoints on a loopback address (127.0.0.0/8,
/// ::1, localhost): the ones that need no CURVE.
bool is_local_endpoint(const std::string& endpoint);

class Backend {
  public:
    virtual ~Backend() = default;
    /// Answers one request: the result object, or throws proto::ProtocolError (an error
    /// reply with its code) or ParamError (invalid_params naming the field). `source` names
    /// the client (its hello "client" name, or peer-<hex>) for events.
    virtual nlohmann::json handle(const proto::Request& request, const std::string& source) = 0;
};

/// The hello names of the clients seen last: ROUTER identity -> name, at most `capacity`,
/// forgetting the one used longest ago. ZeroMQ does not say when a peer leaves, and a
/// client that reconnects gets a new identity, so without a bound the names of clients
/// long gone would pile up (one per connection that said hello).
class ClientNames {
  public:
    static constexpr std::size_t kCapacity = 256;
    explicit ClientNames(std::size_t capacity = kCapacity) : capacity_(capacity) {}
    void remember(const std::string& identity, std::string name);
    /// The name, and the client becomes the one used last; nullptr when unknown.
    const std::string* find(const std::string& identity);
    std::size_t size() const { return index_.size(); }

  private:
    using Entry = std::pair<std::string, std::string>;  // identity, name
    std::size_t capacity_;
    std::list<Entry> order_;  // used last first
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

class Server {
  public:
    /// Binds the sockets (and the ZAP handler). Throws ServerError saying what is wrong.
    /// `warn` receives start-up warnings (--insecure-listen).
    Server(const ServerOptions& options, Backend& backend, std::string instance_id,
           std::function<TimeNs()> clock, const std::function<void(const std::string&)>& warn);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Waits up to `timeout` for requests (and ZAP requests, and `extra_fd` if >= 0),
    /// answers every request that arrived, and returns whether extra_fd became readable.
    bool serve(std::chrono::milliseconds timeout, int extra_fd = -1);

    /// Publishes a telemetry message with its header filled in: instance_id, the seq of its
    /// topic, and t_ns = clock() where the message's is 0. Returns the message as sent.
    proto::StatsMessage publish(proto::StatsMessage m);
    proto::DelayMessage publish(proto::DelayMessage m);
    /// Publishes an `event`.
    void event(proto::Event e);
    /// Publishes any body on any topic, with the header as above (t_ns = clock() unless the
    /// body has one): for tests and for topics of a later protocol.
    nlohmann::json publish(const std::string& topic, nlohmann::json body);
    /// The seq the next message of `topic` will carry.
    std::uint64_t next_seq(const std::string& topic) const;

    const std::string& instance_id() const { return instance_id_; }
    /// The endpoints actually bound (a tcp port of 0 or * becomes the port chosen).
    const std::string& control_endpoint() const { return control_bound_; }
    const std::string& telemetry_endpoint() const { return telemetry_bound_; }

  private:
    struct Sockets;
    void handle_control();
    void handle_zap();
    std::string source_of(const std::string& identity);
    /// The request_refused event: `what` is "refused: MESSAGE" or "failed: WHY".
    void refused(const std::string& identity, const std::string& method, const std::string& what,
                 proto::ErrorCode code);
    proto::Header next_header(const std::string& topic, TimeNs t);
    void send(const std::string& topic, const nlohmann::json& body);

    Backend& backend_;
    std::string instance_id_;
    std::function<TimeNs()> clock_;
    std::unique_ptr<Sockets> s_;
    std::string control_bound_, telemetry_bound_;
    std::map<std::string, std::uint64_t> seq_;
    ClientNames names_;
    std::vector<std::string> allowed_keys_;  // CURVE: 32-byte client public keys
};

}  // namespace linkem::control
