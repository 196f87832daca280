#include "chart_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <utility>

namespace linkem::gui {

using nlohmann::json;

namespace {

bool number(const json& j, const char* key, double& out) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return false;
    out = it->get<double>();
    return std::isfinite(out);
}

bool elementInt(const json& a, std::size_t i, std::int64_t& out) {
    const json& e = a[i];
    if (e.is_number_integer()) {
        out = e.is_number_unsigned() ? static_cast<std::int64_t>(e.get<std::uint64_t>())
                                     : e.get<std::int64_t>();
        return true;
    }
    if (e.is_number_float()) {
        const double v = e.get<double>();
        if (!std::isfinite(v) || std::fabs(v) > 9e18) return false;
        out = static_cast<std::int64_t>(v);
        return true;
    }
    return false;
}

const json* arrayAt(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_array() ? &*it : nullptr;
}

constexpr double kUsPerNs = 1e-3;

}  // namespace

bool jsonInteger(const json& j, const char* key, std::int64_t& out) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return false;
    if (it->is_number_integer()) {
        out = it->is_number_unsigned()
                  ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                        it->get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()))
                  : it->get<std::int64_t>();
        return true;
    }
    const double v = it->get<double>();
    if (!std::isfinite(v) || std::fabs(v) > 9e18) return false;
    out = static_cast<std::int64_t>(v);
    return true;
}

void Moments::merge(const Moments& o) {
    if (o.n == 0) return;
    if (n == 0) {
        *this = o;
        return;
    }
    const double na = static_cast<double>(n), nb = static_cast<double>(o.n);
    const double d = o.mean - mean;
    const double nt = na + nb;
    mean += d * nb / nt;
    m2 += o.m2 + d * d * na * nb / nt;
    n += o.n;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
}

Moments Moments::fromSummary(const json& j, double scale) {
    Moments m;
    if (!j.is_object()) return m;
    std::int64_t count = 0;
    double mean = 0, sd = 0, lo = 0, hi = 0;
    if (!jsonInteger(j, "count", count) || count <= 0 || !number(j, "mean_ns", mean)) return m;
    if ((!number(j, "jitter_ns", sd) && !number(j, "sd_ns", sd)) || sd < 0) sd = 0;
    if (!number(j, "min_ns", lo)) lo = mean;
    if (!number(j, "max_ns", hi)) hi = mean;
    m.n = static_cast<std::uint64_t>(count);
    m.mean = mean * scale;
    m.m2 = sd * scale * sd * scale * static_cast<double>(count);
    m.min = lo * scale;
    m.max = hi * scale;
    return m;
}

double Moments::sd() const {
    return n > 1 && m2 > 0 ? std::sqrt(m2 / static_cast<double>(n)) : 0;
}

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
    open_.actual.add(p.actual_us());
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
void SampleRing::actualIn(const C& c, std::int64_t lo, std::int64_t hi, Moments& m) {
    const std::size_t n = c.n();
    if (n == 0 || c.max_t < lo || c.min_t > hi) return;
    if (c.min_t >= lo && c.max_t <= hi) {
        m.merge(c.actual);
        return;
    }
    std::int64_t t = c.timeAt(0);
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) t = c.nextTime(i, t);
        if (t >= lo && t <= hi) m.add(static_cast<double>(c.actualAt(i)) * kUsPerNs);
    }
}

Moments SampleRing::actual(std::int64_t lo, std::int64_t hi) const {
    Moments m;
    for (const Sealed& c : sealed_)
        actualIn(c, lo, hi, m);
    actualIn(open_, lo, hi, m);
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

// ---- distributions ----

double distributionDensity(const std::string& distribution, double mean, double sd, double x) {
    if (!(sd > 0) || distribution == "constant") return 0;
    constexpr double kSqrt2Pi = 2.5066282746310002;
    if (distribution == "uniform") {
        const double half = std::sqrt(3.0) * sd;
        return x >= mean - half && x <= mean + half ? 1.0 / (2 * half) : 0.0;
    }
    if (distribution == "gamma") {
        if (!(mean > 0) || !(x > 0)) return 0;
        const double cv = sd / mean;
        const double k = 1.0 / (cv * cv), theta = sd * cv;
        return std::exp((k - 1) * std::log(x) - x / theta - std::lgamma(k) - k * std::log(theta));
    }
    if (distribution == "lognormal") {
        if (!(mean > 0) || !(x > 0)) return 0;
        const double cv = sd / mean;
        const double s = std::sqrt(std::log1p(cv * cv));
        const double mu = std::log(mean) - 0.5 * s * s;
        const double z = (std::log(x) - mu) / s;
        return std::exp(-0.5 * z * z) / (x * s * kSqrt2Pi);
    }
    // normal (and anything unknown: the protocol's default)
    const double z = (x - mean) / sd;
    return std::exp(-0.5 * z * z) / (sd * kSqrt2Pi);
}

// ---- ChartData ----

void ChartData::touch(std::int64_t t_ns) {
    if (!have_data_ || t_ns > latest_ns_) latest_ns_ = t_ns;
    have_data_ = true;
}

void ChartData::addDelay(const json& msg) {
    if (!msg.is_object()) return;
    std::int64_t t = 0;
    if (jsonInteger(msg, "t_ns", t)) touch(t);
    for (int d = 0; d < 2; ++d) {
        const auto it = msg.find(kDirectionKeys[d]);
        if (it == msg.end() || !it->is_object()) continue;
        const json& j = *it;
        Direction& D = dirs_[d];
        std::int64_t start = 0, end = 0;
        const bool have_interval =
            jsonInteger(j, "start_ns", start) && jsonInteger(j, "end_ns", end);
        if (have_interval) touch(end);
        // Samples.
        if (const auto s = j.find("samples"); s != j.end() && s->is_object()) {
            const json* arr = arrayAt(*s, "arrival_ns");
            const json* del = arrayAt(*s, "delay_ns");
            const json* sch = arrayAt(*s, "scheduled_ns");
            const json* act = arrayAt(*s, "actual_ns");
            if (arr && act) {
                std::size_t n = std::min(arr->size(), act->size());
                if (del) n = std::min(n, del->size());
                if (sch) n = std::min(n, sch->size());
                for (std::size_t i = 0; i < n; ++i) {
                    std::int64_t ta = 0, a = 0, dl = 0, sc = 0;
                    if (!elementInt(*arr, i, ta) || !elementInt(*act, i, a)) continue;
                    if (!del || !elementInt(*del, i, dl)) dl = a;
                    if (!sch || !elementInt(*sch, i, sc)) sc = a;
                    touch(ta);
                    const DelayPoint p{ta, dl, sc, a};
                    D.samples.add(p);
                    if (column_ns_ > 0 && ta >= latest_ns_ - keep_ns_ - column_ns_) {
                        D.actual_cols.add(ta, static_cast<float>(p.actual_us()));
                        changed(ta);
                    }
                }
            }
        }
        // The built-in traffic's measured samples (backend/linkemd/controller.cpp).
        if (const auto m = j.find("measured"); m != j.end() && m->is_object()) {
            const json* send = arrayAt(*m, "send_ns");
            const json* del = arrayAt(*m, "delay_ns");
            if (send && del) {
                const std::size_t n = std::min(send->size(), del->size());
                for (std::size_t i = 0; i < n; ++i) {
                    std::int64_t ts = 0, dl = 0;
                    if (!elementInt(*send, i, ts) || !elementInt(*del, i, dl)) continue;
                    D.measured.add(DelayPoint{ts, dl, dl, dl});
                    if (column_ns_ > 0 && ts >= latest_ns_ - keep_ns_ - column_ns_) {
                        D.measured_cols.add(ts, static_cast<float>(dl * kUsPerNs));
                        changed(ts);
                    }
                }
            }
        }
        if (have_interval) {
            Interval iv;
            iv.start_ns = start;
            iv.end_ns = end;
            if (const auto x = j.find("delay"); x != j.end())
                iv.delay_us = Moments::fromSummary(*x, kUsPerNs);
            if (const auto x = j.find("lateness"); x != j.end())
                iv.lateness_us = Moments::fromSummary(*x, kUsPerNs);
            if (const auto x = j.find("measured_delay"); x != j.end())
                iv.measured_us = Moments::fromSummary(*x, kUsPerNs);
            D.intervals.push_back(iv);
            changed(start);
        }
    }
    trim();
}

void ChartData::addStats(const json& msg) {
    if (!msg.is_object()) return;
    std::int64_t t = 0;
    if (!jsonInteger(msg, "t_ns", t)) return;
    touch(t);
    static constexpr const char* kKeys[8] = {"packets_in",   "bytes_in",         "packets_out",
                                             "bytes_out",    "drops_loss",       "drops_policer",
                                             "drops_spacer", "drops_buffer_full"};
    for (int d = 0; d < 2; ++d) {
        const auto it = msg.find(kDirectionKeys[d]);
        if (it == msg.end() || !it->is_object()) continue;
        Direction& D = dirs_[d];
        D.last_stats = *it;
        double c[8];
        for (int k = 0; k < 8; ++k)
            if (!number(*it, kKeys[k], c[k])) c[k] = 0;
        if (D.have_prev && t == D.prev_t_ns) continue;  // the same message again
        bool monotonic = D.have_prev && t > D.prev_t_ns;
        for (int k = 0; k < 8 && monotonic; ++k)
            monotonic = c[k] >= D.prev[k];
        if (monotonic) {
            const double dt = static_cast<double>(t - D.prev_t_ns) / 1e9;
            RatePoint r;
            r.t_ns = t;
            r.in_pps = (c[0] - D.prev[0]) / dt;
            r.in_bps = (c[1] - D.prev[1]) * 8 / dt;
            r.out_pps = (c[2] - D.prev[2]) / dt;
            r.out_bps = (c[3] - D.prev[3]) * 8 / dt;
            for (int k = 0; k < 4; ++k)
                r.drops_per_s[k] = (c[4 + k] - D.prev[4 + k]) / dt;
            D.rates.push_back(r);
            changed(t);
        }
        // Otherwise (first message, counters went back: linkemd restarted) start again.
        D.have_prev = true;
        D.prev_t_ns = t;
        std::copy(c, c + 8, D.prev);
    }
    trim();
}

void ChartData::setLink(const json& link) {
    if (!link.is_object()) return;
    for (int d = 0; d < 2; ++d) {
        const auto it = link.find(kDirectionKeys[d]);
        if (it == link.end() || !it->is_object()) continue;
        Direction& D = dirs_[d];
        Target t = D.targets.empty() ? Target{} : D.targets.back();
        t.since_ns = have_data_ ? latest_ns_ : std::numeric_limits<std::int64_t>::min();
        double v = 0;
        if (number(*it, "mean_delay_us", v)) t.mean_us = v;
        if (number(*it, "jitter_us", v)) t.jitter_us = v;
        if (const auto s = it->find("distribution"); s != it->end() && s->is_string())
            t.distribution = s->get<std::string>();
        if (const auto s = it->find("strategy"); s != it->end() && s->is_string())
            t.strategy = s->get<std::string>();
        if (!D.targets.empty()) {
            const Target& b = D.targets.back();
            if (b.mean_us == t.mean_us && b.jitter_us == t.jitter_us &&
                b.distribution == t.distribution && b.strategy == t.strategy)
                continue;
            if (b.since_ns >= t.since_ns) D.targets.pop_back();
        }
        D.targets.push_back(t);
    }
}

void ChartData::setColumns(std::int64_t column_ns, std::int64_t keep_ns) {
    if (column_ns == column_ns_ && keep_ns == keep_ns_) return;
    column_ns_ = column_ns;
    keep_ns_ = keep_ns;
    for (Direction& D : dirs_) {
        D.actual_cols.reset(column_ns);
        D.measured_cols.reset(column_ns);
        if (column_ns <= 0 || !have_data_) continue;
        const std::int64_t lo = latest_ns_ - keep_ns - column_ns;
        D.samples.forEach(lo, latest_ns_, [&](const DelayPoint& p) {
            D.actual_cols.add(p.t_ns, static_cast<float>(p.actual_us()));
        });
        D.measured.forEach(lo, latest_ns_, [&](const DelayPoint& p) {
            D.measured_cols.add(p.t_ns, static_cast<float>(p.actual_us()));
        });
    }
}

void ChartData::trim() {
    const std::int64_t cutoff = latest_ns_ - kRetentionNs;
    for (Direction& D : dirs_) {
        D.samples.trimBefore(cutoff);
        D.measured.trimBefore(cutoff);
        while (!D.intervals.empty() && D.intervals.front().end_ns < cutoff)
            D.intervals.pop_front();
        while (!D.rates.empty() && D.rates.front().t_ns < cutoff)
            D.rates.pop_front();
        while (D.targets.size() >= 2 && D.targets[1].since_ns <= cutoff)
            D.targets.pop_front();
        if (column_ns_ > 0) {
            D.actual_cols.trimBefore(latest_ns_ - keep_ns_ - column_ns_);
            D.measured_cols.trimBefore(latest_ns_ - keep_ns_ - column_ns_);
        }
    }
}

void ChartData::clear() {
    for (Direction& D : dirs_) {
        D = Direction{};
        D.actual_cols.reset(column_ns_);
        D.measured_cols.reset(column_ns_);
    }
    latest_ns_ = 0;
    have_data_ = false;
}

Histogram ChartData::histogram(int d, std::int64_t lo, std::int64_t hi,
                               std::size_t max_used) const {
    Histogram h;
    const SampleRing& ring = dirs_[d].samples;
    const Moments m = ring.actual(lo, hi);
    if (m.n == 0) return h;
    const double sd = m.sd();
    double a = std::max(m.min, m.mean - 6 * sd), b = std::min(m.max, m.mean + 6 * sd);
    if (!(b - a > 1e-3)) {
        a = m.mean - 0.5;
        b = m.mean + 0.5;
    }
    const std::size_t bins = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(m.n)))), 10, 100);
    h.lo_us = a;
    h.bin_us = (b - a) / static_cast<double>(bins);
    h.samples = m.n;
    std::vector<std::uint64_t> counts(bins, 0);
    const std::uint64_t stride =
        max_used > 0 && m.n > max_used ? (m.n + max_used - 1) / max_used : 1;
    // runs of 64 consecutive samples (512 bytes) spread evenly over the window: a fraction
    // of the cache misses of every stride-th sample alone, for as many samples
    ring.forEachStrided(
        lo, hi, stride,
        [&](const DelayPoint& p) {
            ++h.used;
            const double x = p.actual_us();
            if (x < a || x > b) return;
            std::size_t i = static_cast<std::size_t>((x - a) / h.bin_us);
            if (i >= bins) i = bins - 1;
            ++counts[i];
        },
        64);
    h.density.resize(bins);
    for (std::size_t i = 0; i < bins; ++i)
        h.density[i] =
            h.used ? static_cast<double>(counts[i]) / (static_cast<double>(h.used) * h.bin_us)
                   : 0.0;
    return h;
}

}  // namespace linkem::gui
