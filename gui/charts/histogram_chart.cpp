#include "histogram_chart.hpp"

#include <algorithm>
#include <cmath>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QValueAxis>

#include "axis.hpp"

namespace linkem::gui {

HistogramChart::HistogramChart() : ChartRenderer(QStringLiteral("histogram")) {
    chart_ = newChart();
    x_ = newAxis(QObject::tr("Actual delay (ms)"));
    y_ = newAxis(QObject::tr("Density (1/ms)"));
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    for (int d = 0; d < 2; ++d) {
        bars_[d] = newLine(QString(), kDirectionColor[d], 1.0);
        area_[d] = new QAreaSeries(bars_[d]);
        area_[d]->setName(QObject::tr("%1 actual").arg(directionLabel(d)));
        area_[d]->setBrush(withAlpha(kDirectionColor[d], 90));
        area_[d]->setPen(QPen(kDirectionColor[d], 1.0));
        attach(chart_, area_[d], x_, y_);
    }
    for (int d = 0; d < 2; ++d) {
        density_[d] = newLine(QObject::tr("%1 configured density").arg(directionLabel(d)),
                              kDirectionDark[d], 2.0);
        attach(chart_, density_[d], x_, y_);
    }
    view_ = newView(
        chart_,
        QObject::tr("Histogram of the sampled packets' actual delay in the visible window, as a "
                    "probability density (area 1), against the density of the configured "
                    "distribution (mean delay, jitter as its standard deviation). Correlation "
                    "(strategy correlated) averages successive draws, so the shape tends to "
                    "normal; keeping order (uncorrelated) adds the wait behind earlier packets, "
                    "reordering does not.\nActual delay = the emulated delay + the spacer's "
                    "queueing (+ the wait behind an earlier packet when order is kept) + "
                    "lateness."));
    setTitles();
}

void HistogramChart::setTitles() {
    showTitle(QObject::tr("Delay histogram over the window"),
              QObject::tr("shaded: actual delay of the window's samples"),
              QObject::tr("line: the configured distribution's density"));
}

void HistogramChart::reset() {
    drawn_[0] = drawn_[1] = Histogram{};
    valid_ = false;
    dirty_ = true;
}

bool HistogramChart::due() const {
    return samples_new_ && clock_.isValid() && clock_.elapsed() >= kRecountMs;
}

void HistogramChart::applyStyle(const ChartStyle& s) {
    ChartRenderer::applyStyle(s);
    for (int d = 0; d < 2; ++d) {
        setLineWidth(density_[d], 2.0, s);
        QPen hp = area_[d]->pen();
        hp.setWidthF(1.0 * s.line_scale);
        area_[d]->setPen(hp);
    }
}

QList<QXYSeries*> HistogramChart::parts(const QString& part) const {
    QList<QXYSeries*> v;
    for (int d = 0; d < 2; ++d) {
        if (part == QLatin1String("bars") || part == QLatin1String("all")) v << bars_[d];
        if (part == QLatin1String("density") || part == QLatin1String("all")) v << density_[d];
    }
    return v;
}

void HistogramChart::draw(const RedrawFrame& f, bool all) {
    const ChartStore& D = *f.store;
    const bool recount = !valid_ || !clock_.isValid() ||
                         (samples_new_ && clock_.elapsed() >= kRecountMs) || span_ != f.hi - f.lo ||
                         show_ != f.show;
    // the frame moving alone does not draw the histogram again: only a recount or a setting
    if (recount) {
        valid_ = true;
        samples_new_ = false;
        clock_.start();
        span_ = f.hi - f.lo;
        show_ = f.show;
    } else if (!dirty_) {
        return;
    }
    (void)all;
    double hx0 = INFINITY, hx1 = -INFINITY, hy1 = 0;
    struct Ref {
        bool have = false;
        Target t;
    } ref[2];
    for (int d = 0; d < 2; ++d) {
        if (recount) drawn_[d] = f.shown(d) ? D.histogram(d, f.lo, f.hi, kMaxBinned) : Histogram{};
        const Histogram& h = drawn_[d];
        if (!h.density.empty()) {
            hx0 = std::min(hx0, h.lo_us);
            hx1 = std::max(hx1, h.hi_us());
            for (double v : h.density)
                hy1 = std::max(hy1, v);
        }
        const auto& targets = D.shown(d).targets;
        if (f.shown(d) && !targets.empty()) {
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
    const AxisUnit hu = delayUnit(std::max(std::fabs(hx0), std::fabs(hx1)));
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
    QList<QPointF> bars[2];
    for (int d = 0; d < 2; ++d) {
        const Histogram& h = drawn_[d];
        if (!h.density.empty()) {
            bars[d].reserve(static_cast<qsizetype>(2 * h.density.size() + 2));
            bars[d].push_back(QPointF(h.lo_us / hu.div, 0));
            for (std::size_t i = 0; i < h.density.size(); ++i) {
                const double y = h.density[i] * hu.div;
                bars[d].push_back(QPointF((h.lo_us + h.bin_us * i) / hu.div, y));
                bars[d].push_back(QPointF((h.lo_us + h.bin_us * (i + 1)) / hu.div, y));
            }
            bars[d].push_back(QPointF(h.hi_us() / hu.div, 0));
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
    const int xt = xTicks(), yt = yTicks();
    commit({{bars_[0], &bars[0]},
            {bars_[1], &bars[1]},
            {density_[0], &dens[0]},
            {density_[1], &dens[1]}},
           [&] {
               setRange(x_, hx0 / hu.div, hx1 / hu.div, false, xt);
               setRange(y_, 0, hy1 * hu.div, true, yt);
           });
    for (int d = 0; d < 2; ++d) {
        showMarker(chart_, area_[d], !bars[d].isEmpty());
        showMarker(chart_, density_[d], false);  // the caption explains the lines
    }
    x_->setTitleText(
        (compact_ ? QObject::tr("delay (%1)") : QObject::tr("Actual delay (%1)")).arg(hu.name));
    y_->setTitleText((compact_ ? QObject::tr("1/%1") : QObject::tr("Density (1/%1)")).arg(hu.name));
}

}  // namespace linkem::gui
