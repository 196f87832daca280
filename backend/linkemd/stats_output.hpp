// Periodic and final counters: one JSON object per line (--stats-json) or a table.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "linkem/dataplane/dataplane.hpp"

namespace linkem::linkemd {

class StatsPrinter {
  public:
    explicit StatsPrinter(bool json, std::FILE* out = stdout) : json_(json), out_(out) {}
    /// Prints the counters: a JSON line (linkem/stats.hpp's to_json, with the `capture` block
    /// as the stats topic has it when a capture ran) or a table.
    void print(const dp::DataplaneStats& s, bool final, const capture::Status* capture = nullptr);

  private:
    void table(const dp::DataplaneStats& s, bool final);
    bool json_;
    std::FILE* out_;
    std::optional<dp::DataplaneStats> last_;
};

}  // namespace linkem::linkemd
