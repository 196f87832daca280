// The counters of a running link as a text table, with rates from the difference of two
// snapshots: linkemd's periodic stats on stdout and `linkemctl watch` print the same table.
#pragma once

#include <cstdio>

#include "linkem/stats.hpp"

namespace linkem {

/// Prints `s` as a table ("stats t=12.000s" or "final t=..." and one row per direction and
/// port). The rx/tx pps columns are rates since `last` (the snapshot before, of the same
/// linkemd); without one they show "-".
void print_stats_table(std::FILE* out, const LinkStats& s, const LinkStats* last, bool final);

}  // namespace linkem
