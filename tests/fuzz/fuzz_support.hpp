// What the fuzz targets share (tests/fuzz/*.cpp, docs/reliability.md): the invariant check,
// the input as text and as JSON, and the guard that keeps a target off the file system.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

/// An invariant of the reader under test: when it does not hold, the input is a finding
/// (abort: libFuzzer keeps the input, the replay runner fails).
#define FUZZ_CHECK(cond, what)                                                \
    do {                                                                      \
        if (!(cond)) ::linkem::fuzz::fail(__FILE__, __LINE__, #cond, (what)); \
    } while (0)

namespace linkem::fuzz {

[[noreturn]] inline void fail(const char* file, int line, const char* cond,
                              const std::string& what) {
    std::fprintf(stderr, "%s:%d: invariant does not hold: %s (%s)\n", file, line, cond,
                 what.c_str());
    std::fflush(stderr);
    std::abort();
}

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// The input as JSON; nullopt when it is none (the parser's refusal is tested elsewhere).
inline std::optional<nlohmann::json> parse_json(std::string_view t) {
    nlohmann::json j = nlohmann::json::parse(t, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

/// Whether a string anywhere in `j` (key or value) holds a '/': the targets skip such
/// inputs, so that a trace_file or scenario name never reaches a real file (/dev/zero,
/// /dev/stdin). Relative names are read from kNoDir, which does not exist.
inline bool names_a_path(const nlohmann::json& j) {
    if (j.is_string()) return j.get_ref<const std::string&>().find('/') != std::string::npos;
    if (j.is_array())
        for (const auto& v : j)
            if (names_a_path(v)) return true;
    if (j.is_object())
        for (const auto& [k, v] : j.items())
            if (k.find('/') != std::string::npos || names_a_path(v)) return true;
    return false;
}

inline constexpr const char* kNoDir = "/nonexistent-linkem-fuzz";

}  // namespace linkem::fuzz
