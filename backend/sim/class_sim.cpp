#include "class_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <variant>

#include "linkem/classes_json.hpp"
#include "linkem/emulator.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/packet_headers.hpp"
#include "linkem/shared_link.hpp"
#include "metrics.hpp"
#include "sim_capture.hpp"

namespace linkem::sim {

using nlohmann::json;

namespace {

bool is_file_key(const std::string& key) {
    return key == "classes" || key == "flows" || direction_of_key(key) >= 0 ||
           link_param_field(key) != nullptr;
}

// The link's parameters of direction d: the file's keys, then the flags', from the defaults.
LinkParams read_link(const json& j, const json& flags, unsigned d, std::uint64_t seed) {
    std::map<std::string, KeyOrigin> origin;
    const json merged = layered_link_keys({&j, &flags}, d, &origin);
    LinkParams base;
    base.seed = seed;
    try {
        return link_params_from_json(merged, base);
    } catch (const ParamError& e) {
        const auto it = origin.find(e.field());
        const bool own = it != origin.end() && it->second.own;
        throw ParamError(own ? std::string(kDirectionKeys[d]) + "." + e.field() : e.field(),
                         e.message());
    }
}

// "limiter": "link" shares a spacer or policer (SharedLink); the trace limiter is not shared.
void check_shared_limiters(const ClassFile& f) {
    for (std::size_t i = 0; i < f.classes.size(); ++i)
        for (unsigned d = 0; d < 2; ++d)
            if (f.classes[i].shares_link_limiter && f.link.direction(d).limiter == Limiter::trace)
                throw ClassError(i, f.classes[i].name, "limiter",
                                 "'link' with the link's trace limiter (" +
                                     std::string(kDirectionKeys[d]) +
                                     ") is not yet in linkem-sim; allowed with the link's "
                                     "limiter none, spacer or policer");
}

}  // namespace

ClassFile class_file_from_json(const json& j, const json& link_flags, std::uint64_t default_seed) {
    if (!j.is_object())
        throw ParamError("", "expected a JSON object of link parameters, 'classes' and 'flows'");
    for (const auto& [key, value] : j.items())
        if (!is_file_key(key))
            throw ParamError(key,
                             "unknown key; allowed the link parameters (docs/parameters.md), "
                             "'a_to_b', 'b_to_a', " +
                                 std::string(kClassFileKeys));
    ClassFile f;
    for (unsigned d = 0; d < 2; ++d)
        f.link.direction(d) = read_link(j, link_flags, d, default_seed);
    if (j.contains("classes")) f.classes = classes_from_json(j["classes"]);
    if (!j.contains("flows"))
        throw ParamError("flows",
                         "required: the traffic mix, a list of flows "
                         "([{\"name\": \"call\", \"rate_bps\": 64000, ...}]); "
                         "linkem-sim --classes makes no traffic of its own");
    f.flows = flows_from_json(j["flows"]);
    check_shared_limiters(f);
    return f;
}

namespace {

// The simulator's packet handle: arrival time, sequence number in its direction (arrival
// order, for the swaps), frame length, and the flow-direction (stream) it belongs to.
struct ClassPacket {
    TimeNs arrival;
    std::uint64_t seq;
    std::uint32_t length;
    std::uint32_t stream;
    std::uint32_t flow_hash;  // its frame's 5-tuple hash (FQ-CoDel's flow), as linkemd's
    bool ect;                 // its frame is ECN-capable (the flow's `ect`)
};
struct ClassPacketTraits {
    static std::uint32_t length(const ClassPacket& p) { return p.length; }
    static std::uint32_t flow_hash(const ClassPacket& p) { return p.flow_hash; }
    static bool mark_ce(const ClassPacket& p) { return p.ect; }
};
using ClassEmulator = Emulator<ClassPacket, ClassPacketTraits>;

constexpr std::size_t kBurst = 64;
constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Delays of delivered packets (ns): mean, jitter (population sd), extremes.
struct DelayStats {
    Moments moments{0};
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
    void add(std::int64_t d) {
        moments.add(d);
        lo = std::min(lo, d);
        hi = std::max(hi, d);
    }
    template <class R>
    void fill(R& r) const {
        const bool any = moments.count() > 0;
        r.mean_delay_us = any ? moments.mean() * 1e-3 : kNaN;
        r.jitter_us = any ? moments.jitter() * 1e-3 : kNaN;
        r.min_delay_us = any ? static_cast<double>(lo) * 1e-3 : kNaN;
        r.max_delay_us = any ? static_cast<double>(hi) * 1e-3 : kNaN;
    }
};

using Source = std::variant<CbrSource, PoissonSource, SineSource>;

Source make_source(const TrafficSpec& t, std::uint64_t seed) {
    switch (t.pattern) {
        case TrafficPattern::poisson:
            return PoissonSource(t, seed);
        case TrafficPattern::sine:
            return SineSource(t);
        case TrafficPattern::cbr:
        default:
            return CbrSource(t);
    }
}

// One flow in one direction.
struct Stream {
    std::size_t flow;
    unsigned d;
    Source source;
    ClassId id;
    std::size_t lane;
    std::uint32_t length;
    std::uint64_t in = 0, out = 0, dropped = 0;
    DelayStats delay;
    std::uint32_t frame;  // with a capture: one of its frames (SimCapture::add_frame)
    std::uint32_t flow_hash;
    bool ect;
};

// One class in one direction.
struct Lane {
    ClassId id = kDefaultClass;
    unsigned d = 0;
    ClassAction action = ClassAction::emulate;
    bool shares = false;
    std::unique_ptr<ClassEmulator> emu;  // emulate, once a flow lands in it
    std::uint64_t in = 0, passed = 0, dropped = 0;
    DelayStats delay;
    std::vector<std::string> flows;
};

class ClassSim {
  public:
    explicit ClassSim(const ClassSimConfig& cfg);
    ClassRunResult run();

  private:
    void add_streams();
    Lane& lane_for(ClassId id, unsigned d);
    LinkParams lane_params(ClassId id, unsigned d) const;
    void arrive(std::size_t stream, TimeNs t);
    void drain_until(TimeNs t);
    void deliver(Lane& lane, const ClassPacket* p, const TimeNs* tx, std::size_t n);
    void late_drops(const Lane& lane);
    ClassRunResult result() const;

    const ClassSimConfig& cfg_;
    const ClassFile& file_;
    Classifier classifier_;
    std::vector<Lane> lanes_;      // [id * 2 + d]
    std::vector<Lane*> active_;    // the lanes with an Emulator
    std::vector<Stream> streams_;  // by flow, then direction
    SharedLink link_[2];
    bool shared_[2] = {false, false};  // whether direction d's link limiter is shared
    std::uint64_t next_seq_[2] = {0, 0};
    std::uint64_t out_[2] = {0, 0}, dropped_[2] = {0, 0};
    InversionCounter inversions_[2];
};

ClassSim::ClassSim(const ClassSimConfig& cfg)
    : cfg_(cfg), file_(cfg.file), classifier_(cfg.file.classes) {
    lanes_.resize((file_.classes.size() + 1) * 2);
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
        Lane& l = lanes_[i];
        l.id = static_cast<ClassId>(i / 2);
        l.d = static_cast<unsigned>(i % 2);
        if (l.id == kDefaultClass) continue;
        const TrafficClass& c = file_.classes[l.id - 1];
        l.action = c.action;
        l.shares = c.action == ClassAction::emulate && c.shares_link_limiter;
        if (l.shares && shareable(file_.link.direction(l.d))) shared_[l.d] = true;
    }
    for (unsigned d = 0; d < 2; ++d)
        lanes_[d].shares = shared_[d];
    add_streams();
}

// The parameters of class `id` in direction d: its own (the link's for `default`); a seed
// of 0 takes the link's; a class sharing the link's limiter takes the link's limiter keys.
LinkParams ClassSim::lane_params(ClassId id, unsigned d) const {
    const LinkParams& link = file_.link.direction(d);
    if (id == kDefaultClass) return link;
    return class_params(file_.classes[id - 1], link, d);
}

Lane& ClassSim::lane_for(ClassId id, unsigned d) {
    Lane& l = lanes_[id * 2u + d];
    if (l.action == ClassAction::emulate && !l.emu) {
        // Random stream 2 * id + d: `default` has linkemd's streams (0 a_to_b, 1 b_to_a).
        l.emu = std::make_unique<ClassEmulator>(lane_params(id, d), 2u * id + d);
        if (l.shares && shared_[d]) l.emu->share_limiter(&link_[d]);
        active_.push_back(&l);
    }
    return l;
}

// A stream for each flow and direction it sends in; its class from one of its frames.
void ClassSim::add_streams() {
    const std::uint64_t seed = file_.link.a_to_b.seed;
    for (std::size_t i = 0; i < file_.flows.size(); ++i) {
        const Flow& f = file_.flows[i];
        for (unsigned d = 0; d < 2; ++d) {
            if (!f.sends(d)) continue;
            const std::vector<std::uint8_t> frame = flow_frame(f, d);
            const ClassId id =
                classifier_.classify(parse_packet_key(frame.data(), frame.size()), d);
            Lane& lane = lane_for(id, d);
            lane.flows.push_back(f.name);
            const std::uint64_t source_seed = seed + 0x9e3779b97f4a7c15ULL * (2 * i + d + 1);
            streams_.push_back(
                Stream{i, d, make_source(f.traffic, source_seed), id,
                       static_cast<std::size_t>(&lane - lanes_.data()), f.traffic.frame_bytes, 0, 0,
                       0, DelayStats{}, cfg_.capture ? cfg_.capture->add_frame(frame) : 0,
                       flow_hash(frame.data(), static_cast<std::uint32_t>(frame.size())), f.ect});
        }
    }
}

void ClassSim::deliver(Lane& lane, const ClassPacket* p, const TimeNs* tx, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t delay = tx[i] - p[i].arrival;
        Stream& s = streams_[p[i].stream];
        ++s.out;
        s.delay.add(delay);
        lane.delay.add(delay);
        inversions_[lane.d].depart(p[i].seq);
        ++out_[lane.d];
        if (cfg_.capture) [[unlikely]]
            cfg_.capture->departed(lane.d, lane.id, p[i].seq, p[i].arrival, tx[i], s.frame);
    }
}

// The packets the lane's queue discipline dropped in its last call (Emulator::late_drops).
void ClassSim::late_drops(const Lane& lane) {
    for (const auto& d : lane.emu->late_drops()) {
        Stream& s = streams_[d.pkt.stream];
        ++s.dropped;
        inversions_[lane.d].drop(d.pkt.seq);
        ++dropped_[lane.d];
        if (cfg_.capture) [[unlikely]]
            cfg_.capture->late_dropped(lane.d, lane.id, d.pkt.seq, d.pkt.arrival, d.at, d.cause,
                                       s.frame);
    }
}

// Every departure due at or before t, of all classes, in time order: the lane whose next
// departure comes first is drained up to the next lane's.
void ClassSim::drain_until(TimeNs t) {
    ClassPacket out[kBurst];
    TimeNs tx[kBurst];
    for (;;) {
        Lane* first = nullptr;
        TimeNs t1 = kForever, t2 = kForever;
        for (Lane* l : active_) {
            const std::optional<TimeNs> next = l->emu->next_departure();
            if (!next) continue;
            if (*next < t1) {
                t2 = t1;
                t1 = *next;
                first = l;
            } else if (*next < t2) {
                t2 = *next;
            }
        }
        if (!first || t1 > t) return;
        const TimeNs bound = std::min(t, t2);
        for (std::optional<TimeNs> next = t1; next && *next <= bound;
             next = first->emu->next_departure()) {
            deliver(*first, out, tx, first->emu->drain(bound, out, kBurst, tx));
            late_drops(*first);
        }
    }
}

void ClassSim::arrive(std::size_t index, TimeNs t) {
    Stream& s = streams_[index];
    Lane& lane = lanes_[s.lane];
    const std::uint64_t seq = next_seq_[s.d]++;
    ++s.in;
    ++lane.in;
    switch (lane.action) {
        case ClassAction::pass:
            if (cfg_.capture) cfg_.capture->passed(s.d, s.id, seq, t, s.frame);
            ++lane.passed;
            ++s.out;
            s.delay.add(0);
            lane.delay.add(0);
            inversions_[s.d].depart(seq);
            ++out_[s.d];
            return;
        case ClassAction::drop:
            if (cfg_.capture) cfg_.capture->class_dropped(s.d, s.id, seq, t, s.frame);
            ++lane.dropped;
            ++s.dropped;
            inversions_[s.d].drop(seq);
            ++dropped_[s.d];
            return;
        case ClassAction::emulate:
            break;
    }
    const ClassPacket p{t, seq, s.length, static_cast<std::uint32_t>(index), s.flow_hash, s.ect};
    ClassPacket dropped;
    PacketFate fate;
    const bool was_dropped = cfg_.capture ? lane.emu->ingest(&p, 1, t, &dropped, &fate) != 0
                                          : lane.emu->ingest(&p, 1, t, &dropped) != 0;
    if (cfg_.capture) cfg_.capture->arrived(s.d, s.id, seq, t, fate, s.frame);
    if (was_dropped) {
        ++s.dropped;
        inversions_[s.d].drop(seq);
        ++dropped_[s.d];
    }
    late_drops(lane);
}

ClassRunResult ClassSim::run() {
    const auto wall_start = std::chrono::steady_clock::now();
    using Next = std::pair<TimeNs, std::size_t>;
    std::priority_queue<Next, std::vector<Next>, std::greater<>> arrivals;
    for (std::size_t i = 0; i < streams_.size(); ++i)
        arrivals.emplace(std::visit([](auto& src) { return src.next(); }, streams_[i].source), i);
    while (!arrivals.empty() && arrivals.top().first < cfg_.duration) {
        const auto [t, i] = arrivals.top();
        arrivals.pop();
        // Departures due at or before this arrival go first (as in run_once).
        drain_until(t);
        arrive(i, t);
        arrivals.emplace(std::visit([](auto& src) { return src.next(); }, streams_[i].source), i);
    }
    drain_until(kForever);
    ClassRunResult r = result();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return r;
}

ClassRunResult ClassSim::result() const {
    ClassRunResult r;
    r.duration_s = static_cast<double>(cfg_.duration) * 1e-9;
    for (const Lane& l : lanes_) {
        if (l.flows.empty()) continue;
        ClassLaneResult c;
        c.id = l.id;
        c.name = l.id == kDefaultClass ? kDefaultClassName : file_.classes[l.id - 1].name;
        c.action = l.action;
        c.direction = l.d;
        c.shares_link_limiter = l.shares && shared_[l.d];
        c.packets_in = l.in;
        c.passed = l.passed;
        c.dropped_by_class = l.dropped;
        c.packets_out = l.passed;
        if (l.emu) {
            const CounterSnapshot s = l.emu->snapshot();
            c.seed = l.emu->seed();
            c.packets_out = s.packets_out;
            c.drops = s.drops;
            c.delays_clamped = s.delays_clamped;
            c.ecn_marked = s.ecn_marked;
        }
        l.delay.fill(c);
        c.flows = l.flows;
        r.classes.push_back(std::move(c));
    }
    for (const Stream& s : streams_) {
        FlowLaneResult f{file_.flows[s.flow].name,
                         s.d,
                         s.id,
                         s.id == kDefaultClass ? kDefaultClassName : file_.classes[s.id - 1].name,
                         s.in,
                         s.out,
                         s.dropped};
        s.delay.fill(f);
        r.flows.push_back(std::move(f));
    }
    for (unsigned d = 0; d < 2; ++d)
        r.direction[d] = {next_seq_[d], out_[d], dropped_[d], inversions_[d].inversions()};
    return r;
}

}  // namespace

ClassRunResult run_classes(const ClassSimConfig& cfg) {
    return ClassSim(cfg).run();
}

}  // namespace linkem::sim
