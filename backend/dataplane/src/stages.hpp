// The lcore loops: which stages (rx, emulate, tx) an lcore runs for which directions, and
// the loop itself. See dataplane.hpp for the layouts.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "direction.hpp"

namespace linkem::dp::detail {

enum class Role : std::uint8_t { full, rx_emulate, rx, emulate, tx };

struct LcoreTask {
    const std::atomic<bool>* run = nullptr;
    Role role = Role::full;
    std::array<Direction*, 2> dirs{};
    unsigned n_dirs = 0;
    unsigned lcore = 0;
};

/// The lcore entry point (rte_eal_remote_launch): runs the task's loop until *run is false.
int lcore_main(void* arg);
/// After the lcores stopped: frees every packet the direction still holds (pending, stage
/// rings, the Emulator's queue) and undoes the buffer exchange.
void free_all(Direction& d);

}  // namespace linkem::dp::detail
