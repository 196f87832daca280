#include "linkem/gilbert_elliott.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "linkem/link_params.hpp"

namespace linkem {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Six significant digits: enough for a probability or a burst, and bounds computed in
// floating point read as the figures they are (1.5, not 1.4999999999999998).
std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

void check_probability(double v, const char* field) {
    if (!std::isfinite(v) || v < 0 || v > 1)
        throw ParamError(field, num(v) + " is out of range; allowed 0 .. 1");
}

// The share q of packets in state bad for this average loss, and the constants of
// P(a loss followed by a pass) = a + s * b for a chain that moves at s = p + r (header).
struct Shape {
    double q, a, b;
};

Shape shape(double average_loss, double lg, double lb) {
    check_probability(lg, "ge_loss_good");
    check_probability(lb, "ge_loss_bad");
    if (!(lb > lg))
        throw ParamError("ge_loss_bad", num(lb) + " is not above ge_loss_good (" + num(lg) +
                                            "): the loss would not depend on the state, so no "
                                            "burst length can be set");
    if (!std::isfinite(average_loss) || average_loss < lg || average_loss >= lb)
        throw ParamError("average_loss", num(average_loss) + " is out of range; allowed " +
                                             num(lg) + " (ge_loss_good) .. below " + num(lb) +
                                             " (ge_loss_bad)");
    const double q = (average_loss - lg) / (lb - lg);
    return {q, (1 - q) * lg * (1 - lg) + q * lb * (1 - lb), q * (1 - q) * (lb - lg) * (lb - lg)};
}

}  // namespace

GeLossAndBurst ge_loss_and_burst(const GeChain& c) {
    check_probability(c.p, "ge_p");
    check_probability(c.r, "ge_r");
    check_probability(c.loss_good, "ge_loss_good");
    check_probability(c.loss_bad, "ge_loss_bad");
    // The share of packets in bad; a chain that does not move stays good (where it starts).
    const double q = c.p == 0 ? 0.0 : c.r == 0 ? 1.0 : c.p / (c.p + c.r);
    const double lg = c.loss_good, lb = c.loss_bad;
    GeLossAndBurst out;
    out.average_loss = (1 - q) * lg + q * lb;
    out.mean_bad_stay = c.r > 0 ? 1 / c.r : kInf;
    // A loss at one packet and a pass at the next: the chain moves after each packet.
    const double loss_then_pass = (1 - q) * lg * ((1 - c.p) * (1 - lg) + c.p * (1 - lb)) +
                                  q * lb * (c.r * (1 - lg) + (1 - c.r) * (1 - lb));
    if (out.average_loss == 0)
        out.mean_burst = 0;
    else
        out.mean_burst = loss_then_pass > 0 ? out.average_loss / loss_then_pass : kInf;
    return out;
}

GeBurstRange ge_mean_burst_range(double average_loss, double loss_good, double loss_bad) {
    const Shape sh = shape(average_loss, loss_good, loss_bad);
    GeBurstRange range;
    if (sh.q == 0) return range;  // no stay in bad: any burst (it sets r only)
    // s = p + r up to where p = q s or r = (1 - q) s reaches 1.
    const double s_max = std::min(1 / sh.q, 1 / (1 - sh.q));
    range.min = std::max(1.0, average_loss / (sh.a + s_max * sh.b));
    range.max = sh.a > 0 ? average_loss / sh.a : kInf;
    return range;
}

GeChain ge_from_loss_and_burst(double average_loss, double mean_burst, double loss_good,
                               double loss_bad) {
    const Shape sh = shape(average_loss, loss_good, loss_bad);
    const GeBurstRange range = ge_mean_burst_range(average_loss, loss_good, loss_bad);
    const std::string allowed =
        "allowed " + num(range.min) +
        (std::isinf(range.max) ? " packets or more" : " .. below " + num(range.max) + " packets");
    if (!std::isfinite(mean_burst) || mean_burst < 1)
        throw ParamError("mean_burst", num(mean_burst) +
                                           " is out of range; a burst is at least "
                                           "1 packet: " +
                                           allowed);
    GeChain c{0, 1, loss_good, loss_bad};
    if (sh.q == 0) {
        c.r = 1 / mean_burst;
        return c;
    }
    // Rounding may put a figure computed from the bounds a hair outside them.
    const double slack = 1e-12 * mean_burst;
    if (mean_burst < range.min - slack || mean_burst >= range.max)
        throw ParamError("mean_burst", num(mean_burst) +
                                           " packets is not possible with an "
                                           "average loss of " +
                                           num(average_loss) + " (ge_loss_good " + num(loss_good) +
                                           ", ge_loss_bad " + num(loss_bad) + "); " + allowed);
    const double s = (average_loss / mean_burst - sh.a) / sh.b;
    c.p = std::clamp(sh.q * s, 0.0, 1.0);
    c.r = std::clamp((1 - sh.q) * s, 0.0, 1.0);
    return c;
}

}  // namespace linkem
