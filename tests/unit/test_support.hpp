// Shared helpers for the unit tests: a small packet type and sample statistics.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace linkem::test {

struct Packet {
    std::uint64_t seq;
    std::int64_t t_arr;
    std::uint32_t length;
};

/// Sample moments, accumulated in long double so 10^6-10^7 terms lose nothing.
struct Moments {
    double mean = 0, sd = 0, skew = 0, kurt = 0;  // kurt: plain (3 for a normal)
};

template <class T>
Moments moments(const std::vector<T>& x) {
    const long double n = static_cast<long double>(x.size());
    long double s = 0;
    for (T v : x)
        s += v;
    const long double m = s / n;
    long double m2 = 0, m3 = 0, m4 = 0;
    for (T v : x) {
        const long double d = v - m;
        const long double d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    m2 /= n;
    m3 /= n;
    m4 /= n;
    Moments r;
    r.mean = static_cast<double>(m);
    r.sd = static_cast<double>(std::sqrt(m2 * n / (n - 1)));
    r.skew = m2 > 0 ? static_cast<double>(m3 / std::pow(m2, 1.5L)) : 0;
    r.kurt = m2 > 0 ? static_cast<double>(m4 / (m2 * m2)) : 0;
    return r;
}

/// Sample autocorrelation at lag k (mean and variance from the whole series).
template <class T>
double autocorrelation(const std::vector<T>& x, std::size_t k) {
    const std::size_t n = x.size();
    long double s = 0;
    for (T v : x)
        s += v;
    const long double m = s / n;
    long double c0 = 0, ck = 0;
    for (std::size_t i = 0; i < n; ++i)
        c0 += (x[i] - m) * (x[i] - m);
    for (std::size_t i = k; i < n; ++i)
        ck += (x[i] - m) * (x[i - k] - m);
    return static_cast<double>(ck / c0);
}

}  // namespace linkem::test
