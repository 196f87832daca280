#include "gilbert_elliott.hpp"

namespace linkem::gui {

GeFigures geFigures(double p, double r, double loss_good, double loss_bad) {
    GeFigures f;
    const double bad = p + r > 0 ? p / (p + r) : 0.0;
    f.average_loss = (1 - bad) * loss_good + bad * loss_bad;
    f.mean_burst = r > 0 ? 1 / r : 0.0;
    return f;
}

std::optional<GeTransitions> geTransitions(double average_loss, double mean_burst, double loss_good,
                                           double loss_bad) {
    if (!(mean_burst >= 1) || !(loss_bad > loss_good)) return std::nullopt;
    const double bad = (average_loss - loss_good) / (loss_bad - loss_good);
    if (!(bad >= 0) || !(bad < 1)) return std::nullopt;
    GeTransitions t;
    t.r = 1 / mean_burst;
    t.p = t.r * bad / (1 - bad);
    if (t.p > 1) return std::nullopt;
    return t;
}

}  // namespace linkem::gui
