#include "rate_charts.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QValueAxis>

#include "axis.hpp"

namespace linkem::gui {

namespace {
// The legend's name of a cause: its name in words ("buffer_full" -> "buffer full").
QString causeShort(const DropCauseInfo& c) {
    return QString::fromUtf8(c.name).replace(QLatin1Char('_'), QLatin1Char(' '));
}

// The chart's tooltip: every cause, its GUI label, counter and meaning.
QString dropsToolTip() {
    QString t = QObject::tr("Packets dropped per second, by cause:");
    for (const DropCauseInfo& c : kDropCauses)
        t += QStringLiteral("\n%1 (%2): %3")
                 .arg(QString::fromUtf8(c.label), QString::fromUtf8(c.key),
                      QString::fromUtf8(c.meaning));
    return t;
}

bool anyAbove0(const QList<QPointF>& v) {
    return std::any_of(v.begin(), v.end(), [](const QPointF& p) { return p.y() > 0; });
}
}  // namespace

QList<QPointF> ratePoints(const RedrawFrame& f, int d, std::int64_t a, std::int64_t b,
                          const std::function<double(const RatePoint&)>& value) {
    QList<QPointF> v;
    const auto& R = f.store->shown(d).rates;
    std::size_t i = R.size();
    while (i > 0 && R[i - 1].t_ns >= a)
        --i;
    for (; i < R.size() && R[i].t_ns <= b; ++i)
        v.push_back(QPointF(f.seconds(R[i].t_ns), value(R[i])));
    return decimateMinMax(v, 0.0, static_cast<double>(f.column_ns) / 1e9);
}

// ---------------------------------------------------------------------------- throughput

ThroughputChart::ThroughputChart() : ChartRenderer(QStringLiteral("throughput")) {
    chart_ = newChart();
    x_ = newAxis(QObject::tr("Time since linkemd started (s)"));
    y_ = newAxis(QObject::tr("bit/s"));
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            in_[d][k] = newLine(partName(QObject::tr("%1 in").arg(directionLabel(d)), k),
                                kDirectionColor[d], 1.5);
            out_[d][k] = newLine(partName(QObject::tr("%1 out").arg(directionLabel(d)), k),
                                 kDirectionDark[d], 1.5, Qt::DashLine);
            attach(chart_, in_[d][k], x_, y_);
            attach(chart_, out_[d][k], x_, y_);
        }
    view_ = newView(chart_, QObject::tr("Rates from the differences of the cumulative counters "
                                        "of two stats messages. Bytes include the 4-byte FCS."));
    setTitles();
}

void ThroughputChart::setTitles() {
    showTitle(QObject::tr("Throughput"), QObject::tr("in: into the emulator; out: to the port"));
    x_->setTitleText(timeTitle());
}

void ThroughputChart::applyStyle(const ChartStyle& s) {
    ChartRenderer::applyStyle(s);
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            setLineWidth(in_[d][k], 1.5, s);
            setLineWidth(out_[d][k], 1.5, s);
        }
}

QList<QXYSeries*> ThroughputChart::parts(const QString& part) const {
    QList<QXYSeries*> v;
    if (part != QLatin1String("all")) return v;
    for (int d = 0; d < 2; ++d)
        v << in_[d][kBody] << in_[d][kHead] << out_[d][kBody] << out_[d][kHead];
    return v;
}

void ThroughputChart::classLines(const RedrawFrame& f, std::vector<QList<QPointF>>& out,
                                 double& tmax) {
    const ChartStore& S = *f.store;
    const std::size_t ids = S.shownClass() < 0 && S.classCount() > 0 ? S.classCount() + 1 : 0;
    std::vector<std::string> names;
    for (std::size_t id = 0; id < ids; ++id)
        names.push_back(S.className(id));
    if (names != class_names_) {
        for (QLineSeries* s : class_out_) {
            chart_->removeSeries(s);
            delete s;
        }
        class_out_.clear();
        class_names_ = names;
        for (std::size_t id = 0; id < ids; ++id) {
            auto* s = newLine(QObject::tr("class %1 out").arg(QString::fromStdString(names[id])),
                              classColor(id), 1.5, Qt::DotLine);
            attach(chart_, s, x_, y_);
            setLineWidth(s, 1.5, style_);
            class_out_.push_back(s);
        }
    }
    out.assign(ids, {});
    for (std::size_t id = 0; id < ids; ++id) {
        // the classes' counters of the directions shown come from the same stats messages
        std::map<std::int64_t, double> sum;
        for (int d = 0; d < 2; ++d) {
            if (!f.shown(d)) continue;
            for (const RatePoint& r : S.classDir(d, id).rates)
                if (r.t_ns >= f.lo && r.t_ns <= f.hi)
                    sum[r.t_ns] += f.packets ? r.out_pps : r.out_bps;
        }
        QList<QPointF> v;
        for (const auto& [t, x] : sum) {
            v.push_back(QPointF(f.seconds(t), x));
            tmax = std::max(tmax, x);
        }
        out[id] = decimateMinMax(v, 0.0, static_cast<double>(f.column_ns) / 1e9);
    }
}

bool ThroughputChart::drawHeads(const RedrawFrame& f) {
    // each class's line is drawn whole
    if (f.store->shownClass() < 0 && f.store->classCount() > 0) return false;
    if (!class_out_.empty()) return false;
    Heads heads;
    for (int d = 0; d < 2; ++d) {
        if (!f.shown(d)) continue;
        heads.emplace_back(in_[d][kHead], ratePoints(f, d, f.split, f.hi, [&](const RatePoint& r) {
                               return f.packets ? r.in_pps : r.in_bps;
                           }));
        heads.emplace_back(out_[d][kHead], ratePoints(f, d, f.split, f.hi, [&](const RatePoint& r) {
                               return f.packets ? r.out_pps : r.out_bps;
                           }));
    }
    return replaceHeads(heads, -INFINITY, y_->max() * div_, div_, joints_);
}

void ThroughputChart::drawAll(const RedrawFrame& f) {
    auto inRate = [&](const RatePoint& r) { return f.packets ? r.in_pps : r.in_bps; };
    auto outRate = [&](const RatePoint& r) { return f.packets ? r.out_pps : r.out_bps; };
    QList<QPointF> in[2][2], out[2][2];
    double tmax = 0;
    for (int d = 0; d < 2; ++d) {
        if (!f.shown(d)) continue;
        in[d][kBody] = ratePoints(f, d, f.lo, f.split - 1, inRate);
        in[d][kHead] = ratePoints(f, d, f.split, f.hi, inRate);
        out[d][kBody] = ratePoints(f, d, f.lo, f.split - 1, outRate);
        out[d][kHead] = ratePoints(f, d, f.split, f.hi, outRate);
        for (int part : {kBody, kHead})
            for (const QList<QPointF>* v : {&in[d][part], &out[d][part]})
                for (const QPointF& p : *v)
                    tmax = std::max(tmax, p.y());
    }
    std::vector<QList<QPointF>> classes;
    classLines(f, classes, tmax);
    const AxisUnit tu = rateUnit(tmax, f.packets ? QObject::tr("packets/s") : QObject::tr("bit/s"));
    Batch batch;
    for (std::size_t id = 0; id < classes.size(); ++id) {
        for (QPointF& p : classes[id])
            p.setY(p.y() / tu.div);
        batch.emplace_back(class_out_[id], &classes[id]);
    }
    for (int d = 0; d < 2; ++d)
        for (auto [series, v] : {std::pair{in_[d], in[d]}, std::pair{out_[d], out[d]}}) {
            for (int part : {kBody, kHead})
                for (QPointF& p : v[part])
                    p.setY(p.y() / tu.div);
            joints_.keep(series[kHead], v[kBody]);
            joints_.prepend(series[kHead], v[kHead]);
            batch.emplace_back(series[kBody], &v[kBody]);
            batch.emplace_back(series[kHead], &v[kHead]);
        }
    const int xt = xTicks(), yt = yTicks();
    commit(batch, [&] {
        setTimeRange(x_, f.seconds(f.lo), f.seconds(f.hi), xt);
        setRange(y_, 0, std::max(tmax / tu.div, 1e-9), true, yt, true);
    });
    div_ = tu.div;
    y_->setTitleText(tu.name);  // the chart's title says what it is
    for (int d = 0; d < 2; ++d) {
        showMarker(chart_, in_[d][kBody], !in[d][kBody].isEmpty() || !in[d][kHead].isEmpty());
        showMarker(chart_, out_[d][kBody], !out[d][kBody].isEmpty() || !out[d][kHead].isEmpty());
        showMarker(chart_, in_[d][kHead], false);
        showMarker(chart_, out_[d][kHead], false);
    }
    // the classes' colours are the Class box's key (the legend keeps to the directions)
    for (std::size_t id = 0; id < classes.size(); ++id)
        showMarker(chart_, class_out_[id], false);
}

void ThroughputChart::draw(const RedrawFrame& f, bool all) {
    if (all)
        drawAll(f);
    else if (f.stats_new && !drawHeads(f))
        drawAll(f);
}

// --------------------------------------------------------------------------------- drops

DropsChart::DropsChart() : ChartRenderer(QStringLiteral("drops")) {
    chart_ = newChart();
    x_ = newAxis(QObject::tr("Time since linkemd started (s)"));
    // "drops/s", not "packets/s": as short as the plot of a small chart is tall (58 px in a
    // 363x189 chart, where "packets/s" was cut short)
    y_ = newAxis(QObject::tr("drops/s"));
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d)
        for (std::size_t c = 0; c < kDropCauseCount; ++c)
            for (int k : {kBody, kHead}) {
                drop_[d][c][k] = newLine(
                    partName(QObject::tr("%1 %2").arg(directionLabel(d),
                                                      QString::fromUtf8(kDropCauses[c].label)),
                             k),
                    kCauseColor[c], 1.5, d == 0 ? Qt::SolidLine : Qt::DashLine);
                attach(chart_, drop_[d][c][k], x_, y_);
                // one entry per cause: the caption says solid is A→B, dashed B→A
                labelMarker(chart_, drop_[d][c][k], causeShort(kDropCauses[c]));
            }
    view_ = newView(chart_, dropsToolTip());
    setTitles();
}

void DropsChart::setTitles() {
    showTitle(QObject::tr("Drops per second by cause"), QObject::tr("solid: A→B, dashed: B→A"));
    x_->setTitleText(timeTitle());
}

void DropsChart::applyStyle(const ChartStyle& s) {
    ChartRenderer::applyStyle(s);
    for (int d = 0; d < 2; ++d)
        for (std::size_t c = 0; c < kDropCauseCount; ++c)
            for (int k : {kBody, kHead})
                setLineWidth(drop_[d][c][k], 1.5, s);
}

QList<QXYSeries*> DropsChart::parts(const QString& part) const {
    QList<QXYSeries*> v;
    if (part != QLatin1String("all")) return v;
    for (int d = 0; d < 2; ++d)
        for (std::size_t c = 0; c < kDropCauseCount; ++c)
            v << drop_[d][c][kBody] << drop_[d][c][kHead];
    return v;
}

bool DropsChart::drawHeads(const RedrawFrame& f) {
    Heads heads;
    for (int d = 0; d < 2; ++d) {
        if (!f.shown(d)) continue;
        for (std::size_t c = 0; c < kDropCauseCount; ++c) {
            QList<QPointF> v = ratePoints(f, d, f.split, f.hi,
                                          [c](const RatePoint& r) { return r.drops_per_s[c]; });
            // a cause starts dropping: its legend entry appears (everything again)
            if (!nonzero_[d][c] && anyAbove0(v)) return false;
            if (nonzero_[d][c]) heads.emplace_back(drop_[d][c][kHead], std::move(v));
        }
    }
    return replaceHeads(heads, -INFINITY, y_->max(), 1, joints_);
}

void DropsChart::drawAll(const RedrawFrame& f) {
    QList<QPointF> dr[2][kDropCauseCount][2];
    double dmax = 0;
    Batch batch;
    for (int d = 0; d < 2; ++d)
        for (std::size_t c = 0; c < kDropCauseCount; ++c) {
            if (f.shown(d)) {
                auto value = [c](const RatePoint& r) { return r.drops_per_s[c]; };
                dr[d][c][kBody] = ratePoints(f, d, f.lo, f.split - 1, value);
                dr[d][c][kHead] = ratePoints(f, d, f.split, f.hi, value);
            }
            // a cause that dropped nothing in the window is not drawn (a line on the axis)
            nonzero_[d][c] = anyAbove0(dr[d][c][kBody]) || anyAbove0(dr[d][c][kHead]);
            for (auto& v : dr[d][c]) {
                if (!nonzero_[d][c]) v.clear();
                for (const QPointF& p : v)
                    dmax = std::max(dmax, p.y());
            }
            joints_.keep(drop_[d][c][kHead], dr[d][c][kBody]);
            joints_.prepend(drop_[d][c][kHead], dr[d][c][kHead]);
            batch.emplace_back(drop_[d][c][kBody], &dr[d][c][kBody]);
            batch.emplace_back(drop_[d][c][kHead], &dr[d][c][kHead]);
        }
    const int xt = xTicks(), yt = yTicks();
    commit(batch, [&] {
        setTimeRange(x_, f.seconds(f.lo), f.seconds(f.hi), xt);
        setRange(y_, 0, std::max(dmax, 1.0), true, yt, true);
    });
    for (int d = 0; d < 2; ++d)
        for (std::size_t c = 0; c < kDropCauseCount; ++c) {
            showMarker(chart_, drop_[d][c][kBody], nonzero_[d][c] && (d == 0 || !nonzero_[0][c]));
            showMarker(chart_, drop_[d][c][kHead], false);
        }
}

void DropsChart::draw(const RedrawFrame& f, bool all) {
    if (all)
        drawAll(f);
    else if (f.stats_new && !drawHeads(f))
        drawAll(f);
}

}  // namespace linkem::gui
