#include "sample_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

namespace linkem::gui {

using nlohmann::json;

// ---- SampleRing ----

namespace {

unsigned bitWidth(std::uint64_t range) {
    return range == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(range));
}

std::size_t fieldBytes(std::size_t n, unsigned w) {
    return (n * w + 7) / 8;
}

// Appends w-bit fields (0..64) little-endian, from byte p on, a whole 64-bit word at a time.
struct BitWriter {
    std::uint8_t* p;
    std::uint64_t acc = 0;
    unsigned bits = 0;  // < 64 in acc
    void put(std::uint64_t v, unsigned w) {
        if (w == 0) return;
        acc |= v << bits;
        const unsigned total = bits + w;
        if (total < 64) {
            bits = total;
            return;
        }
        std::memcpy(p, &acc, 8);
        p += 8;
        acc = bits == 0 ? 0 : v >> (64 - bits);
        bits = total - 64;
    }
    void flush() {
        std::memcpy(p, &acc, (bits + 7) / 8);
        p += (bits + 7) / 8;
        acc = 0;
        bits = 0;
    }
};

// The frame of reference of v[0..n): its minimum and the bits of (v - minimum), with
// wrap-around arithmetic (exact for any int64 values).
template <class Get>
std::pair<std::int64_t, unsigned> frame(std::size_t n, std::size_t from, Get get) {
    if (n <= from) return {0, 0};
    std::int64_t lo = get(from), hi = lo;
    for (std::size_t i = from + 1; i < n; ++i) {
        const std::int64_t v = get(i);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    return {lo, bitWidth(static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo))};
}

std::int64_t wrapSub(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

}  // namespace

void SampleRing::seal() {
    const std::size_t n = open_.n();
    if (n == 0) return;
    const std::vector<std::int64_t>& t = open_.t;
    const std::vector<std::int64_t>& a = open_.a;
    const bool extra = !open_.d.empty();
    Sealed c;
    c.t0 = t[0];
    c.min_t = open_.min_t;
    c.max_t = open_.max_t;
    c.actual = open_.actual;
    c.wait = open_.wait;
    c.count = static_cast<std::uint32_t>(n);
    auto step = [&](std::size_t i) { return t[i] - t[i - 1]; };  // |t - t0| < 2^31: no overflow
    auto late = [&](std::size_t i) { return wrapSub(a[i], open_.s[i]); };
    auto sd = [&](std::size_t i) { return wrapSub(open_.s[i], open_.d[i]); };
    unsigned w = 0;
    std::tie(c.a_min, w) = frame(n, 0, [&](std::size_t i) { return a[i]; });
    c.a_w = static_cast<std::uint8_t>(w);
    std::tie(c.dt_min, w) = frame(n, 1, step);
    c.dt_w = static_cast<std::uint8_t>(w);
    if (extra) {
        std::tie(c.late_min, w) = frame(n, 0, late);
        c.late_w = static_cast<std::uint8_t>(w);
        std::tie(c.sd_min, w) = frame(n, 0, sd);
        c.sd_w = static_cast<std::uint8_t>(w);
    }
    const std::size_t checkpoints = (n + kTimeCheckpoint - 1) / kTimeCheckpoint;
    std::size_t at = 4 * checkpoints;
    c.a_at = static_cast<std::uint32_t>(at);
    at += fieldBytes(n, c.a_w);
    c.dt_at = static_cast<std::uint32_t>(at);
    at += fieldBytes(n, c.dt_w);
    c.late_at = static_cast<std::uint32_t>(at);
    at += fieldBytes(n, c.late_w);
    c.sd_at = static_cast<std::uint32_t>(at);
    at += fieldBytes(n, c.sd_w);
    c.data.assign(at + 8, 0);  // 8 bytes of padding: bitsAt reads 8 (or 9) bytes at a time
    std::uint8_t* base = c.data.data();
    for (std::size_t k = 0; k < checkpoints; ++k) {
        const auto off = static_cast<std::int32_t>(t[k * kTimeCheckpoint] - c.t0);
        std::memcpy(base + 4 * k, &off, 4);
    }
    auto pack = [&](std::uint32_t at_, unsigned w_, std::int64_t lo, std::size_t from, auto get) {
        if (w_ == 0) return;
        BitWriter bw{base + at_};
        for (std::size_t i = 0; i < n; ++i)
            bw.put(
                i < from ? 0 : static_cast<std::uint64_t>(get(i)) - static_cast<std::uint64_t>(lo),
                w_);
        bw.flush();
    };
    pack(c.a_at, c.a_w, c.a_min, 0, [&](std::size_t i) { return a[i]; });
    pack(c.dt_at, c.dt_w, c.dt_min, 1, step);
    if (extra) {
        pack(c.late_at, c.late_w, c.late_min, 0, late);
        pack(c.sd_at, c.sd_w, c.sd_min, 0, sd);
    }
    sealed_.push_back(std::move(c));
    open_.clear();
}

void SampleRing::add(const DelayPoint& p) {
    constexpr std::int64_t kMaxOff = std::numeric_limits<std::int32_t>::max();
    constexpr std::int64_t kMinOff = std::numeric_limits<std::int32_t>::min();
    if (open_.n() > 0) {
        // a time more than 2^31 ns from the chunk's first one (or a full chunk) seals it;
        // the difference is taken without overflow
        const bool far =
            p.t_ns >= open_t0_
                ? static_cast<std::uint64_t>(p.t_ns) - static_cast<std::uint64_t>(open_t0_) >
                      static_cast<std::uint64_t>(kMaxOff)
                : static_cast<std::uint64_t>(open_t0_) - static_cast<std::uint64_t>(p.t_ns) >
                      static_cast<std::uint64_t>(-kMinOff);
        if (far || open_.n() >= kChunkSamples) seal();
    }
    if (open_.n() == 0) {
        open_t0_ = open_.min_t = open_.max_t = p.t_ns;
        open_.t.reserve(kChunkSamples);
        open_.a.reserve(kChunkSamples);
        if (full_) {
            open_.d.reserve(kChunkSamples);
            open_.s.reserve(kChunkSamples);
        }
    }
    open_.t.push_back(p.t_ns);
    open_.a.push_back(p.actual_ns);
    if (full_) {
        open_.d.push_back(p.delay_ns);
        open_.s.push_back(p.scheduled_ns);
    }
    open_.min_t = std::min(open_.min_t, p.t_ns);
    open_.max_t = std::max(open_.max_t, p.t_ns);
    addCentred(open_.actual, static_cast<double>(p.actual_ns));
    if (full_) addCentred(open_.wait, static_cast<double>(p.scheduled_ns - p.delay_ns));
    ++size_;
    while (size_ > kMaxSamplesPerDirection && !sealed_.empty()) {
        size_ -= sealed_.front().n();
        sealed_.pop_front();
    }
}

void SampleRing::trimBefore(std::int64_t t_ns) {
    while (!sealed_.empty() && sealed_.front().max_t < t_ns) {
        size_ -= sealed_.front().n();
        sealed_.pop_front();
    }
    if (sealed_.empty() && open_.n() > 0 && open_.max_t < t_ns) {
        size_ -= open_.n();
        open_.clear();
    }
}

void SampleRing::clear() {
    sealed_.clear();
    sealed_.shrink_to_fit();
    open_ = Open{};
    size_ = 0;
}

std::size_t SampleRing::bytes() const {
    std::size_t b = sizeof(std::int64_t) * (open_.t.capacity() + open_.a.capacity() +
                                            open_.d.capacity() + open_.s.capacity());
    for (const Sealed& c : sealed_)
        b += sizeof(Sealed) + c.data.capacity();
    return b;
}

template <class C>
void SampleRing::statsIn(const C& c, std::int64_t lo, std::int64_t hi, bool of_wait,
                         RunningStats& m) {
    const std::size_t n = c.n();
    if (n == 0 || c.max_t < lo || c.min_t > hi) return;
    if (c.min_t >= lo && c.max_t <= hi) {
        m.merge(of_wait ? c.wait : c.actual);
        return;
    }
    std::int64_t t = c.timeAt(0);
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) t = c.nextTime(i, t);
        if (t < lo || t > hi) continue;
        if (!of_wait) {
            addCentred(m, static_cast<double>(c.actualAt(i)));
        } else {
            const DelayPoint p = c.point(i, t);
            addCentred(m, static_cast<double>(p.scheduled_ns - p.delay_ns));
        }
    }
}

RunningStats SampleRing::actual(std::int64_t lo, std::int64_t hi) const {
    RunningStats m;
    for (const Sealed& c : sealed_)
        statsIn(c, lo, hi, false, m);
    statsIn(open_, lo, hi, false, m);
    return m;
}

RunningStats SampleRing::wait(std::int64_t lo, std::int64_t hi) const {
    RunningStats m;
    if (!full_) return m;
    for (const Sealed& c : sealed_)
        statsIn(c, lo, hi, true, m);
    statsIn(open_, lo, hi, true, m);
    return m;
}

// ---- ColumnDecimator ----

void ColumnDecimator::reset(std::int64_t column_ns) {
    w_ = column_ns;
    first_ = 0;
    cols_.clear();
}

void ColumnDecimator::add(std::int64_t t_ns, float v) {
    if (w_ <= 0 || !std::isfinite(v)) return;
    constexpr std::int64_t kMaxGap = 1 << 16;  // columns; beyond this the old ones are stale
    const std::int64_t k = floorDiv(t_ns, w_);
    if (cols_.empty()) {
        first_ = k;
        cols_.emplace_back();
    } else if (k < first_) {
        if (first_ - k > kMaxGap) return;
        cols_.insert(cols_.begin(), static_cast<std::size_t>(first_ - k), Column{});
        first_ = k;
    } else if (k >= first_ + static_cast<std::int64_t>(cols_.size())) {
        const std::int64_t gap = k - (first_ + static_cast<std::int64_t>(cols_.size())) + 1;
        if (gap > kMaxGap) {
            cols_.clear();
            first_ = k;
            cols_.emplace_back();
        } else {
            cols_.insert(cols_.end(), static_cast<std::size_t>(gap), Column{});
        }
    }
    Column& c = cols_[static_cast<std::size_t>(k - first_)];
    if (c.n == 0) {
        c.t_min = c.t_max = t_ns;
        c.v_min = c.v_max = v;
    } else {
        if (v < c.v_min) {
            c.v_min = v;
            c.t_min = t_ns;
        }
        if (v > c.v_max) {
            c.v_max = v;
            c.t_max = t_ns;
        }
    }
    ++c.n;
}

void ColumnDecimator::trimBefore(std::int64_t t_ns) {
    if (w_ <= 0) return;
    const std::int64_t k = floorDiv(t_ns, w_);
    while (!cols_.empty() && first_ < k) {
        cols_.pop_front();
        ++first_;
    }
}

}  // namespace linkem::gui
