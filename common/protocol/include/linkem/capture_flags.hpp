// Capture's settings on a command line: one flag per setting of capture_start's params
// (linkem/capture_json.hpp), the same in `linkemctl capture start` (--points ...) and
// linkemd (--capture-points ...), and the conversion of what was given into those params.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// How a capture setting is written on a command line (the file is each program's own:
/// linkemctl's argument FILE, linkemd's --capture FILE).
struct CaptureFlag {
    std::string key;         // capture_start's key: "snaplen_bytes"
    std::string flag;        // without the program's prefix: "snaplen"
    std::string value_name;  // for --help: LIST, BYTES, DIR, NAME, DURATION, N
    std::string example;     // "128"
    std::string help;
};

/// points, snaplen, direction, class, duration, packets, max-size, files.
const std::vector<CaptureFlag>& capture_flags();

/// The text given to the capture flags: [i] for capture_flags()[i]; empty: not given.
using CaptureFlagText = std::vector<std::string>;

/// capture_start's params from a file and the flags given: {"file": file, "points": ["out",
/// "drop"], "snaplen_bytes": 128, "duration_s": 10, "max_size_bytes": 104857600, ...}, only
/// the flags given. Checks the form (a duration with a unit, a size, a whole number), not
/// the range (capture_settings_from_json does, naming the key: capture_flag_name() gives
/// its flag). Throws FlagError naming the flag (`prefix` + flag) and the form allowed.
nlohmann::json capture_params_from_flags(const std::string& file, const CaptureFlagText& text,
                                         std::string_view prefix);

/// The flag of capture_start's key `key`: `prefix` + its flag ("--capture-" + "snaplen"),
/// `file_flag` for "file"; `key` itself when it is none of them.
std::string capture_flag_name(std::string_view key, std::string_view prefix,
                              std::string_view file_flag);

}  // namespace linkem
