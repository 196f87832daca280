// A slider's positions onto a link parameter's values, independent of Qt.
//
// Each slider covers the working range a demo needs (workingRange: jitter 0 .. max(mean
// delay, 100 ms), loss 0 .. 20 %, ...), log-like with one position per pixel, and keeps one
// bound whatever its length: a 100-pixel drag changes the value by at most 3x. A slider long
// enough covers its whole working range; a shorter one covers a window of it around the
// value, which follows the value when the drag ends or a value is typed. Values beyond the
// working range (up to the schema's limits) are typed into the spin box.
#pragma once

#include <string>

namespace linkem::gui {

/// The most a 100-pixel drag may multiply a value by.
inline constexpr double kMaxRatioPer100Px = 3.0;

/// The values a demo needs of one parameter, in JSON units: log-like from `low` (> 0) to
/// `high`, with position 0 at 0 when `zero`.
struct WorkingRange {
    double low = 1, high = 1000;
    bool zero = true;
};

/// The working range of a link_params_schema key (mean_delay_us, jitter_us, half_life_us,
/// rate_bps, loss_probability; others: their schema range), within the schema's limits.
/// The jitter's range follows the mean delay in force (mean_delay_us).
WorkingRange workingRange(const std::string& key, double schema_min, double schema_max,
                          double mean_delay_us);

struct SliderScale {
    double lo = 1, hi = 1000;  // the values of the first non-zero position and of the last
    bool zero = true;          // position 0 is 0
    int steps = 100;           // positions 0 .. steps
    bool whole = true;         // covers the whole working range

    /// A slider of `pixels` (one position each) over `r`: all of it when the bound allows,
    /// else the widest window the bound allows, centred (in log terms) on `around`.
    static SliderScale fit(const WorkingRange& r, int pixels, double around);
    double value(int position) const;
    int position(double value) const;  // the nearest
    /// The value lies inside the window away from its ends (or the window is the whole
    /// range): no need to move the window to it.
    bool comfortable(double value) const;
    /// The largest factor between the values of two positions `pixels` apart.
    double maxRatio(int pixels) const;
};

}  // namespace linkem::gui
