// The GUI's connection to linkemd (docs/protocol.md), through the protocol's own client
// (linkem/client.hpp): a control thread owns a client::Control and sends the UI's requests
// one at a time; a telemetry thread owns a client::Subscriber. Both decode what they read
// with the protocol's codecs (linkem/messages.hpp) before anything reaches the UI, and hand
// it over as a Delivery through one queued signal to this object on the UI thread, which
// emits the public signals there and runs the reply callbacks. The UI never waits on the
// network.
//
// The control thread says hello first, then keeps the connection alive by itself: a request
// without a reply within the timeout, or telemetry silence answered by no hello, marks the
// connection lost; it then says hello again (on a fresh socket) until linkemd answers. A new
// `instance_id` (in telemetry or hello) means linkemd restarted: the client says hello again
// and reports it, so the UI reloads the parameters.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>

#include "linkem/messages.hpp"

namespace linkem::gui {

struct Endpoints {
    QString control;    // e.g. tcp://127.0.0.1:7710 or ipc:///run/linkem/control.sock
    QString telemetry;  // e.g. tcp://127.0.0.1:7711
    /// CURVE (docs/protocol.md, section 7): the server's public key file (NAME.key) and the
    /// client's key pair file (NAME.key_secret), ZeroMQ certificate files as `linkemctl
    /// keygen` writes them and linkemd's --curve-secret/--curve-allow read. Both or neither.
    QString server_key_file;
    QString client_cert_file;
};

/// Why a request did not succeed: linkemd's error (its code, message and field), or the
/// client's own: code "timeout" (no reply in time; the message names the endpoint),
/// "disconnected" (not connected, or the connection was lost meanwhile) or "bad_reply" (the
/// result is not what the protocol says).
struct Failure {
    QString code, message, field;
};

/// A reply to one request: the decoded result (a std::shared_ptr<const ResultOf<M>>), or why
/// there is none.
struct Reply {
    bool ok = false;
    std::any result;
    Failure failure;
};

/// One thing the client's threads hand the UI thread.
struct Delivery {
    enum class Kind { reply, state, hello, telemetry, refusal } kind = Kind::telemetry;
    std::uint64_t id = 0;  // reply
    Reply reply;
    int state = 0;  // state: a Client::State
    QString text;   // state: the detail; refusal: why a telemetry message was not taken
    std::shared_ptr<const proto::Hello> hello;
    bool restarted = false;  // hello
    std::shared_ptr<const proto::Telemetry> telemetry;
};

class Client : public QObject {
    Q_OBJECT
  public:
    enum class State { disconnected, connecting, connected, lost };
    Q_ENUM(State)

    explicit Client(QObject* parent = nullptr);
    ~Client() override;

    /// Starts connecting (returns at once; stateChanged and helloReceived follow).
    void connectTo(const Endpoints& endpoints);
    void disconnectFrom();
    State state() const { return state_; }
    /// linkemd's last hello (nullptr before the first).
    const proto::Hello* hello() const { return hello_.get(); }
    /// The number of directions of the linkemd connected to (1 before hello).
    unsigned directions() const { return hello_ ? hello_->directions : 1; }
    QString instanceId() const;

    /// Sends method M with its params; `done` runs on the UI thread with the decoded result,
    /// `failed` with why there is none (a timeout, "disconnected" or linkemd's error), unless
    /// `context` was destroyed meanwhile.
    template <proto::Method M>
    void call(const proto::ParamsOf<M>& params, QObject* context,
              std::function<void(const proto::ResultOf<M>&)> done,
              std::function<void(const Failure&)> failed = {}) {
        using R = proto::ResultOf<M>;
        Decoder decode = [](const nlohmann::json& j) -> std::any {
            return std::make_shared<const R>(proto::decode<R>(j));
        };
        Callback cb = [done = std::move(done), failed = std::move(failed)](const Reply& r) {
            if (r.ok) {
                if (done) done(*std::any_cast<std::shared_ptr<const R>>(r.result));
            } else if (failed) {
                failed(r.failure);
            }
        };
        send(M, proto::to_json(params), std::move(decode), context, std::move(cb));
    }
    template <proto::Method M>
    void call(const proto::ParamsOf<M>& params = {}) {
        call<M>(params, nullptr, {}, {});
    }

    /// How long a request may wait for its reply (default 3000 ms; set_link answers within
    /// about 2 s even when the data plane is slow).
    void setRequestTimeout(int ms);
    /// Telemetry silence after which the client probes with hello (default 2000 ms).
    void setSilenceTimeout(int ms);
    /// Telemetry messages handed to the UI thread and not yet taken there. From 256 on, the
    /// telemetry thread skips stats and delay messages (events still come) until the UI
    /// thread catches up, so a UI that falls behind lags by seconds and what waits for it
    /// stays bounded.
    int telemetryBacklog() const;
    /// The stats and delay messages skipped for that since the client was made.
    std::uint64_t telemetrySkipped() const;

    /// A decoder of one method's result, run on the control thread.
    using Decoder = std::function<std::any(const nlohmann::json&)>;
    using Callback = std::function<void(const Reply&)>;

  signals:
    void stateChanged(linkem::gui::Client::State state, const QString& detail);
    /// Each successful hello. `restarted`: the instance differs from the one before.
    void helloReceived(const linkem::proto::Hello& hello, bool restarted);
    /// One telemetry message of this instance, decoded.
    void telemetry(const linkem::proto::Telemetry& message);
    /// A telemetry message of this instance that the protocol's decoders refused (`why`
    /// names the topic and the key), dropped whole.
    void telemetryRefused(const QString& why);

    /// Emitted on the client's threads for everything they hand over (queued to the UI
    /// thread, which turns it into the signals above and the reply callbacks). A benchmark
    /// may connect to it directly to see when a message arrived.
    void delivered(const linkem::gui::Delivery& d);

  private:
    struct Worker;
    void send(proto::Method method, nlohmann::json params, Decoder decode, QObject* context,
              Callback done);
    void onDelivered(const Delivery& d);

    struct Pending {
        QPointer<QObject> context;
        bool has_context = false;
        Callback done;
    };
    std::unique_ptr<Worker> worker_;
    std::map<std::uint64_t, Pending> pending_;
    std::uint64_t next_id_ = 1;
    State state_ = State::disconnected;
    std::shared_ptr<const proto::Hello> hello_;
};

}  // namespace linkem::gui

Q_DECLARE_METATYPE(linkem::proto::Hello)
Q_DECLARE_METATYPE(linkem::proto::Telemetry)
Q_DECLARE_METATYPE(linkem::gui::Delivery)
