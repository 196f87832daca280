#include "scenario_strip.hpp"

#include <algorithm>
#include <cmath>

#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "client.hpp"
#include "link_sync.hpp"
#include "linkem/messages.hpp"
#include "linkem/scenario_file.hpp"
#include "param_control.hpp"
#include "telemetry_model.hpp"

namespace linkem::gui {

using proto::Method;

namespace {
constexpr std::int64_t kRampEveryNs = 100'000'000;  // the band follows a ramp in 100 ms steps
const QColor kLaneColors[] = {QColor(31, 119, 180),  QColor(214, 39, 40),  QColor(44, 160, 44),
                              QColor(148, 103, 189), QColor(255, 127, 14), QColor(23, 190, 207)};

// A value in the unit people read (the field table's: ms, Mbit/s, %).
QString shown(const std::string& key, double v) {
    if (const LinkParamField* f = link_param_field(key))
        return QString::fromStdString(f->shown_text(v, 4));
    return QString::number(v, 'g', 5);
}

QString timeText(double s) {
    if (s >= 60)
        return QString("%1:%2")
            .arg(static_cast<int>(s) / 60)
            .arg(static_cast<int>(s) % 60, 2, 10, QChar('0'));
    return QString::number(s, 'f', s < 10 ? 1 : 0) + " s";
}

}  // namespace

// ----------------------------------------------------------------------------- the view
ScenarioTimelineView::ScenarioTimelineView(const ScenarioTimeline& model, QWidget* parent)
    : QWidget(parent), model_(model) {
    setObjectName("scenario_timeline");
    setMouseTracking(false);
    setCursor(Qt::PointingHandCursor);
    setToolTip(
        "Click or drag to seek. One row per parameter: A→B solid, B→A dashed "
        "(one line when both are the same); the values at the cursor A→B / B→A.");
}

int ScenarioTimelineView::rowHeight() const {
    return fontMetrics().height() + 4;
}

// One row per key: both directions' lanes of a key share it (A→B solid, B→A dashed).
static std::vector<std::string> rowKeys(const ScenarioTimeline& m) {
    std::vector<std::string> keys;
    for (const auto& l : m.lanes())
        if (std::find(keys.begin(), keys.end(), l.key) == keys.end()) keys.push_back(l.key);
    return keys;
}

int ScenarioTimelineView::rows() const {
    return static_cast<int>(rowKeys(model_).size());
}

QSize ScenarioTimelineView::sizeHint() const {
    // a row of text a row up to four rows, then 12 or more pixels a row (labels in a smaller
    // font); 10 where the window has no more room
    const int n = std::max(1, rows());
    const int lane = n <= 4 ? rowHeight() : std::max(12, std::min(rowHeight(), 120 / n));
    return {600, n * lane + fontMetrics().height() + 8};
}

QSize ScenarioTimelineView::minimumSizeHint() const {
    return {200, std::min(std::max(1, rows()), 3) * 12 + fontMetrics().height() + 8};
}

int ScenarioTimelineView::rowsShown() const {
    const int fit = std::max(1, plotRect().height() / 12);
    return std::min(rows(), fit);
}

const char* const ScenarioTimelineView::kSliderNote = "a slider pauses it";
const char* const ScenarioTimelineView::kSliderNoteLong =
    "A slider moved (or a preset, a link file, Ctrl+Z) while the scenario plays pauses it at "
    "its position; ▶ goes on from there, the scenario's keys following it again from its next "
    "step, the keys it does not set keeping your value.";

QRect ScenarioTimelineView::plotRect() const {
    const int left = std::max(fontMetrics().horizontalAdvance("mean_delay_us 100 ms / 100 ms"),
                              fontMetrics().horizontalAdvance(kSliderNote) + 16) +
                     12;
    return QRect(left, 2, std::max(10, width() - left - 12),
                 std::max(4, height() - fontMetrics().height() - 8));
}

int ScenarioTimelineView::xOf(double s) const {
    const QRect r = plotRect();
    const double d = model_.durationS() > 0 ? model_.durationS() : 1;
    return r.left() + static_cast<int>(std::lround(std::clamp(s / d, 0.0, 1.0) * r.width()));
}

double ScenarioTimelineView::positionAt(int x) const {
    const QRect r = plotRect();
    const double f = std::clamp(static_cast<double>(x - r.left()) / r.width(), 0.0, 1.0);
    return f * model_.durationS();
}

void ScenarioTimelineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const QRect r = plotRect();
    const auto& lanes = model_.lanes();
    const QFontMetrics fm = fontMetrics();
    const double dur = model_.durationS() > 0 ? model_.durationS() : 1;
    // the time axis
    p.setPen(palette().color(QPalette::Mid));
    const double ticks[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600};
    double tick = ticks[0];
    for (double t : ticks)
        if (dur / t <= std::max(2, r.width() / 90)) {
            tick = t;
            break;
        }
    for (double t = 0; t <= dur + 1e-9; t += tick) {
        const int x = xOf(t);
        p.setPen(palette().color(QPalette::Midlight));
        p.drawLine(x, r.top(), x, r.bottom());
        p.setPen(palette().color(QPalette::Text));
        const QString s = timeText(t);
        const int w = fm.horizontalAdvance(s);
        p.drawText(std::clamp(x - w / 2, r.left() - w / 2, width() - w - 2),
                   r.bottom() + 4 + fm.ascent(), s);
    }
    // the rows: one per key, both directions in it
    // (as many as have 12 pixels each; the others are named in the tooltip)
    std::vector<std::string> keys = rowKeys(model_);
    const std::size_t all = keys.size();
    keys.resize(static_cast<std::size_t>(std::max(0, rowsShown())));
    const int n = std::max(1, static_cast<int>(keys.size()));
    const double lh = static_cast<double>(r.height()) / n;
    for (int i = 0; i < static_cast<int>(keys.size()); ++i) {
        const std::string& key = keys[static_cast<std::size_t>(i)];
        const double top = r.top() + i * lh;
        const QColor c = kLaneColors[static_cast<std::size_t>(i) % std::size(kLaneColors)];
        if (i > 0) {
            p.setPen(palette().color(QPalette::Midlight));
            p.drawLine(QPointF(0, top), QPointF(width(), top));
        }
        double lo = 0, hi = 0;
        bool first = true;
        QStringList values;
        for (const auto& L : lanes) {
            if (L.key != key) continue;
            lo = first ? L.lo : std::min(lo, L.lo);
            hi = first ? L.hi : std::max(hi, L.hi);
            first = false;
            double v = L.points.front().second;
            for (const auto& [t, pv] : L.points)
                if (t <= cursorS()) v = pv;
            values << shown(L.key, v);
        }
        const double span = hi > lo ? hi - lo : 1;
        auto y = [&](double v) {
            const double f = hi > lo ? (v - lo) / span : 0.5;
            return top + lh - 3 - f * std::max(1.0, lh - 6);
        };
        for (const auto& L : lanes) {
            if (L.key != key) continue;
            QPolygonF line;
            for (const auto& [t, v] : L.points)
                line << QPointF(xOf(t), y(v));
            p.setPen(QPen(c, 2, L.dir == 1 ? Qt::DashLine : Qt::SolidLine));
            p.drawPolyline(line);
        }
        // the key, and the value(s) in force at the cursor (A→B / B→A), in a font that fits
        const QString value = values.join(" / ");
        QFont lf = font();
        if (fm.height() > lh - 1) lf.setPixelSize(std::max(8, static_cast<int>(lh) - 2));
        p.setFont(lf);
        const QFontMetrics lfm(lf);
        const int vw = lfm.horizontalAdvance(value);
        p.setPen(c);
        const int ty = static_cast<int>(top + lh / 2 + lfm.ascent() / 2.0 - 1);
        p.drawText(4, ty, lfm.elidedText(paramLabel(key), Qt::ElideMiddle, r.left() - 16 - vw));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(4, static_cast<int>(top), r.left() - 8, static_cast<int>(lh)),
                   Qt::AlignRight | Qt::AlignVCenter, value);
        p.setFont(font());
    }
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(4, r.bottom() + 2, r.left() - 8, fm.height() + 4),
               Qt::AlignLeft | Qt::AlignVCenter, QString("⚠ ") + kSliderNote);
    if (keys.size() < all) {
        // over the axis' right end, on the background (a taller window shows them)
        const QString more = QString("+%1 more rows").arg(all - keys.size());
        const int mw = fm.horizontalAdvance(more) + 8;
        const QRect mr(r.right() - mw, r.bottom() + 2, mw + 12, fm.height() + 4);
        p.fillRect(mr, palette().base());
        p.setPen(palette().color(QPalette::Text));
        p.drawText(mr, Qt::AlignCenter, more);
    }
    // the cursor
    const int cx = xOf(cursorS());
    p.setPen(QPen(QColor(200, 0, 0), 2));
    p.drawLine(cx, 0, cx, r.bottom() + 2);
    p.setBrush(QColor(200, 0, 0));
    p.drawPolygon(QPolygon({QPoint(cx - 5, 0), QPoint(cx + 5, 0), QPoint(cx, 6)}));
}

void ScenarioTimelineView::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !model_.loaded()) return;
    dragging_ = true;
    drag_s_ = positionAt(static_cast<int>(e->position().x()));
    update();
}

void ScenarioTimelineView::mouseMoveEvent(QMouseEvent* e) {
    if (!dragging_) return;
    drag_s_ = positionAt(static_cast<int>(e->position().x()));
    update();
}

void ScenarioTimelineView::mouseReleaseEvent(QMouseEvent* e) {
    if (!dragging_ || e->button() != Qt::LeftButton) return;
    drag_s_ = positionAt(static_cast<int>(e->position().x()));
    dragging_ = false;
    emit seekRequested(drag_s_);
    update();
}

// ---------------------------------------------------------------------------- the strip
ScenarioStrip::ScenarioStrip(Client& client, LinkSync& sync, TelemetryModel& model, QWidget* parent)
    : QWidget(parent), client_(client), sync_(sync), model_(model) {
    setObjectName("scenario_strip");
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 2, 4, 2);
    v->setSpacing(2);
    auto* top = new QHBoxLayout;
    top->setSpacing(4);
    // The style's media icons, not the symbols ⏸ and friends: the fonts of many desktops
    // (and of Xvfb) have no glyph for U+23F8 and draw a box.
    auto button = [this, top](QStyle::StandardPixmap icon, const QString& text, const char* name,
                              const QString& tip) {
        auto* b = new QPushButton(style()->standardIcon(icon), text, this);
        b->setObjectName(name);
        b->setToolTip(tip);
        top->addWidget(b);
        return b;
    };
    play_ = button(QStyle::SP_MediaPlay, "Play", "scenario_play",
                   "Play the scenario (resume when paused)");
    pause_ = button(QStyle::SP_MediaPause, "Pause", "scenario_pause",
                    "Pause: the parameters of the position stay");
    stop_ =
        button(QStyle::SP_MediaStop, "Stop", "scenario_stop", "Stop: the parameters in force stay");
    open_ = new QToolButton(this);
    open_->setObjectName("scenario_open");
    open_->setText("Open ▾");
    open_->setPopupMode(QToolButton::InstantPopup);
    auto* menu = new QMenu(open_);
    for (const QString& name : builtinNames())
        menu->addAction(name, this, [this, name] { loadBuiltin(name); });
    menu->addSeparator();
    menu->addAction("File (JSON or CSV)…", this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, "Open scenario", {}, "Scenarios (*.json *.csv);;All files (*)");
        if (path.isEmpty()) return;
        const QString err = loadFile(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Open scenario", err);
    });
    open_->setMenu(menu);
    top->addWidget(open_);
    save_ = button(QStyle::SP_DialogSaveButton, "Save…", "scenario_save",
                   "Save the loaded scenario as JSON");
    title_ = new QLabel(this);
    title_->setObjectName("scenario_title");
    title_->setTextFormat(Qt::PlainText);
    // never wider than the window: the step's note is left out when it does not fit
    title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    top->addWidget(title_, 1);
    auto* hide = new QToolButton(this);
    hide->setObjectName("scenario_hide");
    hide->setText("×");
    hide->setToolTip("Hide the strip (the Scenario menu shows it again)");
    top->addWidget(hide);
    v->addLayout(top);
    view_ = new ScenarioTimelineView(timeline_, this);
    v->addWidget(view_);
    // what a slider does meanwhile (linkemd pauses the scenario at a set_link): drawn by the
    // view under the parameters' names
    view_->setToolTip(view_->toolTip() + "\n\n" + ScenarioTimelineView::kSliderNoteLong);
    connect(play_, &QPushButton::clicked, this, &ScenarioStrip::play);
    connect(pause_, &QPushButton::clicked, this, &ScenarioStrip::pause);
    connect(stop_, &QPushButton::clicked, this, &ScenarioStrip::stop);
    connect(save_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, "Save scenario", QString::fromStdString(timeline_.name()) + ".json",
            "Scenario (*.json)");
        if (path.isEmpty()) return;
        const QString err = save(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Save scenario", err);
    });
    connect(hide, &QToolButton::clicked, this, &QWidget::hide);
    connect(view_, &ScenarioTimelineView::seekRequested, this, &ScenarioStrip::seek);
    connect(&client_, &Client::telemetry, this, &ScenarioStrip::onTelemetry);
    connect(&client_, &Client::helloReceived, this, [this] {
        timeline_.clear();
        refreshStatus();
    });
    connect(&client_, &Client::stateChanged, this, [this] { showState(); });
    showState();
    hide->setVisible(true);
    setVisible(false);
}

QStringList ScenarioStrip::builtinNames() {
    QStringList out;
    for (const auto& b : builtin_scenarios())
        out << QString::fromStdString(b.name);
    return out;
}

void ScenarioStrip::fillMenu(QMenu* menu) {
    auto* builtin = menu->addMenu("&Built-in scenario");
    for (const QString& name : builtinNames())
        builtin->addAction(name, this, [this, name] { loadBuiltin(name); });
    menu->addAction("&Open scenario file…", this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, "Open scenario", {}, "Scenarios (*.json *.csv);;All files (*)");
        if (path.isEmpty()) return;
        const QString err = loadFile(path);
        if (!err.isEmpty()) QMessageBox::warning(this, "Open scenario", err);
    });
    menu->addAction("&Save scenario…", this, [this] { save_->click(); });
    menu->addSeparator();
    menu->addAction("&Play", this, &ScenarioStrip::play);
    menu->addAction("P&ause", this, &ScenarioStrip::pause);
    menu->addAction("S&top", this, &ScenarioStrip::stop);
    menu->addAction("S&how the strip", this, [this] { setVisible(true); });
}

template <Method M>
void ScenarioStrip::call(const proto::ParamsOf<M>& params, const QString& what) {
    client_.call<M>(
        params, this,
        [this, what](const proto::ScenarioStatus& s) {
            showStatus(s);
            if (!what.isEmpty()) emit note("info", what);
        },
        [this](const Failure& f) {
            emit note(
                "warning",
                QString::fromUtf8(proto::name(M).data(), static_cast<int>(proto::name(M).size())) +
                    " refused: " + (f.field.isEmpty() ? QString() : f.field + ": ") + f.message);
        });
}

void ScenarioStrip::loadBuiltin(const QString& name) {
    proto::LoadScenario p;
    p.name = name.toStdString();
    call<Method::load_scenario>(p, "scenario " + name + " loaded");
}

QString ScenarioStrip::loadFile(const QString& path) {
    proto::LoadScenario p;
    try {
        p.scenario = read_scenario_file(path.toStdString());
    } catch (const std::exception& e) {
        return e.what();
    }
    call<Method::load_scenario>(p, "scenario " + path + " loaded");
    return {};
}

QString ScenarioStrip::save(const QString& path) const {
    if (!timeline_.loaded()) return "no scenario is loaded";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return "cannot write " + path + ": " + f.errorString();
    f.write(QByteArray::fromStdString(scenario_to_json(timeline_.scenario()).dump(2) + "\n"));
    return {};
}

void ScenarioStrip::play() {
    if (timeline_.state() == "paused")
        call<Method::resume_scenario>({}, {});
    else
        call<Method::start_scenario>({}, {});
}

void ScenarioStrip::pause() {
    call<Method::pause_scenario>({}, {});
}

void ScenarioStrip::stop() {
    call<Method::stop_scenario>({}, {});
}

void ScenarioStrip::seek(double position_s) {
    call<Method::seek_scenario>(proto::ScenarioPositionParams{position_s}, {});
}

void ScenarioStrip::refreshStatus() {
    if (asking_) return;
    asking_ = true;
    client_.call<Method::get_scenario>(
        {}, this,
        [this](const proto::ScenarioStatus& s) {
            asking_ = false;
            showStatus(s);
        },
        [this](const Failure&) { asking_ = false; });
}

void ScenarioStrip::showStatus(const proto::ScenarioStatus& status) {
    const bool was = timeline_.loaded();
    const LinkConfig base = sync_.valid() ? sync_.applied() : LinkConfig{};
    std::string err;
    if (!timeline_.setStatus(status, base, client_.directions(), &err))
        emit note("warning", "the scenario cannot be drawn: " + QString::fromStdString(err));
    if (timeline_.loaded() && !was) setVisible(true);
    if (!timeline_.loaded() && was) setVisible(false);
    showState();
    view_->updateGeometry();
    emit statusChanged();
}

void ScenarioStrip::onTelemetry(const proto::Telemetry& t) {
    if (t.stats) {
        const auto& sc = t.stats->scenario;
        if (sc.has_value() != timeline_.loaded() || (sc && sc->name != timeline_.name())) {
            refreshStatus();  // loaded, replaced or gone (another client, linkemd --scenario)
            return;
        }
        if (!sc) return;
        const std::string before = timeline_.state();
        timeline_.setPosition(*sc);
        if (timeline_.state() != before) refreshStatus();
        bool any = false;
        timeline_.changesUntil(t.header.t_ns, kRampEveryNs,
                               [&](std::int64_t at, const LinkConfig& link) {
                                   model_.store().setLinkAt(link, 2, at);
                                   any = true;
                               });
        if (any) emit targetsChanged();
        showState();
    } else if (t.event) {
        if (t.event->kind == "scenario") refreshStatus();
        // the sliders show the values in force (steps publish no parameter generation)
        if (t.event->kind == "scenario_step") {
            sync_.reload();
            model_.readouts().stepAt(t.event->step_t_ns.value_or(0));
        }
    }
}

void ScenarioStrip::showState() {
    const bool connected = client_.state() == Client::State::connected;
    const bool loaded = timeline_.loaded();
    const QString state = QString::fromStdString(timeline_.state());
    play_->setEnabled(connected && loaded && state != "playing");
    pause_->setEnabled(connected && loaded && state == "playing");
    stop_->setEnabled(connected && loaded && state != "stopped");
    save_->setEnabled(loaded);
    open_->setEnabled(connected);
    view_->setEnabled(connected && loaded);
    QString t;
    if (loaded) {
        t = QString("%1 — %2 — %3 / %4")
                .arg(QString::fromStdString(timeline_.name()), state,
                     timeText(timeline_.positionS()), timeText(timeline_.durationS()));
        // room for the name, state and times at least ("paused" is the longest state)
        const int need = title_->fontMetrics().horizontalAdvance(
                             QString("%1 — paused — %2 / %2")
                                 .arg(QString::fromStdString(timeline_.name()),
                                      timeText(timeline_.durationS()))) +
                         8;
        if (title_->minimumWidth() != need) title_->setMinimumWidth(need);
        const std::string n = timeline_.stepNote();
        const QString with = t + " — " + QString::fromStdString(n);
        if (!n.empty() && title_->fontMetrics().horizontalAdvance(with) <= title_->width())
            t = with;
    } else {
        t = "no scenario loaded";
    }
    if (title_->text() != t) {
        title_->setText(t);
        title_->setToolTip(t);
    }
    view_->update();
}

}  // namespace linkem::gui
