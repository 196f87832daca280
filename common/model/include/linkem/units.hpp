// Parsing and printing of values with units, shared by every command-line surface.
//
// Durations: "10ms", "1.5us", "250ns", "2s", "1min"; a bare number is rejected so that a
// unit is never guessed. Rates: "10Gbit", "100Mbit/s", "2.5G", "64kbit", "1e9bps" (bits
// per second, SI prefixes). Sizes: "1518", "64KiB", "1MB" (bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "linkem/time.hpp"

namespace linkem {

/// Parses a duration with a unit into nanoseconds; nullopt if malformed or negative.
std::optional<DurationNs> parse_duration(std::string_view text);
/// Parses a bit rate with a unit into bits per second; nullopt if malformed or negative.
std::optional<double> parse_rate(std::string_view text);
/// Parses a byte count, optionally with a unit (B, kB, KiB, MB, MiB, GB, GiB).
std::optional<std::uint64_t> parse_bytes(std::string_view text);

/// A plain finite number, the whole text ("0.01", "1e-3"); nullopt otherwise.
std::optional<double> parse_number(std::string_view text);
/// A non-negative whole number, the whole text ("100000"); nullopt otherwise.
std::optional<std::uint64_t> parse_whole(std::string_view text);

/// What each parser accepts, for error messages: "'10' is not " + kDurationForm.
inline constexpr std::string_view kDurationForm = "a duration with a unit (ns, us, ms, s, min)";
inline constexpr std::string_view kRateForm =
    "a bit rate with a unit (bit, kbit, Mbit, Gbit, Tbit; /s optional)";
inline constexpr std::string_view kBytesForm =
    "a size in bytes, optionally with a unit (B, kB, KiB, MB, MiB, GB, GiB)";
inline constexpr std::string_view kNumberForm = "a number";
inline constexpr std::string_view kWholeForm = "a whole number";

/// "10ms", "1.5us", "0ns": the shortest exact-ish rendering with a unit.
std::string format_duration(DurationNs ns);
/// "10Gbit/s", "100Mbit/s", "1.5kbit/s".
std::string format_rate(double bps);

/// Bytes a frame occupies on the wire beyond its own bytes: preamble + SFD (8) and the
/// minimum inter-frame gap (12).
inline constexpr std::uint32_t kEthernetWireOverhead = 20;

}  // namespace linkem
