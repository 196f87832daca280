// Recording a capture from the GUI (docs/gui.md, "Recording a capture"): the Record button,
// its dialog (CaptureDialog), the status while linkemd records (records, bytes, missed,
// elapsed) and "Open in Wireshark" once it stopped. The Recorder sends capture_start,
// capture_stop and capture_status through the client thread and follows the stats topic's
// `capture` block and the `capture` events (CaptureTracker); each RecordPanel (the desk's
// Recording tool bar, the stage's strip) shows it.
#pragma once

#include <vector>

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "capture_dialog.hpp"
#include "capture_model.hpp"
#include "linkem/messages.hpp"

class QLabel;
class QPushButton;

namespace linkem::gui {

class Client;
class RecordPanel;

class Recorder : public QObject {
    Q_OBJECT
  public:
    /// `window`: the dialog's parent.
    Recorder(Client& client, QWidget* window);

    /// A panel of the controls; `prefix` goes before its widgets' object names
    /// ("record_button", "record_status", "wireshark_button").
    RecordPanel* makePanel(const QString& prefix, QWidget* parent);

    /// After hello: whether this linkemd records captures (then asks capture_status).
    void setAvailable(bool available);
    /// The connection is up (true) or not: the Record button works only while it is.
    void setConnected(bool on);
    void onStats(const proto::StatsMessage& m);
    void onEvent(const proto::Event& e);

    /// The Record button: the dialog while idle, capture_stop while recording.
    void recordClicked();
    void openDialog();
    void stop();
    /// Runs Wireshark on the finished capture's file, detached.
    void openInWireshark();

    /// The program "Open in Wireshark" runs: QStandardPaths::findExecutable("wireshark")
    /// at start; tests set another (empty: none found).
    void setWiresharkProgram(const QString& program);
    QString wiresharkProgram() const { return wireshark_; }
    /// Why "Open in Wireshark" is disabled (empty: it is enabled).
    QString wiresharkDisabledWhy() const;

    const CaptureTracker& tracker() const { return tracker_; }
    bool available() const { return available_; }
    bool connected() const { return connected_; }
    /// The dialog (null before the first open).
    CaptureDialog* dialog() const { return dialog_; }

  signals:
    /// The state or figures changed (the panels show them again).
    void changed();
    /// A line for the event log.
    void note(const QString& severity, const QString& text);

  private:
    void askStatus();
    void took();

    Client& client_;
    QWidget* window_;
    QPointer<CaptureDialog> dialog_;
    CaptureTracker tracker_;
    QString wireshark_;
    bool available_ = false, connected_ = false, asking_ = false;
    std::string started_file_;  // the file the last start from here wrote
    QTimer tick_;               // the elapsed time while recording
};

/// The Record button, the status line and "Open in Wireshark", as the Recorder says.
class RecordPanel : public QWidget {
    Q_OBJECT
  public:
    RecordPanel(Recorder& recorder, const QString& prefix, QWidget* parent = nullptr);
    void refresh();
    QPushButton* recordButton() const { return record_; }
    QLabel* statusLabel() const { return status_; }
    QPushButton* wiresharkButton() const { return wireshark_; }

  private:
    Recorder& recorder_;
    QPushButton *record_ = nullptr, *wireshark_ = nullptr;
    QLabel* status_ = nullptr;
};

}  // namespace linkem::gui
