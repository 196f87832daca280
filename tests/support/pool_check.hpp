// The data-plane tests' check that no mbuf or packet buffer went astray.
#pragma once

#include <string>

#include "linkem/dataplane/dataplane.hpp"

namespace linkem::test {

/// After dp.stop(): whether every pool is whole, i.e. all of its mbufs are back in it and the
/// packet buffers (which the buffer exchange moves between mbuf headers) are the pool's own,
/// one per mbuf: none lost, none shared. Empty when whole, else what is wrong.
std::string pool_check(const dp::Dataplane& dp);

}  // namespace linkem::test
