// Both layouts (desk, stage) at 1280x720 and 1920x1080, with telemetry flowing from a fake
// linkemd and events coming in: every label whole (no text cut at its width or height),
// every chart's title, axis titles, tick labels and legend entries whole and apart, every
// widget inside the window; on the desk the delay chart the largest chart, and the largest
// part of a 1920x1080 window; on the stage the delay lanes take at least half the window.
// A capture is being recorded meanwhile: the layout's Record controls and their status line
// are whole too, and so is the Record dialog with an error in it.
// Runs offscreen and under Xvfb (gui/tests/CMakeLists.txt). With LINKEM_GUI_LAYOUT_SHOTS=DIR
// it saves what it checked as DIR/<layout>-<width>x<height>.png.
#include <QChartView>
#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <memory>

#include "capture_dialog.hpp"
#include "chart_renderer.hpp"
#include "charts_panel.hpp"
#include "events_panel.hpp"
#include "fake_linkemd.hpp"
#include "link_controls.hpp"
#include "linkem/scenario_file.hpp"
#include "main_window.hpp"
#include "param_control.hpp"
#include "probes.hpp"
#include "readouts.hpp"
#include "recorder.hpp"
#include "scenario_strip.hpp"
#include "stage_strip.hpp"

using namespace linkem;
using namespace linkem::gui;
using nlohmann::json;

namespace {
constexpr int kTimeout = 30000;

// The window's parts as laid out now, each with its share of the window's area: the charts
// shown (each chart's view; of the small charts in tabs the one shown), the scenario and
// stage strips, and the docks in sight (a dock behind another's tab lies outside the window).
struct WindowPart {
    QString name;
    double share;
};
std::vector<WindowPart> windowParts(MainWindow& w) {
    std::vector<std::pair<QString, QWidget*>> widgets;
    for (ChartRenderer* r : w.charts()->shownRenderers())
        widgets.emplace_back(r->name(), r->view());  // in tabs: the page shown
    widgets.emplace_back("scenario strip", w.scenarioStrip());
    widgets.emplace_back("stage strip", w.stageStrip());
    for (const char* d : {"link", "readouts", "events", "traffic"})
        widgets.emplace_back(QString(d) + " dock", w.dock(d));
    const QRect window = w.rect();
    const double area = static_cast<double>(window.width()) * window.height();
    std::vector<WindowPart> parts;
    for (const auto& [name, widget] : widgets) {
        if (!widget || !widget->isVisibleTo(&w)) continue;
        const QRect r = QRect(widget->mapTo(&w, QPoint(0, 0)), widget->size()).intersected(window);
        if (r.isEmpty()) continue;
        parts.push_back({name, r.width() * r.height() / area});
    }
    return parts;
}

double share(const std::vector<WindowPart>& parts, const QString& name) {
    for (const WindowPart& p : parts)
        if (p.name == name) return p.share;
    return 0;
}

QString largest(const std::vector<WindowPart>& parts) {
    const auto it = std::max_element(
        parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.share < b.share; });
    return it == parts.end() ? QString() : it->name;
}

QString describe(const std::vector<WindowPart>& parts) {
    QStringList s;
    for (const WindowPart& p : parts)
        s << QString("%1 %2 %").arg(p.name).arg(p.share * 100, 0, 'f', 1);
    return s.join(", ");
}
}  // namespace

class LayoutTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void cleanupTestCase();
    void layoutsAreComplete_data();
    void layoutsAreComplete();
    void windowOpensWithinTheScreen();

  private:
    QTemporaryDir dir_;
    std::unique_ptr<test::FakeLinkemd> fake_;
    QString control_, telemetry_;
};

void LayoutTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
    control_ = "ipc://" + dir_.path() + "/control";
    telemetry_ = "ipc://" + dir_.path() + "/telemetry";
    fake_ = std::make_unique<test::FakeLinkemd>(control_.toStdString(), telemetry_.toStdString());
    LinkConfig link;  // linkemd --demo's link
    for (LinkParams* p : {&link.a_to_b, &link.b_to_a}) {
        p->mean_delay = 20 * kNsPerMs;
        p->jitter = 4 * kNsPerMs;
        p->limiter = Limiter::spacer;
        p->rate_bps = 200e6;
        p->loss_model = LossModel::bernoulli;
        p->loss_probability = 0.005;
    }
    fake_->start(link);
}

void LayoutTest::cleanupTestCase() {
    fake_.reset();
}

void LayoutTest::layoutsAreComplete_data() {
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QSize>("size");
    for (const char* layout : {"desk", "stage"})
        for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)})
            QTest::addRow("%s %dx%d", layout, size.width(), size.height())
                << QString(layout) << size;
}

void LayoutTest::layoutsAreComplete() {
    QFETCH(QString, layout);
    QFETCH(QSize, size);
    Options o;
    o.endpoints.control = control_;
    o.endpoints.telemetry = telemetry_;
    o.use_settings = false;
    o.layout = layout;
    MainWindow w(o);
    w.show();
    w.resize(size);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.relayout();  // the layout's first arrangement for this size
    QCOMPARE(w.layoutName(), layout);
    // Data in every chart and readout, and the warnings a busy machine gives.
    QTRY_VERIFY_WITH_TIMEOUT(w.link().valid(), kTimeout);
    QTest::qWait(300);
    // The charts have the space: on the desk the delay chart takes the largest share of a
    // 1920x1080 window, at least 30 %, and at least 17 % of a 1280x720 one (the window as it
    // opens, before a scenario is loaded).
    const std::vector<WindowPart> opened = windowParts(w);
    qInfo("%s %dx%d without a scenario: %s", qPrintable(layout), size.width(), size.height(),
          qPrintable(describe(opened)));
    if (layout == "desk") {
        const bool wide = size.width() >= 1920;
        QString msg = describe(opened);
        QVERIFY2(share(opened, "delay") >= (wide ? 0.30 : 0.17), qPrintable(msg));
        if (wide) QVERIFY2(largest(opened) == "delay", qPrintable(msg));
    }
    // A scenario loaded and playing: the strip under the charts, with the built-in that
    // touches the most parameters.
    std::optional<Scenario> most;
    std::size_t lanes = 0;
    for (const auto& b : builtin_scenarios()) {
        ScenarioTimeline t;
        const auto s = builtin_scenario(b.name);
        QVERIFY(s);
        proto::ScenarioStatus status;
        status.loaded = true;
        status.scenario = *s;
        QVERIFY(t.setStatus(status, fake_->link(), 2));
        if (t.lanes().size() > lanes) {
            lanes = t.lanes().size();
            most = s;
        }
    }
    QVERIFY(most);
    proto::ScenarioStatus status;
    status.loaded = true;
    status.position = {most->name, "playing", 12.5, static_cast<double>(most->duration) / 1e9,
                       0,          1};
    status.scenario = *most;
    w.scenarioStrip()->showStatus(status);
    QVERIFY(w.scenarioStrip()->isVisible());
    for (int i = 0; i < 5; ++i)
        for (const char* dir : {"a_to_b", "b_to_a"}) {
            proto::Event e = proto::Event::warning(
                "stall",
                std::string("warning: direction ") + dir +
                    ": the data plane did not run for 12.345 ms in 66 stall(s) since the last "
                    "report (longest since start 9.775 ms): packets arriving or due then left "
                    "up to that late (README: \"Stalls\")");
            e.direction = dir;
            e.stall_ns = 12'345'000;
            e.stalls = 66;
            e.longest_stall_ns = 9'775'000;
            fake_->queue_event(e);
        }
    // a capture running (started by another client, as linkemctl would)
    fake_->handle(proto::Request{0, "capture_stop", json::object()}, "linkemctl");
    const std::string capture_file = (dir_.path() + "/layout.pcapng").toStdString();
    fake_->handle(proto::Request{1, "capture_start", json{{"file", capture_file}}}, "linkemctl");
    RecordPanel* record = w.recordPanel(layout);
    QTRY_VERIFY_WITH_TIMEOUT(record->statusLabel()->text().contains(" records · "), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(
        pointsDrawn(*w.charts(), layout == "desk" ? "delay.measured" : "delay.b_to_a.measured") > 0,
        kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(
        w.readouts()->text("emulated_mean", 1, Readouts::since_change).contains("ms"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(w.readouts()->text("drops", 1).contains("·"), kTimeout);
    if (layout == "stage")
        QTRY_VERIFY_WITH_TIMEOUT(
            w.stageStrip()->sinceChange("loss_probability")->text().contains("%"), kTimeout);
    QTest::qWait(1200);  // drops drawn, the histogram counted, the layout settled
    QCOMPARE(w.size(), size);

    const std::vector<WindowPart> parts = windowParts(w);
    qInfo("%s %dx%d: %s", qPrintable(layout), size.width(), size.height(),
          qPrintable(describe(parts)));
    if (layout == "desk") {
        // With the scenario strip under the charts the delay chart is still the largest chart
        // (in tabs: no smaller than the one shown), at least 20 % of a 1920x1080 window and
        // 13 % of a 1280x720 one.
        const bool wide = size.width() >= 1920;
        QVERIFY2(share(parts, "delay") >= (wide ? 0.20 : 0.13), qPrintable(describe(parts)));
        for (const WindowPart& p : parts)
            if (p.name == "histogram" || p.name == "throughput" || p.name == "drops")
                QVERIFY2(p.share <= share(parts, "delay"), qPrintable(describe(parts)));
    }
    QStringList problems = windowTextProblems(&w);
    // the strip's timeline has room for three rows or more (all if fewer), 12 pixels each
    ScenarioTimelineView* view = w.scenarioStrip()->view();
    const int rows = view->rowsShown();
    const int row_px = (view->height() - view->fontMetrics().height() - 8) / std::max(1, rows);
    if (rows < std::min(3, view->rows()) || row_px < 12)
        problems << QString("the scenario strip shows %1 of %2 rows, %3 pixels each")
                        .arg(rows)
                        .arg(view->rows())
                        .arg(row_px);
    if (const QByteArray dir = qgetenv("LINKEM_GUI_LAYOUT_SHOTS"); !dir.isEmpty()) {
        QDir().mkpath(QString::fromLocal8Bit(dir));
        w.grab().save(QString("%1/%2-%3x%4.png")
                          .arg(QString::fromLocal8Bit(dir), layout)
                          .arg(size.width())
                          .arg(size.height()));
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    QVERIFY(record->isVisible() && record->statusLabel()->isVisible());
    QVERIFY(record->recordButton()->text() == "Stop recording");
    QCOMPARE(w.recordPanel("desk")->isVisible(), layout == "desk");

    // the Record dialog, with linkemd's longest refusal in it, within the window
    fake_->handle(proto::Request{2, "capture_stop", json::object()}, "linkemctl");
    QTRY_COMPARE_WITH_TIMEOUT(record->recordButton()->text(), QString("Record…"), kTimeout);
    w.recorder()->openDialog();
    CaptureDialog* dialog = w.recorder()->dialog();
    QTRY_VERIFY_WITH_TIMEOUT(dialog->isVisible(), kTimeout);
    dialog->showError("file",
                      "file: cannot create /var/lib/linkem/captures/lesson-3/"
                      "a-rather-long-name-for-a-capture.pcapng: Permission denied");
    QTest::qWait(200);
    const QStringList dialog_problems = windowTextProblems(dialog);
    if (const QByteArray dir = qgetenv("LINKEM_GUI_LAYOUT_SHOTS"); !dir.isEmpty())
        dialog->grab().save(QString("%1/%2-%3x%4-record-dialog.png")
                                .arg(QString::fromLocal8Bit(dir), layout)
                                .arg(size.width())
                                .arg(size.height()));
    QVERIFY2(dialog_problems.isEmpty(), qPrintable(dialog_problems.join("\n")));
    QVERIFY2(dialog->width() <= size.width() && dialog->height() <= size.height(),
             qPrintable(QString("the dialog is %1x%2").arg(dialog->width()).arg(dialog->height())));
    dialog->reject();

    if (layout == "stage") {
        // The delay lanes take at least half the window (with the scenario strip under them,
        // the lanes and the strip); both are shown, one per direction.
        int lanes = 0;
        for (const char* name : {"delay.a_to_b", "delay.b_to_a"}) {
            QWidget* v = w.charts()->renderer(name)->view();
            QVERIFY(v->isVisible());
            lanes += v->width() * v->height();
        }
        lanes += w.scenarioStrip()->width() * w.scenarioStrip()->height();
        const double share = static_cast<double>(lanes) / (size.width() * size.height());
        QVERIFY2(
            share >= 0.5,
            qPrintable(
                QString("the delay lanes take %1 % of the window").arg(share * 100, 0, 'f', 1)));
        // the five large sliders, and the set -> since-the-change figures beside them
        for (const char* key : StageStrip::kKeys) {
            QVERIFY(w.stageStrip()->control(key)->isVisible());
            QVERIFY(!w.stageStrip()->sinceChange(key)->text().isEmpty());
        }
    }
}

// The window opens within the screen's available area, whatever size it asks for.
void LayoutTest::windowOpensWithinTheScreen() {
    Options o;
    o.connect = false;
    o.use_settings = false;
    MainWindow w(o);
    w.resize(4000, 3000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QRect avail = w.screen()->availableGeometry();
    QVERIFY2(avail.contains(w.frameGeometry()),
             qPrintable(QString("frame %1,%2 %3x%4 on a screen of %5x%6")
                            .arg(w.frameGeometry().x())
                            .arg(w.frameGeometry().y())
                            .arg(w.frameGeometry().width())
                            .arg(w.frameGeometry().height())
                            .arg(avail.width())
                            .arg(avail.height())));
}

QTEST_MAIN(LayoutTest)
#include "test_gui_layouts.moc"
