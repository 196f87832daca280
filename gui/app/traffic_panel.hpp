// The Built-in traffic pane: reads and sets linkemd's traffic generator (get_traffic /
// set_traffic) when it runs one (virtual ports: linkemd --demo).
#pragma once

#include <QWidget>

#include "linkem/messages.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace linkem::gui {

class Client;

class TrafficPanel : public QWidget {
    Q_OBJECT
  public:
    explicit TrafficPanel(Client& client, QWidget* parent = nullptr);
    /// After hello: whether this linkemd has built-in traffic (then asks get_traffic).
    void setAvailable(bool available);
    /// Shows get_traffic's / set_traffic's result.
    void showTraffic(const proto::TrafficState& traffic);

  signals:
    /// set_traffic was applied (a new run begins).
    void applied();

  private:
    void send();
    Client& client_;
    QCheckBox* running_ = nullptr;
    QComboBox* pattern_ = nullptr;
    QDoubleSpinBox* rate_ = nullptr;
    QSpinBox* frame_ = nullptr;
    QDoubleSpinBox* period_ = nullptr;
    QLabel* status_ = nullptr;
};

}  // namespace linkem::gui
