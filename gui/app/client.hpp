// The GUI's connection to linkemd (docs/protocol.md): a client thread owns the ZeroMQ
// sockets (a DEALER for control requests, a SUB for telemetry). Everything it has for the UI
// (replies, state changes, hello, telemetry) travels one way: as a Delivery through one
// queued signal to this object on the UI thread, which emits the public signals there and
// runs the reply callbacks. The UI never waits on the network.
//
// The thread says hello first, then keeps the connection alive by itself: a request without
// a reply within the timeout, or telemetry silence answered by no hello, marks the
// connection lost; it then opens a new control socket and says hello again until linkemd
// answers. A new `instance_id` (in telemetry or hello) means linkemd restarted: the client
// says hello again and reports it, so the UI reloads the parameters.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>

#include <nlohmann/json.hpp>

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

/// A reply to one request: the result, or linkemd's error (code, message, field), or a
/// client-side failure (code "timeout" / "disconnected").
struct Reply {
    bool ok = false;
    nlohmann::json result;
    QString code, message, field;
};

/// One thing the client thread hands the UI thread.
struct Delivery {
    enum class Kind { reply, state, hello, telemetry } kind = Kind::telemetry;
    std::uint64_t id = 0;  // reply
    Reply reply;
    int state = 0;           // state: a Client::State
    QString text;            // state: the detail; telemetry: the topic
    nlohmann::json body;     // hello: the result; telemetry: the message
    bool restarted = false;  // hello
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
    const nlohmann::json& hello() const { return hello_; }
    QString instanceId() const;

    /// Sends a request; `done` runs on the UI thread with the reply (or a timeout / a
    /// "disconnected" error), unless `context` was destroyed meanwhile. Returns the id.
    std::uint64_t request(const QString& method, const nlohmann::json& params, QObject* context,
                          std::function<void(const Reply&)> done);
    std::uint64_t request(const QString& method,
                          const nlohmann::json& params = nlohmann::json::object()) {
        return request(method, params, nullptr, {});
    }

    /// How long a request may wait for its reply (default 3000 ms; set_link answers within
    /// about 2 s even when the data plane is slow).
    void setRequestTimeout(int ms);
    /// Telemetry silence after which the client probes with hello (default 2000 ms).
    void setSilenceTimeout(int ms);

  signals:
    void stateChanged(linkem::gui::Client::State state, const QString& detail);
    /// Each successful hello. `restarted`: the instance differs from the one before.
    void helloReceived(const nlohmann::json& result, bool restarted);
    /// One telemetry message of this instance ("stats", "delay", "event", or others).
    void telemetry(const QString& topic, const nlohmann::json& body);

    /// Emitted on the client thread for everything it hands over (queued to the UI thread,
    /// which turns it into the signals above and the reply callbacks). A benchmark may
    /// connect to it directly to see when a message arrived.
    void delivered(const linkem::gui::Delivery& d);

  private:
    struct Worker;
    void onDelivered(const Delivery& d);

    struct Pending {
        QPointer<QObject> context;
        bool has_context = false;
        std::function<void(const Reply&)> done;
    };
    std::unique_ptr<Worker> worker_;
    std::map<std::uint64_t, Pending> pending_;
    std::uint64_t next_id_ = 1;
    State state_ = State::disconnected;
    nlohmann::json hello_;
};

}  // namespace linkem::gui

Q_DECLARE_METATYPE(nlohmann::json)
Q_DECLARE_METATYPE(linkem::gui::Reply)
Q_DECLARE_METATYPE(linkem::gui::Delivery)
