#include "event_log.hpp"

#include <algorithm>
#include <cstdio>
#include "direction_label.hpp"
#include "linkem/link_params.hpp"

namespace linkem::gui {

namespace {

std::string place(const proto::Event& e) {
    if (e.direction) {
        const int k = direction_of_key(*e.direction);
        return k >= 0 ? kDirectionLabels[k] : *e.direction;
    }
    if (e.port) return "port " + *e.port;
    // A client that did not say its name (`hello`) is named by its connection
    // (proto::kUnnamedSourcePrefix), new on every connection: one row per kind for all of
    // them (the message names the last), not a row per connection (a script's bad request in
    // a loop would fill the table).
    if (e.source)
        return e.source->rfind(proto::kUnnamedSourcePrefix, 0) == 0 ? std::string(kUnnamedClients)
                                                                    : *e.source;
    return {};
}

std::string ms(double ns) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f ms", ns / 1e6);
    return b;
}

}  // namespace

EventRow& EventLog::upsert(const std::string& kind, const std::string& where,
                           std::int64_t wall_ms) {
    for (EventRow& r : rows_)
        if (r.kind == kind && r.where == where) {
            ++r.count;
            r.last_ms = wall_ms;
            return r;
        }
    if (rows_.size() >= kMaxRows) rows_.pop_front();
    EventRow r;
    r.id = next_id_++;
    r.kind = kind;
    r.where = where;
    r.count = 1;
    r.first_ms = r.last_ms = wall_ms;
    rows_.push_back(std::move(r));
    return rows_.back();
}

std::uint64_t EventLog::add(const proto::Event& e, std::int64_t wall_ms) {
    EventRow& r = upsert(e.kind, place(e), wall_ms);
    r.severity = e.severity;
    r.message = e.message;
    if (e.kind == "stall") {
        // stall_ns: the time the data plane did not run since linkemd's previous check (~1 s)
        const double stalled = static_cast<double>(e.stall_ns.value_or(0));
        const double longest = static_cast<double>(e.longest_stall_ns.value_or(0));
        if (stalled > r.worst || r.worst_text.empty()) {
            r.worst = std::max(r.worst, stalled);
            r.worst_text =
                "up to " + ms(r.worst) + " stopped in a second; longest stall " + ms(longest);
        }
        r.needs_action = false;  // explained once; nothing to do during a lecture
    } else if (e.kind == "link") {
        r.needs_action = e.severity == "warning";  // down
    } else if (e.kind == "pool" || e.kind == "buffer_full") {
        r.needs_action = true;
    } else if (e.kind == "params_applied") {
        const double g = static_cast<double>(e.params_generation.value_or(0));
        r.worst = std::max(r.worst, g);
        r.worst_text = "generation " + std::to_string(static_cast<std::uint64_t>(r.worst));
        r.needs_action = false;
    } else {
        r.needs_action = false;
    }
    return r.id;
}

std::uint64_t EventLog::note(const std::string& severity, const std::string& text,
                             std::int64_t wall_ms, bool needs_action) {
    EventRow& r = upsert("gui", text, wall_ms);
    r.severity = severity;
    r.message = text;
    r.needs_action = needs_action;
    return r.id;
}

const EventRow* EventLog::row(std::uint64_t id) const {
    for (const EventRow& r : rows_)
        if (r.id == id) return &r;
    return nullptr;
}

const EventRow* EventLog::find(const std::string& kind, const std::string& where) const {
    for (const EventRow& r : rows_)
        if (r.kind == kind && r.where == where) return &r;
    return nullptr;
}

std::string EventLog::explanation(const std::string& kind) {
    if (kind == "stall")
        return "A stall: linkemd's data plane did not run for a moment because another "
               "program (this GUI, a build, the desktop) had its CPU. Packets due then left "
               "that much late (\"lateness\"); the delays drawn are unchanged.";
    return {};
}

std::string EventLog::text() const {
    std::string out;
    for (const EventRow& r : rows_) {
        out += r.kind;
        if (!r.where.empty() && r.kind != "gui") out += " " + r.where;
        out += " ×" + std::to_string(r.count) + ": " + r.message;
        if (!r.worst_text.empty()) out += " [" + r.worst_text + "]";
        out += "\n";
    }
    return out;
}

}  // namespace linkem::gui
