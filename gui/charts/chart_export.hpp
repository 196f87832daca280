// What the charts show, written out: the visible window's data as CSV (four sections:
// samples, intervals, measured samples, rates), and each chart shown as a PNG.
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

#include "chart_store.hpp"

namespace linkem::gui {

class ChartRenderer;

/// What a delay in these charts includes (CSV header, tooltips).
QString delayIncludesText();

/// The data of [lo, hi] (data-plane ns) as CSV; false with *error set when it cannot be
/// written.
bool exportCsv(const ChartStore& store, std::int64_t lo, std::int64_t hi, const QString& path,
               QString* error);

/// Each renderer's chart as DIRECTORY/<name>.png ("delay.png", "histogram.png", ...).
bool exportPng(const std::vector<ChartRenderer*>& charts, const QString& directory, QString* error);

}  // namespace linkem::gui
