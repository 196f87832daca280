#include "linkem/traffic.hpp"

namespace linkem {

std::string_view to_string(TrafficPattern p) {
    switch (p) {
        case TrafficPattern::cbr:
            return "cbr";
        case TrafficPattern::poisson:
            return "poisson";
        case TrafficPattern::sine:
            return "sine";
    }
    return "?";
}

}  // namespace linkem
