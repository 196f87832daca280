#pragma once
// How the GUI names the two directions to a person (docs/glossary.md): the labels of
// linkem::kDirectionKeys, in its order.

namespace linkem::gui {

inline constexpr const char* kDirectionLabels[2] = {"A→B", "B→A"};

}  // namespace linkem::gui
