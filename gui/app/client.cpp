#include "client.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <variant>

#include "linkem/client.hpp"

namespace linkem::gui {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {
// A hello while reconnecting waits at most this long, so that a Disconnect or Connect the
// user gives meanwhile is taken within it.
constexpr milliseconds kReconnectHello{1000};
constexpr milliseconds kRefusedRetry{1000};
// Telemetry handed to the UI thread and not yet taken there: beyond this many the telemetry
// thread skips stats and delay messages (each is superseded by the next; the charts show the
// gap) until the UI thread catches up; events are always handed over. A UI thread that falls
// behind (a busy machine, a long redraw) so lags by seconds, not minutes, and what waits for
// it stays bounded: without the bound a backlog of thousands of messages built up under
// load, and the memory it took stayed with the process (docs/reliability.md, "Soak run").
constexpr int kTelemetryBacklog = 256;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
}  // namespace

// ------------------------------------------------------------------------------ the threads
struct Client::Worker {
    struct Connect {
        Endpoints e;
    };
    struct Disconnect {};
    struct Request {
        std::uint64_t id;
        proto::Method method;
        json params;
        Decoder decode;
    };
    using Command = std::variant<Connect, Disconnect, Request>;

    explicit Worker(Client* owner) : owner_(owner) {
        control_thread_ = std::thread([this] { control_loop(); });
        telemetry_thread_ = std::thread([this] { telemetry_loop(); });
    }
    ~Worker() {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
            if (cancel_) cancel_->cancel();
        }
        cv_.notify_all();
        control_thread_.join();
        telemetry_thread_.join();
    }
    void push(Command c) {
        {
            std::lock_guard lock(mu_);
            // A new connection or a disconnect gives up the call in flight at once.
            if (!std::holds_alternative<Request>(c) && cancel_) cancel_->cancel();
            commands_.push_back(std::move(c));
        }
        cv_.notify_all();
    }
    std::atomic<int> request_timeout_ms{3000};
    std::atomic<int> silence_timeout_ms{2000};
    // Telemetry deliveries the UI thread has not taken yet (kTelemetryBacklog), and the
    // stats and delay messages skipped for them.
    std::atomic<int> telemetry_backlog{0};
    std::atomic<std::uint64_t> skipped{0};

  private:
    // ------------------------------------------------------------------ the control thread
    void control_loop() {
        for (;;) {
            std::optional<Command> c;
            bool wanted = false;
            {
                std::unique_lock lock(mu_);
                cv_.wait_for(lock, milliseconds(50),
                             [&] { return stop_ || !commands_.empty() || hello_wanted_; });
                if (stop_) break;
                if (!commands_.empty()) {
                    c = std::move(commands_.front());
                    commands_.pop_front();
                }
                wanted = std::exchange(hello_wanted_, false);
            }
            if (c)
                std::visit([this](auto& x) { handle(x); }, *c);
            else if (control_)
                housekeeping(wanted);
        }
        close();
    }

    void deliver(Delivery d) { emit owner_->delivered(d); }
    void set_state(State s, const QString& detail) {
        state_ = s;
        Delivery d;
        d.kind = Delivery::Kind::state;
        d.state = static_cast<int>(s);
        d.text = detail;
        deliver(std::move(d));
    }
    void reply(std::uint64_t id, Reply r) {
        Delivery d;
        d.kind = Delivery::Kind::reply;
        d.id = id;
        d.reply = std::move(r);
        deliver(std::move(d));
    }
    void fail(std::uint64_t id, const QString& code, const QString& message,
              const QString& field = {}) {
        reply(id, Reply{false, {}, Failure{code, message, field}});
    }

    void handle(Connect& c) {
        close();
        endpoints_ = c.e;
        std::unique_ptr<client::Subscriber> sub;
        try {
            const bool a = !c.e.server_key_file.isEmpty(), b = !c.e.client_cert_file.isEmpty();
            if (a != b)
                throw std::runtime_error(
                    "CURVE needs both the server's public key file (NAME.key) and the client's "
                    "key pair file (NAME.key_secret)");
            for (const QString* ep : {&c.e.control, &c.e.telemetry})
                if (!(ep->startsWith("tcp://") || ep->startsWith("ipc://") ||
                      ep->startsWith("inproc://")))
                    throw std::runtime_error("'" + ep->toStdString() +
                                             "' is not a ZeroMQ endpoint; allowed tcp://HOST:PORT, "
                                             "ipc://PATH");
            client::ControlOptions o;
            o.endpoint = c.e.control.toStdString();
            if (a)
                o.curve = client::curve_from_files(c.e.server_key_file.toStdString(),
                                                   c.e.client_cert_file.toStdString());
            o.client_name = "linkem-gui " LINKEM_GUI_VERSION;
            o.cancel = std::make_shared<client::Cancel>();
            auto control = std::make_unique<client::Control>(o);
            sub = std::make_unique<client::Subscriber>(c.e.telemetry.toStdString(),
                                                       std::vector<std::string>{}, o.curve, 2000);
            std::lock_guard lock(mu_);
            cancel_ = o.cancel;
            control_ = std::move(control);
        } catch (const std::exception& e) {
            close();
            set_state(State::disconnected, qs(e.what()));
            return;
        }
        hand_over(std::move(sub), "");
        set_state(State::connecting, "connecting to " + c.e.control);
        say_hello(kReconnectHello);
    }
    void handle(Disconnect&) {
        close();
        set_state(State::disconnected, "disconnected");
    }
    void handle(Request& r) {
        if (!control_ || state_ != State::connected) {
            fail(r.id, "disconnected",
                 control_ ? "not connected to linkemd at " + endpoints_.control + " (" +
                                (state_ == State::lost ? "connection lost, reconnecting"
                                                       : "connecting") +
                                ")"
                          : QString("not connected to linkemd"));
            return;
        }
        json result;
        try {
            result = control_->call(r.method, r.params, milliseconds(request_timeout_ms));
        } catch (const client::Refused& e) {
            fail(r.id, qs(std::string(proto::to_string(e.error().code))), qs(e.error().message),
                 qs(e.error().field));
            return;
        } catch (const client::Cancelled& e) {
            fail(r.id, "disconnected", qs(e.what()));
            return;
        } catch (const client::NoAnswer& e) {
            fail(r.id, "timeout", qs(e.what()));
            lost();
            return;
        }
        try {
            reply(r.id, Reply{true, r.decode(result), {}});
        } catch (const std::invalid_argument& e) {
            fail(r.id, "bad_reply",
                 "the reply from " + endpoints_.control + " to " +
                     qs(std::string(proto::name(r.method))) + " is not what protocol " +
                     QString::number(proto::kVersion) + " says: " + qs(e.what()));
        }
    }

    // Lazy Pirate: the requests queued behind one that got no answer are given up; the
    // control connection is opened afresh (client::Control does that after a NoAnswer) and
    // hello tells when linkemd is back.
    void lost() {
        {
            std::lock_guard lock(mu_);
            for (auto it = commands_.begin(); it != commands_.end();) {
                if (auto* r = std::get_if<Request>(&*it)) {
                    fail(r->id, "disconnected", "the connection to linkemd was lost");
                    it = commands_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        if (state_ != State::lost)
            set_state(State::lost, "no answer from " + endpoints_.control + "; reconnecting");
        retry_at_ = Clock::now();
    }

    void say_hello(milliseconds most) {
        last_hello_ = Clock::now();
        const milliseconds timeout = std::min(most, milliseconds(request_timeout_ms));
        try {
            got_hello(control_->call<proto::Method::hello>(
                proto::HelloParams{"linkem-gui " LINKEM_GUI_VERSION}, timeout));
        } catch (const client::Refused& e) {
            set_state(State::lost, "linkemd refused hello: " + qs(e.error().message));
            retry_at_ = Clock::now() + kRefusedRetry;
        } catch (const client::Cancelled&) {
        } catch (const client::NoAnswer&) {
            lost();
        }
    }

    void got_hello(const proto::Hello& h) {
        const bool restarted = !known_instance_.empty() && h.instance_id != known_instance_;
        const bool first = state_ != State::connected || restarted || h.instance_id != instance_;
        instance_ = known_instance_ = h.instance_id;
        {
            std::lock_guard lock(mu_);
            accepted_instance_ = instance_;
        }
        last_telemetry_ms_ = now_ms();
        if (!first) return;
        set_state(State::connected, "connected to " + endpoints_.control);
        Delivery d;
        d.kind = Delivery::Kind::hello;
        d.hello = std::make_shared<const proto::Hello>(h);
        d.restarted = restarted;
        deliver(std::move(d));
    }

    void housekeeping(bool hello_wanted) {
        const auto now = Clock::now();
        if (state_ != State::connected) {
            if (now >= retry_at_) say_hello(kReconnectHello);
            return;
        }
        if (hello_wanted) {
            std::string seen;
            {
                std::lock_guard lock(mu_);
                seen = seen_instance_;
                accepted_instance_.clear();
            }
            // linkemd restarted (or another one took the endpoints): hello again.
            set_state(State::connecting,
                      "linkemd restarted (instance " + qs(seen) + "); saying hello");
            instance_.clear();
            say_hello(milliseconds(request_timeout_ms));
            return;
        }
        const auto silence = milliseconds(silence_timeout_ms);
        if (milliseconds(now_ms() - last_telemetry_ms_) > silence && now - last_hello_ > silence)
            say_hello(milliseconds(request_timeout_ms));  // a probe: still there?
    }

    void close() {
        hand_over(nullptr, "");
        std::lock_guard lock(mu_);
        control_.reset();
        cancel_.reset();
        instance_.clear();
    }

    // ---------------------------------------------------------------- the telemetry thread
    // Gives the telemetry thread its subscriber (nullptr: none) and the instance whose
    // messages it delivers.
    void hand_over(std::unique_ptr<client::Subscriber> sub, const std::string& instance) {
        {
            std::lock_guard lock(mu_);
            next_sub_ = std::move(sub);
            sub_changed_ = true;
            accepted_instance_ = instance;
        }
        tcv_.notify_all();
    }

    void telemetry_loop() {
        std::unique_ptr<client::Subscriber> sub;
        for (;;) {
            {
                std::unique_lock lock(mu_);
                if (!sub)
                    tcv_.wait_for(lock, milliseconds(100), [&] { return stop_ || sub_changed_; });
                if (stop_) break;
                if (sub_changed_) {
                    sub = std::move(next_sub_);  // ZeroMQ: a socket may change threads
                    sub_changed_ = false;
                }
            }
            if (!sub) continue;
            for (int n = 0; n < 200; ++n) {
                std::optional<client::TelemetryMessage> m;
                try {
                    m = sub->receive(milliseconds(n == 0 ? 50 : 0));
                } catch (const client::ClientError&) {
                    break;
                }
                if (!m) break;
                take(*m);
            }
        }
    }

    void take(const client::TelemetryMessage& m) {
        if (telemetry_backlog >= kTelemetryBacklog && m.topic != proto::kTopicEvent) {
            ++skipped;
            return;
        }
        std::shared_ptr<const proto::Telemetry> t;
        QString why;
        proto::Header h;
        try {
            h = proto::decode<proto::Header>(m.body);
        } catch (const std::invalid_argument&) {
            return;  // not linkemd's
        }
        try {
            auto decoded = proto::decode_telemetry(m.topic, m.body);
            if (!decoded) return;  // a topic of a later protocol
            t = std::make_shared<const proto::Telemetry>(std::move(*decoded));
        } catch (const std::invalid_argument& e) {
            why = qs(e.what());
        }
        {
            std::lock_guard lock(mu_);
            if (accepted_instance_.empty()) return;  // not (yet) connected
            if (h.instance_id != accepted_instance_) {
                seen_instance_ = h.instance_id;
                hello_wanted_ = true;
                cv_.notify_all();
                return;
            }
        }
        last_telemetry_ms_ = now_ms();
        ++telemetry_backlog;
        Delivery d;
        if (t) {
            d.kind = Delivery::Kind::telemetry;
            d.telemetry = std::move(t);
        } else {
            d.kind = Delivery::Kind::refusal;
            d.text = why;
        }
        deliver(std::move(d));
    }

    static std::int64_t now_ms() {
        return std::chrono::duration_cast<milliseconds>(Clock::now().time_since_epoch()).count();
    }

    Client* owner_;
    // Shared by the threads, under mu_.
    std::mutex mu_;
    std::condition_variable cv_, tcv_;
    bool stop_ = false;
    std::deque<Command> commands_;
    bool hello_wanted_ = false;
    std::string accepted_instance_, seen_instance_;
    std::unique_ptr<client::Subscriber> next_sub_;
    bool sub_changed_ = false;
    std::shared_ptr<client::Cancel> cancel_;
    std::unique_ptr<client::Control> control_;  // used by the control thread only
    std::atomic<std::int64_t> last_telemetry_ms_{0};
    // The control thread's own.
    Endpoints endpoints_;
    State state_ = State::disconnected;
    std::string instance_, known_instance_;
    Clock::time_point last_hello_{}, retry_at_{};
    std::thread control_thread_, telemetry_thread_;  // last: start after the members above
};

// ------------------------------------------------------------------------------ the UI side
Client::Client(QObject* parent) : QObject(parent) {
    qRegisterMetaType<linkem::proto::Hello>();
    qRegisterMetaType<linkem::proto::Telemetry>();
    qRegisterMetaType<linkem::gui::Client::State>();
    qRegisterMetaType<linkem::gui::Delivery>();
    connect(this, &Client::delivered, this, &Client::onDelivered, Qt::QueuedConnection);
    worker_ = std::make_unique<Worker>(this);
}

Client::~Client() {
    worker_.reset();  // joins the threads before the signals' receivers go
}

QString Client::instanceId() const {
    return hello_ ? QString::fromStdString(hello_->instance_id) : QString();
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

int Client::telemetryBacklog() const {
    return worker_->telemetry_backlog;
}

std::uint64_t Client::telemetrySkipped() const {
    return worker_->skipped;
}

void Client::send(proto::Method method, json params, Decoder decode, QObject* context,
                  Callback done) {
    const std::uint64_t id = next_id_++;
    if (done) pending_[id] = Pending{context, context != nullptr, std::move(done)};
    worker_->push(Worker::Request{id, method, std::move(params), std::move(decode)});
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
            hello_ = d.hello;
            emit helloReceived(*d.hello, d.restarted);
            return;
        case Delivery::Kind::telemetry:
            --worker_->telemetry_backlog;
            // what the thread read before a disconnect is not shown after it
            if (state_ == State::connected) emit telemetry(*d.telemetry);
            return;
        case Delivery::Kind::refusal:
            --worker_->telemetry_backlog;
            if (state_ == State::connected) emit telemetryRefused(d.text);
            return;
    }
}

}  // namespace linkem::gui
