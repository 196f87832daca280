// linkem-gui-store-bench: linkem-gui's delay-sample store (linkem::gui::SampleRing) at the
// protocol's maximum, against the float store it replaced (kept below as legacy::SampleRing
// for the comparison): bytes a sample of a full ring and of a measured one, and the time of
// add() per sample, a histogram-like forEachStrided pass (stride 30, runs of 64), a full
// forEach and actual() over the window. The samples are those of linkem-gui-bench --prefill:
// delays 20 ms +- ~4 ms (a sum of four uniforms), lateness uniform 0 .. 20 us, measured =
// actual + 3 us, an arrival every 50 us ("prefill") or every 50 +- 25 us ("jittered", as a
// sampled 49 000 frames/s stream). Prints figures; never fails on a timing.
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

#include "chart_data.hpp"

namespace legacy {

using linkem::gui::kChunkSamples;
using linkem::gui::kMaxSamplesPerDirection;
using linkem::gui::Moments;

// The float store of gui/charts/chart_data.hpp at commit 8dd839b, unchanged: the baseline
// the packed store is compared with.
struct DelayPoint {
    std::int64_t t_ns = 0;
    float delay_us = 0, scheduled_us = 0, actual_us = 0;
};
class SampleRing {
  public:
    SampleRing() = default;
    explicit SampleRing(bool full) : full_(full) {}
    void add(const DelayPoint& p);
    /// Drops whole chunks whose every sample arrived before t_ns.
    void trimBefore(std::int64_t t_ns);
    void clear();
    std::size_t size() const { return size_; }
    /// Bytes the samples take (the chunks' arrays, allocated).
    std::size_t bytes() const;

    /// f(const DelayPoint&) for each sample with lo <= t_ns <= hi, in stored order.
    template <class F>
    void forEach(std::int64_t lo, std::int64_t hi, F&& f) const {
        for (const Chunk& c : chunks_) {
            if (c.max_t < lo || c.min_t > hi) continue;
            const bool inside = c.min_t >= lo && c.max_t <= hi;
            for (std::size_t i = 0; i < c.v.size(); ++i) {
                const std::int64_t t = c.base_ns + c.v[i].off_ns;
                if (!inside && (t < lo || t > hi)) continue;
                f(point(c, i, t));
            }
        }
    }
    /// As forEach, for every stride-th of those samples (the first, then every stride-th),
    /// stepping over the others without reading them where a chunk lies wholly inside.
    /// With run > 1, runs of `run` consecutive samples, one run every stride * run samples
    /// (as many visits; whole cache lines are read instead of one sample of each).
    template <class F>
    void forEachStrided(std::int64_t lo, std::int64_t hi, std::size_t stride, F&& f,
                        std::size_t run = 1) const {
        if (stride <= 1) return forEach(lo, hi, f);
        if (run < 1) run = 1;
        const std::size_t period = stride * run;
        std::size_t phase = 0;  // position in the period of the next sample in [lo, hi]
        for (const Chunk& c : chunks_) {
            if (c.max_t < lo || c.min_t > hi) continue;
            if (c.min_t >= lo && c.max_t <= hi) {
                const std::size_t n = c.v.size();
                for (std::size_t i = 0; i < n;) {
                    if (phase < run) {
                        const std::size_t take = std::min(run - phase, n - i);
                        for (std::size_t j = i; j < i + take; ++j)
                            f(point(c, j, c.base_ns + c.v[j].off_ns));
                        i += take;
                        phase += take;
                    } else {
                        const std::size_t pass = std::min(period - phase, n - i);
                        i += pass;
                        phase += pass;
                    }
                    if (phase == period) phase = 0;
                }
                continue;
            }
            for (std::size_t i = 0; i < c.v.size(); ++i) {
                const std::int64_t t = c.base_ns + c.v[i].off_ns;
                if (t < lo || t > hi) continue;
                if (phase < run) f(point(c, i, t));
                if (++phase == period) phase = 0;
            }
        }
    }
    /// Moments of actual_us over the samples with lo <= t_ns <= hi: chunks wholly inside
    /// add their own summary, only the chunks at the edges are scanned.
    Moments actual(std::int64_t lo, std::int64_t hi) const;
    /// Samples with lo <= t_ns <= hi (same rule as actual()).
    std::size_t count(std::int64_t lo, std::int64_t hi) const { return actual(lo, hi).n; }

  private:
    struct Core {  // what the charts read
        std::int32_t off_ns;
        float actual_us;
    };
    struct Extra {  // what only the CSV export reads (full rings)
        float delay_us, scheduled_us;
    };
    struct Chunk {
        std::int64_t base_ns = 0, min_t = 0, max_t = 0;
        Moments actual;
        std::vector<Core> v;
        std::vector<Extra> x;  // parallel to v in a full ring, empty otherwise
    };
    static DelayPoint point(const Chunk& c, std::size_t i, std::int64_t t) {
        const float a = c.v[i].actual_us;
        if (c.x.empty()) return DelayPoint{t, a, a, a};
        return DelayPoint{t, c.x[i].delay_us, c.x[i].scheduled_us, a};
    }
    std::deque<Chunk> chunks_;
    std::size_t size_ = 0;
    bool full_ = true;
};

inline void SampleRing::add(const DelayPoint& p) {
    constexpr std::int64_t kMaxOff = std::numeric_limits<std::int32_t>::max();
    constexpr std::int64_t kMinOff = std::numeric_limits<std::int32_t>::min();
    bool fresh = chunks_.empty() || chunks_.back().v.size() >= kChunkSamples;
    if (!fresh) {
        const std::int64_t off = p.t_ns - chunks_.back().base_ns;
        fresh = off > kMaxOff || off < kMinOff;
    }
    if (fresh) {
        if (!chunks_.empty()) {  // a chunk cut short by a jump in time gives back its slack
            chunks_.back().v.shrink_to_fit();
            chunks_.back().x.shrink_to_fit();
        }
        Chunk c;
        c.base_ns = c.min_t = c.max_t = p.t_ns;
        c.v.reserve(kChunkSamples);
        if (full_) c.x.reserve(kChunkSamples);
        chunks_.push_back(std::move(c));
    }
    Chunk& c = chunks_.back();
    c.v.push_back(Core{static_cast<std::int32_t>(p.t_ns - c.base_ns), p.actual_us});
    if (full_) c.x.push_back(Extra{p.delay_us, p.scheduled_us});
    c.min_t = std::min(c.min_t, p.t_ns);
    c.max_t = std::max(c.max_t, p.t_ns);
    c.actual.add(p.actual_us);
    ++size_;
    while (size_ > kMaxSamplesPerDirection && chunks_.size() > 1) {
        size_ -= chunks_.front().v.size();
        chunks_.pop_front();
    }
}

inline void SampleRing::trimBefore(std::int64_t t_ns) {
    while (!chunks_.empty() && chunks_.front().max_t < t_ns) {
        size_ -= chunks_.front().v.size();
        chunks_.pop_front();
    }
}

inline void SampleRing::clear() {
    chunks_.clear();
    size_ = 0;
}

inline std::size_t SampleRing::bytes() const {
    std::size_t b = 0;
    for (const Chunk& c : chunks_)
        b += c.v.capacity() * sizeof(Core) + c.x.capacity() * sizeof(Extra);
    return b;
}

inline Moments SampleRing::actual(std::int64_t lo, std::int64_t hi) const {
    Moments m;
    for (const Chunk& c : chunks_) {
        if (c.max_t < lo || c.min_t > hi) continue;
        if (c.min_t >= lo && c.max_t <= hi) {
            m.merge(c.actual);
            continue;
        }
        for (const Core& s : c.v) {
            const std::int64_t t = c.base_ns + s.off_ns;
            if (t >= lo && t <= hi) m.add(s.actual_us);
        }
    }
    return m;
}

}  // namespace legacy

namespace {

using Clock = std::chrono::steady_clock;
using linkem::gui::Moments;

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
        const Moments m = full.actual(lo, hi);
        best_actual = std::min(best_actual, since_ns(t1));
        f.checksum += sum + m.mean + static_cast<double>(bins[50]);
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
    Moments actual(std::int64_t lo, std::int64_t hi) const { return r.actual(lo, hi); }
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
    std::printf("%-9s %-6s %11s %11s %10s %13s %11s %11s\n", "arrivals", "store", "B/sample",
                "B/measured", "add ns", "strided ms", "forEach ms", "actual us");
    for (const bool jittered : {false, true}) {
        const std::vector<Sample> v = samples(n, jittered);
        const Figures o = run<legacy::SampleRing>(
            v, repeat, [](std::int64_t t, std::int64_t d, std::int64_t s, std::int64_t a) {
                return legacy::DelayPoint{t, static_cast<float>(d * 1e-3),
                                          static_cast<float>(s * 1e-3),
                                          static_cast<float>(a * 1e-3)};
            });
        const Figures w = run<NewRing>(
            v, repeat, [](std::int64_t t, std::int64_t d, std::int64_t s, std::int64_t a) {
                return linkem::gui::DelayPoint{t, d, s, a};
            });
        const char* name = jittered ? "jittered" : "prefill";
        for (const auto& [label, f] : {std::pair<const char*, const Figures&>{"old", o},
                                       std::pair<const char*, const Figures&>{"new", w}})
            std::printf("%-9s %-6s %11.2f %11.2f %10.1f %13.2f %11.2f %11.1f\n", name, label,
                        f.bytes_full, f.bytes_meas, f.add_ns, f.strided_ms, f.foreach_ms,
                        f.actual_us);
        std::printf(
            "%-9s new/old %10.2f %11.2f %10.2f %13.2f %11.2f %11.2f   (checksums %s)\n", name,
            w.bytes_full / o.bytes_full, w.bytes_meas / o.bytes_meas, w.add_ns / o.add_ns,
            w.strided_ms / o.strided_ms, w.foreach_ms / o.foreach_ms, w.actual_us / o.actual_us,
            std::fabs(w.checksum - o.checksum) < 1e-3 * std::fabs(o.checksum) ? "agree" : "DIFFER");
    }
    return 0;
}
