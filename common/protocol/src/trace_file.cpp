#include "linkem/trace_file.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

#include "blanks.hpp"

namespace linkem {

namespace {

constexpr const char* kForm =
    "a mahimahi trace has one delivery opportunity per line, a whole number of milliseconds "
    "since the trace's start";

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
    throw ParamError("trace_file", where + ": " + what);
}

}  // namespace

DeliveryTrace parse_delivery_trace(std::istream& in, const std::string& name) {
    DeliveryTrace t;
    t.path = name;
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        const std::string at = name + ":" + std::to_string(n);
        const std::string_view s = detail::trim_blanks(line);
        if (s.empty()) refuse(at, "empty line; " + std::string(kForm));
        std::uint32_t ms = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
        // The line itself is not repeated: linkemd reads trace files named by its clients,
        // and an error must not show what a file that is no trace holds.
        if (ec == std::errc::result_out_of_range)
            refuse(at, "the timestamp is too large; allowed up to 4294967295 ms");
        if (ec != std::errc() || end != s.data() + s.size())
            refuse(at, "not a whole number of milliseconds; " + std::string(kForm));
        if (!t.ms.empty() && ms < t.ms.back())
            refuse(at, std::to_string(ms) + " goes back (line " + std::to_string(n - 1) + " says " +
                           std::to_string(t.ms.back()) + "); the timestamps must not decrease");
        if (t.ms.size() == kMaxTraceLines)
            refuse(at, "more than " + std::to_string(kMaxTraceLines) + " lines");
        t.ms.push_back(ms);
    }
    if (in.bad()) refuse(name, "read error");
    if (t.ms.empty()) refuse(name, "empty: no timestamps; " + std::string(kForm));
    if (t.ms.back() == 0)
        refuse(name + ":" + std::to_string(n),
               "the trace lasts 0 ms (its last timestamp is 0); it must last longer, as the "
               "last timestamp is the period after which it repeats");
    return t;
}

std::shared_ptr<const DeliveryTrace> read_delivery_trace(const std::string& path) {
    std::ifstream in(path);
    if (!in) refuse(path, std::string("cannot open: ") + std::strerror(errno));
    return std::make_shared<const DeliveryTrace>(parse_delivery_trace(in, path));
}

void resolve_trace_files(nlohmann::json& link, const std::string& dir) {
    auto resolve = [&dir](nlohmann::json& obj) {
        if (!obj.is_object() || !obj.contains("trace_file") || !obj["trace_file"].is_string())
            return;
        const std::string name = obj["trace_file"].get<std::string>();
        if (name.empty() || std::filesystem::path(name).is_absolute()) return;
        obj["trace_file"] = (std::filesystem::path(dir) / name).lexically_normal().string();
    };
    auto resolve_link = [&resolve](nlohmann::json& obj) {
        resolve(obj);
        for (const char* d : kDirectionKeys)
            if (obj.is_object() && obj.contains(d)) resolve(obj[d]);
    };
    resolve_link(link);
    // The traffic classes' own parameters, as the link's.
    if (link.is_object() && link.contains("classes") && link["classes"].is_array())
        for (nlohmann::json& c : link["classes"])
            resolve_link(c);
}

}  // namespace linkem
