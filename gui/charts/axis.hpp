// The charts' axes: units that keep the numbers short, ranges that end on nice numbers, and a
// time axis whose ticks fall on whole seconds (or 1-2-5 steps of them).
#pragma once

#include <QString>

class QValueAxis;

namespace linkem::gui {

struct AxisUnit {
    QString name;
    double div = 1;  // base units per displayed unit
};

/// A delay unit (µs, ms, s) for values up to max_us.
AxisUnit delayUnit(double max_us);
/// A rate unit (k, M, G + base) for values up to max.
AxisUnit rateUnit(double max, const QString& base);

/// A value axis with a title, short labels and no truncation of its labels.
QValueAxis* newAxis(const QString& title);

/// A step of 1, 2 or 5 times a power of ten giving about `ticks` intervals over `range`.
double niceStep(double range, int ticks);

/// The axis spans lo..hi (padded a little, never below 0 when from_zero or when lo >= 0)
/// with `ticks` (about) intervals at multiples of a nice step.
/// beside_time: the axis stands beside a time axis (setTimeRange) whose leftmost label may
/// sit at the plot's left edge; the range then starts a quarter of a tick interval below the
/// lowest tick, so that tick's label clears the time axis' labels.
void setRange(QValueAxis* axis, double lo, double hi, bool from_zero, int ticks = 5,
              bool beside_time = false);

/// A time axis: exactly x0..x1 (seconds), ticks at multiples of a nice number of seconds,
/// about `ticks` of them.
void setTimeRange(QValueAxis* axis, double x0, double x1, int ticks = 6);

}  // namespace linkem::gui
