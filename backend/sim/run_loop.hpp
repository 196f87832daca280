// linkem-sim's run loop (simulator.hpp's run_once), shared by two translation units:
// simulator.cpp runs it without a capture, sim_capture.cpp with one (kCapture). The capture's
// instance (Emulator::ingest with fates, the records) lives in its own unit so that the loop
// without a capture is compiled as it would be alone: in one unit with the other, GCC inlined
// less of it (InversionCounter::depart, the delay's random numbers). Instructions of
// `linkem-sim-bench 0.2 1` (cachegrind, 2026-12-06): 3.733 G for the loop before it had a
// capture, 3.853 G with both instances in simulator.cpp, 3.753 G as here. The queue
// disciplines' checks (late drops after each ingest and drain, the queue series) cost 2 %:
// 4.080 G against 3.996 G without them (RelWithDebInfo build, 2026-12-06).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <vector>

#include "linkem/emulator.hpp"
#include "linkem/huge_page_queue.hpp"
#include "linkem/packet_headers.hpp"
#include "metrics.hpp"
#include "sim_capture.hpp"
#include "simulator.hpp"

namespace linkem::sim {
// Each including unit has its own copy (an unnamed namespace): GCC then specialises the
// Emulator's functions for the one loop of the unit, as it did when this was simulator.cpp's
// alone (with external linkage: 4.112 G instructions, above).
namespace {

// The simulator's packet handle: 16 bytes. Arrival time, and sequence number and frame
// length packed into one word (24 bits of length, 40 bits of sequence: 10^12 packets); the
// length's top bit (frames are at most 65535 bytes) says the packet is ECN-capable (--ect).
struct SimPacket {
    TimeNs arrival;
    std::uint64_t seq_len;
};
constexpr int kLenBits = 24;
constexpr std::uint64_t kLenMask = (std::uint64_t{1} << kLenBits) - 1;
constexpr std::uint64_t kEctBit = std::uint64_t{1} << (kLenBits - 1);
constexpr std::uint64_t kMaxPackets = std::uint64_t{1} << (64 - kLenBits);

// The flows of the run in force on this thread (--flows): flow k's 5-tuple hash, packet k's
// flow k mod n (run_emulator sets it; a sweep's runs each have their thread).
struct SimFlows {
    const std::uint32_t* hash = nullptr;
    std::uint64_t n = 1;
    SimCapture* capture = nullptr;  // the queue discipline's dequeues for the out records
    unsigned direction = 0;
};
thread_local SimFlows t_sim_flows;

struct SimPacketTraits {
    static std::uint32_t length(const SimPacket& p) {
        return static_cast<std::uint32_t>(p.seq_len & (kEctBit - 1));
    }
    // FQ-CoDel's flow: the hash of the packet's flow's 5-tuple, as linkemd's.
    static std::uint32_t flow_hash(const SimPacket& p) {
        return t_sim_flows.hash[(p.seq_len >> kLenBits) % t_sim_flows.n];
    }
    // ECN-capable (ECT): becomes CE. (The simulator keeps no frame to change.)
    static bool mark_ce(const SimPacket& p) { return (p.seq_len & kEctBit) != 0; }
    // The queue discipline dequeued p (with a capture: for its out record).
    static void dequeued(const SimPacket& p, TimeNs tx, DurationNs wait, bool marked) {
        if (t_sim_flows.capture) [[unlikely]]
            t_sim_flows.capture->dequeued(t_sim_flows.direction, p.seq_len >> kLenBits, tx, wait,
                                          marked);
    }
};

using SimEmulator = Emulator<SimPacket, SimPacketTraits, HugePageCalendarQueue>;

constexpr std::size_t kBurst = 64;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double pct(double dev, double desired) {
    return desired > 0 ? 100.0 * dev / desired : kNaN;
}

// What the simulator measures of every departure: the delay's moments, extremes and
// passage times around the target, the order (inversions), the delay series, and a
// bottleneck queue after the emulator when --utilization asks for one.
class Departures {
  public:
    Departures(const SimConfig& cfg, std::int64_t mu_ps, std::int64_t sigma_ps)
        : cfg_(cfg),
          sigma_ps_(sigma_ps),
          moments_(mu_ps),
          passage_(mu_ps - sigma_ps, mu_ps + sigma_ps),
          service_ps_(cfg.utilization > 0
                          ? std::llround(cfg.utilization * cfg.traffic.bits_per_packet() * 1e12 /
                                         cfg.traffic.rate_bps)
                          : 0),
          series_ps_(cfg.series_interval * 1000),
          mean_field_(static_cast<std::size_t>(link_param_index("mean_delay_us"))),
          capture_(cfg.capture),
          frame_(capture_ ? add_frames() : 0) {}
    /// Packet seq's frame in the capture (its flow's).
    std::uint32_t frame(std::uint64_t seq) const {
        return frame_ + static_cast<std::uint32_t>(seq % cfg_.flows);
    }

    /// kCapture: each departure's `out` record too (a separate instance of the loop, so a run
    /// without a capture runs the loop it always did).
    template <bool kCapture>
    void take(const SimPacket* out, const TimeNs* tx, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t dep = tx[i] * 1000;
            if (service_ps_) {
                dep = std::max(dep, queue_free_ps_) + service_ps_;
                queue_free_ps_ = dep;
            }
            if constexpr (kCapture)
                capture_->departed(cfg_.capture_direction, 0, out[i].seq_len >> kLenBits,
                                   out[i].arrival, dep / 1000, frame(out[i].seq_len >> kLenBits));
            const std::int64_t d = dep - out[i].arrival * 1000;
            moments_.add(d);
            min_d_ = std::min(min_d_, d);
            max_d_ = std::max(max_d_, d);
            if (sigma_ps_) passage_.add(dep, d);
            inversions_.depart(out[i].seq_len >> kLenBits);
            if (cfg_.series && dep >= next_series_ps_) [[unlikely]]
                write_series(dep, d, out[i].arrival);
        }
    }
    void dropped(std::uint64_t seq) { inversions_.drop(seq); }

    /// The delay figures of a RunResult, against the target.
    void fill(RunResult& r, double desired_mean_us) const {
        const double desired_jitter = static_cast<double>(sigma_ps_) * 1e-6;
        r.mean_delay_us = moments_.mean() * 1e-6;
        r.jitter_us = moments_.jitter() * 1e-6;
        r.min_delay_us = moments_.count() ? static_cast<double>(min_d_) * 1e-6 : kNaN;
        r.max_delay_us = moments_.count() ? static_cast<double>(max_d_) * 1e-6 : kNaN;
        r.mean_delay_dev_us = r.mean_delay_us - desired_mean_us;
        r.mean_delay_dev_pct = pct(r.mean_delay_dev_us, desired_mean_us);
        r.jitter_dev_us = r.jitter_us - desired_jitter;
        r.jitter_dev_pct = pct(r.jitter_dev_us, desired_jitter);
        r.passages = passage_.count();
        r.passage_time_ms = passage_.mean() * 1e-9;
        r.swaps = inversions_.inversions();
        r.swaps_per_packet = r.packets_out
                                 ? static_cast<double>(r.swaps) / static_cast<double>(r.packets_out)
                                 : kNaN;
    }

  private:
    // One frame per flow; returns the first's number.
    std::uint32_t add_frames() {
        std::uint32_t first = 0;
        for (std::uint32_t f = 0; f < cfg_.flows; ++f) {
            const std::uint32_t n = capture_->add_frame(
                plain_capture_frame(cfg_.traffic.frame_bytes, cfg_.capture_direction, f, cfg_.ect));
            if (f == 0) first = n;
        }
        return first;
    }

    void write_series(std::int64_t dep, std::int64_t d, TimeNs arrival) {
        std::ostream& os = *cfg_.series;
        os << static_cast<double>(dep) * 1e-9 << ',' << static_cast<double>(d) * 1e-9;
        if (cfg_.track)  // the mean delay in force when the packet arrived
            os << ',' << cfg_.track->number_at(mean_field_, arrival) * 1e-3;
        os << '\n';
        if (series_ps_) next_series_ps_ = (dep / series_ps_ + 1) * series_ps_;
    }

    const SimConfig& cfg_;
    const std::int64_t sigma_ps_;
    Moments moments_;
    PassageTimes passage_;
    InversionCounter inversions_;
    std::int64_t min_d_ = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_d_ = std::numeric_limits<std::int64_t>::min();
    const std::int64_t service_ps_;
    std::int64_t queue_free_ps_ = std::numeric_limits<std::int64_t>::min();
    const std::int64_t series_ps_;  // 0: every packet
    std::int64_t next_series_ps_ = 0;
    const std::size_t mean_field_;
    SimCapture* const capture_;
    const std::uint32_t frame_;
};

// The limiter's queue over the run: its sojourn times in total and, with cfg.queue_series,
// one CSV line per interval of simulated time (backlog at the interval's end, sojourn times,
// packets dequeued, drops and marks in the interval), from Emulator::take_report.
class QueueMeter {
  public:
    explicit QueueMeter(const SimConfig& cfg)
        : series_(cfg.queue_series),
          interval_(cfg.queue_series_interval),
          next_(cfg.queue_series ? cfg.queue_series_interval : kNever) {}

    /// The samples due at or before t: for each, drain(T) moves every departure up to T
    /// first.
    template <class Drain>
    void until(TimeNs t, SimEmulator& emu, Drain&& drain) {
        while (next_ <= t)
            [[unlikely]] {
                drain(next_);
                sample(emu, next_);
                next_ += interval_;
            }
    }
    /// When the next sample is due (kNever without a series).
    TimeNs next() const { return next_; }

    /// The run is over at `end` (its last departure, or the end of the arrivals): the rest
    /// into the totals and, with a series, its last line at `end`.
    void finish(SimEmulator& emu, TimeNs end) {
        if (series_)
            sample(emu, end);
        else
            total_.merge(emu.take_report(end, 0).queue);
    }

    void fill(RunResult& r) const {
        r.queue_sojourn_mean_us = total_.sojourn_count ? total_.sojourn_mean_ns() * 1e-3 : kNaN;
        r.queue_sojourn_max_us = total_.sojourn_count && total_.sojourn_max_ns > 0
                                     ? static_cast<double>(total_.sojourn_max_ns) * 1e-3
                                     : kNaN;
    }

    static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  private:
    void sample(SimEmulator& emu, TimeNs t) {
        const IntervalReport r = emu.take_report(t, 0);
        const QueueReport& q = r.queue;
        total_.merge(q);
        const CounterSnapshot& c = r.counters;
        std::ostream& os = *series_;
        os << static_cast<double>(t) * 1e-9 << ',' << q.backlog_bytes << ',' << q.backlog_packets
           << ',';
        if (q.sojourn_count) os << q.sojourn_mean_ns() * 1e-6;
        os << ',';
        if (q.sojourn_count && q.sojourn_max_ns > 0)
            os << static_cast<double>(q.sojourn_max_ns) * 1e-6;
        os << ',' << q.sojourn_count << ','
           << c.drops[DropCause::spacer] - last_.drops[DropCause::spacer] << ','
           << c.drops[DropCause::aqm] - last_.drops[DropCause::aqm] << ','
           << c.ecn_marked - last_.ecn_marked << '\n';
        last_ = c;
    }

    std::ostream* series_;
    const DurationNs interval_;
    TimeNs next_;
    QueueReport total_;
    CounterSnapshot last_;
};

// The emulator's counters and the correlation weight and rate estimate it went through.
void fill_counters(RunResult& r, const SimEmulator& emu, const TraceSummary& alpha,
                   const TraceSummary& rate) {
    const CounterSnapshot c = emu.snapshot();
    r.seed = emu.seed();
    r.packets_in = c.packets_in;
    r.packets_out = c.packets_out;
    r.drops = c.drops;
    r.delays_clamped = c.delays_clamped;
    r.waited = c.waited;
    r.ecn_marked = c.ecn_marked;
    r.waited_pct = c.packets_in
                       ? 100.0 * static_cast<double>(r.waited) / static_cast<double>(c.packets_in)
                       : kNaN;
    r.rate_intervals = c.rate_intervals;
    r.alpha_min = alpha.min;
    r.alpha_mean = alpha.mean();
    r.alpha_max = alpha.max;
    r.rate_pps_min = rate.min;
    r.rate_pps_mean = rate.mean();
    r.rate_pps_max = rate.max;
}

// kCapture: with cfg.capture (its own instance of the loop; see Departures::take).
template <bool kCapture, class Source>
RunResult run_loop(const SimConfig& cfg, Source& source, SimEmulator& emu) {
    const auto wall_start = std::chrono::steady_clock::now();
    const LinkParams& lp = cfg.link;
    const bool varying = lp.jitter > 0 && lp.distribution != Distribution::constant;
    Departures departures(cfg, lp.mean_delay * 1000, varying ? lp.jitter * 1000 : 0);
    QueueMeter meter(cfg);
    TraceSummary alpha, rate;
    SimPacket out[kBurst];
    TimeNs tx[kBurst];
    SimPacket dropped;
    const TimeNs end = cfg.duration;
    const std::uint64_t len = cfg.traffic.frame_bytes | (cfg.ect ? kEctBit : 0);
    std::uint64_t seq = 0, last_intervals = 0;
    // The packets the queue discipline dropped in the last call (Emulator::late_drops): with
    // one, or a scenario that may choose one.
    const bool queue = lp.uses_bottleneck() || cfg.track;
    const bool series = cfg.queue_series != nullptr;
    const auto late_drops = [&] {
        if (!queue) return;
        for (const auto& d : emu.late_drops()) {
            const std::uint64_t s = d.pkt.seq_len >> kLenBits;
            departures.dropped(s);
            if constexpr (kCapture)
                cfg.capture->late_dropped(cfg.capture_direction, 0, s, d.pkt.arrival, d.at, d.cause,
                                          departures.frame(s));
        }
    };
    // Every departure up to t.
    const auto drain_until = [&](TimeNs t) {
        for (;;) {
            const std::optional<TimeNs> next_dep = emu.next_departure();
            if (!next_dep || *next_dep > t) break;
            departures.template take<kCapture>(out, tx, emu.drain(t, out, kBurst, tx));
            late_drops();
        }
    };
    for (;;) {
        const TimeNs t = source.next();
        if (t >= end) break;
        if (series) [[unlikely]]
            meter.until(t, emu, drain_until);
        // Departures due at or before this arrival go first (a departure at the same
        // instant frees buffer space for the arrival).
        drain_until(t);
        const SimPacket p{t, (seq << kLenBits) | len};
        if constexpr (!kCapture) {
            if (emu.ingest(&p, 1, t, &dropped)) departures.dropped(seq);
        } else {
            PacketFate fate;
            if (emu.ingest(&p, 1, t, &dropped, &fate)) departures.dropped(seq);
            cfg.capture->arrived(cfg.capture_direction, 0, seq, t, fate, departures.frame(seq));
        }
        late_drops();
        ++seq;
        const std::uint64_t intervals = emu.rate_estimator().intervals();
        if (intervals != last_intervals) [[unlikely]] {
            last_intervals = intervals;
            alpha.add(emu.alpha());
            rate.add(emu.rate_pps());
        }
        if ((seq & 0x3fffff) == 0 && cfg.progress) [[unlikely]]
            cfg.progress(static_cast<double>(t) / static_cast<double>(end), seq);
    }
    // No more arrivals: the remaining departures, in time order (with a queue series, up to
    // each sample's time first).
    constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();
    TimeNs last = end;
    while (const std::optional<TimeNs> next_dep = emu.next_departure()) {
        meter.until(*next_dep, emu, drain_until);
        last = std::max(last, *next_dep);
        departures.template take<kCapture>(
            out, tx,
            emu.drain(meter.next() == QueueMeter::kNever ? kForever : *next_dep, out, kBurst, tx));
        late_drops();
    }
    meter.finish(emu, last);

    RunResult r;
    r.duration_s = static_cast<double>(cfg.duration) * 1e-9;
    fill_counters(r, emu, alpha, rate);
    meter.fill(r);
    departures.fill(r, static_cast<double>(lp.mean_delay) * 1e-3);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return r;
}

// Replays given arrival times.
class ReplaySource {
  public:
    explicit ReplaySource(const std::vector<TimeNs>& t) : t_(t) {}
    TimeNs next() { return i_ < t_.size() ? t_[i_++] : std::numeric_limits<TimeNs>::max(); }

  private:
    const std::vector<TimeNs>& t_;
    std::size_t i_ = 0;
};

// One run, with or without the capture (kCapture: cfg.capture is set).
template <bool kCapture>
RunResult run_emulator(const SimConfig& cfg) {
    auto emu = std::make_unique<SimEmulator>(cfg.link, cfg.stream);
    // The flows' 5-tuple hashes (FQ-CoDel's flows), from the frames linkemd would see.
    std::vector<std::uint32_t> hashes(cfg.flows);
    for (std::uint32_t f = 0; f < cfg.flows; ++f) {
        const std::vector<std::uint8_t> frame =
            plain_capture_frame(cfg.traffic.frame_bytes, 0, f, cfg.ect);
        hashes[f] = flow_hash(frame.data(), static_cast<std::uint32_t>(frame.size()));
    }
    t_sim_flows = SimFlows{hashes.data(), cfg.flows, cfg.capture, cfg.capture_direction};
    struct Reset {
        ~Reset() { t_sim_flows = SimFlows{}; }
    } reset;
    emu->follow(cfg.track, 0);
    // Room for the packets in flight over the mean delay plus six jitters (at most 4 Mi,
    // ~100 MB; beyond that the queue grows by doubling), so it rarely grows during the run.
    const double pps = cfg.traffic.rate_bps / cfg.traffic.bits_per_packet();
    const double hold_s = static_cast<double>(cfg.link.mean_delay + 6 * cfg.link.jitter) * 1e-9;
    emu->reserve(static_cast<std::size_t>(std::min(pps * hold_s + 1024, 4.0 * (1 << 20))));
    if (cfg.arrivals) {
        ReplaySource s(*cfg.arrivals);
        return run_loop<kCapture>(cfg, s, *emu);
    }
    switch (cfg.traffic.pattern) {
        case TrafficPattern::poisson: {
            PoissonSource s(cfg.traffic, emu->seed());
            return run_loop<kCapture>(cfg, s, *emu);
        }
        case TrafficPattern::sine: {
            SineSource s(cfg.traffic);
            return run_loop<kCapture>(cfg, s, *emu);
        }
        case TrafficPattern::cbr:
        default: {
            CbrSource s(cfg.traffic);
            return run_loop<kCapture>(cfg, s, *emu);
        }
    }
}

}  // namespace
}  // namespace linkem::sim
