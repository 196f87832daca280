#include "main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QStatusBar>
#include <QVBoxLayout>

#include "chart_export.hpp"
#include "chart_style.hpp"
#include "charts_panel.hpp"
#include "charts_profile.hpp"
#include "classes_panel.hpp"
#include "connection_bar.hpp"
#include "direction_panel.hpp"
#include "events_panel.hpp"
#include "link_controls.hpp"
#include "linkem/link_params.hpp"
#include "linkem/messages.hpp"
#include "preset_controller.hpp"
#include "readouts.hpp"
#include "recorder.hpp"
#include "scenario_strip.hpp"
#include "settings.hpp"
#include "stage_strip.hpp"
#include "status_line.hpp"
#include "teaching.hpp"
#include "traffic_panel.hpp"
#include "window_layout.hpp"

namespace linkem::gui {

namespace {
std::int64_t wallMs() {
    return QDateTime::currentMSecsSinceEpoch();
}

// A delay lane's header while one class is shown, or all of a link with classes: the class
// ("all classes"), the direction, its target (one class's only: the classes have their own)
// and the delay its packets got in the window shown.
QString classLaneText(int d, const QString& cls, const ChartStore& store,
                      std::pair<std::int64_t, std::int64_t> range, bool one_class) {
    const ChartStore::Direction& D = store.shown(d);
    QString text = QString("<b>%1</b> · <b>%2</b>").arg(cls.toHtmlEscaped(), directionLabel(d));
    if (one_class && !D.targets.empty())
        text += QString(" · set %1 ± %2 ms")
                    .arg(D.targets.back().mean_us / 1e3, 0, 'f', 2)
                    .arg(D.targets.back().jitter_us / 1e3, 0, 'f', 2);
    const RunningStats a = D.samples.actual(range.first, range.second);
    text += a.count > 0 ? QString(" → <b>%1 ± %2 ms</b> actual in the window (n %3)")
                              .arg(a.mean() / 1e6, 0, 'f', 2)
                              .arg(a.jitter() / 1e6, 0, 'f', 2)
                              .arg(a.count)
                        : QString(" → no samples of the class in the window");
    return text;
}

QScrollArea* scrolled(QWidget* w, QWidget* parent) {
    auto* s = new QScrollArea(parent);
    s->setWidgetResizable(true);
    s->setFrameShape(QFrame::NoFrame);
    s->setWidget(w);
    return s;
}
}  // namespace

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent), options_(options), sync_(client_) {
    setObjectName("linkem_main_window");
    setWindowTitle("linkem");
    desk_ = std::make_unique<DeskLayout>();
    stage_ = std::make_unique<StageLayout>();
    bar_ = new ConnectionBar(this);
    addToolBar(bar_);
    recorder_ = new Recorder(client_, this);
    buildCentral();
    buildDocks();
    status_ = new StatusLine(statusBar());
    presets_ = new PresetController(sync_, *controls_, this);
    teaching_ = new Teaching(sync_, *charts_, this);
    buildMenus();
    buildControls(link_schema(), 2);
    wire();
    presets_->load();

    refresh_.setInterval(250);
    connect(&refresh_, &QTimer::timeout, this, &MainWindow::refresh);
    refresh_.start();

    QString layout = options_.layout;
    if (options_.use_settings) {
        readSettings();
        if (layout.isEmpty()) layout = GuiSettings::load().layout;
    }
    Endpoints e = bar_->endpoints();
    if (!options_.endpoints.control.isEmpty()) e.control = options_.endpoints.control;
    if (!options_.endpoints.telemetry.isEmpty()) e.telemetry = options_.endpoints.telemetry;
    if (!options_.endpoints.server_key_file.isEmpty() ||
        !options_.endpoints.client_cert_file.isEmpty()) {
        e.server_key_file = options_.endpoints.server_key_file;
        e.client_cert_file = options_.endpoints.client_cert_file;
    }
    if (e.control.isEmpty()) e.control = proto::kDefaultControl;
    if (e.telemetry.isEmpty()) e.telemetry = proto::kDefaultTelemetry;
    bar_->setEndpoints(e);
    onState(Client::State::disconnected, "not connected");
    setLayoutNamed(layout == "stage" ? "stage" : "desk");
    if (options_.connect) connectNow();
}

MainWindow::~MainWindow() = default;

// ---------------------------------------------------------------------------- assembling
void MainWindow::buildCentral() {
    auto* central = new QWidget(this);
    central->setObjectName("central");
    auto* v = new QVBoxLayout(central);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(2);
    charts_ = new ChartsPanel(model_.store(), central);
    strip_ = new StageStrip(model_.readouts(), central);
    scenario_ = new ScenarioStrip(client_, sync_, model_, central);
    stage_record_panel_ = recorder_->makePanel("stage_", strip_);
    strip_->setRecordPanel(stage_record_panel_);
    v->addWidget(charts_, 1);
    v->addWidget(strip_);
    v->addWidget(scenario_);
    setCentralWidget(central);
}

void MainWindow::buildDocks() {
    setDockNestingEnabled(true);
    // the bottom docks span the whole width, under the Link pane too
    setCorner(Qt::BottomLeftCorner, Qt::BottomDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::BottomDockWidgetArea);
    auto dock = [this](const char* title, const char* name, QWidget* w) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        return d;
    };
    controls_ = new LinkControls(this);
    link_dock_ = dock("Link", "link_dock", controls_);
    readouts_ = new Readouts(model_.readouts(), this);
    readouts_dock_ = dock("Readouts", "readouts_dock", scrolled(readouts_, this));
    events_ = new EventsPanel(model_.events(), this);
    events_dock_ = dock("Events", "events_dock", scrolled(events_, this));
    traffic_ = new TrafficPanel(client_, this);
    traffic_dock_ = dock("Built-in traffic", "traffic_dock", scrolled(traffic_, this));
}

void MainWindow::buildControls(const LinkSchema& schema, int directions) {
    schema_ = schema;
    directions_ = directions;
    controls_->build(schema, directions);
    strip_->build(schema, directions);
    teaching_->setSchema(schema);
    presets_->setDirections(directions);
    readouts_->setDirections(directions);
    charts_->setDirections(directions > 1 ? charts_->directions() : 1);
    if (sync_.valid()) onLink(sync_.applied(), sync_.generation());
}

void MainWindow::buildMenus() {
    auto* file = menuBar()->addMenu("&File");
    file->addAction("&Connect", QKeySequence("Ctrl+Shift+C"), this, &MainWindow::connectNow);
    file->addAction("&Disconnect", this, [this] { client_.disconnectFrom(); });
    file->addSeparator();
    file->addAction("&Open link file…", QKeySequence::Open, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, "Open link file", {},
                                                          "linkemd config (*.json);;All files (*)");
        if (path.isEmpty()) return;
        const QString err = presets_->openLinkFile(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Open link file", err);
    });
    file->addAction("&Save link file…", QKeySequence::Save, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, "Save link file", "link.json",
                                                          "linkemd config (*.json)");
        if (path.isEmpty()) return;
        const QString err = presets_->saveLinkFile(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Save link file", err);
    });
    file->addSeparator();
    // Ctrl+R: the Record button's action in either layout (the dialog, or Stop recording).
    auto* record = file->addAction("&Record a capture…", QKeySequence("Ctrl+R"), recorder_,
                                   &Recorder::recordClicked);
    record->setObjectName("record_action");
    connect(recorder_, &Recorder::changed, record, [this, record] {
        const CaptureTracker& t = recorder_->tracker();
        record->setText(t.running() ? "Stop &recording" : "&Record a capture…");
        record->setEnabled(recorder_->available() && recorder_->connected() && t.buttonEnabled());
    });
    file->addSeparator();
    file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);

    auto* edit = menuBar()->addMenu("&Edit");
    undo_action_ = edit->addAction("&Undo the last change of the link", QKeySequence::Undo, this,
                                   [this] { undo(); });
    undo_action_->setObjectName("undo_action");

    presets_->fillMenu(menuBar()->addMenu("&Presets"), this);
    teaching_->fillMenu(menuBar()->addMenu("&Teaching"));
    scenario_->fillMenu(menuBar()->addMenu("&Scenario"));

    auto* view = menuBar()->addMenu("&View");
    pause_action_ = view->addAction("&Pause charts");
    pause_action_->setCheckable(true);
    pause_action_->setShortcut(QKeySequence(Qt::Key_Space));
    pause_action_->setShortcutContext(Qt::WindowShortcut);
    connect(pause_action_, &QAction::toggled, this, &MainWindow::setPaused);
    stage_action_ = view->addAction("&Stage layout (for a projector)");
    stage_action_->setObjectName("stage_action");
    stage_action_->setCheckable(true);
    stage_action_->setShortcuts({QKeySequence(Qt::Key_F11), QKeySequence("Ctrl+P")});
    // From the menu or the keys the stage also fills the screen (a projector's), and the
    // desk comes back in the window as it was.
    connect(stage_action_, &QAction::toggled, this, [this](bool on) {
        if (on) before_stage_ = windowState();
        setLayoutNamed(on ? "stage" : "desk");
        // Leaving, only the full screen is undone (unless the window had it before): a
        // window maximized meanwhile, or a stage opened by --projector, keeps its state.
        const Qt::WindowStates rest = windowState() & ~Qt::WindowFullScreen;
        setWindowState(on ? (windowState() | Qt::WindowFullScreen)
                          : rest | (before_stage_ & Qt::WindowFullScreen));
    });
    view->addSeparator();
    const std::pair<QDockWidget*, Qt::Key> keys[] = {{link_dock_, Qt::Key_F2},
                                                     {readouts_dock_, Qt::Key_F3},
                                                     {events_dock_, Qt::Key_F4},
                                                     {traffic_dock_, Qt::Key_F5}};
    for (const auto& [d, key] : keys) {
        QAction* a = d->toggleViewAction();
        a->setShortcut(QKeySequence(key));
        view->addAction(a);
    }
    auto* all = view->addAction("All five &charts");
    all->setObjectName("all_charts_action");
    all->setShortcut(QKeySequence(Qt::Key_F6));
    connect(all, &QAction::triggered, this, [this] {
        charts_->setArrangement(charts_->arrangement() == ChartsPanel::Arrangement::desk
                                    ? ChartsPanel::Arrangement::lanes
                                    : ChartsPanel::Arrangement::desk);
    });
    auto* side = view->addAction("Delay lanes side &by side");
    connect(side, &QAction::triggered, this,
            [this] { charts_->setArrangement(ChartsPanel::Arrangement::side_by_side); });

    auto* exp = menuBar()->addMenu("E&xport");
    exp->addAction("Visible data as &CSV…", this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, "Export CSV", "linkem.csv", "CSV (*.csv)");
        if (path.isEmpty()) return;
        const QString err = exportCsv(path);
        if (!err.isEmpty())
            QMessageBox::warning(this, "Export CSV", err);
        else
            note("info", "exported the visible data to " + path);
    });
    exp->addAction("Charts as &PNG…", this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, "Export PNGs into");
        if (dir.isEmpty()) return;
        const QString err = exportPng(dir);
        if (!err.isEmpty())
            QMessageBox::warning(this, "Export PNG", err);
        else
            note("info", "exported the charts as PNG into " + dir);
    });

    // The desk's Record controls at the menu bar's end, where the menus leave room even in a
    // 1280-pixel window (the stage has its own in its strip).
    record_panel_ = recorder_->makePanel({}, menuBar());
    menuBar()->setCornerWidget(record_panel_, Qt::TopRightCorner);
    // The menu bar sizes its corner once: again when the controls' width changes.
    connect(recorder_, &Recorder::changed, this, [this, hint = QSize()]() mutable {
        if (record_panel_->sizeHint() == hint) return;
        hint = record_panel_->sizeHint();
        menuBar()->setCornerWidget(record_panel_, Qt::TopRightCorner);
    });

    auto* help = menuBar()->addMenu("&Help");
    help->addAction("&About linkem-gui", this, [this] {
        QMessageBox::about(this, "linkem-gui",
                           QString("linkem-gui %1: tunes a linkemd link live and shows its delay "
                                   "dynamics.\nProtocol version %2 (docs/protocol.md).")
                               .arg(LINKEM_GUI_VERSION)
                               .arg(proto::kVersion));
    });
}

void MainWindow::wire() {
    connect(&client_, &Client::stateChanged, this, &MainWindow::onState);
    connect(&client_, &Client::helloReceived, this, &MainWindow::onHello);
    connect(&client_, &Client::telemetry, this, &MainWindow::onTelemetry);
    connect(&client_, &Client::telemetryRefused, this,
            [this](const QString& why) { onTelemetryTaken(model_.refuse(why.toStdString())); });
    connect(&sync_, &LinkSync::linkChanged, this, &MainWindow::onLink);
    connect(&sync_, &LinkSync::refused, this, [this](const QString& field, const QString& message) {
        if (field.startsWith("classes") || field == "class")
            controls_->classes()->showRefusal(field, message);
        else
            controls_->showRefusal(field, message);
        note("warning",
             "set_link refused: " + (field.isEmpty() ? QString() : field + ": ") + message);
        statusBar()->showMessage("linkemd refused: " + message, 8000);
    });
    connect(&sync_, &LinkSync::accepted, controls_, &LinkControls::clearErrors);
    connect(&sync_, &LinkSync::unanswered, this,
            [this](const QString& m) { note("warning", "set_link not answered: " + m); });
    connect(bar_, &ConnectionBar::connectRequested, this, &MainWindow::connectNow);
    connect(bar_, &ConnectionBar::disconnectRequested, &client_, &Client::disconnectFrom);
    connect(bar_, &ConnectionBar::windowChosen, this, &MainWindow::setWindowSeconds);
    connect(controls_, &LinkControls::edited, this, &MainWindow::onEdited);
    connect(controls_->classes(), &ClassesPanel::applyRequested, this,
            [this](const std::vector<TrafficClass>& classes) {
                beforeChange("classes");
                proto::LinkUpdate u;
                u.classes = classes;
                sync_.setUpdate(u);
            });
    connect(controls_->classes(), &ClassesPanel::sliderClassChanged, this,
            &MainWindow::setSliderClass);
    connect(strip_, &StageStrip::sliderClassChosen, this, &MainWindow::setSliderClass);
    connect(controls_->sameBothWays(), &QCheckBox::toggled, this, &MainWindow::onSameToggled);
    connect(strip_, &StageStrip::edited, this, &MainWindow::onEdited);
    connect(presets_, &PresetController::changing, this, &MainWindow::beforeChange);
    connect(teaching_, &Teaching::changing, this, &MainWindow::beforeChange);
    connect(teaching_, &Teaching::comparing, this, [this](int s) {
        if (!compare_) compare_ = Comparison{bar_->windowSeconds(), s};
        compare_->shown_s = s;
        setWindowSeconds(s);
    });
    connect(teaching_, &Teaching::endRequested, this, &MainWindow::endComparison);
    connect(charts_, &ChartsPanel::arrangementChanged, this, [this](ChartsPanel::Arrangement a) {
        if (a != ChartsPanel::Arrangement::side_by_side) endComparison();
    });
    auto line = [this](const QString& severity, const QString& text) { note(severity, text); };
    connect(presets_, &PresetController::note, this, line);
    connect(teaching_, &Teaching::note, this, line);
    connect(scenario_, &ScenarioStrip::note, this, line);
    connect(recorder_, &Recorder::note, this, line);
    connect(scenario_, &ScenarioStrip::targetsChanged, charts_, &ChartsPanel::linkChanged);
}

// ---------------------------------------------------------------------------- connection
void MainWindow::connectNow() {
    client_.connectTo(bar_->endpoints());
}

void MainWindow::onState(Client::State s, const QString& detail) {
    status_->showState(s, detail);
    bar_->showState(s);
    recorder_->setConnected(s == Client::State::connected);
    if (s != Client::State::connected) {
        controls_->setEditable(false);
        strip_->setEditable(false);
        traffic_->setEnabled(false);
    }
    if (s == Client::State::disconnected) sync_.clear();
    if (!detail.isEmpty() && s != Client::State::connected)
        note(s == Client::State::lost ? "warning" : "info", detail, s == Client::State::lost);
    refresh();
}

void MainWindow::onHello(const proto::Hello& hello, bool restarted) {
    const int dirs = static_cast<int>(std::clamp(hello.directions, 1u, 2u));
    if (dirs != directions_ || !(hello.link_params_schema == schema_))
        buildControls(hello.link_params_schema, dirs);
    presets_->setServer(hello.linkemd_version);
    model_.clear();
    readouts_->clear();
    history_.clear();
    charts_->cleared();
    const QString instance = QString::fromStdString(hello.instance_id);
    if (restarted)
        note("warning",
             QString("linkemd restarted: new instance %1; parameters reloaded").arg(instance));
    else
        note("info", QString("connected to linkemd %1 (instance %2) at %3")
                         .arg(QString::fromStdString(hello.linkemd_version), instance,
                              bar_->endpoints().control));
    sync_.clear();
    sync_.reload();
    traffic_->setAvailable(hello.capabilities.traffic);
    recorder_->setAvailable(hello.capabilities.capture);
    // an older linkemd has no traffic classes: no Classes box
    controls_->classes()->setVisible(hello.capabilities.classes);
    refresh();
}

void MainWindow::onTelemetry(const proto::Telemetry& message) {
    const std::int64_t t0 = costs_ ? threadCpuNs() : 0;
    const auto took = model_.add(message, wallMs());
    if (costs_) account(*costs_, Cost::ingest, t0);
    if (message.stats) recorder_->onStats(*message.stats);
    if (message.event) recorder_->onEvent(*message.event);
    onTelemetryTaken(took);
    // The window fell behind linkemd's telemetry (Client::telemetrySkipped): said once in
    // 10 s at most.
    const std::uint64_t skipped = client_.telemetrySkipped();
    if (skipped != skipped_noted_ && wallMs() - skipped_noted_ms_ >= 10'000) {
        note("warning", QString("this window fell behind linkemd's telemetry: %1 stats and delay "
                                "messages skipped so far (the charts show the gaps)")
                            .arg(skipped));
        skipped_noted_ = skipped;
        skipped_noted_ms_ = wallMs();
    }
}

void MainWindow::onTelemetryTaken(TelemetryModel::Took took) {
    switch (took) {
        case TelemetryModel::Took::delay:
            charts_->dataArrived(true, model_.lastTimeNs());
            break;
        case TelemetryModel::Took::stats:
            charts_->dataArrived(false, model_.lastTimeNs());
            // Another client (or SIGHUP, load_config) changed the parameters: reload them.
            if (sync_.valid() && model_.readouts().telemetryGeneration() > sync_.generation() &&
                !reloading_) {
                reloading_ = true;
                client_.call<proto::Method::get_link>(
                    {}, this,
                    [this](const proto::LinkState& s) {
                        reloading_ = false;
                        if (s.params_generation > sync_.generation()) sync_.reload();
                    },
                    [this](const Failure&) { reloading_ = false; });
            }
            break;
        case TelemetryModel::Took::event:
            events_->refresh();
            break;
        case TelemetryModel::Took::refused:
            statusBar()->showMessage("a telemetry message was not understood: " +
                                         QString::fromStdString(model_.lastRefusal()),
                                     5000);
            break;
        case TelemetryModel::Took::ignored:
            break;
    }
}

// ------------------------------------------------------------------------------ the link
void MainWindow::onLink(const LinkConfig& applied, std::uint64_t generation) {
    controls_->classes()->showClasses(applied.classes);
    strip_->setClasses(applied.classes);
    setSliderClass(slider_class_);  // it may be gone, or become pass or drop
    const bool connected = client_.state() == Client::State::connected;
    controls_->setEditable(connected);
    strip_->setEditable(connected);
    model_.setLink(applied, static_cast<unsigned>(directions_), generation);
    charts_->setClasses(applied.classes);
    readouts_->setHasClasses(!applied.classes.empty());
    charts_->linkChanged();
    refresh();
}

std::string MainWindow::sliderClassKey() const {
    return slider_class_ == kDefaultClassName ? std::string() : slider_class_;
}

const LinkConfig* MainWindow::sliderLink() const {
    if (!sync_.valid()) return nullptr;
    if (slider_class_ == kDefaultClassName) return &sync_.applied();
    for (const TrafficClass& c : sync_.applied().classes)
        if (c.name == slider_class_) return c.action == ClassAction::emulate ? &c.link : nullptr;
    return nullptr;
}

void MainWindow::setSliderClass(const std::string& name) {
    slider_class_ = name;
    QString why;
    if (sync_.valid() && name != kDefaultClassName) {
        const auto& classes = sync_.applied().classes;
        const auto it = std::find_if(classes.begin(), classes.end(),
                                     [&name](const TrafficClass& c) { return c.name == name; });
        if (it == classes.end())
            why = "Not in force yet: Apply classes first.";
        else if (it->action == ClassAction::pass)
            why =
                "None: a pass class forwards its packets at once, untouched (no delay, "
                "limiter or loss).";
        else if (it->action == ClassAction::drop)
            why = "None: a drop class drops its packets (counted as drops_class).";
    }
    const QString qname = QString::fromStdString(name);
    controls_->setSliderClass(qname, why);
    controls_->classes()->setSliderClass(name);
    int id = -1;  // the class's id in the charts' store: its own figures on the stage
    if (sync_.valid() && !sync_.applied().classes.empty()) {
        id = 0;
        for (std::size_t i = 0; i < sync_.applied().classes.size(); ++i)
            if (sync_.applied().classes[i].name == name) id = static_cast<int>(i) + 1;
    }
    strip_->setSliderClass(qname, why, id);
    if (const LinkConfig* shown = sliderLink()) {
        const std::string cls = sliderClassKey();
        auto pending = [this, cls](int d, const std::string& key) {
            return sync_.isPending(d, key, cls);
        };
        controls_->showLink(*shown, pending);
        strip_->showLink(*shown, pending);
    }
}

void MainWindow::beforeChange(const QString& what) {
    if (sync_.valid()) history_.beforeEdit(sync_.applied(), what.toStdString(), wallMs());
}

void MainWindow::onEdited(int direction, const std::string& key, const FieldValue& value) {
    const bool both = directions_ > 1 && (direction < 0 || controls_->sameBothWays()->isChecked());
    const LinkConfig* link = sliderLink();
    if (!link) return;  // a pass or drop class has no parameters to set
    beforeChange(QString::fromStdString(key) + (both ? "" : direction == 0 ? ".a" : ".b"));
    sync_.setField(both ? -1 : std::max(direction, 0), key, value, sliderClassKey());
    if (both && panel(1)) {
        // Mirror the shown value at once; linkemd's answer confirms it.
        LinkParams shown = link->b_to_a;
        try {
            link_param_field(key)->set(shown, value);
        } catch (const ParamError&) {
            return;  // linkemd's answer shows the error
        }
        for (int d = 0; d < 2; ++d)
            if (direction < 0 || d == 1)
                panel(d)->showLink(shown, [&key](const std::string& k) { return k != key; });
    }
}

void MainWindow::onSameToggled(bool on) {
    controls_->setEditable(sync_.valid() && client_.state() == Client::State::connected);
    const LinkConfig* link = sliderLink();
    if (!on || !link) return;
    beforeChange("same_both_ways");
    proto::LinkUpdate u;
    for (const LinkParamField& f : link_param_fields())
        if (f.key != "seed") u.set(-1, f.key, f.get(link->a_to_b));  // streams go on
    if (!sliderClassKey().empty()) u.class_name = sliderClassKey();
    sync_.setUpdate(u);
}

bool MainWindow::undo() {
    const auto link = history_.undo();
    if (!link || !sync_.valid()) return false;
    // Without the seeds: the streams go on. The classes as they were, in the same change.
    proto::LinkUpdate u =
        proto::LinkUpdate::whole(*link, static_cast<unsigned>(directions_), false);
    if (!link->classes.empty() || !sync_.applied().classes.empty()) u.classes = link->classes;
    sync_.setUpdate(u);
    note("info", "undo: the link before the last change is back");
    return true;
}

// ------------------------------------------------------------------------------- views
DirectionPanel* MainWindow::panel(int d) const {
    return controls_->panel(d);
}

QCheckBox* MainWindow::sameBothWays() const {
    return controls_->sameBothWays();
}

RecordPanel* MainWindow::recordPanel(const QString& layout) const {
    return layout == "stage" ? stage_record_panel_ : layout == "desk" ? record_panel_ : nullptr;
}

QLabel* MainWindow::statusLabel(const QString& name) const {
    return status_->label(name);
}

QDockWidget* MainWindow::dock(const QString& name) const {
    if (name == "link") return link_dock_;
    if (name == "readouts") return readouts_dock_;
    if (name == "events") return events_dock_;
    if (name == "traffic") return traffic_dock_;
    return nullptr;
}

void MainWindow::note(const QString& severity, const QString& text, bool needs_action) {
    model_.events().note(severity.toStdString(), text.toStdString(), wallMs(), needs_action);
    if (events_) events_->refresh();
}

namespace {
// The queue report of direction d's newest delay interval (null before the first).
const QueueReport* lastQueue(const ChartStore& store, int d) {
    const auto& iv = store.dir(d).intervals;
    return iv.empty() ? nullptr : &iv.back().queue;
}
}  // namespace

void MainWindow::refresh() {
    readouts_->refresh();
    events_->refresh();
    if (strip_->isVisible()) strip_->refresh();
    const bool compare = charts_->arrangement() == ChartsPanel::Arrangement::side_by_side;
    if (charts_->arrangement() != ChartsPanel::Arrangement::desk)
        for (int d = 0; d < directions_; ++d) {
            // the stage names the class its charts show, with that class's figures
            const bool one = charts_->shownClass() >= 0;
            const QString t =
                one || model_.store().classCount() > 0
                    ? classLaneText(d, one ? charts_->shownClassText() : QString("all classes"),
                                    model_.store(), charts_->visibleRange(), one)
                    : laneText(d, model_.readouts().get(d), compare, charts_->queueShown(),
                               lastQueue(model_.store(), d));
            if (charts_->laneHeader(d)->text() != t) charts_->laneHeader(d)->setText(t);
        }
    undo_action_->setEnabled(history_.canUndo());
    status_->update(
        client_.hello(), client_.state() != Client::State::disconnected, model_.lastStats(),
        sync_.valid() ? std::optional<std::uint64_t>(sync_.generation()) : std::nullopt);
}

void MainWindow::setPaused(bool on) {
    if (pause_action_->isChecked() != on) pause_action_->setChecked(on);
    charts_->setPaused(on);
    statusBar()->showMessage(on ? "charts paused (Space resumes)" : "charts running", 3000);
}

void MainWindow::setWindowSeconds(int s) {
    bar_->setWindowSeconds(s);
    model_.setWindow(s);
    readouts_->setWindow(s);
    charts_->setWindow(s);
    if (layout_) layout_->setWindowSeconds(s);
}

void MainWindow::endComparison() {
    if (!compare_) return;
    const Comparison c = *compare_;
    compare_.reset();
    charts_->setQueueShown(false);
    if (charts_->arrangement() == ChartsPanel::Arrangement::side_by_side)
        charts_->setArrangement(layoutName() == "stage" ? ChartsPanel::Arrangement::lanes
                                                        : ChartsPanel::Arrangement::desk);
    if (bar_->windowSeconds() == c.shown_s) setWindowSeconds(c.before_s);
}

void MainWindow::setCosts(ChartsCosts* costs) {
    costs_ = costs;
    charts_->setCosts(costs);
}

QString MainWindow::exportCsv(const QString& path) const {
    QString err;
    const auto [lo, hi] = charts_->visibleRange();
    return linkem::gui::exportCsv(model_.store(), lo, hi, path, &err)
               ? QString()
               : (err.isEmpty() ? "export failed" : err);
}

QString MainWindow::exportPng(const QString& directory) const {
    QString err;
    return charts_->exportPng(directory, &err) ? QString()
                                               : (err.isEmpty() ? "export failed" : err);
}

// ------------------------------------------------------------------------------ layouts
WindowLayout* MainWindow::windowLayout(const QString& name) const {
    return name == "stage" ? stage_.get() : name == "desk" ? desk_.get() : nullptr;
}

QString MainWindow::layoutName() const {
    return layout_ ? layout_->name() : QString();
}

void MainWindow::setLayoutNamed(const QString& name) {
    WindowLayout* next = windowLayout(name);
    if (!next || next == layout_) return;
    if (layout_) {
        endComparison();  // the layout left keeps the user's window, not the comparison's
        layout_->leave(*this);
    }
    layout_ = next;
    layout_->enter(*this);
    if (stage_action_->isChecked() != (name == "stage")) {
        const QSignalBlocker block(stage_action_);
        stage_action_->setChecked(name == "stage");
    }
    refresh();
}

void MainWindow::relayout() {
    if (!layout_) return;
    layout_->setDockState({});
    layout_->enter(*this);
}

void MainWindow::fitToScreen() {
    // The window opens within the screen's available area (a projector's 1280x720 too).
    const QScreen* s = screen();
    if (!s) return;
    const QRect avail = s->availableGeometry();
    const QRect frame = frameGeometry();
    const QSize extra = frame.size() - size();  // the window manager's frame
    const QSize most = avail.size() - extra;
    if (width() > most.width() || height() > most.height())
        resize(std::min(width(), most.width()), std::min(height(), most.height()));
    QRect f = frameGeometry();
    if (!avail.contains(f)) {
        f.moveLeft(std::clamp(f.left(), avail.left(),
                              std::max(avail.left(), avail.right() - f.width() + 1)));
        f.moveTop(std::clamp(f.top(), avail.top(),
                             std::max(avail.top(), avail.bottom() - f.height() + 1)));
        move(f.topLeft());
    }
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    if (!fitted_) {
        fitted_ = true;
        fitToScreen();
    }
}

void MainWindow::resizeEvent(QResizeEvent* e) {
    QMainWindow::resizeEvent(e);
    if (layout_) layout_->resized(*this);
}

// ----------------------------------------------------------------------------- settings
void MainWindow::readSettings() {
    const GuiSettings g = GuiSettings::load();
    restoreGeometry(g.geometry);
    desk_->setDockState(g.desk_docks);
    stage_->setDockState(g.stage_docks);
    desk_->setWindowSeconds(g.desk_window_s);
    stage_->setWindowSeconds(g.stage_window_s);
    bar_->setEndpoints(Endpoints{g.control, g.telemetry, g.server_key_file, g.client_cert_file});
}

void MainWindow::writeSettings() {
    if (layout_) layout_->leave(*this);
    GuiSettings g;
    g.geometry = saveGeometry();
    g.layout = layoutName();
    g.desk_docks = desk_->dockState();
    g.stage_docks = stage_->dockState();
    g.desk_window_s = desk_->windowSeconds();
    g.stage_window_s = stage_->windowSeconds();
    const Endpoints e = bar_->endpoints();
    g.control = e.control;
    g.telemetry = e.telemetry;
    g.server_key_file = e.server_key_file;
    g.client_cert_file = e.client_cert_file;
    g.save();
}

void MainWindow::closeEvent(QCloseEvent* e) {
    endComparison();  // the settings keep the user's window
    if (options_.use_settings) writeSettings();
    QMainWindow::closeEvent(e);
}

}  // namespace linkem::gui
