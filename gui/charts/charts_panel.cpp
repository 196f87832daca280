#include "charts_panel.hpp"

#include <time.h>
#include <algorithm>
#include <cmath>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPixmap>
#include <QSaveFile>
#include <QScatterSeries>
#include <QTextStream>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include "chart_data.hpp"

namespace linkem::gui {

using nlohmann::json;

QString delayIncludesText() {
    return QStringLiteral(
        "Actual delay = the emulated delay + the spacer's queueing (+ the wait behind an "
        "earlier packet when order is kept) + lateness (the data plane's polling and "
        "stalls); not the NIC's transmit queue or the wire.");
}

QList<QPointF> decimateMinMax(const QList<QPointF>& in, double x0, double column_w) {
    QList<QPointF> out;
    if (in.isEmpty() || !(column_w > 0)) return in;
    out.reserve(std::min<qsizetype>(in.size(), 4096));
    qsizetype i = 0;
    while (i < in.size()) {
        const double col = std::floor((in[i].x() - x0) / column_w);
        qsizetype lo = i, hi = i, j = i;
        for (; j < in.size() && std::floor((in[j].x() - x0) / column_w) == col; ++j) {
            if (in[j].y() < in[lo].y()) lo = j;
            if (in[j].y() > in[hi].y()) hi = j;
        }
        if (lo == hi) {
            out.push_back(in[lo]);
        } else {
            out.push_back(in[std::min(lo, hi)]);
            out.push_back(in[std::max(lo, hi)]);
        }
        i = j;
    }
    return out;
}

namespace {

const QColor kDir[2] = {QColor(31, 119, 180), QColor(230, 115, 0)};
const QColor kDirDark[2] = {QColor(8, 48, 107), QColor(140, 60, 0)};
const QColor kCause[4] = {QColor(214, 39, 40), QColor(148, 103, 189), QColor(44, 160, 44),
                          QColor(120, 80, 40)};
const char* const kCauseLabel[4] = {"loss model", "policer", "spacer limit", "buffer full"};

QString dirLabel(int d) {
    return d == 0 ? QStringLiteral("A→B") : QStringLiteral("B→A");
}

QColor alpha(QColor c, int a) {
    c.setAlpha(a);
    return c;
}

struct Unit {
    QString name;
    double div = 1;
};

// A delay unit for values up to max_us.
Unit delayUnit(double max_us) {
    if (max_us >= 2e6) return {QStringLiteral("s"), 1e6};
    if (max_us >= 2000) return {QStringLiteral("ms"), 1e3};
    return {QStringLiteral("µs"), 1};
}

Unit rateUnit(double max, const QString& base) {
    if (max >= 2e9) return {QStringLiteral("G") + base, 1e9};
    if (max >= 2e6) return {QStringLiteral("M") + base, 1e6};
    if (max >= 2e3) return {QStringLiteral("k") + base, 1e3};
    return {base, 1};
}

QValueAxis* newAxis(const QString& title) {
    auto* a = new QValueAxis;
    a->setTitleText(title);
    a->setLabelFormat(QStringLiteral("%.4g"));
    return a;
}

// A step of 1, 2 or 5 times a power of ten giving about `ticks` intervals over `range`.
double niceStep(double range, int ticks) {
    if (!(range > 0) || !std::isfinite(range)) return 1;
    const double raw = range / ticks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

// The axis spans lo..hi (padded a little, never below 0 when from_zero or when lo >= 0)
// with ticks at multiples of a nice step.
void setRange(QValueAxis* axis, double lo, double hi, bool from_zero) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    const bool positive = lo >= 0;
    if (from_zero) lo = std::min(0.0, lo);
    if (hi - lo < 1e-9) {
        const double m = std::max(std::fabs(hi) * 0.05, 1e-3);
        hi += m;
        lo -= m;
    } else {
        const double pad = (hi - lo) * 0.04;
        hi += pad;
        lo -= pad;
    }
    if (from_zero || positive) lo = std::max(lo, 0.0);
    const double step = niceStep(hi - lo, 5);
    lo = std::floor(lo / step + 1e-9) * step;
    hi = std::ceil(hi / step - 1e-9) * step;
    // lo and hi are multiples of step: fixed ticks fall on the nice numbers
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setRange(lo, hi);
    axis->setTickCount(std::clamp(static_cast<int>(std::lround((hi - lo) / step)) + 1, 2, 21));
}

// A time axis: exactly x0..x1 (the window), ticks at multiples of a nice number of seconds.
// The interval grows before the range does and shrinks after it: a short range's interval
// applied to a long range for a moment would lay out millions of ticks.
void setTimeRange(QValueAxis* axis, double x0, double x1) {
    const double step = niceStep(x1 - x0, 6);
    if (axis->tickType() != QValueAxis::TicksDynamic) {
        axis->setTickAnchor(0);
        axis->setTickInterval(std::max(step, axis->max() - axis->min()));
        axis->setTickType(QValueAxis::TicksDynamic);
    }
    if (step >= axis->tickInterval()) {
        axis->setTickInterval(step);
        axis->setRange(x0, x1);
    } else {
        axis->setRange(x0, x1);
        axis->setTickInterval(step);
    }
}

// Empties the series, lets `axes` set the ranges, then gives each series its new points.
// A range change makes Qt Charts lay out every series of the chart again (and stroke its
// line for hit testing, the dearest part of a redraw); on empty series that costs nothing,
// so each series is laid out once per redraw instead of once per axis change plus once.
// (Scatter series are left as they are: emptying one deletes its marker items, refilling
// creates them again.) LINKEM_CHARTS_PROFILE=1 prints the CPU time of each step.
qint64 cpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

using Batch = std::vector<std::pair<QXYSeries*, QList<QPointF>*>>;
template <class F>
void commit(const Batch& items, F&& axes) {
    static const bool profile = qEnvironmentVariableIsSet("LINKEM_CHARTS_PROFILE");
    const qint64 t0 = cpuNs();
    for (const auto& [s, v] : items)
        if (s->count() > 0 && s->type() != QAbstractSeries::SeriesTypeScatter)
            s->replace(QList<QPointF>());
    const qint64 t1 = cpuNs();
    axes();
    const qint64 t2 = cpuNs();
    for (const auto& [s, v] : items) {
        const qint64 u = cpuNs();
        s->replace(*v);
        if (profile)
            qDebug("  %s: %lld points %.2f ms", qPrintable(s->name()),
                   static_cast<long long>(v->size()), (cpuNs() - u) / 1e6);
    }
    if (profile)
        qDebug("commit: empty %.2f axes %.2f fill %.2f ms", (t1 - t0) / 1e6, (t2 - t1) / 1e6,
               (cpuNs() - t2) / 1e6);
}

void account(std::uint64_t& n, double& sum, double& max, qint64 since) {
    const double ms = static_cast<double>(cpuNs() - since) / 1e6;
    ++n;
    sum += ms;
    max = std::max(max, ms);
}

// A chart view that adds the CPU time of its paint events to the panel's costs.
class TimedView : public QChartView {
  public:
    TimedView(QChart* c, ChartsCosts* costs) : QChartView(c), costs_(costs) {}

  protected:
    void paintEvent(QPaintEvent* e) override {
        const qint64 t0 = cpuNs();
        QChartView::paintEvent(e);
        account(costs_->paints, costs_->paint_ms, costs_->paint_max_ms, t0);
    }

  private:
    ChartsCosts* costs_;
};

// A bold title over one or two small lines of caption.
QString chartTitle(const QString& title, const QString& caption,
                   const QString& caption2 = QString()) {
    QString t = QStringLiteral("<b>%1</b><br><small>%2</small>").arg(title, caption);
    if (!caption2.isEmpty()) t += QStringLiteral("<br><small>%1</small>").arg(caption2);
    return t;
}

}  // namespace

struct ChartsPanel::Impl {
    ChartData data;
    double window_s = 30;
    bool paused = false, projector = false, packets = false;
    // What to draw again: every chart (a setting, the window, the plot size changed), the
    // delay chart (a delay message arrived), throughput and drops (a stats message arrived).
    // A chart whose data did not change is not touched: it costs nothing to paint again.
    bool dirty = true, delay_new = false, stats_new = false;
    int directions = 0;
    std::int64_t view_lo = 0, view_hi = 30 * kNsPerS;
    int columns = 800;
    std::uint64_t redraws = 0;
    ChartsCosts costs;
    QTimer timer;  // every 30 ms: settings, the histogram's due recount
    // A message redraws its charts as soon as 30 ms have passed since the last redraw: the
    // 30 ms ticks alone would add up to 30 ms to the 50 ms between delay messages.
    QTimer soon;
    QElapsedTimer since_redraw;
    void arrived() {
        if (paused || soon.isActive()) return;
        const qint64 e = since_redraw.isValid() ? since_redraw.elapsed() : 30;
        soon.start(static_cast<int>(std::max<qint64>(1, 30 - e)));
    }
    Histogram drawn[2];
    bool hist_valid = false;
    bool hist_new = false;  // delay samples arrived since the histogram was counted
    QElapsedTimer hist_clock;
    std::int64_t hist_span = 0;
    int hist_directions = 0;

    QChart *delay = nullptr, *hist = nullptr, *thr = nullptr, *drops = nullptr;
    QChartView *delayView = nullptr, *histView = nullptr, *thrView = nullptr, *dropsView = nullptr;
    QValueAxis *delayX, *delayY, *histX, *histY, *thrX, *thrY, *dropsX, *dropsY;
    QLineSeries* samples[2];
    QScatterSeries* measured[2];
    QLineSeries* target[2];
    QLineSeries *bandUp[2], *bandLo[2], *envUp[2], *envLo[2];
    QAreaSeries* env[2];
    QLineSeries* histLine[2];
    QAreaSeries* histArea[2];
    QLineSeries* dens[2];
    QLineSeries *thrIn[2], *thrOut[2];
    QLineSeries* drop[2][4];

    bool shown(int d) const { return directions == 0 || directions == d + 1; }
};

namespace {

QChart* newChart() {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignBottom);
    c->setMargins(QMargins(4, 4, 4, 4));
    return c;
}

QChartView* newView(ChartsCosts* costs, QChart* c, const QString& tip) {
    auto* v = new TimedView(c, costs);
    // Antialiasing triples the cost of painting dense series; projector mode turns it on.
    v->setRenderHint(QPainter::Antialiasing, false);
    // Every redraw moves most items (the series, the scatter markers, the time axis' ticks
    // and labels): a BSP index of them would be rebuilt each time and minimal updates would
    // sum their bounding rects, so the scene keeps no index and the view repaints whole.
    v->scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
    v->setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    v->setOptimizationFlags(QGraphicsView::DontSavePainterState |
                            QGraphicsView::DontAdjustForAntialiasing);
    v->setToolTip(tip);
    v->setMinimumSize(320, 220);
    return v;
}

void attach(QChart* c, QAbstractSeries* s, QValueAxis* x, QValueAxis* y) {
    c->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
}

QLineSeries* line(const QString& name, const QColor& color, qreal width,
                  Qt::PenStyle style = Qt::SolidLine) {
    auto* s = new QLineSeries;
    s->setName(name);
    QPen p(color);
    p.setWidthF(width);
    p.setStyle(style);
    s->setPen(p);
    return s;
}

QAreaSeries* area(const QString& name, QLineSeries* up, QLineSeries* lo, const QColor& fill) {
    auto* a = new QAreaSeries(up, lo);
    a->setName(name);
    a->setBrush(fill);
    a->setPen(Qt::NoPen);
    return a;
}

// Shows or hides a series' legend entry. QLegend does not lay itself out again when a
// marker's visibility changes (Qt 6.4: the entries then all sit at one place), so a change
// invalidates its layout.
void showMarker(QChart* c, QAbstractSeries* s, bool on) {
    bool changed = false;
    for (QLegendMarker* m : c->legend()->markers(s)) {
        if (m->isVisible() == on) continue;
        m->setVisible(on);
        changed = true;
    }
    if (changed && c->legend()->layout()) c->legend()->layout()->invalidate();
}

}  // namespace

ChartsPanel::ChartsPanel(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
    Impl& I = *d_;
    const QString includes = delayIncludesText();

    // Delay series.
    I.delay = newChart();
    I.delay->setTitle(chartTitle(
        tr("Delay per packet"),
        tr("Actual delay = emulated delay + spacer queueing (+ wait behind earlier packets "
           "when order is kept) + lateness; not the NIC queue or the wire"),
        tr("line: sampled packets (min and max per pixel) · shaded: min/max of every packet "
           "per interval · dashed: target mean · dotted: ± jitter")));
    I.delayX = newAxis(tr("Time since linkemd started (s)"));
    I.delayY = newAxis(tr("Delay (ms)"));
    I.delay->addAxis(I.delayX, Qt::AlignBottom);
    I.delay->addAxis(I.delayY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d) {
        I.envUp[d] = new QLineSeries;
        I.envLo[d] = new QLineSeries;
        I.env[d] = area(tr("%1 min/max per interval").arg(dirLabel(d)), I.envUp[d], I.envLo[d],
                        alpha(kDir[d], 70));
        attach(I.delay, I.env[d], I.delayX, I.delayY);
    }
    for (int d = 0; d < 2; ++d) {
        I.samples[d] = line(tr("%1 actual").arg(dirLabel(d)), kDir[d], 1.0);
        attach(I.delay, I.samples[d], I.delayX, I.delayY);
    }
    for (int d = 0; d < 2; ++d) {
        I.measured[d] = new QScatterSeries;
        I.measured[d]->setName(tr("%1 measured (built-in traffic)").arg(dirLabel(d)));
        I.measured[d]->setPen(Qt::NoPen);
        I.measured[d]->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        I.measured[d]->setMarkerSize(3);
        I.measured[d]->setColor(kDirDark[d]);
        I.measured[d]->setBorderColor(kDirDark[d]);
        attach(I.delay, I.measured[d], I.delayX, I.delayY);
    }
    for (int d = 0; d < 2; ++d) {
        I.target[d] = line(tr("%1 target").arg(dirLabel(d)), kDirDark[d], 1.5, Qt::DashLine);
        I.bandUp[d] = line(tr("%1 + jitter").arg(dirLabel(d)), kDirDark[d], 1.0, Qt::DotLine);
        I.bandLo[d] = line(tr("%1 - jitter").arg(dirLabel(d)), kDirDark[d], 1.0, Qt::DotLine);
        attach(I.delay, I.target[d], I.delayX, I.delayY);
        attach(I.delay, I.bandUp[d], I.delayX, I.delayY);
        attach(I.delay, I.bandLo[d], I.delayX, I.delayY);
    }
    I.delayView =
        newView(&I.costs, I.delay,
                tr("Each sampled packet's actual delay over its arrival time (min and max of "
                   "each pixel column), the min/max of the drawn delay over every packet of "
                   "each interval, and the target mean with a band of ± jitter.\n") +
                    includes);

    // Histogram.
    I.hist = newChart();
    I.hist->setTitle(
        chartTitle(tr("Delay histogram over the window"),
                   tr("shaded: actual delay of the samples in the window (area 1)"),
                   tr("line: density of the configured distribution (a spike: constant)")));
    I.histX = newAxis(tr("Actual delay (ms)"));
    I.histY = newAxis(tr("Probability density (1/ms)"));
    I.hist->addAxis(I.histX, Qt::AlignBottom);
    I.hist->addAxis(I.histY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d) {
        I.histLine[d] = line(QString(), kDir[d], 1.0);
        I.histArea[d] = new QAreaSeries(I.histLine[d]);
        I.histArea[d]->setName(tr("%1 actual delay").arg(dirLabel(d)));
        I.histArea[d]->setBrush(alpha(kDir[d], 90));
        I.histArea[d]->setPen(QPen(kDir[d], 1.0));
        attach(I.hist, I.histArea[d], I.histX, I.histY);
    }
    for (int d = 0; d < 2; ++d) {
        I.dens[d] = line(tr("%1 configured density").arg(dirLabel(d)), kDirDark[d], 2.0);
        attach(I.hist, I.dens[d], I.histX, I.histY);
    }
    I.histView = newView(
        &I.costs, I.hist,
        tr("Histogram of the sampled packets' actual delay in the visible window, as a "
           "probability density (area 1), against the density of the configured distribution "
           "(mean delay, jitter as its standard deviation). Correlation (strategy correlated) "
           "averages successive draws, so the shape tends to normal; keeping order "
           "(uncorrelated) adds the wait behind earlier packets, reordering does not.\n") +
            includes);

    // Throughput.
    I.thr = newChart();
    I.thr->setTitle(chartTitle(tr("Throughput"),
                               tr("in: received into the emulator; out: handed to the port")));
    I.thrX = newAxis(tr("Time since linkemd started (s)"));
    I.thrY = newAxis(tr("Throughput (bit/s)"));
    I.thr->addAxis(I.thrX, Qt::AlignBottom);
    I.thr->addAxis(I.thrY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d) {
        I.thrIn[d] = line(tr("%1 in").arg(dirLabel(d)), kDir[d], 1.5);
        I.thrOut[d] = line(tr("%1 out").arg(dirLabel(d)), kDirDark[d], 1.5, Qt::DashLine);
        attach(I.thr, I.thrIn[d], I.thrX, I.thrY);
        attach(I.thr, I.thrOut[d], I.thrX, I.thrY);
    }
    I.thrView = newView(&I.costs, I.thr,
                        tr("Rates from the differences of the cumulative counters of two "
                           "stats messages. Bytes include the 4-byte FCS."));

    // Drops.
    I.drops = newChart();
    I.drops->setTitle(chartTitle(tr("Drops per second by cause"), tr("solid: A→B, dashed: B→A")));
    I.dropsX = newAxis(tr("Time since linkemd started (s)"));
    I.dropsY = newAxis(tr("Drops (packets/s)"));
    I.drops->addAxis(I.dropsX, Qt::AlignBottom);
    I.drops->addAxis(I.dropsY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (int k = 0; k < 4; ++k) {
            I.drop[d][k] = line(tr("%1 %2").arg(dirLabel(d), tr(kCauseLabel[k])), kCause[k], 1.5,
                                d == 0 ? Qt::SolidLine : Qt::DashLine);
            attach(I.drops, I.drop[d][k], I.dropsX, I.dropsY);
        }
    I.dropsView = newView(&I.costs, I.drops,
                          tr("Packets dropped per second: loss model (drops_loss), "
                             "policer, spacer fill limit, no room (buffer limit or "
                             "mbuf pool)."));

    // Controls and layout.
    auto* dirs = new QComboBox;
    dirs->addItems({tr("Both directions"), tr("A→B only"), tr("B→A only")});
    dirs->setToolTip(tr("Directions drawn in every chart"));
    auto* unit = new QComboBox;
    unit->addItems({tr("bit/s"), tr("packets/s")});
    unit->setToolTip(tr("Unit of the throughput chart"));
    connect(dirs, &QComboBox::currentIndexChanged, this, [this](int i) { setDirections(i); });
    connect(unit, &QComboBox::currentIndexChanged, this,
            [this](int i) { setThroughputInPackets(i == 1); });
    auto* bar = new QHBoxLayout;
    auto* dirsLabel = new QLabel(tr("&Show:"));
    dirsLabel->setBuddy(dirs);
    auto* unitLabel = new QLabel(tr("&Throughput in:"));
    unitLabel->setBuddy(unit);
    bar->addWidget(dirsLabel);
    bar->addWidget(dirs);
    bar->addSpacing(12);
    bar->addWidget(unitLabel);
    bar->addWidget(unit);
    bar->addStretch(1);
    auto* grid = new QGridLayout;
    grid->addWidget(I.delayView, 0, 0);
    grid->addWidget(I.histView, 0, 1);
    grid->addWidget(I.thrView, 1, 0);
    grid->addWidget(I.dropsView, 1, 1);
    grid->setColumnStretch(0, 3);
    grid->setColumnStretch(1, 2);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);
    auto* top = new QVBoxLayout(this);
    top->setContentsMargins(0, 0, 0, 0);
    top->addLayout(bar);
    top->addLayout(grid, 1);

    connect(I.delay, &QChart::plotAreaChanged, this, [this](const QRectF& r) {
        if (std::abs(static_cast<int>(r.width()) - d_->columns) * 100 > 3 * d_->columns)
            d_->dirty = true;
    });
    I.timer.setInterval(30);
    connect(&I.timer, &QTimer::timeout, this, [this] { redrawIfDue(); });
    I.timer.start();
    I.soon.setSingleShot(true);
    I.soon.setTimerType(Qt::PreciseTimer);
    connect(&I.soon, &QTimer::timeout, this, [this] { redrawIfDue(); });
    applyStyle();
    redraw();
}

ChartsPanel::~ChartsPanel() = default;

void ChartsPanel::addStats(const json& msg) {
    const qint64 t0 = cpuNs();
    d_->data.addStats(msg);
    account(d_->costs.ingests, d_->costs.ingest_ms, d_->costs.ingest_max_ms, t0);
    d_->stats_new = true;
    d_->arrived();
}

void ChartsPanel::addDelay(const json& msg) {
    const qint64 t0 = cpuNs();
    d_->data.addDelay(msg);
    account(d_->costs.ingests, d_->costs.ingest_ms, d_->costs.ingest_max_ms, t0);
    d_->delay_new = true;
    d_->hist_new = true;
    d_->arrived();
}

void ChartsPanel::setLink(const json& link) {
    d_->data.setLink(link);
    d_->dirty = true;
}

void ChartsPanel::setWindow(double seconds) {
    if (!std::isfinite(seconds)) return;
    d_->window_s = std::clamp(seconds, 5.0, 300.0);
    d_->dirty = true;
}

double ChartsPanel::window() const {
    return d_->window_s;
}

void ChartsPanel::setPaused(bool paused) {
    d_->paused = paused;
    if (!paused) d_->dirty = true;
}

bool ChartsPanel::paused() const {
    return d_->paused;
}

void ChartsPanel::clear() {
    d_->data.clear();
    d_->drawn[0] = d_->drawn[1] = Histogram{};
    d_->hist_valid = false;
    d_->dirty = true;
    redraw();  // also when paused: the old instance's data must not stay on screen
}

void ChartsPanel::setProjectorMode(bool on) {
    d_->projector = on;
    applyStyle();
    d_->dirty = true;
}

bool ChartsPanel::projectorMode() const {
    return d_->projector;
}

void ChartsPanel::setDirections(int which) {
    d_->directions = std::clamp(which, 0, 2);
    d_->dirty = true;
}

void ChartsPanel::setThroughputInPackets(bool packets) {
    d_->packets = packets;
    d_->dirty = true;
}

bool ChartsPanel::redrawIfDue() {
    if (d_->paused) return false;
    // the histogram's count is due although nothing else changed (it waited its 200 ms)
    const bool hist_due = d_->hist_new && d_->hist_clock.elapsed() >= 200;
    if (!d_->dirty && !d_->delay_new && !d_->stats_new && !hist_due) return false;
    redraw();
    return true;
}

std::uint64_t ChartsPanel::redrawCount() const {
    return d_->redraws;
}

ChartsCosts ChartsPanel::costs() const {
    return d_->costs;
}

void ChartsPanel::resetCosts() {
    d_->costs = ChartsCosts{};
}

QChart* ChartsPanel::chart(const QString& name) const {
    if (name == QLatin1String("delay")) return d_->delay;
    if (name == QLatin1String("histogram")) return d_->hist;
    if (name == QLatin1String("throughput")) return d_->thr;
    if (name == QLatin1String("drops")) return d_->drops;
    return nullptr;
}

void ChartsPanel::applyStyle() {
    Impl& I = *d_;
    const double k = I.projector ? 2.5 : 1.0;
    for (QChartView* v : {I.delayView, I.histView, I.thrView, I.dropsView})
        if (v) v->setRenderHint(QPainter::Antialiasing, I.projector);
    QFont title = font(), labels = font(), legend = font();
    title.setPointSizeF(I.projector ? 18 : 10);
    labels.setPointSizeF(I.projector ? 15 : 8.5);
    legend.setPointSizeF(I.projector ? 14 : 8.5);
    for (QChart* c : {I.delay, I.hist, I.thr, I.drops}) {
        c->setTitleFont(title);
        c->legend()->setFont(legend);
        for (QAbstractAxis* a : c->axes()) {
            a->setLabelsFont(labels);
            QFont t = labels;
            t.setBold(true);
            a->setTitleFont(t);
        }
    }
    auto width = [k](QLineSeries* s, double w) {
        QPen p = s->pen();
        p.setWidthF(w * k);
        s->setPen(p);
    };
    for (int d = 0; d < 2; ++d) {
        width(I.samples[d], 1.0);
        width(I.target[d], 1.5);
        width(I.bandUp[d], 1.0);
        width(I.bandLo[d], 1.0);
        width(I.dens[d], 2.0);
        width(I.thrIn[d], 1.5);
        width(I.thrOut[d], 1.5);
        for (int c = 0; c < 4; ++c)
            width(I.drop[d][c], 1.5);
        I.measured[d]->setMarkerSize(3 * k);
        QPen hp = I.histArea[d]->pen();
        hp.setWidthF(1.0 * k);
        I.histArea[d]->setPen(hp);
    }
}

void ChartsPanel::redraw() {
    Impl& I = *d_;
    const qint64 started = cpuNs();
    ChartData& D = I.data;
    const std::int64_t window_ns = static_cast<std::int64_t>(I.window_s * 1e9);
    const std::int64_t hi = D.hasData() ? D.latestNs() : window_ns;
    const std::int64_t lo = hi - window_ns;
    I.view_lo = lo;
    I.view_hi = hi;
    const int plot_w = static_cast<int>(I.delay->plotArea().width());
    // The columns follow the plot's width, but not its wobble of a few pixels as the delay
    // axis' labels change width: a new column width rebuilds the columns from every sample
    // held (up to 6 million a direction), so up to 3% fewer or more pixels keep them.
    const int want = plot_w >= 50 ? plot_w : 800;
    if (std::abs(want - I.columns) * 100 > 3 * I.columns) I.columns = want;
    const std::int64_t column_ns = std::max<std::int64_t>(1, window_ns / I.columns);
    D.setColumns(column_ns, window_ns);
    const double x0 = static_cast<double>(lo) / 1e9, x1 = static_cast<double>(hi) / 1e9;
    auto sec = [](std::int64_t t) { return static_cast<double>(t) / 1e9; };

    const bool all = I.dirty;
    // ---- delay series (computed in us, scaled to the unit at the end) ----
    if (all || I.delay_new) {
        QList<QPointF> samples[2], measured[2], target[2], bandUp[2], bandLo[2], envUp[2], envLo[2];
        double ymin = INFINITY, ymax = -INFINITY;
        auto extent = [&](const QList<QPointF>& v) {
            for (const QPointF& p : v) {
                ymin = std::min(ymin, p.y());
                ymax = std::max(ymax, p.y());
            }
        };
        for (int d = 0; d < 2; ++d) {
            if (!I.shown(d)) continue;
            const ChartData::Direction& R = D.dir(d);
            R.actual_cols.visit(
                lo, hi, [&](std::int64_t t, float v) { samples[d].push_back(QPointF(sec(t), v)); });
            R.measured_cols.visit(lo, hi, [&](std::int64_t t, float v) {
                measured[d].push_back(QPointF(sec(t), v));
            });
            // Envelope: per column the lowest minimum and the highest maximum of the intervals.
            std::int64_t col = std::numeric_limits<std::int64_t>::min();
            double cmin = 0, cmax = 0, cx = 0;
            auto flush = [&] {
                if (col == std::numeric_limits<std::int64_t>::min()) return;
                envUp[d].push_back(QPointF(cx, cmax));
                envLo[d].push_back(QPointF(cx, cmin));
            };
            for (const Interval& iv : R.intervals) {
                if (iv.end_ns < lo || iv.start_ns > hi || iv.delay_us.n == 0) continue;
                const std::int64_t mid = iv.start_ns + (iv.end_ns - iv.start_ns) / 2;
                const std::int64_t c = ColumnDecimator::floorDiv(mid, column_ns);
                if (c != col) {
                    flush();
                    col = c;
                    cmin = iv.delay_us.min;
                    cmax = iv.delay_us.max;
                } else {
                    cmin = std::min(cmin, iv.delay_us.min);
                    cmax = std::max(cmax, iv.delay_us.max);
                }
                cx = sec(mid);
            }
            flush();
            // Target and band: a step function over the targets in force.
            for (std::size_t i = 0; i < R.targets.size(); ++i) {
                const Target& t = R.targets[i];
                const std::int64_t a = std::max(t.since_ns, lo);
                const std::int64_t b =
                    i + 1 < R.targets.size() ? std::min(R.targets[i + 1].since_ns, hi) : hi;
                if (b < a) continue;
                for (const std::int64_t x : {a, b}) {
                    target[d].push_back(QPointF(sec(x), t.mean_us));
                    bandUp[d].push_back(QPointF(sec(x), t.mean_us + t.jitter_us));
                    bandLo[d].push_back(QPointF(sec(x), std::max(0.0, t.mean_us - t.jitter_us)));
                }
            }
            extent(samples[d]);
            extent(measured[d]);
            extent(envUp[d]);
            extent(envLo[d]);
            extent(bandUp[d]);
            extent(bandLo[d]);
        }
        const bool any_delay = std::isfinite(ymax);
        const Unit du = delayUnit(any_delay ? std::max(std::fabs(ymax), std::fabs(ymin)) : 20000);
        auto scaled = [&](QList<QPointF>& v) {
            if (du.div != 1)
                for (QPointF& p : v)
                    p.setY(p.y() / du.div);
        };
        Batch batch;
        for (int d = 0; d < 2; ++d)
            for (auto [series, v] : std::initializer_list<std::pair<QXYSeries*, QList<QPointF>*>>{
                     {I.envUp[d], &envUp[d]},
                     {I.envLo[d], &envLo[d]},
                     {I.samples[d], &samples[d]},
                     {I.measured[d], &measured[d]},
                     {I.target[d], &target[d]},
                     {I.bandUp[d], &bandUp[d]},
                     {I.bandLo[d], &bandLo[d]}}) {
                scaled(*v);
                batch.emplace_back(series, v);
            }
        commit(batch, [&] {
            setTimeRange(I.delayX, x0, x1);
            if (any_delay)
                setRange(I.delayY, ymin / du.div, ymax / du.div, false);
            else
                I.delayY->setRange(0, 1);
        });
        I.delayY->setTitleText(tr("Actual delay (%1)").arg(du.name));
        for (int d = 0; d < 2; ++d) {
            showMarker(I.delay, I.samples[d], !samples[d].isEmpty());
            showMarker(I.delay, I.measured[d], !measured[d].isEmpty());
            // the caption explains these: the legend keeps to one line
            showMarker(I.delay, I.target[d], false);
            showMarker(I.delay, I.bandUp[d], false);
            showMarker(I.delay, I.bandLo[d], false);
            showMarker(I.delay, I.env[d], false);
        }
    }
    // ---- histogram ----
    // Counting the window's samples is the one step that grows with the window (up to 6
    // million samples a direction): done at most every 200 ms, and at once when the window,
    // the directions or the data (clear) change.
    const bool recount = !I.hist_valid || (I.hist_new && I.hist_clock.elapsed() >= 200) ||
                         I.hist_span != hi - lo || I.hist_directions != I.directions;
    if (recount) {
        I.hist_valid = true;
        I.hist_new = false;
        I.hist_clock.start();
        I.hist_span = hi - lo;
        I.hist_directions = I.directions;
    }
    if (all || recount) {
        double hx0 = INFINITY, hx1 = -INFINITY, hy1 = 0;
        struct Ref {
            bool have = false;
            Target t;
        } ref[2];
        for (int d = 0; d < 2; ++d) {
            if (recount) I.drawn[d] = I.shown(d) ? D.histogram(d, lo, hi, 200'000) : Histogram{};
            const Histogram& h = I.drawn[d];
            if (!h.density.empty()) {
                hx0 = std::min(hx0, h.lo_us);
                hx1 = std::max(hx1, h.hi_us());
                for (double v : h.density)
                    hy1 = std::max(hy1, v);
            }
            const auto& targets = D.dir(d).targets;
            if (I.shown(d) && !targets.empty()) {
                ref[d] = {true, targets.back()};
                const Target& t = targets.back();
                const bool spike = !(t.jitter_us > 0) || t.distribution == "constant";
                const double a = spike ? t.mean_us : t.mean_us - 4 * t.jitter_us;
                const double b = spike ? t.mean_us : t.mean_us + 4 * t.jitter_us;
                hx0 = std::min(hx0, std::max(0.0, a));
                hx1 = std::max(hx1, b);
            }
        }
        if (!(hx1 > hx0)) {
            const double m = std::isfinite(hx0) ? hx0 : 1000;
            hx0 = std::max(0.0, m - std::max(1.0, 0.1 * m));
            hx1 = m + std::max(1.0, 0.1 * m);
        }
        const Unit hu = delayUnit(std::max(std::fabs(hx0), std::fabs(hx1)));
        QList<QPointF> dens[2];
        for (int d = 0; d < 2; ++d) {
            if (!ref[d].have) continue;
            const Target& t = ref[d].t;
            if (!(t.jitter_us > 0) || t.distribution == "constant") continue;
            constexpr int kN = 240;
            for (int i = 0; i <= kN; ++i) {
                const double x = hx0 + (hx1 - hx0) * i / kN;
                const double y = distributionDensity(t.distribution, t.mean_us, t.jitter_us, x);
                dens[d].push_back(QPointF(x, y));
                hy1 = std::max(hy1, y);
            }
        }
        if (!(hy1 > 0)) hy1 = 1.0 / std::max(1e-9, hx1 - hx0);
        QList<QPointF> barsOf[2];
        for (int d = 0; d < 2; ++d) {
            QList<QPointF>& bars = barsOf[d];
            const Histogram& h = I.drawn[d];
            if (!h.density.empty()) {
                bars.reserve(static_cast<qsizetype>(2 * h.density.size() + 2));
                bars.push_back(QPointF(h.lo_us / hu.div, 0));
                for (std::size_t i = 0; i < h.density.size(); ++i) {
                    const double y = h.density[i] * hu.div;
                    bars.push_back(QPointF((h.lo_us + h.bin_us * i) / hu.div, y));
                    bars.push_back(QPointF((h.lo_us + h.bin_us * (i + 1)) / hu.div, y));
                }
                bars.push_back(QPointF(h.hi_us() / hu.div, 0));
            }
            if (ref[d].have && (!(ref[d].t.jitter_us > 0) || ref[d].t.distribution == "constant")) {
                // constant: a spike at the mean, as tall as the chart
                const double x = ref[d].t.mean_us / hu.div;
                dens[d] = {QPointF(x, 0), QPointF(x, hy1 * hu.div)};
            } else {
                for (QPointF& p : dens[d])
                    p = QPointF(p.x() / hu.div, p.y() * hu.div);
            }
        }
        commit({{I.histLine[0], &barsOf[0]},
                {I.histLine[1], &barsOf[1]},
                {I.dens[0], &dens[0]},
                {I.dens[1], &dens[1]}},
               [&] {
                   setRange(I.histX, hx0 / hu.div, hx1 / hu.div, false);
                   setRange(I.histY, 0, hy1 * hu.div, true);
               });
        for (int d = 0; d < 2; ++d) {
            showMarker(I.hist, I.histArea[d], !barsOf[d].isEmpty());
            showMarker(I.hist, I.dens[d], !dens[d].isEmpty());
        }
        I.histX->setTitleText(tr("Actual delay (%1)").arg(hu.name));
        I.histY->setTitleText(tr("Probability density (1/%1)").arg(hu.name));
    }
    // ---- throughput and drops ----
    if (all || I.stats_new) {
        const int thr_w = std::max(50, static_cast<int>(I.thr->plotArea().width()));
        const int drops_w = std::max(50, static_cast<int>(I.drops->plotArea().width()));
        QList<QPointF> in[2], out[2], dr[2][4];
        double tmax = 0, dmax = 0;
        for (int d = 0; d < 2; ++d) {
            if (!I.shown(d)) continue;
            for (const RatePoint& r : D.dir(d).rates) {
                if (r.t_ns < lo || r.t_ns > hi) continue;
                const double x = sec(r.t_ns);
                in[d].push_back(QPointF(x, I.packets ? r.in_pps : r.in_bps));
                out[d].push_back(QPointF(x, I.packets ? r.out_pps : r.out_bps));
                for (int k = 0; k < 4; ++k)
                    dr[d][k].push_back(QPointF(x, r.drops_per_s[k]));
            }
            in[d] = decimateMinMax(in[d], x0, (x1 - x0) / thr_w);
            out[d] = decimateMinMax(out[d], x0, (x1 - x0) / thr_w);
            for (const QList<QPointF>* v : {&in[d], &out[d]})
                for (const QPointF& p : *v)
                    tmax = std::max(tmax, p.y());
            for (int k = 0; k < 4; ++k) {
                dr[d][k] = decimateMinMax(dr[d][k], x0, (x1 - x0) / drops_w);
                for (const QPointF& p : dr[d][k])
                    dmax = std::max(dmax, p.y());
            }
        }
        const Unit tu = rateUnit(tmax, I.packets ? tr("packets/s") : tr("bit/s"));
        Batch thr, drops;
        bool nonzero[2][4] = {};
        for (int d = 0; d < 2; ++d) {
            for (QList<QPointF>* v : {&in[d], &out[d]})
                for (QPointF& p : *v)
                    p.setY(p.y() / tu.div);
            thr.emplace_back(I.thrIn[d], &in[d]);
            thr.emplace_back(I.thrOut[d], &out[d]);
            for (int k = 0; k < 4; ++k) {
                // a cause that dropped nothing in the window is not drawn (a line on the axis)
                for (const QPointF& p : dr[d][k])
                    nonzero[d][k] = nonzero[d][k] || p.y() > 0;
                if (!nonzero[d][k]) dr[d][k].clear();
                drops.emplace_back(I.drop[d][k], &dr[d][k]);
            }
        }
        commit(thr, [&] {
            setTimeRange(I.thrX, x0, x1);
            setRange(I.thrY, 0, std::max(tmax / tu.div, 1e-9), true);
        });
        commit(drops, [&] {
            setTimeRange(I.dropsX, x0, x1);
            setRange(I.dropsY, 0, std::max(dmax, 1.0), true);
        });
        I.thrY->setTitleText(tr("Throughput (%1)").arg(tu.name));
        for (int d = 0; d < 2; ++d) {
            showMarker(I.thr, I.thrIn[d], !in[d].isEmpty());
            showMarker(I.thr, I.thrOut[d], !out[d].isEmpty());
            for (int k = 0; k < 4; ++k)
                showMarker(I.drops, I.drop[d][k], nonzero[d][k]);
        }
    }
    I.dirty = I.delay_new = I.stats_new = false;
    ++I.redraws;
    account(I.costs.redraws, I.costs.redraw_ms, I.costs.redraw_max_ms, started);
    I.since_redraw.start();
    emit redrawn();
}

WindowStats ChartsPanel::windowStats(int direction) const {
    WindowStats w;
    if (direction < 0 || direction > 1) return w;
    const ChartData::Direction& R = d_->data.dir(direction);
    const std::int64_t lo = d_->view_lo, hi = d_->view_hi;
    const Moments m = R.samples.actual(lo, hi);
    w.samples = m.n;
    w.mean_us = m.mean;
    w.sd_us = m.sd();
    if (!R.targets.empty()) {
        w.target_mean_us = R.targets.back().mean_us;
        w.target_jitter_us = R.targets.back().jitter_us;
    }
    if (m.n > 0) {
        if (w.target_mean_us != 0)
            w.mean_dev_pct = (w.mean_us - w.target_mean_us) / w.target_mean_us * 100;
        if (w.target_jitter_us != 0)
            w.jitter_dev_pct = (w.sd_us - w.target_jitter_us) / w.target_jitter_us * 100;
    }
    Moments late, meas;
    for (const Interval& iv : R.intervals) {
        if (iv.end_ns < lo || iv.start_ns > hi) continue;
        late.merge(iv.lateness_us);
        meas.merge(iv.measured_us);
    }
    if (late.n > 0) {
        w.lateness_mean_us = late.mean;
        w.lateness_max_us = late.max;
    }
    if (meas.n == 0) meas = R.measured.actual(lo, hi);  // no interval summaries: the samples
    if (meas.n > 0) {
        w.has_measured = true;
        w.measured_mean_us = meas.mean;
        w.measured_sd_us = meas.sd();
    }
    const json& s = R.last_stats;
    auto num = [](const json& j, const char* key) {
        const auto it = j.find(key);
        return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
    };
    w.alpha = num(s, "alpha");
    w.rate_pps = num(s, "rate_pps");
    w.in_flight = static_cast<std::uint64_t>(std::max(0.0, num(s, "in_flight")));
    if (const auto t = s.find("traffic"); t != s.end() && t->is_object()) {
        w.measured_lost = static_cast<std::uint64_t>(std::max(0.0, num(*t, "lost")));
        w.measured_out_of_order =
            static_cast<std::uint64_t>(std::max(0.0, num(*t, "out_of_order")));
    }
    return w;
}

Histogram ChartsPanel::histogram(int direction) const {
    return direction >= 0 && direction < 2 ? d_->drawn[direction] : Histogram{};
}

double ChartsPanel::density(int direction, double x_us) const {
    if (direction < 0 || direction > 1) return 0;
    const auto& targets = d_->data.dir(direction).targets;
    if (targets.empty()) return 0;
    const Target& t = targets.back();
    return distributionDensity(t.distribution, t.mean_us, t.jitter_us, x_us);
}

std::size_t ChartsPanel::storedSamples(int direction) const {
    return direction >= 0 && direction < 2 ? d_->data.dir(direction).samples.size() : 0;
}

std::size_t ChartsPanel::storedBytes() const {
    std::size_t b = 0;
    for (int d = 0; d < 2; ++d)
        b += d_->data.dir(d).samples.bytes() + d_->data.dir(d).measured.bytes();
    return b;
}

int ChartsPanel::plotColumns() const {
    return d_->columns;
}

int ChartsPanel::pointsDrawn(const QString& chart) const {
    const Impl& I = *d_;
    int n = 0;
    bool known = false;
    auto part = [&](const QString& name, std::initializer_list<const QXYSeries*> series) {
        const QString top = name.section(QLatin1Char('.'), 0, 0);
        if (chart != name && chart != top) return;
        known = true;
        for (const QXYSeries* s : series)
            n += static_cast<int>(s->count());
    };
    for (int d = 0; d < 2; ++d) {
        part(QStringLiteral("delay.samples"), {I.samples[d]});
        part(QStringLiteral("delay.measured"), {I.measured[d]});
        part(QStringLiteral("delay.target"), {I.target[d], I.bandUp[d], I.bandLo[d]});
        part(QStringLiteral("delay.envelope"), {I.envUp[d], I.envLo[d]});
        part(QStringLiteral("histogram.bars"), {I.histLine[d]});
        part(QStringLiteral("histogram.density"), {I.dens[d]});
        part(QStringLiteral("throughput.all"), {I.thrIn[d], I.thrOut[d]});
        part(QStringLiteral("drops.all"), {I.drop[d][0], I.drop[d][1], I.drop[d][2], I.drop[d][3]});
    }
    return known ? n : -1;
}

bool ChartsPanel::exportCsv(const QString& path, QString* error) const {
    const Impl& I = *d_;
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    QTextStream o(&f);
    const std::int64_t lo = I.view_lo, hi = I.view_hi;
    auto sec = [](std::int64_t t) { return QString::number(static_cast<double>(t) / 1e9, 'f', 9); };
    auto us = [](double v) { return QString::number(v, 'f', 3); };
    auto usNs = [](std::int64_t ns) {  // exactly the ns received, as microseconds
        const std::uint64_t m = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : ns;
        return QStringLiteral("%1%2.%3")
            .arg(ns < 0 ? QStringLiteral("-") : QString())
            .arg(m / 1000)
            .arg(m % 1000, 3, 10, QLatin1Char('0'));
    };
    o << "# linkem-gui chart data: the visible time window, " << sec(lo) << " s to " << sec(hi)
      << " s of linkemd's data-plane clock (seconds since linkemd started).\n"
      << "# Four sections, each a '# [name]' line, a header line naming the columns with "
         "their units, then rows; lines starting with '#' are comments.\n"
      << "# " << delayIncludesText() << "\n"
      << "# [samples] one row per sampled packet: arrival time; delay drawn by the emulator; "
         "scheduled departure - arrival; actual departure - arrival\n"
      << "direction,arrival_s,delay_us,scheduled_us,actual_us\n";
    for (int d = 0; d < 2; ++d)
        I.data.dir(d).samples.forEach(lo, hi, [&](const DelayPoint& p) {
            o << kDirectionKeys[d] << ',' << sec(p.t_ns) << ',' << usNs(p.delay_ns) << ','
              << usNs(p.scheduled_ns) << ',' << usNs(p.actual_ns) << '\n';
        });
    o << "# [intervals] one row per delay message and direction: the drawn delay over every "
         "packet queued in the interval, lateness over every packet that left\n"
      << "direction,start_s,end_s,count,min_us,max_us,mean_us,sd_us,lateness_count,"
         "lateness_mean_us,lateness_max_us\n";
    for (int d = 0; d < 2; ++d)
        for (const Interval& iv : I.data.dir(d).intervals) {
            if (iv.end_ns < lo || iv.start_ns > hi) continue;
            const Moments& m = iv.delay_us;
            const Moments& l = iv.lateness_us;
            o << kDirectionKeys[d] << ',' << sec(iv.start_ns) << ',' << sec(iv.end_ns) << ',' << m.n
              << ',' << (m.n ? us(m.min) : "") << ',' << (m.n ? us(m.max) : "") << ','
              << (m.n ? us(m.mean) : "") << ',' << (m.n ? us(m.sd()) : "") << ',' << l.n << ','
              << (l.n ? us(l.mean) : "") << ',' << (l.n ? us(l.max) : "") << '\n';
        }
    o << "# [measured] one row per measured frame of linkemd's built-in traffic: send time, "
         "one-way delay (receive - send, port to port)\n"
      << "direction,send_s,measured_delay_us\n";
    for (int d = 0; d < 2; ++d)
        I.data.dir(d).measured.forEach(lo, hi, [&](const DelayPoint& p) {
            o << kDirectionKeys[d] << ',' << sec(p.t_ns) << ',' << usNs(p.actual_ns) << '\n';
        });
    o << "# [rates] one row per stats message and direction: rates since the previous "
         "message (bytes include the 4-byte FCS)\n"
      << "direction,t_s,in_bps,out_bps,in_pps,out_pps,drops_loss_per_s,drops_policer_per_s,"
         "drops_spacer_per_s,drops_buffer_full_per_s\n";
    auto g = [](double v) { return QString::number(v, 'g', 10); };
    for (int d = 0; d < 2; ++d)
        for (const RatePoint& r : I.data.dir(d).rates) {
            if (r.t_ns < lo || r.t_ns > hi) continue;
            o << kDirectionKeys[d] << ',' << sec(r.t_ns) << ',' << g(r.in_bps) << ','
              << g(r.out_bps) << ',' << g(r.in_pps) << ',' << g(r.out_pps);
            for (double v : r.drops_per_s)
                o << ',' << g(v);
            o << '\n';
        }
    o.flush();
    if (o.status() != QTextStream::Ok || !f.commit()) {
        if (error) *error = tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

bool ChartsPanel::exportPng(const QString& directory, QString* error) const {
    const Impl& I = *d_;
    QDir dir(directory);
    if (!dir.exists()) {
        if (error) *error = tr("cannot write the charts to %1: no such directory").arg(directory);
        return false;
    }
    const std::pair<const char*, QChartView*> views[] = {{"delay.png", I.delayView},
                                                         {"histogram.png", I.histView},
                                                         {"throughput.png", I.thrView},
                                                         {"drops.png", I.dropsView}};
    for (const auto& [name, view] : views) {
        const QString path = dir.filePath(QString::fromLatin1(name));
        const QPixmap pm = view->grab();
        if (pm.isNull() || !pm.save(path, "PNG")) {
            if (error) *error = tr("cannot write %1").arg(path);
            return false;
        }
    }
    return true;
}

}  // namespace linkem::gui
