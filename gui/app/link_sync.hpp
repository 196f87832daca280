// The link parameters as linkemd applies them, and the changes the user makes, sent as
// set_link requests: at most one in flight and at most one per `interval` (default 50 ms,
// i.e. ~20 a second while a slider is dragged), always carrying the newest value of each
// field (coalescing). A refused update changes nothing in linkemd; the model keeps the old
// values and reports linkemd's error with the field it names.
#pragma once

#include <cstdint>
#include <set>

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "client.hpp"
#include "linkem/protocol.hpp"

namespace linkem::gui {

/// The link in force (a get_link reply or params_applied body) as LinkConfig (b_to_a as
/// a_to_b in single-port mode); false when it cannot be read.
bool linkOf(const nlohmann::json& applied, LinkConfig& out);

using proto::kDirectionKeys;

class LinkSync : public QObject {
    Q_OBJECT
  public:
    explicit LinkSync(Client& client, QObject* parent = nullptr);

    /// Asks get_link (after hello, after a restart, after another client's change).
    void reload();
    /// Forgets the link (disconnected).
    void clear();

    /// One field of one direction (0 a_to_b, 1 b_to_a) or of both (-1).
    void setField(int direction, const std::string& key, const nlohmann::json& value);
    /// A whole update in set_link's shape (a preset, a scenario): merged into what is
    /// pending, sent at once.
    void setUpdate(const nlohmann::json& params);

    bool valid() const { return applied_.is_object(); }
    /// {"a_to_b": {...}, "b_to_a": {...}} as linkemd applied it.
    const nlohmann::json& applied() const { return applied_; }
    std::uint64_t generation() const { return generation_; }
    /// A value of the direction's parameters in force (null when unknown).
    nlohmann::json value(int direction, const std::string& key) const;
    /// Whether a change of this field waits to be sent or is in flight.
    bool isPending(int direction, const std::string& key) const;

    void setInterval(int ms) { interval_ms_ = ms; }
    std::uint64_t sentCount() const { return sent_; }

  signals:
    /// The parameters in force changed (get_link, set_link results).
    void linkChanged(const nlohmann::json& applied, std::uint64_t generation);
    /// linkemd refused an update: `field` is its dotted path ("a_to_b.jitter_us") or empty.
    void refused(const QString& field, const QString& message);
    /// An update got no answer (timeout, connection lost); linkemd may or may not have it.
    void unanswered(const QString& message);
    /// An update was applied: the keys it set, per direction, for clearing field errors.
    void accepted(const nlohmann::json& update);

  private:
    void schedule();
    void sendNow();
    static void merge(nlohmann::json& into, const nlohmann::json& update);
    static bool has(const nlohmann::json& update, int direction, const std::string& key);
    void adopt(const nlohmann::json& result);

    Client& client_;
    nlohmann::json applied_;
    std::uint64_t generation_ = 0;
    nlohmann::json pending_ = nlohmann::json::object();
    nlohmann::json in_flight_;  // the update being answered, or null
    QElapsedTimer since_send_;
    QTimer timer_;
    int interval_ms_ = 50;
    std::uint64_t sent_ = 0;
};

}  // namespace linkem::gui
