// The oracle of the simulator's InversionCounter (backend/sim/metrics.hpp): inversions
// counted pair by pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace linkem::sim {

/// Brute-force O(n^2) reference for tests: inversions of `seqs` (in departure order).
inline std::uint64_t count_inversions_naive(const std::vector<std::uint64_t>& seqs) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < seqs.size(); ++i)
        for (std::size_t j = i + 1; j < seqs.size(); ++j)
            n += seqs[i] > seqs[j];
    return n;
}

}  // namespace linkem::sim
