#include "server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "linkem/curve.hpp"

namespace linkem::control {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string hex(const std::string& bytes) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (unsigned char c : bytes) {
        s += d[c >> 4];
        s += d[c & 15];
    }
    return s;
}

// The key of a certificate file ("public-key" or "secret-key"), decoded from Z85 to 32
// bytes: read as linkemctl and the GUI read them (linkem/curve.hpp).
std::string zcert_key(const std::string& path, const std::string& which) {
    curve::KeyPair k;
    try {
        k = curve::read_certificate(path);
    } catch (const curve::KeyFileError& e) {
        throw ServerError(e.what());
    }
    const std::string& z85 = which == "secret-key" ? k.secret_key : k.public_key;
    if (z85.empty())
        throw ServerError(path + ": no " + which +
                          " = \"...\" line (a ZeroMQ certificate file, as `linkemctl keygen` "
                          "writes, is expected)");
    std::array<std::uint8_t, 32> key{};
    zmq_z85_decode(key.data(), z85.c_str());  // read_certificate checked it
    return std::string(reinterpret_cast<const char*>(key.data()), key.size());
}

// Whether something accepts connections on an ipc:// endpoint's socket file (a file left by a
// process that ended refuses them, and ZeroMQ replaces it).
bool ipc_listened(const std::string& endpoint) {
    if (!endpoint.starts_with("ipc://")) return false;
    const std::string path = endpoint.substr(6);
    sockaddr_un a{};
    if (path.empty() || path == "*" || path[0] == '@' || path.size() >= sizeof a.sun_path)
        return false;
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, path.size());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const bool listened = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    return listened;
}
}  // namespace

bool is_local_endpoint(const std::string& e) {
    if (e.starts_with("ipc://") || e.starts_with("inproc://")) return true;
    if (!e.starts_with("tcp://")) return false;
    std::string host = e.substr(6);
    const auto colon = host.rfind(':');
    if (colon == std::string::npos) return false;
    host = host.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    static const std::regex v4_loopback("^127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}$");
    return host == "localhost" || host == "::1" || std::regex_match(host, v4_loopback);
}

struct Server::Sockets {
    zmq::context_t ctx{1};
    zmq::socket_t control, telemetry, zap;
};

Server::Server(const ServerOptions& o, Backend& backend, std::string instance_id,
               std::function<TimeNs()> clock, const std::function<void(const std::string&)>& warn)
    : backend_(backend),
      instance_id_(std::move(instance_id)),
      clock_(std::move(clock)),
      s_(std::make_unique<Sockets>()) {
    const bool curve = !o.curve_secret.empty() || !o.curve_allow.empty();
    if (curve && (o.curve_secret.empty() || o.curve_allow.empty()))
        throw ServerError(
            "--curve-secret and --curve-allow go together: the server's key pair and the "
            "directory of the client public keys it lets in");
    for (const std::string* e : {&o.control, &o.telemetry}) {
        if (e->empty() || is_local_endpoint(*e)) continue;
        if (!curve && !o.insecure_listen)
            throw ServerError("'" + *e +
                              "' is not a loopback or ipc:// endpoint: anyone who reaches it "
                              "could steer the link; give --curve-secret FILE and --curve-allow "
                              "DIR (docs/protocol.md, section 7), or --insecure-listen");
        if (!curve)
            warn("warning: --insecure-listen: '" + *e +
                 "' is open without CURVE; anyone who can reach it controls the link");
    }
    std::string secret;
    if (curve) {
        secret = zcert_key(o.curve_secret, "secret-key");
        std::error_code ec;
        if (!fs::is_directory(o.curve_allow, ec))
            throw ServerError("--curve-allow " + o.curve_allow + ": not a directory");
        for (const auto& entry : fs::directory_iterator(o.curve_allow))
            if (entry.path().extension() == ".key")
                allowed_keys_.push_back(zcert_key(entry.path().string(), "public-key"));
        if (allowed_keys_.empty())
            warn("warning: --curve-allow " + o.curve_allow +
                 " holds no *.key file: no client can connect");
        // The ZAP handler must be bound before a socket that uses it.
        s_->zap = zmq::socket_t(s_->ctx, zmq::socket_type::rep);
        s_->zap.bind("inproc://zeromq.zap.01");
    }
    auto secure = [&](zmq::socket_t& sock) {
        if (!curve) return;
        sock.set(zmq::sockopt::curve_server, 1);
        sock.set(zmq::sockopt::curve_secretkey, secret);
        sock.set(zmq::sockopt::zap_domain, "linkem");
    };
    auto bind = [&](zmq::socket_t& sock, const std::string& endpoint, const char* what) {
        // ZeroMQ removes an ipc:// socket file that is in the way and binds anyway: a second
        // linkemd would take the endpoint from the first, whose clients then reach the second.
        if (ipc_listened(endpoint))
            throw ServerError(std::string("cannot bind the ") + what + " socket to '" + endpoint +
                              "': a process listens there (another linkemd? give it other "
                              "endpoints with --control and --telemetry, or --no-control)");
        try {
            sock.bind(endpoint);
        } catch (const zmq::error_t& e) {
            throw ServerError(std::string("cannot bind the ") + what + " socket to '" + endpoint +
                              "': " + e.what() +
                              (e.num() == EADDRINUSE
                                   ? " (another linkemd? give it other endpoints with --control "
                                     "and --telemetry, or --no-control)"
                                   : ""));
        }
        return sock.get(zmq::sockopt::last_endpoint);
    };
    if (!o.control.empty()) {
        s_->control = zmq::socket_t(s_->ctx, zmq::socket_type::router);
        s_->control.set(zmq::sockopt::maxmsgsize, proto::kMaxMessageBytes);
        s_->control.set(zmq::sockopt::linger, 0);
        s_->control.set(zmq::sockopt::sndhwm, 1000);
        secure(s_->control);
        control_bound_ = bind(s_->control, o.control, "control");
    }
    if (!o.telemetry.empty()) {
        s_->telemetry = zmq::socket_t(s_->ctx, zmq::socket_type::pub);
        s_->telemetry.set(zmq::sockopt::linger, 0);
        s_->telemetry.set(zmq::sockopt::sndhwm, 1000);
        secure(s_->telemetry);
        telemetry_bound_ = bind(s_->telemetry, o.telemetry, "telemetry");
    }
}

Server::~Server() = default;

bool Server::serve(std::chrono::milliseconds timeout, int extra_fd) {
    std::vector<zmq::pollitem_t> items;
    int i_control = -1, i_zap = -1, i_extra = -1;
    if (s_->control) {
        i_control = static_cast<int>(items.size());
        items.push_back({s_->control.handle(), 0, ZMQ_POLLIN, 0});
    }
    if (s_->zap) {
        i_zap = static_cast<int>(items.size());
        items.push_back({s_->zap.handle(), 0, ZMQ_POLLIN, 0});
    }
    if (extra_fd >= 0) {
        i_extra = static_cast<int>(items.size());
        items.push_back({nullptr, extra_fd, ZMQ_POLLIN, 0});
    }
    if (items.empty()) return false;
    try {
        zmq::poll(items, timeout);
    } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
        return false;
    }
    if (i_zap >= 0 && (items[static_cast<std::size_t>(i_zap)].revents & ZMQ_POLLIN)) handle_zap();
    if (i_control >= 0 && (items[static_cast<std::size_t>(i_control)].revents & ZMQ_POLLIN))
        handle_control();
    return i_extra >= 0 && (items[static_cast<std::size_t>(i_extra)].revents & ZMQ_POLLIN);
}

void ClientNames::remember(const std::string& identity, std::string name) {
    if (const auto it = index_.find(identity); it != index_.end()) {
        it->second->second = std::move(name);
        order_.splice(order_.begin(), order_, it->second);
        return;
    }
    if (capacity_ == 0) return;
    if (index_.size() >= capacity_) {
        index_.erase(order_.back().first);
        order_.pop_back();
    }
    order_.emplace_front(identity, std::move(name));
    index_.emplace(identity, order_.begin());
}

const std::string* ClientNames::find(const std::string& identity) {
    const auto it = index_.find(identity);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
}

std::string Server::source_of(const std::string& identity) {
    const std::string* name = names_.find(identity);
    return name ? *name : proto::kUnnamedSourcePrefix + hex(identity);
}

void Server::refused(const std::string& identity, const std::string& method,
                     const std::string& what, proto::ErrorCode code) {
    const std::string source = source_of(identity);
    proto::Event e;
    e.kind = "request_refused";
    e.severity = "warning";
    e.message = "request " + (method.empty() ? std::string("(unparsed)") : method) + " from " +
                source + " " + what;
    e.source = source;
    e.method = method;
    e.code = std::string(proto::to_string(code));
    event(std::move(e));
}

// Every request waiting now (a bounded number per call, so that telemetry keeps its pace
// under a flood): parse, answer, or refuse with the protocol's error.
void Server::handle_control() {
    for (int budget = 0; budget < 256; ++budget) {
        std::vector<zmq::message_t> parts;
        zmq::recv_result_t got;
        try {
            got = zmq::recv_multipart(s_->control, std::back_inserter(parts),
                                      zmq::recv_flags::dontwait);
        } catch (const zmq::error_t&) {
            return;
        }
        if (!got || parts.empty()) return;
        // [identity] [""]? [body]: REQ puts an empty delimiter before the body; DEALER may.
        const std::string identity = parts[0].to_string();
        std::size_t first = 1;
        const bool delimited = parts.size() > 1 && parts[1].size() == 0;
        if (delimited) first = 2;
        const std::size_t n_body = parts.size() - first;
        std::string reply;
        json id = nullptr;
        std::string method;
        try {
            if (n_body != 1)
                throw proto::ProtocolError(proto::Error{
                    proto::ErrorCode::invalid_request,
                    "a request is one message part (after REQ's empty delimiter); got " +
                        std::to_string(n_body),
                    ""});
            const proto::Request req = proto::parse_request(parts[first].to_string_view());
            id = req.id;
            method = req.method;
            if (proto::find_method(req.method)->method == proto::Method::hello &&
                req.params.contains("client")) {
                const json& c = req.params["client"];
                if (!c.is_string() || c.get<std::string>().size() > proto::kMaxClientName)
                    throw proto::ProtocolError(
                        proto::Error{proto::ErrorCode::invalid_params,
                                     "'client' must be a string of at most " +
                                         std::to_string(proto::kMaxClientName) + " characters",
                                     "params.client"},
                        id);
                names_.remember(identity, c.get<std::string>());
            }
            const json result = backend_.handle(req, source_of(identity));
            reply = proto::encode_result(id, result);
        } catch (const proto::ProtocolError& e) {
            if (!e.id().is_null()) id = e.id();
            reply = proto::encode_error(id, e.error());
            refused(identity, method, "refused: " + e.error().message, e.error().code);
        } catch (const ParamError& e) {
            const proto::Error err{proto::ErrorCode::invalid_params,
                                   (e.field().empty() ? "" : e.field() + ": ") + e.message(),
                                   e.field()};
            reply = proto::encode_error(id, err);
            refused(identity, method, "refused: " + err.message, err.code);
        } catch (const std::exception& e) {
            // A Backend that failed in a way it did not describe (a bug, or a resource
            // gone): the client learns so, and the server goes on serving.
            const proto::Error err{proto::ErrorCode::failed, method + " failed: " + e.what(), ""};
            reply = proto::encode_error(id, err);
            refused(identity, method, std::string("failed: ") + e.what(), err.code);
        }
        std::vector<zmq::const_buffer> out;
        out.push_back(zmq::buffer(identity));
        if (delimited) out.push_back(zmq::const_buffer());
        out.push_back(zmq::buffer(reply));
        try {
            zmq::send_multipart(s_->control, out, zmq::send_flags::dontwait);
        } catch (const zmq::error_t&) {
            // The client went away or does not read: its reply is dropped, nobody waits.
        }
    }
}

// ZAP (RFC 27): admit a CURVE client only when its public key is one of --curve-allow's.
void Server::handle_zap() {
    for (int budget = 0; budget < 64; ++budget) {
        std::vector<zmq::message_t> f;
        zmq::recv_result_t got;
        try {
            got = zmq::recv_multipart(s_->zap, std::back_inserter(f), zmq::recv_flags::dontwait);
        } catch (const zmq::error_t&) {
            return;
        }
        if (!got) return;
        // version, request id, domain, address, identity, mechanism, credentials...
        const std::string request_id = f.size() > 1 ? f[1].to_string() : "";
        bool ok = false;
        if (f.size() >= 7 && f[0].to_string() == "1.0" && f[5].to_string() == "CURVE") {
            const std::string key = f[6].to_string();
            ok = std::find(allowed_keys_.begin(), allowed_keys_.end(), key) != allowed_keys_.end();
        }
        const std::array<std::string, 6> reply = {
            "1.0", request_id, ok ? "200" : "400", ok ? "OK" : "client key not allowed", "", ""};
        std::vector<zmq::const_buffer> out;
        for (const std::string& r : reply)
            out.push_back(zmq::buffer(r));
        try {
            zmq::send_multipart(s_->zap, out);
        } catch (const zmq::error_t&) {
        }
    }
}

proto::Header Server::next_header(const std::string& topic, TimeNs t) {
    std::uint64_t& seq = seq_[topic];
    return proto::Header{instance_id_, seq++, t != 0 ? t : clock_()};
}

void Server::send(const std::string& topic, const json& body) {
    if (!s_->telemetry) return;
    const std::string text = body.dump(-1, ' ', false, json::error_handler_t::replace);
    std::array<zmq::const_buffer, 2> out = {zmq::buffer(topic), zmq::buffer(text)};
    try {
        zmq::send_multipart(s_->telemetry, out, zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
    }
}

proto::StatsMessage Server::publish(proto::StatsMessage m) {
    m.header = next_header(proto::kTopicStats, m.header.t_ns);
    send(proto::kTopicStats, proto::to_json(m));
    return m;
}

proto::DelayMessage Server::publish(proto::DelayMessage m) {
    m.header = next_header(proto::kTopicDelay, m.header.t_ns);
    send(proto::kTopicDelay, proto::to_json(m));
    return m;
}

void Server::event(proto::Event e) {
    e.header = next_header(proto::kTopicEvent, e.header.t_ns);
    send(proto::kTopicEvent, proto::to_json(e));
}

json Server::publish(const std::string& topic, json body) {
    const TimeNs t =
        body.contains("t_ns") && body["t_ns"].is_number_integer() ? body["t_ns"].get<TimeNs>() : 0;
    const proto::Header h = next_header(topic, t);
    body["v"] = proto::kVersion;
    body["instance_id"] = h.instance_id;
    body["seq"] = h.seq;
    body["t_ns"] = h.t_ns;
    send(topic, body);
    return body;
}

std::uint64_t Server::next_seq(const std::string& topic) const {
    const auto it = seq_.find(topic);
    return it == seq_.end() ? 0 : it->second;
}

}  // namespace linkem::control
