// A slider's positions onto a link parameter's values, independent of Qt.
//
// Each slider covers the working range a demo needs (the field table's slider range,
// linkem/link_params.hpp: jitter 0 .. max(mean delay, 100 ms), loss 0 .. 20 %, ...),
// log-like, and keeps one bound whatever its length: a 100-pixel drag changes the value by
// at most 3x. A slider long enough covers its whole working range; a shorter one covers a
// window of it around the value, which follows the value when the drag ends or a value is
// typed. Values beyond the working range (up to the schema's limits) are typed into the spin
// box.
//
// Every position lands on a round value: the coarsest of 1, 2 or 3 significant digits, in
// the unit people read, that the slider maps back to that position. For that the positions
// are one a pixel, or fewer where a pixel would be finer than 3 significant digits can say
// (kMinStepRatio).
#pragma once

#include <string>

namespace linkem::gui {

/// The most a 100-pixel drag may multiply a value by.
inline constexpr double kMaxRatioPer100Px = 3.0;
/// The least one position multiplies a value by: above 1.01, the widest gap between two
/// values of 3 significant digits (100 -> 101), so that each position has a value of at most
/// 3 significant digits of its own.
inline constexpr double kMinStepRatio = 1.0102;

/// The values a demo needs of one parameter, in JSON units: log-like from `low` (> 0) to
/// `high`, with position 0 at 0 when `zero`; `per`: JSON units per unit people read (1000 us
/// per ms), in which the slider's values are round.
struct WorkingRange {
    double low = 1, high = 1000;
    bool zero = true;
    double per = 1;
};

/// The working range of a link_params_schema key, from the field table's slider range
/// (LinkParamField::slider; keys without one: their schema range), within the schema's
/// limits. `followed`: the value in force of the field the range follows, if any (the
/// jitter's top follows the mean delay, mean_delay_us).
WorkingRange workingRange(const std::string& key, double schema_min, double schema_max,
                          double followed);

/// `v` rounded to `digits` significant digits (0 stays 0).
double roundToDigits(double v, int digits);
/// The significant digits `v` is written with in `per` units, up to 15: 94.7 -> 3, 0.02 -> 1.
int significantDigits(double v, double per = 1);

struct SliderScale {
    double lo = 1, hi = 1000;  // the values of the first non-zero position and of the last
    bool zero = true;          // position 0 is 0
    int steps = 100;           // positions 0 .. steps
    bool whole = true;         // covers the whole working range
    double per = 1;            // JSON units per unit shown, in which values are round

    /// A slider of `pixels` (one position each, or fewer: no finer than kMinStepRatio) over
    /// `r`: all of it when the bound allows, else the widest window the bound allows,
    /// centred (in log terms) on `around`.
    static SliderScale fit(const WorkingRange& r, int pixels, double around);
    /// The round value of a position: the coarsest of 1, 2, 3 significant digits (in `per`
    /// units) that maps back to the position; increasing with the position.
    double value(int position) const;
    /// The value of a position before rounding: lo .. hi evenly in log terms.
    double exactValue(int position) const;
    int position(double value) const;  // the nearest
    /// The value lies inside the window away from its ends (or the window is the whole
    /// range): no need to move the window to it.
    bool comfortable(double value) const;
    /// The largest factor between the values of two positions `pixels` apart.
    double maxRatio(int pixels) const;
};

}  // namespace linkem::gui
