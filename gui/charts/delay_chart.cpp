#include "delay_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QImage>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include "axis.hpp"

namespace linkem::gui {

namespace {

// Squares of `size` px at each point, drawn as one image each ("light markers"): Qt Charts
// otherwise makes a QGraphicsItem of every marker, and the built-in traffic's squares of a
// 5-minute window (thousands) took most of the delay chart's paint time (docs/gui.md).
void setSquares(QXYSeries* m, const QColor& color, qreal size) {
    const int px = std::max(1, static_cast<int>(std::lround(size)));
    QImage square(px, px, QImage::Format_ARGB32_Premultiplied);
    square.fill(color);
    m->setMarkerSize(px);
    m->setLightMarker(square);
    // a scatter series: its marker items stay hidden, the light marker draws; a line series
    // (no line) draws its points only when they are visible
    m->setPointsVisible(m->type() != QAbstractSeries::SeriesTypeScatter);
}

}  // namespace

DelayChart::DelayChart(int lane)
    : ChartRenderer(lane < 0 ? QStringLiteral("delay")
                             : QStringLiteral("delay.") + kDirectionKeys[lane]),
      lane_(lane) {
    chart_ = newChart();
    x_ = newAxis(QObject::tr("Time since linkemd started (s)"));
    y_ = newAxis(QObject::tr("Actual delay (ms)"));
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            env_up_[d][k] = new QLineSeries;
            env_lo_[d][k] = new QLineSeries;
            env_[d][k] =
                newArea(partName(QObject::tr("%1 min/max per interval").arg(directionLabel(d)), k),
                        env_up_[d][k], env_lo_[d][k], withAlpha(kDirectionColor[d], 70));
            attach(chart_, env_[d][k], x_, y_);
        }
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            samples_[d][k] = newLine(partName(QObject::tr("%1 actual").arg(directionLabel(d)), k),
                                     kDirectionColor[d], 1.0);
            attach(chart_, samples_[d][k], x_, y_);
            // the caption says the line is the actual delay; squares are "measured"
            labelMarker(chart_, samples_[d][k], directionLabel(d));
        }
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            // The head's squares are a line series without its line: a scatter series is an
            // item as large as the plot, and each new head square repainted the whole plot
            // (every series' body with it); a line series' item is as large as its points.
            QXYSeries* m = nullptr;
            if (k == kBody) {
                auto* s = new QScatterSeries;
                s->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
                s->setBorderColor(kDirectionDark[d]);
                m = s;
            } else {
                m = new QLineSeries;
            }
            m->setName(partName(QObject::tr("%1 measured").arg(directionLabel(d)), k));
            m->setColor(kDirectionDark[d]);
            m->setPen(Qt::NoPen);
            setSquares(m, kDirectionDark[d], 3);
            measured_[d][k] = m;
            attach(chart_, m, x_, y_);
        }
    for (int d = 0; d < 2; ++d) {
        target_[d] = newLine(QObject::tr("%1 target").arg(directionLabel(d)), kDirectionDark[d],
                             1.5, Qt::DashLine);
        band_up_[d] = newLine(QObject::tr("%1 + jitter").arg(directionLabel(d)), kDirectionDark[d],
                              1.0, Qt::DotLine);
        band_lo_[d] = newLine(QObject::tr("%1 - jitter").arg(directionLabel(d)), kDirectionDark[d],
                              1.0, Qt::DotLine);
        attach(chart_, target_[d], x_, y_);
        attach(chart_, band_up_[d], x_, y_);
        attach(chart_, band_lo_[d], x_, y_);
    }
    view_ = newView(
        chart_,
        QObject::tr("Each sampled packet's actual delay over its arrival time (min and max of "
                    "each pixel column), the min/max of the emulated delay over every packet of "
                    "each interval, and the target mean with a band of ± jitter.\nActual delay "
                    "= the emulated delay + the spacer's queueing (+ the wait behind an earlier "
                    "packet when order is kept) + lateness; not the NIC's transmit queue or the "
                    "wire."));
    setTitles();
}

void DelayChart::setTitles() {
    const QString title = lane_ < 0
                              ? QObject::tr("Delay per packet")
                              : QObject::tr("%1: delay per packet").arg(directionLabel(lane_));
    showTitle(title,
              QObject::tr("Actual delay = emulated delay + spacer queueing (+ wait behind "
                          "earlier packets when order is kept) + lateness"),
              QObject::tr("line: sampled packets · squares: built-in traffic · shaded: min/max "
                          "per interval · dashed: target · dotted: ± jitter"));
    x_->setTitleText(timeTitle());
}

void DelayChart::applyStyle(const ChartStyle& s) {
    ChartRenderer::applyStyle(s);
    for (int d = 0; d < 2; ++d) {
        for (int part : {kBody, kHead}) {
            setLineWidth(samples_[d][part], 1.0, s);
            setSquares(measured_[d][part], kDirectionDark[d], 3 * s.line_scale);
        }
        setLineWidth(target_[d], 1.5, s);
        setLineWidth(band_up_[d], 1.0, s);
        setLineWidth(band_lo_[d], 1.0, s);
    }
}

int DelayChart::plotWidth() const {
    return static_cast<int>(chart_->plotArea().width());
}

QList<QXYSeries*> DelayChart::parts(const QString& part) const {
    QList<QXYSeries*> v;
    for (int d = 0; d < 2; ++d) {
        if (part == QLatin1String("samples") || part == QLatin1String("all"))
            v << samples_[d][kBody] << samples_[d][kHead];
        if (part == QLatin1String("measured") || part == QLatin1String("all"))
            v << measured_[d][kBody] << measured_[d][kHead];
        if (part == QLatin1String("target") || part == QLatin1String("all"))
            v << target_[d] << band_up_[d] << band_lo_[d];
        if (part == QLatin1String("envelope") || part == QLatin1String("all"))
            v << env_up_[d][kBody] << env_up_[d][kHead] << env_lo_[d][kBody] << env_lo_[d][kHead];
    }
    return v;
}

// The delay series of direction d over [a, b], in µs: decimated samples and measured samples,
// and the envelope (per column the lowest minimum and the highest maximum of the intervals
// whose middle lies in it).
DelayChart::Points DelayChart::points(const RedrawFrame& f, int d, std::int64_t a,
                                      std::int64_t b) const {
    Points P;
    const ChartStore::Direction& R = f.store->shown(d);
    R.actual_cols.visit(
        a, b, [&](std::int64_t t, float v) { P.samples.push_back(QPointF(f.seconds(t), v)); });
    R.measured_cols.visit(
        a, b, [&](std::int64_t t, float v) { P.measured.push_back(QPointF(f.seconds(t), v)); });
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
        if (iv.delay.count == 0) continue;
        const std::int64_t c = ColumnDecimator::floorDiv(m, f.column_ns);
        const double lo_us = iv.delay.min * 1e-3, hi_us = iv.delay.max * 1e-3;
        if (c != col) {
            flush();
            col = c;
            cmin = lo_us;
            cmax = hi_us;
        } else {
            cmin = std::min(cmin, lo_us);
            cmax = std::max(cmax, hi_us);
        }
        cx = f.seconds(m);
    }
    flush();
    return P;
}

void DelayChart::syncClassLines(const RedrawFrame& f) {
    const ChartStore& S = *f.store;
    const std::size_t ids = S.shownClass() < 0 && S.classCount() > 0 ? S.classCount() + 1 : 0;
    std::vector<std::string> names;
    for (std::size_t id = 0; id < ids; ++id)
        names.push_back(S.className(id));
    if (names == class_names_) return;
    for (auto& v : class_lines_) {
        for (QLineSeries* s : v) {
            chart_->removeSeries(s);
            delete s;
        }
        v.clear();
    }
    class_names_ = names;
    for (int d = 0; d < 2; ++d)
        for (std::size_t id = 0; id < ids; ++id) {
            const QColor c = d == 0 ? classColor(id) : classColor(id).darker(140);
            auto* s = newLine(QObject::tr("class %1 %2")
                                  .arg(QString::fromStdString(names[id]), directionLabel(d)),
                              c, 1.0);
            attach(chart_, s, x_, y_);
            setLineWidth(s, 1.0, style_);
            labelMarker(chart_, s, QString::fromStdString(names[id]));
            class_lines_[d].push_back(s);
        }
}

bool DelayChart::drawHeads(const RedrawFrame& f) {
    // each class's line is drawn whole
    if (!class_lines_[0].empty() || (f.store->shownClass() < 0 && f.store->classCount() > 0))
        return false;
    Heads heads;
    for (int d = 0; d < 2; ++d) {
        if (!shown(f, d)) continue;
        Points P = points(f, d, f.split, f.hi);
        heads.emplace_back(env_up_[d][kHead], std::move(P.envUp));
        heads.emplace_back(env_lo_[d][kHead], std::move(P.envLo));
        heads.emplace_back(samples_[d][kHead], std::move(P.samples));
        heads.emplace_back(measured_[d][kHead], std::move(P.measured));
    }
    return replaceHeads(heads, y_->min() * div_, y_->max() * div_, div_, joints_);
}

void DelayChart::drawAll(const RedrawFrame& f) {
    Points P[2][2];
    QList<QPointF> target[2], bandUp[2], bandLo[2];
    double ymin = INFINITY, ymax = -INFINITY;
    auto extent = [&](const QList<QPointF>& v) {
        for (const QPointF& p : v) {
            ymin = std::min(ymin, p.y());
            ymax = std::max(ymax, p.y());
        }
    };
    for (int d = 0; d < 2; ++d) {
        if (!shown(f, d)) continue;
        const ChartStore::Direction& R = f.store->shown(d);
        P[d][kBody] = points(f, d, f.lo, f.split - 1);
        P[d][kHead] = points(f, d, f.split, f.hi);
        // Target and band: a step function over the targets in force.
        for (std::size_t i = 0; i < R.targets.size(); ++i) {
            const Target& t = R.targets[i];
            const std::int64_t a = std::max(t.since_ns, f.lo);
            const std::int64_t b =
                i + 1 < R.targets.size() ? std::min(R.targets[i + 1].since_ns, f.hi) : f.hi;
            if (b < a) continue;
            for (const std::int64_t x : {a, b}) {
                target[d].push_back(QPointF(f.seconds(x), t.mean_us));
                bandUp[d].push_back(QPointF(f.seconds(x), t.mean_us + t.jitter_us));
                bandLo[d].push_back(QPointF(f.seconds(x), std::max(0.0, t.mean_us - t.jitter_us)));
            }
        }
        for (int part : {kBody, kHead})
            for (const QList<QPointF>* v :
                 {&P[d][part].samples, &P[d][part].measured, &P[d][part].envUp, &P[d][part].envLo})
                extent(*v);
        extent(bandUp[d]);
        extent(bandLo[d]);
    }
    syncClassLines(f);
    const bool classes = !class_lines_[0].empty();
    std::vector<QList<QPointF>> cls[2];
    for (int d = 0; d < 2; ++d) {
        cls[d].resize(class_lines_[d].size());
        if (!shown(f, d)) continue;
        for (std::size_t id = 0; id < cls[d].size(); ++id) {
            f.store->classDir(d, id).actual_cols.visit(f.lo, f.hi, [&](std::int64_t t, float v) {
                cls[d][id].push_back(QPointF(f.seconds(t), v));
            });
            extent(cls[d][id]);
        }
        // the classes' lines together are the direction's samples: not drawn twice; and the
        // min/max of every class together spans them all (0 to 80 ms for a pass class beside an
        // 80 ms one): no band of the direction's
        if (classes)
            for (int part : {kBody, kHead}) {
                P[d][part].samples.clear();
                P[d][part].envUp.clear();
                P[d][part].envLo.clear();
            }
    }
    const bool any = std::isfinite(ymax);
    const AxisUnit du = delayUnit(any ? std::max(std::fabs(ymax), std::fabs(ymin)) : 20000);
    auto scaled = [&](QList<QPointF>& v) {
        if (du.div != 1)
            for (QPointF& p : v)
                p.setY(p.y() / du.div);
    };
    Batch batch;
    for (int d = 0; d < 2; ++d) {
        const std::array<std::pair<QXYSeries*, QList<QPointF>*>, 4> body = {
            {{env_up_[d][kBody], &P[d][kBody].envUp},
             {env_lo_[d][kBody], &P[d][kBody].envLo},
             {samples_[d][kBody], &P[d][kBody].samples},
             {measured_[d][kBody], &P[d][kBody].measured}}};
        const std::array<std::pair<QXYSeries*, QList<QPointF>*>, 4> head = {
            {{env_up_[d][kHead], &P[d][kHead].envUp},
             {env_lo_[d][kHead], &P[d][kHead].envLo},
             {samples_[d][kHead], &P[d][kHead].samples},
             {measured_[d][kHead], &P[d][kHead].measured}}};
        for (std::size_t k = 0; k < body.size(); ++k) {
            scaled(*body[k].second);
            scaled(*head[k].second);
            if (k < 3) {  // not the squares: no line joins them
                joints_.keep(head[k].first, *body[k].second);
                joints_.prepend(head[k].first, *head[k].second);
            }
            batch.emplace_back(body[k]);
            batch.emplace_back(head[k]);
        }
        for (auto [series, v] : std::initializer_list<std::pair<QXYSeries*, QList<QPointF>*>>{
                 {target_[d], &target[d]}, {band_up_[d], &bandUp[d]}, {band_lo_[d], &bandLo[d]}}) {
            scaled(*v);
            batch.emplace_back(series, v);
        }
    }
    for (int d = 0; d < 2; ++d)
        for (std::size_t id = 0; id < cls[d].size(); ++id) {
            scaled(cls[d][id]);
            batch.emplace_back(class_lines_[d][id], &cls[d][id]);
        }
    const int xt = xTicks(), yt = yTicks();
    commit(batch, [&] {
        setTimeRange(x_, f.seconds(f.lo), f.seconds(f.hi), xt);
        if (any)
            setRange(y_, ymin / du.div, ymax / du.div, false, yt, true);
        else
            y_->setRange(0, 1);
    });
    div_ = du.div;
    y_->setTitleText(
        (compact_ ? QObject::tr("delay (%1)") : QObject::tr("Actual delay (%1)")).arg(du.name));
    for (int d = 0; d < 2; ++d) {
        const bool s = !P[d][kBody].samples.isEmpty() || !P[d][kHead].samples.isEmpty();
        const bool m = !P[d][kBody].measured.isEmpty() || !P[d][kHead].measured.isEmpty();
        showMarker(chart_, samples_[d][kBody], s);
        showMarker(chart_, measured_[d][kBody], m);
        // the caption explains these: the legend keeps to one line
        for (QAbstractSeries* h : std::initializer_list<QAbstractSeries*>{
                 target_[d], band_up_[d], band_lo_[d], env_[d][kBody], env_[d][kHead],
                 samples_[d][kHead], measured_[d][kHead]})
            showMarker(chart_, h, false);
        // one legend entry a class (its A→B line; B→A is the darker shade), up to 8
        for (std::size_t id = 0; id < cls[d].size(); ++id)
            showMarker(
                chart_, class_lines_[d][id],
                d == 0 && cls[d].size() <= 8 && (!cls[0][id].isEmpty() || !cls[1][id].isEmpty()));
    }
}

void DelayChart::draw(const RedrawFrame& f, bool all) {
    if (all)
        drawAll(f);
    else if (f.delay_new && !drawHeads(f))
        drawAll(f);
}

}  // namespace linkem::gui
