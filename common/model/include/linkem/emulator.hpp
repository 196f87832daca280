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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace linkem {

namespace detail {
/// {sum of l, sum of l^2} over l = now - tx[i], i < n, for 0 <= l < 2^26 and n <= 2^11
/// (Emulator::departed). SSE2 (every x86-64): two lanes, the squares by pmuludq, which
/// multiplies the low 32 bits of each lane.
inline std::pair<std::uint64_t, std::uint64_t> lateness_sums(TimeNs now, const TimeNs* tx,
                                                             std::size_t n) {
    std::uint64_t s = 0, q = 0;
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i t = _mm_set1_epi64x(now);
    __m128i sv = _mm_setzero_si128(), qv = _mm_setzero_si128();
    for (; i + 2 <= n; i += 2) {
        const __m128i l =
            _mm_sub_epi64(t, _mm_loadu_si128(reinterpret_cast<const __m128i*>(tx + i)));
        sv = _mm_add_epi64(sv, l);
        qv = _mm_add_epi64(qv, _mm_mul_epu32(l, l));
    }
    alignas(16) std::uint64_t lanes[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), sv);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes + 2), qv);
    s = lanes[0] + lanes[1];
    q = lanes[2] + lanes[3];
#endif
    for (; i < n; ++i) {
        const auto l = static_cast<std::uint64_t>(now - tx[i]);
        s += l;
        q += l * l;
    }
    return {s, q};
}
}  // namespace detail

/// Default traits: a packet type with a `length` member. Specialise for other handles.
template <class Packet>
struct PacketTraits {
    static std::uint32_t length(const Packet& p) { return p.length; }
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
        spacer_.configure(p.rate_bps, p.spacer_limit_bytes);
        policer_.configure(p.rate_bps, p.policer_burst_bytes);
        trace_.configure(p.trace.get());
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

    /// Pre-allocates queue storage for n packets and the smooth strategy's state (the data
    /// plane does this at start so that neither the packet path nor a later set_params
    /// allocates).
    void reserve(std::size_t n) {
        delayer_.reserve();
        if (uses_fifo())
            fifo_.reserve(n);
        else
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
        if (n == 0) return 0;
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
        if (sample_period_ != 0 && now >= next_sample_) [[unlikely]]
            owed = sample_pieces(n, now, step);
        for (std::size_t off = 0; off < n; off += step) {
            const std::size_t m = std::min(step, n - off);
            Packet* const drop_out = dropped ? dropped + n_dropped : nullptr;
            // A limiter shared with other Emulators (share_limiter): reserved per chunk.
            if (shared_link_ && (params_.limiter == Limiter::spacer ||
                                 params_.limiter == Limiter::policer)) [[unlikely]] {
                if (params_.limiter == Limiter::spacer)
                    n_dropped += fifo ? ingest_chunk<Limiter::spacer, true, false, true>(
                                            pkts + off, m, now, drop_out)
                                      : ingest_chunk<Limiter::spacer, false, false, true>(
                                            pkts + off, m, now, drop_out);
                else
                    n_dropped += fifo ? ingest_chunk<Limiter::policer, true, false, true>(
                                            pkts + off, m, now, drop_out)
                                      : ingest_chunk<Limiter::policer, false, false, true>(
                                            pkts + off, m, now, drop_out);
            } else
                switch (params_.limiter) {
                    case Limiter::spacer:
                        // Far from the limit (the common case unless the link is overloaded):
                        // no packet of the chunk can overflow it, so the loop skips the check.
                        // The packets reach the spacer at `now` (reordered) or at their delayed
                        // times, which never fall below the previous packet's (FIFO).
                        if (spacer_.fits_whole(
                                fifo ? std::max(static_cast<double>(now), spacer_floor_)
                                     : static_cast<double>(now),
                                chunk_bytes(pkts + off, m)))
                            n_dropped += fifo ? ingest_chunk<Limiter::spacer, true, true>(
                                                    pkts + off, m, now, drop_out)
                                              : ingest_chunk<Limiter::spacer, false, true>(
                                                    pkts + off, m, now, drop_out);
                        else
                            n_dropped += fifo ? ingest_chunk<Limiter::spacer, true>(pkts + off, m,
                                                                                    now, drop_out)
                                              : ingest_chunk<Limiter::spacer, false>(pkts + off, m,
                                                                                     now, drop_out);
                        break;
                    case Limiter::policer:
                        n_dropped += fifo ? ingest_chunk<Limiter::policer, true>(pkts + off, m, now,
                                                                                 drop_out)
                                          : ingest_chunk<Limiter::policer, false>(pkts + off, m,
                                                                                  now, drop_out);
                        break;
                    case Limiter::trace:
                        n_dropped += ingest_trace(pkts + off, m, now, drop_out, fifo);
                        break;
                    case Limiter::none:
                    default:
                        n_dropped +=
                            fifo ? ingest_chunk<Limiter::none, true>(pkts + off, m, now, drop_out)
                                 : ingest_chunk<Limiter::none, false>(pkts + off, m, now, drop_out);
                        break;
                }
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
        if (owed != 0 && next_sample_ <= now) next_sample_ = now + sample_period_;
        return n_dropped;
    }

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
        sample_period_ = sink ? sample_period : 0;
        sample_sink_ = sink;
        max_pending_ = max_pending;
        pending_.clear();
        pending_.reserve(max_pending);
        drained_total_ = queued_total_ - queued();
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
        r.samples_dropped = samples_dropped_;
        report_start_ = now;
        delay_stats_.reset(static_cast<double>(params_.mean_delay));
        lateness_stats_.reset(0);
        wait_sums_ = WaitSums{};
        return r;
    }
    std::uint64_t samples_dropped() const { return samples_dropped_; }

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
        return uses_fifo() ? fifo_.next_time() : reorder_.next_time();
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

    // The trace limiter's chunks, out of line, so that the other limiters' loops, inlined
    // into ingest(), are laid out as without it.
    [[gnu::noinline]] std::size_t ingest_trace(const Packet* pkts, std::size_t n, TimeNs now,
                                               Packet* dropped, bool fifo) {
        return fifo ? ingest_chunk<Limiter::trace, true>(pkts, n, now, dropped)
                    : ingest_chunk<Limiter::trace, false>(pkts, n, now, dropped);
    }

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

    // The samples an ingest call of n packets at `now` owes (now >= next_sample_), at most
    // one a packet and kMaxSamplesPerCall; more than kMaxSamplesPerCall periods behind is a
    // pause: one sample, and the schedule restarts from now. Sets the piece size.
    std::size_t sample_pieces(std::size_t n, TimeNs now, std::size_t& step) const {
        const auto behind = static_cast<std::uint64_t>(now - next_sample_) /
                                static_cast<std::uint64_t>(sample_period_) +
                            1;
        if (behind > kMaxSamplesPerCall) return 1;
        const std::size_t owed = std::min<std::size_t>(behind, n);
        if (owed > 1) step = std::min(kChunk, n / owed);  // at least owed pieces
        return owed;
    }
    static constexpr std::uint64_t kMaxSamplesPerCall = 64;

    // Follows the last packet the ingest call queued (if there is room to follow one more).
    // FIFO: it leaves when as many packets as were queued before it have left (its
    // ordinal); reordered: when a packet with its transmission time or a later one has.
    void take_sample(TimeNs now) {
        next_sample_ += sample_period_;  // on schedule, one per period
        if (pending_.size() >= max_pending_) return;
        const bool fifo = uses_fifo();
        const TimeNs tx = fifo ? sample_tx_ : queued_tx(sample_tx_);
        pending_.push_back(
            PendingSample{now, static_cast<DurationNs>(sample_delay_ + 0.5), tx,
                          fifo ? queued_total_ - 1 : static_cast<std::uint64_t>(tx)});
        std::push_heap(pending_.begin(), pending_.end(), PendingLater{});
    }

    // n packets left at `now` with transmission times tx[0, n), non-decreasing (every queue
    // emits in tx order).
    void departed(TimeNs now, const TimeNs* tx, std::size_t n) {
        assert(std::is_sorted(tx, tx + n));
        const TimeNs hi = tx[n - 1];
        const DurationNs max_l = now - tx[0], min_l = now - hi;
        double sum = 0, sq = 0;
        // This runs for every packet that leaves. While every lateness is below 2^26 ns
        // (67 ms) and n <= 2^11, the sums are exact 64-bit integers (no square can overflow
        // them) and take ~1 cycle a packet; otherwise doubles.
        if (min_l >= 0 && max_l < (DurationNs{1} << 26) && n <= 2048) [[likely]] {
            const auto [s, q] = detail::lateness_sums(now, tx, n);
            sum = static_cast<double>(s);
            sq = static_cast<double>(q);
        } else {
            for (std::size_t i = 0; i < n; ++i) {
                const double l = static_cast<double>(now - tx[i]);
                sum += l;
                sq += l * l;
            }
        }
        const double mn = static_cast<double>(min_l), mx = static_cast<double>(max_l);
        lateness_stats_.count += n;
        lateness_stats_.sum += sum;
        lateness_stats_.sumsq += sq;
        lateness_stats_.min = mn < lateness_stats_.min ? mn : lateness_stats_.min;
        lateness_stats_.max = mx > lateness_stats_.max ? mx : lateness_stats_.max;
        drained_total_ += n;
        if (pending_.empty()) return;
        const std::uint64_t gone =
            uses_fifo() ? drained_total_ : static_cast<std::uint64_t>(hi) + 1;
        while (!pending_.empty() && pending_.front().key < gone) {
            const PendingSample& p = pending_.front();
            const DelaySample s{p.arrival, p.delay, p.tx - p.arrival, now - p.arrival};
            if (!sample_sink_->try_push(s)) ++samples_dropped_;
            std::pop_heap(pending_.begin(), pending_.end(), PendingLater{});
            pending_.pop_back();
        }
    }
    std::size_t queued() const { return fifo_.size() + reorder_.size(); }

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
        // Samples in flight were keyed by the old queue's order: drop them (not counted:
        // they were never due to the sink).
        pending_.clear();
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

    static constexpr std::size_t kChunk = kMaxReservation;

    // Bytes of n packets as the limiter counts them (with the per-packet overhead).
    std::uint64_t chunk_bytes(const Packet* pkts, std::size_t n) const {
        std::uint64_t b = 0;
        for (std::size_t i = 0; i < n; ++i)
            b += Traits::length(pkts[i]);
        return b + n * overhead_;
    }

    // Up to kChunk packets. The state the per-packet loop updates (the loss countdown,
    // spacer, FIFO floor and tail) is copied into locals and written back once, so that it
    // lives in registers: through `this`, every store into the queue could alias it and
    // would force it back to memory on each packet. The loss stage is a countdown to the
    // next loss (LossProcess::gap), drawn once per loss.
    // kSpacerFits: the spacer accepted the chunk whole (Spacer::fits_whole: its times, the
    // arrival time `now` and later, never decrease within the chunk), so no packet is checked
    // against its limit.
    // kShared: the limiter is the shared link's (share_limiter): the packets the buffer has
    // room for (at the chunk's start) reserve it in one go before the loop; the spacer's time
    // then comes before the delay for every strategy. The packets beyond that room are
    // dropped as buffer_full, even when losses in the chunk would have made room for some.
    template <Limiter L, bool Fifo, bool kSpacerFits = false, bool kShared = false>
    std::size_t ingest_chunk(const Packet* pkts, std::size_t n, TimeNs now, Packet* dropped) {
        double delay[kChunk];
        // One packet per call (the simulator's arrivals): the single draw, inlined, costs
        // less than next_n's loop set-up. Both give the same values.
        if (n == 1)
            delay[0] = delayer_.next(rng_, now);
        else
            delayer_.next_n(rng_, delay, n, now);
        std::uint64_t bytes = 0, clamped = 0, waited = 0, drop[kDropCauseCount] = {};
        std::size_t n_dropped = 0;
        // The delay statistics of the packets queued (telemetry), in registers; the last
        // queued packet's delay and transmission time (a sample candidate).
        const double shift = delay_stats_.shift;
        double g_sum = 0, g_sq = 0, g_min = delay_stats_.min, g_max = delay_stats_.max;
        // Their wait (WaitSums): the sum of their transmission times (an integer addition a
        // packet; with the delays' sum it gives their whole wait) and, FIFO with a spacer, of
        // of their times at the spacer, each held to the previous one's (the order wait there).
        std::int64_t tx_sum = 0;
        [[maybe_unused]] std::int64_t t_in_sum = 0;
        std::uint64_t g_n = 0;
        std::size_t last_i = 0;              // (its delay: delay[last_i], clamped in place)
        [[maybe_unused]] TimeNs last_t = 0;  // reordered (FIFO: last_tx)
        const std::size_t q = queued();
        std::size_t room = q < params_.buffer_limit_packets ? params_.buffer_limit_packets - q : 0;
        std::uint64_t to_loss = to_loss_;
        [[maybe_unused]] Spacer spacer = spacer_;
        [[maybe_unused]] double floor = spacer_floor_;
        [[maybe_unused]] TimeNs last_tx = last_tx_;
        const std::uint32_t overhead = overhead_;
        [[maybe_unused]] TimeNs link_at[kChunk];
        [[maybe_unused]] std::size_t linked = 0;  // packets that reserved the shared link
        if constexpr (kShared) {
            std::uint32_t charged[kChunk];
            linked = std::min(n, room);
            for (std::size_t i = 0; i < linked; ++i)
                charged[i] = Traits::length(pkts[i]) + overhead;
            shared_link_->reserve(
                now, charged, linked, 8e9 / params_.rate_bps,
                static_cast<double>(L == Limiter::spacer ? params_.spacer_limit_bytes
                                                         : params_.policer_burst_bytes),
                link_carry_, link_at);
            link_reservations_ += linked != 0;
            link_reserved_packets_ += linked;
        }
        auto queue = [&] {
            if constexpr (Fifo)
                return fifo_.writer(room < n ? room : n);
            else
                return reorder_.writer();
        }();
        for (std::size_t i = 0; i < n; ++i) {
            const Packet& pkt = pkts[i];
            const std::uint32_t len = Traits::length(pkt);
            bytes += len;
            auto drop_it = [&](DropCause c) {
                ++drop[static_cast<int>(c)];
                if (dropped) dropped[n_dropped] = pkt;
                ++n_dropped;
            };
            if (room == 0 || (kShared && i >= linked)) {
                drop_it(DropCause::buffer_full);
                continue;
            }
            // 1 delay
            double d = delay[i];
            if (d < 0) {
                d = 0;
                delay[i] = 0;
                ++clamped;
            }
            // 2 limiter (and 4: the transmission time)
            TimeNs tx;
            if constexpr (kShared) {
                if (link_at[i] == SharedLink::kDropped) {
                    drop_it(L == Limiter::spacer ? DropCause::spacer : DropCause::policer);
                    continue;
                }
                tx = (L == Limiter::spacer ? link_at[i] : now) + static_cast<TimeNs>(d + 0.5);
            } else if constexpr (L == Limiter::spacer) {
                // FIFO: the spacer follows the delay. A packet cannot leave before its
                // predecessor, so it reaches the spacer no earlier than that one did; feeding
                // the leaky bucket this non-decreasing time makes its fill state the backlog
                // caused by the rate alone, not the FIFO's hold-up. Reordered: the spacer
                // comes first (a link of the given rate, then a path whose delay varies per
                // packet). Spacing after a reordering buffer would mean sorting twice, and
                // spacing the unsorted tx times in arrival order would count every
                // shorter-delayed packet as backlog.
                const double t_in =
                    Fifo ? std::max(static_cast<double>(now) + d, floor) : static_cast<double>(now);
                if constexpr (kSpacerFits) {
                    spacer.schedule_fit(t_in, len + overhead, tx);
                } else if (!spacer.schedule(t_in, len + overhead, tx)) {
                    drop_it(DropCause::spacer);
                    continue;
                }
                if constexpr (Fifo)
                    floor = t_in;
                else
                    tx += static_cast<TimeNs>(d + 0.5);
            } else if constexpr (L == Limiter::trace) {
                // As the spacer: FIFO, the trace link follows the delay and is fed
                // non-decreasing times; reordered, it comes first.
                const double t_in =
                    Fifo ? std::max(static_cast<double>(now) + d, floor) : static_cast<double>(now);
                tx = trace_.schedule(static_cast<TimeNs>(std::ceil(t_in)),
                                     DeliveryTrace::charge(len));
                if constexpr (Fifo)
                    floor = t_in;
                else
                    tx += static_cast<TimeNs>(d + 0.5);
            } else {
                if constexpr (L == Limiter::policer) {
                    if (!policer_.admit(now, len + overhead)) {
                        drop_it(DropCause::policer);
                        continue;
                    }
                }
                tx = now + static_cast<TimeNs>(d + 0.5);
            }
            // 3 loss
            if (to_loss == 0) [[unlikely]] {
                to_loss = loss_.gap(loss_rng_);
                drop_it(DropCause::loss);
                continue;
            }
            --to_loss;
            // 5 buffer. FIFO: a packet leaves no earlier than its predecessor.
            if constexpr (Fifo) {
                waited += tx < last_tx;
                tx = std::max(tx, last_tx);
                last_tx = tx;
            }
            queue.push(tx, pkt);
            --room;
            tx_sum += tx;
            if constexpr (Fifo && L == Limiter::spacer) {
                // The order wait is sum(t_in - now - d) - the rest of the wait the spacer's.
                // Shared, the link comes first (tx = link_at + d, then the FIFO's hold): the
                // spacer's part is link_at - now, so t_in counts as tx - (link_at - now).
                if constexpr (kShared)
                    t_in_sum += tx - (link_at[i] - now);
                else
                    t_in_sum += static_cast<std::int64_t>(floor + 0.5);
            }
            const double g = d - shift;
            g_sum += g;
            g_sq += g * g;
            g_min = d < g_min ? d : g_min;
            g_max = d > g_max ? d : g_max;
            ++g_n;
            last_i = i;
            if constexpr (!Fifo) last_t = tx;
        }
        queue.commit();
        if (g_n) {
            delay_stats_.count += g_n;
            delay_stats_.sum += g_sum;
            delay_stats_.sumsq += g_sq;
            delay_stats_.min = g_min;
            delay_stats_.max = g_max;
            // Scheduled minus drawn delay over the packets queued: sum(tx - now) - sum(d).
            const double delays = static_cast<double>(g_n) * shift + g_sum;
            const double wait =
                static_cast<double>(tx_sum - static_cast<std::int64_t>(g_n) * now) - delays;
            wait_sums_.count += g_n;
            if constexpr (L == Limiter::spacer) {
                // FIFO: the hold at the spacer, sum(t_in - now - d), is the order wait, the
                // rest the spacer's; reordered: the spacer's alone (a queue that sorts makes
                // no packet wait for another).
                const double order =
                    Fifo ? static_cast<double>(t_in_sum - static_cast<std::int64_t>(g_n) * now) -
                               delays
                         : 0.0;
                wait_sums_.order_ns += order;
                wait_sums_.spacer_ns += wait - order;
            } else if constexpr (Fifo) {
                wait_sums_.order_ns += wait;
            }
            queued_total_ += g_n;
            last_queued_ = true;
            sample_delay_ = delay[last_i];
            sample_tx_ = Fifo ? last_tx : last_t;
        }
        to_loss_ = to_loss;
        if constexpr (L == Limiter::spacer && !kShared) {
            spacer_ = spacer;
            if constexpr (Fifo) spacer_floor_ = floor;
        }
        if constexpr (L == Limiter::trace && Fifo) spacer_floor_ = floor;
        if constexpr (Fifo) last_tx_ = last_tx;
        Counters::add(counters_.bytes_in, bytes);
        if (clamped) Counters::add(counters_.delays_clamped, clamped);
        if (waited) Counters::add(counters_.waited, waited);  // (always 0 when reordered)
        for (std::size_t c = 0; c < kDropCauseCount; ++c)
            if (drop[c]) Counters::add(counters_.drops(static_cast<DropCause>(c)), drop[c]);
        return n_dropped;
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
    struct PendingSample {
        TimeNs arrival;
        DurationNs delay;
        TimeNs tx;
        std::uint64_t key;  // FIFO: the packet's ordinal; reordered: its transmission time
    };
    struct PendingLater {
        bool operator()(const PendingSample& a, const PendingSample& b) const {
            return a.key > b.key;
        }
    };
    RunningStats delay_stats_, lateness_stats_;
    WaitSums wait_sums_;
    TimeNs report_start_ = kNoTime;
    bool telemetry_ = false;
    bool last_queued_ = false;  // the current ingest call queued a packet: sample_delay_/tx_
    double sample_delay_ = 0;
    TimeNs sample_tx_ = 0;
    DurationNs sample_period_ = 0;
    TimeNs next_sample_ = 0;
    std::size_t max_pending_ = 0;
    std::vector<PendingSample> pending_;  // a min-heap on key
    SpscRing<DelaySample>* sample_sink_ = nullptr;
    std::uint64_t samples_dropped_ = 0;
    std::uint64_t queued_total_ = 0, drained_total_ = 0;  // packets ever queued / drained
    std::vector<TimeNs> tx_scratch_;
};

}  // namespace linkem
