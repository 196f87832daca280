#pragma once
// Shared by the protocol library's text-file readers (scenario CSV, mahimahi traces).

#include <string_view>

namespace linkem::detail {

/// `s` without the blanks (spaces, tabs) around it, nor a line's trailing '\r'.
inline std::string_view trim_blanks(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

}  // namespace linkem::detail
