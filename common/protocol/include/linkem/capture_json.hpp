// Capture (docs/capture.md) as the protocol's JSON (docs/protocol.md): capture_start's
// params, the status of capture_start / capture_stop / capture_status, and the keys of the
// `capture` event.
#pragma once

#include <nlohmann/json.hpp>

#include "linkem/capture.hpp"

namespace linkem {

/// capture_start's params, every key present: {"file", "points": ["out","drop"],
/// "snaplen_bytes", "direction": "a_to_b" | null, "class": name | null, "duration_s" (0: until
/// stopped), "packets" (0: no limit), "max_size_bytes" (0: one file), "files"}.
nlohmann::json capture_settings_to_json(const capture::Settings& s);
/// Reads capture_start's params: `file` required, the others optional (absent, null or 0
/// where the key allows it: the default). Throws ParamError naming the key and what is
/// allowed, for a bad value, an unknown key, or settings that do not go together
/// (capture::validate). Does not look at the file system, the link's directions or classes.
capture::Settings capture_settings_from_json(const nlohmann::json& j);

/// {"running", "file", "written_files", "settings", "records", "records_in", "records_out",
/// "records_drop", "bytes", "capture_missed", "rotations", "started_utc_ns", "elapsed_s",
/// "stop_reason", "error"}.
nlohmann::json capture_status_to_json(const capture::Status& s);
/// The inverse, for clients: throws std::invalid_argument naming the key that is missing or
/// of the wrong type. Keys it does not know are ignored (in `settings` too); a stop_reason
/// it does not know reads as none.
capture::Status capture_status_from_json(const nlohmann::json& j);

/// The `capture` block of `stats` and get_stats: {"running", "file", "records", "bytes",
/// "capture_missed"}.
nlohmann::json capture_summary_to_json(const capture::Status& s);
/// Its inverse (the other fields of the status left at their defaults); throws
/// std::invalid_argument naming the key ("capture.records: ...").
capture::Status capture_summary_from_json(const nlohmann::json& j);

/// The keys a `capture` event carries beside kind, severity and message: {"action" (started,
/// rotated, stopped, missed), "file", "records", "bytes", "capture_missed", "stop_reason",
/// "error"}.
nlohmann::json capture_event_to_json(const capture::Event& e);

}  // namespace linkem
