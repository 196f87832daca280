// The status bar: the connection, linkemd's version, its instance_id, uptime,
// params_generation and the link state of each port.
#pragma once

#include <map>
#include <optional>

#include <QObject>
#include <QString>

#include "linkem/messages.hpp"

#include "client.hpp"
#include "linkem/stats.hpp"

class QLabel;
class QStatusBar;

namespace linkem::gui {

class StatusLine : public QObject {
    Q_OBJECT
  public:
    explicit StatusLine(QStatusBar* bar);
    QLabel* label(const QString& name) const;
    void showState(Client::State s, const QString& detail);
    /// hello's result (or null), the newest stats, the generation in force (or none).
    void update(const proto::Hello* hello, bool connected, const std::optional<LinkStats>& stats,
                std::optional<std::uint64_t> generation);

  private:
    std::map<QString, QLabel*> labels_;
};

}  // namespace linkem::gui
