// linkem-gui end to end against the real linkemd (--demo: two DPDK virtual ports and the
// built-in traffic): a slider change in the GUI appears in get_link (asked over ZeroMQ by
// the test itself) and in the delay series the charts plot.
//
// With LINKEM_GUI_SCREENSHOT=FILE.png set, the test also saves the main window once data
// has flowed for a while (scripts/gui-screenshot.sh runs it under Xvfb).
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <zmq.hpp>

#include "charts_bridge.hpp"
#include "direction_panel.hpp"
#include "linkem/protocol.hpp"
#include "main_window.hpp"
#include "readouts.hpp"

using namespace linkem;
using namespace linkem::gui;
using nlohmann::json;

namespace {
constexpr int kTimeout = 60000;

json ask(const std::string& endpoint, const std::string& method) {
    zmq::context_t ctx;
    zmq::socket_t req(ctx, zmq::socket_type::req);
    req.set(zmq::sockopt::linger, 0);
    req.set(zmq::sockopt::rcvtimeo, 10000);
    req.connect(endpoint);
    const std::string body = proto::encode_request(1, method);
    req.send(zmq::buffer(body));
    zmq::message_t reply;
    if (!req.recv(reply)) throw std::runtime_error("no reply to " + method);
    const proto::Reply r = proto::parse_reply(reply.to_string_view());
    if (!r.ok()) throw std::runtime_error(method + ": " + r.error->message);
    return r.result;
}
}  // namespace

class GuiEndToEnd : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void cleanupTestCase();
    void sliderChangeReachesLinkemdAndTheDelaySeries();

  private:
    QTemporaryDir dir_;
    QProcess linkemd_;
    QString control_, telemetry_;
};

void GuiEndToEnd::initTestCase() {
    QVERIFY(dir_.isValid());
    control_ = "ipc://" + dir_.path() + "/control";
    telemetry_ = "ipc://" + dir_.path() + "/telemetry";
    linkemd_.setProcessChannelMode(QProcess::MergedChannels);
    linkemd_.start(
        LINKEMD_PATH,
        {"--demo", "--control", control_, "--telemetry", telemetry_, "--", "--file-prefix",
         QString("linkem_gui_e2e_%1").arg(QCoreApplication::applicationPid())});
    QVERIFY2(linkemd_.waitForStarted(10000), qPrintable(linkemd_.errorString()));
}

void GuiEndToEnd::cleanupTestCase() {
    if (linkemd_.state() != QProcess::NotRunning) {
        linkemd_.terminate();
        if (!linkemd_.waitForFinished(20000)) linkemd_.kill();
    }
    qInfo("linkemd said:\n%s", linkemd_.readAll().right(3000).constData());
    // DPDK keeps the runtime directory of a prefix given on the command line.
    QDir(QString("/var/run/dpdk/linkem_gui_e2e_%1").arg(QCoreApplication::applicationPid()))
        .removeRecursively();
}

void GuiEndToEnd::sliderChangeReachesLinkemdAndTheDelaySeries() {
    Options o;
    o.endpoints.control = control_;
    o.endpoints.telemetry = telemetry_;
    o.use_settings = false;
    MainWindow w(o);
    w.resize(1600, 1000);
    w.show();

    // Delay samples of A→B that arrived after the change.
    double change_t_ns = -1;
    std::vector<double> after;
    int misordered = 0;
    connect(&w.client(), &Client::telemetry, &w, [&](const QString& topic, const json& body) {
        if (topic != "delay" || change_t_ns < 0 || !body.contains("a_to_b")) return;
        const json& s = body["a_to_b"]["samples"];
        for (std::size_t i = 0; i < s["arrival_ns"].size(); ++i)
            if (s["arrival_ns"][i].get<double>() > change_t_ns) {
                after.push_back(s["delay_ns"][i].get<double>());
                // What a delay includes: actual >= scheduled >= the emulated delay.
                if (s["actual_ns"][i].get<double>() < s["scheduled_ns"][i].get<double>() ||
                    s["scheduled_ns"][i].get<double>() < s["delay_ns"][i].get<double>())
                    ++misordered;
            }
    });

    QElapsedTimer t;
    t.start();
    while (t.elapsed() < kTimeout &&
           !(w.client().state() == Client::State::connected && w.link().valid())) {
        if (linkemd_.state() == QProcess::NotRunning)
            QFAIL(qPrintable("linkemd stopped: " + QString::fromUtf8(linkemd_.readAll())));
        QTest::qWait(50);
    }
    QVERIFY2(w.link().valid(), "the GUI did not connect to linkemd");
    QTRY_VERIFY_WITH_TIMEOUT(w.statusLabel("version")->text().startsWith("linkemd "), kTimeout);
    // The demo's link: 20 ms ± 4 ms.
    QCOMPARE(w.panel(0)->control("mean_delay_us")->applied(), 20000.0);

    // Data flows: the readouts have the emulated delay.
    QTRY_VERIFY_WITH_TIMEOUT(w.readouts()->text("emulated_mean", 0).contains("ms"), kTimeout);

    // The change, as a user makes it: type 50 into the A→B mean delay and press Enter.
    QDoubleSpinBox* spin = w.panel(0)->control("mean_delay_us")->spinBox();
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, "50");
    QTest::keyClick(spin, Qt::Key_Return);
    QTRY_COMPARE_WITH_TIMEOUT(w.panel(0)->control("mean_delay_us")->applied(), 50000.0, kTimeout);
    const json link = ask(control_.toStdString(), "get_link");
    QCOMPARE(link["a_to_b"]["mean_delay_us"].get<double>(), 50000.0);
    QCOMPARE(link["b_to_a"]["mean_delay_us"].get<double>(), 20000.0);
    const json stats = ask(control_.toStdString(), "get_stats");
    // Correlation moves the delay to the new mean within a few half-lives (21 ms): take the
    // packets from 200 ms after the change on.
    change_t_ns = stats.value("t_ns", 0.0) + 200e6;

    // The delay series bends: the emulated delay (delay_ns) of the packets that arrived
    // after the change has a mean of 50 ms (jitter 4 ms, correlated). The actual delay adds
    // the spacer's queueing and lateness, which depend on the machine's load. Correlated
    // delays (alpha ~0.997 at 10 000 packets/s) make a short window's mean wander: over 1 s
    // (2000 samples of 10 000 packets) its sd is 4 ms * sqrt((1 + a) / (1 - a) / 10 000),
    // ~1 ms, so the bound is 5 ms: five of those, and 25 ms from the old 20 ms.
    QTRY_VERIFY_WITH_TIMEOUT(after.size() >= 2000, kTimeout);
    double sum = 0;
    for (double x : after)
        sum += x;
    const double mean_ms = sum / after.size() / 1e6;
    qInfo("%zu samples after the change, mean emulated delay %.3f ms", after.size(), mean_ms);
    QVERIFY2(mean_ms > 45 && mean_ms < 55, qPrintable(QString("mean %1 ms").arg(mean_ms)));
    QCOMPARE(misordered, 0);
    QVERIFY(charts_has_points(w.charts()));

    if (const QByteArray path = qgetenv("LINKEM_GUI_SCREENSHOT"); !path.isEmpty()) {
        // Let the 30 s window fill a little more, then grab the window itself.
        spin->clearFocus();
        QTest::qWait(12000);
        QVERIFY(charts_has_points(w.charts()));
        QVERIFY(w.grab().save(QString::fromLocal8Bit(path)));
        qInfo("screenshot saved to %s", path.constData());
    }
}

QTEST_MAIN(GuiEndToEnd)
#include "test_gui_e2e.moc"
