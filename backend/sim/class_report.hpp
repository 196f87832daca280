// linkem-sim --classes: the report of a run, as a table and as JSON (docs/simulation.md,
// "Traffic classes").
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "class_sim.hpp"

namespace linkem::sim {

/// {"config": {"link", "classes", "flows", "duration_us"}, "duration_s", "classes": [one per
///  class and direction], "flows": [one per flow and direction], "directions": {...}}
nlohmann::json class_report_json(const ClassSimConfig& cfg, const ClassRunResult& r);
void print_class_table(std::ostream& os, const ClassSimConfig& cfg, const ClassRunResult& r,
                       const std::string& path);

}  // namespace linkem::sim
