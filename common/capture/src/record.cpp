#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include "linkem/capture.hpp"
#include "linkem/link_params.hpp"

namespace linkem::capture {

namespace {

// The comment is built in a buffer on the stack (a record's comment is ~200 characters), then
// appended once: the writer formats one per record.
struct Line {
    char buf[512];
    char* at = buf;
    void text(std::string_view s) {
        const std::size_t n = std::min<std::size_t>(s.size(), buf + sizeof buf - 32 - at);
        std::memcpy(at, s.data(), n);
        at += n;
    }
    void put(std::string_view key, std::int64_t v) {
        *at++ = ' ';
        text(key);
        *at++ = '=';
        at = std::to_chars(at, buf + sizeof buf, v).ptr;
    }
    void put(std::string_view key, std::string_view v) {
        *at++ = ' ';
        text(key);
        *at++ = '=';
        text(v);
    }
};

}  // namespace

void append_comment(std::string& out, const RecordHeader& h, std::string_view class_name,
                    TimeNs utc_offset) {
    Line l;
    l.text("linkem");
    l.put("dir", kDirectionKeys[h.direction & 1]);
    l.put("class", class_name.substr(0, 64));
    l.put("point", point_name(h.point));
    l.put("worker", h.worker);
    const bool fate = (h.flags & RecordHeader::kHasFate) != 0;
    if (h.flags & RecordHeader::kHasSeq) l.put("seq", static_cast<std::int64_t>(h.seq));
    if (fate || h.point != Point::out) l.put("arrived_ns", h.arrived_ns + utc_offset);
    if (fate && h.point != Point::in) {
        l.put("delay_ns", h.delay_ns);
        l.put("limiter_wait_ns", h.limiter_wait_ns);
    }
    if (h.point == Point::out && fate) {
        const DurationNs scheduled = h.tx_ns - h.arrived_ns;
        l.put("order_wait_ns", scheduled - h.delay_ns - h.limiter_wait_ns);
        l.put("scheduled_ns", scheduled);
        l.put("lateness_ns", h.time_ns - h.tx_ns);
    }
    if (h.point == Point::out && (h.flags & RecordHeader::kEcnCe)) l.put("ecn", "ce");
    if (h.point == Point::drop) {
        const std::size_t c = h.cause;
        l.put("drop", c < kDropCauseCount ? kDropCauses[c].name : "unknown");
    }
    out.append(l.buf, l.at);
}

std::uint32_t interface_of(const RecordHeader& h, unsigned directions) {
    if (h.point == Point::drop) return 2 * directions;
    return h.direction * 2u + (h.point == Point::out ? 1u : 0u);
}

}  // namespace linkem::capture
