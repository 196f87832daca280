#include "slider_scale.hpp"

#include <algorithm>
#include <cmath>

namespace linkem::gui {

WorkingRange workingRange(const std::string& key, double schema_min, double schema_max,
                          double mean_delay_us) {
    WorkingRange r;
    if (key == "mean_delay_us") {
        r = {100, 1e6, true};  // 0.1 ms .. 1 s
    } else if (key == "jitter_us") {
        r = {100, std::max(mean_delay_us, 1e5), true};  // 0.1 ms .. max(mean, 100 ms)
    } else if (key == "half_life_us") {
        r = {1000, 1e6, false};  // 1 ms .. 1 s
    } else if (key == "rate_bps") {
        r = {1e6, 1e10, false};  // 1 Mbit/s .. 10 Gbit/s
    } else if (key == "loss_probability") {
        r = {1e-4, 0.2, true};  // 0.01 % .. 20 %
    } else {
        r = {std::max(schema_min, 1e-6), schema_max, schema_min <= 0};
    }
    r.high = std::min(r.high, schema_max);
    r.low = std::max(r.low, schema_min > 0 ? schema_min : r.low);
    if (!(r.high > r.low)) r.high = r.low * 10;
    if (schema_min > 0) r.zero = false;
    return r;
}

namespace {
// The largest span (hi / lo) that `intervals` steps may cover: 3x per 100 steps.
double span(int intervals) {
    return std::pow(kMaxRatioPer100Px, std::max(intervals, 1) / 100.0);
}
}  // namespace

SliderScale SliderScale::fit(const WorkingRange& r, int pixels, double around) {
    SliderScale s;
    s.steps = std::max(pixels, 20);
    s.zero = r.zero;
    const double full = r.high / r.low;
    if (full <= span(s.zero ? s.steps - 1 : s.steps)) {
        s.lo = r.low;
        s.hi = r.high;
        s.whole = true;
        return s;
    }
    s.whole = false;
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

double SliderScale::value(int p) const {
    p = std::clamp(p, 0, steps);
    if (zero) {
        if (p == 0) return 0;
        return lo * std::pow(hi / lo, static_cast<double>(p - 1) / (steps - 1));
    }
    return lo * std::pow(hi / lo, static_cast<double>(p) / steps);
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
