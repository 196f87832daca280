#include "linkem/dataplane/dataplane.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <deque>
#include <limits>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>
#include <vector>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "exchange.hpp"
#include "lane.hpp"
#include "linkem/shared_link.hpp"
#include "port.hpp"
#include "stages.hpp"

namespace linkem::dp {

using namespace detail;

// ------------------------------------------------------------------------------- Impl
namespace {

// A direction's workers' reports of one period, as one: sums of the counters (the correlation
// weight: their mean; the rate estimate: the direction's, their sum), the delay and lateness
// statistics merged, the oldest parameter generation.
IntervalReport merge_reports(const std::vector<const IntervalReport*>& r) {
    IntervalReport m = *r[0];
    if (r.size() == 1) return m;
    double alpha = m.counters.alpha;
    for (std::size_t i = 1; i < r.size(); ++i) {
        merge_into(m, *r[i]);
        alpha += r[i]->counters.alpha;
    }
    m.counters.alpha = alpha / static_cast<double>(r.size());
    return m;
}

}  // namespace

struct Dataplane::Impl {
    Impl(Eal& e, DataplaneConfig c) : eal(e), cfg(std::move(c)) {}

    Eal& eal;
    DataplaneConfig cfg;
    unsigned n_dirs = 1;
    unsigned n_queues = 1;  // per port: the workers per direction (1 with `shared`)
    std::uint32_t pool_size = 0;
    std::vector<detail::Mempool> pools;  // per receive queue: port p, queue q at p * n_queues + q
    std::vector<std::unique_ptr<EthPort>> ports;              // a, b
    std::array<std::vector<std::unique_ptr<Lane>>, 2> lanes;  // per direction, one per worker
    std::array<std::unique_ptr<SharedLink>, 2> links;         // per direction with several workers
    std::vector<LcoreTask> tasks;
    std::atomic<bool> run{false};
    bool launched = false, stopped = false;

    mutable std::mutex mu;  // control side: apply, reclaim, stats
    std::uint64_t generation = 0;
    // The blocks the lanes run with: the buffer limit split between the workers and capped
    // by each lane's pool. One per lane; replaced blocks wait here until every lane of the
    // direction acknowledged the generation that replaced them.
    std::array<std::vector<std::unique_ptr<ParamBlock>>, 2> lane_blocks;
    struct Retired {
        std::unique_ptr<ParamBlock> block;
        unsigned dir;
        std::uint64_t replaced_by;  // generation of the block that replaced it
    };
    mutable std::vector<Retired> retired;
    LinkConfig link;
    std::optional<DataplaneStats> final_stats;
    // Interval reports moved out of the lanes' rings (under mu): the newest per lane (the
    // counters stats() shows), those no merged report took yet, and the merged ones
    // take_telemetry() has not handed out yet.
    mutable std::array<std::vector<std::optional<IntervalReport>>, 2> latest;
    mutable std::array<std::vector<std::deque<IntervalReport>>, 2> unmerged;
    mutable TelemetryBatch backlog;
    static constexpr std::size_t kMaxBacklog = 256;  // reports per direction: ~13 s
    // Each lane's newest counters per slot (its slot_reports).
    mutable std::array<std::vector<SlotReport>, 2> latest_slots;

    // Traffic classes (lane.hpp, "Traffic classes"): the slot each name has had, the
    // classifier of the classes in force (null: none) and the ClassId each slot now has
    // (kNoClass: its name left the list).
    static constexpr std::uint8_t kNoClass = 0xff;
    std::array<std::string, kSlots> slot_names{kDefaultClassName};
    unsigned slots_named = 0;
    std::shared_ptr<const AclClassifier> classifier;
    std::array<std::uint8_t, kSlots> slot_class{};
    // With several workers, each slot's own limiter per direction, shared by the workers.
    std::array<std::array<std::unique_ptr<SharedLink>, kSlots>, 2> slot_links;
    // What a change of classes publishes: the classifier, and per direction each class's
    // block (its parameters before lane_params()).
    struct ClassPlan {
        std::shared_ptr<const AclClassifier> classifier;
        std::array<std::vector<ClassBlock>, 2> dir;
        std::array<bool, 2> default_shares{};
        std::array<std::string, kSlots> slot_names;
        unsigned slots = 0;
    };
    ClassPlan plan_classes(const LinkConfig& next) const;
    void check_classes(const LinkConfig& next) const;
    void make_slot_emulators(const ClassPlan& plan);
    void make_slot_emulator(Lane& d, unsigned s, const LinkParams& stored);
    std::vector<ClassStats> class_stats(bool live) const;

    // Capture (docs/capture.md). capture_mu is taken after mu, never before.
    mutable std::mutex capture_mu;
    std::unique_ptr<capture::Recorder> recorder;
    std::vector<std::unique_ptr<LaneCapture>> lane_captures;
    std::vector<Lane*> captured;  // the lanes lane_captures[i] is published to
    capture::Status last_capture;
    std::vector<capture::Event> capture_events;
    std::mutex names_mu;  // capture_names: the writer thread reads them
    std::array<std::string, kSlots> capture_names{kDefaultClassName};
    std::size_t ring_bytes() const {
        std::size_t lanes_n = 0;
        for (unsigned k = 0; k < n_dirs; ++k)
            lanes_n += lanes[k].size();
        const std::size_t per = kCaptureMemory / std::max<std::size_t>(lanes_n, 1);
        return std::max<std::size_t>(std::min(per, kCaptureRingBytes), std::size_t{1} << 20);
    }
    capture::Status stop_capture(capture::StopReason reason);
    // Publishes each captured lane's LaneCapture (on) or none (off), and waits (at most 2 s)
    // until the running lanes took it up at their next loop boundary (microseconds): then every
    // packet received from now on is recorded (on), or no lane touches a ring any more (off).
    // Lcores that do not run (before start, after stop) hold none.
    void publish_captures(bool on) {
        for (std::size_t i = 0; i < captured.size(); ++i)
            captured[i]->capture_pub.store(on ? lane_captures[i].get() : nullptr,
                                           std::memory_order_release);
        if (!launched || !run.load(std::memory_order_acquire)) return;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        for (std::size_t i = 0; i < captured.size(); ++i) {
            const Lane& d = *captured[i];
            const LaneCapture* want = on ? lane_captures[i].get() : nullptr;
            while (d.capture_seen.load(std::memory_order_acquire) != want &&
                   std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            if (d.capture_seen.load(std::memory_order_acquire) != want)
                log("warning: direction %u worker %u did not %s the capture ring in 2 s", d.index,
                    d.queue, on ? "take up" : "let go of");
        }
    }

    // Set-up, in the order the Dataplane constructor calls them.
    void check_burst_and_workers() const;
    void check_links() const;
    std::pair<PortSpec, std::optional<PortSpec>> resolve_ports() const;
    std::vector<unsigned> worker_lcores() const;
    void make_pools();
    void set_up_direction(unsigned k);
    std::unique_ptr<Lane> make_lane(unsigned k, unsigned q, const EthPort& rx, const EthPort& tx);
    void size_lane_buffers(Lane& d, unsigned k, const EthPort& rx, const EthPort& tx);
    void make_lane_emulator(Lane& d, const LinkParams& stored, const DelayTables& tables);
    void make_tasks(const std::vector<unsigned>& lcores);

    void pull_reports() const {
        IntervalReport r[16];
        std::vector<const IntervalReport*> period;
        for (unsigned k = 0; k < n_dirs; ++k) {
            for (unsigned q = 0; q < n_queues; ++q) {
                auto& waiting = unmerged[k][q];
                std::size_t n;
                while ((n = lanes[k][q]->reports->pop(r, 16)) > 0) {
                    latest[k][q] = r[n - 1];
                    waiting.insert(waiting.end(), r, r + n);
                }
                while (lanes[k][q]->slot_reports->pop(&latest_slots[k][q], 1) > 0) {
                }
                while (waiting.size() > kMaxBacklog)
                    waiting.pop_front();
            }
            // The lanes report at the same instants: one merged report per period, once
            // every lane has made its own.
            auto& b = backlog.reports[k];
            for (;;) {
                period.clear();
                for (unsigned q = 0; q < n_queues && !unmerged[k][q].empty(); ++q)
                    period.push_back(&unmerged[k][q].front());
                if (period.size() < n_queues) break;
                b.push_back(merge_reports(period));
                for (unsigned q = 0; q < n_queues; ++q)
                    unmerged[k][q].pop_front();
            }
            if (b.size() > kMaxBacklog)
                b.erase(b.begin(), b.end() - static_cast<std::ptrdiff_t>(kMaxBacklog));
        }
    }

    // The parameters a lane of a direction runs with: the buffer limit split between the
    // workers (each worker's Emulator holds its own packets) and capped by the lane's pool.
    LinkParams lane_params(const LinkParams& p, const Lane& d) const {
        LinkParams q = p;
        const std::uint64_t share = (p.buffer_limit_packets + n_queues - 1) / n_queues;
        q.buffer_limit_packets = std::min<std::uint64_t>(share, d.buffer_cap);
        return q;
    }

    bool acked_by_all(unsigned k, std::uint64_t gen) const {
        for (const auto& d : lanes[k])
            if (d->acked.load(std::memory_order_acquire) < gen) return false;
        return true;
    }

    void reclaim() const {
        std::erase_if(retired,
                      [this](const auto& r) { return acked_by_all(r.dir, r.replaced_by); });
    }

    // `live`: the lcores run, so each lane's counters come from its newest interval report
    // (consistent, taken between two bursts); else (before the first report, after stop)
    // straight from the Emulator. A direction's counters are its lanes' sums.
    DataplaneStats collect(bool live) const {
        DataplaneStats s;
        s.t_ns = tsc_now();
        s.directions = n_dirs;
        if (live) pull_reports();
        bool t_taken = false;
        for (unsigned k = 0; k < n_dirs; ++k) {
            DirectionStats& ds = s.dir[k];
            std::vector<IntervalReport> now(n_queues);
            std::vector<const IntervalReport*> all;
            std::uint64_t generation = std::numeric_limits<std::uint64_t>::max();
            for (unsigned q = 0; q < n_queues; ++q) {
                const Lane& d = *lanes[k][q];
                IntervalReport& r = now[q];
                if (live && latest[k][q]) {
                    r = *latest[k][q];
                    if (!t_taken) s.t_ns = r.end_ns;
                    t_taken = true;
                } else if (live) {
                    // Running, but no report yet (its first kReportPeriod): the lcore's
                    // counters cannot be read consistently from here, so show those of the
                    // start (zero), which balance.
                    r.params_generation = d.acked.load(std::memory_order_acquire);
                } else {
                    // Before the counters: an interval whose two ends show the same
                    // generation was spent entirely under that parameter block.
                    r.params_generation = d.acked.load(std::memory_order_acquire);
                    const SlotReport c = slot_counts(d, slots_named);
                    r.counters = c.c[0];
                    for (unsigned s = 1; s <= c.slots; ++s)
                        add_counters(r.counters, c.c[s]);
                    r.samples_dropped = d.emu->samples_dropped();
                }
                generation = std::min(generation, r.params_generation);
                all.push_back(&r);
                ds.tx_sent += d.tx_sent.load(std::memory_order_acquire);
                ds.buffer_limit += lane_params(link.direction(k), d).buffer_limit_packets;
                ds.stalls += d.stalls.load(std::memory_order_relaxed);
                ds.stall_ns += d.stall_ns.load(std::memory_order_relaxed);
                ds.longest_stall_ns = std::max<std::uint64_t>(
                    ds.longest_stall_ns, d.longest_stall_ns.load(std::memory_order_relaxed));
            }
            const IntervalReport sum = merge_reports(all);
            ds.counters = sum.counters;
            ds.params_generation = generation;
            ds.delay_samples_dropped = sum.samples_dropped;
            ds.tx_queued =
                ds.counters.packets_out > ds.tx_sent ? ds.counters.packets_out - ds.tx_sent : 0;
            ds.buffer_exchange = lanes[k][0]->exchange;
        }
        s.classes = class_stats(live);
        s.ports = static_cast<unsigned>(ports.size());
        for (unsigned k = 0; k < ports.size(); ++k)
            s.port[k] = ports[k]->stats();
        return s;
    }

    // Publishes the parameter block of generation `gen` (the user's parameters p, the tables
    // made for them by MbufEmulator::prepare, and a scenario's track to follow from `origin`
    // or none) to every lane of direction k; the blocks replaced retire until the lanes
    // acknowledged gen.
    void publish(unsigned k, std::uint64_t gen, const LinkParams& p, const DelayTables& tables,
                 const ClassPlan& plan, const ScenarioTrack* track = nullptr, TimeNs origin = 0) {
        auto& blocks = lane_blocks[k];
        for (unsigned q = 0; q < n_queues; ++q) {
            Lane& d = *lanes[k][q];
            auto block = std::make_unique<ParamBlock>(
                ParamBlock{gen, lane_params(p, d), tables, nullptr, 0});
            block->classifier = plan.classifier;
            block->default_shares = plan.default_shares[k];
            block->slots = plan.slots;
            block->classes = plan.dir[k];
            for (ClassBlock& c : block->classes)
                c.params = lane_params(c.params, d);
            if (track) {
                // Each lane follows its own copy, with the lane's buffer limit in every piece.
                auto t = std::make_shared<ScenarioTrack>(*track);
                t->for_each_params([&](LinkParams& x) {
                    x = lane_params(x, d);
                    if (x.seed == 0) x.seed = p.seed;
                });
                block->track = std::move(t);
                block->origin = origin;
            }
            d.block.store(block.get(), std::memory_order_release);
            d.published.store(gen, std::memory_order_release);
            if (q < blocks.size()) {
                retired.push_back(Retired{std::move(blocks[q]), k, gen});
                blocks[q] = std::move(block);
            } else {
                blocks.push_back(std::move(block));
            }
        }
    }
};

// ------------------------------------------------------------------------------ set-up
// The checks that need no device: the burst and the workers, then (with the number of
// directions and of workers known) each direction's parameters.
void Dataplane::Impl::check_burst_and_workers() const {
    if (cfg.burst < 1 || cfg.burst > kMaxBurst)
        throw ParamError("burst", std::to_string(cfg.burst) + " is out of range; allowed 1 .. " +
                                      std::to_string(kMaxBurst));
    if (!cfg.workers.shared &&
        (cfg.workers.per_direction < 1 || cfg.workers.per_direction > kMaxWorkers))
        throw ParamError("workers", std::to_string(cfg.workers.per_direction) +
                                        " is out of range; allowed shared or 1 .. " +
                                        std::to_string(kMaxWorkers));
}

void Dataplane::Impl::check_links() const {
    for (unsigned k = 0; k < n_dirs; ++k) {
        const char* name = kDirectionKeys[k];
        try {
            validate(cfg.link.direction(k));
            refuse_unshared(cfg.link.direction(k), n_queues);
        } catch (const ParamError& e) {
            throw ParamError(std::string(name) + "." + e.field(), e.message());
        }
    }
}

std::pair<PortSpec, std::optional<PortSpec>> Dataplane::Impl::resolve_ports() const {
    const PortSpec spec_a = resolve_port(cfg.port_a, "port_a", n_queues);
    std::optional<PortSpec> spec_b;
    if (n_dirs == 2) {
        spec_b = resolve_port(cfg.port_b, "port_b", n_queues);
        if (spec_b->name == spec_a.name)
            throw ParamError("port_b",
                             "is the same device as port_a; omit port_b for "
                             "single-port mode");
    }
    return {spec_a, spec_b};
}

// The EAL's worker lcores, as many as the workers need at least.
std::vector<unsigned> Dataplane::Impl::worker_lcores() const {
    const unsigned needed = worker_lcores_needed(cfg.workers, n_dirs);
    std::vector<unsigned> lcores;
    unsigned lc;
    RTE_LCORE_FOREACH_WORKER(lc) lcores.push_back(lc);
    if (lcores.size() < needed)
        throw DataplaneError("--workers " + to_string(cfg.workers) + " with " +
                             std::to_string(n_dirs) + " direction(s) needs " +
                             std::to_string(needed) + " worker lcores; the EAL has " +
                             std::to_string(lcores.size()));
    return lcores;
}

// One mbuf pool per receive queue (cfg.mbufs split between them), and the ports configured
// with them.
void Dataplane::Impl::make_pools() {
    const std::uint32_t total =
        cfg.mbufs ? cfg.mbufs : default_mbufs(cfg.link, n_dirs, cfg.workers.shared ? 1 : n_queues);
    cfg.mbufs = total;
    pool_size = total / static_cast<std::uint32_t>(ports.size() * n_queues);
    for (auto& port : ports) {
        std::vector<rte_mempool*> rx;
        for (unsigned q = 0; q < n_queues; ++q) {
            pools.push_back(
                detail::make_pktmbuf_pool(detail::unique_name("lk_rx"), pool_size, port->socket()));
            rx.push_back(pools.back().get());
        }
        port->configure(rx);
    }
    log("%u mbufs in %zu pool(s) of %u (one per receive queue)", total, pools.size(), pool_size);
    for (auto& port : ports)
        log("port %s: %s%s", port->spec().text.c_str(), port->link_text().c_str(),
            n_queues == 1 ? ""
            : port->rss() ? (", " + std::to_string(n_queues) + " queues, RSS").c_str()
                          : (", " + std::to_string(n_queues) +
                             " queues (no RSS: the device fills them itself)")
                                .c_str());
}

// Direction k: its parameters (with the seed drawn when they say 0), its shared link when
// it has several workers, and one lane per worker, running the parameter block of
// generation 0.
void Dataplane::Impl::set_up_direction(unsigned k) {
    const EthPort& rx = *ports[k];
    const EthPort& tx = *ports[ports.size() == 1 ? 0 : 1 - k];
    const LinkParams& user = cfg.link.direction(k);
    LinkParams& stored = link.direction(k);
    stored = user;
    // One seed for the direction (drawn here when the parameters say 0); each worker
    // draws its own streams from it.
    if (stored.seed == 0) stored.seed = random_seed();
    if (n_queues > 1 && user.limiter != Limiter::none)
        log("direction %u: %u workers share one %s", k, n_queues,
            user.limiter == Limiter::spacer ? "spacer" : "policer");
    links[k] = std::make_unique<SharedLink>();  // the workers' and classes' limiter
    if (n_queues > 1)
        for (unsigned s = 1; s < kSlots; ++s)
            slot_links[k][s] = std::make_unique<SharedLink>();
    latest[k].resize(n_queues);
    unmerged[k].resize(n_queues);
    latest_slots[k].resize(n_queues);
    const DelayTables tables = MbufEmulator::prepare(stored);
    for (unsigned q = 0; q < n_queues; ++q) {
        std::unique_ptr<Lane> d = make_lane(k, q, rx, tx);
        make_lane_emulator(*d, stored, tables);
        d->link = links[k].get();
        lanes[k].push_back(std::move(d));
    }
    publish(k, 0, stored, tables, ClassPlan{.default_shares = {n_queues > 1, n_queues > 1}});
}

// ------------------------------------------------------------------------ classes
// The rules the data plane adds to the classes' own (validate()): a class sharing the link's
// limiter needs one that can be shared, and a trace cannot run on several workers.
void Dataplane::Impl::check_classes(const LinkConfig& next) const {
    validate(next.classes);
    for (std::size_t i = 0; i < next.classes.size(); ++i) {
        const TrafficClass& c = next.classes[i];
        if (c.action != ClassAction::emulate) continue;
        for (unsigned k = 0; k < n_dirs; ++k) {
            const LinkParams& link_k = next.direction(k);
            if (c.shares_link_limiter && link_k.limiter == Limiter::trace)
                throw ClassError(i, c.name, "limiter",
                                 "'link' with the link's trace limiter (" +
                                     std::string(kDirectionKeys[k]) +
                                     ") cannot be shared; allowed with the link's limiter "
                                     "none, spacer or policer");
            try {
                refuse_unshared(class_params(c, link_k, k), n_queues);
            } catch (const ParamError& e) {
                throw ClassError(i, c.name, std::string(kDirectionKeys[k]) + "." + e.field(),
                                 e.message());
            }
        }
    }
}

// The slots, classifier and blocks of `next`'s classes. A classifier is built (rte_acl,
// milliseconds to seconds for large lists) only when the matches changed. Changes nothing.
Dataplane::Impl::ClassPlan Dataplane::Impl::plan_classes(const LinkConfig& next) const {
    ClassPlan plan;
    plan.slot_names = slot_names;
    plan.slots = slots_named;
    const std::vector<TrafficClass>& list = next.classes;
    if (!list.empty()) {
        bool same = classifier && list.size() == link.classes.size();
        for (std::size_t i = 0; same && i < list.size(); ++i)
            same = list[i].match == link.classes[i].match;
        plan.classifier = same ? classifier : std::make_shared<const AclClassifier>(list);
    }
    auto named = [&](const std::string& n) {
        return std::any_of(list.begin(), list.end(), [&](const auto& c) { return c.name == n; });
    };
    std::array<bool, kSlots> taken{};
    std::vector<unsigned> slot(list.size(), 0);
    for (std::size_t i = 0; i < list.size(); ++i)  // names that had a slot keep it
        for (unsigned s = 1; s <= plan.slots; ++s)
            if (plan.slot_names[s] == list[i].name) {
                slot[i] = s;
                taken[s] = true;
            }
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (slot[i]) continue;
        unsigned s = plan.slots < kMaxClasses ? ++plan.slots : 0;
        for (unsigned t = 1; s == 0 && t <= kMaxClasses; ++t)  // all named: one whose name left
            if (!taken[t] && !named(plan.slot_names[t])) s = t;
        slot[i] = s;
        taken[s] = true;
        plan.slot_names[s] = list[i].name;
    }
    for (unsigned k = 0; k < 2; ++k) {
        const LinkParams& link_k = next.direction(k);
        plan.default_shares[k] = n_queues > 1;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const TrafficClass& c = list[i];
            ClassBlock b;
            b.action = c.action;
            b.slot = static_cast<std::uint8_t>(slot[i]);
            if (c.action == ClassAction::emulate) {
                b.params = class_params(c, link_k, k);
                if (c.shares_link_limiter && shareable(link_k)) {
                    b.limiter = links[k].get();
                    plan.default_shares[k] = true;
                } else if (n_queues > 1) {
                    b.limiter = slot_links[k][slot[i]].get();
                }
                b.tables = MbufEmulator::prepare(b.params);
            }
            plan.dir[k].push_back(std::move(b));
        }
    }
    return plan;
}

// Every lane gets an Emulator for each slot the plan names first (for every action, so that
// a lane never sees a slot's Emulator appear under it), and the plan's slots are taken.
void Dataplane::Impl::make_slot_emulators(const ClassPlan& plan) {
    for (unsigned s = slots_named + 1; s <= plan.slots; ++s)
        for (unsigned k = 0; k < n_dirs; ++k)
            for (auto& d : lanes[k])
                make_slot_emulator(*d, s, link.direction(k));
    slots_named = plan.slots;
    slot_names = plan.slot_names;
    {
        std::lock_guard lock(names_mu);
        capture_names = slot_names;
    }
    {
        std::lock_guard lock(capture_mu);
        if (recorder) recorder->forget_names();
    }
    classifier = plan.classifier;
    slot_class.fill(kNoClass);
    slot_class[0] = kDefaultClass;
    for (std::size_t i = 0; i < plan.dir[0].size(); ++i)
        slot_class[plan.dir[0][i].slot] = static_cast<std::uint8_t>(i + 1);
}

// Slot s's Emulator in lane d, as make_lane_emulator makes `default`'s: every queue kind
// reserved for the lane's buffer cap, its own random streams, telemetry into its own ring.
void Dataplane::Impl::make_slot_emulator(Lane& d, unsigned s, const LinkParams& stored) {
    const LinkParams p = lane_params(stored, d);
    auto e = std::make_unique<MbufEmulator>(p, d.index + 2 * (d.queue + n_queues * s));
    e->reserve(d.buffer_cap + kMaxBurst);
    e->set_prefetch_ahead(!d.exchange);
    if (cfg.telemetry) {
        const unsigned per_s = std::min(cfg.delay_samples_per_s, kMaxDelaySamplesPerS) / n_queues;
        d.slot_samples[s] = std::make_unique<SpscRing<DelaySample>>(std::max(1024u, per_s / 2));
        e->set_telemetry(per_s ? kNsPerSec / per_s : 0, 16384, d.slot_samples[s].get());
    }
    d.slot_emu[s] = std::move(e);
}

// Each class's counters, `default` first: the sums over the direction's lanes of their newest
// slot reports (`live`), or of the Emulators' counters.
std::vector<ClassStats> Dataplane::Impl::class_stats(bool live) const {
    std::vector<ClassStats> out;
    if (link.classes.empty()) return out;
    out.resize(link.classes.size() + 1);
    out[0].name = kDefaultClassName;
    for (std::size_t i = 0; i < link.classes.size(); ++i) {
        out[i + 1].name = link.classes[i].name;
        out[i + 1].action = link.classes[i].action;
    }
    for (unsigned k = 0; k < n_dirs; ++k)
        for (unsigned q = 0; q < n_queues; ++q) {
            const SlotReport r = live ? latest_slots[k][q] : slot_counts(*lanes[k][q], slots_named);
            for (unsigned s = 0; s <= r.slots; ++s)
                if (slot_class[s] != kNoClass) add_counters(out[slot_class[s]].dir[k], r.c[s]);
        }
    return out;
}

// Worker q of direction k, receiving on rx and sending on tx, with its buffers and its
// report ring (its Emulator comes next: make_lane_emulator).
std::unique_ptr<Lane> Dataplane::Impl::make_lane(unsigned k, unsigned q, const EthPort& rx,
                                                 const EthPort& tx) {
    auto d = std::make_unique<Lane>();
    d->index = k;
    d->queue = q;
    d->adopted = ~std::uint64_t{0};  // adopts generation 0's block at its first loop
    d->rx_port = rx.id();
    d->tx_port = tx.id();
    d->burst = static_cast<std::uint16_t>(cfg.burst);
    // A worker on its own lcore takes consecutive full bursts up to what one reservation of
    // a shared link covers (stages.cpp, poll_rx_gathered); with `shared` both directions
    // take a burst each in turn.
    const unsigned per_reservation = MbufEmulator::kMaxReservation / cfg.burst * cfg.burst;
    d->gather = static_cast<std::uint16_t>(
        !cfg.workers.shared ? std::max<unsigned>(cfg.burst, per_reservation) : cfg.burst);
    size_lane_buffers(*d, k, rx, tx);
    d->reports = std::make_unique<SpscRing<IntervalReport>>(256);
    d->slot_reports = std::make_unique<SpscRing<SlotReport>>(8);
    return d;
}

// How many packets the lane's Emulator may hold, and whether it queues whole mbufs or
// exchanged buffers (exchange.hpp).
void Dataplane::Impl::size_lane_buffers(Lane& d, unsigned k, const EthPort& rx, const EthPort& tx) {
    const unsigned q = d.queue;
    // The Emulator may hold what the pool has left once every other place an mbuf of it
    // can wait is full: RX descriptors, the TX descriptors of the sending port, pending
    // arrays and the per-lcore caches. It then drops excess packets as buffer_full instead
    // of starving the port of mbufs.
    const std::uint64_t elsewhere =
        rx.rx_desc() + tx.tx_desc() + cfg.burst + d.gather + kPoolCache * 3 / 2 * 2;
    d.buffer_cap = pool_size > elsewhere + 1024 ? pool_size - elsewhere : 1024;
    // Buffer exchange: headers for all those places, the stash, held mbufs and a margin
    // for the drain's top-up circulate; the buffers of all other mbufs are the queue's.
    rte_mempool* pool = pools[k * n_queues + q].get();
    const std::uint32_t held_cap = std::clamp(pool_size / 16, kHeldCapMin, kHeldCapMax);
    const std::uint64_t headers = elsewhere + kStashBursts * d.gather + held_cap + 2u * cfg.burst;
    if (cfg.hold_mbufs) {
        if (q == 0) log("direction %u: --hold-mbufs: packets are queued as whole mbufs", k);
    } else if (pool_size < headers + 4096) {
        log("direction %u worker %u: a pool of %u mbufs is too small for buffer exchange "
            "(it needs more than %llu); packets are queued as whole mbufs",
            k, q, pool_size, static_cast<unsigned long long>(headers + 4096));
    } else if (setup_exchange(d, pool, static_cast<std::uint32_t>(pool_size - headers), held_cap)) {
        d.buffer_cap = d.donors.size() - cfg.burst;
        if (q == 0)
            log("direction %u: buffer exchange: %zu packet buffers for the queue, %llu "
                "mbuf headers circulate (per worker)",
                k, d.donors.size(), static_cast<unsigned long long>(headers));
    }
}

// The lane's Emulator: its random streams, its queues reserved, the direction's
// parameters (`stored`, with the tables made for them), the shared link and the telemetry.
void Dataplane::Impl::make_lane_emulator(Lane& d, const LinkParams& stored,
                                         const DelayTables& tables) {
    const unsigned k = d.index, q = d.queue;
    const LinkParams p = lane_params(stored, d);
    // A random stream per direction and worker; worker 0's are those of one worker. Every
    // queue kind reserved, so that a run-time switch of strategy, limiter or queue does not
    // allocate on the lcore.
    d.emu = std::make_unique<MbufEmulator>(p, k + 2 * q);
    d.emu->reserve(p.buffer_limit_packets + kMaxBurst);
    d.emu->set_params(p, tables);
    d.emu->set_prefetch_ahead(!d.exchange);  // exchanged buffers are never read here
    if (n_queues > 1) d.emu->share_limiter(links[k].get());
    if (cfg.telemetry) {
        // The control thread takes samples every 50 ms: room for ~0.5 s of them. The
        // direction's rate is split between its workers.
        const unsigned per_s = std::min(cfg.delay_samples_per_s, kMaxDelaySamplesPerS) / n_queues;
        d.samples = std::make_unique<SpscRing<DelaySample>>(std::max(1024u, per_s / 2));
        d.emu->set_telemetry(per_s ? kNsPerSec / per_s : 0, 16384, d.samples.get());
    }
}

// Lcore tasks: one lcore per lane, or with `shared` one for both directions' lanes.
void Dataplane::Impl::make_tasks(const std::vector<unsigned>& lcores) {
    auto add = [&](std::initializer_list<Lane*> ls) {
        LcoreTask t;
        t.run = &run;
        for (Lane* d : ls)
            t.lanes[t.n_lanes++] = d;
        t.lcore = lcores[tasks.size()];
        tasks.push_back(t);
    };
    if (cfg.workers.shared) {
        if (n_dirs == 2)
            add({lanes[0][0].get(), lanes[1][0].get()});
        else
            add({lanes[0][0].get()});
    } else {
        for (unsigned k = 0; k < n_dirs; ++k)
            for (auto& d : lanes[k])
                add({d.get()});
    }
}

Dataplane::Dataplane(Eal& eal, DataplaneConfig config)
    : impl_(std::make_unique<Impl>(eal, std::move(config))) {
    Impl& m = *impl_;
    m.check_burst_and_workers();
    m.n_dirs = m.cfg.port_b.empty() ? 1 : 2;
    m.n_queues = queues_per_port(m.cfg.workers);
    m.check_links();
    const auto [spec_a, spec_b] = m.resolve_ports();
    const std::vector<unsigned> lcores = m.worker_lcores();
    m.ports.push_back(std::make_unique<EthPort>(spec_a));
    if (spec_b) m.ports.push_back(std::make_unique<EthPort>(*spec_b));
    m.make_pools();
    m.check_classes(m.cfg.link);
    for (unsigned k = 0; k < m.n_dirs; ++k)
        m.set_up_direction(k);
    if (m.n_dirs == 1) m.link.b_to_a = m.link.a_to_b;
    if (!m.cfg.link.classes.empty()) {
        // The classes from the start: generation 0's blocks again, with them.
        m.link.classes = m.cfg.link.classes;
        const Impl::ClassPlan plan = m.plan_classes(m.link);
        m.make_slot_emulators(plan);
        for (unsigned k = 0; k < m.n_dirs; ++k)
            m.publish(k, 0, m.link.direction(k), m.lane_blocks[k][0]->tables, plan);
    }
    m.cfg.link = m.link;
    log("the emulator holds at most %llu packets per direction%s (what the pool of %u mbufs "
        "allows; beyond: buffer_full drops; raise --mbufs for more)",
        static_cast<unsigned long long>(m.lanes[0][0]->buffer_cap),
        m.n_queues > 1 ? " and worker" : "", m.pool_size);
    m.make_tasks(lcores);
}

Dataplane::~Dataplane() {
    stop();
    impl_->ports.clear();  // before the pools the ports' queues point into
    impl_->pools.clear();
    detail::collect_parked_pools();
}

void Dataplane::start() {
    Impl& m = *impl_;
    if (m.launched) return;
    m.run.store(true, std::memory_order_release);
    for (LcoreTask& t : m.tasks) {
        const int ret = rte_eal_remote_launch(lcore_main, &t, t.lcore);
        if (ret != 0) {
            m.run.store(false);
            for (LcoreTask& u : m.tasks)
                if (&u != &t) rte_eal_wait_lcore(u.lcore);
            throw DataplaneError("cannot launch lcore " + std::to_string(t.lcore) + ": " +
                                 detail::rte_error_text(-ret));
        }
    }
    m.launched = true;
    std::string desc;
    for (const LcoreTask& t : m.tasks) {
        desc += ' ';
        desc += std::to_string(t.lcore);
    }
    log("data plane running: workers %s, burst %u, lcores%s", to_string(m.cfg.workers).c_str(),
        m.cfg.burst, desc.c_str());
}

bool Dataplane::running() const {
    return impl_->launched && !impl_->stopped;
}

void Dataplane::stop() {
    Impl& m = *impl_;
    if (m.stopped) return;
    {
        std::lock_guard lock(m.capture_mu);
        m.stop_capture(capture::StopReason::shutdown);
    }
    m.stopped = true;
    m.run.store(false, std::memory_order_release);
    if (m.launched)
        for (const LcoreTask& t : m.tasks)
            rte_eal_wait_lcore(t.lcore);
    {
        std::lock_guard lock(m.mu);
        m.final_stats = m.collect(false);
    }
    // How the flows spread over the workers (RSS, the kernel's fanout).
    if (m.n_queues > 1)
        for (unsigned k = 0; k < m.n_dirs; ++k) {
            std::string per;
            for (const auto& d : m.lanes[k])
                per += (per.empty() ? "" : ", ") + std::to_string(d->emu->snapshot().packets_in);
            log("direction %u: packets in per worker: %s", k, per.c_str());
            // What the workers' shared limiter cost: one compare-and-swap on the link's word
            // per reservation.
            std::uint64_t reservations = 0, reserved = 0;
            for (const auto& d : m.lanes[k]) {
                reservations += d->emu->link_reservations();
                reserved += d->emu->link_reserved_packets();
            }
            if (reservations)
                log("direction %u: the workers reserved the shared link %llu times for %llu "
                    "packets (%.1f a reservation)",
                    k, static_cast<unsigned long long>(reservations),
                    static_cast<unsigned long long>(reserved),
                    static_cast<double>(reserved) / static_cast<double>(reservations));
        }
#ifdef LINKEM_DP_PROFILE
    for (unsigned k = 0; k < m.n_dirs; ++k)
        for (const auto& d : m.lanes[k]) {
            const StageProfile& p = d->prof;
            const double n = p.packets ? static_cast<double>(p.packets) : 1.0;
            log("profile: direction %u worker %u: TSC cycles per packet: rx %.1f, exchange %.1f, "
                "ingest %.1f, drain %.1f, headers %.1f, tx %.1f (%llu packets, %.1f per tx "
                "burst, TSC %.3f GHz)",
                k, d->queue, static_cast<double>(p.rx) / n, static_cast<double>(p.exchange) / n,
                static_cast<double>(p.ingest) / n, static_cast<double>(p.drain) / n,
                static_cast<double>(p.headers) / n, static_cast<double>(p.tx) / n,
                static_cast<unsigned long long>(p.packets),
                static_cast<double>(p.packets) / static_cast<double>(p.tx_calls ? p.tx_calls : 1),
                detail::tsc_hz() * 1e-9);
        }
#endif
    for (unsigned k = 0; k < m.n_dirs; ++k)
        for (auto& d : m.lanes[k])
            free_all(*d);
    for (auto& port : m.ports)
        port->stop();
}

std::uint64_t Dataplane::apply(const LinkConfig& link) {
    for (unsigned k = 0; k < impl_->n_dirs; ++k) {
        try {
            validate(link.direction(k));
        } catch (const ParamError& e) {
            throw ParamError(std::string(kDirectionKeys[k]) + "." + e.field(), e.message());
        }
    }
    return update([&](const LinkConfig&) { return link; }).first;
}

std::pair<std::uint64_t, LinkConfig> Dataplane::update(
    const std::function<LinkConfig(const LinkConfig&)>& f) {
    return update(f, nullptr, 0);
}

std::pair<std::uint64_t, LinkConfig> Dataplane::update(
    const std::function<LinkConfig(const LinkConfig&)>& f,
    std::shared_ptr<const ScenarioTracks> tracks, TimeNs origin_ns) {
    Impl& m = *impl_;
    std::lock_guard lock(m.mu);
    const LinkConfig link = f(m.link);
    m.check_classes(link);
    std::array<LinkParams, 2> next{link.a_to_b, link.b_to_a};
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        try {
            refuse_unshared(next[k], m.n_queues);
            if (tracks)
                for (const ScenarioTrack::Segment& seg : tracks->dir[k].segments())
                    refuse_unshared(seg.from, m.n_queues);
        } catch (const ParamError& e) {
            throw ParamError(std::string(k == 0 ? "a_to_b." : "b_to_a.") + e.field(), e.message());
        }
    }
    m.reclaim();
    // What may still throw (the classifier's build), before anything changes.
    const Impl::ClassPlan plan = m.plan_classes(link);
    m.make_slot_emulators(plan);
    m.link.classes = link.classes;
    const std::uint64_t gen = ++m.generation;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        LinkParams& stored = m.link.direction(k);
        stored = next[k];
        // Seed 0 draws a new seed, as at start; the same seed as in use keeps the streams.
        if (stored.seed == 0) stored.seed = random_seed();
        // The costly part of adopting the parameters, done here on the control thread
        // (sharing the tables in use where they still fit).
        m.publish(k, gen, stored, MbufEmulator::prepare(stored, m.lane_blocks[k][0]->tables), plan,
                  tracks ? &tracks->dir[k] : nullptr, origin_ns);
    }
    if (m.n_dirs == 1) m.link.b_to_a = m.link.a_to_b;
    m.cfg.link = m.link;
    return {gen, m.link};
}

bool Dataplane::wait_applied(std::uint64_t gen, std::chrono::milliseconds timeout) const {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        bool all = true;
        for (unsigned k = 0; k < impl_->n_dirs; ++k)
            all = all && impl_->acked_by_all(k, gen);
        if (all) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

LinkConfig Dataplane::link() const {
    std::lock_guard lock(impl_->mu);
    return impl_->link;
}

std::uint64_t Dataplane::generation() const {
    std::lock_guard lock(impl_->mu);
    return impl_->generation;
}

DataplaneStats Dataplane::stats() const {
    std::lock_guard lock(impl_->mu);
    impl_->reclaim();
    if (impl_->final_stats) return *impl_->final_stats;
    return impl_->collect(impl_->launched);
}

void Dataplane::take_telemetry(TelemetryBatch& out) {
    Impl& m = *impl_;
    out.clear();
    std::lock_guard lock(m.mu);
    if (m.launched && !m.stopped) m.pull_reports();
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        std::swap(out.reports[k], m.backlog.reports[k]);
        auto& samples = out.samples[k];
        for (const auto& d : m.lanes[k]) {
            DelaySample buf[256];
            std::size_t n;
            for (unsigned s = 0; s <= m.slots_named; ++s) {
                SpscRing<DelaySample>* ring = s == 0 ? d->samples.get() : d->slot_samples[s].get();
                if (!ring) continue;
                while ((n = ring->pop(buf, 256)) > 0)
                    for (std::size_t i = 0; i < n; ++i)
                        if (m.slot_class[s] != Impl::kNoClass) {  // not of a class since removed
                            buf[i].class_id = m.slot_class[s];
                            samples.push_back(buf[i]);
                        }
            }
        }
        // Each worker's and class's samples come in order of their departure; all of them: by
        // arrival.
        if (m.n_queues > 1 || m.slots_named > 0)
            std::sort(samples.begin(), samples.end(),
                      [](const DelaySample& a, const DelaySample& b) {
                          return a.arrival_ns < b.arrival_ns;
                      });
    }
}

// ------------------------------------------------------------------------ capture

capture::Status Dataplane::start_capture(const capture::Settings& s) {
    Impl& m = *impl_;
    capture::validate(s);
    if (s.direction && *s.direction >= m.n_dirs)
        throw ParamError("direction",
                         "b_to_a: this link has one direction (one port); allowed: "
                         "a_to_b");
    unsigned slot = 0;
    if (s.class_name && *s.class_name != kDefaultClassName) {
        std::lock_guard lock(m.mu);
        std::string known = kDefaultClassName;
        bool found = false;
        for (const TrafficClass& c : m.link.classes) {
            known += ", " + c.name;
            found = found || c.name == *s.class_name;
        }
        for (unsigned t = 1; found && t <= m.slots_named; ++t)
            if (m.slot_names[t] == *s.class_name) slot = t;
        if (!found || slot == 0)
            throw ParamError("class", "'" + *s.class_name +
                                          "' is not a class of the link; its classes: " + known);
    }
    std::lock_guard lock(m.capture_mu);
    if (m.recorder)
        throw capture::Busy("a capture is running (to " + m.recorder->status().file +
                            "); stop it first");
    if (m.stopped) throw capture::Busy("the data plane has stopped");
    std::vector<capture::Recorder::Lane> which;
    std::vector<Lane*> lanes;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        if (s.direction && *s.direction != k) continue;
        for (auto& d : m.lanes[k]) {
            which.push_back({k, d->queue});
            lanes.push_back(d.get());
        }
    }
    try {
        m.recorder = std::make_unique<capture::Recorder>(
            s, m.n_dirs, which, m.ring_bytes(),
            [&m](unsigned, unsigned slot_k) {
                std::lock_guard names(m.names_mu);
                return slot_k < kSlots ? m.capture_names[slot_k] : std::string("?");
            },
            [] { return tsc_now(); }, capture::utc_offset([] { return tsc_now(); }));
    } catch (const std::system_error& e) {
        throw ParamError("file", std::string(e.what()) + "; give a path linkemd can write");
    }
    const std::uint64_t tag = std::random_device{}() | std::uint64_t{1} << 63;
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        auto c = std::make_unique<LaneCapture>();
        c->ring = &m.recorder->ring(i);
        c->points = s.points;
        c->snaplen = s.snaplen;
        c->tag = tag ^ (static_cast<std::uint64_t>(i) << 32);
        if (s.class_name)
            c->slot_on[slot] = true;
        else
            c->slot_on.fill(true);
        m.captured.push_back(lanes[i]);
        m.lane_captures.push_back(std::move(c));
    }
    m.publish_captures(true);
    return m.recorder->status();
}

// Under capture_mu.
capture::Status Dataplane::Impl::stop_capture(capture::StopReason reason) {
    if (!recorder) return last_capture;
    publish_captures(false);
    last_capture = recorder->finish(reason);
    for (capture::Event& e : recorder->take_events())
        capture_events.push_back(std::move(e));
    recorder.reset();
    captured.clear();
    lane_captures.clear();
    return last_capture;
}

capture::Status Dataplane::stop_capture(capture::StopReason reason) {
    std::lock_guard lock(impl_->capture_mu);
    return impl_->stop_capture(reason);
}

capture::Status Dataplane::capture_status() const {
    std::lock_guard lock(impl_->capture_mu);
    return impl_->recorder ? impl_->recorder->status() : impl_->last_capture;
}

std::vector<capture::Event> Dataplane::take_capture_events() {
    Impl& m = *impl_;
    std::lock_guard lock(m.capture_mu);
    if (m.recorder) {
        for (capture::Event& e : m.recorder->take_events())
            m.capture_events.push_back(std::move(e));
        if (m.recorder->ended()) m.stop_capture(capture::StopReason::stopped);
    }
    return std::exchange(m.capture_events, {});
}

std::size_t Dataplane::capture_ring_bytes() const {
    return impl_->ring_bytes();
}

unsigned Dataplane::directions() const {
    return impl_->n_dirs;
}
const DataplaneConfig& Dataplane::config() const {
    return impl_->cfg;
}
std::uint64_t Dataplane::seed(unsigned direction) const {
    std::lock_guard lock(impl_->mu);
    return impl_->link.direction(direction).seed;
}
std::uint32_t Dataplane::mbufs_per_pool() const {
    return impl_->pool_size;
}

std::vector<std::string> Dataplane::mempool_names() const {
    std::vector<std::string> names;
    for (const detail::Mempool& p : impl_->pools)
        if (p) names.emplace_back(p->name);
    return names;
}

}  // namespace linkem::dp
