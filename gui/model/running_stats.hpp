// The GUI's one running-statistics type is the protocol's RunningStats (linkem/telemetry.hpp):
// count, minimum, maximum, mean and the jitter, the *population* standard deviation (the sum
// of squared deviations divided by n, as the protocol's `jitter_ns` and the parameter
// `jitter_us` are), mergeable. Every figure the GUI shows, the readouts' and the charts', comes
// from it.
#pragma once

#include "linkem/telemetry.hpp"

namespace linkem::gui {

/// Adds x to s, centring an empty s on its first value: the sums then stay small when the
/// values are large and close together (10 s ± 1 µs in ns keeps its digits).
inline void addCentred(RunningStats& s, double x) {
    if (s.count == 0) s.shift = x;
    s.add(x);
}

}  // namespace linkem::gui
