// Reference implementations of the bottleneck's queue disciplines (droptail, CoDel, FQ-CoDel,
// PIE) and of the link that serves them: the oracle that linkem::Bottleneck is compared with
// packet by packet. Written from the RFCs' pseudocode (RFC 8289 section 5, RFC 8290, RFC 8033)
// with the choices linkem's bottleneck makes where they leave one (the service loop, the order
// of events at equal times, the limit rule, ECN, PIE's timestamp delay), and nothing else: plain
// std::deque queues, the RFCs' variable names and control flow, clarity over speed. Not used by
// linkem itself.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <list>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "linkem/rng.hpp"
#include "linkem/time.hpp"

namespace linkem::test {

enum class AqmKind { droptail, codel, fq_codel, pie };

/// The discipline and its parameters (the field names of linkem::QueueConfig).
struct AqmConfig {
    AqmKind kind = AqmKind::droptail;
    std::uint64_t limit_bytes = 0;    // the limit in bytes, when limit_packets is 0
    std::uint32_t limit_packets = 0;  // > 0: the limit in packets
    DurationNs codel_target = 5 * kNsPerMs;
    DurationNs codel_interval = 100 * kNsPerMs;
    std::uint32_t fq_flows = 1024;
    std::uint32_t fq_quantum = 1514;
    DurationNs pie_target = 15 * kNsPerMs;
    DurationNs pie_tupdate = 15 * kNsPerMs;
    DurationNs pie_max_burst = 150 * kNsPerMs;
    bool ecn = false;
};

/// One packet offered to the bottleneck; enq is non-decreasing across a scenario.
struct AqmArrival {
    TimeNs enq = 0;
    std::uint32_t bytes = 0;
    std::uint32_t flow = 0;  // 0 .. fq_flows-1 (fq_codel only)
    bool ect = false;        // ECN-capable (ECT(0), ECT(1) or CE)
};

enum class AqmFate { sent, dropped_aqm, dropped_full };

/// What became of one packet: sent at `at` (its dequeue time tau, CE-marked or not), dropped
/// by the AQM at `at` (tau for CoDel's and FQ-CoDel's drops at dequeue, the arrival time for
/// PIE's early drop), or dropped because the queue was full at `at` (the time of the arrival
/// that overfilled it: the packet's own enq, except for FQ-CoDel's drops from the fattest flow).
struct AqmOutcome {
    AqmFate kind = AqmFate::sent;
    TimeNs at = 0;
    bool marked = false;
    bool operator==(const AqmOutcome&) const = default;
};

inline const char* fate_name(AqmFate f) {
    switch (f) {
        case AqmFate::sent:
            return "sent";
        case AqmFate::dropped_aqm:
            return "dropped_aqm";
        case AqmFate::dropped_full:
            return "dropped_full";
    }
    return "?";
}

inline std::string to_string(const AqmOutcome& o) {
    return std::string(fate_name(o.kind)) + " at " + std::to_string(o.at) +
           (o.marked ? " marked" : "");
}

inline std::ostream& operator<<(std::ostream& os, const AqmOutcome& o) {
    return os << to_string(o);
}

namespace aqm_ref {

/// A packet in a queue: its index in the scenario and what the disciplines look at.
struct Packet {
    std::size_t index = 0;
    TimeNs tstamp = 0;  // enqueue time
    std::uint32_t bytes = 0;
    bool ect = false;
    bool marked = false;
};

/// A FIFO with its byte count.
struct Queue {
    std::deque<Packet> packets;
    std::uint64_t byte_length = 0;

    bool empty() const { return packets.empty(); }
    std::size_t length() const { return packets.size(); }
    void enqueue(const Packet& p) {
        packets.push_back(p);
        byte_length += p.bytes;
    }
    std::optional<Packet> dequeue() {
        if (packets.empty()) return std::nullopt;
        Packet p = packets.front();
        packets.pop_front();
        byte_length -= p.bytes;
        return p;
    }
};

/// Whether `packets`/`bytes` in the queue are over the configured limit.
inline bool over_limit(const AqmConfig& c, std::size_t packets, std::uint64_t bytes) {
    if (c.limit_packets > 0) return packets > c.limit_packets;
    return bytes > c.limit_bytes;
}

/// Where the disciplines record drops.
struct Outcomes {
    std::vector<AqmOutcome>& out;
    std::vector<bool>& done;
    void drop(const Packet& p, AqmFate why, TimeNs at) {
        out[p.index] = AqmOutcome{why, at, false};
        done[p.index] = true;
    }
};

// ---- CoDel: RFC 8289 section 5 ----------------------------------------------------------

constexpr std::uint32_t MAXPACKET = 1518;

struct CoDel {
    DurationNs TARGET = 5 * kNsPerMs;
    DurationNs INTERVAL = 100 * kNsPerMs;
    bool ecn = false;

    std::optional<TimeNs> first_above_time_;  // nullopt: the RFC's 0 ("unset")
    TimeNs drop_next_ = 0;
    std::uint32_t count_ = 0;
    std::uint32_t lastcount_ = 0;
    bool dropping_ = false;

    struct dodequeue_result {
        std::optional<Packet> p;
        bool ok_to_drop;
    };

    TimeNs control_law(TimeNs t, std::uint32_t count) const {
        return t + static_cast<TimeNs>(static_cast<double>(INTERVAL) /
                                       std::sqrt(static_cast<double>(count)));
    }

    dodequeue_result dodequeue(Queue& queue_, TimeNs now) {
        dodequeue_result r{queue_.dequeue(), false};
        if (!r.p) {
            // queue is empty - we can't be above TARGET
            first_above_time_.reset();
            return r;
        }
        // To span a large range of bandwidths, CoDel runs two different AQMs in parallel. One
        // is based on sojourn time and takes effect when the time to send an MTU-sized packet
        // is less than TARGET. The 1st term of the "if" below does this. The other is based on
        // backlog and takes effect when the time to send an MTU-sized packet is >= TARGET. The
        // goal here is to keep the output link utilization high by never allowing the queue
        // to get smaller than the amount that arrives in a typical interarrival time (MTU-sized
        // packets arriving spaced by the amount of time it takes to send such a packet on the
        // bottleneck). The 2nd term of the "if" does this.
        const DurationNs sojourn_time = now - r.p->tstamp;
        if (sojourn_time < TARGET || queue_.byte_length <= MAXPACKET) {
            // went below - stay below for at least INTERVAL
            first_above_time_.reset();
        } else {
            if (!first_above_time_) {
                // just went above from below. if still above at first_above_time, will say
                // it's ok to drop.
                first_above_time_ = now + INTERVAL;
            } else if (now >= *first_above_time_) {
                r.ok_to_drop = true;
            }
        }
        return r;
    }

    /// RFC 8289's dequeue, with Linux's ECN: an ECN-capable packet that would be dropped is
    /// marked CE and returned at once.
    std::optional<Packet> dequeue(Queue& queue_, TimeNs now, Outcomes& out) {
        dodequeue_result r = dodequeue(queue_, now);
        std::uint32_t delta;

        if (dropping_) {
            if (!r.ok_to_drop) {
                // sojourn time below TARGET - leave drop state
                dropping_ = false;
            }
            // Time for the next drop. Drop current packet and dequeue next. If the dequeue
            // doesn't take us out of dropping state, schedule the next drop. A large backlog
            // might result in drop rates so high that the next drop should happen now, hence
            // the 'while' loop.
            while (now >= drop_next_ && dropping_) {
                if (ecn && r.p->ect) {
                    r.p->marked = true;
                    ++count_;
                    drop_next_ = control_law(drop_next_, count_);
                    return r.p;
                }
                out.drop(*r.p, AqmFate::dropped_aqm, now);
                ++count_;
                r = dodequeue(queue_, now);
                if (!r.ok_to_drop) {
                    // leave drop state
                    dropping_ = false;
                } else {
                    // schedule the next drop.
                    drop_next_ = control_law(drop_next_, count_);
                }
            }
            // If we get here, we're not in drop state. The 'ok_to_drop' return from dodequeue
            // means that the sojourn time has been above 'TARGET' for 'INTERVAL', so enter drop
            // state.
        } else if (r.ok_to_drop) {
            if (ecn && r.p->ect) {
                r.p->marked = true;
            } else {
                out.drop(*r.p, AqmFate::dropped_aqm, now);
                r = dodequeue(queue_, now);
            }
            dropping_ = true;

            // If min went above TARGET close to when it last went below, assume that the drop
            // rate that controlled the queue on the last cycle is a good starting point to
            // control it now. ('drop_next' will be at most 'INTERVAL' later than the time of
            // the last drop, so 'now - drop_next' is a good approximation of the time from the
            // last drop until now.)
            delta = count_ - lastcount_;
            count_ = 1;
            if ((delta > 1) && (now - drop_next_ < 16 * INTERVAL)) count_ = delta;

            drop_next_ = control_law(now, count_);
            lastcount_ = count_;
        }
        return r.p;
    }
};

// ---- the disciplines ---------------------------------------------------------------------

struct DropTail {
    AqmConfig c;
    Queue queue_;

    bool empty() const { return queue_.empty(); }
    void enqueue(const Packet& p, TimeNs now, Outcomes& out) {
        if (over_limit(c, queue_.length() + 1, queue_.byte_length + p.bytes)) {
            out.drop(p, AqmFate::dropped_full, now);
            return;
        }
        queue_.enqueue(p);
    }
    std::optional<Packet> dequeue(TimeNs, Outcomes&) { return queue_.dequeue(); }
};

struct CoDelQueue {
    AqmConfig c;
    Queue queue_;
    CoDel codel;

    explicit CoDelQueue(const AqmConfig& config) : c(config) {
        codel.TARGET = c.codel_target;
        codel.INTERVAL = c.codel_interval;
        codel.ecn = c.ecn;
    }
    bool empty() const { return queue_.empty(); }
    void enqueue(const Packet& p, TimeNs now, Outcomes& out) {
        if (over_limit(c, queue_.length() + 1, queue_.byte_length + p.bytes)) {
            out.drop(p, AqmFate::dropped_full, now);
            return;
        }
        queue_.enqueue(p);
    }
    std::optional<Packet> dequeue(TimeNs now, Outcomes& out) {
        return codel.dequeue(queue_, now, out);
    }
};

/// RFC 8290: deficit round robin over per-flow CoDel queues, with new and old lists.
struct FqCoDel {
    enum class List { none, new_flows, old_flows };
    struct Flow {
        Queue queue_;
        CoDel cvars;
        std::int64_t deficit = 0;
        List list = List::none;
    };

    AqmConfig c;
    std::vector<Flow> flows;
    std::list<std::uint32_t> new_flows;
    std::list<std::uint32_t> old_flows;
    std::size_t total_packets = 0;
    std::uint64_t total_bytes = 0;

    explicit FqCoDel(const AqmConfig& config) : c(config), flows(config.fq_flows) {
        for (Flow& f : flows) {
            f.cvars.TARGET = c.codel_target;
            f.cvars.INTERVAL = c.codel_interval;
            f.cvars.ecn = c.ecn;
        }
    }
    bool empty() const { return total_packets == 0; }

    void enqueue(const Packet& p, std::uint32_t flow, TimeNs now, Outcomes& out) {
        Flow& f = flows.at(flow);
        f.queue_.enqueue(p);
        ++total_packets;
        total_bytes += p.bytes;
        if (f.list == List::none) {
            new_flows.push_back(flow);
            f.list = List::new_flows;
            f.deficit = c.fq_quantum;
        }
        while (over_limit(c, total_packets, total_bytes)) {
            // From the head of the flow with the largest byte backlog (ties: the lowest
            // index), a batch: packets until half of its bytes are gone, at most 64 (RFC 8290
            // section 4.1; Linux's fq_codel_drop and ns-3's FqCoDelQueueDisc with their
            // default drop batch size).
            std::uint32_t fat = 0;
            for (std::uint32_t i = 1; i < flows.size(); ++i)
                if (flows[i].queue_.byte_length > flows[fat].queue_.byte_length) fat = i;
            const std::uint64_t backlog = flows[fat].queue_.byte_length;
            std::uint64_t dropped_bytes = 0;
            for (int n = 0; n < 64; ++n) {
                if (n > 0 && 2 * dropped_bytes >= backlog - backlog % 2) break;
                std::optional<Packet> victim = flows[fat].queue_.dequeue();
                if (!victim)
                    throw std::logic_error("fq_codel: over the limit with no bytes queued");
                --total_packets;
                total_bytes -= victim->bytes;
                dropped_bytes += victim->bytes;
                out.drop(*victim, AqmFate::dropped_full, now);
            }
        }
    }

    void move_to_tail_of_old(std::uint32_t flow) {
        Flow& f = flows[flow];
        if (f.list == List::new_flows)
            new_flows.remove(flow);
        else
            old_flows.remove(flow);
        old_flows.push_back(flow);
        f.list = List::old_flows;
    }

    std::optional<Packet> dequeue(TimeNs now, Outcomes& out) {
        for (;;) {
            std::uint32_t flow;
            if (!new_flows.empty())
                flow = new_flows.front();
            else if (!old_flows.empty())
                flow = old_flows.front();
            else
                return std::nullopt;
            Flow& f = flows[flow];

            if (f.deficit <= 0) {
                f.deficit += c.fq_quantum;
                move_to_tail_of_old(flow);
                continue;
            }

            const std::size_t packets_before = f.queue_.length();
            const std::uint64_t bytes_before = f.queue_.byte_length;
            std::optional<Packet> p = f.cvars.dequeue(f.queue_, now, out);
            total_packets -= packets_before - f.queue_.length();
            total_bytes -= bytes_before - f.queue_.byte_length;

            if (!p) {
                if (f.list == List::new_flows && !old_flows.empty()) {
                    move_to_tail_of_old(flow);
                } else {
                    if (f.list == List::new_flows)
                        new_flows.remove(flow);
                    else
                        old_flows.remove(flow);
                    f.list = List::none;
                }
                continue;
            }
            f.deficit -= p->bytes;
            return p;
        }
    }
};

/// RFC 8033 PIE with the queueing delay from timestamps (the sojourn of the last dequeued
/// packet), no departure rate estimation and no scaling by packet size.
struct Pie {
    static constexpr double alpha = 0.125;
    static constexpr double beta = 1.25;
    static constexpr std::uint64_t MEAN_PKTSIZE = 1518;

    AqmConfig c;
    Queue queue_;
    Rng& rng;
    double QDELAY_REF;  // seconds
    DurationNs T_UPDATE;
    DurationNs MAX_BURST;

    double drop_prob_ = 0;
    double qdelay_old_ = 0;  // seconds
    DurationNs burst_allowance_;
    double accu_prob_ = 0;
    DurationNs last_qdelay_ = 0;  // the sojourn of the last dequeued packet

    std::optional<TimeNs> next_update;  // set by the first packet enqueued

    Pie(const AqmConfig& config, Rng& r)
        : c(config),
          rng(r),
          QDELAY_REF(static_cast<double>(config.pie_target) / 1e9),
          T_UPDATE(config.pie_tupdate),
          MAX_BURST(config.pie_max_burst),
          burst_allowance_(config.pie_max_burst) {}

    bool empty() const { return queue_.empty(); }

    /// Applies the updates due at times <= t.
    void update_until(TimeNs t) {
        while (next_update && *next_update <= t) {
            calculate_drop_prob();
            *next_update += T_UPDATE;
        }
    }

    void calculate_drop_prob() {
        const double current_qdelay =
            queue_.empty() ? 0.0 : static_cast<double>(last_qdelay_) / 1e9;
        double p = alpha * (current_qdelay - QDELAY_REF) + beta * (current_qdelay - qdelay_old_);
        if (drop_prob_ < 0.000001) {
            p /= 2048;
        } else if (drop_prob_ < 0.00001) {
            p /= 512;
        } else if (drop_prob_ < 0.0001) {
            p /= 128;
        } else if (drop_prob_ < 0.001) {
            p /= 32;
        } else if (drop_prob_ < 0.01) {
            p /= 8;
        } else if (drop_prob_ < 0.1) {
            p /= 2;
        }
        // Cap the drop probability increase
        if (drop_prob_ >= 0.1 && p > 0.02) p = 0.02;
        drop_prob_ += p;

        // for non-linear drop in prob
        if (current_qdelay == 0 && qdelay_old_ == 0) drop_prob_ *= 0.98;
        if (drop_prob_ < 0) drop_prob_ = 0;
        if (drop_prob_ > 1) drop_prob_ = 1;

        burst_allowance_ = std::max<DurationNs>(0, burst_allowance_ - T_UPDATE);
        if (drop_prob_ == 0 && current_qdelay < QDELAY_REF / 2 && qdelay_old_ < QDELAY_REF / 2)
            burst_allowance_ = MAX_BURST;
        qdelay_old_ = current_qdelay;
    }

    enum Decision { ENQUE, DROP };

    Decision drop_early() {
        // Safeguard PIE to be work conserving
        if ((qdelay_old_ < QDELAY_REF / 2 && drop_prob_ < 0.2) ||
            (queue_.byte_length <= 2 * MEAN_PKTSIZE))
            return ENQUE;
        if (drop_prob_ == 0) accu_prob_ = 0;
        // For practical reasons, drop probability can be further scaled according to packet
        // size, but one needs to set a bound to avoid unnecessary bias: not done here.
        accu_prob_ += drop_prob_;
        if (accu_prob_ < 0.85) return ENQUE;
        if (accu_prob_ >= 8.5) return DROP;
        const double u = rng.uniform();
        if (u < drop_prob_) {
            accu_prob_ = 0;
            return DROP;
        }
        return ENQUE;
    }

    void enqueue(Packet p, TimeNs now, Outcomes& out) {
        if (over_limit(c, queue_.length() + 1, queue_.byte_length + p.bytes)) {
            out.drop(p, AqmFate::dropped_full, now);
            return;
        }
        if (burst_allowance_ == 0 && drop_early() == DROP) {
            if (c.ecn && p.ect && drop_prob_ <= 0.1) {
                p.marked = true;
            } else {
                out.drop(p, AqmFate::dropped_aqm, now);
                return;
            }
        }
        queue_.enqueue(p);
        if (!next_update) next_update = now + T_UPDATE;
    }

    std::optional<Packet> dequeue(TimeNs now, Outcomes&) {
        std::optional<Packet> p = queue_.dequeue();
        if (p) last_qdelay_ = now - p->tstamp;
        return p;
    }
};

/// The link of rate R behind one discipline, driven by the arrivals' times.
template <class Discipline>
struct Link {
    Discipline& q;
    double R;
    Outcomes& out;
    TimeNs ready = std::numeric_limits<TimeNs>::min();
    double F = 0;  // the link's free time, ns

    // PIE's updates before each event at time >= their own; the other disciplines have none.
    void updates_until(TimeNs t) {
        if constexpr (requires { q.update_until(t); }) q.update_until(t);
    }

    /// One dequeue event at tau = ready (the queue is non-empty).
    void dequeue_event() {
        const TimeNs tau = ready;
        updates_until(tau);
        std::optional<Packet> p = q.dequeue(tau, out);
        if (!p) return;  // it dropped everything: the queue is empty
        out.out[p->index] = AqmOutcome{AqmFate::sent, tau, p->marked};
        out.done[p->index] = true;
        F = static_cast<double>(tau) + static_cast<double>(p->bytes) * (8e9 / R);
        ready = static_cast<TimeNs>(std::ceil(F));
    }
    /// The dequeue events at tau <= t (an arrival at t comes after them).
    void serve_before(TimeNs t) {
        while (!q.empty() && ready <= t)
            dequeue_event();
    }
    /// Every dequeue event until the queue is empty.
    void serve_all() {
        while (!q.empty())
            dequeue_event();
    }
};

}  // namespace aqm_ref

/// Runs the arrivals through the discipline `config` in front of a link of `rate_bps` bit/s
/// until every packet is sent or dropped, and returns one outcome per arrival. `seed` seeds
/// the linkem::Rng of PIE's drop_early (the only random draw).
inline std::vector<AqmOutcome> simulate(const AqmConfig& config, double rate_bps,
                                        const std::vector<AqmArrival>& arrivals,
                                        std::uint64_t seed) {
    using namespace aqm_ref;
    if (!(rate_bps > 0)) throw std::invalid_argument("simulate: rate_bps must be > 0");
    std::vector<AqmOutcome> result(arrivals.size());
    std::vector<bool> done(arrivals.size(), false);
    Outcomes out{result, done};
    Rng rng(seed);

    auto run = [&](auto& q, auto&& enqueue) {
        Link<std::remove_reference_t<decltype(q)>> link{q, rate_bps, out};
        for (std::size_t i = 0; i < arrivals.size(); ++i) {
            const AqmArrival& a = arrivals[i];
            if (i > 0 && a.enq < arrivals[i - 1].enq)
                throw std::invalid_argument("simulate: enq times must be non-decreasing");
            // dequeue events with tau < enq come first, then PIE's updates at u <= enq
            link.serve_before(a.enq);
            link.updates_until(a.enq);
            if (q.empty()) link.ready = std::max(link.ready, a.enq);
            enqueue(q, Packet{i, a.enq, a.bytes, a.ect, false}, a);
        }
        link.serve_all();
    };

    switch (config.kind) {
        case AqmKind::droptail: {
            DropTail q{config, {}};
            run(q, [&](DropTail& d, const Packet& p, const AqmArrival& a) {
                d.enqueue(p, a.enq, out);
            });
            break;
        }
        case AqmKind::codel: {
            CoDelQueue q(config);
            run(q, [&](CoDelQueue& d, const Packet& p, const AqmArrival& a) {
                d.enqueue(p, a.enq, out);
            });
            break;
        }
        case AqmKind::fq_codel: {
            if (config.fq_flows == 0) throw std::invalid_argument("simulate: fq_flows must be > 0");
            FqCoDel q(config);
            run(q, [&](FqCoDel& d, const Packet& p, const AqmArrival& a) {
                if (a.flow >= config.fq_flows)
                    throw std::invalid_argument("simulate: flow must be < fq_flows");
                d.enqueue(p, a.flow, a.enq, out);
            });
            break;
        }
        case AqmKind::pie: {
            Pie q(config, rng);
            run(q, [&](Pie& d, const Packet& p, const AqmArrival& a) { d.enqueue(p, a.enq, out); });
            break;
        }
    }
    for (std::size_t i = 0; i < done.size(); ++i)
        if (!done[i]) throw std::logic_error("simulate: a packet has no outcome");
    return result;
}

}  // namespace linkem::test
