// What drawing the charts costs the UI thread (for linkem-gui-bench and
// LINKEM_CHARTS_PROFILE=1): the thread CPU time of redraws, of the chart views' paint events
// and of taking telemetry in. The product classes only call account() through a pointer that
// is null unless someone measures.
#pragma once

#include <cstdint>

#include <QChartView>

namespace linkem::gui {

struct ChartsCosts {
    std::uint64_t redraws = 0, paints = 0, ingests = 0;
    double redraw_ms = 0, redraw_max_ms = 0;
    double paint_ms = 0, paint_max_ms = 0;
    double ingest_ms = 0, ingest_max_ms = 0;
    double last_redraw_ms = 0, last_redraw_wall_ms = 0;  // the latest redraw: CPU, wall time
};

/// The calling thread's CPU time, ns.
std::int64_t threadCpuNs();
/// LINKEM_CHARTS_PROFILE is set: each commit of new points prints what it cost.
bool profilingPrints();

enum class Cost { redraw, paint, ingest };
/// Adds the CPU time since `since_ns` (threadCpuNs) to one kind of cost.
void account(ChartsCosts& costs, Cost kind, std::int64_t since_ns);

/// A chart view that adds the CPU time of its paint events to `*costs` when costs is set.
class TimedChartView : public QChartView {
  public:
    explicit TimedChartView(QChart* chart) : QChartView(chart) {}
    void setCosts(ChartsCosts* costs) { costs_ = costs; }

  protected:
    void paintEvent(QPaintEvent* e) override;

  private:
    ChartsCosts* costs_ = nullptr;
};

}  // namespace linkem::gui
