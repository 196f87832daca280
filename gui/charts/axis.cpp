#include "axis.hpp"

#include <algorithm>
#include <cmath>

#include <QValueAxis>

namespace linkem::gui {

AxisUnit delayUnit(double max_us) {
    if (max_us >= 2e6) return {QStringLiteral("s"), 1e6};
    if (max_us >= 2000) return {QStringLiteral("ms"), 1e3};
    return {QStringLiteral("µs"), 1};
}

AxisUnit rateUnit(double max, const QString& base) {
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

double niceStep(double range, int ticks) {
    if (!(range > 0) || !std::isfinite(range)) return 1;
    const double raw = range / std::max(ticks, 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

void setRange(QValueAxis* axis, double lo, double hi, bool from_zero, int ticks, bool beside_time) {
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
    const double step = niceStep(hi - lo, ticks);
    lo = std::floor(lo / step + 1e-9) * step;
    hi = std::ceil(hi / step - 1e-9) * step;
    if (beside_time) {
        // Ticks at lo + k step from an edge a quarter of a step lower; the interval changes
        // before a wider range and after a narrower one (as in setTimeRange).
        const bool first = axis->tickType() != QValueAxis::TicksDynamic;
        axis->setTickType(QValueAxis::TicksDynamic);
        axis->setTickAnchor(lo);
        if (first || step >= axis->tickInterval()) {
            axis->setTickInterval(step);
            axis->setRange(lo - 0.25 * step, hi);
        } else {
            axis->setRange(lo - 0.25 * step, hi);
            axis->setTickInterval(step);
        }
        return;
    }
    // lo and hi are multiples of step: fixed ticks fall on the nice numbers
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setRange(lo, hi);
    axis->setTickCount(std::clamp(static_cast<int>(std::lround((hi - lo) / step)) + 1, 2, 21));
}

// The interval grows before the range does and shrinks after it: a short range's interval
// applied to a long range for a moment would lay out millions of ticks.
void setTimeRange(QValueAxis* axis, double x0, double x1, int ticks) {
    const double step = niceStep(x1 - x0, ticks);
    // No tick on the left edge: its label, centred there, would run into the delay axis'
    // lowest label (the range loses a thousandth of a tick interval, less than a pixel).
    x0 += step * 1e-3;
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

}  // namespace linkem::gui
