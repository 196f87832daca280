// The Events panel's rows, independent of Qt: linkemd's `event` topic and the GUI's own
// lines, coalesced so that a repeated warning is one row per kind and place (direction or
// port) with a count, its worst figure and the time of the last, updated in place. Only what
// needs someone to act (a link down, an empty mbuf pool, a full buffer, a lost connection) is
// marked for colour; a stall is explained once, in plain words.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "linkem/messages.hpp"

namespace linkem::gui {

/// Where the events of every client without a `hello` name (linkemd's source "peer-<hex>")
/// go: one row per kind.
inline constexpr const char* kUnnamedClients = "unnamed clients";

struct EventRow {
    std::uint64_t id = 0;  // stays with the row while it is updated
    std::string kind;      // linkemd's kind ("stall", "link", ...); "gui" for the GUI's lines
    std::string where;     // "A→B", "B→A", "port a", a source (kUnnamedClients), or empty
    std::string severity;  // "info" or "warning" (the newest)
    bool needs_action = false;
    std::uint64_t count = 0;
    std::int64_t first_ms = 0, last_ms = 0;  // wall clock, ms since the epoch
    std::string message;                     // the newest
    double worst = 0;                        // the kind's figure, the largest seen
    std::string worst_text;                  // it in words ("" when the kind has none)
};

class EventLog {
  public:
    static constexpr std::size_t kMaxRows = 1000;

    /// A linkemd event at wall time `wall_ms`; returns the id of the row it went to.
    std::uint64_t add(const proto::Event& e, std::int64_t wall_ms);
    /// A line of the GUI's own; the same text again goes to the same row.
    std::uint64_t note(const std::string& severity, const std::string& text, std::int64_t wall_ms,
                       bool needs_action = false);
    const std::deque<EventRow>& rows() const { return rows_; }
    const EventRow* row(std::uint64_t id) const;
    /// The row of a kind and place, or null.
    const EventRow* find(const std::string& kind, const std::string& where) const;
    void clear() { rows_.clear(); }
    /// The plain words for a kind worth explaining once (the stall); empty for the others.
    static std::string explanation(const std::string& kind);
    /// The text of every row, one a line (for copying and tests).
    std::string text() const;

  private:
    EventRow& upsert(const std::string& kind, const std::string& where, std::int64_t wall_ms);
    std::deque<EventRow> rows_;
    std::uint64_t next_id_ = 1;
};

}  // namespace linkem::gui
