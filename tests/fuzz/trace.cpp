// Fuzz target: mahimahi delivery traces (linkem/trace_file.hpp, parse_delivery_trace), the
// input being the file. Invariants of a trace that is read: at least one opportunity, at
// most kMaxTraceLines, non-decreasing, a period > 0; written out one number a line it reads
// back the same.
#include <algorithm>
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "linkem/link_params.hpp"
#include "linkem/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    std::istringstream in{std::string(fuzz::text(data, size))};
    DeliveryTrace t;
    try {
        t = parse_delivery_trace(in, "fuzz.trace");
    } catch (const ParamError& e) {
        FUZZ_CHECK(e.field() == "trace_file", e.what());
        return 0;
    }
    FUZZ_CHECK(!t.ms.empty() && t.ms.size() <= kMaxTraceLines, std::to_string(t.ms.size()));
    FUZZ_CHECK(std::is_sorted(t.ms.begin(), t.ms.end()), "not non-decreasing");
    FUZZ_CHECK(t.ms.back() > 0 && t.period() > 0, std::to_string(t.ms.back()));
    std::string out;
    for (const std::uint32_t ms : t.ms)
        out += std::to_string(ms) + "\n";
    std::istringstream again_in{out};
    const DeliveryTrace again = parse_delivery_trace(again_in, "fuzz.trace");
    FUZZ_CHECK(again.ms == t.ms, "written and read again differs");
    return 0;
}
