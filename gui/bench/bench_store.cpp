// linkem-gui-store-bench: linkem-gui's delay-sample store (linkem::gui::SampleRing,
// gui/model/sample_store.hpp) at the protocol's maximum: bytes a sample of a full ring and of
// a measured one, and the time of add() per sample, a histogram-like forEachStrided pass (stride
// 30, runs of 64), a full forEach and actual() over the window. The samples are those of
// linkem-gui-bench --prefill: delays 20 ms +- ~4 ms (a sum of four uniforms), lateness uniform 0 ..
// 20 us, measured = actual + 3 us, an arrival every 50 us ("prefill") or every 50 +- 25 us
// ("jittered", as a sampled 49 000 frames/s stream). Prints figures; never fails on a timing.
//   linkem-gui-store-bench [--samples N] [--repeat R]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "sample_store.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since_ns(Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

struct Sample {
    std::int64_t t, d, a;
};

std::vector<Sample> samples(std::size_t n, bool jittered) {
    std::uint64_t lcg = 12345;  // linkem-gui-bench's generator
    auto uniform = [&lcg] {
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(lcg >> 11) * 0x1.0p-53;
    };
    std::vector<Sample> v(n);
    std::int64_t t = 1'000'000'000;
    for (Sample& s : v) {
        t += jittered ? 25'000 + static_cast<std::int64_t>(uniform() * 50'000) : 50'000;
        const double z = (uniform() + uniform() + uniform() + uniform() - 2.0) * std::sqrt(3.0);
        s.t = t;
        s.d = static_cast<std::int64_t>(20e6 + 4e6 * z);
        s.a = s.d + static_cast<std::int64_t>(uniform() * 20'000);
    }
    return v;
}

struct Figures {
    double bytes_full = 0, bytes_meas = 0;  // a sample
    double add_ns = 0;                      // a sample, full + measured ring
    double strided_ms = 0, foreach_ms = 0, actual_us = 0;
    double checksum = 0;
};

template <class Ring, class Point>
Figures run(const std::vector<Sample>& v, int repeat, Point point) {
    Figures f;
    Ring full(true), meas(false);
    const auto t0 = Clock::now();
    for (const Sample& s : v) {
        full.add(point(s.t, s.d, s.d, s.a));
        meas.add(point(s.t, s.a + 3000, s.a + 3000, s.a + 3000));
    }
    f.add_ns = since_ns(t0) / static_cast<double>(v.size());
    f.bytes_full = static_cast<double>(full.bytes()) / static_cast<double>(full.size());
    f.bytes_meas = static_cast<double>(meas.bytes()) / static_cast<double>(meas.size());
    // the window's edges cut chunks, as in linkem-gui
    const std::int64_t lo = v.front().t + 12'345'678, hi = v.back().t - 7'654'321;
    double best_strided = 1e300, best_each = 1e300, best_actual = 1e300;
    for (int r = 0; r < repeat; ++r) {
        std::uint64_t bins[100] = {};
        auto t1 = Clock::now();
        full.forEachStrided(
            lo, hi, 30,
            [&](const auto& p) {
                const double x = static_cast<double>(p.actual_us);
                ++bins[static_cast<std::size_t>(std::clamp((x - 6000.0) / 280.0, 0.0, 99.0))];
            },
            64);
        best_strided = std::min(best_strided, since_ns(t1));
        double sum = 0;
        t1 = Clock::now();
        full.forEach(lo, hi, [&](const auto& p) { sum += static_cast<double>(p.actual_us); });
        best_each = std::min(best_each, since_ns(t1));
        t1 = Clock::now();
        const linkem::RunningStats m = full.actual(lo, hi);
        best_actual = std::min(best_actual, since_ns(t1));
        f.checksum += sum + m.mean() + static_cast<double>(bins[50]);
    }
    f.strided_ms = best_strided / 1e6;
    f.foreach_ms = best_each / 1e6;
    f.actual_us = best_actual / 1e3;
    return f;
}

// DelayPoint of the new store has actual_us() as a function: an adaptor for the lambdas.
struct NewPoint {
    double actual_us;
};

struct NewRing {
    linkem::gui::SampleRing r;
    explicit NewRing(bool full) : r(full) {}
    void add(const linkem::gui::DelayPoint& p) { r.add(p); }
    std::size_t bytes() const { return r.bytes(); }
    std::size_t size() const { return r.size(); }
    template <class F>
    void forEachStrided(std::int64_t lo, std::int64_t hi, std::size_t s, F&& f,
                        std::size_t run) const {
        r.forEachStrided(
            lo, hi, s, [&](const linkem::gui::DelayPoint& p) { f(NewPoint{p.actual_us()}); }, run);
    }
    template <class F>
    void forEach(std::int64_t lo, std::int64_t hi, F&& f) const {
        r.forEach(lo, hi, [&](const linkem::gui::DelayPoint& p) { f(NewPoint{p.actual_us()}); });
    }
    linkem::RunningStats actual(std::int64_t lo, std::int64_t hi) const { return r.actual(lo, hi); }
};

}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 6'000'000;
    int repeat = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        char* end = nullptr;
        if (a == "--samples" && i + 1 < argc) {
            const long long v = std::strtoll(argv[++i], &end, 10);
            if (*end || v < 10'000 || v > 50'000'000) {
                std::fprintf(stderr, "linkem-gui-store-bench: --samples 10000 .. 50000000\n");
                return 2;
            }
            n = static_cast<std::size_t>(v);
        } else if (a == "--repeat" && i + 1 < argc) {
            const long v = std::strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000) {
                std::fprintf(stderr, "linkem-gui-store-bench: --repeat 1 .. 1000\n");
                return 2;
            }
            repeat = static_cast<int>(v);
        } else {
            std::fprintf(stderr,
                         "linkem-gui-store-bench: unknown argument '%s'; allowed --samples N, "
                         "--repeat R\n",
                         a.c_str());
            return 2;
        }
    }
    std::printf("%zu samples per ring (full + measured), best of %d passes\n", n, repeat);
    std::printf("%-9s %11s %11s %10s %13s %11s %11s\n", "arrivals", "B/sample", "B/measured",
                "add ns", "strided ms", "forEach ms", "actual us");
    for (const bool jittered : {false, true}) {
        const std::vector<Sample> v = samples(n, jittered);
        const Figures f = run<NewRing>(
            v, repeat, [](std::int64_t t, std::int64_t d, std::int64_t s, std::int64_t a) {
                return linkem::gui::DelayPoint{t, d, s, a};
            });
        std::printf("%-9s %11.2f %11.2f %10.1f %13.2f %11.2f %11.1f   (checksum %.6g)\n",
                    jittered ? "jittered" : "prefill", f.bytes_full, f.bytes_meas, f.add_ns,
                    f.strided_ms, f.foreach_ms, f.actual_us, f.checksum);
    }
    return 0;
}
