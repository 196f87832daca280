#include <cstdio>
#include <string>

#include "linkem/capture.hpp"
#include "linkem/link_params.hpp"

namespace linkem::capture {

namespace {
constexpr Point kPoints[] = {Point::in, Point::out, Point::drop};
}

const char* point_name(Point p) {
    switch (p) {
        case Point::in:
            return "in";
        case Point::out:
            return "out";
        case Point::drop:
            return "drop";
    }
    return "?";
}

std::string points_text(unsigned points) {
    std::string s;
    for (Point p : kPoints) {
        if (!(points & static_cast<unsigned>(p))) continue;
        if (!s.empty()) s += ',';
        s += point_name(p);
    }
    return s;
}

unsigned parse_points(std::string_view text) {
    unsigned points = 0;
    std::size_t at = 0;
    if (text.empty())
        throw ParamError("points", "no point given; allowed: in, out, drop (comma-separated)");
    for (;;) {
        const std::size_t comma = text.find(',', at);
        const std::string_view name =
            text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
        unsigned bit = 0;
        for (Point p : kPoints)
            if (name == point_name(p)) bit = static_cast<unsigned>(p);
        if (bit == 0)
            throw ParamError("points", "'" + std::string(name) +
                                           "' is not a capture point; allowed: in, out, drop "
                                           "(comma-separated)");
        if (points & bit) throw ParamError("points", "'" + std::string(name) + "' is given twice");
        points |= bit;
        if (comma == std::string_view::npos) break;
        at = comma + 1;
    }
    return points;
}

void validate(const Settings& s) {
    if (s.file.empty()) throw ParamError("file", "no file given; give the path to write");
    if (s.points == 0 || (s.points & ~kAllPoints) != 0)
        throw ParamError("points", "no point given; allowed: in, out, drop");
    if (s.snaplen < kMinSnaplen || s.snaplen > kMaxSnaplen)
        throw ParamError("snaplen_bytes", std::to_string(s.snaplen) + " is out of range; allowed " +
                                              std::to_string(kMinSnaplen) + " .. " +
                                              std::to_string(kMaxSnaplen) + " bytes");
    if (s.direction && *s.direction > 1) throw ParamError("direction", "allowed: a_to_b, b_to_a");
    if (s.class_name && s.class_name->empty())
        throw ParamError("class", "an empty class name; give a class of the link or default");
    if (s.duration < 0)
        throw ParamError("duration_s", "a negative duration; allowed: > 0 (or none)");
    if (s.max_size != 0 && s.max_size < kMinMaxSize)
        throw ParamError("max_size_bytes", std::to_string(s.max_size) +
                                               " is too small; allowed: at least " +
                                               std::to_string(kMinMaxSize) + " bytes (64 KiB)");
    if (s.files < 1 || s.files > kMaxFiles)
        throw ParamError("files", std::to_string(s.files) + " is out of range; allowed 1 .. " +
                                      std::to_string(kMaxFiles));
    if (s.files > 1 && s.max_size == 0)
        throw ParamError("files", "a ring of files needs a file size: give max_size_bytes as well");
}

std::string ring_file_name(const std::string& file, std::uint64_t i, bool ring) {
    if (!ring) return file;
    const std::size_t slash = file.rfind('/');
    std::size_t dot = file.rfind('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
        dot == (slash == std::string::npos ? 0 : slash + 1))
        dot = file.size();
    char num[32];
    std::snprintf(num, sizeof num, "_%05llu", static_cast<unsigned long long>(i + 1));
    return file.substr(0, dot) + num + file.substr(dot);
}

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::none:
            return "";
        case StopReason::stopped:
            return "stopped";
        case StopReason::duration:
            return "duration";
        case StopReason::packets:
            return "packets";
        case StopReason::write_error:
            return "write_error";
        case StopReason::shutdown:
            return "shutdown";
    }
    return "";
}

const char* event_kind_name(Event::Kind k) {
    switch (k) {
        case Event::Kind::started:
            return "started";
        case Event::Kind::rotated:
            return "rotated";
        case Event::Kind::stopped:
            return "stopped";
        case Event::Kind::missed:
            return "missed";
    }
    return "";
}

}  // namespace linkem::capture
