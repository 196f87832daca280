#include "linkem/dataplane/dataplane.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring_elem.h>

#include "direction.hpp"
#include "exchange.hpp"
#include "port.hpp"
#include "stages.hpp"

namespace linkem::dp {

using namespace detail;

// ------------------------------------------------------------------------------- Impl
struct Dataplane::Impl {
    Impl(Eal& e, DataplaneConfig c) : eal(e), cfg(std::move(c)) {}

    Eal& eal;
    DataplaneConfig cfg;
    unsigned n_dirs = 1;
    std::uint32_t pool_size = 0;
    std::vector<detail::Mempool> pools;           // one per receiving port
    std::vector<std::unique_ptr<EthPort>> ports;  // a, b
    std::array<std::unique_ptr<Direction>, 2> dirs;
    std::vector<LcoreTask> tasks;
    std::atomic<bool> run{false};
    bool launched = false, stopped = false;

    mutable std::mutex mu;  // control side: apply, reclaim, stats
    std::uint64_t generation = 0;
    std::array<std::unique_ptr<ParamBlock>, 2> current;
    struct Retired {
        std::unique_ptr<ParamBlock> block;
        unsigned dir;
        std::uint64_t replaced_by;  // generation of the block that replaced it
    };
    mutable std::vector<Retired> retired;
    LinkConfig link;
    std::optional<DataplaneStats> final_stats;
    // Interval reports moved out of the lcores' rings (under mu): the newest per direction
    // (the counters stats() shows), and those take_telemetry() has not handed out yet.
    mutable std::array<std::optional<IntervalReport>, 2> latest;
    mutable TelemetryBatch backlog;
    static constexpr std::size_t kMaxBacklog = 256;  // reports per direction: ~13 s

    void pull_reports() const {
        IntervalReport r[16];
        for (unsigned k = 0; k < n_dirs; ++k) {
            std::size_t n;
            while ((n = dirs[k]->reports->pop(r, 16)) > 0) {
                latest[k] = r[n - 1];
                auto& b = backlog.reports[k];
                b.insert(b.end(), r, r + n);
                if (b.size() > kMaxBacklog)
                    b.erase(b.begin(), b.end() - static_cast<std::ptrdiff_t>(kMaxBacklog));
            }
        }
    }

    LinkParams capped(const LinkParams& p, const Direction& d) const {
        LinkParams q = p;
        q.buffer_limit_packets = std::min<std::uint64_t>(q.buffer_limit_packets, d.buffer_cap);
        return q;
    }

    void reclaim() const {
        std::erase_if(retired, [this](const auto& r) {
            return dirs[r.dir]->acked.load(std::memory_order_acquire) >= r.replaced_by;
        });
    }

    // `live`: the lcores run, so each direction's counters come from its newest interval
    // report (consistent, taken between two bursts); else (before the first report, after
    // stop) straight from the Emulator.
    DataplaneStats collect(bool live) const {
        DataplaneStats s;
        s.t_ns = tsc_now();
        s.directions = n_dirs;
        if (live) pull_reports();
        for (unsigned k = 0; k < n_dirs; ++k) {
            const Direction& d = *dirs[k];
            DirectionStats& ds = s.dir[k];
            if (live && latest[k]) {
                ds.params_generation = latest[k]->params_generation;
                ds.counters = latest[k]->counters;
                ds.delay_samples_dropped = latest[k]->samples_dropped;
                if (k == 0) s.t_ns = latest[k]->end_ns;
            } else if (live) {
                // Running, but no report yet (its first kReportPeriod): the lcore's counters
                // cannot be read consistently from here, so show those of the start (zero),
                // which balance.
                ds.params_generation = d.acked.load(std::memory_order_acquire);
                ds.counters = {};
                ds.delay_samples_dropped = 0;
            } else {
                // Before the counters: an interval whose two ends show the same generation
                // was spent entirely under that parameter block.
                ds.params_generation = d.acked.load(std::memory_order_acquire);
                ds.counters = d.emu->snapshot();
                ds.delay_samples_dropped = d.emu->samples_dropped();
            }
            ds.tx_sent = d.tx_sent.load(std::memory_order_acquire);
            ds.tx_queued =
                ds.counters.packets_out > ds.tx_sent ? ds.counters.packets_out - ds.tx_sent : 0;
            ds.buffer_limit = std::min<std::uint64_t>(
                k == 0 ? link.a_to_b.buffer_limit_packets : link.b_to_a.buffer_limit_packets,
                d.buffer_cap);
            ds.buffer_exchange = d.exchange;
            ds.stalls = d.stalls.load(std::memory_order_relaxed);
            ds.stall_ns = d.stall_ns.load(std::memory_order_relaxed);
            ds.longest_stall_ns = d.longest_stall_ns.load(std::memory_order_relaxed);
        }
        s.ports = static_cast<unsigned>(ports.size());
        for (unsigned k = 0; k < ports.size(); ++k)
            s.port[k] = ports[k]->stats();
        return s;
    }
};

Dataplane::Dataplane(Eal& eal, DataplaneConfig config)
    : impl_(std::make_unique<Impl>(eal, std::move(config))) {
    Impl& m = *impl_;
    DataplaneConfig& cfg = m.cfg;
    if (cfg.burst < 1 || cfg.burst > kMaxBurst)
        throw ParamError("burst", std::to_string(cfg.burst) + " is out of range; allowed 1 .. " +
                                      std::to_string(kMaxBurst));
    m.n_dirs = cfg.port_b.empty() ? 1 : 2;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        const char* name = k == 0 ? "a_to_b" : "b_to_a";
        try {
            validate(k == 0 ? cfg.link.a_to_b : cfg.link.b_to_a);
        } catch (const ParamError& e) {
            throw ParamError(std::string(name) + "." + e.field(), e.message());
        }
    }
    const PortSpec spec_a = resolve_port(cfg.port_a, "port_a");
    std::optional<PortSpec> spec_b;
    if (m.n_dirs == 2) {
        spec_b = resolve_port(cfg.port_b, "port_b");
        if (spec_b->name == spec_a.name)
            throw ParamError("port_b",
                             "is the same device as port_a; omit port_b for "
                             "single-port mode");
    }
    const unsigned needed = worker_lcores_needed(cfg.layout, m.n_dirs);
    std::vector<unsigned> lcores;
    unsigned lc;
    RTE_LCORE_FOREACH_WORKER(lc) lcores.push_back(lc);
    if (lcores.size() < needed)
        throw DataplaneError("lcore layout '" + std::string(to_string(cfg.layout)) + "' with " +
                             std::to_string(m.n_dirs) + " direction(s) needs " +
                             std::to_string(needed) + " worker lcores; the EAL has " +
                             std::to_string(lcores.size()));

    m.ports.push_back(std::make_unique<EthPort>(spec_a));
    if (spec_b) m.ports.push_back(std::make_unique<EthPort>(*spec_b));

    const std::uint32_t total = cfg.mbufs ? cfg.mbufs : default_mbufs(cfg.link, m.n_dirs);
    cfg.mbufs = total;
    m.pool_size = total / static_cast<std::uint32_t>(m.ports.size());
    for (auto& port : m.ports) {
        m.pools.push_back(
            detail::make_pktmbuf_pool(detail::unique_name("lk_rx"), m.pool_size, port->socket()));
        port->configure(m.pools.back().get());
    }
    log("%u mbufs in %zu pool(s) of %u", total, m.pools.size(), m.pool_size);
    for (auto& port : m.ports)
        log("port %s: %s", port->spec().text.c_str(), port->link_text().c_str());

    const bool staged = cfg.layout == Layout::two || cfg.layout == Layout::three;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        auto d = std::make_unique<Direction>();
        d->index = k;
        const EthPort& rx = *m.ports[k];
        const EthPort& tx = *m.ports[m.ports.size() == 1 ? 0 : 1 - k];
        d->rx_port = rx.id();
        d->tx_port = tx.id();
        d->burst = static_cast<std::uint16_t>(cfg.burst);
        // The Emulator may hold what the pool has left once every other place an mbuf of
        // it can wait is full: RX descriptors, the TX descriptors of the sending port,
        // stage rings, pending arrays and the per-lcore caches. It then drops excess
        // packets as buffer_full instead of starving the port of mbufs.
        const std::uint64_t elsewhere = rx.rx_desc() + tx.tx_desc() +
                                        (staged ? 2 * kStageRing : 0) + 2 * cfg.burst +
                                        kPoolCache * 3 / 2 * (needed + 1);
        d->buffer_cap = m.pool_size > elsewhere + 1024 ? m.pool_size - elsewhere : 1024;
        // Buffer exchange: headers for all those places, the stash, held mbufs and a margin
        // for the drain's top-up circulate; the buffers of all other mbufs are the queue's.
        const std::uint32_t held_cap = std::clamp(m.pool_size / 16, kHeldCapMin, kHeldCapMax);
        const std::uint64_t headers =
            elsewhere + kStashBursts * cfg.burst + held_cap + 2u * cfg.burst;
        if (cfg.hold_mbufs) {
            log("direction %u: --hold-mbufs: packets are queued as whole mbufs", k);
        } else if (m.pool_size < headers + 4096) {
            log("direction %u: a pool of %u mbufs is too small for buffer exchange (it needs "
                "more than %llu); packets are queued as whole mbufs",
                k, m.pool_size, static_cast<unsigned long long>(headers + 4096));
        } else if (setup_exchange(*d, m.pools[k].get(),
                                  static_cast<std::uint32_t>(m.pool_size - headers), held_cap)) {
            d->buffer_cap = d->donors.size() - cfg.burst;
            log("direction %u: buffer exchange: %zu packet buffers for the queue, %llu mbuf "
                "headers circulate",
                k, d->donors.size(), static_cast<unsigned long long>(headers));
        }
        if (staged) {
            d->tx_ring.reset(rte_ring_create(detail::unique_name("lk_tx").c_str(), kStageRing,
                                             rx.socket(), RING_F_SP_ENQ | RING_F_SC_DEQ));
            if (cfg.layout == Layout::three)
                d->rx_ring.reset(rte_ring_create_elem(detail::unique_name("lk_rx").c_str(),
                                                      sizeof(RxItem), kStageRing, rx.socket(),
                                                      RING_F_SP_ENQ | RING_F_SC_DEQ));
            if (!d->tx_ring || (cfg.layout == Layout::three && !d->rx_ring))
                throw DataplaneError("cannot create stage rings: " + detail::rte_error_text());
        }
        const LinkParams& user = k == 0 ? cfg.link.a_to_b : cfg.link.b_to_a;
        const LinkParams p = m.capped(user, *d);
        // Reserve both queue kinds, so that a run-time switch of strategy between FIFO and
        // reordering does not allocate either.
        LinkParams other = p;
        other.strategy =
            p.strategy == Strategy::reordered ? Strategy::correlated : Strategy::reordered;
        d->emu = std::make_unique<MbufEmulator>(other, k);  // a random stream per direction
        d->emu->reserve(p.buffer_limit_packets + kMaxBurst);
        d->emu->set_params(p);
        d->emu->set_prefetch_ahead(!d->exchange);  // exchanged buffers are never read here
        d->emu->reserve(p.buffer_limit_packets + kMaxBurst);
        LinkParams& stored = k == 0 ? m.link.a_to_b : m.link.b_to_a;
        stored = user;
        stored.seed = d->emu->seed();
        m.current[k] = std::make_unique<ParamBlock>(ParamBlock{0, p, nullptr, 0});
        m.current[k]->params.seed = stored.seed;
        d->block.store(m.current[k].get(), std::memory_order_relaxed);
        d->reports = std::make_unique<SpscRing<IntervalReport>>(256);
        if (cfg.telemetry) {
            // The control thread takes samples every 50 ms: room for ~0.5 s of them.
            const unsigned per_s = std::min(cfg.delay_samples_per_s, kMaxDelaySamplesPerS);
            d->samples = std::make_unique<SpscRing<DelaySample>>(std::max(1024u, per_s / 2));
            d->emu->set_telemetry(per_s ? kNsPerSec / per_s : 0, 16384, d->samples.get());
        }
        m.dirs[k] = std::move(d);
    }
    if (m.n_dirs == 1) m.link.b_to_a = m.link.a_to_b;
    cfg.link = m.link;
    log("the emulator holds at most %llu packets per direction (what the pool of %u mbufs "
        "allows; beyond: buffer_full drops; raise --mbufs for more)",
        static_cast<unsigned long long>(m.dirs[0]->buffer_cap), m.pool_size);

    // Lcore tasks.
    auto add = [&](Role role, std::initializer_list<Direction*> ds) {
        LcoreTask t;
        t.run = &m.run;
        t.role = role;
        for (Direction* d : ds)
            t.dirs[t.n_dirs++] = d;
        t.lcore = lcores[m.tasks.size()];
        m.tasks.push_back(t);
    };
    Direction* d0 = m.dirs[0].get();
    Direction* d1 = m.n_dirs == 2 ? m.dirs[1].get() : nullptr;
    switch (cfg.layout) {
        case Layout::shared:
            if (d1)
                add(Role::full, {d0, d1});
            else
                add(Role::full, {d0});
            break;
        case Layout::one:
            for (Direction* d : {d0, d1})
                if (d) add(Role::full, {d});
            break;
        case Layout::two:
            for (Direction* d : {d0, d1})
                if (d) {
                    add(Role::rx_emulate, {d});
                    add(Role::tx, {d});
                }
            break;
        case Layout::three:
            for (Direction* d : {d0, d1})
                if (d) {
                    add(Role::rx, {d});
                    add(Role::emulate, {d});
                    add(Role::tx, {d});
                }
            break;
    }
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
    log("data plane running: layout '%s', burst %u, lcores%s",
        std::string(to_string(m.cfg.layout)).c_str(), m.cfg.burst, desc.c_str());
}

bool Dataplane::running() const {
    return impl_->launched && !impl_->stopped;
}

void Dataplane::stop() {
    Impl& m = *impl_;
    if (m.stopped) return;
    m.stopped = true;
    m.run.store(false, std::memory_order_release);
    if (m.launched)
        for (const LcoreTask& t : m.tasks)
            rte_eal_wait_lcore(t.lcore);
    {
        std::lock_guard lock(m.mu);
        m.final_stats = m.collect(false);
    }
#ifdef LINKEM_DP_PROFILE
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        const StageProfile& p = m.dirs[k]->prof;
        const double n = p.packets ? static_cast<double>(p.packets) : 1.0;
        log("profile: direction %u: TSC cycles per packet: rx %.1f, exchange %.1f, ingest %.1f, "
            "drain %.1f, headers %.1f, tx %.1f (%llu packets, %.1f per tx burst, TSC %.3f GHz)",
            k, static_cast<double>(p.rx) / n, static_cast<double>(p.exchange) / n,
            static_cast<double>(p.ingest) / n, static_cast<double>(p.drain) / n,
            static_cast<double>(p.headers) / n, static_cast<double>(p.tx) / n,
            static_cast<unsigned long long>(p.packets),
            static_cast<double>(p.packets) / static_cast<double>(p.tx_calls ? p.tx_calls : 1),
            tsc_hz() * 1e-9);
    }
#endif
    for (unsigned k = 0; k < m.n_dirs; ++k)
        free_all(*m.dirs[k]);
    for (auto& port : m.ports)
        port->stop();
}

std::uint64_t Dataplane::apply(const LinkConfig& link) {
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
    std::array<LinkParams, 2> next{link.a_to_b, link.b_to_a};
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        try {
            validate(next[k]);
        } catch (const ParamError& e) {
            throw ParamError(std::string(k == 0 ? "a_to_b." : "b_to_a.") + e.field(), e.message());
        }
    }
    m.reclaim();
    const std::uint64_t gen = ++m.generation;
    for (unsigned k = 0; k < m.n_dirs; ++k) {
        Direction& d = *m.dirs[k];
        LinkParams& stored = k == 0 ? m.link.a_to_b : m.link.b_to_a;
        auto block = std::make_unique<ParamBlock>(ParamBlock{gen, m.capped(next[k], d), nullptr, 0});
        stored = next[k];
        // Seed 0 draws a new seed, as at start; the same seed as in use keeps the streams.
        if (stored.seed == 0) stored.seed = random_seed();
        block->params.seed = stored.seed;
        if (tracks) {
            auto track = std::make_shared<ScenarioTrack>(tracks->dir[k]);
            track->for_each_params([&](LinkParams& p) {
                p = m.capped(p, d);
                if (p.seed == 0) p.seed = stored.seed;
            });
            block->track = std::move(track);
            block->origin = origin_ns;
        }
        d.block.store(block.get(), std::memory_order_release);
        d.published.store(gen, std::memory_order_release);
        m.retired.push_back(Impl::Retired{std::move(m.current[k]), k, gen});
        m.current[k] = std::move(block);
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
            all = all && impl_->dirs[k]->acked.load(std::memory_order_acquire) >= gen;
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
        if (!m.dirs[k]->samples) continue;
        DelaySample buf[256];
        std::size_t n;
        while ((n = m.dirs[k]->samples->pop(buf, 256)) > 0)
            out.samples[k].insert(out.samples[k].end(), buf, buf + n);
    }
}

unsigned Dataplane::directions() const {
    return impl_->n_dirs;
}
const DataplaneConfig& Dataplane::config() const {
    return impl_->cfg;
}
std::uint64_t Dataplane::seed(unsigned direction) const {
    std::lock_guard lock(impl_->mu);
    return direction == 0 ? impl_->link.a_to_b.seed : impl_->link.b_to_a.seed;
}
std::uint32_t Dataplane::mbufs_per_pool() const {
    return impl_->pool_size;
}

std::string Dataplane::pool_check() const {
    std::string problems;
    for (std::size_t k = 0; k < impl_->pools.size(); ++k) {
        rte_mempool* mp = impl_->pools[k].get();
        if (!mp) continue;
        // Each mbuf's own buffer lies right after its header and private area; after any
        // number of exchanges the buffers in use must be exactly that set.
        struct Walk {
            std::vector<std::uintptr_t> own, in_use;
        } w;
        w.own.reserve(mp->size);
        w.in_use.reserve(mp->size);
        rte_mempool_obj_iter(
            mp,
            [](rte_mempool* pool, void* arg, void* obj, unsigned) {
                auto* walk = static_cast<Walk*>(arg);
                auto* m = static_cast<rte_mbuf*>(obj);
                walk->own.push_back(reinterpret_cast<std::uintptr_t>(m) + sizeof(rte_mbuf) +
                                    rte_pktmbuf_priv_size(pool));
                walk->in_use.push_back(reinterpret_cast<std::uintptr_t>(m->buf_addr));
            },
            &w);
        std::sort(w.own.begin(), w.own.end());
        std::sort(w.in_use.begin(), w.in_use.end());
        const auto shared = std::adjacent_find(w.in_use.begin(), w.in_use.end());
        char line[160];
        if (shared != w.in_use.end()) {
            std::snprintf(line, sizeof line, "pool %zu: two mbufs share the buffer at %#lx; ", k,
                          static_cast<unsigned long>(*shared));
            problems += line;
        } else if (w.own != w.in_use) {
            std::snprintf(line, sizeof line, "pool %zu: an mbuf holds a buffer not of the pool; ",
                          k);
            problems += line;
        }
        const unsigned back = rte_mempool_avail_count(mp);
        if (back != mp->size) {
            std::snprintf(line, sizeof line, "pool %zu: %u of %u mbufs back; ", k, back, mp->size);
            problems += line;
        }
    }
    return problems;
}

}  // namespace linkem::dp
