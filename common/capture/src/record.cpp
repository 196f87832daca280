#include <charconv>
#include <string>

#include "linkem/capture.hpp"

namespace linkem::capture {

namespace {

void put(std::string& out, std::string_view key, std::int64_t v) {
    out += ' ';
    out += key;
    out += '=';
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

void put(std::string& out, std::string_view key, std::string_view v) {
    out += ' ';
    out += key;
    out += '=';
    out += v;
}

}  // namespace

void append_comment(std::string& out, const RecordHeader& h, std::string_view class_name,
                    TimeNs utc_offset) {
    out += "linkem";
    put(out, "dir", h.direction == 0 ? "a_to_b" : "b_to_a");
    put(out, "class", class_name);
    put(out, "point", point_name(h.point));
    put(out, "worker", h.worker);
    const bool fate = (h.flags & RecordHeader::kHasFate) != 0;
    if (h.flags & RecordHeader::kHasSeq) put(out, "seq", static_cast<std::int64_t>(h.seq));
    if (fate || h.point != Point::out) put(out, "arrived_ns", h.arrived_ns + utc_offset);
    if (fate && h.point != Point::in) {
        put(out, "delay_ns", h.delay_ns);
        put(out, "limiter_wait_ns", h.limiter_wait_ns);
    }
    if (h.point == Point::out && fate) {
        const DurationNs emulated = h.tx_ns - h.arrived_ns;
        put(out, "order_wait_ns", emulated - h.delay_ns - h.limiter_wait_ns);
        put(out, "emulated_ns", emulated);
        put(out, "lateness_ns", h.time_ns - h.tx_ns);
    }
    if (h.point == Point::drop) {
        const std::size_t c = h.cause;
        put(out, "drop", c < kDropCauseCount ? kDropCauses[c].name : "unknown");
    }
}

std::vector<std::pair<std::string, std::string>> parse_comment(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> kv;
    if (text.substr(0, 7) != "linkem ") return kv;
    std::size_t at = 7;
    while (at < text.size()) {
        std::size_t end = text.find(' ', at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view item = text.substr(at, end - at);
        const std::size_t eq = item.find('=');
        if (eq != std::string_view::npos && eq > 0)
            kv.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
        at = end + 1;
    }
    return kv;
}

std::uint32_t interface_of(const RecordHeader& h, unsigned directions) {
    if (h.point == Point::drop) return 2 * directions;
    return h.direction * 2u + (h.point == Point::out ? 1u : 0u);
}

}  // namespace linkem::capture
