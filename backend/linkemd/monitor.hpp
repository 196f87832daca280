// What linkemd warns about while it runs, as protocol events (docs/protocol.md, `event`):
// a port's link going up or down, the mbuf pool running dry, the emulator's buffer limit,
// and data-plane stalls. Each event is printed on stderr and, with the control server,
// published.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "linkem/dataplane/dataplane.hpp"
#include "linkem/messages.hpp"

namespace linkem::linkemd {

class Monitor {
  public:
    /// Events for what changed since the previous call (the first call sets the baseline
    /// for link state).
    std::vector<proto::Event> check(const dp::DataplaneStats& s, const LinkConfig& link);

  private:
    bool nombuf_[2] = {false, false};
    bool full_[2] = {false, false};
    std::optional<bool> link_up_[2];
    std::optional<dp::DataplaneStats> last_;  // for stalls: the previous check
    std::uint64_t warned_longest_[2] = {0, 0};
};

}  // namespace linkem::linkemd
