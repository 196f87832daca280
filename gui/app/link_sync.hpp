// The link parameters as linkemd applies them, and the changes the user makes, sent as
// set_link requests: at most one in flight and at most one per `interval` (default 50 ms,
// i.e. ~20 a second while a slider is dragged), always carrying the newest value of each
// field (coalescing). A refused update changes nothing in linkemd; the model keeps the old
// values and reports linkemd's error with the field it names.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include "client.hpp"
#include "linkem/messages.hpp"

namespace linkem::gui {

using proto::kDirectionKeys;

class LinkSync : public QObject {
    Q_OBJECT
  public:
    explicit LinkSync(Client& client, QObject* parent = nullptr);

    /// Asks get_link (after hello, after a restart, after another client's change).
    void reload();
    /// Forgets the link (disconnected).
    void clear();

    /// One field of one direction (0 a_to_b, 1 b_to_a) or of both (-1), of the class named
    /// `cls` (set_link's `class`; empty or "default": the link's own parameters).
    void setField(int direction, const std::string& key, const FieldValue& value,
                  const std::string& cls = {});
    /// A whole update (a preset, a scenario, a class list): merged into what is pending for
    /// the same class, sent at once. Updates of different classes, and a class list, are
    /// sent one after the other in the order they were made.
    void setUpdate(const proto::LinkUpdate& update);

    bool valid() const { return state_.has_value(); }
    /// The parameters in force (both directions; b_to_a is a_to_b with one); valid() first.
    const LinkConfig& applied() const { return state_->link; }
    unsigned directions() const { return state_ ? state_->directions : 1; }
    std::uint64_t generation() const { return state_ ? state_->params_generation : 0; }
    /// The link's classes in force (empty without classes).
    const std::vector<TrafficClass>& classes() const;
    /// Whether a change of this field (of class `cls`, empty: default) waits to be sent or is
    /// in flight.
    bool isPending(int direction, const std::string& key, const std::string& cls = {}) const;
    /// Whether a new class list waits to be sent or is in flight.
    bool classesPending() const;

    void setInterval(int ms) { interval_ms_ = ms; }
    std::uint64_t sentCount() const { return sent_; }

  signals:
    /// The parameters in force changed (get_link, set_link results).
    void linkChanged(const linkem::LinkConfig& applied, std::uint64_t generation);
    /// linkemd refused an update: `field` is its dotted path ("a_to_b.jitter_us") or empty.
    void refused(const QString& field, const QString& message);
    /// An update got no answer (timeout, connection lost); linkemd may or may not have it.
    void unanswered(const QString& message);
    /// An update was applied (for clearing the errors of the fields it set).
    void accepted(const linkem::proto::LinkUpdate& update);

  private:
    void schedule();
    void sendNow();
    void adopt(const proto::LinkState& state);

    Client& client_;
    std::optional<proto::LinkState> state_;
    void enqueue(proto::LinkUpdate update);
    std::deque<proto::LinkUpdate> pending_;       // oldest first; one class each
    std::optional<proto::LinkUpdate> in_flight_;  // the update being answered
    QElapsedTimer since_send_;
    QTimer timer_;
    int interval_ms_ = 50;
    std::uint64_t sent_ = 0;
};

}  // namespace linkem::gui
