// The lcore loop: a worker lcore polls its lanes (one, or with `shared` the two directions'
// lanes) in turn, each rx -> ingest -> drain -> tx. See dataplane.hpp for the workers.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "lane.hpp"

namespace linkem::dp::detail {

struct LcoreTask {
    const std::atomic<bool>* run = nullptr;
    std::array<Lane*, 2> lanes{};
    unsigned n_lanes = 0;
    unsigned lcore = 0;
};

/// The lcore entry point (rte_eal_remote_launch): runs the task's loop until *run is false.
int lcore_main(void* arg);
/// After the lcores stopped: frees every packet the lane still holds (pending, the
/// Emulator's queue) and undoes the buffer exchange.
void free_all(Lane& d);

}  // namespace linkem::dp::detail
