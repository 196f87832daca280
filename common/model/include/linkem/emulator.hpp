// Emulator: one direction of an emulated link, the DPDS pipeline of paper Section V-A:
//
//   ingest(batch, now):  1 delay -> 2 limiter -> 3 loss -> 4 tx time -> 5 buffer
//   drain(now):          6 packets whose tx time has come, in order
//
// Identical code runs in the DPDK data plane (Packet = rte_mbuf*), the simulator and the
// tests: the Emulator never reads a clock, never allocates per packet in steady state and
// knows nothing of DPDK. It owns its RNG (explicit seed => reproducible), rate estimator,
// EMA state, limiter and loss state, and counters. set_params() replaces the parameters at
// run time and keeps all of that state and every queued packet.
//
// Packet is any trivially copyable handle; PacketTraits<Packet>::length(p) gives its frame
// length in bytes (without FCS, as DPDK reports it; callers add what they account for).
// An optional PacketTraits<Packet>::prefetch(p) is called on packets about to leave.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <type_traits>
#include <utility>

#include "linkem/counters.hpp"
#include "linkem/delay_sampler.hpp"
#include "linkem/delayer.hpp"
#include "linkem/limiter.hpp"
#include "linkem/link_params.hpp"
#include "linkem/loss.hpp"
#include "linkem/queues.hpp"
#include "linkem/rate_estimator.hpp"
#include "linkem/rng.hpp"
#include "linkem/scenario.hpp"
#include "linkem/shared_link.hpp"
#include "linkem/spsc_ring.hpp"
#include "linkem/telemetry.hpp"
#include "linkem/units.hpp"

namespace linkem {

/// Default traits: a packet type with a `length` member. Specialise for other handles.
template <class Packet>
struct PacketTraits {
    static std::uint32_t length(const Packet& p) { return p.length; }
};

/// What ingest() did with one packet, for callers that record it (capture): the parts of
/// its delay, or why it was dropped.
struct PacketFate {
    static constexpr std::uint8_t kQueued = 0xff;
    TimeNs tx = 0;                   // queued: its transmission time (before a queue's rounding)
    DurationNs delay = 0;            // the delay drawn for it, rounded to the ns (>= 0)
    DurationNs limiter_wait = 0;     // how long the limiter (spacer, trace, shared link) held it
    std::uint8_t outcome = kQueued;  // kQueued, or the DropCause that dropped it
};

template <class Packet, class Traits = PacketTraits<Packet>,
          template <class> class ReorderQueue = CalendarQueue>
class Emulator {
    static_assert(std::is_trivially_copyable_v<Packet>, "Packet must be a cheap handle");

  public:
    /// `stream` picks one of several independent random streams of the same seed: the data
    /// plane gives each direction its own (0 and 1), so that one seed for both directions
    /// does not make them draw the same delays and losses. Stream 0 is the seed's own.
    explicit Emulator(const LinkParams& params = {}, std::uint64_t stream = 0) : stream_(stream) {
        set_params(params);
    }

    /// What set_params(p, tables) needs beyond p that is costly to derive (Delayer::prepare:
    /// smooth's gamma quantile table, 0.25 to ~5 ms): made off the packet path, immutable,
    /// shareable between Emulators. `reuse`: the tables of the parameters in use; those that
    /// fit p are shared, not built again.
    static DelayTables prepare(const LinkParams& p, const DelayTables& reuse = {}) {
        return Delayer::prepare(delay_config(p), reuse);
    }

    /// Replaces the parameters, with the tables prepare(p) made: no costly work (the data
    /// plane adopts a parameter block this way). The caller validates the parameters first
    /// (validate() or link_params_from_json()). Queued packets, the EMA state, the rate
    /// estimate, the limiter and loss state and the counters are kept; a strategy change
    /// between FIFO and reordering moves the queued packets across, in transmission-time
    /// order. The Emulator holds `tables` until the next set_params.
    void set_params(const LinkParams& p, const DelayTables& tables) {
        const bool had_params = configured_;
        const bool was_fifo = uses_fifo();
        params_ = p;
        configured_ = true;
        const bool reseed = !had_params || (p.seed != 0 && p.seed != seed_);
        if (reseed) {
            seed_ = p.seed != 0 ? p.seed : random_seed();
            const std::uint64_t key = seed_ ^ (stream_ * kOtherStream);
            rng_.reseed(key);
            loss_rng_.reseed(key ^ kLossStream);
        }
        // The delay and loss processes go on as they are when their own parameters stay (a
        // scenario's ramp of the rate changes the parameters every millisecond).
        const Delayer::Config delay = delay_config(p);
        if (reseed || !(delay == delayer_.config())) delayer_.configure(delay, tables);
        rate_.set_window(p.rate_window);
        if (rate_.has_estimate()) delayer_.on_rate(rate_.rate_pps());
        spacer_.configure(p.rate_bps, p.queue_limit_bytes);
        policer_.configure(p.rate_bps, p.policer_burst_bytes);
        trace_.configure(p.trace.get());
        configure_bottleneck(p, had_params);
        const LossProcess::Config loss{p.loss_model, p.loss_probability, p.ge_p,
                                       p.ge_r,       p.ge_loss_good,     p.ge_loss_bad};
        if (reseed || !(loss == loss_config_)) {
            loss_.configure(loss);
            loss_config_ = loss;
            to_loss_ = loss_.gap(loss_rng_);
        }
        overhead_ = p.byte_accounting == ByteAccounting::wire ? kEthernetWireOverhead : 0;
        if (had_params && was_fifo != uses_fifo()) move_queued(was_fifo);
        if (delay_stats_.count == 0) delay_stats_.shift = static_cast<double>(p.mean_delay);
        publish_state();
    }
    /// set_params with the tables prepared here (sharing those in use where they fit): for
    /// callers whose thread may take the time, such as the simulator and tests.
    void set_params(const LinkParams& p) { set_params(p, prepare(p, delayer_.tables())); }

    /// Shares the limiter with every Emulator given the same `link`, each on its own thread
    /// (the data plane's workers of one direction): one spacer or policer for all of them,
    /// with this Emulator's rate, backlog limit and burst (linkem/shared_link.hpp, also for
    /// what then differs: the link comes before the delay for every strategy). nullptr: the
    /// Emulator's own limiter (the default). Before the packet path runs.
    void share_limiter(SharedLink* link) { shared_link_ = link; }
    /// How often this Emulator reserved the shared link, and for how many packets in all
    /// (each reservation is one compare-and-swap on the link's word: see SharedLink).
    std::uint64_t link_reservations() const { return link_reservations_; }
    std::uint64_t link_reserved_packets() const { return link_reserved_packets_; }
    /// The most packets one reservation covers: ingest() reserves per chunk of this many.
    static constexpr std::size_t kMaxReservation = 64;

    const LinkParams& params() const { return params_; }

    /// Follows a scenario's track (nullptr: none, the parameters stay as they are): the
    /// parameters in force for packets that arrive at `now` become track->at(now - origin),
    /// changed by set_params() at the first arrival at or after each step's time or ramp's
    /// next grid point (a change matters only to the packets that arrive under it; those
    /// queued keep their times). The track must outlive its use here. On the packet path
    /// this costs one comparison per ingest() call.
    void follow(const ScenarioTrack* track, TimeNs origin) {
        track_ = track;
        track_origin_ = origin;
        next_change_ = track ? std::numeric_limits<TimeNs>::min() : kNoChange;
    }
    const ScenarioTrack* track() const { return track_; }

    /// The seed in use (the drawn one when params().seed == 0).
    std::uint64_t seed() const { return seed_; }

    /// Pre-allocates storage for n packets in every kind of queue (FIFO, reordering, the
    /// queue discipline's), whatever the parameters in force, and the smooth strategy's
    /// state: the data plane does this when it makes an Emulator, so that neither the packet
    /// path nor a later set_params (a switch of strategy, limiter or queue) reallocates.
    void reserve(std::size_t n) {
        delayer_.reserve();
        late_drops_.reserve(kChunk * 16);
        bq_.reserve(n, ParamLimits::kMaxFqFlows);
        fifo_.reserve(n);
        reorder_.reserve(n);
    }

    /// Takes n packets that arrived at `now`. Packets dropped (loss, limiter, full buffer)
    /// are written to `dropped` (room for n) if given, so the caller can free them; returns
    /// how many were dropped. Every other packet is now queued.
    ///
    /// Every arrival advances the delay series (also one the buffer then drops: the EMA's
    /// weight is set per packet of the measured arrival rate R); only packets the limiter
    /// passes reach the loss stage.
    std::size_t ingest(const Packet* pkts, std::size_t n, TimeNs now, Packet* dropped = nullptr) {
        return ingest_impl<false>(pkts, n, now, dropped, nullptr);
    }
    /// ingest() that also says what it did with each packet: fates[i] for pkts[i] (room for
    /// n). The same decisions as ingest(); a copy of the packet loop that writes them.
    [[gnu::noinline]] std::size_t ingest(const Packet* pkts, std::size_t n, TimeNs now,
                                         Packet* dropped, PacketFate* fates) {
        if (!fates) return ingest_impl<false>(pkts, n, now, dropped, nullptr);
        return ingest_impl<true>(pkts, n, now, dropped, fates);
    }

  private:
    template <bool kFates>
    [[gnu::always_inline]] std::size_t ingest_impl(const Packet* pkts, std::size_t n, TimeNs now,
                                                   Packet* dropped, PacketFate* fates) {
        if (n == 0) return 0;
        late_drops_.clear();
        if (now >= next_change_) [[unlikely]]
            follow_track(now);
        last_queued_ = false;
        if (rate_.on_arrivals(now, n)) {
            delayer_.on_rate(rate_.rate_pps());
            publish_state();
        }
        std::size_t n_dropped = 0;
        const bool fifo = uses_fifo();
        // Samples owed: one per sample period since the last. Several owed (a burst larger
        // than the rate of ingest calls allows at the sample rate): the call is split into
        // that many pieces and the last queued packet of each is followed.
        std::size_t owed = 0, step = kChunk;
        if (sampler_.due(now)) [[unlikely]]
            owed = sampler_.owed(n, now, step);
        for (std::size_t off = 0; off < n; off += step) {
            const std::size_t m = std::min(step, n - off);
            n_dropped +=
                ingest_piece<kFates>(pkts + off, m, now, dropped ? dropped + n_dropped : nullptr,
                                     fifo, kFates ? fates + off : nullptr);
            if (owed > 1 && last_queued_) [[unlikely]] {
                take_sample(now);
                --owed;
                last_queued_ = false;
            }
        }
        Counters::add(counters_.packets_in, n);
        Counters::set(counters_.in_flight, queued());
        if (owed != 0 && last_queued_) [[unlikely]]
            take_sample(now);
        // Still behind (a pause, or pieces that queued nothing): restart the schedule.
        if (owed != 0) sampler_.catch_up(now);
        return n_dropped;
    }

  public:
    /// Counts n packets of `bytes` bytes in all that arrived but that the caller could not
    /// hand over (the data plane: no buffer left for them) as arrived and dropped for
    /// `cause`, so that in = out + drops + in_flight still holds. They do not enter the rate
    /// estimate, the delay series or the limiter.
    void refuse(std::size_t n, std::uint64_t bytes, DropCause cause) {
        if (n == 0) return;
        Counters::add(counters_.packets_in, n);
        Counters::add(counters_.bytes_in, bytes);
        Counters::add(counters_.drops(cause), n);
    }

    /// Removes up to `max` packets whose transmission time is <= now, in order, into
    /// `out` (and their transmission times into `tx_out` if given). Returns the count.
    std::size_t drain(TimeNs now, Packet* out, std::size_t max, TimeNs* tx_out = nullptr) {
        if (bottleneck_ || !late_drops_.empty()) [[unlikely]]
            serve_bottleneck(now);
        if (telemetry_ && !tx_out) {
            tx_out = tx_scratch_.data();
            max = std::min(max, tx_scratch_.size());
        }
        const std::size_t n = uses_fifo() ? fifo_.pop_due(now, out, tx_out, max)
                                          : reorder_.pop_due(now, out, tx_out, max);
        if (telemetry_ && n) departed(now, tx_out, n);
        if (n) {
            if constexpr (requires(const Packet& p) { Traits::prefetch(p); }) {
                if (prefetch_ahead_) {
                    // Packets leave long after they arrived, so their headers are cold (the data
                    // plane's traits prefetch the mbuf). The packets next in line are fetched
                    // now, a drain ahead of their use, so that the memory latency overlaps the
                    // work in between; this burst's were fetched by the previous drain
                    // (prefetching them again costs little and covers the first drain after a
                    // pause). An idle poll (nothing due) fetches nothing.
                    for (std::size_t i = 0; i < n; ++i)
                        Traits::prefetch(out[i]);
                    const auto ahead = [](const Packet& p) { Traits::prefetch(p); };
                    if (uses_fifo())
                        fifo_.for_next(max, ahead);
                    else if constexpr (requires { reorder_.for_next(max, ahead); })
                        reorder_.for_next(max, ahead);
                }
            }
            count_out(out, n);
        }
        return n;
    }

    /// drain() that may leave the packets where they are: returns where the n drained
    /// packets are, either in buf (room for max) or inside the queue (valid until the next
    /// call on the emulator). Counts them as drain() does. No prefetching.
    std::pair<const Packet*, std::size_t> drain_view(TimeNs now, Packet* buf, std::size_t max) {
        if (bottleneck_ || !late_drops_.empty()) [[unlikely]]
            serve_bottleneck(now);
        TimeNs* tx = nullptr;
        if (telemetry_) {
            tx = tx_scratch_.data();
            max = std::min(max, tx_scratch_.size());
        }
        std::pair<const Packet*, std::size_t> r;
        if (uses_fifo()) {
            r = {buf, fifo_.pop_due(now, buf, tx, max)};
        } else {
            if constexpr (requires { reorder_.pop_due_view(now, buf, max, tx); })
                r = reorder_.pop_due_view(now, buf, max, tx);
            else
                r = {buf, reorder_.pop_due(now, buf, tx, max)};
        }
        if (r.second) {
            if (telemetry_) departed(now, tx, r.second);
            count_out(r.first, r.second);
        }
        return r;
    }

    // ------------------------------------------------------------------------ telemetry
    /// Switches on what the `delay` topic needs beyond the per-packet delay statistics
    /// (which ingest always keeps): the lateness of every departure (drain then also reads
    /// each packet's transmission time, and drains at most kTelemetryDrain packets per call)
    /// and, when sample_period > 0, one sampled packet per sample_period (several from one
    /// ingest call when its packets span several periods' worth) followed from
    /// arrival to departure (at most max_pending at once) into `sink`; what does not fit
    /// into the sink is counted in samples_dropped. Allocates; call before the packet path
    /// runs.
    void set_telemetry(DurationNs sample_period, std::size_t max_pending,
                       SpscRing<DelaySample>* sink) {
        telemetry_ = true;
        tx_scratch_.assign(kTelemetryDrain, 0);
        sampler_.configure(sample_period, max_pending, sink);
        drained_total_ = queued_total_ - fifo_.size() - reorder_.size();
    }
    static constexpr std::size_t kTelemetryDrain = 1024;

    /// The interval since the previous report (or the first packet): a consistent copy of
    /// the counters, the delay statistics and the wait of every packet queued and the
    /// lateness of every packet that left. Starts the next interval. On the emulator's thread,
    /// between calls that move packets.
    IntervalReport take_report(TimeNs now, std::uint64_t params_generation) {
        IntervalReport r;
        r.start_ns = report_start_ != kNoTime ? report_start_ : now;
        r.end_ns = now;
        r.counters = counters_.snapshot();
        r.params_generation = params_generation;
        r.delay = delay_stats_;
        r.lateness = lateness_stats_;
        r.wait = wait_sums_;
        r.queue = queue_report(now);
        r.samples_dropped = sampler_.dropped();
        report_start_ = now;
        delay_stats_.reset(static_cast<double>(params_.mean_delay));
        lateness_stats_.reset(0);
        wait_sums_ = WaitSums{};
        return r;
    }
    std::uint64_t samples_dropped() const { return sampler_.dropped(); }

    /// Whether at least k >= 1 packets are due at `now` (the next drain(now, .., k) would
    /// return k). Exact in correlated mode; in reordered mode it may also be true with fewer
    /// once the next calendar bucket has begun (CalendarQueue::due_at_least).
    bool due_at_least(TimeNs now, std::size_t k) const {
        return uses_fifo() ? fifo_.due_at_least(now, k) : reorder_.due_at_least(now, k);
    }

    /// Whether drain() prefetches the packets it returns and those next in line (with
    /// Traits::prefetch; on by default). Off when the handles point to nothing the caller
    /// reads when sending (the data plane's exchanged buffers): finding the next packets in
    /// a reorder queue costs loads of its own.
    void set_prefetch_ahead(bool on) { prefetch_ahead_ = on; }

    /// Earliest transmission time among queued packets (for event-driven callers).
    std::optional<TimeNs> next_departure() {
        const std::optional<TimeNs> q = uses_fifo() ? fifo_.next_time() : reorder_.next_time();
        if (!bottleneck_) return q;
        const std::optional<TimeNs> b = bq_.next_service();
        return b && (!q || *b < *q) ? b : q;
    }

    /// A packet the queue discipline dropped after ingest() had taken it (at its dequeue, or
    /// from FQ-CoDel's fattest flow when the queue was full), already counted: the caller
    /// frees it. late_drops() holds those of the last ingest(), drain() or drain_view() call
    /// (each starts a new list); none without a queue discipline (LinkParams::queue).
    struct LateDrop {
        Packet pkt;
        TimeNs at;
        DropCause cause;
    };
    const std::vector<LateDrop>& late_drops() const { return late_drops_; }
    /// The queue discipline's queue (empty without one).
    std::size_t queue_packets() const { return bq_.packets(); }
    std::uint64_t ecn_marked() const {
        return counters_.ecn_marked.load(std::memory_order_relaxed);
    }

    std::size_t in_flight() const { return queued(); }
    const Counters& counters() const { return counters_; }
    CounterSnapshot snapshot() const { return counters_.snapshot(); }
    double alpha() const { return delayer_.alpha(); }
    double rate_pps() const { return rate_.rate_pps(); }
    const Delayer& delayer() const { return delayer_; }
    /// Packets that waited behind their predecessor (FIFO: their own transmission time came
    /// before the predecessor's, so they left at its time); the counter `waited`.
    std::uint64_t waited() const { return counters_.waited.load(std::memory_order_relaxed); }
    const RateEstimator& rate_estimator() const { return rate_; }

  private:
    bool uses_fifo() const { return params_.strategy != Strategy::reordered; }

    static Delayer::Config delay_config(const LinkParams& p) {
        return Delayer::Config{p.strategy, p.distribution, static_cast<double>(p.mean_delay),
                               static_cast<double>(p.jitter), static_cast<double>(p.half_life)};
    }

    static constexpr TimeNs kNoChange = std::numeric_limits<TimeNs>::max();

    // The scenario's next change has come: the parameters of the position `now` is at.
    [[gnu::noinline, gnu::cold]] void follow_track(TimeNs now) {
        const DurationNs position = now - track_origin_;
        const LinkParams p = track_->at(position);
        DelayTables made{track_->gamma_table(p)};  // (made by the track, off the packet path)
        set_params(p, prepare(p, made.gamma ? made : delayer_.tables()));
        const DurationNs next = track_->next_change(std::max<DurationNs>(position, 0));
        next_change_ = next == kNever ? kNoChange : track_origin_ + next;
    }

    // The transmission time a queue keeps for tx (the calendar queue rounds it up).
    static TimeNs queued_tx(TimeNs tx) {
        if constexpr (requires { ReorderQueue<Packet>::round(tx); })
            return ReorderQueue<Packet>::round(tx);
        else
            return tx;
    }

    // Follows the last packet the ingest call queued (if there is room to follow one more).
    // FIFO: it leaves when as many packets as were queued before it have left (its
    // ordinal); reordered: when a packet with its transmission time or a later one has.
    void take_sample(TimeNs now) {
        const bool fifo = uses_fifo();
        const TimeNs tx = fifo ? sample_tx_ : queued_tx(sample_tx_);
        sampler_.follow(now, static_cast<DurationNs>(sample_delay_ + 0.5), tx,
                        fifo ? queued_total_ - 1 : static_cast<std::uint64_t>(tx));
    }

    // n packets left at `now` with transmission times tx[0, n), non-decreasing (every queue
    // emits in tx order).
    void departed(TimeNs now, const TimeNs* tx, std::size_t n) {
        add_lateness(lateness_stats_, now, tx, n);
        drained_total_ += n;
        if (!sampler_.following()) return;
        sampler_.departed(now,
                          uses_fifo() ? drained_total_ : static_cast<std::uint64_t>(tx[n - 1]) + 1);
    }
    std::size_t queued() const { return fifo_.size() + reorder_.size() + bq_.packets(); }

    // Counts n drained packets as sent.
    void count_out(const Packet* out, std::size_t n) {
        std::uint64_t bytes = 0;
        for (std::size_t i = 0; i < n; ++i)
            bytes += Traits::length(out[i]);
        Counters::add(counters_.packets_out, n);
        Counters::add(counters_.bytes_out, bytes);
        Counters::set(counters_.in_flight, queued());
    }

    void publish_state() {
        counters_.alpha.store(delayer_.alpha(), std::memory_order_relaxed);
        counters_.rate_pps.store(rate_.rate_pps(), std::memory_order_relaxed);
        Counters::set(counters_.rate_intervals, rate_.intervals());
    }

    // Strategy switched between FIFO and reordering: move every queued packet over, in
    // transmission-time order. O(queued) once, on the thread that owns the emulator.
    void move_queued(bool from_fifo) {
        // Samples in flight were keyed by the old queue's order: drop them.
        sampler_.clear();
        constexpr std::size_t kStep = 256;
        Packet pk[kStep];
        TimeNs tx[kStep];
        constexpr TimeNs kAll = std::numeric_limits<TimeNs>::max();
        for (;;) {
            const std::size_t n = from_fifo ? fifo_.pop_due(kAll, pk, tx, kStep)
                                            : reorder_.pop_due(kAll, pk, tx, kStep);
            if (n == 0) break;
            for (std::size_t i = 0; i < n; ++i) {
                if (from_fifo) {
                    reorder_.push(tx[i], pk[i]);
                } else {
                    last_tx_ = std::max(last_tx_, tx[i]);
                    fifo_.push(tx[i], pk[i]);
                }
            }
        }
    }

    // ------------------------------------------------------------------------ ingest
    // ingest() takes its packets in pieces of at most kChunk. Each piece runs through the
    // chunk loop (ingest_chunk) made for the limiter in force and the queue (FIFO or
    // reordering), so that the loop holds no test of either.

    // One piece: the chunk loop of the limiter and queue in force.
    template <bool kF>
    [[gnu::always_inline]] std::size_t ingest_piece(const Packet* pkts, std::size_t n, TimeNs now,
                                                    Packet* dropped, bool fifo, PacketFate* f) {
        if (bottleneck_) [[unlikely]]
            return ingest_queued<kF>(pkts, n, now, dropped, fifo, f);
        // A limiter shared with other Emulators (share_limiter): reserved per chunk.
        if (shared_link_ && (params_.limiter == Limiter::spacer ||
                             params_.limiter == Limiter::policer)) [[unlikely]]
            return ingest_shared<kF>(pkts, n, now, dropped, fifo, f);
        switch (params_.limiter) {
            case Limiter::spacer:
                return ingest_spaced<kF>(pkts, n, now, dropped, fifo, f);
            case Limiter::policer:
                return fifo ? ingest_chunk<Limiter::policer, true, false, false, kF>(pkts, n, now,
                                                                                     dropped, f)
                            : ingest_chunk<Limiter::policer, false, false, false, kF>(pkts, n, now,
                                                                                      dropped, f);
            case Limiter::trace:
                return ingest_trace<kF>(pkts, n, now, dropped, fifo, f);
            case Limiter::none:
            default:
                return fifo ? ingest_chunk<Limiter::none, true, false, false, kF>(pkts, n, now,
                                                                                  dropped, f)
                            : ingest_chunk<Limiter::none, false, false, false, kF>(pkts, n, now,
                                                                                   dropped, f);
        }
    }

    template <bool kF>
    [[gnu::always_inline]] std::size_t ingest_spaced(const Packet* pkts, std::size_t n, TimeNs now,
                                                     Packet* dropped, bool fifo, PacketFate* f) {
        // Far from the limit (the common case unless the link is overloaded): no packet of
        // the chunk can overflow it, so the loop skips the check. The packets reach the
        // spacer at `now` (reordered) or at their delayed times, which never fall below the
        // previous packet's (FIFO).
        const double t_min =
            fifo ? std::max(static_cast<double>(now), spacer_floor_) : static_cast<double>(now);
        if (spacer_.fits_whole(t_min, chunk_bytes(pkts, n)))
            return fifo ? ingest_chunk<Limiter::spacer, true, true, false, kF>(pkts, n, now,
                                                                               dropped, f)
                        : ingest_chunk<Limiter::spacer, false, true, false, kF>(pkts, n, now,
                                                                                dropped, f);
        return fifo
                   ? ingest_chunk<Limiter::spacer, true, false, false, kF>(pkts, n, now, dropped, f)
                   : ingest_chunk<Limiter::spacer, false, false, false, kF>(pkts, n, now, dropped,
                                                                            f);
    }

    template <bool kF>
    [[gnu::always_inline]] std::size_t ingest_shared(const Packet* pkts, std::size_t n, TimeNs now,
                                                     Packet* dropped, bool fifo, PacketFate* f) {
        if (params_.limiter == Limiter::spacer)
            return fifo ? ingest_chunk<Limiter::spacer, true, false, true, kF>(pkts, n, now,
                                                                               dropped, f)
                        : ingest_chunk<Limiter::spacer, false, false, true, kF>(pkts, n, now,
                                                                                dropped, f);
        return fifo
                   ? ingest_chunk<Limiter::policer, true, false, true, kF>(pkts, n, now, dropped, f)
                   : ingest_chunk<Limiter::policer, false, false, true, kF>(pkts, n, now, dropped,
                                                                            f);
    }

    // The trace limiter's chunks, out of line, so that the other limiters' loops, inlined
    // into ingest(), are laid out as without it.
    template <bool kF>
    [[gnu::noinline]] std::size_t ingest_trace(const Packet* pkts, std::size_t n, TimeNs now,
                                               Packet* dropped, bool fifo, PacketFate* f) {
        return fifo ? ingest_chunk<Limiter::trace, true, false, false, kF>(pkts, n, now, dropped, f)
                    : ingest_chunk<Limiter::trace, false, false, false, kF>(pkts, n, now, dropped,
                                                                            f);
    }

    static constexpr std::size_t kChunk = kMaxReservation;

    // ------------------------------------------------------------------------ the queue
    // With a queue discipline (LinkParams::uses_bottleneck) the limiter's packets wait in a
    // real queue, the Bottleneck, which decides at their dequeue (linkem/bottleneck.hpp):
    //   ingest: 1 delay -> loss -> the queue (its limit; PIE's early drop)
    //   later:  the queue's dequeue at the link's pace (CoDel's drops and marks) -> 5 buffer
    // FIFO strategies: a packet reaches the queue at its delayed time, no earlier than its
    // predecessor (as it reaches the spacer); reordered: at its arrival, and its delay is
    // added to its dequeue time. The queue's dequeues up to `now` run at each drain and
    // before each arrival (Bottleneck::arrive), so its decisions do not depend on when the
    // caller polls.
    struct QueuedPacket {
        Packet pkt;
        DurationNs delay;  // drawn for it (>= 0)
        TimeNs arrival;
        bool sampled;  // the delay telemetry follows it (take_turn)
    };
    struct QueueSink {
        Emulator& e;
        void sent(const QueuedPacket& q, TimeNs tau, TimeNs tx, bool marked) {
            e.queue_sent(q, tau, tx, marked);
        }
        void dropped(const QueuedPacket& q, TimeNs at, DropCause c) {
            Counters::add(e.counters_.drops(c), 1);
            e.late_drops_.push_back(LateDrop{q.pkt, at, c});
        }
        bool mark(const QueuedPacket& q) { return e.mark_ce(q.pkt); }
    };

    bool mark_ce(const Packet& p) {
        if constexpr (requires { Traits::mark_ce(p); }) {
            if (!Traits::mark_ce(p)) return false;
            Counters::add(counters_.ecn_marked, 1);
            return true;
        } else {
            return false;
        }
    }

    static std::uint32_t flow_hash(const Packet& p) {
        if constexpr (requires { Traits::flow_hash(p); })
            return Traits::flow_hash(p);
        else
            return 0;
    }
    static std::uint32_t queued_flow_hash(const QueuedPacket& q) { return flow_hash(q.pkt); }

    // The queue dequeued q at tau (marked CE or not); it leaves the link at tx. The traits
    // may hear of it: Traits::dequeued(packet, tx, wait at the limiter, marked).
    void queue_sent(const QueuedPacket& q, TimeNs tau, TimeNs tx, bool marked) {
        const bool fifo = uses_fifo();
        if (push_departure(q.pkt, tx, q.delay)) Counters::add(counters_.waited, 1);
        // The wait at the limiter: FIFO, after the packet's delayed time; reordered, after
        // its arrival (its delay comes after the queue).
        const DurationNs wait = fifo ? tau - q.arrival - q.delay : tau - q.arrival;
        wait_sums_.spacer_ns += static_cast<double>(wait);
        if (q.sampled)
            sampler_.follow(q.arrival, q.delay, fifo ? tx : queued_tx(tx),
                            fifo ? queued_total_ - 1 : static_cast<std::uint64_t>(queued_tx(tx)),
                            false);
        if constexpr (requires { Traits::dequeued(q.pkt, tx, tx, false); })
            Traits::dequeued(q.pkt, tx, wait, marked);
    }

    // Queues pkt for its departure at tx: FIFO, no earlier than its predecessor's (true when
    // it had to wait for it); reordered, at tx + delay. tx becomes the time it is queued
    // with.
    bool push_departure(const Packet& pkt, TimeNs& tx, DurationNs delay) {
        ++queued_total_;
        if (!uses_fifo()) {
            tx += delay;
            reorder_.push(tx, pkt);
            return false;
        }
        const bool waited = tx < last_tx_;
        if (waited) tx = last_tx_;
        last_tx_ = tx;
        fifo_.push(tx, pkt);
        return waited;
    }

    [[gnu::noinline]] void serve_bottleneck(TimeNs now) {
        late_drops_.clear();
        if (!bottleneck_ || bq_.empty()) return;
        QueueSink sink{*this};
        bq_.serve(now, sink);
        Counters::set(counters_.in_flight, queued());
    }

    void configure_bottleneck(const LinkParams& p, bool had_params) {
        const bool was = bottleneck_;
        bottleneck_ = p.uses_bottleneck();
        if (bottleneck_) {
            if (p.limiter == Limiter::trace)
                bq_.configure(p.queue_config(), p.trace.get(), &queued_flow_hash);
            else
                bq_.configure(p.queue_config(), p.rate_bps, &queued_flow_hash);
            bq_.seed(seed_ ^ kQueueStream ^ (stream_ * kOtherStream));
            if (!was && had_params) bq_.set_link_free(spacer_.free_time());
        } else if (was) {
            release_bottleneck();
        }
    }

    // The queue discipline is switched off: its packets go on through the limiter in force,
    // in the order they reached the queue, behind what the queue's link had begun.
    void release_bottleneck() {
        spacer_.set_free_time(std::max(spacer_.free_time(), bq_.link_free()));
        bq_.take_all([&](const QueuedPacket& q, TimeNs enq, std::uint32_t bytes) {
            TimeNs tx = enq;
            if (params_.limiter == Limiter::spacer)
                spacer_.schedule_fit(static_cast<double>(enq), bytes, tx);
            else if (params_.limiter == Limiter::trace)
                tx = trace_.schedule(enq, DeliveryTrace::charge(bytes));
            push_departure(q.pkt, tx, q.delay);
        });
    }

    QueueReport queue_report(TimeNs now) {
        QueueReport r;
        if (bottleneck_) {
            const QueueSojourn so = bq_.take_sojourn();
            r.backlog_bytes = bq_.bytes();
            r.backlog_packets = bq_.packets();
            r.sojourn_count = so.count;
            r.sojourn_sum_ns = so.sum_ns;
            r.sojourn_max_ns = so.max_ns;
        } else if (params_.limiter == Limiter::spacer && !shared_link_) {
            // FIFO: the spacer's clock is the packets' delayed times (its input comes after
            // the delay); its queue is what is ahead of the latest of them, not of now.
            const double at = uses_fifo() ? later(static_cast<double>(now), spacer_floor_)
                                          : static_cast<double>(now);
            r.backlog_bytes = static_cast<std::uint64_t>(spacer_.backlog_bytes(at));
            r.sojourn_count = wait_sums_.count;
            r.sojourn_sum_ns = wait_sums_.spacer_ns;
        }
        return r;
    }

    // A piece of packets into the queue discipline's queue (the stages above).
    template <bool kFates>
    [[gnu::noinline]] std::size_t ingest_queued(const Packet* pkts, std::size_t n, TimeNs now,
                                                Packet* dropped, bool fifo, PacketFate* fates) {
        double delay[kChunk];
        draw_delays(delay, n, now);
        std::size_t n_dropped = 0;
        std::uint64_t bytes = 0, clamped = 0;
        QueueSink sink{*this};
        const bool trace = params_.limiter == Limiter::trace;
        const bool fq = params_.queue == QueueKind::fq_codel;
        std::size_t room = buffer_room();
        for (std::size_t i = 0; i < n; ++i) {
            const Packet& pkt = pkts[i];
            const std::uint32_t len = Traits::length(pkt);
            bytes += len;
            double d = delay[i];
            const auto drop = [&](DropCause c) {
                Counters::add(counters_.drops(c), 1);
                if (dropped) dropped[n_dropped] = pkt;
                ++n_dropped;
                if constexpr (kFates) fate_dropped(fates[i], d, 0, c);
            };
            if (room == 0) {
                drop(DropCause::buffer_full);
                continue;
            }
            if (d < 0) {
                d = 0;
                ++clamped;
            }
            TimeNs enq = now;
            double t_in = static_cast<double>(now);
            if (fifo) {
                t_in = later(static_cast<double>(now) + d, spacer_floor_);
                spacer_floor_ = t_in;
                enq = ceil_ns(t_in);
            }
            if (to_loss_ == 0) [[unlikely]] {
                to_loss_ = loss_.gap(loss_rng_);
                drop(DropCause::loss);
                continue;
            }
            --to_loss_;
            const bool sampled = sampler_.due(now);
            const DurationNs dn = static_cast<DurationNs>(d + 0.5);
            const auto r = bq_.arrive(enq, QueuedPacket{pkt, dn, now, sampled},
                                      trace ? len : len + overhead_, fq ? flow_hash(pkt) : 0, sink);
            if (!r.queued) {
                drop(r.cause);
                continue;
            }
            --room;
            if (sampled) sampler_.take_turn(now);
            delay_stats_.add(d);
            ++wait_sums_.count;
            if (fifo) wait_sums_.order_ns += t_in - static_cast<double>(now) - d;
            if constexpr (kFates) fates[i] = PacketFate{enq, dn, 0, PacketFate::kQueued};
        }
        Counters::add(counters_.bytes_in, bytes);
        if (clamped) Counters::add(counters_.delays_clamped, clamped);
        return n_dropped;
    }

    // Bytes of n packets as the limiter counts them (with the per-packet overhead).
    std::uint64_t chunk_bytes(const Packet* pkts, std::size_t n) const {
        std::uint64_t b = 0;
        for (std::size_t i = 0; i < n; ++i)
            b += Traits::length(pkts[i]);
        return b + n * overhead_;
    }

    // The state the per-packet loop of ingest_chunk updates, copied out of the Emulator
    // before the loop and written back once after it (store_chunk_state), so that it lives in
    // registers: through `this`, every store into the queue could alias it and would force
    // it back to memory on each packet. The compiler keeps a struct in registers only if
    // nothing takes the address of it or of a member (no lambda captures it, no std::min or
    // std::max, which return references, compares its members). The spacer's copy is kept
    // apart: its own functions take its address.
    struct ChunkState {
        std::size_t room;        // packets the buffer still has room for
        std::uint64_t to_loss;   // packets that pass before the next loss (LossProcess::gap)
        double floor;            // FIFO: latest time a packet reached the spacer or trace
        TimeNs last_tx;          // FIFO: the previous packet's transmission time
        std::uint32_t overhead;  // bytes the limiter adds to each frame
    };

    // What a chunk adds to the counters and to the telemetry, summed in registers and added
    // once (fold_chunk). In registers on ChunkState's terms, and while every index into
    // `drop` is a constant.
    struct ChunkTally {
        std::uint64_t bytes = 0, clamped = 0, waited = 0, drop[kDropCauseCount] = {};
        std::size_t n_dropped = 0;
        // The delays of the packets queued, around `shift` (RunningStats).
        double shift, g_sum = 0, g_sq = 0, g_min, g_max;
        std::uint64_t g_n = 0;
        // Their wait (WaitSums): the sum of their transmission times (an integer addition a
        // packet; with the delays' sum it gives their whole wait) and, FIFO with a spacer, of
        // their times at the spacer, each held to the previous one's (the order wait there).
        std::int64_t tx_sum = 0, t_in_sum = 0;
        // The last packet queued (a sample candidate): its index and, reordered, its
        // transmission time (FIFO: ChunkState::last_tx).
        std::size_t last_i = 0;
        TimeNs last_t = 0;

        [[gnu::always_inline]] void drop_one(DropCause c, const Packet& pkt, Packet* dropped) {
            ++drop[static_cast<int>(c)];
            if (dropped) dropped[n_dropped] = pkt;
            ++n_dropped;
        }
    };

    // Up to kChunk packets through the stages of the pipeline (the header's list): 1 delay,
    // 2 limiter and 4 transmission time (schedule), 3 loss, 5 buffer. The loss stage is a
    // countdown to the next loss, drawn once per loss.
    // kSpacerFits: the spacer accepted the chunk whole (Spacer::fits_whole: its times, the
    // arrival time `now` and later, never decrease within the chunk), so no packet is checked
    // against its limit.
    // kShared: the limiter is the shared link's (share_limiter): the packets the buffer has
    // room for (at the chunk's start) reserve it in one go before the loop; the spacer's time
    // then comes before the delay for every strategy. The packets beyond that room are
    // dropped as buffer_full, even when losses in the chunk would have made room for some.
    // kFates: fates[i] says what became of packet i (ingest's fates).
    template <Limiter L, bool Fifo, bool kSpacerFits = false, bool kShared = false,
              bool kFates = false>
    std::size_t ingest_chunk(const Packet* pkts, std::size_t n, TimeNs now, Packet* dropped,
                             [[maybe_unused]] PacketFate* fates) {
        double delay[kChunk];
        draw_delays(delay, n, now);
        ChunkState s{buffer_room(), to_loss_, spacer_floor_, last_tx_, overhead_};
        [[maybe_unused]] Spacer spacer = spacer_;
        ChunkTally t{
            .shift = delay_stats_.shift, .g_min = delay_stats_.min, .g_max = delay_stats_.max};
        [[maybe_unused]] TimeNs link_at[kChunk];
        [[maybe_unused]] std::size_t linked = 0;          // packets that reserved the shared link
        const std::size_t fit = s.room < n ? s.room : n;  // (std::min would take s's address)
        if constexpr (kShared) linked = reserve_link<L>(pkts, fit, now, link_at);
        auto queue = writer<Fifo>(fit);
        for (std::size_t i = 0; i < n; ++i) {
            const Packet& pkt = pkts[i];
            const std::uint32_t len = Traits::length(pkt);
            t.bytes += len;
            if (s.room == 0 || (kShared && i >= linked)) {
                t.drop_one(DropCause::buffer_full, pkt, dropped);
                if constexpr (kFates) fate_dropped(fates[i], delay[i], 0, DropCause::buffer_full);
                continue;
            }
            // 1 delay
            double d = delay[i];
            if (d < 0) {
                d = 0;
                delay[i] = 0;
                ++t.clamped;
            }
            // 2 limiter (and 4: the transmission time)
            TimeNs tx;
            if (!schedule<L, Fifo, kSpacerFits, kShared>(s, spacer, d, len, now, link_at, i, tx)) {
                const DropCause c = L == Limiter::spacer ? DropCause::spacer : DropCause::policer;
                t.drop_one(c, pkt, dropped);
                if constexpr (kFates) fate_dropped(fates[i], d, 0, c);
                continue;
            }
            [[maybe_unused]] DurationNs limiter_wait = 0;
            if constexpr (kFates)
                limiter_wait = limiter_wait_of<L, Fifo, kShared>(s, d, tx, now, link_at, i);
            // 3 loss
            if (s.to_loss == 0) [[unlikely]] {
                s.to_loss = loss_.gap(loss_rng_);
                t.drop_one(DropCause::loss, pkt, dropped);
                if constexpr (kFates) fate_dropped(fates[i], d, limiter_wait, DropCause::loss);
                continue;
            }
            --s.to_loss;
            // 5 buffer. FIFO: a packet leaves no earlier than its predecessor.
            if constexpr (Fifo) {
                t.waited += tx < s.last_tx;
                tx = tx < s.last_tx ? s.last_tx : tx;
                s.last_tx = tx;
            }
            queue.push(tx, pkt);
            --s.room;
            if constexpr (kFates)
                fates[i] = PacketFate{tx, static_cast<DurationNs>(d + 0.5), limiter_wait,
                                      PacketFate::kQueued};
            tally_queued<L, Fifo, kShared>(t, s, i, d, tx, now, link_at);
        }
        queue.commit();
        fold_chunk<L, Fifo>(t, s, delay, now);
        store_chunk_state<L, Fifo, kShared>(s, spacer);
        return t.n_dropped;
    }

    // n delays for packets that arrive at `now`. One packet per call (the simulator's
    // arrivals): the single draw, inlined, costs less than next_n's loop set-up. Both give
    // the same values.
    [[gnu::always_inline]] void draw_delays(double* delay, std::size_t n, TimeNs now) {
        if (n == 1)
            delay[0] = delayer_.next(rng_, now);
        else
            delayer_.next_n(rng_, delay, n, now);
    }

    // The queue's writer, with room for k packets (FIFO).
    template <bool Fifo>
    [[gnu::always_inline]] auto writer(std::size_t k) {
        if constexpr (Fifo)
            return fifo_.writer(k);
        else
            return reorder_.writer();
    }

    // The later of two times, by value (see ChunkState).
    [[gnu::always_inline]] static double later(double a, double b) { return a < b ? b : a; }

    // Packets the buffer has room for.
    [[gnu::always_inline]] std::size_t buffer_room() const {
        const std::size_t q = queued();
        const std::uint64_t limit = params_.buffer_limit_packets;
        return q < limit ? limit - q : 0;
    }

    template <Limiter L, bool Fifo, bool kShared>
    [[gnu::always_inline]] void store_chunk_state(const ChunkState& s, const Spacer& spacer) {
        to_loss_ = s.to_loss;
        if constexpr (L == Limiter::spacer && !kShared) {
            spacer_ = spacer;
            if constexpr (Fifo) spacer_floor_ = s.floor;
        }
        if constexpr (L == Limiter::trace && Fifo) spacer_floor_ = s.floor;
        if constexpr (Fifo) last_tx_ = s.last_tx;
    }

    // The shared link (share_limiter) for the first n packets of a chunk, in one
    // reservation: each one's time at the link, or SharedLink::kDropped, into link_at.
    // Returns n.
    template <Limiter L>
    [[gnu::always_inline]] std::size_t reserve_link(const Packet* pkts, std::size_t n, TimeNs now,
                                                    TimeNs* link_at) {
        std::uint32_t charged[kChunk];
        for (std::size_t i = 0; i < n; ++i)
            charged[i] = Traits::length(pkts[i]) + overhead_;
        shared_link_->reserve(
            now, charged, n, 8e9 / params_.rate_bps,
            static_cast<double>(L == Limiter::spacer ? params_.queue_limit_bytes
                                                     : params_.policer_burst_bytes),
            link_carry_, link_at);
        link_reservations_ += n != 0;
        link_reserved_packets_ += n;
        return n;
    }

    // 2 limiter and 4 transmission time of packet i (delay d, len bytes) into tx; false when
    // the limiter drops the packet.
    template <Limiter L, bool Fifo, bool kSpacerFits, bool kShared>
    [[gnu::always_inline]] bool schedule(ChunkState& s, Spacer& spacer, double d, std::uint32_t len,
                                         TimeNs now, const TimeNs* link_at, std::size_t i,
                                         TimeNs& tx) {
        if constexpr (kShared) {
            if (link_at[i] == SharedLink::kDropped) return false;
            tx = (L == Limiter::spacer ? link_at[i] : now) + static_cast<TimeNs>(d + 0.5);
            return true;
        } else if constexpr (L == Limiter::spacer || L == Limiter::trace) {
            // FIFO: the spacer (or trace link) follows the delay. A packet cannot leave
            // before its predecessor, so it reaches the spacer no earlier than that one did;
            // feeding the leaky bucket this non-decreasing time makes its fill state the
            // backlog caused by the rate alone, not the FIFO's hold-up. Reordered: the
            // spacer comes first (a link of the given rate, then a path whose delay varies
            // per packet). Spacing after a reordering buffer would mean sorting twice, and
            // spacing the unsorted tx times in arrival order would count every
            // shorter-delayed packet as backlog.
            const double t_in =
                Fifo ? later(static_cast<double>(now) + d, s.floor) : static_cast<double>(now);
            if constexpr (L == Limiter::trace) {
                tx = trace_.schedule(ceil_ns(t_in), DeliveryTrace::charge(len));
            } else if constexpr (kSpacerFits) {
                spacer.schedule_fit(t_in, len + s.overhead, tx);
            } else if (!spacer.schedule(t_in, len + s.overhead, tx)) {
                return false;
            }
            if constexpr (Fifo)
                s.floor = t_in;
            else
                tx += static_cast<TimeNs>(d + 0.5);
            return true;
        } else {
            if constexpr (L == Limiter::policer)
                if (!policer_.admit(now, len + s.overhead)) return false;
            tx = now + static_cast<TimeNs>(d + 0.5);
            return true;
        }
    }

    // A dropped packet's fate (delay d, as drawn; 0 when negative).
    static void fate_dropped(PacketFate& f, double d, DurationNs limiter_wait, DropCause c) {
        f = PacketFate{0, d > 0 ? static_cast<DurationNs>(d + 0.5) : 0, limiter_wait,
                       static_cast<std::uint8_t>(c)};
    }

    // How long the limiter held packet i (delay d), which schedule() gave the time tx: the
    // spacer's or trace link's wait after the time it reached it (FIFO: its delayed time, no
    // earlier than its predecessor's, s.floor; reordered: its arrival), or the shared link's.
    template <Limiter L, bool Fifo, bool kShared>
    [[gnu::always_inline]] static DurationNs limiter_wait_of(const ChunkState& s, double d,
                                                             TimeNs tx, TimeNs now,
                                                             const TimeNs* link_at, std::size_t i) {
        DurationNs w = 0;
        if constexpr (kShared) {
            if constexpr (L == Limiter::spacer) w = link_at[i] - now;
        } else if constexpr (L == Limiter::spacer || L == Limiter::trace) {
            if constexpr (Fifo)
                w = tx - static_cast<TimeNs>(s.floor + 0.5);
            else
                w = tx - now - static_cast<DurationNs>(d + 0.5);
        }
        return w > 0 ? w : 0;
    }

    // Packet i, delay d, was queued with transmission time tx: its part of the telemetry.
    template <Limiter L, bool Fifo, bool kShared>
    [[gnu::always_inline]] void tally_queued(ChunkTally& t, const ChunkState& s, std::size_t i,
                                             double d, TimeNs tx, TimeNs now,
                                             const TimeNs* link_at) {
        t.tx_sum += tx;
        if constexpr (Fifo && L == Limiter::spacer) {
            // The order wait is sum(t_in - now - d) - the rest of the wait the spacer's.
            // Shared, the link comes first (tx = link_at + d, then the FIFO's hold): the
            // spacer's part is link_at - now, so t_in counts as tx - (link_at - now).
            if constexpr (kShared)
                t.t_in_sum += tx - (link_at[i] - now);
            else
                t.t_in_sum += static_cast<std::int64_t>(s.floor + 0.5);
        }
        const double g = d - t.shift;
        t.g_sum += g;
        t.g_sq += g * g;
        t.g_min = d < t.g_min ? d : t.g_min;
        t.g_max = d > t.g_max ? d : t.g_max;
        ++t.g_n;
        t.last_i = i;
        if constexpr (!Fifo) t.last_t = tx;
    }

    // Adds a chunk's tally to the counters, the delay statistics and the wait sums, and makes
    // its last queued packet the sample candidate.
    template <Limiter L, bool Fifo>
    [[gnu::always_inline]] void fold_chunk(const ChunkTally& t, const ChunkState& s,
                                           const double* delay, TimeNs now) {
        if (t.g_n) {
            delay_stats_.count += t.g_n;
            delay_stats_.sum += t.g_sum;
            delay_stats_.sumsq += t.g_sq;
            delay_stats_.min = t.g_min;
            delay_stats_.max = t.g_max;
            fold_wait<L, Fifo>(t, now);
            queued_total_ += t.g_n;
            last_queued_ = true;
            sample_delay_ = delay[t.last_i];
            sample_tx_ = Fifo ? s.last_tx : t.last_t;
        }
        Counters::add(counters_.bytes_in, t.bytes);
        if (t.clamped) Counters::add(counters_.delays_clamped, t.clamped);
        if (t.waited) Counters::add(counters_.waited, t.waited);  // (always 0 when reordered)
        // Cause by cause (kDropCauses), each index a constant (see ChunkTally).
        [&]<std::size_t... C>(std::index_sequence<C...>) {
            (count_drops(t, static_cast<DropCause>(C)), ...);
        }
        (std::make_index_sequence<kDropCauseCount>{});
    }

    [[gnu::always_inline]] void count_drops(const ChunkTally& t, DropCause c) {
        if (const std::uint64_t k = t.drop[static_cast<int>(c)])
            Counters::add(counters_.drops(c), k);
    }

    // The wait of the packets a chunk queued: scheduled minus drawn delay,
    // sum(tx - now) - sum(d), split between the spacer and the order kept.
    template <Limiter L, bool Fifo>
    [[gnu::always_inline]] void fold_wait(const ChunkTally& t, TimeNs now) {
        const auto n = static_cast<std::int64_t>(t.g_n);
        const double delays = static_cast<double>(t.g_n) * t.shift + t.g_sum;
        const double wait = static_cast<double>(t.tx_sum - n * now) - delays;
        wait_sums_.count += t.g_n;
        if constexpr (L == Limiter::spacer) {
            // FIFO: the hold at the spacer, sum(t_in - now - d), is the order wait, the
            // rest the spacer's; reordered: the spacer's alone (a queue that sorts makes
            // no packet wait for another).
            const double order = Fifo ? static_cast<double>(t.t_in_sum - n * now) - delays : 0.0;
            wait_sums_.order_ns += order;
            wait_sums_.spacer_ns += wait - order;
        } else if constexpr (Fifo) {
            wait_sums_.order_ns += wait;
        }
    }

    LinkParams params_;
    bool configured_ = false;
    std::uint64_t seed_ = 0;
    // Two random streams: the delays' and the loss stage's (its seed differs by a fixed
    // constant), so that the delay series for a seed does not depend on the loss model.
    static constexpr std::uint64_t kLossStream = 0x9e3779b97f4a7c15ULL;
    // Streams other than 0 differ from the seed's own by a multiple of this (odd) constant.
    static constexpr std::uint64_t kOtherStream = 0xd1b54a32d192ed03ULL;
    std::uint64_t stream_ = 0;
    Rng rng_;
    Rng loss_rng_;
    Delayer delayer_;
    RateEstimator rate_;
    Spacer spacer_;
    Policer policer_;
    TraceLink trace_;
    Bottleneck<QueuedPacket> bq_;  // the queue discipline's queue (uses_bottleneck)
    bool bottleneck_ = false;
    std::vector<LateDrop> late_drops_;
    static constexpr std::uint64_t kQueueStream = 0x6a09e667f3bcc909ULL;
    LossProcess loss_;
    LossProcess::Config loss_config_;
    std::uint64_t to_loss_ = LossProcess::kNever;  // packets that pass before the next loss
    std::uint32_t overhead_ = 0;
    bool prefetch_ahead_ = true;
    TimeNs last_tx_ = std::numeric_limits<TimeNs>::min();
    double spacer_floor_ = -1e300;       // FIFO: latest time a packet reached the spacer or trace
    SharedLink* shared_link_ = nullptr;  // share_limiter()
    double link_carry_ = 0;              // this Emulator's fraction of a ns (SharedLink)
    std::uint64_t link_reservations_ = 0, link_reserved_packets_ = 0;
    // The scenario followed (follow()): its track, its position 0, and when to look again.
    const ScenarioTrack* track_ = nullptr;
    TimeNs track_origin_ = 0;
    TimeNs next_change_ = kNoChange;
    FifoQueue<Packet> fifo_;
    ReorderQueue<Packet> reorder_;
    Counters counters_;

    // Telemetry: the owner's thread only.
    static constexpr TimeNs kNoTime = std::numeric_limits<TimeNs>::min();
    RunningStats delay_stats_, lateness_stats_;
    WaitSums wait_sums_;
    TimeNs report_start_ = kNoTime;
    bool telemetry_ = false;
    bool last_queued_ = false;  // the current ingest call queued a packet: sample_delay_/tx_
    double sample_delay_ = 0;
    TimeNs sample_tx_ = 0;
    DelaySampler sampler_;
    std::uint64_t queued_total_ = 0, drained_total_ = 0;  // packets ever queued / drained
    std::vector<TimeNs> tx_scratch_;
};

}  // namespace linkem
