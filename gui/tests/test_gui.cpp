// linkem-gui against a fake linkemd: the real window, the real client thread, the real
// protocol over real ZeroMQ sockets (ipc:// in a temporary directory).
#include <QAction>
#include <QBoxLayout>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include <zmq.h>

#include "charts_bridge.hpp"
#include "direction_panel.hpp"
#include "fake_linkemd.hpp"
#include "linkem/presets.hpp"
#include "main_window.hpp"
#include "param_control.hpp"
#include "readouts.hpp"

using namespace linkem;
using namespace linkem::gui;
using nlohmann::json;

namespace {
constexpr int kTimeout = 20000;  // generous: the machine may be busy

const Preset& preset(const std::string& id) {
    for (const Preset& p : builtin_presets())
        if (p.id == id) return p;
    throw std::runtime_error("no preset " + id);
}

// The link parameters without the seed (a preset or scenario leaves it alone when 0).
LinkParams no_seed(LinkParams p) {
    p.seed = 0;
    return p;
}
}  // namespace

class GuiTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void init();
    void cleanup();
    void cleanupTestCase();

    void sliderScaleIsLogLike();
    void statusBarShowsVersionAndGeneration();
    void spinBoxSendsSetLink();
    void sliderSendsSetLink();
    void draggingIsCoalesced();
    void refusedValueShowsErrorAndKeepsOld();
    void sameBothWays();
    void reconnectsAfterRestart();
    void presetsApply();
    void presetOneDirection();
    void scenarioRoundTrip();
    void badScenarioChangesNothing();
    void userPresetsRoundTrip();
    void readoutsShowAchievedDelay();
    void trafficPanel();
    void chartsGetDataAndExport();
    void projectorModeAndPause();
    void linkPaneNeverCutOff();
    void badEndpointSaysWhy();
    void curveKeys();

  private:
    bool waitLink();
    QTemporaryDir dir_;
    std::unique_ptr<test::FakeLinkemd> fake_;
    std::unique_ptr<MainWindow> w_;
    QString control_, telemetry_;
};

void GuiTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
    control_ = "ipc://" + dir_.path() + "/control";
    telemetry_ = "ipc://" + dir_.path() + "/telemetry";
    fake_ = std::make_unique<test::FakeLinkemd>(control_.toStdString(), telemetry_.toStdString());
    fake_->start();
}

void GuiTest::cleanupTestCase() {
    fake_.reset();
}

bool GuiTest::waitLink() {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < kTimeout) {
        if (w_->client().state() == Client::State::connected && w_->link().valid()) return true;
        QTest::qWait(20);
    }
    return false;
}

void GuiTest::init() {
    Options o;
    o.endpoints.control = control_;
    o.endpoints.telemetry = telemetry_;
    o.use_settings = false;
    w_ = std::make_unique<MainWindow>(o);
    w_->show();
    QVERIFY(waitLink());
    fake_->clear_requests();
}

void GuiTest::cleanup() {
    w_.reset();
    // Back to the defaults for the next test (a new instance: a restart the next window
    // does not see, since it connects afresh).
    fake_->restart(LinkConfig{});
}

void GuiTest::sliderScaleIsLogLike() {
    // mean_delay_us: 0 .. 10 s; position 0 is 0, position 1 is 1 us, the top is 10 s.
    const SliderScale s = SliderScale::make(0, 1e7, 1);
    QVERIFY(s.log);
    QCOMPARE(s.value(0), 0.0);
    QCOMPARE(s.value(1), 1.0);
    QCOMPARE(s.value(s.steps), 1e7);
    // 0.1 ms is reachable within 2 % and sits in the lower third.
    const int p = s.position(100);
    QVERIFY(std::abs(s.value(p) - 100) / 100 < 0.02);
    QVERIFY(p < s.steps / 3);
    // Monotone, and position() inverts value().
    for (int i = 1; i <= s.steps; ++i) {
        QVERIFY(s.value(i) > s.value(i - 1));
        QCOMPARE(s.position(s.value(i)), i);
    }
    // A narrow range is linear.
    QVERIFY(!SliderScale::make(0, 1, 0.5).log);
}

void GuiTest::statusBarShowsVersionAndGeneration() {
    QTRY_VERIFY_WITH_TIMEOUT(w_->statusLabel("version")->text().contains("0.1.0-fake"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(
        w_->statusLabel("instance")->text().contains(QString::fromStdString(fake_->instance_id())),
        kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(w_->statusLabel("generation")->text().contains("generation 0"),
                             kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(w_->statusLabel("port_a")->text().contains("up"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(w_->statusLabel("connection")->text() == "connected", kTimeout);
    // A change raises the generation shown.
    w_->panel(0)->control("mean_delay_us")->spinBox()->setValue(3.0);
    QTRY_VERIFY_WITH_TIMEOUT(w_->statusLabel("generation")->text().contains("generation 1"),
                             kTimeout);
}

void GuiTest::spinBoxSendsSetLink() {
    ParamControl* c = w_->panel(0)->control("mean_delay_us");
    QVERIFY(c);
    c->spinBox()->setValue(20.0);  // ms
    QTRY_VERIFY_WITH_TIMEOUT(!fake_->requests("set_link").empty(), kTimeout);
    const auto r = fake_->requests("set_link").front();
    QCOMPARE(r.params.dump(), json({{"a_to_b", {{"mean_delay_us", 20000.0}}}}).dump());
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.mean_delay, DurationNs{20'000'000}, kTimeout);
    QCOMPARE(fake_->link().b_to_a.mean_delay, DurationNs{0});
    // The value linkemd applied is shown back.
    QTRY_COMPARE_WITH_TIMEOUT(c->applied(), 20000.0, kTimeout);
    QVERIFY(c->findChild<QLabel*>("mean_delay_us_applied")->text().contains("20 ms"));

    // Rate in Mbit/s on screen, bit/s on the wire; B→A's own field.
    w_->panel(1)->control("rate_bps")->spinBox()->setValue(12.5);
    QTRY_VERIFY_WITH_TIMEOUT(fake_->requests("set_link").size() == 2, kTimeout);
    QCOMPARE(fake_->requests("set_link")[1].params.dump(),
             json({{"b_to_a", {{"rate_bps", 12.5e6}}}}).dump());
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().b_to_a.rate_bps, 12.5e6, kTimeout);
}

void GuiTest::sliderSendsSetLink() {
    ParamControl* c = w_->panel(1)->control("jitter_us");
    QSlider* s = c->slider();
    QVERIFY(s);
    s->setFocus();
    QTest::keyClick(s, Qt::Key_PageUp);  // a keyboard move: one page
    QTRY_VERIFY_WITH_TIMEOUT(!fake_->requests("set_link").empty(), kTimeout);
    const json sent = fake_->requests("set_link").back().params;
    QVERIFY(sent.contains("b_to_a") && sent["b_to_a"].contains("jitter_us"));
    const double v = sent["b_to_a"]["jitter_us"].get<double>();
    QVERIFY(v > 0);
    QCOMPARE(v, c->shown());
    QTRY_COMPARE_WITH_TIMEOUT(static_cast<double>(fake_->link().b_to_a.jitter),
                              std::round(v * 1000), kTimeout);
}

void GuiTest::draggingIsCoalesced() {
    ParamControl* c = w_->panel(0)->control("mean_delay_us");
    QSlider* s = c->slider();
    QElapsedTimer t;
    t.start();
    s->setSliderDown(true);
    int moves = 0;
    for (int p = 300; p < 700; p += 2) {  // 200 moves over about 1 s
        s->setValue(p);
        ++moves;
        QTest::qWait(5);
    }
    const double last = c->shown();
    s->setSliderDown(false);
    const double elapsed_s = t.elapsed() / 1000.0;
    QTRY_VERIFY_WITH_TIMEOUT(
        !fake_->requests("set_link").empty() &&
            fake_->requests("set_link").back().params["a_to_b"]["mean_delay_us"] == last,
        kTimeout);
    QTest::qWait(300);  // nothing more may follow
    const auto sent = fake_->requests("set_link");
    qInfo("%d moves in %.2f s -> %zu set_link", moves, elapsed_s, sent.size());
    // Coalesced: fewer requests than moves, when the moves came faster than 20 a second (on
    // a loaded machine the loop itself may take 50 ms a move).
    if (moves > elapsed_s * 20 + 2)
        QVERIFY(sent.size() < static_cast<std::size_t>(moves));
    else
        qInfo(
            "timing bound: skipped (fewer set_link than moves: %d moves took %.2f s, no faster "
            "than the 50 ms interval)",
            moves, elapsed_s);
    // At most one per 50 ms (+1 for the first, sent at once).
    QVERIFY2(sent.size() <= static_cast<std::size_t>(elapsed_s * 20 + 2),
             qPrintable(QString("%1 set_link in %2 s").arg(sent.size()).arg(elapsed_s)));
    // Measured where they arrive (delivery may bunch two a little, never many).
    const double span_ms = static_cast<double>(sent.back().t_ms - sent.front().t_ms);
    QVERIFY2(sent.size() <= static_cast<std::size_t>(span_ms / 50 + 3),
             qPrintable(QString("%1 set_link arrived within %2 ms").arg(sent.size()).arg(span_ms)));
    QCOMPARE(sent.back().params["a_to_b"]["mean_delay_us"].get<double>(), last);
    QTRY_COMPARE_WITH_TIMEOUT(c->applied(), last, kTimeout);
    QCOMPARE(static_cast<double>(fake_->link().a_to_b.mean_delay), std::round(last * 1000));
}

void GuiTest::refusedValueShowsErrorAndKeepsOld() {
    // A spacer needs a rate of at least 1000 bit/s; the rate is 0: linkemd refuses, naming
    // a_to_b.rate_bps, and nothing changes.
    DirectionPanel* p = w_->panel(0);
    QComboBox* limiter = p->combo("limiter");
    QCOMPARE(limiter->currentData().toString(), QString("none"));
    limiter->setCurrentIndex(limiter->findData("spacer"));
    QTRY_VERIFY_WITH_TIMEOUT(!p->control("rate_bps")->error().isEmpty(), kTimeout);
    QVERIFY2(p->control("rate_bps")->error().contains("at least"),
             qPrintable(p->control("rate_bps")->error()));
    QVERIFY(p->control("rate_bps")->findChild<QLabel*>("rate_bps_error")->isVisibleTo(p));
    QVERIFY(p->control("rate_bps")->spinBox()->styleSheet().contains("border"));
    // The old value stays: in linkemd and on screen.
    QCOMPARE(fake_->link().a_to_b.limiter, Limiter::none);
    QTRY_COMPARE_WITH_TIMEOUT(limiter->currentData().toString(), QString("none"), kTimeout);
    QCOMPARE(fake_->generation(), std::uint64_t{0});
    QVERIFY(w_->eventLog()->toPlainText().contains("refused"));

    // A valid rate, then the spacer: accepted, the error goes.
    p->control("rate_bps")->spinBox()->setValue(10.0);
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.rate_bps, 10e6, kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(p->control("rate_bps")->error().isEmpty(), kTimeout);
    limiter->setCurrentIndex(limiter->findData("spacer"));
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.limiter, Limiter::spacer, kTimeout);
}

void GuiTest::sameBothWays() {
    w_->sameBothWays()->setChecked(true);
    QVERIFY(!w_->panel(1)->isEnabled());
    w_->panel(0)->control("jitter_us")->spinBox()->setValue(2.5);
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.jitter, DurationNs{2'500'000}, kTimeout);
    QCOMPARE(fake_->link().b_to_a.jitter, DurationNs{2'500'000});
    const json last = fake_->requests("set_link").back().params;
    QVERIFY2(last.contains("jitter_us") && !last.contains("a_to_b"), last.dump().c_str());
    QTRY_COMPARE_WITH_TIMEOUT(w_->panel(1)->control("jitter_us")->applied(), 2500.0, kTimeout);
}

void GuiTest::reconnectsAfterRestart() {
    const std::string old = fake_->instance_id();
    QSignalSpy hello(&w_->client(), &Client::helloReceived);
    LinkConfig link;
    link.a_to_b.mean_delay = 7 * kNsPerMs;
    link.b_to_a.mean_delay = 9 * kNsPerMs;
    fake_->restart(link);
    QVERIFY(fake_->instance_id() != old);
    QTRY_VERIFY_WITH_TIMEOUT(hello.count() >= 1, kTimeout);
    QCOMPARE(hello.last().at(1).toBool(), true);  // restarted
    QTRY_VERIFY_WITH_TIMEOUT(
        w_->statusLabel("instance")->text().contains(QString::fromStdString(fake_->instance_id())),
        kTimeout);
    // The parameters were reloaded.
    QTRY_COMPARE_WITH_TIMEOUT(w_->panel(0)->control("mean_delay_us")->applied(), 7000.0, kTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(w_->panel(1)->control("mean_delay_us")->applied(), 9000.0, kTimeout);
    QVERIFY(!fake_->requests("get_link").empty());
    QVERIFY(w_->eventLog()->toPlainText().contains("restarted"));
    // And it steers the new instance.
    w_->panel(0)->control("mean_delay_us")->spinBox()->setValue(11.0);
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.mean_delay, DurationNs{11'000'000}, kTimeout);

    // linkemd gone for a while: "lost"; back: connected again by itself.
    fake_->stop();
    w_->client().setSilenceTimeout(500);
    QTRY_VERIFY_WITH_TIMEOUT(w_->client().state() == Client::State::lost, kTimeout);
    fake_->start(link);
    QTRY_VERIFY_WITH_TIMEOUT(w_->client().state() == Client::State::connected, kTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(w_->panel(0)->control("mean_delay_us")->applied(), 7000.0, kTimeout);
}

void GuiTest::presetsApply() {
    const Preset& lte = preset("lte");
    QVERIFY(lte.asymmetric());
    w_->applyPreset(lte, -1);
    QTRY_VERIFY_WITH_TIMEOUT(no_seed(fake_->link().a_to_b) == no_seed(lte.link.a_to_b), kTimeout);
    QCOMPARE(no_seed(fake_->link().b_to_a), no_seed(lte.link.b_to_a));
    QCOMPARE(fake_->link().a_to_b.seed, std::uint64_t{12345});  // the streams went on
    // The controls show it.
    QTRY_COMPARE_WITH_TIMEOUT(w_->panel(1)->control("mean_delay_us")->applied(),
                              lte.link.b_to_a.mean_delay / 1e3, kTimeout);
    // Through the combo box, as a user does it.
    auto* combo = w_->findChild<QComboBox*>("preset_combo");
    auto* apply = w_->findChild<QPushButton*>("preset_apply");
    const auto& all = builtin_presets();
    int geo = -1;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i].id == "geo_satellite") geo = static_cast<int>(i);
    combo->setCurrentIndex(combo->findData(geo));
    QVERIFY(w_->findChild<QLabel*>("preset_info")->text().contains("Source"));
    QTest::mouseClick(apply, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(no_seed(fake_->link().a_to_b) == no_seed(all[geo].link.a_to_b),
                             kTimeout);
    QVERIFY(fake_->link().a_to_b.mean_delay >= 240 * kNsPerMs);
}

void GuiTest::presetOneDirection() {
    const Preset& lte = preset("lte");
    w_->applyPreset(lte, 1);
    QTRY_VERIFY_WITH_TIMEOUT(no_seed(fake_->link().b_to_a) == no_seed(lte.link.b_to_a), kTimeout);
    QCOMPARE(no_seed(fake_->link().a_to_b), LinkParams{});  // A→B untouched
}

void GuiTest::scenarioRoundTrip() {
    const Preset& p = preset("wifi_lossy");
    w_->applyPreset(p, -1);
    QTRY_VERIFY_WITH_TIMEOUT(no_seed(fake_->link().a_to_b) == no_seed(p.link.a_to_b), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(w_->link().applied()["a_to_b"]["loss_model"] == "gilbert_elliott",
                             kTimeout);
    const LinkConfig saved = fake_->link();
    const QString path = dir_.path() + "/scenario.json";
    QCOMPARE(w_->saveScenario(path), QString());
    // The file is linkemd's --config format: what link_file_from_json reads back.
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const json file = json::parse(f.readAll().toStdString());
    QCOMPARE(link_file_from_json(file, 2), saved);
    // Change the link, then open the scenario: the saved link is back (with its seed).
    w_->applyPreset(preset("geo_satellite"), -1);
    QTRY_VERIFY_WITH_TIMEOUT(fake_->link().a_to_b.mean_delay >= 240 * kNsPerMs, kTimeout);
    QCOMPARE(w_->openScenario(path), QString());
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link(), saved, kTimeout);
}

void GuiTest::badScenarioChangesNothing() {
    const QString path = dir_.path() + "/bad.json";
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"a_to_b": {"jitter_us": -5}})");
    f.close();
    const QString err = w_->openScenario(path);
    QVERIFY2(err.contains("a_to_b.jitter_us"), qPrintable(err));
    QVERIFY(w_->openScenario(dir_.path() + "/missing.json").contains("cannot open"));
    QTest::qWait(200);
    QVERIFY(fake_->requests("set_link").empty());
}

void GuiTest::userPresetsRoundTrip() {
    QFile::remove(MainWindow::userPresetsPath());
    w_->panel(0)->control("mean_delay_us")->spinBox()->setValue(33.0);
    QTRY_COMPARE_WITH_TIMEOUT(w_->panel(0)->control("mean_delay_us")->applied(), 33000.0, kTimeout);
    QCOMPARE(w_->saveUserPreset("My lab link"), QString());
    QFile f(MainWindow::userPresetsPath());
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto presets = presets_from_json(json::parse(f.readAll().toStdString()));
    QCOMPARE(presets.size(), std::size_t{1});
    QCOMPARE(presets[0].name, std::string("My lab link"));
    QCOMPARE(presets[0].category, std::string("User"));
    QCOMPARE(presets[0].link, fake_->link());
    // It is offered, and applies.
    auto* combo = w_->findChild<QComboBox*>("preset_combo");
    QVERIFY(combo->findText("User: My lab link") >= 0);
    w_->panel(0)->control("mean_delay_us")->spinBox()->setValue(1.0);
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.mean_delay, DurationNs{1'000'000}, kTimeout);
    w_->applyPreset(presets[0], -1);
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.mean_delay, DurationNs{33'000'000}, kTimeout);
}

void GuiTest::readoutsShowAchievedDelay() {
    w_->panel(0)->control("mean_delay_us")->spinBox()->setValue(40.0);
    QTRY_COMPARE_WITH_TIMEOUT(fake_->link().a_to_b.mean_delay, DurationNs{40'000'000}, kTimeout);
    w_->setWindowSeconds(5);
    // The fake draws normal delays around the mean: after the window has turned over, the
    // emulated mean is within a few % (sd 1 ns: exactly 40 ms).
    QTRY_VERIFY_WITH_TIMEOUT(w_->readouts()->text("target", 0).startsWith("40.000 ms"), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(
        w_->readouts()->text("emulated_mean", 0).startsWith("40.000 ms (+0.0 %)"), 30000);
    QVERIFY(w_->readouts()->text("lateness", 0).contains("1.5 µs"));
    QTRY_VERIFY_WITH_TIMEOUT(w_->readouts()->text("throughput", 0).contains("pkt/s"), kTimeout);
}

void GuiTest::trafficPanel() {
    auto* rate = w_->findChild<QDoubleSpinBox*>("traffic_rate");
    auto* apply = w_->findChild<QPushButton*>("traffic_apply");
    QTRY_VERIFY_WITH_TIMEOUT(rate->isEnabled() && rate->value() > 100, kTimeout);  // 121.44 Mbit/s
    rate->setValue(50);
    QTest::mouseClick(apply, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!fake_->requests("set_traffic").empty(), kTimeout);
    QCOMPARE(fake_->requests("set_traffic").back().params["rate_bps"].get<double>(), 50e6);
}

void GuiTest::chartsGetDataAndExport() {
#if LINKEM_GUI_HAVE_CHARTS
    // The window feeds the charts every delay message: they plot points.
    QTRY_VERIFY_WITH_TIMEOUT(charts_has_points(w_->charts()), kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(w_->charts()->windowStats(0).samples > 0, kTimeout);
    const QString csv = dir_.path() + "/visible.csv";
    QCOMPARE(charts_export_csv(w_->charts(), csv), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines.size() > 2, qPrintable(lines.join('\n')));
    const QString png_dir = dir_.path() + "/png";
    QDir().mkpath(png_dir);
    QCOMPARE(charts_export_png(w_->charts(), png_dir), QString());
    QVERIFY(QFile::exists(png_dir + "/delay.png"));
#else
    QSKIP("built without gui/charts");
#endif
}

void GuiTest::projectorModeAndPause() {
    const qreal before = w_->font().pointSizeF();
    QAction* projector = nullptr;
    QAction* pause = nullptr;
    for (QAction* a : w_->findChildren<QAction*>()) {
        if (a->shortcuts().contains(QKeySequence(Qt::Key_F11))) projector = a;
        if (a->shortcut() == QKeySequence(Qt::Key_Space)) pause = a;
    }
    QVERIFY(projector && pause);
    QVERIFY(projector->shortcuts().contains(QKeySequence("Ctrl+P")));
    projector->trigger();
    QVERIFY(w_->font().pointSizeF() > before * 1.4);
    pause->trigger();
#if LINKEM_GUI_HAVE_CHARTS
    QVERIFY(w_->charts()->projectorMode());
    QVERIFY(w_->charts()->paused());
#endif
    projector->trigger();
    pause->trigger();
    QCOMPARE(w_->font().pointSizeF(), before);
#if LINKEM_GUI_HAVE_CHARTS
    QVERIFY(!w_->charts()->projectorMode());
    QVERIFY(!w_->charts()->paused());
#endif
}

// The Link pane shows both directions whole: side by side where they fit, stacked where
// not (a narrow pane, the projector's large fonts); never a sideways scroll bar.
void GuiTest::linkPaneNeverCutOff() {
    auto* scroll = w_->findChild<QDockWidget*>("link_dock")->findChild<QScrollArea*>();
    QVERIFY(scroll);
    auto* row = scroll->widget()->findChild<QBoxLayout*>("direction_row");
    QVERIFY(row);
    auto cut_off = [&] {
        QApplication::processEvents();
        return scroll->horizontalScrollBar()->maximum() > 0;
    };
    w_->resize(1600, 1000);  // the first layout: both columns side by side
    QTRY_COMPARE_WITH_TIMEOUT(row->direction(), QBoxLayout::LeftToRight, kTimeout);
    QVERIFY(!cut_off());
    auto* dock = w_->findChild<QDockWidget*>("link_dock");
    w_->resizeDocks({dock}, {480}, Qt::Horizontal);
    QTRY_COMPARE_WITH_TIMEOUT(row->direction(), QBoxLayout::TopToBottom, kTimeout);
    QVERIFY(!cut_off());
    w_->resizeDocks({dock}, {1000}, Qt::Horizontal);
    QTRY_COMPARE_WITH_TIMEOUT(row->direction(), QBoxLayout::LeftToRight, kTimeout);
    w_->setProjectorMode(true);
    QTRY_VERIFY_WITH_TIMEOUT(!cut_off(), kTimeout);
    w_->setProjectorMode(false);
}

void GuiTest::badEndpointSaysWhy() {
    QSignalSpy state(&w_->client(), &Client::stateChanged);
    w_->client().connectTo(Endpoints{"localhost:7710", telemetry_, {}, {}});
    QTRY_VERIFY_WITH_TIMEOUT(w_->client().state() == Client::State::disconnected, kTimeout);
    QVERIFY(w_->eventLog()->toPlainText().contains("'localhost:7710' is not a ZeroMQ endpoint"));
    // And back to a good one.
    w_->client().connectTo(Endpoints{control_, telemetry_, {}, {}});
    QTRY_VERIFY_WITH_TIMEOUT(w_->client().state() == Client::State::connected, kTimeout);
}

namespace {
// A ZeroMQ certificate pair as `linkemctl keygen` writes it: NAME.key, NAME.key_secret.
void write_cert(const QString& base) {
    char pub[41], sec[41];
    QVERIFY(zmq_curve_keypair(pub, sec) == 0);
    QFile p(base + ".key"), s(base + ".key_secret");
    QVERIFY(p.open(QIODevice::WriteOnly) && s.open(QIODevice::WriteOnly));
    p.write(QByteArray("metadata\ncurve\n    public-key = \"") + pub + "\"\n");
    s.write(QByteArray("metadata\ncurve\n    public-key = \"") + pub + "\"\n    secret-key = \"" +
            sec + "\"\n");
}
}  // namespace

void GuiTest::curveKeys() {
    // A linkemd that lets in only the client whose public key is in its allow directory.
    const QString d = dir_.path() + "/curve";
    QDir().mkpath(d + "/allow");
    write_cert(d + "/server");
    write_cert(d + "/allow/client");
    test::FakeLinkemd secure(("ipc://" + d + "/c").toStdString(),
                             ("ipc://" + d + "/t").toStdString());
    secure.set_curve((d + "/server.key_secret").toStdString(), (d + "/allow").toStdString());
    secure.start();
    Options o;
    o.endpoints = Endpoints{"ipc://" + d + "/c", "ipc://" + d + "/t", d + "/server.key",
                            d + "/allow/client.key_secret"};
    o.use_settings = false;
    MainWindow w(o);
    QTRY_VERIFY_WITH_TIMEOUT(w.client().state() == Client::State::connected && w.link().valid(),
                             kTimeout);
    // Telemetry arrives encrypted too.
    QTRY_VERIFY_WITH_TIMEOUT(w.readouts()->text("throughput", 0).contains("pkt/s"), kTimeout);
    // A missing key file is said, not crashed on.
    w.client().connectTo(Endpoints{"ipc://" + d + "/c", "ipc://" + d + "/t", d + "/nope.key",
                                   d + "/allow/client.key_secret"});
    QTRY_VERIFY_WITH_TIMEOUT(
        w.eventLog()->toPlainText().contains("nope.key: cannot open the key file"), kTimeout);
}

QTEST_MAIN(GuiTest)
#include "test_gui.moc"
