// Recording a capture from linkem-gui against a fake linkemd (docs/gui.md, "Recording a
// capture"): the Record dialog's checks (nothing sent for a bad field), capture_start's
// params as the dialog gives them, linkemd's refusals shown in the dialog (nothing started),
// the status while recording from the stats topic and events, Stop, a capture that ends by
// its duration or was started by another client, and "Open in Wireshark" (enabled only with
// a wireshark program and a finished file here; it runs the program on the file).
#include <QAction>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include "capture_dialog.hpp"
#include "fake_linkemd.hpp"
#include "main_window.hpp"
#include "recorder.hpp"

using namespace linkem;
using namespace linkem::gui;
using nlohmann::json;

namespace {
constexpr int kTimeout = 20000;  // generous: the machine may be busy
}

class CaptureTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void cleanup();
    void cleanupTestCase();

    void buttonsBeforeAnyCapture();
    void badFieldsSendNothing();
    void refusalShownInTheDialog();
    void recordStopAndOpen();
    void durationEndsTheCapture();
    void captureOfAnotherClient();
    void stageShowsTheSame();

  private:
    RecordPanel* panel() const { return w_->recordPanel("desk"); }
    CaptureDialog* openDialog();
    QTemporaryDir dir_;
    std::unique_ptr<test::FakeLinkemd> fake_;
    std::unique_ptr<MainWindow> w_;
    QString control_, telemetry_, wireshark_, opened_;
};

void CaptureTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
    control_ = "ipc://" + dir_.path() + "/control";
    telemetry_ = "ipc://" + dir_.path() + "/telemetry";
    fake_ = std::make_unique<test::FakeLinkemd>(control_.toStdString(), telemetry_.toStdString());
    fake_->start();
    // a stand-in for wireshark: writes the arguments it got
    opened_ = dir_.path() + "/opened.txt";
    wireshark_ = dir_.path() + "/wireshark";
    QFile f(wireshark_);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QString("#!/bin/sh\necho \"$@\" > '%1'\n").arg(opened_).toUtf8());
    f.close();
    QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
}

void CaptureTest::cleanupTestCase() {
    fake_.reset();
}

void CaptureTest::init() {
    Options o;
    o.endpoints.control = control_;
    o.endpoints.telemetry = telemetry_;
    o.use_settings = false;
    w_ = std::make_unique<MainWindow>(o);
    w_->recorder()->setWiresharkProgram(wireshark_);
    w_->show();
    QTRY_VERIFY_WITH_TIMEOUT(panel()->recordButton()->isEnabled(), kTimeout);
    fake_->clear_requests();
}

void CaptureTest::cleanup() {
    w_.reset();
    fake_->restart(LinkConfig{});  // no capture, a new instance
    QFile::remove(opened_);
}

CaptureDialog* CaptureTest::openDialog() {
    QTest::mouseClick(panel()->recordButton(), Qt::LeftButton);
    CaptureDialog* d = w_->recorder()->dialog();
    QElapsedTimer t;
    t.start();
    while (d && !d->isVisible() && t.elapsed() < kTimeout)
        QTest::qWait(20);
    return d && d->isVisible() ? d : nullptr;
}

// Connected, nothing recorded: Record…, no status line, Open in Wireshark disabled saying why
// (no wireshark program at all, or nothing recorded yet).
void CaptureTest::buttonsBeforeAnyCapture() {
    QCOMPARE(panel()->recordButton()->text(), QString("Record…"));
    QVERIFY(!panel()->statusLabel()->isVisible());
    QVERIFY(!panel()->wiresharkButton()->isEnabled());
    QCOMPARE(panel()->wiresharkButton()->toolTip(), QString("no capture recorded yet"));
    w_->recorder()->setWiresharkProgram({});
    QVERIFY(!panel()->wiresharkButton()->isEnabled());
    QVERIFY2(panel()->wiresharkButton()->toolTip().contains("Wireshark is not installed"),
             qPrintable(panel()->wiresharkButton()->toolTip()));
    QVERIFY(w_->recordPanel("desk")->isVisible());
    // linkemd asked what it records, once, at hello
    QTRY_VERIFY_WITH_TIMEOUT(w_->recorder()->tracker().phase() == CaptureTracker::Phase::idle,
                             kTimeout);
}

// The dialog's checks: no file, a relative file, no point: the error in the dialog, which
// stays open; nothing sent.
void CaptureTest::badFieldsSendNothing() {
    CaptureDialog* d = openDialog();
    QVERIFY(d);
    QVERIFY2(d->file()->text().startsWith("/tmp/linkem-") && d->file()->text().endsWith(".pcapng"),
             qPrintable(d->file()->text()));
    QVERIFY(!d->point(capture::Point::in)->isChecked());
    QVERIFY(d->point(capture::Point::out)->isChecked());
    QVERIFY(d->point(capture::Point::drop)->isChecked());
    QCOMPARE(d->snaplen()->value(), 128);
    QVERIFY(d->untilStopped()->isChecked());
    QVERIFY(!d->duration()->isEnabled());

    d->file()->clear();
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QVERIFY2(d->errorText().startsWith("file: no file given"), qPrintable(d->errorText()));
    QVERIFY(d->isVisible());
    d->file()->setText("capture.pcapng");
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QVERIFY2(d->errorText().contains("not an absolute path"), qPrintable(d->errorText()));
    d->file()->setText(dir_.path() + "/x.pcapng");
    d->point(capture::Point::out)->setChecked(false);
    d->point(capture::Point::drop)->setChecked(false);
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QVERIFY2(d->errorText().startsWith("points: no point chosen"), qPrintable(d->errorText()));
    QVERIFY(d->isVisible());
    QTest::qWait(300);
    QVERIFY(fake_->requests("capture_start").empty());
    QCOMPARE(panel()->recordButton()->text(), QString("Record…"));
    d->reject();
}

// linkemd refuses: a file it cannot create (invalid_params naming "file"), a capture already
// running (unavailable): the message in the dialog, the dialog open, nothing started here.
void CaptureTest::refusalShownInTheDialog() {
    CaptureDialog* d = openDialog();
    QVERIFY(d);
    d->file()->setText("/nonexistent-directory/x.pcapng");
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!d->errorText().isEmpty(), kTimeout);
    QVERIFY2(d->errorText().startsWith("file: cannot create /nonexistent-directory/x.pcapng"),
             qPrintable(d->errorText()));
    QVERIFY(d->isVisible());
    QVERIFY(d->startButton()->isEnabled());
    QCOMPARE(fake_->requests("capture_start").size(), std::size_t{1});
    QVERIFY(!fake_->capture_status().running);
    QCOMPARE(panel()->recordButton()->text(), QString("Record…"));

    // another client started one meanwhile
    const std::string other = (dir_.path() + "/other.pcapng").toStdString();
    fake_->handle(proto::Request{1, "capture_start", json{{"file", other}}}, "linkemctl");
    d->file()->setText(dir_.path() + "/mine.pcapng");
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(d->errorText().contains("a capture is running"), kTimeout);
    QVERIFY2(d->errorText().contains(QString::fromStdString(other)), qPrintable(d->errorText()));
    QVERIFY(d->isVisible());
    QCOMPARE(QString::fromStdString(fake_->capture_status().file), QString::fromStdString(other));
    d->reject();
}

// Record with every point, snaplen 256, for 30 s: capture_start's params; the status line
// counts records; Stop (Ctrl+R's action); then Open in Wireshark runs the program on the
// file.
void CaptureTest::recordStopAndOpen() {
    CaptureDialog* d = openDialog();
    QVERIFY(d);
    const QString file = dir_.path() + "/lesson.pcapng";
    d->file()->setText(file);
    d->point(capture::Point::in)->setChecked(true);
    d->snaplen()->setValue(256);
    d->forDuration()->setChecked(true);
    QVERIFY(d->duration()->isEnabled());
    d->duration()->setValue(30);
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!d->isVisible(), kTimeout);
    const auto sent = fake_->requests("capture_start");
    QCOMPARE(sent.size(), std::size_t{1});
    const json& p = sent[0].params;
    QCOMPARE(p["file"].get<std::string>(), file.toStdString());
    QCOMPARE(p["points"], (json{"in", "out", "drop"}));
    QCOMPARE(p["snaplen_bytes"].get<int>(), 256);
    QCOMPARE(p["duration_s"].get<double>(), 30.0);

    QCOMPARE(panel()->recordButton()->text(), QString("Stop recording"));
    QVERIFY(panel()->recordButton()->isEnabled());
    QVERIFY(!panel()->wiresharkButton()->isEnabled());
    QVERIFY2(panel()->wiresharkButton()->toolTip().contains("stop it first"),
             qPrintable(panel()->wiresharkButton()->toolTip()));
    // the stats topic's capture block: records and bytes go up
    QTRY_VERIFY_WITH_TIMEOUT(w_->recorder()->tracker().last()->records >= 300, kTimeout);
    QLabel* line = panel()->statusLabel();
    QVERIFY(line->isVisible());
    QVERIFY2(line->text().startsWith("Recording 0:0") && line->text().contains(" records · ") &&
                 line->text().contains(" kB · ") && line->text().endsWith("0 missed"),
             qPrintable(line->text()));
    QVERIFY2(line->toolTip().contains("in,out,drop, snaplen 256 bytes, for 30 s"),
             qPrintable(line->toolTip()));

    // Ctrl+R is the button's action: here Stop recording
    auto* action = w_->findChild<QAction*>("record_action");
    QVERIFY(action && action->isEnabled());
    QCOMPARE(action->shortcut(), QKeySequence("Ctrl+R"));
    QCOMPARE(action->text(), QString("Stop &recording"));
    action->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(panel()->recordButton()->text(), QString("Record…"), kTimeout);
    QCOMPARE(action->text(), QString("&Record a capture…"));
    QCOMPARE(fake_->requests("capture_stop").size(), std::size_t{1});
    QVERIFY(!fake_->capture_status().running);
    QVERIFY2(line->text().startsWith("Recorded "), qPrintable(line->text()));
    QVERIFY(!line->text().contains("reached"));  // stopped by us
    QVERIFY(panel()->wiresharkButton()->isEnabled());
    QCOMPARE(panel()->wiresharkButton()->toolTip(), "opens " + file + " in Wireshark");
    QTest::mouseClick(panel()->wiresharkButton(), Qt::LeftButton);
    auto opened = [this] {
        QFile f(opened_);
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QString();
    };
    QTRY_COMPARE_WITH_TIMEOUT(opened(), file, kTimeout);

    // the next dialog offers a fresh file, not the one just written
    d = openDialog();
    QVERIFY(d->file()->text() != file);
    QVERIFY(d->errorText().isEmpty());
    d->reject();
}

// A capture for 0.5 s ends by itself: the stats block and the `stopped` event say so, the
// line names the reason.
void CaptureTest::durationEndsTheCapture() {
    CaptureDialog* d = openDialog();
    QVERIFY(d);
    d->file()->setText(dir_.path() + "/short.pcapng");
    d->forDuration()->setChecked(true);
    d->duration()->setValue(0.5);
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(panel()->recordButton()->text(), QString("Stop recording"), kTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(panel()->recordButton()->text(), QString("Record…"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(panel()->statusLabel()->text().endsWith("duration reached"), kTimeout);
    QVERIFY(fake_->requests("capture_stop").empty());
    QVERIFY(panel()->wiresharkButton()->isEnabled());
}

// A capture started by another client (linkemctl): the stats block shows it, the GUI asks
// capture_status for the rest, and its Stop stops it.
void CaptureTest::captureOfAnotherClient() {
    const std::string file = (dir_.path() + "/ctl.pcapng").toStdString();
    fake_->handle(proto::Request{1, "capture_start", json{{"file", file}}}, "linkemctl");
    QTRY_COMPARE_WITH_TIMEOUT(panel()->recordButton()->text(), QString("Stop recording"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(!fake_->requests("capture_status").empty(), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(panel()->statusLabel()->toolTip().contains("out,drop, snaplen 128"),
                             kTimeout);
    QTest::mouseClick(panel()->recordButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(panel()->recordButton()->text(), QString("Record…"), kTimeout);
    QVERIFY(!fake_->capture_status().running);
}

// The stage's strip has its own Record controls showing the same; the desk's tool bar is
// hidden there and back on the desk.
void CaptureTest::stageShowsTheSame() {
    w_->setLayoutNamed("stage");
    RecordPanel* stage = w_->recordPanel("stage");
    QVERIFY(stage->isVisible());
    QVERIFY(!w_->recordPanel("desk")->isVisible());
    QCOMPARE(stage->recordButton()->text(), QString("Record…"));
    QTest::mouseClick(stage->recordButton(), Qt::LeftButton);
    CaptureDialog* d = w_->recorder()->dialog();
    QTRY_VERIFY_WITH_TIMEOUT(d && d->isVisible(), kTimeout);
    d->file()->setText(dir_.path() + "/stage.pcapng");
    QTest::mouseClick(d->startButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(stage->recordButton()->text(), QString("Stop recording"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(stage->statusLabel()->text().startsWith("Recording"), kTimeout);
    QCOMPARE(stage->statusLabel()->text(), panel()->statusLabel()->text());
    QTest::mouseClick(stage->recordButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(stage->recordButton()->text(), QString("Record…"), kTimeout);
    w_->setLayoutNamed("desk");
    QVERIFY(w_->recordPanel("desk")->isVisible());
    QVERIFY(!stage->isVisible());
}

QTEST_MAIN(CaptureTest)
#include "test_gui_capture.moc"
