// A JSON value as one short piece of text, as linkemctl's tables, the GUI's Classes table
// and a class's match text (class_match_text) print it: a string without quotes, a whole
// number written as a float (80000.0) without its fraction, anything else as JSON; bytes that
// are not UTF-8 as U+FFFD instead of dump() throwing.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

namespace linkem {

inline std::string json_value_text(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) {
        const double x = v.get<double>();
        if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15)
            return std::to_string(static_cast<long long>(x));
    }
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace linkem
