// linkem-gui: the Qt desktop app that tunes a linkemd link live and shows its delay dynamics.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QScreen>
#include <QTimer>

#include <cstring>
#include <memory>

#include "linkem/malloc_policy.hpp"
#include "linkem/messages.hpp"
#include "main_window.hpp"
#include "settings.hpp"

namespace {

// --help and --version print text and need no display (help2man and scripts run them on
// machines without one).
bool text_only(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        for (const char* f : {"-h", "--help", "--help-all", "-?", "-v", "--version"})
            if (std::strcmp(argv[i], f) == 0) return true;
    return false;
}

void name_app() {
    QCoreApplication::setOrganizationName("linkem");
    QCoreApplication::setOrganizationDomain("linkem.org");
    QCoreApplication::setApplicationName("linkem-gui");
    QCoreApplication::setApplicationVersion(LINKEM_GUI_VERSION);
}

}  // namespace

int main(int argc, char** argv) {
    linkem::keep_large_blocks_mapped();
    linkem::use_one_arena();
    std::unique_ptr<QCoreApplication> text_app;
    std::unique_ptr<QApplication> gui_app;
    if (text_only(argc, argv))
        text_app = std::make_unique<QCoreApplication>(argc, argv);
    else
        gui_app = std::make_unique<QApplication>(argc, argv);
    QCoreApplication& app = gui_app ? *gui_app : *text_app;
    name_app();
    QCommandLineParser cli;
    cli.setApplicationDescription(
        "linkem-gui: tunes a linkemd link live (delay, jitter, rate, loss per direction) and shows "
        "its delay dynamics. Talks to linkemd over its control and telemetry sockets "
        "(docs/protocol.md).");
    cli.addHelpOption();
    cli.addVersionOption();
    QCommandLineOption control(
        "control",
        QString("linkemd's control endpoint (default %1)").arg(linkem::proto::kDefaultControl),
        "ENDPOINT");
    QCommandLineOption telemetry(
        "telemetry",
        QString("linkemd's telemetry endpoint (default %1)").arg(linkem::proto::kDefaultTelemetry),
        "ENDPOINT");
    QCommandLineOption server_key("curve-server-key", "CURVE: linkemd's public key file (NAME.key)",
                                  "FILE");
    QCommandLineOption client_cert("curve-secret",
                                   "CURVE: this client's key pair file (NAME.key_secret)", "FILE");
    QCommandLineOption no_connect("no-connect", "do not connect at start");
    QCommandLineOption projector(
        "projector", "open in the stage layout, for a projector (F11 switches layouts)");
    QCommandLineOption desk("desk", "open in the desk layout (the default)");
    cli.addOptions({control, telemetry, server_key, client_cert, no_connect, projector, desk});
    cli.process(app);
    if (!cli.positionalArguments().isEmpty()) {
        fprintf(stderr, "linkem-gui: unexpected argument '%s'; see --help\n",
                qPrintable(cli.positionalArguments().first()));
        return 2;
    }
    for (const QCommandLineOption* o : {&control, &telemetry}) {
        const QString e = cli.value(*o);
        if (cli.isSet(*o) &&
            !(e.startsWith("tcp://") || e.startsWith("ipc://") || e.startsWith("inproc://"))) {
            fprintf(stderr,
                    "linkem-gui: --%s '%s' is not a ZeroMQ endpoint; allowed tcp://HOST:PORT, "
                    "ipc://PATH\n",
                    qPrintable(o->names().first()), qPrintable(e));
            return 2;
        }
    }
    if (!gui_app) return 0;  // cli.process printed the help or version and exited
    QGuiApplication::setDesktopFileName("org.linkem.Gui");
    // The installed icon (hicolor theme) first; else the PNGs compiled in (icons/hicolor).
    QIcon fallback;
    for (int n : {16, 22, 24, 32, 48, 64, 128, 256})
        fallback.addFile(QString(":/icons/org.linkem.Gui-%1.png").arg(n), QSize(n, n));
    QApplication::setWindowIcon(QIcon::fromTheme("org.linkem.Gui", fallback));

    linkem::gui::Options options;
    options.endpoints.control = cli.value(control);
    options.endpoints.telemetry = cli.value(telemetry);
    options.endpoints.server_key_file = cli.value(server_key);
    options.endpoints.client_cert_file = cli.value(client_cert);
    options.connect = !cli.isSet(no_connect);
    if (cli.isSet(projector) && cli.isSet(desk)) {
        fprintf(stderr, "linkem-gui: --projector and --desk exclude each other; give one\n");
        return 2;
    }
    if (cli.isSet(projector)) options.layout = "stage";
    if (cli.isSet(desk)) options.layout = "desk";
    // Within the screen's available area (a projector's 1280x720 too); the window's own
    // geometry from the last run is kept when it fits.
    const QRect avail = QGuiApplication::primaryScreen()->availableGeometry();
    linkem::gui::MainWindow w(options);
    if (linkem::gui::GuiSettings::load().geometry.isEmpty())
        w.resize(std::min(1500, avail.width() - 40), std::min(950, avail.height() - 60));
    w.show();
    // The allocator's free memory handed back once a minute (linkem/malloc_policy.hpp).
    QTimer trim;
    QObject::connect(&trim, &QTimer::timeout, [] { linkem::return_free_memory(); });
    trim.start(std::chrono::milliseconds(linkem::kReturnFreeMemoryEvery));
    return gui_app->exec();
}
