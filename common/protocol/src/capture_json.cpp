#include "linkem/capture_json.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "json_read.hpp"
#include "linkem/link_params.hpp"

namespace linkem {

using nlohmann::json;
using namespace capture;

namespace {

// A value as an error message shows it: its JSON, with bytes that are not UTF-8 (a command
// line's --capture-direction, which no JSON parser checked) shown as U+FFFD instead of
// dump() throwing.
std::string shown(const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The keys of capture_start's params, in the order the spec lists them.
constexpr const char* kSettingKeys[] = {"file",      "points",         "snaplen_bytes",
                                        "direction", "class",          "duration_s",
                                        "packets",   "max_size_bytes", "files"};
constexpr double kMaxDurationS = 365.0 * 24 * 3600;  // a year

std::string known_keys() {
    std::string s;
    for (const char* k : kSettingKeys)
        s += (s.empty() ? "" : ", ") + std::string(k);
    return s;
}

/// A whole number in lo .. hi (a JSON integer, or a number with no fraction).
std::uint64_t whole(const json& v, const std::string& key, std::uint64_t lo, std::uint64_t hi,
                    const std::string& allowed) {
    if (v.is_number_unsigned()) {
        const std::uint64_t x = v.get<std::uint64_t>();
        if (x >= lo && x <= hi) return x;
    } else if (v.is_number()) {
        const double x = v.get<double>();
        if (std::isfinite(x) && x == std::floor(x) && x >= static_cast<double>(lo) &&
            x <= static_cast<double>(hi))
            return static_cast<std::uint64_t>(x);
    } else {
        throw ParamError(key, "expected a whole number, got " + shown(v) + "; allowed " + allowed);
    }
    throw ParamError(key, shown(v) + " is not allowed; allowed " + allowed);
}

}  // namespace

json capture_settings_to_json(const Settings& s) {
    json points = json::array();
    for (Point p : {Point::in, Point::out, Point::drop})
        if (s.points & static_cast<unsigned>(p)) points.push_back(point_name(p));
    return {{"file", s.file},
            {"points", std::move(points)},
            {"snaplen_bytes", s.snaplen},
            {"direction",
             s.direction && *s.direction < 2 ? json(kDirectionKeys[*s.direction]) : json(nullptr)},
            {"class", s.class_name ? json(*s.class_name) : json(nullptr)},
            {"duration_s", static_cast<double>(s.duration) / kNsPerSec},
            {"packets", s.packets},
            {"max_size_bytes", s.max_size},
            {"files", s.files}};
}

namespace {

/// capture_start's params; `complete`: the file required and the whole checked (validate).
Settings read_settings(const json& j, bool complete) {
    if (!j.is_object())
        throw ParamError("", "expected an object of capture settings, got " +
                                 std::string(j.type_name()) + "; known keys: " + known_keys());
    Settings s;
    bool have_file = false;
    for (const auto& [key, v] : j.items()) {
        if (key == "file") {
            if (!v.is_string() || (complete && v.get<std::string>().empty()))
                throw ParamError(
                    key, "expected the path of the file to write (a string), got " + shown(v));
            s.file = v.get<std::string>();
            have_file = true;
        } else if (key == "points") {
            const char* allowed = "a list of \"in\", \"out\", \"drop\", e.g. [\"out\", \"drop\"]";
            if (!v.is_array())
                throw ParamError(key, "expected " + std::string(allowed) + ", got " + shown(v));
            std::string text;
            for (const json& p : v) {
                if (!p.is_string())
                    throw ParamError(key, "expected " + std::string(allowed) + ", got " + shown(v));
                if (!text.empty()) text += ',';
                text += p.get<std::string>();
            }
            s.points = parse_points(text);  // ParamError("points", ...) naming the bad one
        } else if (key == "snaplen_bytes") {
            s.snaplen = static_cast<std::uint32_t>(whole(
                v, key, kMinSnaplen, kMaxSnaplen,
                std::to_string(kMinSnaplen) + " .. " + std::to_string(kMaxSnaplen) + " bytes"));
        } else if (key == "direction") {
            if (v.is_null()) {
                s.direction.reset();
                continue;
            }
            bool ok = false;
            for (unsigned d = 0; d < 2; ++d)
                if (v.is_string() && v.get<std::string>() == kDirectionKeys[d]) {
                    s.direction = d;
                    ok = true;
                }
            if (!ok)
                throw ParamError(key, shown(v) + " is not a direction; allowed \"" +
                                          std::string(kDirectionKeys[0]) + "\", \"" +
                                          kDirectionKeys[1] + "\" or null (both)");
        } else if (key == "class") {
            if (v.is_null()) {
                s.class_name.reset();
                continue;
            }
            if (!v.is_string() || v.get<std::string>().empty())
                throw ParamError(key,
                                 "expected a class name of the link, \"default\" or null "
                                 "(every class), got " +
                                     shown(v));
            s.class_name = v.get<std::string>();
        } else if (key == "duration_s") {
            if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
                v.get<double>() > kMaxDurationS)
                throw ParamError(key, shown(v) +
                                          " is not allowed; allowed a number of seconds "
                                          "> 0 up to 31536000 (a year), or 0 (until "
                                          "stopped)");
            s.duration = static_cast<DurationNs>(std::llround(v.get<double>() * kNsPerSec));
        } else if (key == "packets") {
            s.packets = whole(v, key, 0, UINT64_MAX, "a whole number >= 1, or 0 (no limit)");
        } else if (key == "max_size_bytes") {
            s.max_size = whole(v, key, 0, UINT64_MAX,
                               "a whole number of bytes >= " + std::to_string(kMinMaxSize) +
                                   " (64 KiB), or 0 (one file)");
        } else if (key == "files") {
            s.files = static_cast<std::uint32_t>(
                whole(v, key, 1, kMaxFiles, "1 .. " + std::to_string(kMaxFiles)));
        } else {
            throw ParamError(key, "unknown capture setting; known: " + known_keys());
        }
    }
    if (complete) {
        if (!have_file) throw ParamError("file", "missing; give the path of the file to write");
        validate(s);
    }
    return s;
}

}  // namespace

Settings capture_settings_from_json(const json& j) {
    return read_settings(j, true);
}

json capture_status_to_json(const Status& s) {
    return {{"running", s.running},
            {"file", s.file},
            {"written_files", s.files},
            {"settings", capture_settings_to_json(s.settings)},
            {"records", s.records},
            {"records_in", s.records_by_point[0]},
            {"records_out", s.records_by_point[1]},
            {"records_drop", s.records_by_point[2]},
            {"bytes", s.bytes},
            {"capture_missed", s.missed},
            {"rotations", s.rotations},
            {"started_utc_ns", s.started_utc_ns},
            {"elapsed_s", static_cast<double>(s.elapsed) / kNsPerSec},
            {"stop_reason", stop_reason_name(s.reason)},
            {"error", s.error}};
}

Status capture_status_from_json(const json& j) {
    const json_read::Reader r(j, "");
    Status s;
    s.running = r.boolean("running");
    s.file = r.str("file");
    if (r.has("written_files")) {
        const json& files = r.need("written_files");
        if (!files.is_array()) r.fail("written_files", "expected a list of paths");
        for (const json& f : files) {
            if (!f.is_string()) r.fail("written_files", "expected a list of paths");
            s.files.push_back(f.get<std::string>());
        }
    }
    if (r.has("settings")) {
        const json& v = r.need("settings");
        if (!v.is_object()) r.fail("settings", "expected an object");
        json known = json::object();
        for (const char* k : kSettingKeys)
            if (v.contains(k)) known[k] = v[k];
        try {
            s.settings = read_settings(known, false);  // a status before any capture: no file
        } catch (const ParamError& e) {
            throw std::invalid_argument("settings." + e.field() + ": " + e.message());
        }
    }
    s.records = r.u64("records");
    s.records_by_point[0] = r.opt_u64("records_in").value_or(0);
    s.records_by_point[1] = r.opt_u64("records_out").value_or(0);
    s.records_by_point[2] = r.opt_u64("records_drop").value_or(0);
    s.bytes = r.u64("bytes");
    s.missed = r.u64("capture_missed");
    s.rotations = r.opt_u64("rotations").value_or(0);
    s.started_utc_ns = r.opt_i64("started_utc_ns").value_or(0);
    s.elapsed =
        static_cast<DurationNs>(std::llround(r.opt_real("elapsed_s").value_or(0) * kNsPerSec));
    const std::string reason = r.opt_str("stop_reason").value_or("");
    for (StopReason x : {StopReason::stopped, StopReason::duration, StopReason::packets,
                         StopReason::write_error, StopReason::shutdown})
        if (reason == stop_reason_name(x)) s.reason = x;
    s.error = r.opt_str("error").value_or("");
    return s;
}

json capture_summary_to_json(const Status& s) {
    return {{"running", s.running},
            {"file", s.file},
            {"records", s.records},
            {"bytes", s.bytes},
            {"capture_missed", s.missed}};
}

Status capture_summary_from_json(const json& j) {
    const json_read::Reader r(j, "capture.");
    Status s;
    s.running = r.boolean("running");
    s.file = r.str("file");
    s.records = r.u64("records");
    s.bytes = r.u64("bytes");
    s.missed = r.u64("capture_missed");
    return s;
}

json capture_event_to_json(const Event& e) {
    return {{"action", event_kind_name(e.kind)},
            {"file", e.status.file},
            {"records", e.status.records},
            {"bytes", e.status.bytes},
            {"capture_missed", e.status.missed},
            {"stop_reason", stop_reason_name(e.status.reason)},
            {"error", e.status.error}};
}

}  // namespace linkem
