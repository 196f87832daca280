// Delay samples per second, per distribution (DPDS paper Fig. 11: mean 10 ms, jitter 3 ms),
// next to the standard library's normal distribution on mt19937_64 in the same run.
//
//   bench_distributions [--benchmark_repetitions=3 --benchmark_report_aggregates_only=true]
//
// Prints the target ratios at the end (items_per_second, medians when repeated).
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

#include <benchmark/benchmark.h>

#include "bench_summary.hpp"
#include "linkem/delayer.hpp"
#include "linkem/distributions.hpp"
#include "linkem/rng.hpp"

namespace {

using linkem::DelayDistribution;
using linkem::Distribution;
using linkem::Rng;

constexpr double kMean = 10e6;   // 10 ms in ns
constexpr double kJitter = 3e6;  // 3 ms

void BM_RngWords(benchmark::State& state) {
    Rng rng(42);
    for (auto _ : state)
        benchmark::DoNotOptimize(rng());
    state.SetItemsProcessed(state.iterations());
}

template <class Engine>
void BM_StdNormal(benchmark::State& state) {
    Engine eng(42);
    std::normal_distribution<double> dist(kMean, kJitter);
    for (auto _ : state)
        benchmark::DoNotOptimize(dist(eng));
    state.SetItemsProcessed(state.iterations());
}

void BM_StdGamma(benchmark::State& state) {
    std::mt19937_64 eng(42);
    const double cv = kJitter / kMean;
    std::gamma_distribution<double> dist(1 / (cv * cv), kJitter * cv);
    for (auto _ : state)
        benchmark::DoNotOptimize(dist(eng));
    state.SetItemsProcessed(state.iterations());
}

void BM_StdLognormal(benchmark::State& state) {
    std::mt19937_64 eng(42);
    const double cv = kJitter / kMean;
    const double s = std::sqrt(std::log1p(cv * cv));
    std::lognormal_distribution<double> dist(std::log(kMean) - 0.5 * s * s, s);
    for (auto _ : state)
        benchmark::DoNotOptimize(dist(eng));
    state.SetItemsProcessed(state.iterations());
}

void BM_StandardNormal(benchmark::State& state) {
    Rng rng(42);
    for (auto _ : state)
        benchmark::DoNotOptimize(linkem::standard_normal(rng));
    state.SetItemsProcessed(state.iterations());
}

void BM_Delay(benchmark::State& state, Distribution kind) {
    Rng rng(42);
    const DelayDistribution dist(kind, kMean, kJitter);
    for (auto _ : state)
        benchmark::DoNotOptimize(dist.sample(rng));
    state.SetItemsProcessed(state.iterations());
}

// Correlated delays as the data plane draws them: the EMA of paper Section III at the
// 100 Gbit/s rate of 1518-byte frames (8.1 Mpps, 1 - alpha ~ 4e-6).
void BM_Correlated(benchmark::State& state, Distribution kind) {
    Rng rng(42);
    linkem::Delayer d;
    d.configure({linkem::Strategy::correlated, kind, kMean, kJitter, 21e6});
    d.on_rate(100e9 / (1538 * 8));
    for (auto _ : state)
        benchmark::DoNotOptimize(d.next(rng));
    state.SetItemsProcessed(state.iterations());
}

// Delays as the data plane draws them: Delayer::next_n for a burst of 16 packets. I.i.d.
// normal ones (reordered, uncorrelated) come two per random word (standard_normal_pair);
// correlated ones at the rate of BM_Correlated.
void BM_Burst16(benchmark::State& state, linkem::Strategy strategy, Distribution kind) {
    Rng rng(42);
    linkem::Delayer d;
    d.configure({strategy, kind, kMean, kJitter, 21e6});
    d.on_rate(100e9 / (1538 * 8));
    double out[16];
    for (auto _ : state) {
        d.next_n(rng, out, 16);
        benchmark::DoNotOptimize(out);
    }
    state.SetItemsProcessed(state.iterations() * 16);
}

}  // namespace

int main(int argc, char** argv) {
    using linkem::bench::with_min_max;
    with_min_max(benchmark::RegisterBenchmark("rng/raw_words", BM_RngWords));
    with_min_max(benchmark::RegisterBenchmark("std/normal_distribution+mt19937_64",
                                              BM_StdNormal<std::mt19937_64>));
    with_min_max(
        benchmark::RegisterBenchmark("std/normal_distribution+linkem::Rng", BM_StdNormal<Rng>));
    with_min_max(benchmark::RegisterBenchmark("std/gamma_distribution+mt19937_64", BM_StdGamma));
    with_min_max(
        benchmark::RegisterBenchmark("std/lognormal_distribution+mt19937_64", BM_StdLognormal));
    with_min_max(benchmark::RegisterBenchmark("linkem/standard_normal", BM_StandardNormal));
    constexpr Distribution kinds[] = {Distribution::constant, Distribution::uniform,
                                      Distribution::normal, Distribution::gamma,
                                      Distribution::lognormal};
    for (Distribution k : kinds)
        with_min_max(benchmark::RegisterBenchmark(
            (std::string("delay/") + std::string(to_string(k))).c_str(), BM_Delay, k));
    for (Distribution k : kinds) {
        if (k == Distribution::constant) continue;
        with_min_max(benchmark::RegisterBenchmark(
            (std::string("correlated/") + std::string(to_string(k))).c_str(), BM_Correlated, k));
    }
    for (auto [strategy, name] : {std::pair{linkem::Strategy::correlated, "correlated_burst16/"},
                                  std::pair{linkem::Strategy::reordered, "reordered_burst16/"}}) {
        for (Distribution k : kinds) {
            if (k == Distribution::constant) continue;
            with_min_max(benchmark::RegisterBenchmark(
                (std::string(name) + std::string(to_string(k))).c_str(), BM_Burst16, strategy, k));
        }
    }

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    linkem::bench::SummaryReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    // "median": median of the repetitions; "best": the fastest repetition of each benchmark
    // (max items_per_second), the figure least disturbed by other processes.
    for (const char* stat : {"median", "max"}) {
        auto ips = [&](const char* name) { return reporter.value(name, "items_per_second", stat); };
        const double std_normal = ips("std/normal_distribution+mt19937_64");
        const double normal = ips("delay/normal");
        std::printf("\nSummary, items_per_second ratios (%s of the repetitions):\n",
                    stat[1] == 'e' ? "median" : "best");
        linkem::bench::print_ratio("delay/normal vs std::normal+mt19937_64", normal, std_normal,
                                   "target >= 3");
        linkem::bench::print_ratio("standard_normal vs std::normal+mt19937_64",
                                   ips("linkem/standard_normal"), std_normal, "(info)");
        linkem::bench::print_ratio("delay/uniform vs delay/normal", ips("delay/uniform"), normal,
                                   "(info; paper Fig. 11: 1.5)");
        linkem::bench::print_ratio("delay/gamma vs delay/normal", ips("delay/gamma"), normal,
                                   "target >= 0.5");
        linkem::bench::print_ratio("delay/lognormal vs delay/normal", ips("delay/lognormal"),
                                   normal, "target >= 0.5");
        std::printf("  %-44s %6.1f M/s\n", "delay/normal", normal / 1e6);
        linkem::bench::print_ratio("reordered_burst16/normal vs delay/normal",
                                   ips("reordered_burst16/normal"), normal,
                                   "(info: two draws per random word)");
    }
    return 0;
}
