#include "linkem/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace linkem {
namespace {

// Splits "12.5ms" into 12.5 and "ms". Accepts a leading '+', decimal point and exponent.
bool split_number(std::string_view text, double& value, std::string_view& unit) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    if (text.empty()) return false;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || !std::isfinite(value)) return false;
    unit = std::string_view(ptr, static_cast<std::size_t>(last - ptr));
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
        unit.remove_prefix(1);
    return true;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::string trim_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

std::optional<DurationNs> parse_duration(std::string_view text) {
    double v = 0;
    std::string_view unit;
    if (!split_number(text, v, unit) || v < 0) return std::nullopt;
    static constexpr std::pair<std::string_view, double> kUnits[] = {
        {"ns", 1.0}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}};
    for (const auto& [name, factor] : kUnits) {
        if (unit == name) {
            const double ns = v * factor;
            if (ns > 9.2e18) return std::nullopt;
            return static_cast<DurationNs>(std::llround(ns));
        }
    }
    return std::nullopt;
}

std::optional<double> parse_rate(std::string_view text) {
    double v = 0;
    std::string_view unit;
    if (!split_number(text, v, unit) || v < 0) return std::nullopt;
    // Accept "/s" and "ps" suffixes: "Gbit/s", "Gbps", "Gbit", "G".
    for (std::string_view suffix : {"/s", "ps"}) {
        if (unit.size() >= suffix.size() && unit.substr(unit.size() - suffix.size()) == suffix) {
            unit.remove_suffix(suffix.size());
            break;
        }
    }
    if (iequals(unit.substr(unit.size() >= 3 ? unit.size() - 3 : unit.size()), "bit"))
        unit.remove_suffix(3);
    else if (!unit.empty() && (unit.back() == 'b'))
        unit.remove_suffix(1);
    double factor = 0;
    if (unit.empty())
        factor = 1;
    else if (unit == "k" || unit == "K")
        factor = 1e3;
    else if (unit == "M")
        factor = 1e6;
    else if (unit == "G")
        factor = 1e9;
    else if (unit == "T")
        factor = 1e12;
    else
        return std::nullopt;
    // A bare number is accepted only when it said "bps" or "bit": "100" alone is ambiguous.
    if (unit.empty() && text.find_first_of("bB") == std::string_view::npos) return std::nullopt;
    return v * factor;
}

std::optional<double> parse_number(std::string_view text) {
    double x = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, x);
    if (text.empty() || ec != std::errc() || p != end || !std::isfinite(x)) return std::nullopt;
    return x;
}

std::optional<std::uint64_t> parse_whole(std::string_view text) {
    std::uint64_t x = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, x);
    if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
    return x;
}

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
    double v = 0;
    std::string_view unit;
    if (!split_number(text, v, unit) || v < 0) return std::nullopt;
    static constexpr std::pair<std::string_view, double> kUnits[] = {
        {"", 1.0},   {"B", 1.0},         {"kB", 1e3}, {"KB", 1e3},          {"KiB", 1024.0},
        {"MB", 1e6}, {"MiB", 1048576.0}, {"GB", 1e9}, {"GiB", 1073741824.0}};
    for (const auto& [name, factor] : kUnits) {
        if (unit == name) {
            const double b = v * factor;
            if (b > 1.8e19 || b != std::floor(b)) return std::nullopt;
            return static_cast<std::uint64_t>(b);
        }
    }
    return std::nullopt;
}

std::string format_duration(DurationNs ns) {
    const double a = std::fabs(static_cast<double>(ns));
    if (ns == 0) return "0ns";
    if (a >= 1e9) return trim_number(ns / 1e9) + "s";
    if (a >= 1e6) return trim_number(ns / 1e6) + "ms";
    if (a >= 1e3) return trim_number(ns / 1e3) + "us";
    return std::to_string(ns) + "ns";
}

std::string format_rate(double bps) {
    if (bps >= 1e12) return trim_number(bps / 1e12) + "Tbit/s";
    if (bps >= 1e9) return trim_number(bps / 1e9) + "Gbit/s";
    if (bps >= 1e6) return trim_number(bps / 1e6) + "Mbit/s";
    if (bps >= 1e3) return trim_number(bps / 1e3) + "kbit/s";
    return trim_number(bps) + "bit/s";
}

}  // namespace linkem
