// The bottleneck's queue: a real queue in front of the rate limiter's link, served by a
// queue discipline (docs/queues.md): droptail, CoDel (RFC 8289), FQ-CoDel (RFC 8290) or PIE
// (RFC 8033), with ECN marking instead of dropping where the packet allows it.
//
// The spacer and the trace link compute a packet's departure when it arrives, which a
// drop-tail queue allows (its order and drops follow from the arrivals alone). An active
// queue decides at dequeue time, from the packet's sojourn time and from what else is
// queued then, so the Bottleneck keeps the packets and runs the link's dequeue events in
// time order: before an arrival at t every dequeue before t (arrive()), and on demand every
// dequeue up to a time (serve()). It never reads a clock; the same arrivals give the same
// departures whenever serve() is called, which makes the data plane's results equal the
// simulator's and the tests' reference implementations' (tests/support/aqm_reference.hpp).
//
// Item is the caller's packet handle; a Sink receives what happens to each:
//   sink.sent(item, tau, tx, marked)   dequeued at tau, leaves the link at tx (tau for a
//                                      rate; the trace's opportunity of its last byte)
//   sink.dropped(item, at, cause)      DropCause::spacer (the queue limit), DropCause::aqm
//   sink.mark(item) -> bool            sets CE if the packet is ECN-capable (ECT or CE)
// The exact semantics, event order and the choices the RFCs leave are in docs/queues.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "linkem/counters.hpp"
#include "linkem/limiter.hpp"
#include "linkem/rng.hpp"
#include "linkem/time.hpp"

namespace linkem {

enum class QueueKind : std::uint8_t { droptail, codel, fq_codel, pie };

/// A queue discipline and its parameters (LinkParams' queue fields).
struct QueueConfig {
    QueueKind kind = QueueKind::droptail;
    std::uint64_t limit_bytes = 1'048'576;
    std::uint64_t limit_packets = 0;  // > 0: the limit is in packets, not bytes
    DurationNs codel_target = 5 * kNsPerMs;
    DurationNs codel_interval = 100 * kNsPerMs;
    std::uint32_t fq_flows = 1024;
    std::uint32_t fq_quantum = 1514;
    DurationNs pie_target = 15 * kNsPerMs;
    DurationNs pie_tupdate = 15 * kNsPerMs;
    DurationNs pie_max_burst = 150 * kNsPerMs;
    bool ecn = false;
    bool operator==(const QueueConfig&) const = default;
};

/// Queue statistics the telemetry reports: what is queued now, and the sojourn times of the
/// packets dequeued since the last take.
struct QueueSojourn {
    std::uint64_t count = 0;
    double sum_ns = 0;
    DurationNs max_ns = 0;
};

/// a % d for a fixed divisor d > 0 without a division: two multiplications (Lemire, Kaser and
/// Kurz, "Faster Remainder by Direct Computation", 2019), exact for every 32-bit a and d.
class Remainder32 {
  public:
    explicit Remainder32(std::uint32_t d) : d_(d), m_(~std::uint64_t{0} / d + 1) {}
    std::uint32_t operator()(std::uint32_t a) const {
        const std::uint64_t low = m_ * a;
        return static_cast<std::uint32_t>((static_cast<unsigned __int128>(low) * d_) >> 64);
    }

  private:
    std::uint64_t d_, m_;
};

template <class Item>
class Bottleneck {
  public:
    /// CoDel's MAXPACKET and PIE's MEAN_PKTSIZE: a full Ethernet frame as linkem counts it.
    static constexpr std::uint32_t kMaxPacket = 1518;
    /// FQ-CoDel over its limit drops from the head of the flow with the most bytes queued
    /// until half of them are gone, at most this many packets at once (RFC 8290 section 4.1;
    /// Linux's drop_batch_size): one search of the flows serves many arrivals.
    static constexpr std::uint32_t kFqDropBatch = 64;

    /// A packet's flow hash (what arrive() is given for fq_codel): configure() asks it for the
    /// packets queued under another discipline, which arrived without one.
    using HashFn = std::uint32_t (*)(const Item&);

    /// The link of a rate: a packet dequeued at tau occupies it bytes*8/rate.
    void configure(const QueueConfig& c, double rate_bps, HashFn hash = nullptr) {
        configure(c, rate_bps, nullptr, hash);
    }
    /// The link of a delivery trace (TraceLink's accounting).
    void configure(const QueueConfig& c, const DeliveryTrace* trace, HashFn hash = nullptr) {
        configure(c, 0, trace, hash);
    }

    void seed(std::uint64_t s) { rng_.reseed(s); }
    /// Room for n queued packets and up to `flows` fq_codel flows, so that neither arrive()
    /// nor configure() reallocates below them.
    void reserve(std::size_t n, std::size_t flows) {
        nodes_.reserve(n);
        flows_.reserve(flows);
        flow_bytes_.reserve(flows);
    }

    std::size_t packets() const { return packets_; }
    std::uint64_t bytes() const { return bytes_; }
    bool empty() const { return packets_ == 0; }
    const QueueConfig& config() const { return cfg_; }

    /// When the next dequeue happens (the queue holds packets), or nothing.
    std::optional<TimeNs> next_service() {
        if (packets_ == 0) return std::nullopt;
        return service_time();
    }

    /// What became of an arriving packet: queued, or dropped (`cause`: DropCause::spacer at
    /// the limit, DropCause::aqm by PIE's early drop). The sink hears of other packets'
    /// drops only, not of the arriving one's.
    struct Admission {
        bool queued;
        DropCause cause;
    };

    /// A packet reaches the queue at enq (not before the previous arrival): first every
    /// dequeue at or before enq, then the arrival (the limit; PIE's early drop). (So a
    /// caller may drain up to a time before or after it hands over the arrivals at that
    /// time: the result is the same.)
    template <class Sink>
    Admission arrive(TimeNs enq, const Item& item, std::uint32_t bytes, std::uint32_t flow_hash,
                     Sink& sink) {
        serve_events(enq, sink);
        pie_updates(enq);
        if (cfg_.kind != QueueKind::fq_codel && over_limit(bytes, 1))
            return {false, DropCause::spacer};
        bool marked = false;
        if (cfg_.kind == QueueKind::pie) {
            const PieVerdict v = pie_drop_early(item, sink);
            if (v == PieVerdict::drop) return {false, DropCause::aqm};
            marked = v == PieVerdict::mark;
        }
        if (packets_ == 0) ready_ = std::max(ready_, enq);
        const std::uint32_t f = flow_of(flow_hash);
        // The node is written in its slot (a Node built aside and copied in cost a third of
        // the queue's time per packet with the Emulator's packet as the item).
        const std::uint32_t at = alloc();
        Node& node = nodes_[at];
        node.item = item;
        node.enq = enq;
        node.bytes = bytes;
        node.hash = flow_hash;
        node.marked = marked;
        append(f, at);
        if (cfg_.kind == QueueKind::pie && !pie_.started) {
            pie_.started = true;
            pie_.next_update = enq + cfg_.pie_tupdate;
        }
        if (cfg_.kind == QueueKind::fq_codel) {
            Flow& fl = flows_[f];
            if (fl.list == kNoList) {
                fl.deficit = cfg_.fq_quantum;
                list_push(kNew, f);
            }
            bool self = false;
            while (over_limit(0, 0))
                self = drop_from_fattest(enq, at, sink) || self;
            if (self) return {false, DropCause::spacer};
        }
        return {true, DropCause::spacer};
    }

    /// Every dequeue at or before `until`.
    template <class Sink>
    void serve(TimeNs until, Sink& sink) {
        serve_events(until, sink);
    }

    /// The sojourn times of the packets dequeued since the last call.
    QueueSojourn take_sojourn() {
        const QueueSojourn s = sojourn_;
        sojourn_ = {};
        return s;
    }

    /// Takes every queued packet out (in the order they arrived, by enqueue time), e.g.
    /// to hand them to a limiter without a queue; calls f(item, enq, bytes).
    template <class F>
    void take_all(F&& f) {
        std::vector<Node> held;
        take_nodes(held);
        for (const Node& n : held)
            f(n.item, n.enq, n.bytes);
    }

    /// The link's state, to carry the rate over when the limiter changes: the time the link
    /// is free again (ns, fractional).
    double link_free() const { return free_at_; }
    void set_link_free(double t) {
        free_at_ = t;
        ready_ = std::max(ready_, ceil_ns(t));
    }

  private:
    static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
    static constexpr TimeNs kUnset = std::numeric_limits<TimeNs>::min();
    static constexpr std::uint8_t kNew = 0, kOld = 1, kNoList = 2;

    struct Node {
        Item item;
        TimeNs enq;
        std::uint32_t bytes;
        std::uint32_t next;
        std::uint32_t hash;  // fq_codel: the flow hash given on arrival
        bool marked;         // PIE marked it CE on arrival
    };

    std::uint32_t flow_of(std::uint32_t hash) const {
        return cfg_.kind == QueueKind::fq_codel ? flow_mod_(hash) : 0;
    }

    // Takes every queued packet out into `out`, in the order they arrived.
    void take_nodes(std::vector<Node>& out) {
        std::vector<std::uint32_t> order;
        order.reserve(packets_);
        for (Flow& fl : flows_)
            for (std::uint32_t i = fl.head; i != kNone; i = nodes_[i].next)
                order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) {
            return nodes_[a].enq < nodes_[b].enq;
        });
        for (std::uint32_t i : order)
            out.push_back(nodes_[i]);
        nodes_.clear();
        free_ = kNone;
        for (Flow& fl : flows_)
            fl = Flow{};
        std::fill(flow_bytes_.begin(), flow_bytes_.end(), 0);
        lists_[0] = lists_[1] = ListEnds{};
        packets_ = 0;
        bytes_ = 0;
    }
    struct Codel {
        TimeNs first_above = kUnset;
        TimeNs drop_next = 0;
        std::uint32_t count = 0, lastcount = 0;
        bool dropping = false;
    };
    // A flow's bytes queued are in flow_bytes_ (dense: the search for the fattest reads
    // them alone).
    struct Flow {
        std::uint32_t head = kNone, tail = kNone;
        std::int64_t deficit = 0;
        std::uint32_t next_flow = kNone;  // in its list
        std::uint8_t list = kNoList;
        Codel codel;
    };
    struct ListEnds {
        std::uint32_t head = kNone, tail = kNone;
    };

    void configure(const QueueConfig& c, double rate_bps, const DeliveryTrace* trace, HashFn hash) {
        ns_per_byte_ = rate_bps > 0 ? 8e9 / rate_bps : 0;
        trace_link_.configure(trace);
        trace_ = trace ? &trace_link_ : nullptr;
        const bool restart = !configured_ || c.kind != cfg_.kind ||
                             (c.kind == QueueKind::fq_codel && c.fq_flows != cfg_.fq_flows);
        if (!restart) {
            cfg_ = c;
            return;
        }
        // Another discipline: the queued packets stay, in arrival order, under the new one.
        // Into fq_codel from one without flows, their flows are found now (they arrived
        // without a hash), so that each flow's packets share its queue and keep their order.
        std::vector<Node> held;
        held.reserve(packets_);
        if (configured_) take_nodes(held);
        if (c.kind == QueueKind::fq_codel && cfg_.kind != QueueKind::fq_codel && hash)
            for (Node& n : held)
                n.hash = hash(n.item);
        cfg_ = c;
        configured_ = true;
        flows_.assign(c.kind == QueueKind::fq_codel ? std::max<std::uint32_t>(c.fq_flows, 1) : 1,
                      Flow{});
        flow_bytes_.assign(flows_.size(), 0);
        flow_mod_ = Remainder32(static_cast<std::uint32_t>(flows_.size()));
        pie_ = Pie{};
        pie_.burst_allowance = c.pie_max_burst;
        for (const Node& n : held) {  // (without the limit: a change drops nothing)
            const std::uint32_t f = flow_of(n.hash);
            const std::uint32_t i = alloc();
            nodes_[i] = n;
            append(f, i);
            if (cfg_.kind == QueueKind::fq_codel && flows_[f].list == kNoList) {
                flows_[f].deficit = cfg_.fq_quantum;
                list_push(kNew, f);
            }
        }
    }

    // ------------------------------------------------------------------ storage
    // A free node (its fields for the caller to write), from the free list or a new one.
    std::uint32_t alloc() {
        if (free_ == kNone) {
            nodes_.emplace_back();
            return static_cast<std::uint32_t>(nodes_.size() - 1);
        }
        const std::uint32_t i = free_;
        free_ = nodes_[i].next;
        return i;
    }
    // Appends node i (written) to flow f's queue.
    void append(std::uint32_t f, std::uint32_t i) {
        const Node& n = nodes_[i];
        nodes_[i].next = kNone;
        Flow& fl = flows_[f];
        if (fl.tail == kNone)
            fl.head = i;
        else
            nodes_[fl.tail].next = i;
        fl.tail = i;
        flow_bytes_[f] += n.bytes;
        ++packets_;
        bytes_ += n.bytes;
    }
    // Takes flow f's head (non-empty) out of its queue: its node, which stays in nodes_ (not
    // copied) until release().
    std::uint32_t pop(std::uint32_t f) {
        Flow& fl = flows_[f];
        const std::uint32_t i = fl.head;
        const Node& n = nodes_[i];
        fl.head = n.next;
        if (fl.head == kNone) fl.tail = kNone;
        flow_bytes_[f] -= n.bytes;
        --packets_;
        bytes_ -= n.bytes;
        return i;
    }
    // Node i (popped, done with) to the free list.
    void release(std::uint32_t i) {
        nodes_[i].next = free_;
        free_ = i;
    }

    bool over_limit(std::uint32_t bytes, std::uint32_t packets) const {
        if (cfg_.limit_packets > 0) return packets_ + packets > cfg_.limit_packets;
        return bytes_ + bytes > cfg_.limit_bytes;
    }

    // ------------------------------------------------------------------ flow lists
    void list_push(std::uint8_t l, std::uint32_t f) {
        Flow& fl = flows_[f];
        fl.list = l;
        fl.next_flow = kNone;
        ListEnds& e = lists_[l];
        if (e.tail == kNone)
            e.head = f;
        else
            flows_[e.tail].next_flow = f;
        e.tail = f;
    }
    // Removes the head of list l (which is f).
    void list_pop(std::uint8_t l) {
        ListEnds& e = lists_[l];
        const std::uint32_t f = e.head;
        e.head = flows_[f].next_flow;
        if (e.head == kNone) e.tail = kNone;
        flows_[f].list = kNoList;
        flows_[f].next_flow = kNone;
    }

    // Drops from the head of the flow with the most bytes queued (the first of equals)
    // until half of its bytes are gone or kFqDropBatch packets; true when node `self` (the
    // arrival, which the sink does not hear of) was among them.
    template <class Sink>
    bool drop_from_fattest(TimeNs at, std::uint32_t self, Sink& sink) {
        const std::uint64_t* b = flow_bytes_.data();
        const auto n_flows = static_cast<std::uint32_t>(flow_bytes_.size());
        std::uint32_t fat = 0;
        std::uint64_t most = b[0];
        for (std::uint32_t f = 1; f < n_flows; ++f)
            if (b[f] > most) {
                most = b[f];
                fat = f;
            }
        // (While fewer than half the bytes are gone, the flow is not empty.)
        const std::uint64_t half = most / 2;
        std::uint64_t gone = 0;
        bool is_self = false;
        std::uint32_t k = 0;
        do {
            const std::uint32_t i = pop(fat);
            gone += nodes_[i].bytes;
            if (i == self)
                is_self = true;
            else
                sink.dropped(nodes_[i].item, at, DropCause::spacer);
            release(i);
        } while (++k < kFqDropBatch && gone < half);
        return is_self;
    }

    // ------------------------------------------------------------------ service
    TimeNs service_time() {
        if (!trace_) return ready_;
        return trace_->start(ready_);
    }

    template <class Sink>
    void serve_events(TimeNs until, Sink& sink) {
        while (packets_ != 0) {
            const TimeNs tau = service_time();
            if (tau > until) break;
            pie_updates(tau);
            bool marked = false;
            const std::uint32_t i = dequeue(tau, marked, sink);
            if (i == kNone) continue;  // (dropped all there was)
            const Node& n = nodes_[i];
            const DurationNs sojourn = tau - n.enq;
            ++sojourn_.count;
            sojourn_.sum_ns += static_cast<double>(sojourn);
            sojourn_.max_ns = std::max(sojourn_.max_ns, sojourn);
            pie_.last_qdelay = sojourn;
            TimeNs tx = tau;
            if (trace_) {
                tx = trace_->schedule(tau, DeliveryTrace::charge(n.bytes));
                ready_ = tx;
            } else {
                free_at_ = static_cast<double>(tau) + n.bytes * ns_per_byte_;
                ready_ = ceil_ns(free_at_);
            }
            sink.sent(n.item, tau, tx, marked || n.marked);
            release(i);
        }
    }

    // The node dequeued now (kNone: the discipline dropped all there was); released by the
    // caller.
    template <class Sink>
    std::uint32_t dequeue(TimeNs now, bool& marked, Sink& sink) {
        switch (cfg_.kind) {
            case QueueKind::codel:
                return codel_dequeue(0, flows_[0].codel, now, marked, sink);
            case QueueKind::fq_codel:
                return fq_dequeue(now, marked, sink);
            case QueueKind::droptail:
            case QueueKind::pie:
            default:
                return pop(0);
        }
    }

    // ------------------------------------------------------------------ CoDel (RFC 8289)
    TimeNs control_law(TimeNs t, std::uint32_t count) const {
        return t + static_cast<TimeNs>(static_cast<double>(cfg_.codel_interval) /
                                       std::sqrt(static_cast<double>(count)));
    }

    // dodequeue: pops flow f's head (kNone: empty); ok_to_drop as the RFC.
    std::uint32_t codel_pop(std::uint32_t f, Codel& c, TimeNs now, bool& ok_to_drop) {
        ok_to_drop = false;
        if (flows_[f].head == kNone) {
            c.first_above = kUnset;
            return kNone;
        }
        const std::uint32_t i = pop(f);
        const DurationNs sojourn = now - nodes_[i].enq;
        if (sojourn < cfg_.codel_target || flow_bytes_[f] <= kMaxPacket) {
            c.first_above = kUnset;
        } else if (c.first_above == kUnset) {
            c.first_above = now + cfg_.codel_interval;
        } else if (now >= c.first_above) {
            ok_to_drop = true;
        }
        return i;
    }

    // Marks popped node i (ecn on, ECN-capable) or drops and releases it; true when marked
    // (it is then delivered).
    template <class Sink>
    bool drop_or_mark(std::uint32_t i, TimeNs now, Sink& sink) {
        if (cfg_.ecn && sink.mark(nodes_[i].item)) return true;
        sink.dropped(nodes_[i].item, now, DropCause::aqm);
        release(i);
        return false;
    }

    // codel_dequeue on an empty queue: it leaves the dropping state; kNone.
    static std::uint32_t codel_empty(Codel& c) {
        c.first_above = kUnset;
        c.dropping = false;
        return kNone;
    }

    // The node CoDel dequeues from flow f now (kNone: none left).
    template <class Sink>
    std::uint32_t codel_dequeue(std::uint32_t f, Codel& c, TimeNs now, bool& marked, Sink& sink) {
        bool ok = false;
        std::uint32_t i = codel_pop(f, c, now, ok);
        if (c.dropping) {
            if (!ok) c.dropping = false;
            while (now >= c.drop_next && c.dropping) {
                if (drop_or_mark(i, now, sink)) {
                    ++c.count;
                    c.drop_next = control_law(c.drop_next, c.count);
                    marked = true;
                    return i;
                }
                ++c.count;
                i = codel_pop(f, c, now, ok);
                if (!ok)
                    c.dropping = false;
                else
                    c.drop_next = control_law(c.drop_next, c.count);
            }
        } else if (ok) {
            const bool m = drop_or_mark(i, now, sink);
            if (!m) i = codel_pop(f, c, now, ok);
            c.dropping = true;
            const std::uint32_t delta = c.count - c.lastcount;
            c.count = 1;
            if (delta > 1 && now - c.drop_next < 16 * cfg_.codel_interval) c.count = delta;
            c.drop_next = control_law(now, c.count);
            c.lastcount = c.count;
            marked = m;
        }
        return i;
    }

    // ------------------------------------------------------------------ FQ-CoDel (RFC 8290)
    template <class Sink>
    std::uint32_t fq_dequeue(TimeNs now, bool& marked, Sink& sink) {
        for (;;) {
            std::uint8_t l;
            if (lists_[kNew].head != kNone)
                l = kNew;
            else if (lists_[kOld].head != kNone)
                l = kOld;
            else
                return kNone;
            const std::uint32_t f = lists_[l].head;
            Flow& fl = flows_[f];
            if (fl.deficit <= 0) {
                fl.deficit += cfg_.fq_quantum;
                list_pop(l);
                list_push(kOld, f);
                continue;
            }
            // (A flow emptied by its last packet is visited once or twice more, into the old
            // list and out of it, RFC 8290 section 4.2: what codel_dequeue does with an empty
            // queue, without the call.)
            const std::uint32_t i = fl.head == kNone
                                        ? codel_empty(fl.codel)
                                        : codel_dequeue(f, fl.codel, now, marked, sink);
            if (i == kNone) {
                list_pop(l);
                if (l == kNew && lists_[kOld].head != kNone) list_push(kOld, f);
                continue;
            }
            fl.deficit -= nodes_[i].bytes;
            return i;
        }
    }

    // ------------------------------------------------------------------ PIE (RFC 8033)
    struct Pie {
        bool started = false;
        TimeNs next_update = 0;
        double drop_prob = 0, qdelay_old = 0, accu_prob = 0;  // qdelay in seconds
        DurationNs burst_allowance = 0;
        DurationNs last_qdelay = 0;  // the sojourn of the last dequeued packet
    };

    void pie_updates(TimeNs t) {
        if (cfg_.kind != QueueKind::pie) return;
        if (!pie_.started) return;  // (from the first packet queued on)
        while (pie_.next_update <= t) {
            // Idle and settled: every further update changes nothing.
            if (packets_ == 0 && pie_.drop_prob == 0 && pie_.qdelay_old == 0 &&
                pie_.burst_allowance == cfg_.pie_max_burst) {
                const DurationNs k = (t - pie_.next_update) / cfg_.pie_tupdate + 1;
                pie_.next_update += k * cfg_.pie_tupdate;
                break;
            }
            pie_update();
            pie_.next_update += cfg_.pie_tupdate;
        }
    }

    void pie_update() {
        constexpr double alpha = 0.125, beta = 1.25;
        const double ref = static_cast<double>(cfg_.pie_target) * 1e-9;
        const double cur = packets_ == 0 ? 0.0 : static_cast<double>(pie_.last_qdelay) * 1e-9;
        double p = alpha * (cur - ref) + beta * (cur - pie_.qdelay_old);
        double& dp = pie_.drop_prob;
        if (dp < 1e-6)
            p /= 2048;
        else if (dp < 1e-5)
            p /= 512;
        else if (dp < 1e-4)
            p /= 128;
        else if (dp < 1e-3)
            p /= 32;
        else if (dp < 1e-2)
            p /= 8;
        else if (dp < 1e-1)
            p /= 2;
        if (dp >= 0.1 && p > 0.02) p = 0.02;
        dp += p;
        if (cur == 0 && pie_.qdelay_old == 0) dp *= 0.98;
        dp = std::clamp(dp, 0.0, 1.0);
        pie_.burst_allowance = std::max<DurationNs>(0, pie_.burst_allowance - cfg_.pie_tupdate);
        if (dp == 0 && cur < ref / 2 && pie_.qdelay_old < ref / 2)
            pie_.burst_allowance = cfg_.pie_max_burst;
        pie_.qdelay_old = cur;
    }

    // What PIE does with an arriving packet: enqueues it, drops it, or (ECN) marks it CE
    // and enqueues it.
    enum class PieVerdict : std::uint8_t { enqueue, drop, mark };
    template <class Sink>
    PieVerdict pie_drop_early(const Item& item, Sink& sink) {
        if (pie_.burst_allowance > 0) return PieVerdict::enqueue;
        const double ref = static_cast<double>(cfg_.pie_target) * 1e-9;
        if ((pie_.qdelay_old < ref / 2 && pie_.drop_prob < 0.2) || bytes_ <= 2 * kMaxPacket)
            return PieVerdict::enqueue;
        if (pie_.drop_prob == 0) pie_.accu_prob = 0;
        pie_.accu_prob += pie_.drop_prob;
        if (pie_.accu_prob < 0.85) return PieVerdict::enqueue;
        if (pie_.accu_prob < 8.5) {
            if (!(rng_.uniform() < pie_.drop_prob)) return PieVerdict::enqueue;
            pie_.accu_prob = 0;
        }
        if (cfg_.ecn && pie_.drop_prob <= 0.1 && sink.mark(item)) return PieVerdict::mark;
        return PieVerdict::drop;
    }

    QueueConfig cfg_;
    bool configured_ = false;
    std::vector<Node> nodes_;
    std::uint32_t free_ = kNone;  // free list through Node::next
    std::vector<Flow> flows_;
    std::vector<std::uint64_t> flow_bytes_;  // per flow, as flows_
    Remainder32 flow_mod_{1};                // mod flows_.size()
    ListEnds lists_[2];
    std::size_t packets_ = 0;
    std::uint64_t bytes_ = 0;
    double ns_per_byte_ = 0;
    double free_at_ = -1e300;  // the link is free again (rate)
    TimeNs ready_ = std::numeric_limits<TimeNs>::min();
    TraceLink trace_link_;
    TraceLink* trace_ = nullptr;
    Pie pie_;
    Rng rng_{1};
    QueueSojourn sojourn_;
};

}  // namespace linkem
