#include "linkem/client.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "linkem/units.hpp"

namespace linkem::client {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string refusal_text(const proto::Error& e) {
    return std::string(proto::to_string(e.code)) + ": " + e.message;
}

void apply_curve(zmq::socket_t& s, const std::optional<CurveOptions>& curve) {
    if (!curve) return;
    s.set(zmq::sockopt::curve_serverkey, curve->server_public_key);
    s.set(zmq::sockopt::curve_publickey, curve->client.public_key);
    s.set(zmq::sockopt::curve_secretkey, curve->client.secret_key);
}

void connect(zmq::socket_t& s, const std::string& endpoint) {
    try {
        s.connect(endpoint);
    } catch (const zmq::error_t& e) {
        throw SetupError("cannot connect to '" + endpoint + "': " + e.what() +
                         " (expected tcp://HOST:PORT or ipc://PATH)");
    }
}

void check_curve(const std::optional<CurveOptions>& curve) {
    if (!curve) return;
    if (!zmq_has("curve")) throw SetupError("this libzmq was built without CURVE");
    if (!curve::valid_z85_key(curve->server_public_key))
        throw SetupError("the server's public key is not a 40-character Z85 key");
    if (!curve::valid_z85_key(curve->client.public_key) ||
        !curve::valid_z85_key(curve->client.secret_key))
        throw SetupError("the client's key pair is not two 40-character Z85 keys");
}

}  // namespace

Refused::Refused(proto::Error e) : ClientError(refusal_text(e)), error_(std::move(e)) {}

// ---------------------------------------------------------------------------- CURVE keys
// The key files are linkem::curve's; its errors are this library's SetupError.
namespace {
template <class F>
auto key_file(F&& f) {
    try {
        return f();
    } catch (const curve::KeyFileError& e) {
        throw SetupError(e.what());
    }
}
}  // namespace

KeyPair generate_key_pair() {
    return key_file([] { return curve::generate_key_pair(); });
}

KeyPair read_certificate(const std::string& path) {
    return key_file([&] { return curve::read_certificate(path); });
}

std::pair<std::string, std::string> write_certificates(const std::string& dir,
                                                       const std::string& name, const KeyPair& keys,
                                                       bool overwrite) {
    return key_file([&] { return curve::write_certificates(dir, name, keys, overwrite); });
}

CurveOptions curve_from_files(const std::string& server_key_file,
                              const std::string& client_secret_file) {
    CurveOptions c;
    c.server_public_key = read_certificate(server_key_file).public_key;
    c.client = read_certificate(client_secret_file);
    if (c.client.secret_key.empty())
        throw SetupError(client_secret_file +
                         ": no secret-key line; give the client's .key_secret file (its .key "
                         "file goes into linkemd's --curve-allow directory)");
    return c;
}

// ------------------------------------------------------------------------------- control
Cancel::Cancel() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) throw SetupError(std::string("eventfd: ") + std::strerror(errno));
}

Cancel::~Cancel() {
    ::close(fd_);
}

void Cancel::cancel() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
}

bool Cancel::cancelled() const {
    zmq::pollitem_t item{nullptr, fd_, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(0));
    return item.revents & ZMQ_POLLIN;
}

struct Control::Socket {
    zmq::context_t& ctx;
    zmq::socket_t sock;
    explicit Socket(zmq::context_t& c) : ctx(c), sock(c, zmq::socket_type::dealer) {}
};

namespace {
// One context per process for every client socket (contexts are thread safe; sockets not).
zmq::context_t& context() {
    static zmq::context_t ctx{1};
    return ctx;
}
}  // namespace

Control::Control(ControlOptions options) : options_(std::move(options)) {
    check_curve(options_.curve);
    if (options_.client_name.size() > proto::kMaxClientName)
        throw SetupError("client name: at most " + std::to_string(proto::kMaxClientName) +
                         " characters");
    open();  // checks the endpoint now; ZeroMQ connects in the background
}

Control::~Control() = default;

void Control::open() {
    auto s = std::make_unique<Socket>(context());
    // Nothing is kept when the socket closes: a request given up on is never sent later.
    s->sock.set(zmq::sockopt::linger, 0);
    s->sock.set(zmq::sockopt::maxmsgsize, proto::kMaxMessageBytes);
    apply_curve(s->sock, options_.curve);
    connect(s->sock, options_.endpoint);
    s_ = std::move(s);
    said_hello_ = false;
    ++connections_;
}

json Control::call(const std::string& method, const json& params,
                   std::chrono::milliseconds timeout) {
    if (options_.cancel && options_.cancel->cancelled())
        throw Cancelled(method + " to " + options_.endpoint + " given up: disconnected");
    if (!s_) open();
    const auto deadline = Clock::now() + timeout;
    try {
        if (!said_hello_ && !options_.client_name.empty() && method != "hello")
            exchange("hello", json{{"client", options_.client_name}}, deadline, method, timeout);
        said_hello_ = true;
        json p = params;
        if (method == "hello" && !options_.client_name.empty() && p.is_object() &&
            !p.contains("client"))
            p["client"] = options_.client_name;
        return exchange(method, p, deadline, method, timeout);
    } catch (const NoAnswer&) {
        s_.reset();  // Lazy Pirate: a fresh socket for the next call
        throw;
    }
}

std::string Control::bad_reply(proto::Method m, const std::string& why) const {
    return "the reply from " + options_.endpoint + " to " + std::string(proto::name(m)) +
           " is not what protocol " + std::to_string(proto::kVersion) + " says: " + why;
}

json Control::exchange(const std::string& method, const json& params, Clock::time_point deadline,
                       const std::string& asked, std::chrono::milliseconds timeout) {
    const std::int64_t id = next_id_++;
    const std::string request = proto::encode_request(id, method, params);
    // DEALER: [""][request], the shape REQ uses, so that the reply comes back alike.
    std::array<zmq::const_buffer, 2> out = {zmq::const_buffer(), zmq::buffer(request)};
    try {
        if (!zmq::send_multipart(s_->sock, out, zmq::send_flags::dontwait))
            throw NoAnswer("no answer from " + options_.endpoint +
                           ": the request could not be queued");
    } catch (const zmq::error_t& e) {
        throw NoAnswer("cannot send to " + options_.endpoint + ": " + e.what());
    }
    for (;;) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) break;
        std::array<zmq::pollitem_t, 2> items{
            {{s_->sock.handle(), 0, ZMQ_POLLIN, 0},
             {nullptr, options_.cancel ? options_.cancel->fd() : -1, ZMQ_POLLIN, 0}}};
        try {
            zmq::poll(items.data(), options_.cancel ? 2 : 1, std::chrono::milliseconds(left));
        } catch (const zmq::error_t& e) {
            if (e.num() == EINTR) continue;
            throw NoAnswer(std::string("waiting for the reply: ") + e.what());
        }
        if (items[1].revents & ZMQ_POLLIN)
            throw Cancelled(asked + " to " + options_.endpoint + " given up: disconnected");
        if (!(items[0].revents & ZMQ_POLLIN)) continue;
        std::vector<zmq::message_t> parts;
        if (!zmq::recv_multipart(s_->sock, std::back_inserter(parts), zmq::recv_flags::dontwait))
            continue;
        // [""][reply] (or [reply] from a server that drops the delimiter).
        if (parts.empty()) continue;
        const zmq::message_t& body = parts.back();
        proto::Reply r;
        try {
            r = proto::parse_reply(body.to_string_view());
        } catch (const proto::ProtocolError& e) {
            throw NoAnswer("the reply from " + options_.endpoint +
                           " is not a protocol reply: " + e.error().message);
        }
        if (r.id != json(id)) {
            if (r.id.is_null() && r.error) throw Refused(*r.error);  // linkemd could not read it
            continue;  // the reply to an earlier request, given up on
        }
        if (r.error) throw Refused(*r.error);
        return r.result;
    }
    throw NoAnswer("no answer from " + options_.endpoint + " to " + asked + " within " +
                   format_duration(timeout.count() * kNsPerMs));
}

// ----------------------------------------------------------------------------- telemetry
struct Subscriber::Socket {
    zmq::socket_t sock;
    explicit Socket(zmq::context_t& c) : sock(c, zmq::socket_type::sub) {}
};

Subscriber::Subscriber(const std::string& endpoint, const std::vector<std::string>& topics,
                       const std::optional<CurveOptions>& curve, int queue)
    : s_(std::make_unique<Socket>(context())) {
    check_curve(curve);
    s_->sock.set(zmq::sockopt::linger, 0);
    s_->sock.set(zmq::sockopt::rcvhwm, queue);
    s_->sock.set(zmq::sockopt::maxmsgsize, proto::kMaxMessageBytes);
    apply_curve(s_->sock, curve);
    if (topics.empty()) s_->sock.set(zmq::sockopt::subscribe, "");
    for (const std::string& t : topics)
        s_->sock.set(zmq::sockopt::subscribe, t);
    connect(s_->sock, endpoint);
}

Subscriber::~Subscriber() = default;

std::optional<TelemetryMessage> Subscriber::receive(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        zmq::pollitem_t item{s_->sock.handle(), 0, ZMQ_POLLIN, 0};
        try {
            zmq::poll(&item, 1, std::chrono::milliseconds(std::max<long long>(left, 0)));
        } catch (const zmq::error_t& e) {
            if (e.num() != EINTR) throw ClientError(std::string("telemetry: ") + e.what());
            if (left <= 0) return std::nullopt;
            continue;
        }
        if (!(item.revents & ZMQ_POLLIN)) {
            if (Clock::now() >= deadline) return std::nullopt;
            continue;
        }
        std::vector<zmq::message_t> parts;
        if (!zmq::recv_multipart(s_->sock, std::back_inserter(parts), zmq::recv_flags::dontwait))
            continue;
        if (parts.size() != 2) {
            ++skipped_;
            continue;
        }
        TelemetryMessage m;
        m.topic = parts[0].to_string();
        try {
            m.body = json::parse(parts[1].to_string_view());
        } catch (const json::exception&) {
            ++skipped_;
            continue;
        }
        if (!m.body.is_object()) {
            ++skipped_;
            continue;
        }
        return m;
    }
}

std::optional<proto::Telemetry> Subscriber::receive_decoded(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        std::optional<TelemetryMessage> m = receive(std::max(left, std::chrono::milliseconds(0)));
        if (!m) return std::nullopt;
        if (auto t = proto::decode_telemetry(m->topic, m->body)) return t;
        if (Clock::now() >= deadline) return std::nullopt;
    }
}

}  // namespace linkem::client
