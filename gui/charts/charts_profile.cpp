#include "charts_profile.hpp"

#include <time.h>
#include <algorithm>

namespace linkem::gui {

std::int64_t threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool profilingPrints() {
    static const bool on = qEnvironmentVariableIsSet("LINKEM_CHARTS_PROFILE");
    return on;
}

void account(ChartsCosts& c, Cost kind, std::int64_t since) {
    const double ms = static_cast<double>(threadCpuNs() - since) / 1e6;
    std::uint64_t* n = kind == Cost::redraw  ? &c.redraws
                       : kind == Cost::paint ? &c.paints
                                             : &c.ingests;
    double* sum = kind == Cost::redraw  ? &c.redraw_ms
                  : kind == Cost::paint ? &c.paint_ms
                                        : &c.ingest_ms;
    double* max = kind == Cost::redraw  ? &c.redraw_max_ms
                  : kind == Cost::paint ? &c.paint_max_ms
                                        : &c.ingest_max_ms;
    ++*n;
    *sum += ms;
    *max = std::max(*max, ms);
}

void TimedChartView::paintEvent(QPaintEvent* e) {
    if (!costs_) return QChartView::paintEvent(e);
    const std::int64_t t0 = threadCpuNs();
    QChartView::paintEvent(e);
    account(*costs_, Cost::paint, t0);
}

}  // namespace linkem::gui
