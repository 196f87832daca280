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
    t += QObject::tr(
        "\nECN marked (ecn_marked), dotted: packets the queue discipline marked CE instead of "
        "dropping them (ecn on); not drops, the packets went on");
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
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead}) {
            ecn_[d][k] = newLine(partName(QObject::tr("%1 ECN marked").arg(directionLabel(d)), k),
                                 kEcnColor, 1.5, d == 0 ? Qt::DotLine : Qt::DashDotLine);
            attach(chart_, ecn_[d][k], x_, y_);
            labelMarker(chart_, ecn_[d][k], QObject::tr("ECN marked"));
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
    for (int d = 0; d < 2; ++d)
        for (int k : {kBody, kHead})
            setLineWidth(ecn_[d][k], 1.5, s);
}

QList<QXYSeries*> DropsChart::parts(const QString& part) const {
    QList<QXYSeries*> v;
    if (part != QLatin1String("all")) return v;
    for (int d = 0; d < 2; ++d)
        for (std::size_t c = 0; c < kDropCauseCount; ++c)
            v << drop_[d][c][kBody] << drop_[d][c][kHead];
    for (int d = 0; d < 2; ++d)
        v << ecn_[d][kBody] << ecn_[d][kHead];
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
        QList<QPointF> e =
            ratePoints(f, d, f.split, f.hi, [](const RatePoint& r) { return r.ecn_marked_per_s; });
        if (!ecn_nonzero_[d] && anyAbove0(e)) return false;
        if (ecn_nonzero_[d]) heads.emplace_back(ecn_[d][kHead], std::move(e));
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
    QList<QPointF> ecn[2][2];
    for (int d = 0; d < 2; ++d) {
        if (f.shown(d)) {
            auto value = [](const RatePoint& r) { return r.ecn_marked_per_s; };
            ecn[d][kBody] = ratePoints(f, d, f.lo, f.split - 1, value);
            ecn[d][kHead] = ratePoints(f, d, f.split, f.hi, value);
        }
        ecn_nonzero_[d] = anyAbove0(ecn[d][kBody]) || anyAbove0(ecn[d][kHead]);
        for (auto& v : ecn[d]) {
            if (!ecn_nonzero_[d]) v.clear();
            for (const QPointF& p : v)
                dmax = std::max(dmax, p.y());
        }
        joints_.keep(ecn_[d][kHead], ecn[d][kBody]);
        joints_.prepend(ecn_[d][kHead], ecn[d][kHead]);
        batch.emplace_back(ecn_[d][kBody], &ecn[d][kBody]);
        batch.emplace_back(ecn_[d][kHead], &ecn[d][kHead]);
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
    for (int d = 0; d < 2; ++d) {
        showMarker(chart_, ecn_[d][kBody], ecn_nonzero_[d] && (d == 0 || !ecn_nonzero_[0]));
        showMarker(chart_, ecn_[d][kHead], false);
    }
}

void DropsChart::draw(const RedrawFrame& f, bool all) {
    if (all)
        drawAll(f);
    else if (f.stats_new && !drawHeads(f))
        drawAll(f);
}

// --------------------------------------------------------------------------------- queue

QueuePoints queuePoints(const ChartStore& store, int d, std::int64_t lo, std::int64_t hi,
                        bool packets) {
    QueuePoints p;
    // The queue is the direction's, whichever class the other charts show.
    for (const Interval& iv : store.dir(d).intervals) {
        if (iv.end_ns < lo || iv.end_ns > hi) continue;
        const double t = static_cast<double>(iv.end_ns) / 1e9;
        const QueueReport& q = iv.queue;
        if (q.sojourn_count > 0) {
            p.mean_ms.push_back(QPointF(t, q.sojourn_mean_ns() / 1e6));
            // the drop-tail spacer reports no max (0)
            if (q.sojourn_max_ns > 0)
                p.max_ms.push_back(QPointF(t, static_cast<double>(q.sojourn_max_ns) / 1e6));
        }
        p.backlog.push_back(
            QPointF(t, static_cast<double>(packets ? q.backlog_packets : q.backlog_bytes)));
    }
    return p;
}

QueueChart::QueueChart() : ChartRenderer(QStringLiteral("queue")) {
    chart_ = newChart();
    x_ = newAxis(QObject::tr("Time since linkemd started (s)"));
    // the units alone: as short as a small chart's plot is tall (the caption says what)
    y_ = newAxis(QObject::tr("ms"));
    y2_ = newAxis(QObject::tr("B"));
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    chart_->addAxis(y2_, Qt::AlignRight);
    for (int d = 0; d < 2; ++d) {
        mean_[d] =
            newLine(QObject::tr("%1 sojourn mean").arg(directionLabel(d)), kDirectionColor[d], 2);
        max_[d] = newLine(QObject::tr("%1 sojourn max").arg(directionLabel(d)), kDirectionColor[d],
                          1, Qt::DotLine);
        backlog_[d] = newLine(QObject::tr("%1 backlog").arg(directionLabel(d)), kDirectionDark[d],
                              1, Qt::DashLine);
        attach(chart_, mean_[d], x_, y_);
        attach(chart_, max_[d], x_, y_);
        attach(chart_, backlog_[d], x_, y2_);
    }
    // no legend (the directions' colours are every chart's; the caption says which line is
    // what): a small chart's width goes to its two axes
    chart_->legend()->hide();
    view_ = newView(
        chart_,
        QObject::tr("The limiter's queue (spacer, trace), per delay interval: the sojourn time "
                    "of the packets that left it (solid: mean, dotted: max; a queue discipline "
                    "measures it at dequeue, the drop-tail spacer reports its wait and no max) "
                    "and the backlog at the interval's end (dashed, right axis; in packets "
                    "with the throughput in packets/s, counted by a queue discipline only). "
                    "From the delay messages' queue object (queue.backlog_bytes, "
                    "backlog_packets, sojourn_mean_ns, sojourn_max_ns)."));
    setTitles();
}

void QueueChart::setTitles() {
    showTitle(QObject::tr("Queue"),
              QObject::tr("blue A→B, orange B→A; sojourn (left): solid mean, dotted max; "
                          "backlog (right): dashed"));
    x_->setTitleText(timeTitle());
}

void QueueChart::applyStyle(const ChartStyle& s) {
    ChartRenderer::applyStyle(s);
    for (int d = 0; d < 2; ++d) {
        setLineWidth(mean_[d], 2, s);
        setLineWidth(max_[d], 1, s);
        setLineWidth(backlog_[d], 1, s);
    }
}

QList<QXYSeries*> QueueChart::parts(const QString& part) const {
    QList<QXYSeries*> v;
    const bool all = part == QLatin1String("all");
    for (int d = 0; d < 2; ++d) {
        if (all || part == QLatin1String("sojourn_mean")) v << mean_[d];
        if (all || part == QLatin1String("sojourn_max")) v << max_[d];
        if (all || part == QLatin1String("backlog")) v << backlog_[d];
    }
    return v;
}

void QueueChart::draw(const RedrawFrame& f, bool all) {
    // a point per delay interval (a few per second): drawn whole when one arrives
    if (!all && !f.delay_new && f.packets == packets_) return;
    packets_ = f.packets;
    QueuePoints p[2];
    double smax = 0, bmax = 0;
    for (int d = 0; d < 2; ++d) {
        if (!f.shown(d)) continue;
        p[d] = queuePoints(*f.store, d, f.lo, f.hi, f.packets);
        for (const QPointF& q : p[d].max_ms)
            smax = std::max(smax, q.y());
        for (const QPointF& q : p[d].mean_ms)
            smax = std::max(smax, q.y());
        for (const QPointF& q : p[d].backlog)
            bmax = std::max(bmax, q.y());
    }
    const AxisUnit su = delayUnit(smax * 1e3);  // from µs
    const AxisUnit bu = rateUnit(bmax, f.packets ? QObject::tr("pkt") : QObject::tr("B"));
    const double sdiv = su.div / 1e3;  // ms per shown unit
    Batch batch;
    for (int d = 0; d < 2; ++d) {
        for (QList<QPointF>* v : {&p[d].mean_ms, &p[d].max_ms})
            for (QPointF& q : *v)
                q.setY(q.y() / sdiv);
        for (QPointF& q : p[d].backlog)
            q.setY(q.y() / bu.div);
        batch.emplace_back(mean_[d], &p[d].mean_ms);
        batch.emplace_back(max_[d], &p[d].max_ms);
        batch.emplace_back(backlog_[d], &p[d].backlog);
    }
    const int xt = xTicks(), yt = yTicks();
    commit(batch, [&] {
        setTimeRange(x_, f.seconds(f.lo), f.seconds(f.hi), xt);
        setRange(y_, 0, std::max(smax / sdiv, 1e-9), true, yt, true);
        setRange(y2_, 0, std::max(bmax / bu.div, 1.0), true, yt, true);
    });
    y_->setTitleText(su.name);
    y2_->setTitleText(bu.name);
}

}  // namespace linkem::gui
