#include "link_history.hpp"

namespace linkem::gui {

void LinkHistory::beforeEdit(const LinkConfig& in_force, const std::string& what,
                             std::int64_t now_ms) {
    const bool join =
        !steps_.empty() && what == last_what_ && now_ms - last_ms_ < kJoinMs && now_ms >= last_ms_;
    last_what_ = what;
    last_ms_ = now_ms;
    if (join) return;
    if (!steps_.empty() && steps_.back() == in_force) return;  // nothing changed since
    steps_.push_back(in_force);
    if (steps_.size() > kMaxSteps) steps_.pop_front();
}

std::optional<LinkConfig> LinkHistory::undo() {
    if (steps_.empty()) return std::nullopt;
    LinkConfig l = steps_.back();
    steps_.pop_back();
    last_what_.clear();
    return l;
}

void LinkHistory::clear() {
    steps_.clear();
    last_what_.clear();
}

}  // namespace linkem::gui
