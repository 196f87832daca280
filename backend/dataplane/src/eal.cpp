#include "linkem/dataplane/eal.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf_pool_ops.h>

#include "dpdk.hpp"
#include "linkem/dataplane/dataplane.hpp"
#include "linkem/huge_pages.hpp"

namespace linkem::dp {

namespace detail {

TscClock g_clock;

namespace {

// Start-up calibration: two pairings this far apart. Each pairing is uncertain by half its
// width (~20-40 ns here, the clock_gettime call), so 250 ms pin the rate to ~0.2 ppm.
constexpr auto kCalibration = std::chrono::milliseconds(250);
// The background re-check: a pairing this often, the rate from the oldest kept pairing
// (up to an hour back); a change is adopted when it exceeds kAdoptPpm, announced when it
// exceeds kLogPpm, and takes effect kAnchorAhead in the future (TscScale::reanchor).
constexpr auto kRecheckPeriod = std::chrono::seconds(10);
constexpr double kAdoptPpm = 0.2;
constexpr double kLogPpm = 2.0;
constexpr double kAnchorAheadS = 0.02;

std::atomic<double> g_hz{0};
ClockPair g_start_pair;

double ppm(double a, double b) {
    return (a / b - 1.0) * 1e6;
}

struct Recheck {
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false;
    std::thread thread;
};
Recheck g_recheck;

void recheck_loop() {
    TscRateTracker tracker(g_start_pair);
    std::unique_lock lock(g_recheck.mu);
    while (!g_recheck.cv.wait_for(lock, kRecheckPeriod, [] { return g_recheck.stop; })) {
        lock.unlock();
        const ClockPair p = read_clock_pair(rte_rdtsc);
        const double hz = tracker.add(p);
        const double used = g_hz.load(std::memory_order_relaxed);
        const double diff = ppm(hz, used);
        if (std::fabs(diff) >= kAdoptPpm && std::fabs(diff) > tracker.error_ppm()) {
            const std::uint64_t at = rte_rdtsc() + static_cast<std::uint64_t>(used * kAnchorAheadS);
            g_clock.publish(g_clock.scale().reanchor(at, TscScale::mult_for(hz)));
            g_hz.store(hz, std::memory_order_relaxed);
            if (std::fabs(diff) >= kLogPpm)
                log("TSC rate re-checked over %.0f s against CLOCK_MONOTONIC_RAW: %.0f Hz "
                    "(%+.1f ppm), adopted",
                    static_cast<double>(tracker.baseline()) / 1e9, hz, diff);
        }
        lock.lock();
    }
}

}  // namespace

void init_tsc() {
    const double dpdk_hz = static_cast<double>(rte_get_tsc_hz());
    const ClockPair a = read_clock_pair(rte_rdtsc);
    std::this_thread::sleep_for(kCalibration);
    const ClockPair b = read_clock_pair(rte_rdtsc);
    double hz = rate_between(a, b);
    // A TSC that is not a steady clock (or a clock_gettime that fails) shows as a rate far
    // from the platform's: then the platform's figure it is.
    if (!(b.ns > a.ns) || !(std::fabs(ppm(hz, dpdk_hz)) < 50'000)) {
        log("TSC: calibration against CLOCK_MONOTONIC_RAW gave %.0f Hz, too far from "
            "rte_get_tsc_hz() %.0f Hz: using the latter",
            hz, dpdk_hz);
        hz = dpdk_hz;
    } else {
        log("TSC %.0f Hz by CLOCK_MONOTONIC_RAW over %.0f ms, +-%.2f ppm (rte_get_tsc_hz() "
            "%.0f Hz: %+.0f ppm from it); re-checked every %lld s",
            hz, static_cast<double>(b.ns - a.ns) / 1e6, rate_error_ppm(a, b), dpdk_hz,
            ppm(hz, dpdk_hz), static_cast<long long>(kRecheckPeriod.count()));
    }
    g_start_pair = a;
    g_hz.store(hz, std::memory_order_relaxed);
    g_clock.publish(TscScale::start(a.tick, 0, hz));
}

double tsc_hz() {
    return g_hz.load(std::memory_order_relaxed);
}

void start_tsc_recheck() {
    std::lock_guard lock(g_recheck.mu);
    if (g_recheck.thread.joinable()) return;
    g_recheck.stop = false;
    g_recheck.thread = std::thread(recheck_loop);
    pthread_setname_np(g_recheck.thread.native_handle(), "linkem-tsc");
}

void stop_tsc_recheck() {
    {
        std::lock_guard lock(g_recheck.mu);
        if (!g_recheck.thread.joinable()) return;
        g_recheck.stop = true;
    }
    g_recheck.cv.notify_all();
    g_recheck.thread.join();
}

void log(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "linkemd: %s\n", buf);
}

std::string rte_error_text(int err) {
    return rte_strerror(err);
}

namespace {
std::mutex g_parked_mu;
std::vector<rte_mempool*> g_parked;

bool all_home(rte_mempool* mp) {
    return rte_mempool_avail_count(mp) >= mp->size;
}
}  // namespace

void MempoolRelease::operator()(rte_mempool* mp) const {
    if (!mp) return;
    if (all_home(mp)) {
        rte_mempool_free(mp);
        return;
    }
    std::lock_guard lock(g_parked_mu);
    g_parked.push_back(mp);
}

void collect_parked_pools() {
    std::lock_guard lock(g_parked_mu);
    std::erase_if(g_parked, [](rte_mempool* mp) {
        if (!all_home(mp)) return false;
        rte_mempool_free(mp);
        return true;
    });
}

namespace {

// Free mbufs are kept on a stack (DPDK's "stack" mempool driver) rather than a FIFO ring:
// an emulator holds a varying number of packets (a correlated delay swings the backlog by
// tens of thousands), and whenever it grows, a ring hands out the mbufs freed longest ago
// (cold in every cache) while a stack hands out those freed last. Measured with the null
// PMD: +25-55% packets/s for correlated delays. Falls back to the default driver.
constexpr const char* kStackOps = "stack";

// Memory we mapped for a pool; unmapped when the pool frees its last chunk.
struct PoolMapping {
    void* addr = nullptr;
    std::size_t len = 0;
    unsigned chunks = 0;
};

void unmap_pool_chunk(rte_mempool_memhdr*, void* opaque) {
    auto* m = static_cast<PoolMapping*>(opaque);
    if (m->chunks > 1) {
        --m->chunks;
        return;
    }
    huge_pages_free(m->addr, m->len);
    delete m;
}

// Without hugetlbfs, DPDK's own memory (--no-huge) is a 4 KiB-page memfd and the pool keeps
// every ~2.3 KiB mbuf from crossing a page, so each mbuf gets a page of its own: with
// 10^5 packets held for a delay, every drained packet misses the TLB. Instead we map the
// pool's memory ourselves, ask for transparent huge pages (anonymous memory honours
// MADV_HUGEPAGE when THP is "madvise" or "always"), pre-fault it, and pack the objects
// densely (RTE_MEMPOOL_F_NO_IOVA_CONTIG: objects may cross 4 KiB boundaries, which only
// matters to devices that DMA by physical address; with IOVA as VA the addresses are
// virtual and contiguous). Returns null when this is not possible; the caller then uses
// DPDK's memory.
rte_mempool* make_thp_pool(const std::string& name, unsigned n, unsigned cache, int socket) {
    if (rte_eal_has_hugepages() || rte_eal_iova_mode() != RTE_IOVA_VA) return nullptr;
    constexpr std::uint16_t kDataRoom = RTE_MBUF_DEFAULT_BUF_SIZE;
    const unsigned elt = sizeof(rte_mbuf) + kDataRoom;
    rte_mempool* mp =
        rte_mempool_create_empty(name.c_str(), n, elt, cache, sizeof(rte_pktmbuf_pool_private),
                                 socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (!mp) return nullptr;
    auto fail = [&](const char* what) -> rte_mempool* {
        log("pool %s: %s; using DPDK's memory instead", name.c_str(), what);
        rte_mempool_free(mp);
        return nullptr;
    };
    if (rte_mempool_set_ops_byname(mp, kStackOps, nullptr) != 0) {
        if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0)
            return fail("cannot set the mempool ops");
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
            log("warning: DPDK's stack mempool driver is not loaded (librte_mempool_stack): the "
                "pools use '%s', which hands out the mbufs freed longest ago, cold in every "
                "cache, whenever the backlog grows",
                rte_mbuf_best_mempool_ops());
    }
    rte_pktmbuf_pool_private priv{};
    priv.mbuf_data_room_size = kDataRoom;
    priv.mbuf_priv_size = 0;
    rte_pktmbuf_pool_init(mp, &priv);

    rte_mempool_objsz sz{};
    rte_mempool_calc_obj_size(elt, RTE_MEMPOOL_F_NO_IOVA_CONTIG, &sz);
    const std::size_t need = std::size_t{n} * sz.total_size + RTE_CACHE_LINE_SIZE;
    const std::size_t len = huge_pages_round(need);
    void* addr = nullptr;
    try {
        addr = huge_pages_allocate(len, /*prefault=*/true);  // not on the packet path
    } catch (const std::bad_alloc&) {
        return fail("cannot map memory for it");
    }
    auto mapping = std::make_unique<PoolMapping>(PoolMapping{addr, len, 0});
    const int ret = rte_mempool_populate_virt(mp, static_cast<char*>(addr), len, kHugePageSize,
                                              unmap_pool_chunk, mapping.get());
    if (ret <= 0) {
        huge_pages_free(addr, len);
        return fail("cannot populate it");
    }
    // From here the pool owns the mapping: freeing its last chunk unmaps it.
    mapping->chunks = mp->nb_mem_chunks;
    mapping.release();
    if (mp->populated_size < n) return fail("cannot populate it");
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
    // rte_mempool_populate_virt records no IOVA for densely packed objects, so
    // rte_pktmbuf_init derived buf_iova from RTE_BAD_IOVA. With IOVA as VA (the only case
    // this pool is made for) a buffer's IOVA is its address.
    rte_mempool_obj_iter(
        mp,
        [](rte_mempool*, void*, void* obj, unsigned) {
            auto* m = static_cast<rte_mbuf*>(obj);
            set_buffer_va(m, m->buf_addr);
        },
        nullptr);
    log("pool %s: %u mbufs in %zu MiB of own memory, %zu MiB of it on 2 MiB pages "
        "(transparent huge pages; no hugetlbfs)",
        name.c_str(), n, len >> 20, huge_pages_backed(addr, len) >> 20);
    return mp;
}

}  // namespace

Mempool make_pktmbuf_pool(const std::string& name, unsigned n, int socket) {
    // The per-lcore cache must stay below n / 1.5 (DPDK's rule) and RTE_MEMPOOL_CACHE_MAX_SIZE.
    const unsigned cache = std::min<unsigned>(256, n / 2);
    if (rte_mempool* mp = make_thp_pool(name, n, cache, socket)) return Mempool(mp);
    rte_mempool* mp = rte_pktmbuf_pool_create_by_ops(name.c_str(), n, cache, 0,
                                                     RTE_MBUF_DEFAULT_BUF_SIZE, socket, kStackOps);
    if (!mp)
        mp = rte_pktmbuf_pool_create(name.c_str(), n, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (!mp)
        throw DataplaneError("cannot create mempool '" + name + "' of " + std::to_string(n) +
                             " mbufs: " + rte_error_text() +
                             " (lower --mbufs, or give the EAL more memory with -- -m MiB)");
    return Mempool(mp);
}

namespace {
std::array<std::array<std::atomic<rte_mempool*>, kMaxWorkers>, RTE_MAX_ETHPORTS> g_rx_pools{};
}  // namespace

void set_rx_pool(std::uint16_t port, unsigned queue, rte_mempool* mp) {
    if (port < g_rx_pools.size() && queue < kMaxWorkers)
        g_rx_pools[port][queue].store(mp, std::memory_order_release);
}

rte_mempool* rx_pool(std::uint16_t port, unsigned queue) {
    return port < g_rx_pools.size() && queue < kMaxWorkers
               ? g_rx_pools[port][queue].load(std::memory_order_acquire)
               : nullptr;
}

std::string unique_name(const std::string& stem) {
    static std::atomic<unsigned> counter{0};
    return stem + std::to_string(counter.fetch_add(1));
}

}  // namespace detail

namespace {

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

// Is option `name` ("--file-prefix", "-l") among the raw arguments, in any spelling
// ("--file-prefix x", "--file-prefix=x", "-l0-3")?
bool has_option(const std::vector<std::string>& args, std::initializer_list<const char*> names) {
    for (const std::string& a : args) {
        for (const char* n : names) {
            const std::string name = n;
            if (a == name) return true;
            if (name.starts_with("--") && a.starts_with(name + "=")) return true;
            if (!name.starts_with("--") && a.size() > name.size() && a.starts_with(name))
                return true;
        }
    }
    return false;
}

std::atomic<bool> g_eal_created{false};

}  // namespace

bool Eal::hugepages_available() {
    bool mounted = false;
    std::ifstream mounts("/proc/mounts");
    for (std::string line; std::getline(mounts, line);)
        if (line.find(" hugetlbfs ") != std::string::npos) mounted = true;
    if (!mounted) return false;
    for (const char* size : {"hugepages-2048kB", "hugepages-1048576kB"}) {
        std::ifstream f(std::string("/sys/kernel/mm/hugepages/") + size + "/free_hugepages");
        unsigned long n = 0;
        if (f >> n && n > 0) return true;
    }
    return false;
}

unsigned Eal::usable_cpus() {
    return static_cast<unsigned>(allowed_cpus().size());
}

Eal::Eal(const EalOptions& o) {
    if (g_eal_created.exchange(true))
        throw DataplaneError("the DPDK EAL can be initialised only once per process");
    const auto& raw = o.raw_args;
    if (!has_option(raw, {"--file-prefix"})) {
        args_.push_back("--file-prefix");
        args_.push_back(o.file_prefix.empty() ? "linkemd-" + std::to_string(getpid())
                                              : o.file_prefix);
        own_prefix_ = args_.back();
    }
    if (!has_option(raw, {"-l", "-c", "--lcores"})) {
        // The main lcore on the first usable CPU; workers on the following ones, wrapping
        // around when there are more lcores than CPUs (the main lcore mostly sleeps).
        const std::vector<int> cpus = allowed_cpus();
        // Appended piece by piece: "lit" + std::to_string() trips g++ 12's -Wrestrict at -O3.
        std::string map = "0@";
        map += std::to_string(cpus[0]);
        for (unsigned w = 1; w <= o.worker_lcores; ++w) {
            map += ',';
            map += std::to_string(w);
            map += '@';
            map += std::to_string(cpus[w % cpus.size()]);
        }
        args_.push_back("--lcores");
        args_.push_back(map);
        if (o.worker_lcores > cpus.size())
            detail::log(
                "warning: %u polling lcores on %zu usable CPU(s): they take turns, and "
                "each turn stalls the others (docs/dataplane.md: \"Stalls\"); linkemd's --workers "
                "shared needs one CPU, N that many per direction",
                o.worker_lcores, cpus.size());
    }
    if (!has_option(raw, {"--no-pci", "-a", "--allow", "-b", "--block"})) {
        if (o.pci_devices.empty()) {
            args_.push_back("--no-pci");
        } else {
            for (const std::string& dev : o.pci_devices) {
                args_.push_back("-a");
                args_.push_back(dev);
            }
        }
    }
    no_huge_ = has_option(raw, {"--no-huge"});
    if (!no_huge_ && !hugepages_available()) {
        no_huge_ = true;
        args_.push_back("--no-huge");
        if (!has_option(raw, {"-m", "--socket-mem"}) && o.memory_mib > 0) {
            args_.push_back("-m");
            args_.push_back(std::to_string(o.memory_mib));
        }
        detail::log("no hugepages mounted: running the EAL with --no-huge -m %zu (MiB)",
                    o.memory_mib);
    }
    args_.insert(args_.end(), raw.begin(), raw.end());

    // rte_eal_init may reorder argv and keep pointers into it: give it storage that lives
    // as long as the process.
    static std::vector<std::string> storage;
    static std::vector<char*> argv;
    storage.clear();
    storage.push_back(o.program);
    storage.insert(storage.end(), args_.begin(), args_.end());
    argv.clear();
    for (std::string& s : storage)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    const int ret = rte_eal_init(static_cast<int>(storage.size()), argv.data());
    if (ret < 0) {
        std::string joined;
        for (const std::string& a : args_)
            joined += " " + a;
        throw DataplaneError("DPDK EAL initialisation failed: " + detail::rte_error_text() +
                             " (EAL arguments:" + joined + ")");
    }
    detail::init_tsc();
    detail::start_tsc_recheck();
}

Eal::~Eal() {
    detail::stop_tsc_recheck();
    detail::collect_parked_pools();
    const std::string runtime_dir = rte_eal_get_runtime_dir();
    rte_eal_cleanup();
    // DPDK leaves its runtime directory (several MiB of tmpfs) behind; with a prefix per
    // process they would pile up. A prefix the user chose is left alone.
    if (!own_prefix_.empty() && runtime_dir.ends_with("/" + own_prefix_)) {
        std::error_code ec;
        std::filesystem::remove_all(runtime_dir, ec);
    }
}

unsigned Eal::worker_lcores() const {
    return rte_lcore_count() - 1;
}

TimeNs now_ns() {
    return detail::tsc_now();
}

double tsc_hz() {
    return detail::tsc_hz();
}

}  // namespace linkem::dp
