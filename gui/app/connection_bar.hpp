// The connection bar (a tool bar): linkemd's control and telemetry endpoints, Connect /
// Disconnect, the CURVE key files, and the charts' time window.
#pragma once

#include <QToolBar>

#include "client.hpp"

class QComboBox;
class QLineEdit;
class QPushButton;

namespace linkem::gui {

/// The time windows offered, seconds.
inline constexpr int kTimeWindows[] = {1, 2, 5, 10, 30, 60, 120, 300};

class ConnectionBar : public QToolBar {
    Q_OBJECT
  public:
    explicit ConnectionBar(QWidget* parent = nullptr);

    /// The endpoints typed, with the key files chosen in the CURVE dialog.
    Endpoints endpoints() const;
    void setEndpoints(const Endpoints& e);
    /// Connect / Disconnect, as the state allows.
    void showState(Client::State s);
    int windowSeconds() const;
    void setWindowSeconds(int seconds);
    QComboBox* windowCombo() const { return window_; }

  signals:
    void connectRequested();
    void disconnectRequested();
    void windowChosen(int seconds);

  private:
    void curveDialog();

    QLineEdit *control_ = nullptr, *telemetry_ = nullptr;
    QPushButton* connect_ = nullptr;
    QComboBox* window_ = nullptr;
    QString server_key_, client_cert_;
    bool connected_ = false;
};

}  // namespace linkem::gui
