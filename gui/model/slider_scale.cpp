#include "slider_scale.hpp"

#include <algorithm>
#include <cmath>

#include "linkem/link_params.hpp"

namespace linkem::gui {

WorkingRange workingRange(const std::string& key, double schema_min, double schema_max,
                          double followed) {
    WorkingRange r;
    const LinkParamField* f = link_param_field(key);
    if (f && f->slider.high > 0) {
        r = {f->slider.low, f->slider.high, f->slider.zero, f->shown.per};
        if (!f->slider.follows.empty()) r.high = std::max(r.high, followed);
    } else {
        r = {std::max(schema_min, 1e-6), schema_max, schema_min <= 0, f ? f->shown.per : 1.0};
    }
    r.high = std::min(r.high, schema_max);
    r.low = std::max(r.low, schema_min > 0 ? schema_min : r.low);
    if (!(r.high > r.low)) r.high = r.low * 10;
    if (schema_min > 0) r.zero = false;
    return r;
}

double roundToDigits(double v, int digits) {
    if (v == 0 || !std::isfinite(v)) return v;
    const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(v))));
    const double unit = std::pow(10.0, magnitude - digits + 1);
    return std::round(v / unit) * unit;
}

int significantDigits(double v, double per) {
    const double x = v / per;
    for (int d = 1; d < 15; ++d)
        if (std::abs(roundToDigits(x, d) - x) <= 1e-9 * std::abs(x)) return d;
    return 15;
}

namespace {
// The largest span (hi / lo) that `intervals` steps may cover: 3x per 101 steps, so that
// 100 steps with the half step each end's rounding may take stay within 3x.
double span(int intervals) {
    return std::pow(kMaxRatioPer100Px, std::max(intervals, 1) / 101.0);
}
}  // namespace

SliderScale SliderScale::fit(const WorkingRange& r, int pixels, double around) {
    SliderScale s;
    s.steps = std::max(pixels, 20);
    s.zero = r.zero;
    s.per = r.per;
    const double full = r.high / r.low;
    if (full <= span(s.zero ? s.steps - 1 : s.steps)) {
        s.lo = r.low;
        s.hi = r.high;
        s.whole = true;
        // No finer than kMinStepRatio a position: fewer positions than pixels.
        const int intervals = std::max(
            1, static_cast<int>(std::floor(std::log(full) / std::log(kMinStepRatio) + 1e-9)));
        s.steps = std::min(s.steps, intervals + (s.zero ? 1 : 0));
        return s;
    }
    s.whole = false;  // 3x per 101 positions: each above kMinStepRatio
    const double c = std::clamp(around > 0 ? around : r.low, r.low, r.high);
    auto place = [&](double w) {
        s.lo = c / std::sqrt(w);
        s.hi = c * std::sqrt(w);
        if (s.lo < r.low) {
            s.lo = r.low;
            s.hi = r.low * w;
        } else if (s.hi > r.high) {
            s.hi = r.high;
            s.lo = r.high / w;
        }
    };
    place(span(s.zero ? s.steps - 1 : s.steps));
    if (s.zero && s.lo > r.low * (1 + 1e-9)) {
        // The window is above the bottom of the range: no position for 0.
        s.zero = false;
        place(span(s.steps));
    }
    return s;
}

double SliderScale::exactValue(int p) const {
    p = std::clamp(p, 0, steps);
    if (zero) {
        if (p == 0) return 0;
        return lo * std::pow(hi / lo, static_cast<double>(p - 1) / (steps - 1));
    }
    return lo * std::pow(hi / lo, static_cast<double>(p) / steps);
}

double SliderScale::value(int p) const {
    p = std::clamp(p, 0, steps);
    const double x = exactValue(p);
    if (x == 0) return 0;
    // Half a position in log terms: a rounded value stays nearer its own position than the
    // next, also at the ends (where position() clamps).
    const double half = 0.5 * std::log(hi / lo) / (zero ? steps - 1 : steps) * (1 + 1e-9);
    for (int digits = 1; digits <= 3; ++digits) {
        const double r = roundToDigits(x / per, digits) * per;
        if (r > 0 && std::abs(std::log(r / x)) <= half && position(r) == p) return r;
    }
    return x;  // not reached while a position is above kMinStepRatio
}

int SliderScale::position(double v) const {
    if (zero) {
        if (v <= lo * 0.5) return 0;
        const double f = std::log(std::max(v, lo) / lo) / std::log(hi / lo);
        return std::clamp(1 + static_cast<int>(std::lround(f * (steps - 1))), 1, steps);
    }
    const double f = std::log(std::max(v, lo) / lo) / std::log(hi / lo);
    return std::clamp(static_cast<int>(std::lround(f * steps)), 0, steps);
}

bool SliderScale::comfortable(double v) const {
    if (whole) return true;
    if (v <= 0) return zero;
    const double margin = std::pow(hi / lo, 0.15);
    const bool low_ok = zero ? v >= lo : v >= lo * margin;
    return low_ok && v <= hi / margin;
}

double SliderScale::maxRatio(int pixels) const {
    double worst = 1;
    for (int p = zero ? 1 : 0; p + pixels <= steps; ++p)
        worst = std::max(worst, value(p + pixels) / value(p));
    return worst;
}

}  // namespace linkem::gui
