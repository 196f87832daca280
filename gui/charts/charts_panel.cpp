#include "charts_panel.hpp"

#include <time.h>
#include <algorithm>
#include <array>
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
#include <QHash>
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
// the legend's: the protocol's counter names (drops_loss, ...) less "drops_"
const char* const kCauseShort[4] = {"loss", "policer", "spacer", "buffer full"};

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
    // Qt Charts lays the axis out with the previous labels' width: after a range change the
    // new labels would be cut to "..." until the next layout
    a->setTruncateLabels(false);
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

bool profiling() {
    static const bool on = qEnvironmentVariableIsSet("LINKEM_CHARTS_PROFILE");
    return on;
}

using Batch = std::vector<std::pair<QXYSeries*, QList<QPointF>*>>;
template <class F>
void commit(const Batch& items, F&& axes) {
    const bool profile = profiling();
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

enum Part { kBody = 0, kHead = 1 };

// A message's `t_ns` as ChartData reads it, 0 when it cannot be read.
qint64 messageTime(const json& msg) {
    std::int64_t t = 0;
    return jsonInteger(msg, "t_ns", t) ? t : 0;
}

// A head series is named after its body, marked as the newest part (never in a legend).
QString partName(const QString& name, int part) {
    return part == kBody ? name : name + QStringLiteral(" (newest)");
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
    // A message redraws its charts as soon as 30 ms have passed since the last redraw began
    // (at most ~33 redraws/s, however long one takes): the 30 ms ticks alone would add up to
    // 30 ms to the 50 ms between delay messages. linkemd sends a stats message and then a
    // delay message in the same tick; a stats message waits up to kCompanionMs for it, so
    // that both are drawn in one redraw instead of the delay message waiting 30 ms behind
    // the stats message's redraw.
    static constexpr qint64 kSpacingMs = 30, kCompanionMs = 8;
    QTimer soon;
    QElapsedTimer since_redraw;
    void arrived(bool delay) {
        if (paused) return;
        const qint64 e = since_redraw.isValid() ? since_redraw.elapsed() : kSpacingMs;
        const qint64 wait = std::max<qint64>(delay ? 1 : kCompanionMs, kSpacingMs - e);
        if (!soon.isActive() || (delay && soon.remainingTime() > wait))
            soon.start(static_cast<int>(wait));
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
    // The series that follow the time axis come in two parts, [d][kBody] and [d][kHead]: the
    // body holds the columns before `split`, the head the newest ones (from `split` on). The
    // time axis moves in steps of whole columns, so between two steps a message changes only the
    // heads: Qt Charts lays out (and strokes) only the few points of the heads again, not the
    // thousands of the bodies. The body carries the legend entry; a head's is hidden.
    QLineSeries* samples[2][2];
    QScatterSeries* measured[2][2];
    QLineSeries* target[2];
    QLineSeries *bandUp[2], *bandLo[2], *envUp[2][2], *envLo[2][2];
    QAreaSeries* env[2][2];
    QLineSeries* histLine[2];
    QAreaSeries* histArea[2];
    QLineSeries* dens[2];
    QLineSeries *thrIn[2][2], *thrOut[2][2];
    QLineSeries* drop[2][4][2];
    // What the bodies were drawn for: the view's right edge (a multiple of the step of the
    // time axis), the column width, the split, the delay unit, and each body's last point (the
    // head's first, so that the line goes on without a gap). lag_ns: how far behind the
    // newest time new data landed since the last move (delay samples arrive with their
    // arrival time, a delay earlier), which sets how many columns the heads span.
    std::int64_t drawn_hi = -1, drawn_q = 0, split = 0, lag_ns = 0;
    double delay_div = 1, thr_div = 1;
    bool drops_nonzero[2][4] = {};
    QHash<const QXYSeries*, QPointF> joint;  // head -> its body's last point (scaled)

    bool shown(int d) const { return directions == 0 || directions == d + 1; }
};

namespace {

QChart* newChart() {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignBottom);
    c->legend()->setShowToolTips(true);  // an entry cut short shows whole in its tooltip
    c->setMargins(QMargins(4, 4, 4, 4));
    return c;
}

QChartView* newView(ChartsCosts* costs, QChart* c, const QString& tip) {
    auto* v = new TimedView(c, costs);
    // Antialiasing triples the cost of painting dense series; projector mode turns it on.
    v->setRenderHint(QPainter::Antialiasing, false);
    // Most redraws change only the heads of the series (the newest columns): the view
    // repaints the region they cover (SmartViewportUpdate: 35% less painting than repainting
    // the whole view at a full 5-minute window). When the time axis moves, every item moves:
    // a BSP index of them would be rebuilt each time, so the scene keeps none.
    v->scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
    v->setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
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

// The legend's label of a series, shorter than its name (the name stays whole in CSV exports
// and tooltips): the four entries of the delay and drops charts fit beside each other.
void labelMarker(QChart* c, QAbstractSeries* s, const QString& label) {
    for (QLegendMarker* m : c->legend()->markers(s))
        m->setLabel(label);
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
        tr("line: sampled packets (min and max per pixel) · squares: measured by the built-in "
           "traffic · shaded: min/max per interval · dashed: target mean · dotted: ± jitter")));
    I.delayX = newAxis(tr("Time since linkemd started (s)"));
    I.delayY = newAxis(tr("Delay (ms)"));
    I.delay->addAxis(I.delayX, Qt::AlignBottom);
    I.delay->addAxis(I.delayY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            I.envUp[d][k] = new QLineSeries;
            I.envLo[d][k] = new QLineSeries;
            I.env[d][k] = area(partName(tr("%1 min/max per interval").arg(dirLabel(d)), k),
                               I.envUp[d][k], I.envLo[d][k], alpha(kDir[d], 70));
            attach(I.delay, I.env[d][k], I.delayX, I.delayY);
        }
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            I.samples[d][k] = line(partName(tr("%1 actual").arg(dirLabel(d)), k), kDir[d], 1.0);
            attach(I.delay, I.samples[d][k], I.delayX, I.delayY);
            // the caption says the line is the actual delay; squares are "measured"
            labelMarker(I.delay, I.samples[d][k], dirLabel(d));
        }
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            auto* m = new QScatterSeries;
            m->setName(partName(tr("%1 measured").arg(dirLabel(d)), k));
            m->setPen(Qt::NoPen);
            m->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
            m->setMarkerSize(3);
            m->setColor(kDirDark[d]);
            m->setBorderColor(kDirDark[d]);
            I.measured[d][k] = m;
            attach(I.delay, m, I.delayX, I.delayY);
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
        I.histArea[d]->setName(tr("%1 actual").arg(dirLabel(d)));
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
    I.thrY = newAxis(tr("bit/s"));
    I.thr->addAxis(I.thrX, Qt::AlignBottom);
    I.thr->addAxis(I.thrY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            I.thrIn[d][k] = line(partName(tr("%1 in").arg(dirLabel(d)), k), kDir[d], 1.5);
            I.thrOut[d][k] =
                line(partName(tr("%1 out").arg(dirLabel(d)), k), kDirDark[d], 1.5, Qt::DashLine);
            attach(I.thr, I.thrIn[d][k], I.thrX, I.thrY);
            attach(I.thr, I.thrOut[d][k], I.thrX, I.thrY);
        }
    I.thrView = newView(&I.costs, I.thr,
                        tr("Rates from the differences of the cumulative counters of two "
                           "stats messages. Bytes include the 4-byte FCS."));

    // Drops.
    I.drops = newChart();
    I.drops->setTitle(chartTitle(tr("Drops per second by cause"), tr("solid: A→B, dashed: B→A")));
    I.dropsX = newAxis(tr("Time since linkemd started (s)"));
    I.dropsY = newAxis(tr("packets/s"));
    I.drops->addAxis(I.dropsX, Qt::AlignBottom);
    I.drops->addAxis(I.dropsY, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (int c = 0; c < 4; ++c)
            for (int k : {kBody, kHead}) {
                I.drop[d][c][k] =
                    line(partName(tr("%1 %2").arg(dirLabel(d), tr(kCauseLabel[c])), k), kCause[c],
                         1.5, d == 0 ? Qt::SolidLine : Qt::DashLine);
                attach(I.drops, I.drop[d][c][k], I.dropsX, I.dropsY);
                // one entry per cause: the caption says solid is A→B, dashed B→A
                labelMarker(I.drops, I.drop[d][c][k], tr(kCauseShort[c]));
            }
    I.dropsView = newView(&I.costs, I.drops,
                          tr("Packets dropped per second: loss model (drops_loss), "
                             "policer, spacer limit, no room (buffer limit or "
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
    connect(&I.timer, &QTimer::timeout, this, [this] {
        if (!d_->soon.isActive()) redrawIfDue();  // else a message's redraw is due shortly
    });
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
    d_->arrived(false);
    emit taken(false, messageTime(msg));
}

void ChartsPanel::addDelay(const json& msg) {
    const qint64 t0 = cpuNs();
    d_->data.addDelay(msg);
    account(d_->costs.ingests, d_->costs.ingest_ms, d_->costs.ingest_max_ms, t0);
    d_->delay_new = true;
    d_->hist_new = true;
    d_->arrived(true);
    emit taken(true, messageTime(msg));
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
        for (int part : {kBody, kHead}) {
            width(I.samples[d][part], 1.0);
            width(I.thrIn[d][part], 1.5);
            width(I.thrOut[d][part], 1.5);
            for (int c = 0; c < 4; ++c)
                width(I.drop[d][c][part], 1.5);
            I.measured[d][part]->setMarkerSize(3 * k);
        }
        width(I.target[d], 1.5);
        width(I.bandUp[d], 1.0);
        width(I.bandLo[d], 1.0);
        width(I.dens[d], 2.0);
        QPen hp = I.histArea[d]->pen();
        hp.setWidthF(1.0 * k);
        I.histArea[d]->setPen(hp);
    }
}

void ChartsPanel::redraw() {
    Impl& I = *d_;
    const qint64 started = cpuNs();
    I.since_redraw.start();  // also the redraw's wall time
    ChartData& D = I.data;
    const std::int64_t window_ns = static_cast<std::int64_t>(I.window_s * 1e9);
    const int plot_w = static_cast<int>(I.delay->plotArea().width());
    // The columns follow the plot's width, but not its wobble of a few pixels as the delay
    // axis' labels change width: a new column width rebuilds the columns from every sample
    // held (up to 6 million a direction), so up to 3% fewer or more pixels keep them.
    const int want = plot_w >= 50 ? plot_w : 800;
    if (std::abs(want - I.columns) * 100 > 3 * I.columns) I.columns = want;
    const std::int64_t q = std::max<std::int64_t>(1, window_ns / I.columns);  // column, ns
    D.setColumns(q, window_ns);
    // The time axis moves in steps of whole columns, about 1% of the window (at a 5-minute
    // window 3 s, at 5 s every message): the view ends at the end of the step that holds
    // the newest data, so its right edge is empty for at most 1% of its width.
    const std::int64_t latest = D.hasData() ? D.latestNs() : window_ns;
    const std::int64_t step = q * std::max<std::int64_t>(1, (I.columns + 50) / 100);
    const std::int64_t hi = (ColumnDecimator::floorDiv(latest - 1, step) + 1) * step;
    const std::int64_t lo = hi - window_ns;
    // the readouts and the export: the window itself, up to the newest data
    I.view_lo = latest - window_ns;
    I.view_hi = latest;
    const double x0 = static_cast<double>(lo) / 1e9, x1 = static_cast<double>(hi) / 1e9;
    auto sec = [](std::int64_t t) { return static_cast<double>(t) / 1e9; };

    // Everything is laid out again when the view moved, a setting changed, or new data
    // landed before the split (older than the heads); otherwise only the heads.
    const std::int64_t oldest = D.takeOldestChange();
    if (oldest != std::numeric_limits<std::int64_t>::max())
        I.lag_ns = std::max(I.lag_ns, latest - oldest);
    const bool settings = I.dirty;
    const bool all = settings || hi != I.drawn_hi || q != I.drawn_q || oldest < I.split;
    if (all && profiling())
        qDebug("all: settings %d step %d q %d old %d (oldest %lld split %lld latest %lld)",
               settings, hi != I.drawn_hi, q != I.drawn_q, oldest < I.split, (long long)oldest,
               (long long)I.split, (long long)latest);
    if (all) {
        // The heads span the columns that the next messages' data may land in: from a
        // column before the newest data less 1.5 times the lag seen, to the view's end.
        const std::int64_t back = std::min(I.lag_ns * 3 / 2, window_ns / 4);
        I.split = std::max(lo, (ColumnDecimator::floorDiv(latest - back, q) - 1) * q);
        I.lag_ns = 0;
        I.drawn_hi = hi;
        I.drawn_q = q;
        I.joint.clear();
    }
    // Points of a head: its body's last point first (line and area series).
    auto withJoint = [&](QXYSeries* head, QList<QPointF>& v) {
        const auto j = I.joint.constFind(head);
        if (j != I.joint.constEnd() && !v.isEmpty()) v.prepend(*j);
    };
    auto keepJoint = [&](QXYSeries* head, const QList<QPointF>& body) {
        if (!body.isEmpty()) I.joint.insert(head, body.last());
    };
    // Gives each head its new points (in the chart's base unit, divided by div for the axis'
    // unit) after its body's last point; false, and no head changed, when a point lies
    // outside [ylo, yhi] (base unit): the axis must change, the chart is drawn again whole.
    using Heads = std::vector<std::pair<QXYSeries*, QList<QPointF>>>;
    auto replaceHeads = [&](Heads& heads, double ylo, double yhi, double div) {
        for (const auto& [series, v] : heads)
            for (const QPointF& p : v)
                if (p.y() < ylo || p.y() > yhi) return false;
        for (auto& [series, v] : heads) {
            if (div != 1)
                for (QPointF& p : v)
                    p.setY(p.y() / div);
            withJoint(series, v);
            series->replace(v);
        }
        return true;
    };

    // ---- delay series (computed in us, scaled to the unit at the end) ----
    struct DelayPoints {
        QList<QPointF> samples, measured, envUp, envLo;
    };
    // The delay series of direction d over [a, b]: decimated samples and measured samples,
    // and the envelope (per column the lowest minimum and the highest maximum of the
    // intervals whose middle lies in it).
    auto delayPoints = [&](int d, std::int64_t a, std::int64_t b) {
        DelayPoints P;
        const ChartData::Direction& R = D.dir(d);
        R.actual_cols.visit(
            a, b, [&](std::int64_t t, float v) { P.samples.push_back(QPointF(sec(t), v)); });
        R.measured_cols.visit(
            a, b, [&](std::int64_t t, float v) { P.measured.push_back(QPointF(sec(t), v)); });
        auto mid = [](const Interval& iv) { return iv.start_ns + (iv.end_ns - iv.start_ns) / 2; };
        std::size_t i = R.intervals.size();
        while (i > 0 && mid(R.intervals[i - 1]) >= a)
            --i;
        std::int64_t col = std::numeric_limits<std::int64_t>::min();
        double cmin = 0, cmax = 0, cx = 0;
        auto flush = [&] {
            if (col == std::numeric_limits<std::int64_t>::min()) return;
            P.envUp.push_back(QPointF(cx, cmax));
            P.envLo.push_back(QPointF(cx, cmin));
        };
        for (; i < R.intervals.size(); ++i) {
            const Interval& iv = R.intervals[i];
            const std::int64_t m = mid(iv);
            if (m > b) break;
            if (iv.delay_us.n == 0) continue;
            const std::int64_t c = ColumnDecimator::floorDiv(m, q);
            if (c != col) {
                flush();
                col = c;
                cmin = iv.delay_us.min;
                cmax = iv.delay_us.max;
            } else {
                cmin = std::min(cmin, iv.delay_us.min);
                cmax = std::max(cmax, iv.delay_us.max);
            }
            cx = sec(m);
        }
        flush();
        return P;
    };
    auto delaySeries = [&](int d, int part, DelayPoints& P) {
        return std::array<std::pair<QXYSeries*, QList<QPointF>*>, 4>{
            {{I.envUp[d][part], &P.envUp},
             {I.envLo[d][part], &P.envLo},
             {I.samples[d][part], &P.samples},
             {I.measured[d][part], &P.measured}}};
    };
    // Heads only: false (and nothing changed) when a head leaves the delay axis' range.
    auto delayHeads = [&] {
        Heads heads;
        for (int d = 0; d < 2; ++d) {
            if (!I.shown(d)) continue;
            DelayPoints P = delayPoints(d, I.split, hi);
            for (const auto& [series, v] : delaySeries(d, kHead, P))
                heads.emplace_back(series, std::move(*v));
        }
        return replaceHeads(heads, I.delayY->min() * I.delay_div, I.delayY->max() * I.delay_div,
                            I.delay_div);
    };
    auto delayAll = [&] {
        DelayPoints P[2][2];
        QList<QPointF> target[2], bandUp[2], bandLo[2];
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
            P[d][kBody] = delayPoints(d, lo, I.split - 1);
            P[d][kHead] = delayPoints(d, I.split, hi);
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
            for (int part : {kBody, kHead})
                for (const auto& [series, v] : delaySeries(d, part, P[d][part]))
                    extent(*v);
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
        for (int d = 0; d < 2; ++d) {
            const auto body = delaySeries(d, kBody, P[d][kBody]);
            const auto head = delaySeries(d, kHead, P[d][kHead]);
            for (std::size_t k = 0; k < body.size(); ++k) {
                scaled(*body[k].second);
                scaled(*head[k].second);
                if (body[k].first->type() != QAbstractSeries::SeriesTypeScatter) {
                    keepJoint(head[k].first, *body[k].second);
                    withJoint(head[k].first, *head[k].second);
                }
                batch.emplace_back(body[k]);
                batch.emplace_back(head[k]);
            }
            for (auto [series, v] : std::initializer_list<std::pair<QXYSeries*, QList<QPointF>*>>{
                     {I.target[d], &target[d]},
                     {I.bandUp[d], &bandUp[d]},
                     {I.bandLo[d], &bandLo[d]}}) {
                scaled(*v);
                batch.emplace_back(series, v);
            }
        }
        commit(batch, [&] {
            setTimeRange(I.delayX, x0, x1);
            if (any_delay)
                setRange(I.delayY, ymin / du.div, ymax / du.div, false);
            else
                I.delayY->setRange(0, 1);
        });
        I.delay_div = du.div;
        I.delayY->setTitleText(tr("Actual delay (%1)").arg(du.name));
        for (int d = 0; d < 2; ++d) {
            const bool s = !P[d][kBody].samples.isEmpty() || !P[d][kHead].samples.isEmpty();
            const bool m = !P[d][kBody].measured.isEmpty() || !P[d][kHead].measured.isEmpty();
            showMarker(I.delay, I.samples[d][kBody], s);
            showMarker(I.delay, I.measured[d][kBody], m);
            // the caption explains these: the legend keeps to one line
            showMarker(I.delay, I.target[d], false);
            showMarker(I.delay, I.bandUp[d], false);
            showMarker(I.delay, I.bandLo[d], false);
            for (int part : {kBody, kHead})
                showMarker(I.delay, I.env[d][part], false);
            showMarker(I.delay, I.samples[d][kHead], false);
            showMarker(I.delay, I.measured[d][kHead], false);
        }
    };
    if (all)
        delayAll();
    else if (I.delay_new && !delayHeads())
        delayAll();
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
    if (settings || recount) {
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
            showMarker(I.hist, I.dens[d], false);  // the caption explains the lines
        }
        I.histX->setTitleText(tr("Actual delay (%1)").arg(hu.name));
        I.histY->setTitleText(tr("Probability density (1/%1)").arg(hu.name));
    }
    // ---- throughput and drops ----
    // Rates of the stats messages with a <= t <= b: min/max per column of the delay chart.
    auto rates = [&](int d, std::int64_t a, std::int64_t b, auto value) {
        QList<QPointF> v;
        const auto& R = D.dir(d).rates;
        std::size_t i = R.size();
        while (i > 0 && R[i - 1].t_ns >= a)
            --i;
        for (; i < R.size() && R[i].t_ns <= b; ++i)
            v.push_back(QPointF(sec(R[i].t_ns), value(R[i])));
        return decimateMinMax(v, 0.0, static_cast<double>(q) / 1e9);
    };
    auto inRate = [&](const RatePoint& r) { return I.packets ? r.in_pps : r.in_bps; };
    auto outRate = [&](const RatePoint& r) { return I.packets ? r.out_pps : r.out_bps; };
    auto dropRate = [](int c) { return [c](const RatePoint& r) { return r.drops_per_s[c]; }; };
    auto thrHeads = [&] {
        Heads heads;
        for (int d = 0; d < 2; ++d) {
            if (!I.shown(d)) continue;
            heads.emplace_back(I.thrIn[d][kHead], rates(d, I.split, hi, inRate));
            heads.emplace_back(I.thrOut[d][kHead], rates(d, I.split, hi, outRate));
        }
        return replaceHeads(heads, -INFINITY, I.thrY->max() * I.thr_div, I.thr_div);
    };
    auto thrAll = [&] {
        QList<QPointF> in[2][2], out[2][2];
        double tmax = 0;
        for (int d = 0; d < 2; ++d) {
            if (!I.shown(d)) continue;
            in[d][kBody] = rates(d, lo, I.split - 1, inRate);
            in[d][kHead] = rates(d, I.split, hi, inRate);
            out[d][kBody] = rates(d, lo, I.split - 1, outRate);
            out[d][kHead] = rates(d, I.split, hi, outRate);
            for (int part : {kBody, kHead})
                for (const QList<QPointF>* v : {&in[d][part], &out[d][part]})
                    for (const QPointF& p : *v)
                        tmax = std::max(tmax, p.y());
        }
        const Unit tu = rateUnit(tmax, I.packets ? tr("packets/s") : tr("bit/s"));
        Batch thr;
        for (int d = 0; d < 2; ++d)
            for (auto [series, v] :
                 {std::pair{I.thrIn[d], in[d]}, std::pair{I.thrOut[d], out[d]}}) {
                for (int part : {kBody, kHead})
                    for (QPointF& p : v[part])
                        p.setY(p.y() / tu.div);
                keepJoint(series[kHead], v[kBody]);
                withJoint(series[kHead], v[kHead]);
                thr.emplace_back(series[kBody], &v[kBody]);
                thr.emplace_back(series[kHead], &v[kHead]);
            }
        commit(thr, [&] {
            setTimeRange(I.thrX, x0, x1);
            setRange(I.thrY, 0, std::max(tmax / tu.div, 1e-9), true);
        });
        I.thr_div = tu.div;
        I.thrY->setTitleText(tu.name);  // the chart's title says what it is
        for (int d = 0; d < 2; ++d) {
            showMarker(I.thr, I.thrIn[d][kBody],
                       !in[d][kBody].isEmpty() || !in[d][kHead].isEmpty());
            showMarker(I.thr, I.thrOut[d][kBody],
                       !out[d][kBody].isEmpty() || !out[d][kHead].isEmpty());
            showMarker(I.thr, I.thrIn[d][kHead], false);
            showMarker(I.thr, I.thrOut[d][kHead], false);
        }
    };
    auto nonzero = [](const QList<QPointF>& v) {
        return std::any_of(v.begin(), v.end(), [](const QPointF& p) { return p.y() > 0; });
    };
    auto dropsHeads = [&] {
        Heads heads;
        for (int d = 0; d < 2; ++d) {
            if (!I.shown(d)) continue;
            for (int c = 0; c < 4; ++c) {
                QList<QPointF> v = rates(d, I.split, hi, dropRate(c));
                // a cause starts dropping: its legend entry appears (everything again)
                if (!I.drops_nonzero[d][c] && nonzero(v)) return false;
                if (I.drops_nonzero[d][c]) heads.emplace_back(I.drop[d][c][kHead], std::move(v));
            }
        }
        return replaceHeads(heads, -INFINITY, I.dropsY->max(), 1);
    };
    auto dropsAll = [&] {
        QList<QPointF> dr[2][4][2];
        double dmax = 0;
        Batch drops;
        for (int d = 0; d < 2; ++d)
            for (int c = 0; c < 4; ++c) {
                if (I.shown(d)) {
                    dr[d][c][kBody] = rates(d, lo, I.split - 1, dropRate(c));
                    dr[d][c][kHead] = rates(d, I.split, hi, dropRate(c));
                }
                // a cause that dropped nothing in the window is not drawn (a line on the axis)
                I.drops_nonzero[d][c] = nonzero(dr[d][c][kBody]) || nonzero(dr[d][c][kHead]);
                for (auto& v : dr[d][c]) {
                    if (!I.drops_nonzero[d][c]) v.clear();
                    for (const QPointF& p : v)
                        dmax = std::max(dmax, p.y());
                }
                keepJoint(I.drop[d][c][kHead], dr[d][c][kBody]);
                withJoint(I.drop[d][c][kHead], dr[d][c][kHead]);
                drops.emplace_back(I.drop[d][c][kBody], &dr[d][c][kBody]);
                drops.emplace_back(I.drop[d][c][kHead], &dr[d][c][kHead]);
            }
        commit(drops, [&] {
            setTimeRange(I.dropsX, x0, x1);
            setRange(I.dropsY, 0, std::max(dmax, 1.0), true);
        });
        for (int d = 0; d < 2; ++d)
            for (int c = 0; c < 4; ++c) {
                showMarker(I.drops, I.drop[d][c][kBody],
                           I.drops_nonzero[d][c] && (d == 0 || !I.drops_nonzero[0][c]));
                showMarker(I.drops, I.drop[d][c][kHead], false);
            }
    };
    if (all) {
        thrAll();
        dropsAll();
    } else if (I.stats_new) {
        if (!thrHeads()) thrAll();
        if (!dropsHeads()) dropsAll();
    }
    I.dirty = I.delay_new = I.stats_new = false;
    ++I.redraws;
    account(I.costs.redraws, I.costs.redraw_ms, I.costs.redraw_max_ms, started);
    I.costs.last_redraw_ms = static_cast<double>(cpuNs() - started) / 1e6;
    I.costs.last_redraw_wall_ms = static_cast<double>(I.since_redraw.nsecsElapsed()) / 1e6;
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
        for (const QXYSeries* s : series) {
            n += static_cast<int>(s->count());
            // a head that begins with its body's last point repeats that point
            const auto j = I.joint.constFind(s);
            if (j != I.joint.constEnd() && s->count() > 0 && s->at(0) == *j) --n;
        }
    };
    for (int d = 0; d < 2; ++d) {
        part(QStringLiteral("delay.samples"), {I.samples[d][kBody], I.samples[d][kHead]});
        part(QStringLiteral("delay.measured"), {I.measured[d][kBody], I.measured[d][kHead]});
        part(QStringLiteral("delay.target"), {I.target[d], I.bandUp[d], I.bandLo[d]});
        part(QStringLiteral("delay.envelope"),
             {I.envUp[d][kBody], I.envUp[d][kHead], I.envLo[d][kBody], I.envLo[d][kHead]});
        part(QStringLiteral("histogram.bars"), {I.histLine[d]});
        part(QStringLiteral("histogram.density"), {I.dens[d]});
        part(QStringLiteral("throughput.all"),
             {I.thrIn[d][kBody], I.thrIn[d][kHead], I.thrOut[d][kBody], I.thrOut[d][kHead]});
        for (int c = 0; c < 4; ++c)
            part(QStringLiteral("drops.all"), {I.drop[d][c][kBody], I.drop[d][c][kHead]});
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
      << "direction,start_s,end_s,count,min_us,max_us,mean_us,jitter_us,lateness_count,"
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
