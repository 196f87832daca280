#include "recorder.hpp"

#include <QDateTime>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QStandardPaths>

#include "capture_dialog.hpp"
#include "client.hpp"

namespace linkem::gui {

namespace {
std::int64_t recorderNowMs() {
    return QDateTime::currentMSecsSinceEpoch();
}

capture::StopReason stopReason(const std::string& name) {
    for (auto r :
         {capture::StopReason::stopped, capture::StopReason::duration, capture::StopReason::packets,
          capture::StopReason::write_error, capture::StopReason::shutdown})
        if (name == capture::stop_reason_name(r)) return r;
    return capture::StopReason::none;
}

// A fresh file name for the dialog: /tmp/linkem-20261206-111500.pcapng.
std::string defaultFile() {
    return "/tmp/linkem-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss").toStdString() +
           ".pcapng";
}
}  // namespace

Recorder::Recorder(Client& client, QWidget* window)
    : QObject(window),
      client_(client),
      window_(window),
      wireshark_(QStandardPaths::findExecutable("wireshark")) {
    tick_.setInterval(1000);
    connect(&tick_, &QTimer::timeout, this, &Recorder::changed);
}

RecordPanel* Recorder::makePanel(const QString& prefix, QWidget* parent) {
    auto* p = new RecordPanel(*this, prefix, parent);
    connect(this, &Recorder::changed, p, &RecordPanel::refresh);
    return p;
}

void Recorder::setAvailable(bool available) {
    available_ = available;
    tracker_.clear();
    asking_ = false;
    if (available) askStatus();
    took();
}

void Recorder::setConnected(bool on) {
    connected_ = on;
    if (!on && dialog_) dialog_->setBusy(false);
    emit changed();
}

void Recorder::onStats(const proto::StatsMessage& m) {
    if (!available_) return;
    const capture::Status& c = m.capture;
    tracker_.brief(CaptureBrief{c.running, c.file, c.records, c.bytes, c.missed}, recorderNowMs());
    took();
}

void Recorder::onEvent(const proto::Event& e) {
    if (!available_ || e.kind != "capture" || !e.action) return;
    capture::Status s;
    s.file = e.file.value_or("");
    s.records = e.records.value_or(0);
    s.bytes = e.bytes.value_or(0);
    s.missed = e.capture_missed.value_or(0);
    s.reason = stopReason(e.stop_reason.value_or(""));
    s.error = e.error.value_or("");
    tracker_.event(*e.action, s, recorderNowMs());
    took();
}

void Recorder::took() {
    if (tracker_.needsStatus()) askStatus();
    if (tracker_.running() != tick_.isActive()) {
        if (tracker_.running())
            tick_.start();
        else
            tick_.stop();
    }
    emit changed();
}

void Recorder::askStatus() {
    if (asking_) return;
    asking_ = true;
    client_.call<proto::Method::capture_status>(
        {}, this,
        [this](const capture::Status& s) {
            asking_ = false;
            tracker_.status(s, recorderNowMs());
            took();
        },
        [this](const Failure&) { asking_ = false; });
}

void Recorder::recordClicked() {
    if (tracker_.phase() == CaptureTracker::Phase::recording)
        stop();
    else if (tracker_.phase() == CaptureTracker::Phase::idle)
        openDialog();
}

void Recorder::openDialog() {
    if (!dialog_) {
        dialog_ = new CaptureDialog(window_);
        connect(dialog_, &CaptureDialog::startRequested, this, [this](const capture::Settings& s) {
            tracker_.startSent();
            dialog_->setBusy(true);
            took();
            client_.call<proto::Method::capture_start>(
                s, this,
                [this, file = s.file](const capture::Status& st) {
                    started_file_ = file;
                    tracker_.status(st, recorderNowMs());
                    if (dialog_) {
                        dialog_->setBusy(false);
                        dialog_->accept();
                    }
                    took();
                },
                [this](const Failure& f) {
                    tracker_.startFailed();
                    if (dialog_) {
                        dialog_->setBusy(false);
                        dialog_->showError(f.field, f.message);
                    }
                    took();
                });
        });
    }
    // A fresh file name unless the one there was not recorded to yet.
    CaptureForm f = dialog_->form();
    if (f.file.empty() || f.file == started_file_) {
        f.file = defaultFile();
        dialog_->setForm(f);
    }
    dialog_->showError({}, {});
    dialog_->setBusy(false);
    dialog_->open();
}

void Recorder::stop() {
    tracker_.stopSent();
    took();
    client_.call<proto::Method::capture_stop>(
        {}, this,
        [this](const capture::Status& s) {
            tracker_.status(s, recorderNowMs());
            took();
        },
        [this](const Failure& f) {
            tracker_.stopFailed();
            emit note("warning", "capture_stop failed: " + f.message);
            took();
        });
}

void Recorder::setWiresharkProgram(const QString& program) {
    wireshark_ = program;
    emit changed();
}

QString Recorder::wiresharkDisabledWhy() const {
    if (wireshark_.isEmpty())
        return "Wireshark is not installed on this machine (no wireshark program on the PATH): "
               "install the wireshark package to open captures from here";
    if (tracker_.running()) return "the capture is being recorded: stop it first";
    const QString file = QString::fromStdString(tracker_.finishedFile());
    if (file.isEmpty()) return "no capture recorded yet";
    if (!QFileInfo::exists(file))
        return file + " is not on this machine (linkemd wrote it on its own)";
    return {};
}

void Recorder::openInWireshark() {
    if (!wiresharkDisabledWhy().isEmpty()) return;
    const QString file = QString::fromStdString(tracker_.finishedFile());
    if (!QProcess::startDetached(wireshark_, {file}))
        emit note("warning", "could not start " + wireshark_ + " on " + file);
    else
        emit note("info", "opened " + file + " in Wireshark");
}

// ---------------------------------------------------------------------------- the panel
RecordPanel::RecordPanel(Recorder& recorder, const QString& prefix, QWidget* parent)
    : QWidget(parent), recorder_(recorder) {
    setObjectName(prefix + "record_panel");
    auto* h = new QHBoxLayout(this);
    h->setContentsMargins(0, 0, 0, 0);
    record_ = new QPushButton(this);
    record_->setObjectName(prefix + "record_button");
    status_ = new QLabel(this);
    status_->setObjectName(prefix + "record_status");
    wireshark_ = new QPushButton("Open in &Wireshark", this);
    wireshark_->setObjectName(prefix + "wireshark_button");
    h->addWidget(record_);
    h->addWidget(status_);
    h->addWidget(wireshark_);
    connect(record_, &QPushButton::clicked, &recorder_, &Recorder::recordClicked);
    connect(wireshark_, &QPushButton::clicked, &recorder_, &Recorder::openInWireshark);
    refresh();
}

void RecordPanel::refresh() {
    const CaptureTracker& t = recorder_.tracker();
    const QString text = QString::fromStdString(t.buttonText());
    if (record_->text() != text) record_->setText(text);
    record_->setEnabled(recorder_.available() && recorder_.connected() && t.buttonEnabled());
    record_->setToolTip(
        !recorder_.connected()   ? "not connected to linkemd"
        : !recorder_.available() ? "this linkemd does not record captures (it has no capture_start)"
        : t.running()            ? "stops the capture (capture_stop)"
                                 : "records what the link does to every packet into a pcapng file "
                                   "(capture_start)");
    const QString line = QString::fromStdString(t.line(QDateTime::currentMSecsSinceEpoch()));
    if (status_->text() != line) status_->setText(line);
    status_->setVisible(!line.isEmpty());
    const QString style = t.warning()   ? "color: #b05000; font-weight: bold;"
                          : t.running() ? "color: #c00000;"
                                        : QString();
    if (status_->styleSheet() != style) status_->setStyleSheet(style);
    if (t.last()) {
        const capture::Status& s = *t.last();
        QString tip = QString::fromStdString(
            s.settings.file.empty() ? s.file : describe_settings(s.settings));
        if (!s.error.empty()) tip += "\n" + QString::fromStdString(s.error);
        status_->setToolTip(tip);
    }
    const QString why = recorder_.wiresharkDisabledWhy();
    wireshark_->setEnabled(why.isEmpty());
    wireshark_->setToolTip(why.isEmpty() ? "opens " + QString::fromStdString(t.finishedFile()) +
                                               " in Wireshark"
                                         : why);
}

}  // namespace linkem::gui
