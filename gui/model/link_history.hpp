// The links before the user's changes, for Ctrl+Z: each change (a drag of one slider, a typed
// value, a preset, a link file, compare strategies) keeps the link in force before it; undo
// gives back the newest. Edits of one field less than kJoinMs apart are one change (a drag
// sends ~20 set_link a second).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "linkem/link_params.hpp"

namespace linkem::gui {

class LinkHistory {
  public:
    static constexpr std::int64_t kJoinMs = 1500;
    static constexpr std::size_t kMaxSteps = 100;

    /// Before an edit of `what` (a field name, "preset", ...) at now_ms, with `in_force` the
    /// link in force: a new step unless the previous edit was of the same field shortly before.
    void beforeEdit(const LinkConfig& in_force, const std::string& what, std::int64_t now_ms);
    bool canUndo() const { return !steps_.empty(); }
    /// The link before the newest change (removed from the history).
    std::optional<LinkConfig> undo();
    void clear();
    std::size_t size() const { return steps_.size(); }

  private:
    std::deque<LinkConfig> steps_;
    std::string last_what_;
    std::int64_t last_ms_ = 0;
};

}  // namespace linkem::gui
