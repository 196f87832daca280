#include "linkem/counters.hpp"

#include <nlohmann/json.hpp>

namespace linkem {

nlohmann::json to_json(const CounterSnapshot& c) {
    return {{"packets_in", c.packets_in},
            {"bytes_in", c.bytes_in},
            {"packets_out", c.packets_out},
            {"bytes_out", c.bytes_out},
            {"drops_loss", c.drops_loss},
            {"drops_policer", c.drops_policer},
            {"drops_spacer", c.drops_spacer},
            {"drops_buffer_full", c.drops_buffer_full},
            {"delays_clamped", c.delays_clamped},
            {"in_flight", c.in_flight},
            {"alpha", c.alpha},
            {"rate_pps", c.rate_pps},
            {"rate_intervals", c.rate_intervals}};
}

bool balances(const CounterSnapshot& c) {
    return c.packets_in == c.packets_out + c.drops() + c.in_flight;
}

}  // namespace linkem
