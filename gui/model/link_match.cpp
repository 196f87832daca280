#include "link_match.hpp"

#include <cstdio>

namespace linkem::gui {

bool sameLink(const LinkConfig& a, const LinkConfig& b, unsigned directions) {
    LinkParams x = a.a_to_b, y = b.a_to_b;
    x.seed = y.seed = 0;
    if (!(x == y)) return false;
    if (directions < 2) return true;
    x = a.b_to_a;
    y = b.b_to_a;
    x.seed = y.seed = 0;
    return x == y;
}

int matchingPreset(const std::vector<Preset>& presets, const LinkConfig& link,
                   unsigned directions) {
    for (std::size_t i = 0; i < presets.size(); ++i)
        if (sameLink(presets[i].link, link, directions)) return static_cast<int>(i);
    return -1;
}

proto::LinkUpdate compareStrategiesUpdate(const LinkParams& a_to_b, const std::string& strategy_a,
                                          const std::string& strategy_b) {
    LinkConfig both{a_to_b, a_to_b};
    proto::LinkUpdate u = proto::LinkUpdate::whole(both, 2, false);  // the streams go on
    u.set(0, "strategy", strategy_a);
    u.set(1, "strategy", strategy_b);
    return u;
}

proto::LinkUpdate bufferbloatUpdate(const LinkParams& a_to_b) {
    LinkParams p = a_to_b;
    p.limiter = Limiter::spacer;
    p.rate_bps = kBufferbloatRateBps;
    p.queue_limit_bytes = kBufferbloatLimitBytes;
    p.queue_limit_packets = 0;
    p.mean_delay = kBufferbloatDelay;
    p.jitter = 0;
    p.loss_model = LossModel::none;
    p.ecn = Ecn::off;
    LinkParams fq = p;
    p.queue = QueueKind::droptail;
    fq.queue = QueueKind::fq_codel;
    fq.codel_target = LinkParams{}.codel_target;
    fq.codel_interval = LinkParams{}.codel_interval;
    fq.fq_flows = LinkParams{}.fq_flows;
    fq.fq_quantum_bytes = LinkParams{}.fq_quantum_bytes;
    // every key named: the link is read as it is (a discipline's keys with another in force)
    return proto::LinkUpdate::whole(LinkConfig{p, fq}, 2, false);
}

std::string queueExpectation(const LinkParams& p) {
    if (p.limiter != Limiter::spacer && p.limiter != Limiter::trace) return {};
    char buf[160];
    const auto ms = [](DurationNs d) { return static_cast<double>(d) / 1e6; };
    switch (p.queue) {
        case QueueKind::droptail: {
            if (p.limiter != Limiter::spacer || p.rate_bps <= 0 || p.queue_limit_packets > 0)
                return "drop-tail: the sojourn grows until the queue is full";
            const double s = static_cast<double>(p.queue_limit_bytes) * 8 / p.rate_bps;
            std::snprintf(buf, sizeof buf,
                          "drop-tail: the sojourn grows to limit / rate = %.3g MiB × 8 / %.3g "
                          "Mbit/s = %.2f s",
                          static_cast<double>(p.queue_limit_bytes) / 1048576.0, p.rate_bps / 1e6,
                          s);
            return buf;
        }
        case QueueKind::codel:
            std::snprintf(buf, sizeof buf,
                          "CoDel: near its %.3g ms target for flows that back off (RFC 8289); a "
                          "constant-rate overload cycles",
                          ms(p.codel_target));
            return buf;
        case QueueKind::fq_codel:
            std::snprintf(buf, sizeof buf,
                          "FQ-CoDel: near its %.3g ms target for flows that back off (RFC 8290); "
                          "a constant-rate overload cycles",
                          ms(p.codel_target));
            return buf;
        case QueueKind::pie:
            std::snprintf(buf, sizeof buf,
                          "PIE: the queueing delay near its %.3g ms target (RFC 8033)",
                          ms(p.pie_target));
            return buf;
    }
    return {};
}

}  // namespace linkem::gui
