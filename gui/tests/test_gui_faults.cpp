// Fault: linkem-gui started against an endpoint where nothing listens (docs/reliability.md,
// "Faults as tests"). The window is made as `linkem-gui --control ENDPOINT` makes it; for a
// closed TCP port and an ipc:// path that does not exist, while a 20 ms QTimer counts the
// turns of the event loop:
// - the window says it is not connected (the status line's connection label), holds no link,
//   and a request fails at once with code "disconnected";
// - the event loop keeps turning: over 3 s of wall time, at least 60 of the 150 ticks
//   (a loaded 2-CPU machine delays timers; a blocked loop gives none);
// - closing the window returns within 2 s.
#include <QElapsedTimer>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <memory>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "main_window.hpp"

using namespace linkem;
using namespace linkem::gui;

namespace {
constexpr int kTimeout = 20000;  // generous: the machine may be busy

// A TCP port on 127.0.0.1 where nothing listens (bound once by the OS's choice, then freed).
int closedPort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 1;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}
}  // namespace

class GuiFaultsTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void deadEndpointKeepsTheWindowTurning_data();
    void deadEndpointKeepsTheWindowTurning();
};

void GuiFaultsTest::deadEndpointKeepsTheWindowTurning_data() {
    QTest::addColumn<QString>("control");
    QTest::addColumn<QString>("telemetry");
    static QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString tcp = "tcp://127.0.0.1:";
    QTest::newRow("tcp, closed port")
        << tcp + QString::number(closedPort()) << tcp + QString::number(closedPort());
    QTest::newRow("ipc, no such path") << "ipc://" + dir.path() + "/nobody/control"
                                       << "ipc://" + dir.path() + "/nobody/telemetry";
}

void GuiFaultsTest::deadEndpointKeepsTheWindowTurning() {
    QFETCH(QString, control);
    QFETCH(QString, telemetry);
    int ticks = 0;
    QTimer heartbeat;
    QObject::connect(&heartbeat, &QTimer::timeout, [&] { ++ticks; });
    heartbeat.start(20);

    Options o;
    o.endpoints.control = control;
    o.endpoints.telemetry = telemetry;
    o.use_settings = false;
    auto w = std::make_unique<MainWindow>(o);
    w->client().setRequestTimeout(500);
    w->show();

    // Not connected, and the window says so.
    QTRY_VERIFY_WITH_TIMEOUT(w->client().state() == Client::State::lost, kTimeout);
    QLabel* label = w->statusLabel("connection");
    QVERIFY(label != nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(label->text().contains("lost"), kTimeout);
    QVERIFY(!w->link().valid());
    QString code;
    w->client().call<proto::Method::get_link>({}, w.get(), {},
                                              [&](const Failure& f) { code = f.code; });
    QTRY_VERIFY_WITH_TIMEOUT(!code.isEmpty(), 2000);
    QCOMPARE(code, QString("disconnected"));

    // The event loop turns while the client keeps trying.
    const int before = ticks;
    QElapsedTimer t;
    t.start();
    QTest::qWait(3000);
    const int turned = ticks - before;
    qInfo("%s: %d heartbeat ticks of 20 ms in %lld ms; connection label '%s'", qPrintable(control),
          turned, static_cast<long long>(t.elapsed()), qPrintable(label->text()));
    QVERIFY2(turned >= 60, qPrintable(QString("only %1 ticks in 3 s").arg(turned)));
    QVERIFY(w->client().state() != Client::State::connected);

    // Closing the window does not wait for the dead endpoint.
    t.restart();
    w.reset();
    qInfo("closed in %lld ms", static_cast<long long>(t.elapsed()));
    QVERIFY2(t.elapsed() < 2000, qPrintable(QString("closing took %1 ms").arg(t.elapsed())));
}

QTEST_MAIN(GuiFaultsTest)
#include "test_gui_faults.moc"
