#include "linkem/counters.hpp"

namespace linkem {

bool balances(const CounterSnapshot& c) {
    return c.packets_in == c.packets_out + c.drops.total() + c.in_flight;
}

}  // namespace linkem
