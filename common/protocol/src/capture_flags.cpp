#include "linkem/capture_flags.hpp"

#include "linkem/units.hpp"

namespace linkem {

using nlohmann::json;

const std::vector<CaptureFlag>& capture_flags() {
    static const std::vector<CaptureFlag> kFlags = {
        {"points", "points", "LIST", "out,drop",
         "where records are taken: in, out, drop, comma-separated (default out,drop)"},
        {"snaplen_bytes", "snaplen", "BYTES", "128",
         "bytes of each frame kept, 16 .. 65535 (default 128)"},
        {"direction", "direction", "DIR", "a_to_b", "only this direction: a_to_b or b_to_a"},
        {"class", "class", "NAME", "voip", "only this traffic class (or default)"},
        {"duration_s", "duration", "DURATION", "10s", "stop after this long"},
        {"packets", "packets", "N", "10000", "stop after this many records"},
        {"max_size_bytes", "max-size", "BYTES", "100MiB",
         "start the next file at this size (at least 64KiB)"},
        {"files", "files", "N", "5", "a ring of this many files, each up to max-size, 1 .. 1000"},
    };
    return kFlags;
}

namespace {

json value_from_text(const CaptureFlag& f, const std::string& flag, const std::string& t) {
    auto not_a = [&](std::string_view form) {
        return FlagError(flag, f.key,
                         "'" + t + "' is not " + std::string(form) + ", e.g. " + f.example);
    };
    if (f.key == "points") {
        json points = json::array();
        std::size_t at = 0;
        for (;;) {
            const std::size_t comma = t.find(',', at);
            points.push_back(t.substr(at, comma == std::string::npos ? comma : comma - at));
            if (comma == std::string::npos) break;
            at = comma + 1;
        }
        return points;
    }
    if (f.key == "direction" || f.key == "class") return t;
    if (f.key == "duration_s") {
        const auto d = parse_duration(t);
        if (!d) throw not_a(kDurationForm);
        return static_cast<double>(*d) / kNsPerSec;
    }
    if (f.key == "snaplen_bytes" || f.key == "max_size_bytes") {
        const auto b = parse_bytes(t);
        if (!b) throw not_a(kBytesForm);
        return *b;
    }
    const auto n = parse_whole(t);
    if (!n) throw not_a(kWholeForm);
    return *n;
}

}  // namespace

json capture_params_from_flags(const std::string& file, const CaptureFlagText& text,
                               std::string_view prefix) {
    const std::vector<CaptureFlag>& flags = capture_flags();
    json params = {{"file", file}};
    for (std::size_t i = 0; i < flags.size() && i < text.size(); ++i)
        if (!text[i].empty())
            params[flags[i].key] =
                value_from_text(flags[i], std::string(prefix) + flags[i].flag, text[i]);
    return params;
}

std::string capture_flag_name(std::string_view key, std::string_view prefix,
                              std::string_view file_flag) {
    if (key == "file") return std::string(file_flag);
    for (const CaptureFlag& f : capture_flags())
        if (f.key == key) return std::string(prefix) + f.flag;
    return std::string(key);
}

}  // namespace linkem
