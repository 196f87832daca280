#include "client.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <variant>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "linkem/client.hpp"
#include "linkem/protocol.hpp"

namespace linkem::gui {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// ------------------------------------------------------------------------------ the thread
struct Client::Worker {
    struct Connect {
        Endpoints e;
    };
    struct Disconnect {};
    struct Request {
        std::uint64_t id;
        std::string method;
        json params;
    };
    using Command = std::variant<Connect, Disconnect, Request>;

    explicit Worker(Client* owner) : owner_(owner), thread_([this] { run(); }) {}
    ~Worker() {
        stop_ = true;
        cv_.notify_all();
        thread_.join();
    }
    void push(Command c) {
        {
            std::lock_guard lock(mutex_);
            commands_.push_back(std::move(c));
        }
        cv_.notify_all();
    }
    std::atomic<int> request_timeout_ms{3000};
    std::atomic<int> silence_timeout_ms{2000};

  private:
    struct InFlight {
        std::string method;
        Clock::time_point deadline;
        bool internal = false;  // the client's own hello
    };

    void run() {
        while (!stop_) {
            std::deque<Command> cmds;
            {
                std::unique_lock lock(mutex_);
                if (!dealer_ && commands_.empty())
                    cv_.wait_for(lock, std::chrono::milliseconds(100));
                cmds.swap(commands_);
            }
            for (Command& c : cmds)
                std::visit([this](auto& x) { handle(x); }, c);
            if (!dealer_) continue;
            std::array<zmq::pollitem_t, 2> items{
                {{dealer_.handle(), 0, ZMQ_POLLIN, 0}, {sub_.handle(), 0, ZMQ_POLLIN, 0}}};
            try {
                zmq::poll(items.data(), items.size(), std::chrono::milliseconds(5));
            } catch (const zmq::error_t&) {
                continue;
            }
            if (items[0].revents & ZMQ_POLLIN) read_replies();
            if (items[1].revents & ZMQ_POLLIN) read_telemetry();
            housekeeping();
        }
        close();
    }

    void set_state(State s, const QString& detail) {
        state_ = s;
        Delivery d;
        d.kind = Delivery::Kind::state;
        d.state = static_cast<int>(s);
        d.text = detail;
        emit owner_->delivered(d);
    }
    void reply(std::uint64_t id, Reply r) {
        Delivery d;
        d.kind = Delivery::Kind::reply;
        d.id = id;
        d.reply = std::move(r);
        emit owner_->delivered(d);
    }

    void handle(Connect& c) {
        close();
        endpoints_ = c.e;
        curve_ = {};
        try {
            const bool a = !c.e.server_key_file.isEmpty(), b = !c.e.client_cert_file.isEmpty();
            if (a != b)
                throw std::runtime_error(
                    "CURVE needs both the server's public key file (NAME.key) and the client's "
                    "key pair file (NAME.key_secret)");
            if (a) {
                const client::CurveOptions k = client::curve_from_files(
                    c.e.server_key_file.toStdString(), c.e.client_cert_file.toStdString());
                curve_.server = k.server_public_key;  // Z85, as libzmq takes them
                curve_.pub = k.client.public_key;
                curve_.secret = k.client.secret_key;
                curve_.on = true;
            }
            for (const QString* ep : {&c.e.control, &c.e.telemetry})
                if (!(ep->startsWith("tcp://") || ep->startsWith("ipc://") ||
                      ep->startsWith("inproc://")))
                    throw std::runtime_error("'" + ep->toStdString() +
                                             "' is not a ZeroMQ endpoint; allowed tcp://HOST:PORT, "
                                             "ipc://PATH");
            try {
                open_sub();
                open_dealer();
            } catch (const zmq::error_t& e) {
                throw std::runtime_error("cannot connect to '" + c.e.control.toStdString() +
                                         "' / '" + c.e.telemetry.toStdString() + "': " + e.what());
            }
        } catch (const std::exception& e) {
            close();
            set_state(State::disconnected, QString::fromStdString(e.what()));
            return;
        }
        set_state(State::connecting, "connecting to " + c.e.control);
        send_hello();
    }
    void handle(Disconnect&) {
        close();
        set_state(State::disconnected, "disconnected");
    }
    void handle(Request& r) {
        if (!dealer_) {
            reply(r.id, Reply{false, {}, "disconnected", "not connected to linkemd", {}});
            return;
        }
        send(r.id, r.method, r.params, false);
    }

    void secure(zmq::socket_t& s) {
        if (!curve_.on) return;
        s.set(zmq::sockopt::curve_serverkey, curve_.server);
        s.set(zmq::sockopt::curve_publickey, curve_.pub);
        s.set(zmq::sockopt::curve_secretkey, curve_.secret);
    }
    void open_dealer() {
        dealer_ = zmq::socket_t(ctx_, zmq::socket_type::dealer);
        dealer_.set(zmq::sockopt::linger, 0);
        dealer_.set(zmq::sockopt::maxmsgsize, linkem::proto::kMaxMessageBytes);
        secure(dealer_);
        dealer_.connect(endpoints_.control.toStdString());
    }
    void open_sub() {
        sub_ = zmq::socket_t(ctx_, zmq::socket_type::sub);
        sub_.set(zmq::sockopt::linger, 0);
        sub_.set(zmq::sockopt::rcvhwm, 2000);
        secure(sub_);
        sub_.set(zmq::sockopt::subscribe, "");
        sub_.connect(endpoints_.telemetry.toStdString());
    }
    void close() {
        for (auto& [id, f] : in_flight_)
            if (!f.internal)
                reply(id,
                      Reply{false, {}, "disconnected", "the connection to linkemd was closed", {}});
        in_flight_.clear();
        hello_id_ = 0;
        if (dealer_) dealer_.close();
        if (sub_) sub_.close();
        instance_.clear();
    }

    void send(std::uint64_t id, const std::string& method, const json& params, bool internal) {
        const std::string body = linkem::proto::encode_request(id, method, params);
        try {
            dealer_.send(zmq::buffer(body), zmq::send_flags::dontwait);
        } catch (const zmq::error_t&) {
        }
        // A message DEALER could not queue is treated like a lost one: it times out.
        in_flight_[id] = InFlight{
            method, Clock::now() + std::chrono::milliseconds(request_timeout_ms), internal};
    }
    void send_hello() {
        hello_id_ = next_internal_id_--;
        send(hello_id_, "hello", json{{"client", "linkem-gui " LINKEM_GUI_VERSION}}, true);
        last_hello_ = Clock::now();
    }

    void read_replies() {
        for (;;) {
            std::vector<zmq::message_t> parts;
            zmq::recv_result_t got;
            try {
                got = zmq::recv_multipart(dealer_, std::back_inserter(parts),
                                          zmq::recv_flags::dontwait);
            } catch (const zmq::error_t&) {
                return;
            }
            if (!got || parts.empty()) return;
            linkem::proto::Reply r;
            try {
                r = linkem::proto::parse_reply(parts.back().to_string_view());
            } catch (const std::exception&) {
                continue;  // not a reply: ignored
            }
            if (!r.id.is_number_unsigned()) continue;
            const std::uint64_t id = r.id.get<std::uint64_t>();
            const auto it = in_flight_.find(id);
            if (it == in_flight_.end()) continue;  // late reply to a request that timed out
            const InFlight f = it->second;
            in_flight_.erase(it);
            if (f.internal) {
                if (id == hello_id_) got_hello(r);
                continue;
            }
            Reply out;
            out.ok = r.ok();
            if (r.ok()) {
                out.result = std::move(r.result);
            } else {
                out.code =
                    QString::fromStdString(std::string(linkem::proto::to_string(r.error->code)));
                out.message = QString::fromStdString(r.error->message);
                out.field = QString::fromStdString(r.error->field);
            }
            reply(id, std::move(out));
        }
    }

    void got_hello(const linkem::proto::Reply& r) {
        hello_id_ = 0;
        if (!r.ok() || !r.result.is_object() || !r.result.contains("instance_id")) {
            set_state(State::lost,
                      "linkemd refused hello: " +
                          QString::fromStdString(r.error ? r.error->message : "bad result"));
            return;
        }
        const std::string inst = r.result.value("instance_id", "");
        const bool restarted = !known_instance_.empty() && inst != known_instance_;
        const bool first = state_ != State::connected || restarted || inst != instance_;
        instance_ = known_instance_ = inst;
        last_telemetry_ = Clock::now();
        if (first) {
            set_state(State::connected, "connected to " + endpoints_.control);
            Delivery d;
            d.kind = Delivery::Kind::hello;
            d.body = r.result;
            d.restarted = restarted;
            emit owner_->delivered(d);
        }
    }

    void read_telemetry() {
        for (int n = 0; n < 200; ++n) {
            std::vector<zmq::message_t> parts;
            zmq::recv_result_t got;
            try {
                got =
                    zmq::recv_multipart(sub_, std::back_inserter(parts), zmq::recv_flags::dontwait);
            } catch (const zmq::error_t&) {
                return;
            }
            if (!got) return;
            if (parts.size() != 2) continue;
            json body = json::parse(parts[1].to_string_view(), nullptr, false);
            if (!body.is_object() || !body.contains("instance_id") ||
                !body["instance_id"].is_string())
                continue;
            last_telemetry_ = Clock::now();
            const std::string inst = body["instance_id"].get<std::string>();
            if (state_ == State::connected && inst != instance_) {
                // linkemd restarted (or another one took the endpoints): hello again.
                set_state(State::connecting, "linkemd restarted (instance " +
                                                 QString::fromStdString(inst) + "); saying hello");
                instance_.clear();
                if (!hello_id_) send_hello();
                continue;
            }
            if (state_ != State::connected) continue;
            Delivery d;
            d.kind = Delivery::Kind::telemetry;
            d.text = QString::fromStdString(parts[0].to_string());
            d.body = std::move(body);
            emit owner_->delivered(d);
        }
    }

    void housekeeping() {
        const auto now = Clock::now();
        bool lost = false;
        for (auto it = in_flight_.begin(); it != in_flight_.end();) {
            if (now < it->second.deadline) {
                ++it;
                continue;
            }
            lost = true;
            if (!it->second.internal)
                reply(it->first, Reply{false,
                                       {},
                                       "timeout",
                                       QString("no reply from linkemd within %1 ms")
                                           .arg(request_timeout_ms.load()),
                                       {}});
            if (it->first == hello_id_) hello_id_ = 0;
            it = in_flight_.erase(it);
        }
        if (lost) {
            // Lazy Pirate: the old socket may hold requests for a peer that is gone.
            for (auto& [id, f] : in_flight_)
                if (!f.internal)
                    reply(
                        id,
                        Reply{false, {}, "disconnected", "the connection to linkemd was lost", {}});
            in_flight_.clear();
            hello_id_ = 0;
            dealer_.close();
            open_dealer();
            if (state_ != State::lost)
                set_state(State::lost, "no answer from " + endpoints_.control + "; reconnecting");
            send_hello();
            return;
        }
        if (state_ == State::connected && !hello_id_ &&
            now - last_telemetry_ > std::chrono::milliseconds(silence_timeout_ms) &&
            now - last_hello_ > std::chrono::milliseconds(silence_timeout_ms))
            send_hello();  // a probe: still there? (a hello of the same instance is silent)
    }

    Client* owner_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Command> commands_;
    zmq::context_t ctx_{1};
    zmq::socket_t dealer_, sub_;
    Endpoints endpoints_;
    struct {
        bool on = false;
        std::string server, pub, secret;
    } curve_;
    State state_ = State::disconnected;
    std::map<std::uint64_t, InFlight> in_flight_;
    std::uint64_t hello_id_ = 0;
    // The client's own requests count down from the top, the UI's up from 1.
    std::uint64_t next_internal_id_ = UINT64_MAX / 2;
    std::string instance_, known_instance_;
    Clock::time_point last_telemetry_{}, last_hello_{};
    std::thread thread_;  // last: starts after the members above exist
};

// ------------------------------------------------------------------------------ the UI side
Client::Client(QObject* parent) : QObject(parent) {
    qRegisterMetaType<nlohmann::json>();
    qRegisterMetaType<linkem::gui::Reply>();
    qRegisterMetaType<linkem::gui::Client::State>();
    qRegisterMetaType<linkem::gui::Delivery>();
    connect(this, &Client::delivered, this, &Client::onDelivered, Qt::QueuedConnection);
    worker_ = std::make_unique<Worker>(this);
}

Client::~Client() {
    worker_.reset();  // joins the thread before the signals' receivers go
}

QString Client::instanceId() const {
    return QString::fromStdString(hello_.is_object() ? hello_.value("instance_id", "") : "");
}

void Client::connectTo(const Endpoints& e) {
    worker_->push(Worker::Connect{e});
}

void Client::disconnectFrom() {
    worker_->push(Worker::Disconnect{});
}

void Client::setRequestTimeout(int ms) {
    worker_->request_timeout_ms = ms;
}

void Client::setSilenceTimeout(int ms) {
    worker_->silence_timeout_ms = ms;
}

std::uint64_t Client::request(const QString& method, const json& params, QObject* context,
                              std::function<void(const Reply&)> done) {
    const std::uint64_t id = next_id_++;
    if (done) pending_[id] = Pending{context, context != nullptr, std::move(done)};
    worker_->push(Worker::Request{id, method.toStdString(), params});
    return id;
}

void Client::onDelivered(const Delivery& d) {
    switch (d.kind) {
        case Delivery::Kind::reply: {
            const auto it = pending_.find(d.id);
            if (it == pending_.end()) return;
            Pending p = std::move(it->second);
            pending_.erase(it);
            if (p.has_context && !p.context) return;
            p.done(d.reply);
            return;
        }
        case Delivery::Kind::state:
            state_ = static_cast<State>(d.state);
            emit stateChanged(state_, d.text);
            return;
        case Delivery::Kind::hello:
            hello_ = d.body;
            emit helloReceived(d.body, d.restarted);
            return;
        case Delivery::Kind::telemetry:
            // what the thread read before a disconnect is not shown after it
            if (state_ == State::connected) emit telemetry(d.text, d.body);
            return;
    }
}

}  // namespace linkem::gui
