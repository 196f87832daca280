// Fast seeded 64-bit PRNG: xoshiro256++ (Blackman & Vigna), seeded through SplitMix64.
//
// Same seed => the same stream on every machine and build, which is what makes simulator
// and emulator runs bit-for-bit reproducible. Period 2^256 - 1; passes BigCrush.
#pragma once

#include <cstdint>
#include <limits>
#include <random>

namespace linkem {

/// SplitMix64: expands one 64-bit seed into well-mixed words (used to seed xoshiro).
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// A non-zero seed from the system's random source: what a seed of 0 asks for.
inline std::uint64_t random_seed() {
    std::random_device rd;
    std::uint64_t s = 0;
    while (s == 0)
        s = (std::uint64_t{rd()} << 32) ^ rd();
    return s;
}

class Rng {
  public:
    using result_type = std::uint64_t;

    explicit Rng(std::uint64_t seed = 1) { reseed(seed); }

    void reseed(std::uint64_t seed) {
        std::uint64_t sm = seed;
        for (auto& w : s_)
            w = splitmix64(sm);
    }

    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

    result_type operator()() {
        const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    /// Uniform double in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }
    /// Uniform double in (0, 1]: safe to take the logarithm of.
    double uniform_pos() { return static_cast<double>(((*this)() >> 11) + 1) * 0x1.0p-53; }

    /// Derives an independent generator (for a second direction, a second run, ...).
    Rng split() { return Rng((*this)() ^ 0x6a09e667f3bcc909ULL); }

  private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) {
        return (x << k) | (x >> (64 - k));
    }
    std::uint64_t s_[4];
};

/// Threshold for a Bernoulli trial with probability p done as `rng() < threshold`:
/// one integer compare per packet instead of a conversion to double.
inline std::uint64_t probability_threshold(double p) {
    if (p <= 0.0) return 0;
    if (p >= 1.0) return std::numeric_limits<std::uint64_t>::max();
    return static_cast<std::uint64_t>(p * 0x1.0p64);
}
inline bool bernoulli(Rng& rng, std::uint64_t threshold) {
    // p == 1 maps to max(); the single value rng() == max() is then the only miss (2^-64).
    return rng() < threshold || threshold == std::numeric_limits<std::uint64_t>::max();
}

}  // namespace linkem
