#include "linkem/telemetry.hpp"

#include <cmath>

namespace linkem {

void RunningStats::merge(const RunningStats& o) {
    if (o.count == 0) return;
    if (count == 0) {
        *this = o;
        return;
    }
    // o's sums are around o.shift; move them to ours: y' = y + (o.shift - shift).
    const double d = o.shift - shift;
    const double n = static_cast<double>(o.count);
    sumsq += o.sumsq + 2 * d * o.sum + n * d * d;
    sum += o.sum + n * d;
    count += o.count;
    min = o.min < min ? o.min : min;
    max = o.max > max ? o.max : max;
}

double RunningStats::jitter() const {
    if (count < 2) return 0;
    const double n = static_cast<double>(count);
    const double m = sum / n;
    const double var = sumsq / n - m * m;
    return var > 0 ? std::sqrt(var) : 0.0;
}

}  // namespace linkem
