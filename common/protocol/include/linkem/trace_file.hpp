// mahimahi link traces (mm-link's trace files) for the trace limiter: one delivery
// opportunity per line, a whole number of milliseconds since the trace's start,
// non-decreasing; the last one is the trace's period (it repeats then). Read as mm-link
// reads them, and refused with the file and line named where mm-link would refuse them
// (an empty trace, one that lasts 0 ms, timestamps going back), and also where it would
// read a number out of junk.
#pragma once

#include <istream>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "linkem/limiter.hpp"

namespace linkem {

/// The most lines a trace may have (16 Mi opportunities: 25 GB per repeat).
inline constexpr std::size_t kMaxTraceLines = std::size_t{1} << 24;

/// Reads a trace from `in`; `name` is what errors call it. Throws ParamError (field
/// "trace_file") whose message names it and the line: "up.trace:7: not a whole number of
/// milliseconds; ..." (never the line's text: the file may be one that is no trace).
DeliveryTrace parse_delivery_trace(std::istream& in, const std::string& name);

/// Reads the trace file at `path` (as given: relative to the working directory). Throws
/// ParamError (field "trace_file") as above, or when the file cannot be read.
std::shared_ptr<const DeliveryTrace> read_delivery_trace(const std::string& path);

/// In an object of link parameters as a file holds them (top-level keys, and "a_to_b" /
/// "b_to_a" objects, and the same in each class of a "classes" list), makes each relative
/// trace_file name relative to `dir` instead: the directory of the file that names it.
/// Other values are left for the reader to refuse.
void resolve_trace_files(nlohmann::json& link, const std::string& dir);

}  // namespace linkem
