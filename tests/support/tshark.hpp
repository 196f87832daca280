// tshark, the independent reader of linkem's pcapng captures in the tests: the fields of each
// packet, as `tshark -r FILE -T fields` prints them, and a capture comment's keys (split here,
// not by linkem's own parser).
#pragma once

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace linkem::test {

inline bool have_tshark() {
    return std::system("tshark --version >/dev/null 2>&1") == 0;
}

struct TsharkRows {
    std::vector<std::vector<std::string>> rows;  // per packet, one column per field
    int rc = -1;                                 // tshark's exit code
};

/// `tshark -r FILE EXTRA -T fields -e F ...`: each packet's fields, in the order given.
inline TsharkRows tshark_fields(const std::string& file, const std::vector<std::string>& fields,
                                const std::string& extra = "") {
    std::string cmd = "tshark -r '" + file + "' " + extra + " -T fields -E separator=/t";
    for (const std::string& f : fields)
        cmd += " -e " + f;
    cmd += " 2>/dev/null";
    TsharkRows out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return out;
    std::string line;
    char buf[8192];
    while (std::fgets(buf, sizeof buf, p)) {
        line += buf;
        if (line.back() != '\n') continue;
        line.pop_back();
        std::vector<std::string> cols;
        for (std::size_t at = 0;;) {
            const std::size_t tab = line.find('\t', at);
            cols.push_back(line.substr(at, tab == std::string::npos ? tab : tab - at));
            if (tab == std::string::npos) break;
            at = tab + 1;
        }
        cols.resize(fields.size());
        out.rows.push_back(std::move(cols));
        line.clear();
    }
    out.rc = WEXITSTATUS(::pclose(p));
    return out;
}

/// frame.time_epoch as tshark prints it ("1767225600.017448766") in ns.
inline std::int64_t epoch_ns(const std::string& s) {
    const auto dot = s.find('.');
    std::string frac = dot == std::string::npos ? "" : s.substr(dot + 1);
    frac.resize(9, '0');
    return std::stoll(s.substr(0, dot)) * 1'000'000'000 + std::stoll(frac);
}

/// A capture comment "linkem k=v k=v ...": its keys (empty when it is not one).
inline std::map<std::string, std::string> comment_fields(const std::string& comment) {
    std::map<std::string, std::string> f;
    std::istringstream words(comment);
    std::string w;
    if (!(words >> w) || w != "linkem") return f;
    while (words >> w)
        if (const auto eq = w.find('='); eq != std::string::npos && eq > 0)
            f[w.substr(0, eq)] = w.substr(eq + 1);
    return f;
}

}  // namespace linkem::test
