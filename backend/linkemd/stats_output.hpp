// Periodic and final counters: one JSON object per line (--stats-json) or a table.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "linkem/dataplane/dataplane.hpp"

namespace linkem::linkemd {

nlohmann::json stats_to_json(const dp::DataplaneStats& s, bool final);

class StatsPrinter {
  public:
    explicit StatsPrinter(bool json, std::FILE* out = stdout, std::FILE* err = stderr)
        : json_(json), out_(out), err_(err) {}
    /// Prints the counters; also warns on err when a direction stalled since the last print.
    void print(const dp::DataplaneStats& s, bool final);

  private:
    void table(const dp::DataplaneStats& s, bool final);
    void warn_stalls(const dp::DataplaneStats& s);
    bool json_;
    std::FILE* out_;
    std::FILE* err_;
    std::uint64_t warned_longest_[2] = {0, 0};  // longest stall warned of, per direction
    std::optional<dp::DataplaneStats> last_;
};

}  // namespace linkem::linkemd
