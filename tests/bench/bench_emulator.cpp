// Cost of the emulation core per packet: Emulator::ingest + Emulator::drain, per strategy,
// at 10^3, 10^5 and 10^6 packets in flight.
//
//   bench_emulator --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
//                  --benchmark_enable_random_interleaving=true [--paired=100]
//
// --paired=N (default 100, 0 skips it): after the benchmarks, reordered against correlated
// at 10^6 in flight in N pairs of alternating short slices (run_paired below).
// --paired-dp=N (default 0): the same in the data plane's regime (two directions of 2*10^5).
// --paired-telemetry=N (default 0): in that regime, correlated with linkemd's telemetry
// against without.
// --paired-smooth=N (default 0): smooth against correlated, at 10^6 in flight and in the data
// plane's regime (the target: smooth costs at most 10 % more per packet).
// --paired-queues=N (default 0): the queue disciplines' packet path (queue_ingest_drain
// below) against droptail through the Bottleneck, in N rounds of alternating slices (the
// targets: codel at most 10 % slower, fq_codel with 1024 flows at most 25 %).
//
// Random interleaving runs the repetitions of all benchmarks in a shuffled order, so on a
// shared machine whose load drifts during the run the scenarios that are compared (e.g.
// reordered against correlated) see the same noise rather than whatever load there was
// when their turn came.
//
// Traffic as the data plane sees it: CBR arrivals of 1518-byte frames in bursts of 16 that
// share one timestamp, mean delay 10 ms, jitter 3 ms (normal). The arrival rate is
// in_flight / 10 ms, so rate * mean delay = the in-flight count. Each iteration ingests one
// burst at virtual time `now` and drains everything due by `now` in bursts of 32. The
// emulator is warmed up (40 ms of virtual time, four mean delays) before timing, and each
// benchmark keeps its warmed-up emulator across the library's calls (also when they are
// interleaved with other benchmarks) so the timed loop always runs in steady state.
// time_per_pkt is CPU time / packets ingested.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_summary.hpp"
#include "binary_heap_queue.hpp"
#include "linkem/emulator.hpp"
#include "linkem/huge_page_queue.hpp"
#include "linkem/packet_headers.hpp"

namespace {

using linkem::Distribution;
using linkem::LinkParams;
using linkem::Strategy;
using linkem::TimeNs;

struct Pkt {
    std::uint32_t length;
    std::uint32_t id;
};

constexpr std::uint32_t kFrame = 1518;
constexpr std::size_t kBurst = 16;
constexpr std::size_t kTxBurst = 32;
constexpr TimeNs kMean = 10 * linkem::kNsPerMs;
constexpr TimeNs kJitter = 3 * linkem::kNsPerMs;

struct Scenario {
    Strategy strategy;
    bool constant = false;
    bool spacer_ge = false;  // spacer at 1.25x the offered bit rate + Gilbert-Elliott loss
};

LinkParams params_for(const Scenario& sc, std::int64_t in_flight) {
    LinkParams p;
    p.strategy = sc.strategy;
    p.distribution = sc.constant ? Distribution::constant : Distribution::normal;
    p.mean_delay = kMean;
    p.jitter = sc.constant ? 0 : kJitter;
    p.seed = 1;
    p.buffer_limit_packets = static_cast<std::uint64_t>(in_flight) * 4 + 4096;
    if (sc.spacer_ge) {
        const double pps = static_cast<double>(in_flight) * 1e9 / static_cast<double>(kMean);
        p.limiter = linkem::Limiter::spacer;
        p.rate_bps = std::min(1.25 * pps * kFrame * 8, linkem::ParamLimits::kMaxRate);
        // Correlated delays of consecutive packets differ by about sigma * sqrt(2 (1 - alpha))
        // (2.4 us at 10^8 packets/s) and drift by ~0.8 ms per ms: a deep limit so that the
        // spacer mostly spaces rather than drops (drop_pct shows what it did drop).
        p.queue_limit_bytes = 1ull << 30;
        p.loss_model = linkem::LossModel::gilbert_elliott;
        p.ge_p = 0.001;  // good -> bad
        p.ge_r = 0.1;    // bad -> good: bursts of 10, about 1% loss
    }
    linkem::validate(p);
    return p;
}

template <template <class> class Queue>
struct Runner {
    using Emu = linkem::Emulator<Pkt, linkem::PacketTraits<Pkt>, Queue>;

    Runner(const Scenario& sc, std::int64_t in_flight)
        : emu(params_for(sc, in_flight)), dt(static_cast<TimeNs>(kBurst) * kMean / in_flight) {
        emu.reserve(static_cast<std::size_t>(in_flight) * 2);
        while (now < 4 * kMean)
            step();
    }

    void step() {
        for (auto& p : in)
            p = Pkt{kFrame, next_id++};
        emu.ingest(in, kBurst, now, dropped);
        std::size_t n;
        do {
            n = emu.drain(now, out, kTxBurst);
            for (std::size_t i = 0; i < n; ++i)
                sink += out[i].id;
        } while (n == kTxBurst);
        now += dt;
    }

    // The telemetry linkemd switches on with its control server (the lateness of every
    // departure, a delay sample every 50 us: 20 000 a second, the protocol's maximum), the
    // samples taken out as the control thread would.
    void enable_telemetry() {
        samples = std::make_unique<linkem::SpscRing<linkem::DelaySample>>(16384);
        emu.set_telemetry(linkem::kNsPerSec / 20000, 16384, samples.get());
    }
    void take_samples() {
        linkem::DelaySample s[256];
        if (samples)
            while (samples->pop(s, 256) == 256) {
            }
    }

    Emu emu;
    std::unique_ptr<linkem::SpscRing<linkem::DelaySample>> samples;
    TimeNs dt;
    TimeNs now = 0;
    std::uint32_t next_id = 0;
    std::uint64_t sink = 0;
    Pkt in[kBurst], out[kTxBurst], dropped[kBurst];
};

// The warmed-up runner of each benchmark, kept while the library calls it again (for each
// iteration-count estimate and each repetition, which may be interleaved with the others).
std::map<std::string, std::shared_ptr<void>> g_cached;

template <template <class> class Queue>
void BM_IngestDrain(benchmark::State& state, std::string name, Scenario sc) {
    const std::int64_t in_flight = state.range(0);
    const std::string key = name + "/" + std::to_string(in_flight);
    std::shared_ptr<void>& cached = g_cached[key];
    if (!cached) cached = std::make_shared<Runner<Queue>>(sc, in_flight);
    auto& r = *std::static_pointer_cast<Runner<Queue>>(cached);
    const auto before = r.emu.snapshot();
    for (auto _ : state)
        r.step();
    benchmark::DoNotOptimize(r.sink);

    const auto s = r.emu.snapshot();
    if (s.packets_in != s.packets_out + s.drops.total() + s.in_flight) {
        state.SkipWithError("packet conservation violated");
        return;
    }
    const double pkts = static_cast<double>(s.packets_in - before.packets_in);
    state.SetItemsProcessed(static_cast<std::int64_t>(pkts));
    // CPU time per packet, in seconds (the console shows it as e.g. "23.1ns").
    state.counters["time_per_pkt"] =
        benchmark::Counter(pkts, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["in_flight"] = static_cast<double>(s.in_flight);
    state.counters["drop_pct"] =
        pkts > 0 ? 100.0 * static_cast<double>(s.drops.total() - before.drops.total()) / pkts : 0.0;
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ------------------------------------------------------------------ queue disciplines
// queue_ingest_drain/<queue>: the limiter's queue on the packet path. 64-byte frames of 1024
// flows (packet i of flow i mod 1024) in bursts of 16 at 20 Mpps, no delay, a spacer at
// 1 Tbit/s (a 64-byte frame occupies it 0.5 ns): every packet passes the queue, which never
// holds more than a burst, so this is each discipline's per-packet work (enqueue, dequeue,
// CoDel's sojourn check, FQ-CoDel's flow scheduling), not its control.
//   bytes     droptail with a byte limit: the spacer's own path (no Bottleneck)
//   droptail  droptail with a limit in packets: the same policy through the Bottleneck
//   codel, fq_codel (1024 flow queues), pie
// The *_full cases: the same arrivals into a 1 Gbit/s spacer (a tenth of the offered load)
// with a limit of 10 000 packets, so that the queue stays full: each discipline's work at its
// limit (FQ-CoDel's search for the fattest flow, CoDel's drops at dequeue, PIE's early drops).
struct QPkt {
    std::uint32_t length;
    std::uint32_t id;
    std::uint32_t flow;
};
struct QPktTraits {
    static std::uint32_t length(const QPkt& p) { return p.length; }
    static std::uint32_t flow_hash(const QPkt& p) { return p.flow; }
    static bool mark_ce(const QPkt&) { return false; }
};

constexpr std::uint32_t kQueueFrame = 64;
constexpr std::uint32_t kQueueFlows = 1024;
constexpr TimeNs kQueueBurstGap = static_cast<TimeNs>(kBurst) * 50;  // 20 Mpps

struct QueueCase {
    const char* name;
    linkem::QueueKind kind;
    bool packet_limit;
    bool full = false;  // 1 Gbit/s, 10 000 packets: the queue at its limit
};
constexpr QueueCase kQueueCases[] = {
    {"bytes", linkem::QueueKind::droptail, false},
    {"droptail", linkem::QueueKind::droptail, true},
    {"codel", linkem::QueueKind::codel, true},
    {"fq_codel", linkem::QueueKind::fq_codel, true},
    {"pie", linkem::QueueKind::pie, true},
    {"droptail_full", linkem::QueueKind::droptail, true, true},
    {"codel_full", linkem::QueueKind::codel, true, true},
    {"fq_codel_full", linkem::QueueKind::fq_codel, true, true},
    {"pie_full", linkem::QueueKind::pie, true, true},
};

struct QueueRunner {
    using Emu = linkem::Emulator<QPkt, QPktTraits>;

    static LinkParams params(const QueueCase& c) {
        LinkParams p;
        p.strategy = Strategy::correlated;
        p.distribution = Distribution::constant;
        p.mean_delay = 0;
        p.jitter = 0;
        p.seed = 1;
        p.limiter = linkem::Limiter::spacer;
        p.rate_bps = c.full ? 1e9 : 1e12;
        p.queue = c.kind;
        if (c.packet_limit) p.queue_limit_packets = c.full ? 10'000 : 100'000;
        p.fq_flows = kQueueFlows;
        linkem::validate(p);
        return p;
    }

    explicit QueueRunner(const QueueCase& c) : emu(params(c)) {
        emu.reserve(4096);
        while (now < 10 * linkem::kNsPerMs)
            step();
    }

    void step() {
        for (auto& p : in) {
            p = QPkt{kQueueFrame, next_id, next_id % kQueueFlows};
            ++next_id;
        }
        emu.ingest(in, kBurst, now, dropped);
        late += emu.late_drops().size();
        std::size_t n;
        do {
            n = emu.drain(now, out, kTxBurst);
            late += emu.late_drops().size();
            for (std::size_t i = 0; i < n; ++i)
                sink += out[i].id;
        } while (n == kTxBurst);
        now += kQueueBurstGap;
    }

    Emu emu;
    TimeNs now = 0;
    std::uint32_t next_id = 0;
    std::uint64_t sink = 0, late = 0;
    QPkt in[kBurst], out[kTxBurst], dropped[kBurst];
};

void BM_QueueIngestDrain(benchmark::State& state, std::string name, QueueCase c) {
    std::shared_ptr<void>& cached = g_cached[name];
    if (!cached) cached = std::make_shared<QueueRunner>(c);
    auto& r = *std::static_pointer_cast<QueueRunner>(cached);
    const auto before = r.emu.snapshot();
    for (auto _ : state)
        r.step();
    benchmark::DoNotOptimize(r.sink);
    const auto s = r.emu.snapshot();
    if (s.packets_in != s.packets_out + s.drops.total() + s.in_flight) {
        state.SkipWithError("packet conservation violated");
        return;
    }
    const double pkts = static_cast<double>(s.packets_in - before.packets_in);
    state.SetItemsProcessed(static_cast<std::int64_t>(pkts));
    state.counters["time_per_pkt"] =
        benchmark::Counter(pkts, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["in_flight"] = static_cast<double>(s.in_flight);
    state.counters["drop_pct"] =
        pkts > 0 ? 100.0 * static_cast<double>(s.drops.total() - before.drops.total()) / pkts : 0.0;
}

// flow_hash: FQ-CoDel's flow of a frame in the data plane (linkem/packet_headers.hpp), which
// queue_ingest_drain does not pay (its packets carry their flow): 64-byte IPv4/UDP frames of
// 1024 flows (10.0.0.1 -> 10.0.0.2, source ports 1024 .. 2047), hashed in turn.
void BM_FlowHash(benchmark::State& state) {
    std::vector<std::uint8_t> frames(kQueueFlows * kQueueFrame, 0);
    for (std::uint32_t i = 0; i < kQueueFlows; ++i) {
        std::uint8_t* f = frames.data() + i * kQueueFrame;
        f[12] = 0x08;  // IPv4
        f[14] = 0x45;
        f[23] = 17;  // UDP
        f[26] = 10, f[29] = 1, f[30] = 10, f[33] = 2;
        f[34] = static_cast<std::uint8_t>((1024 + i) >> 8);
        f[35] = static_cast<std::uint8_t>(1024 + i);
        f[37] = 9;
    }
    std::uint32_t sink = 0;
    for (auto _ : state)
        for (std::uint32_t i = 0; i < kQueueFlows; ++i)
            sink += linkem::flow_hash(frames.data() + i * kQueueFrame, kQueueFrame);
    benchmark::DoNotOptimize(sink);
    state.SetItemsProcessed(state.iterations() * kQueueFlows);
    state.counters["time_per_pkt"] =
        benchmark::Counter(static_cast<double>(state.iterations() * kQueueFlows),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Each discipline against droptail (through the Bottleneck) in `pairs` rounds of short
// alternating slices (2^14 bursts each), the order within a round rotating: the median of
// the per-round ratios of ns per packet.
void run_paired_queues(int pairs) {
    constexpr int kSteps = 1 << 14;
    std::vector<std::unique_ptr<QueueRunner>> rs;
    for (const QueueCase& c : kQueueCases)
        rs.push_back(std::make_unique<QueueRunner>(c));
    const std::size_t n = rs.size();
    // Each against droptail with a limit in packets of its own load (full or not).
    std::vector<std::size_t> base_of(n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t b = 0; b < n; ++b)
            if (kQueueCases[b].kind == linkem::QueueKind::droptail && kQueueCases[b].packet_limit &&
                kQueueCases[b].full == kQueueCases[i].full)
                base_of[i] = b;
    std::vector<std::vector<double>> ns(n), ratio(n);
    for (int p = 0; p < pairs; ++p) {
        std::vector<double> t(n);
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t i = (k + static_cast<std::size_t>(p)) % n;
            const double t0 = thread_cpu_seconds();
            for (int s = 0; s < kSteps; ++s)
                rs[i]->step();
            t[i] = (thread_cpu_seconds() - t0) * 1e9 / (kSteps * static_cast<double>(kBurst));
        }
        for (std::size_t i = 0; i < n; ++i) {
            ns[i].push_back(t[i]);
            ratio[i].push_back(t[i] / t[base_of[i]]);
        }
    }
    std::uint64_t sink = 0;
    for (auto& r : rs)
        sink += r->sink;
    benchmark::DoNotOptimize(sink);
    auto quantile = [](std::vector<double> v, double q) {
        std::sort(v.begin(), v.end());
        return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
    };
    std::printf(
        "\nQueue disciplines, %d rounds of %d packets each (64 B, %u flows, thread CPU time), "
        "ns per packet against droptail (limit in packets) of the same load:\n",
        pairs, kSteps * static_cast<int>(kBurst), kQueueFlows);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string name = kQueueCases[i].name;
        const char* target = name == "codel"      ? "target <= 1.10"
                             : name == "fq_codel" ? "target <= 1.25"
                                                  : "(info)";
        const std::string base = kQueueCases[base_of[i]].name;
        std::printf("  %-14s %6.1f ns  /%-13s %6.3f   %s (quartiles %.3f-%.3f)\n", name.c_str(),
                    quantile(ns[i], 0.5), base.c_str(), quantile(ratio[i], 0.5), target,
                    quantile(ratio[i], 0.25), quantile(ratio[i], 0.75));
    }
}

void register_all() {
    struct Entry {
        const char* name;
        Scenario sc;
        bool heap;
    };
    const Entry entries[] = {
        {"constant", {Strategy::correlated, true, false}, false},
        {"correlated", {Strategy::correlated, false, false}, false},
        {"uncorrelated", {Strategy::uncorrelated, false, false}, false},
        {"reordered", {Strategy::reordered, false, false}, false},
        {"reordered_heap", {Strategy::reordered, false, false}, true},
        {"correlated_spacer_ge", {Strategy::correlated, false, true}, false},
        {"smooth", {Strategy::smooth, false, false}, false},
    };
    for (const Entry& e : entries) {
        const std::string name = std::string("ingest_drain/") + e.name;
        auto* b =
            e.heap ? benchmark::RegisterBenchmark(
                         name.c_str(), BM_IngestDrain<linkem::BinaryHeapQueue>, name, e.sc)
                   : benchmark::RegisterBenchmark(
                         name.c_str(), BM_IngestDrain<linkem::HugePageCalendarQueue>, name, e.sc);
        linkem::bench::with_min_max(b);
        b->Arg(1'000)->Arg(100'000)->Arg(1'000'000);
    }
    for (const QueueCase& c : kQueueCases) {
        const std::string name = std::string("queue_ingest_drain/") + c.name;
        linkem::bench::with_min_max(
            benchmark::RegisterBenchmark(name.c_str(), BM_QueueIngestDrain, name, c));
    }
    linkem::bench::with_min_max(benchmark::RegisterBenchmark("flow_hash", BM_FlowHash));
}

// reordered against correlated in `pairs` pairs of short alternating slices (2^15 bursts
// each): both see the same noise, slice for slice, and the median of the per-pair ratios is
// the comparison least moved by load that drifts during the run. The order within a pair
// alternates so that a trend favours neither.
//   --paired:    10^6 in flight, one emulator per strategy (the target <= 1.3).
//   --paired-dp: the data plane's regime on one lcore: two directions (emulators stepped in
//                turn) of 2*10^5 in flight each, i.e. 20 Mpps each at 10 ms, both with the
//                telemetry linkemd runs with its control server (which reads every
//                departure's transmission time). A quick proxy for linkemd's
//                reordered/correlated, without the PMD's own work.
//   --paired-telemetry: the same regime, correlated, with the telemetry of linkemd's control
//                server (Runner::enable_telemetry) against without (--no-control): what the
//                telemetry costs the emulation core; linkemd's ratio also counts the PMD's
//                and the buffer exchange's work, which the telemetry does not change.
// What a pair compares: `first` against correlated, both without linkemd's telemetry (none)
// or both with it (both); or correlated with it against without (cost).
enum class Telemetry { none, both, cost };

void run_paired(int pairs, std::int64_t in_flight, int directions, const char* target,
                Telemetry telemetry = Telemetry::none, Strategy first = Strategy::reordered) {
    constexpr int kSteps = 1 << 15;
    using R = Runner<linkem::HugePageCalendarQueue>;
    const bool cost = telemetry == Telemetry::cost;
    // "a" against "b": `first` against correlated, or correlated with telemetry against
    // without.
    std::vector<std::unique_ptr<R>> reordered, correlated;
    for (int d = 0; d < directions; ++d) {
        reordered.push_back(std::make_unique<R>(
            Scenario{cost ? Strategy::correlated : first, false, false}, in_flight));
        correlated.push_back(
            std::make_unique<R>(Scenario{Strategy::correlated, false, false}, in_flight));
        if (telemetry != Telemetry::none) reordered.back()->enable_telemetry();
        if (telemetry == Telemetry::both) correlated.back()->enable_telemetry();
    }
    auto slice = [&](auto& rs) {
        const double t0 = thread_cpu_seconds();
        for (int i = 0; i < kSteps; ++i) {
            for (auto& r : rs)
                r->step();
            if (i % 64 == 63)
                for (auto& r : rs)
                    r->take_samples();
        }
        return (thread_cpu_seconds() - t0) * 1e9 /
               (kSteps * static_cast<double>(kBurst) * static_cast<double>(rs.size()));
    };
    std::vector<double> ratio, ns_r, ns_c;
    for (int p = 0; p < pairs; ++p) {
        double r, c;
        if (p % 2 == 0) {
            r = slice(reordered);
            c = slice(correlated);
        } else {
            c = slice(correlated);
            r = slice(reordered);
        }
        ratio.push_back(r / c);
        ns_r.push_back(r);
        ns_c.push_back(c);
    }
    std::uint64_t sink = 0;
    for (auto& r : reordered)
        sink += r->sink;
    for (auto& r : correlated)
        sink += r->sink;
    benchmark::DoNotOptimize(sink);
    auto quantile = [](std::vector<double> v, double q) {
        std::sort(v.begin(), v.end());
        return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
    };
    std::printf(
        "\nPaired slices, %d direction(s) of %lld in flight (%d pairs of %d packets per "
        "direction, thread CPU time):\n",
        directions, static_cast<long long>(in_flight), pairs, kSteps * static_cast<int>(kBurst));
    if (cost) {
        // As a rate: packets per CPU second with telemetry / without.
        for (double& x : ratio)
            x = 1.0 / x;
        std::printf("  %-44s %6.3f   %s (quartiles %.3f-%.3f)\n",
                    "rate with telemetry/without, median of pairs", quantile(ratio, 0.5), target,
                    quantile(ratio, 0.25), quantile(ratio, 0.75));
        std::printf("  ns per packet, median: without=%.1f with=%.1f\n", quantile(ns_c, 0.5),
                    quantile(ns_r, 0.5));
        return;
    }
    const std::string name(linkem::to_string(first));
    std::printf("  %-44s %6.3f   %s (quartiles %.3f-%.3f)\n",
                (name + "/correlated, median of pairs").c_str(), quantile(ratio, 0.5), target,
                quantile(ratio, 0.25), quantile(ratio, 0.75));
    std::printf("  ns per packet, median: correlated=%.1f %s=%.1f\n", quantile(ns_c, 0.5),
                name.c_str(), quantile(ns_r, 0.5));
}

// Takes "--name=N" (0 <= N <= 100000) out of argv into *value. Returns false (after a
// message) if the value is not such a number.
bool take_count_flag(int& argc, char** argv, const char* name, int* value) {
    const std::string prefix = std::string("--") + name + "=";
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) != 0) continue;
        char* end = nullptr;
        const char* text = argv[i] + prefix.size();
        const long v = std::strtol(text, &end, 10);
        if (*text == '\0' || *end != '\0' || v < 0 || v > 100000) {
            std::fprintf(stderr,
                         "bench_emulator: --%s takes a number of pairs, 0 to 100000 "
                         "(0: skip that paired comparison), not '%s'\n",
                         name, text);
            return false;
        }
        *value = static_cast<int>(v);
        for (int j = i; j + 1 < argc; ++j)
            argv[j] = argv[j + 1];
        --argc;
        --i;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    bool interleaved = false;
    int paired = 100, paired_dp = 0, paired_telemetry = 0, paired_smooth = 0, paired_queues = 0;
    // Our own flags, taken out before the library sees the arguments.
    if (!take_count_flag(argc, argv, "paired", &paired) ||
        !take_count_flag(argc, argv, "paired-dp", &paired_dp) ||
        !take_count_flag(argc, argv, "paired-telemetry", &paired_telemetry) ||
        !take_count_flag(argc, argv, "paired-smooth", &paired_smooth) ||
        !take_count_flag(argc, argv, "paired-queues", &paired_queues))
        return 2;
    for (int i = 1; i < argc; ++i) {
        constexpr const char* kFlag = "--benchmark_enable_random_interleaving";
        if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) != 0) continue;
        const char* v = argv[i] + std::strlen(kFlag);  // "", or "=true", "=1", "=false"...
        interleaved = v[0] == '\0' || (v[0] == '=' && v[1] != '\0' && std::strchr("tTyY1", v[1]));
    }
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    linkem::bench::SummaryReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    g_cached.clear();

    // "median": median of the repetitions; "best": the fastest repetition of each benchmark
    // (min time_per_pkt), the figure least disturbed by other processes.
    for (const char* stat : {"median", "min"}) {
        auto ns = [&](const std::string& s, int n) {
            return 1e9 * reporter.value("ingest_drain/" + s + "/" + std::to_string(n),
                                        "time_per_pkt", stat);
        };
        std::printf("\nSummary, time_per_pkt ratios (%s of the repetitions, %s):\n",
                    stat[1] == 'e' ? "median" : "best",
                    interleaved ? "interleaved at random"
                                : "not interleaved: --benchmark_enable_random_interleaving=true "
                                  "compares under the same noise");
        for (int n : {1'000, 100'000, 1'000'000}) {
            const std::string at = " at " + std::to_string(n);
            linkem::bench::print_ratio(("reordered/correlated" + at).c_str(), ns("reordered", n),
                                       ns("correlated", n),
                                       n == 1'000'000 ? "target <= 1.3" : "(info)");
            linkem::bench::print_ratio(("heap/calendar" + at).c_str(), ns("reordered_heap", n),
                                       ns("reordered", n), "(info; > 1: calendar faster)");
        }
        std::printf("  ns per packet at 1000000:");
        for (const char* s : {"constant", "correlated", "uncorrelated", "reordered",
                              "reordered_heap", "correlated_spacer_ge", "smooth"}) {
            if (const double v = ns(s, 1'000'000); v > 0) std::printf(" %s=%.1f", s, v);
        }
        std::printf("\n");
    }
    if (paired > 0) run_paired(paired, 1'000'000, 1, "target <= 1.3");
    if (paired_dp > 0)
        run_paired(paired_dp, 200'000, 2, "(info; linkemd's target: <= 1.11)", Telemetry::both);
    if (paired_telemetry > 0)
        run_paired(paired_telemetry, 200'000, 2, "(info; linkemd's target: >= 0.97)",
                   Telemetry::cost);
    if (paired_queues > 0) run_paired_queues(paired_queues);
    if (paired_smooth > 0) {
        run_paired(paired_smooth, 1'000'000, 1, "target <= 1.10", Telemetry::none,
                   Strategy::smooth);
        run_paired(paired_smooth, 200'000, 2, "target <= 1.10", Telemetry::none, Strategy::smooth);
    }
    return 0;
}
