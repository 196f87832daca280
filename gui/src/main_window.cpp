#include "main_window.hpp"

#include <fstream>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

#include "charts_bridge.hpp"
#include "direction_panel.hpp"
#include "linkem/link_params.hpp"
#include "linkem/protocol.hpp"
#include "linkem/traffic.hpp"
#include "readouts.hpp"

namespace linkem::gui {

using nlohmann::json;

namespace {
const char* kDirTitle[2] = {"A → B", "B → A"};
const int kWindows[] = {5, 10, 30, 60, 120, 300};

QString fmt_uptime(double ns) {
    const qint64 s = static_cast<qint64>(ns / 1e9);
    return QString("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QChar('0'))
        .arg(s % 60, 2, 10, QChar('0'));
}
}  // namespace

// The direction columns side by side when the Link pane is wide enough for both, one above
// the other when it is not: never cut off, never a sideways scroll bar.
class ColumnsFit : public QObject {
  public:
    ColumnsFit(QScrollArea* area, QBoxLayout* row) : QObject(area), area_(area), row_(row) {
        area->viewport()->installEventFilter(this);
    }
    bool eventFilter(QObject*, QEvent* e) override {
        if (e->type() == QEvent::Resize) fit();
        return false;
    }
    void fit() {
        const int both = sideBySide();
        if (both == 0) return;
        const auto dir = area_->width() >= both ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
        if (row_->direction() != dir) row_->setDirection(dir);
        area_->setMinimumWidth(oneColumn());  // the pane never narrower than one column
    }
    /// The pane's width with the columns side by side (0 before there are any).
    int sideBySide() const {
        int need = 0, n = 0;
        for (const QWidget* w : columns()) {
            need += w->minimumSizeHint().width();
            ++n;
        }
        return n == 0 ? 0 : need + (n - 1) * std::max(0, row_->spacing()) + chrome();
    }
    int oneColumn() const {
        int one = 0;
        for (const QWidget* w : columns())
            one = std::max(one, w->minimumSizeHint().width());
        // The rows above the columns (presets) have their own minimum.
        for (int i = 0; i < area_->widget()->layout()->count(); ++i)
            if (QLayout* l = area_->widget()->layout()->itemAt(i)->layout(); l && l != row_)
                one = std::max(one, l->minimumSize().width());
        return one + chrome();
    }

  private:
    std::vector<const QWidget*> columns() const {
        std::vector<const QWidget*> v;
        for (int i = 0; i < row_->count(); ++i)
            if (const QWidget* w = row_->itemAt(i)->widget(); w && !w->isHidden()) v.push_back(w);
        return v;
    }
    // Margins, the frame and a vertical scroll bar.
    int chrome() const {
        const QMargins m = area_->widget()->layout()->contentsMargins();
        return m.left() + m.right() + 2 * area_->frameWidth() +
               area_->verticalScrollBar()->sizeHint().width();
    }

    QScrollArea* area_;
    QBoxLayout* row_;
};

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent), options_(options), sync_(client_) {
    setObjectName("linkem_main_window");
    setWindowTitle("linkem");
    base_font_pt_ = font().pointSizeF();
    buildConnectionBar();
    buildDocks();
    buildMenus();
    buildControls(link_params_schema());
    loadUserPresets();
    fillPresetCombo();

    for (const char* name :
         {"connection", "version", "instance", "uptime", "generation", "port_a", "port_b"}) {
        auto* l = new QLabel(this);
        l->setObjectName(QString("status_") + name);
        statusBar()->addPermanentWidget(l);
        status_[name] = l;
    }
    status_["connection"]->setToolTip("the control connection to linkemd");
    status_["version"]->setToolTip("linkemd's version (hello)");
    status_["instance"]->setToolTip("instance_id: random at every start of linkemd");
    status_["uptime"]->setToolTip("time since linkemd started (its data-plane clock)");
    status_["generation"]->setToolTip("params_generation: parameter changes applied since start");

    connect(&client_, &Client::stateChanged, this, &MainWindow::onState);
    connect(&client_, &Client::helloReceived, this, &MainWindow::onHello);
    connect(&client_, &Client::telemetry, this, &MainWindow::onTelemetry);
    connect(&sync_, &LinkSync::linkChanged, this, &MainWindow::onLink);
    connect(&sync_, &LinkSync::refused, this, &MainWindow::onRefused);
    connect(&sync_, &LinkSync::accepted, this, &MainWindow::onAccepted);
    connect(&sync_, &LinkSync::unanswered, this,
            [this](const QString& m) { logLine("warning", "set_link not answered: " + m); });

    refresh_.setInterval(250);
    connect(&refresh_, &QTimer::timeout, this, [this] {
        readouts_->refresh();
        updateStatus();
    });
    refresh_.start();

    if (options_.use_settings) readSettings();
    if (!options_.endpoints.control.isEmpty()) control_edit_->setText(options_.endpoints.control);
    if (!options_.endpoints.telemetry.isEmpty())
        telemetry_edit_->setText(options_.endpoints.telemetry);
    if (control_edit_->text().isEmpty()) control_edit_->setText(proto::kDefaultControl);
    if (telemetry_edit_->text().isEmpty()) telemetry_edit_->setText(proto::kDefaultTelemetry);
    onState(Client::State::disconnected, "not connected");
    if (options_.connect) connectNow();
}

MainWindow::~MainWindow() = default;

QLabel* MainWindow::statusLabel(const QString& name) const {
    const auto it = status_.find(name);
    return it == status_.end() ? nullptr : it->second;
}

// ---------------------------------------------------------------------------- building
void MainWindow::buildConnectionBar() {
    auto* bar = addToolBar("Connection");
    bar->setObjectName("connection_bar");
    auto* cl = new QLabel(" &Control ", bar);
    control_edit_ = new QLineEdit(bar);
    control_edit_->setObjectName("control_endpoint");
    control_edit_->setToolTip("linkemd's control endpoint (--control), e.g. tcp://127.0.0.1:7710");
    control_edit_->setMinimumWidth(220);
    cl->setBuddy(control_edit_);
    auto* tl = new QLabel(" &Telemetry ", bar);
    telemetry_edit_ = new QLineEdit(bar);
    telemetry_edit_->setObjectName("telemetry_endpoint");
    telemetry_edit_->setToolTip(
        "linkemd's telemetry endpoint (--telemetry), e.g. tcp://127.0.0.1:7711");
    telemetry_edit_->setMinimumWidth(220);
    tl->setBuddy(telemetry_edit_);
    connect_button_ = new QPushButton("Co&nnect", bar);
    connect_button_->setObjectName("connect_button");
    auto* keys = new QPushButton("CURVE &keys…", bar);
    keys->setToolTip(
        "the server's public key file and this client's key pair, for a linkemd "
        "started with --curve-secret/--curve-allow");
    bar->addWidget(cl);
    bar->addWidget(control_edit_);
    bar->addWidget(tl);
    bar->addWidget(telemetry_edit_);
    bar->addWidget(connect_button_);
    bar->addWidget(keys);
    connect(connect_button_, &QPushButton::clicked, this, [this] {
        if (client_.state() == Client::State::disconnected)
            connectNow();
        else
            client_.disconnectFrom();
    });
    connect(control_edit_, &QLineEdit::returnPressed, this, &MainWindow::connectNow);
    connect(telemetry_edit_, &QLineEdit::returnPressed, this, &MainWindow::connectNow);
    connect(keys, &QPushButton::clicked, this, &MainWindow::curveDialog);

    bar->addSeparator();
    auto* wl = new QLabel(" Time &window ", bar);
    window_combo_ = new QComboBox(bar);
    window_combo_->setObjectName("time_window");
    for (int s : kWindows)
        window_combo_->addItem(s < 60 ? QString("%1 s").arg(s) : QString("%1 min").arg(s / 60), s);
    window_combo_->setCurrentIndex(2);
    window_combo_->setToolTip("the time the charts and the window readouts cover");
    wl->setBuddy(window_combo_);
    bar->addWidget(wl);
    bar->addWidget(window_combo_);
    connect(window_combo_, &QComboBox::currentIndexChanged, this,
            [this](int) { setWindowSeconds(window_combo_->currentData().toInt()); });
}

void MainWindow::buildDocks() {
    setDockNestingEnabled(true);
    // Charts: the central widget.
    charts_ = make_charts_panel(this);
    setCentralWidget(charts_widget(charts_, this));

    // Link controls.
    auto* dock = new QDockWidget("Link", this);
    dock->setObjectName("link_dock");
    auto* scroll = new QScrollArea(dock);
    scroll->setWidgetResizable(true);
    controls_box_ = new QWidget(scroll);
    controls_layout_ = new QVBoxLayout(controls_box_);
    auto* top = new QHBoxLayout;
    same_ = new QCheckBox("&Same both ways", controls_box_);
    same_->setObjectName("same_both_ways");
    same_->setToolTip("A→B's settings apply to both directions (set_link's top-level keys)");
    top->addWidget(same_);
    top->addStretch();
    controls_layout_->addLayout(top);
    connect(same_, &QCheckBox::toggled, this, &MainWindow::onSameToggled);

    auto* presets = new QHBoxLayout;
    auto* pl = new QLabel("&Preset", controls_box_);
    preset_combo_ = new QComboBox(controls_box_);
    preset_combo_->setObjectName("preset_combo");
    preset_combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    preset_combo_->setMinimumContentsLength(18);
    pl->setBuddy(preset_combo_);
    preset_target_ = new QComboBox(controls_box_);
    preset_target_->setObjectName("preset_target");
    preset_target_->addItem("both directions", -1);
    preset_target_->addItem("A→B only", 0);
    preset_target_->addItem("B→A only", 1);
    preset_target_->setToolTip(
        "where the preset goes: an asymmetric preset gives each direction "
        "its own figures; 'only' applies that direction's figures");
    auto* apply = new QPushButton("&Apply", controls_box_);
    apply->setObjectName("preset_apply");
    presets->addWidget(pl);
    presets->addWidget(preset_combo_, 1);
    presets->addWidget(preset_target_);
    presets->addWidget(apply);
    controls_layout_->addLayout(presets);
    preset_info_ = new QLabel(controls_box_);
    preset_info_->setObjectName("preset_info");
    preset_info_->setWordWrap(true);
    preset_info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont f = preset_info_->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    preset_info_->setFont(f);
    preset_info_->setProperty("linkem_small", true);  // scaled with the projector mode
    controls_layout_->addWidget(preset_info_);
    connect(preset_combo_, &QComboBox::currentIndexChanged, this, [this](int) {
        const int i = preset_combo_->currentData().toInt();
        const auto& all = builtin_presets();
        const Preset* p = i >= 0 && i < static_cast<int>(all.size()) ? &all[i]
                          : i < 0 && -i - 1 < static_cast<int>(user_presets_.size())
                              ? &user_presets_[-i - 1]
                              : nullptr;
        if (!p) return;
        preset_info_->setText(QString("<b>%1</b>%2: %3<br><i>Source:</i> %4")
                                  .arg(QString::fromStdString(p->name).toHtmlEscaped(),
                                       p->asymmetric() ? " (asymmetric: A→B is the upload)" : "",
                                       QString::fromStdString(p->description).toHtmlEscaped(),
                                       QString::fromStdString(p->source).toHtmlEscaped()));
    });
    connect(apply, &QPushButton::clicked, this, [this] {
        const int i = preset_combo_->currentData().toInt();
        const auto& all = builtin_presets();
        const int target = preset_target_->currentData().toInt();
        if (i >= 0 && i < static_cast<int>(all.size()))
            applyPreset(all[i], target);
        else if (i < 0 && -i - 1 < static_cast<int>(user_presets_.size()))
            applyPreset(user_presets_[-i - 1], target);
    });

    auto* dirs = new QHBoxLayout;
    dirs->setObjectName("direction_row");
    controls_layout_->addLayout(dirs);
    controls_layout_->addStretch();
    scroll->setWidget(controls_box_);
    columns_fit_ = new ColumnsFit(scroll, dirs);
    dock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    // Traffic.
    auto* tdock = new QDockWidget("Built-in traffic", this);
    tdock->setObjectName("traffic_dock");
    traffic_box_ = new QWidget(tdock);
    auto* tf = new QFormLayout(traffic_box_);
    traffic_running_ = new QCheckBox("&sending", traffic_box_);
    traffic_running_->setObjectName("traffic_running");
    traffic_pattern_ = new QComboBox(traffic_box_);
    traffic_pattern_->setObjectName("traffic_pattern");
    traffic_pattern_->addItem("cbr", "cbr");
    traffic_pattern_->setItemData(0, "constant bit rate: evenly spaced frames", Qt::ToolTipRole);
    traffic_pattern_->addItem("poisson", "poisson");
    traffic_pattern_->setItemData(1, "random (exponential) gaps with the given mean rate",
                                  Qt::ToolTipRole);
    traffic_pattern_->addItem("sine", "sine");
    traffic_pattern_->setItemData(
        2, "rate swings from 0 to the given peak and back once per period", Qt::ToolTipRole);
    traffic_rate_ = new QDoubleSpinBox(traffic_box_);
    traffic_rate_->setObjectName("traffic_rate");
    traffic_rate_->setRange(TrafficLimits::kMinRate / 1e6, TrafficLimits::kMaxRate / 1e6);
    traffic_rate_->setDecimals(3);
    traffic_rate_->setSuffix(" Mbit/s");
    traffic_rate_->setToolTip(
        "rate_bps: mean rate (cbr, poisson) or peak rate (sine), frame bytes × 8");
    traffic_frame_ = new QSpinBox(traffic_box_);
    traffic_frame_->setObjectName("traffic_frame");
    traffic_frame_->setRange(TrafficLimits::kMinFrame, TrafficLimits::kMaxFrame);
    traffic_frame_->setSuffix(" bytes");
    traffic_frame_->setToolTip("frame_size_bytes, with the FCS");
    traffic_period_ = new QDoubleSpinBox(traffic_box_);
    traffic_period_->setObjectName("traffic_period");
    traffic_period_->setRange(TrafficLimits::kMinPeriod / 1e9, TrafficLimits::kMaxPeriod / 1e9);
    traffic_period_->setDecimals(3);
    traffic_period_->setSuffix(" s");
    traffic_period_->setToolTip("period_us: the sine pattern's period");
    auto* tapply = new QPushButton("Appl&y traffic", traffic_box_);
    tapply->setObjectName("traffic_apply");
    traffic_status_ = new QLabel(traffic_box_);
    traffic_status_->setWordWrap(true);
    tf->addRow(traffic_running_);
    tf->addRow("Pattern", traffic_pattern_);
    tf->addRow("Rate", traffic_rate_);
    tf->addRow("Frame size", traffic_frame_);
    tf->addRow("Period", traffic_period_);
    tf->addRow(tapply);
    tf->addRow(traffic_status_);
    connect(tapply, &QPushButton::clicked, this, &MainWindow::sendTraffic);
    connect(traffic_pattern_, &QComboBox::currentIndexChanged, this, [this](int) {
        traffic_period_->setEnabled(traffic_pattern_->currentData() == "sine");
    });
    traffic_box_->setEnabled(false);
    tdock->setWidget(traffic_box_);
    addDockWidget(Qt::BottomDockWidgetArea, tdock);

    // Readouts and events.
    auto* rdock = new QDockWidget("Readouts", this);
    rdock->setObjectName("readouts_dock");
    readouts_ = new Readouts(rdock);
    rdock->setWidget(readouts_);
    addDockWidget(Qt::BottomDockWidgetArea, rdock);
    auto* edock = new QDockWidget("Events", this);
    edock->setObjectName("events_dock");
    log_ = new QPlainTextEdit(edock);
    log_->setObjectName("event_log");
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(2000);
    edock->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, edock);
    splitDockWidget(rdock, edock, Qt::Horizontal);
    tabifyDockWidget(edock, tdock);
    edock->raise();
    // A first layout (QSettings restores the user's): the controls of both directions side
    // by side on the left, the charts in the middle, readouts and events below.
    resizeDocks({dock}, {820}, Qt::Horizontal);
    resizeDocks({rdock}, {330}, Qt::Vertical);
}

void MainWindow::buildControls(const json& schema) {
    schema_ = schema;
    auto* row = controls_box_->findChild<QHBoxLayout*>("direction_row");
    for (DirectionPanel*& p : panels_) {
        delete p;
        p = nullptr;
    }
    for (int d = 0; d < directions_; ++d) {
        panels_[d] = new DirectionPanel(d, kDirTitle[d], schema, controls_box_);
        row->addWidget(panels_[d], 1);
        connect(panels_[d], &DirectionPanel::edited, this, &MainWindow::onEdited);
        panels_[d]->setEnabled(sync_.valid() && !(d == 1 && same_->isChecked()));
    }
    same_->setVisible(directions_ > 1);
    preset_target_->setVisible(directions_ > 1);
    columns_fit_->fit();
    sizeLinkDockOnce();
    if (sync_.valid()) onLink(sync_.applied(), sync_.generation());
}

// The first layout (not one QSettings restored): room for both columns side by side, once
// there are columns and a window wide enough to leave the charts 40 % of it (1600 px: 640).
void MainWindow::sizeLinkDockOnce() {
    if (layout_restored_ || link_dock_sized_) return;
    const int both = columns_fit_->sideBySide();
    if (both == 0 || both > width() * 60 / 100) return;
    link_dock_sized_ = true;
    resizeDocks({findChild<QDockWidget*>("link_dock")}, {both}, Qt::Horizontal);
}

void MainWindow::resizeEvent(QResizeEvent* e) {
    QMainWindow::resizeEvent(e);
    sizeLinkDockOnce();
}

void MainWindow::buildMenus() {
    auto* file = menuBar()->addMenu("&File");
    auto* c = file->addAction("&Connect", this, &MainWindow::connectNow);
    c->setShortcut(QKeySequence("Ctrl+Shift+C"));
    file->addAction("&Disconnect", this, [this] { client_.disconnectFrom(); });
    file->addSeparator();
    auto* open = file->addAction("&Open scenario…", this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, "Open scenario", {},
                                                          "linkemd config (*.json);;All files (*)");
        if (path.isEmpty()) return;
        const QString err = openScenario(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Open scenario", err);
    });
    open->setShortcut(QKeySequence::Open);
    auto* save = file->addAction("&Save scenario…", this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, "Save scenario", "scenario.json",
                                                          "linkemd config (*.json)");
        if (path.isEmpty()) return;
        const QString err = saveScenario(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Save scenario", err);
    });
    save->setShortcut(QKeySequence::Save);
    file->addSeparator();
    auto* quit = file->addAction("&Quit", this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* presets = menuBar()->addMenu("&Presets");
    presets->setToolTipsVisible(true);
    std::map<std::string, QMenu*> cats;
    const auto& all = builtin_presets();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const Preset& p = all[i];
        QMenu*& m = cats[p.category];
        if (!m) {
            m = presets->addMenu(QString::fromStdString(p.category));
            m->setToolTipsVisible(true);
        }
        auto* a =
            m->addAction(QString::fromStdString(p.name) + (p.asymmetric() ? "  (asymmetric)" : ""));
        a->setToolTip(QString::fromStdString(p.description + "\nSource: " + p.source));
        connect(a, &QAction::triggered, this, [this, i] { applyPreset(builtin_presets()[i], -1); });
    }
    presets->addSeparator();
    presets->addAction("Save current as &user preset…", this, [this] {
        bool ok = false;
        const QString name =
            QInputDialog::getText(this, "User preset", "Name:", QLineEdit::Normal, {}, &ok);
        if (!ok || name.trimmed().isEmpty()) return;
        const QString err = saveUserPreset(name.trimmed());
        if (!err.isEmpty()) QMessageBox::warning(this, "User preset", err);
    });

    auto* view = menuBar()->addMenu("&View");
    pause_action_ = view->addAction("&Pause charts");
    pause_action_->setCheckable(true);
    pause_action_->setShortcut(QKeySequence(Qt::Key_Space));
    pause_action_->setShortcutContext(Qt::WindowShortcut);
    connect(pause_action_, &QAction::toggled, this, &MainWindow::setPaused);
    projector_action_ = view->addAction("P&rojector mode");
    projector_action_->setCheckable(true);
    projector_action_->setShortcuts({QKeySequence(Qt::Key_F11), QKeySequence("Ctrl+P")});
    connect(projector_action_, &QAction::toggled, this, &MainWindow::setProjectorMode);
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>())
        view->addAction(d->toggleViewAction());

    auto* exp = menuBar()->addMenu("E&xport");
    exp->addAction("Visible data as &CSV…", this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, "Export CSV", "linkem.csv", "CSV (*.csv)");
        if (path.isEmpty()) return;
        const QString err = charts_export_csv(charts_, path);
        if (!err.isEmpty())
            QMessageBox::warning(this, "Export CSV", err);
        else
            logLine("info", "exported the visible data to " + path);
    });
    exp->addAction("Charts as &PNG…", this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, "Export PNGs into");
        if (dir.isEmpty()) return;
        const QString err = charts_export_png(charts_, dir);
        if (!err.isEmpty())
            QMessageBox::warning(this, "Export PNG", err);
        else
            logLine("info", "exported the charts as PNG into " + dir);
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

// --------------------------------------------------------------------------- connection
void MainWindow::connectNow() {
    Endpoints e = options_.endpoints;
    e.control = control_edit_->text().trimmed();
    e.telemetry = telemetry_edit_->text().trimmed();
    options_.endpoints = e;
    client_.connectTo(e);
}

void MainWindow::curveDialog() {
    QDialog dlg(this);
    dlg.setWindowTitle("CURVE keys");
    auto* form = new QFormLayout(&dlg);
    auto* server = new QLineEdit(options_.endpoints.server_key_file, &dlg);
    auto* cert = new QLineEdit(options_.endpoints.client_cert_file, &dlg);
    server->setToolTip("linkemd's public key: NAME.key (the public half of --curve-secret's pair)");
    cert->setToolTip(
        "this client's key pair: NAME.key_secret, whose NAME.key is in linkemd's --curve-allow "
        "directory");
    auto pick = [&](QLineEdit* into, const QString& filter) {
        auto* b = new QPushButton("…", &dlg);
        connect(b, &QPushButton::clicked, &dlg, [&dlg, into, filter] {
            const QString p = QFileDialog::getOpenFileName(&dlg, "Key file", {}, filter);
            if (!p.isEmpty()) into->setText(p);
        });
        auto* w = new QWidget(&dlg);
        auto* h = new QHBoxLayout(w);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(into, 1);
        h->addWidget(b);
        return w;
    };
    form->addRow("&Server public key", pick(server, "Public key (*.key);;All files (*)"));
    form->addRow("&Client key pair", pick(cert, "Key pair (*.key_secret);;All files (*)"));
    form->addRow(
        new QLabel("Leave both empty for a loopback or ipc:// linkemd without CURVE.", &dlg));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dlg);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dlg, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dlg, &QDialog::reject);
    if (dlg.exec() != QDialog::Accepted) return;
    options_.endpoints.server_key_file = server->text().trimmed();
    options_.endpoints.client_cert_file = cert->text().trimmed();
    connectNow();
}

void MainWindow::onState(Client::State s, const QString& detail) {
    QLabel* l = status_["connection"];
    QString text, style;
    switch (s) {
        case Client::State::disconnected:
            text = "disconnected";
            style = "color: #808080;";
            break;
        case Client::State::connecting:
            text = "connecting…";
            style = "color: #b35900;";
            break;
        case Client::State::connected:
            text = "connected";
            style = "color: #007000; font-weight: bold;";
            break;
        case Client::State::lost:
            text = "connection lost, reconnecting…";
            style = "color: #c00000; font-weight: bold;";
            break;
    }
    l->setText(text);
    l->setStyleSheet(style);
    l->setToolTip(detail);
    connect_button_->setText(s == Client::State::disconnected ? "Co&nnect" : "Disco&nnect");
    if (s != Client::State::connected) {
        for (DirectionPanel* p : panels_)
            if (p) p->setEnabled(false);
        traffic_box_->setEnabled(false);
    }
    if (s == Client::State::disconnected) sync_.clear();
    if (!detail.isEmpty() && s != Client::State::connected)
        logLine(s == Client::State::lost ? "warning" : "info", detail);
}

void MainWindow::onHello(const json& hello, bool restarted) {
    hello_ = hello;
    const int dirs = static_cast<int>(hello.value("directions", json::array({"a_to_b"})).size());
    const json schema = hello.value("link_params_schema", link_params_schema());
    if (dirs != directions_ || schema != schema_) {
        directions_ = std::clamp(dirs, 1, 2);
        buildControls(schema);
    }
    readouts_->setDirections(directions_);
    readouts_->clear();
    charts_set_directions(charts_, directions_);
    if (restarted) {
        logLine("warning", QString("linkemd restarted: new instance %1; parameters reloaded")
                               .arg(QString::fromStdString(hello.value("instance_id", ""))));
        charts_clear(charts_);
    } else {
        logLine("info", QString("connected to linkemd %1 (instance %2) at %3")
                            .arg(QString::fromStdString(hello.value("linkemd_version", "?")),
                                 QString::fromStdString(hello.value("instance_id", "?")),
                                 options_.endpoints.control));
    }
    sync_.clear();
    sync_.reload();
    const bool traffic = hello.value("capabilities", json::object()).value("traffic", false);
    traffic_box_->setEnabled(traffic);
    traffic_status_->setText(traffic ? QString()
                                     : "this linkemd has no built-in traffic (it runs it "
                                       "on virtual ports: linkemd --demo)");
    if (traffic)
        client_.request("get_traffic", json::object(), this, [this](const Reply& r) {
            if (r.ok) refreshTraffic(r.result);
        });
    updateStatus();
}

void MainWindow::onTelemetry(const QString& topic, const json& body) {
    if (topic == proto::kTopicStats) {
        last_stats_ = body;
        readouts_->addStats(body);
        charts_add_stats(charts_, body);
        // Another client (or SIGHUP, load_config) changed the parameters: reload them.
        std::uint64_t gen = 0;
        for (const char* d : kDirectionKeys)
            if (body.contains(d))
                gen = std::max(gen, body[d].value("params_generation", std::uint64_t{0}));
        if (sync_.valid() && gen > sync_.generation() && !reloading_) {
            reloading_ = true;
            client_.request("get_link", json::object(), this, [this](const Reply& r) {
                reloading_ = false;
                if (r.ok &&
                    r.result.value("params_generation", std::uint64_t{0}) > sync_.generation())
                    sync_.reload();
            });
        }
    } else if (topic == proto::kTopicDelay) {
        readouts_->addDelay(body);
        charts_add_delay(charts_, body);
    } else if (topic == proto::kTopicEvent) {
        logLine(QString::fromStdString(body.value("severity", "info")),
                QString::fromStdString(body.value("kind", "") + ": " + body.value("message", "")));
    }
}

void MainWindow::updateStatus() {
    const bool have = hello_.is_object() && client_.state() != Client::State::disconnected;
    status_["version"]->setText(
        have ? "linkemd " + QString::fromStdString(hello_.value("linkemd_version", "?")) : "");
    status_["instance"]->setText(
        have ? "instance " + QString::fromStdString(hello_.value("instance_id", "?")) : "");
    double t = hello_.is_object() ? hello_.value("uptime_ns", 0.0) : 0;
    if (last_stats_.is_object() &&
        last_stats_.value("instance_id", "") == hello_.value("instance_id", ""))
        t = std::max(t, last_stats_.value("t_ns", 0.0));
    status_["uptime"]->setText(have ? "up " + fmt_uptime(t) : "");
    status_["generation"]->setText(
        have && sync_.valid() ? QString("generation %1").arg(sync_.generation()) : "");
    for (const char* p : {"a", "b"}) {
        QLabel* l = status_[QString("port_") + p];
        json port;
        if (last_stats_.is_object() && last_stats_.contains("ports") &&
            last_stats_["ports"].contains(p))
            port = last_stats_["ports"][p];
        else if (have)
            for (const auto& hp : hello_.value("ports", json::array()))
                if (hp.value("port", "") == p) port = hp;
        if (!have || !port.is_object()) {
            l->clear();
            continue;
        }
        const bool up = port.value("link_up", false);
        l->setText(
            QString("port %1 %2 %3")
                .arg(p, QString::fromStdString(port.value("device", "")), up ? "up" : "DOWN"));
        l->setStyleSheet(up ? "color: #007000;" : "color: #c00000; font-weight: bold;");
        l->setToolTip(QString("%1 Mbit/s").arg(port.value("speed_mbps", 0)));
    }
}

// ---------------------------------------------------------------------------- the link
void MainWindow::onLink(const json& applied, std::uint64_t generation) {
    for (int d = 0; d < directions_; ++d) {
        if (!panels_[d] || !applied.contains(kDirectionKeys[d])) continue;
        panels_[d]->showLink(applied[kDirectionKeys[d]],
                             [this, d](const std::string& key) { return sync_.isPending(d, key); });
        panels_[d]->setEnabled(client_.state() == Client::State::connected &&
                               !(d == 1 && same_->isChecked()));
    }
    readouts_->setLink(applied);
    charts_set_link(charts_, applied);
    status_["generation"]->setText(QString("generation %1").arg(generation));
}

void MainWindow::onEdited(int direction, const std::string& key, const json& value) {
    const bool both = same_->isChecked() && directions_ > 1;
    sync_.setField(both ? -1 : direction, key, value);
    if (both && direction == 0 && panels_[1]) {
        // Mirror the shown value at once; linkemd's answer confirms it.
        json p = json::object();
        p[key] = value;
        panels_[1]->showLink(p, [](const std::string&) { return false; });
    }
}

void MainWindow::onSameToggled(bool on) {
    if (panels_[1])
        panels_[1]->setEnabled(!on && sync_.valid() && client_.state() == Client::State::connected);
    if (!on || !sync_.valid()) return;
    json u = sync_.applied()["a_to_b"];
    u.erase("seed");  // the streams go on
    sync_.setUpdate(u);
}

void MainWindow::onRefused(const QString& field, const QString& message) {
    const QString dir = field.section('.', 0, 0);
    const QString key = field.section('.', 1);
    int d = dir == "a_to_b" ? 0 : dir == "b_to_a" ? 1 : -1;
    if (d >= 0 && !key.isEmpty() && d < directions_ && panels_[d]) {
        panels_[d]->setError(key.toStdString(), message);
        if (same_->isChecked() && d == 0 && panels_[1])
            panels_[1]->setError(key.toStdString(), message);
    } else if (!field.isEmpty() && panels_[0]) {
        panels_[0]->setError(field.toStdString(), message);
    }
    logLine("warning",
            "set_link refused: " + (field.isEmpty() ? QString() : field + ": ") + message);
    statusBar()->showMessage("linkemd refused: " + message, 8000);
}

void MainWindow::onAccepted(const json& update) {
    for (const auto& [k, v] : update.items()) {
        if (k == "a_to_b" || k == "b_to_a") {
            const int d = k == "a_to_b" ? 0 : 1;
            if (panels_[d])
                for (const auto& [kk, vv] : v.items())
                    panels_[d]->setError(kk, {});
        } else {
            for (DirectionPanel* p : panels_)
                if (p) p->setError(k, {});
        }
    }
}

// ---------------------------------------------------------------------- presets, scenarios
json MainWindow::presetUpdate(const Preset& p, int direction) const {
    json u = json::object();
    for (int d = 0; d < directions_; ++d) {
        if (direction >= 0 && direction != d) continue;
        // One direction only: that direction's figures of the preset go there.
        const LinkParams& src = d == 0 ? p.link.a_to_b : p.link.b_to_a;
        json j = to_json(src);
        if (src.seed == 0) j.erase("seed");  // the streams go on
        u[kDirectionKeys[d]] = j;
    }
    return u;
}

void MainWindow::applyPreset(const Preset& p, int direction) {
    if (same_->isChecked() && p.asymmetric() && direction < 0) same_->setChecked(false);
    sync_.setUpdate(presetUpdate(p, direction));
    logLine("info",
            QString("preset '%1' applied to %2 (source: %3)")
                .arg(QString::fromStdString(p.name),
                     direction < 0 ? QString("both directions") : QString(kDirTitle[direction]),
                     QString::fromStdString(p.source).left(120)));
}

QString MainWindow::userPresetsPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + "/presets.json";
}

void MainWindow::loadUserPresets() {
    user_presets_.clear();
    QFile f(userPresetsPath());
    if (!f.exists()) return;
    if (!f.open(QIODevice::ReadOnly)) {
        logLine("warning", "cannot read the user presets " + f.fileName());
        return;
    }
    try {
        user_presets_ = presets_from_json(json::parse(f.readAll().toStdString()));
    } catch (const std::exception& e) {
        logLine("warning", "user presets " + f.fileName() + ": " + e.what());
    }
}

void MainWindow::fillPresetCombo() {
    preset_combo_->clear();
    const auto& all = builtin_presets();
    for (std::size_t i = 0; i < all.size(); ++i) {
        preset_combo_->addItem(QString::fromStdString(all[i].category + ": " + all[i].name),
                               static_cast<int>(i));
        preset_combo_->setItemData(
            preset_combo_->count() - 1,
            QString::fromStdString(all[i].description + "\nSource: " + all[i].source),
            Qt::ToolTipRole);
    }
    for (std::size_t i = 0; i < user_presets_.size(); ++i)
        preset_combo_->addItem("User: " + QString::fromStdString(user_presets_[i].name),
                               -static_cast<int>(i) - 1);
}

QString MainWindow::saveUserPreset(const QString& name) {
    if (!sync_.valid()) return "not connected: there are no parameters in force to save";
    Preset p;
    std::string id;
    for (QChar c : name.toLower())
        id += (c.isLetterOrNumber() && c.unicode() < 128) ? static_cast<char>(c.unicode()) : '_';
    p.id = "user_" + id;
    p.name = name.toStdString();
    p.category = "User";
    p.description = "saved from linkem-gui";
    p.source = "the parameters in force in linkemd " +
               hello_.value("linkemd_version", std::string("?")) + " (generation " +
               std::to_string(sync_.generation()) + ") on " +
               QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    try {
        p.link.a_to_b = link_params_from_json(sync_.applied()["a_to_b"]);
        p.link.b_to_a = sync_.applied().contains("b_to_a")
                            ? link_params_from_json(sync_.applied()["b_to_a"])
                            : p.link.a_to_b;
    } catch (const std::exception& e) {
        return QString("the parameters in force cannot be read: ") + e.what();
    }
    std::erase_if(user_presets_, [&](const Preset& q) { return q.id == p.id; });
    user_presets_.push_back(p);
    const QString path = userPresetsPath();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return "cannot write " + path + ": " + f.errorString();
    f.write(QByteArray::fromStdString(presets_to_json(user_presets_).dump(2) + "\n"));
    fillPresetCombo();
    logLine("info", "user preset '" + name + "' saved to " + path);
    return {};
}

QString MainWindow::openScenario(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return "cannot open " + path + ": " + f.errorString();
    json file = json::parse(f.readAll().toStdString(), nullptr, false);
    if (file.is_discarded() || !file.is_object())
        return path + ": not a JSON object (a linkemd --config file is expected)";
    LinkConfig link;
    try {
        link = link_file_from_json(file, static_cast<unsigned>(directions_));
    } catch (const ParamError& e) {
        return path + ": " + QString::fromStdString(e.field()) + ": " +
               QString::fromStdString(e.message());
    } catch (const std::exception& e) {
        return path + ": " + e.what();
    }
    scenario_base_ = file;
    Preset p;
    p.name = QFileInfo(path).fileName().toStdString();
    p.link = link;
    sync_.setUpdate(presetUpdate(p, -1));
    logLine("info", "scenario " + path + " applied");
    return {};
}

QString MainWindow::saveScenario(const QString& path) {
    if (!sync_.valid()) return "not connected: there are no parameters in force to save";
    LinkConfig link;
    try {
        link.a_to_b = link_params_from_json(sync_.applied()["a_to_b"]);
        if (sync_.applied().contains("b_to_a"))
            link.b_to_a = link_params_from_json(sync_.applied()["b_to_a"]);
    } catch (const std::exception& e) {
        return QString("the parameters in force cannot be read: ") + e.what();
    }
    const json out = link_file_to_json(link, static_cast<unsigned>(directions_), scenario_base_);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return "cannot write " + path + ": " + f.errorString();
    f.write(QByteArray::fromStdString(out.dump(2) + "\n"));
    logLine("info", "scenario saved to " + path + " (use it with linkemd --config)");
    return {};
}

// ----------------------------------------------------------------------------- traffic
void MainWindow::refreshTraffic(const json& t) {
    if (!t.value("available", false)) {
        traffic_box_->setEnabled(false);
        return;
    }
    traffic_running_->setChecked(t.value("running", false));
    const int i = traffic_pattern_->findData(QString::fromStdString(t.value("pattern", "cbr")));
    if (i >= 0) traffic_pattern_->setCurrentIndex(i);
    traffic_rate_->setValue(t.value("rate_bps", 0.0) / 1e6);
    traffic_frame_->setValue(t.value("frame_size_bytes", 1518));
    traffic_period_->setValue(t.value("period_us", 0.0) / 1e6);
    traffic_status_->setText(QString("%1, %2 frames/s")
                                 .arg(t.value("running", false) ? "sending" : "stopped")
                                 .arg(t.value("frames_per_s", 0.0), 0, 'f', 0));
    traffic_status_->setStyleSheet({});
}

void MainWindow::sendTraffic() {
    json p = {{"running", traffic_running_->isChecked()},
              {"pattern", traffic_pattern_->currentData().toString().toStdString()},
              {"rate_bps", traffic_rate_->value() * 1e6},
              {"frame_size_bytes", traffic_frame_->value()}};
    if (traffic_pattern_->currentData() == "sine") p["period_us"] = traffic_period_->value() * 1e6;
    client_.request("set_traffic", p, this, [this](const Reply& r) {
        if (r.ok) {
            refreshTraffic(r.result);
        } else {
            traffic_status_->setText(
                "linkemd refused: " + (r.field.isEmpty() ? QString() : r.field + ": ") + r.message);
            traffic_status_->setStyleSheet("color: #c00000;");
        }
    });
}

// ------------------------------------------------------------------------ view, settings
void MainWindow::logLine(const QString& severity, const QString& text) {
    const QString time = QDateTime::currentDateTime().toString("HH:mm:ss");
    const bool warn = severity == "warning" || severity == "error";
    log_->appendHtml(warn ? QString("<span style='color:#b00000; font-weight:bold'>%1 ⚠ %2</span>")
                                .arg(time, text.toHtmlEscaped())
                          : QString("<span>%1 %2</span>").arg(time, text.toHtmlEscaped()));
}

void MainWindow::setProjectorMode(bool on) {
    if (projector_action_->isChecked() != on) projector_action_->setChecked(on);
    QFont f = font();
    f.setPointSizeF(on ? base_font_pt_ * 1.6 : base_font_pt_);
    setFont(f);
    // Labels with a font of their own (the smaller help lines) follow by hand.
    for (QWidget* w : findChildren<QWidget*>())
        if (w->property("linkem_small").toBool()) {
            QFont small = w->font();
            small.setPointSizeF(f.pointSizeF() * 0.9);
            w->setFont(small);
        }
    charts_set_projector(charts_, on);
    columns_fit_->fit();  // larger fonts need wider columns
}

void MainWindow::setPaused(bool on) {
    if (pause_action_->isChecked() != on) pause_action_->setChecked(on);
    charts_set_paused(charts_, on);
    statusBar()->showMessage(on ? "charts paused (Space resumes)" : "charts running", 3000);
}

void MainWindow::setWindowSeconds(int s) {
    const int i = window_combo_->findData(s);
    if (i >= 0 && i != window_combo_->currentIndex()) window_combo_->setCurrentIndex(i);
    readouts_->setWindow(s);
    charts_set_window(charts_, s);
}

void MainWindow::readSettings() {
    QSettings s;
    restoreGeometry(s.value("window/geometry").toByteArray());
    layout_restored_ = restoreState(s.value("window/state").toByteArray());
    control_edit_->setText(s.value("endpoints/control").toString());
    telemetry_edit_->setText(s.value("endpoints/telemetry").toString());
    if (options_.endpoints.server_key_file.isEmpty() &&
        options_.endpoints.client_cert_file.isEmpty()) {
        options_.endpoints.server_key_file = s.value("endpoints/server_key_file").toString();
        options_.endpoints.client_cert_file = s.value("endpoints/client_cert_file").toString();
    }
    setWindowSeconds(s.value("charts/window_s", 30).toInt());
}

void MainWindow::writeSettings() {
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    s.setValue("endpoints/control", control_edit_->text());
    s.setValue("endpoints/telemetry", telemetry_edit_->text());
    s.setValue("endpoints/server_key_file", options_.endpoints.server_key_file);
    s.setValue("endpoints/client_cert_file", options_.endpoints.client_cert_file);
    s.setValue("charts/window_s", window_combo_->currentData().toInt());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (options_.use_settings) writeSettings();
    QMainWindow::closeEvent(e);
}

}  // namespace linkem::gui
