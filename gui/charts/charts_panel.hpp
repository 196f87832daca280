// linkem-gui's charts: the delay series, the delay histogram against the configured
// distribution, throughput and drops per second, fed with the `stats` and `delay`
// telemetry bodies of docs/protocol.md (section 4) and the link parameters in force
// (`get_link`). Qt Widgets + Qt Charts only (no networking): the main window hands the
// messages over on the UI thread.
//
// Drawing: at most every ~30 ms, and only when something arrived since the last redraw,
// series get fresh vectors (QXYSeries::replace) decimated to at most two points per
// horizontal pixel (the minimum and the maximum of each pixel column, in time order). The
// time axis moves in steps of whole columns (~1% of the window); each time series is a body
// (the columns before a split) and a head (the newest columns), and between two steps a
// message replaces only the heads, so Qt Charts lays out a few points instead of thousands.
// Animations and OpenGL are off, so the charts render under QT_QPA_PLATFORM=offscreen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <QList>
#include <QPointF>
#include <QString>
#include <QWidget>
#include <nlohmann/json_fwd.hpp>

class QChart;

namespace linkem::gui {

struct Histogram;

struct WindowStats {  // over the visible time window, per direction
    std::uint64_t samples = 0;
    double mean_us = 0, sd_us = 0;  // of the actual delay (actual_ns) of sampled packets
    double target_mean_us = 0, target_jitter_us = 0;
    double mean_dev_pct = 0,
           jitter_dev_pct = 0;  // (actual - target) / target * 100 (0 if target 0)
    double lateness_mean_us = 0, lateness_max_us = 0;
    bool has_measured = false;
    double measured_mean_us = 0, measured_sd_us = 0;  // built-in traffic's own one-way delay
    // From the newest `stats` message of the direction (not windowed):
    double alpha = 0;             // delay correlation weight in use
    double rate_pps = 0;          // the rate estimate R that alpha is computed from
    std::uint64_t in_flight = 0;  // packets held, waiting for their transmission time
    // The built-in traffic's counts since its run began (0 without built-in traffic):
    std::uint64_t measured_lost = 0, measured_out_of_order = 0;
};

/// Thread CPU time the UI thread spent on the charts since construction (or resetCosts):
/// redraw() (series and axes), the chart views' paint events, and taking messages in.
struct ChartsCosts {
    std::uint64_t redraws = 0, paints = 0, ingests = 0;
    double redraw_ms = 0, redraw_max_ms = 0;
    double paint_ms = 0, paint_max_ms = 0;
    double ingest_ms = 0, ingest_max_ms = 0;
    double last_redraw_ms = 0, last_redraw_wall_ms = 0;  // the latest redraw: CPU, wall time
};

/// What a delay in these charts includes (caption, tooltips, CSV header).
QString delayIncludesText();

/// Min/max decimation of a series in increasing x into columns of width column_w starting
/// at x0: per column the point with the smallest y and the one with the largest, in their
/// original order (one point when they coincide).
QList<QPointF> decimateMinMax(const QList<QPointF>& in, double x0, double column_w);

class ChartsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ChartsPanel(QWidget* parent = nullptr);
    ~ChartsPanel() override;
    void addStats(const nlohmann::json& msg);  // a `stats` telemetry body
    void addDelay(const nlohmann::json& msg);  // a `delay` telemetry body
    void setLink(const nlohmann::json& link);  // {"a_to_b":{...},"b_to_a":{...}} in config JSON
    void setWindow(double seconds);            // 5 .. 300; clamped
    double window() const;
    void setPaused(bool paused);  // paused: keep receiving, stop redrawing/scrolling
    bool paused() const;
    void clear();                    // new linkemd instance: forget all data
    void setProjectorMode(bool on);  // large fonts, thick lines
    bool projectorMode() const;
    WindowStats windowStats(int direction) const;               // 0 = a_to_b, 1 = b_to_a
    bool exportCsv(const QString& path, QString* error) const;  // the visible data
    // one PNG per chart: delay.png, histogram.png, throughput.png, drops.png
    bool exportPng(const QString& directory, QString* error) const;
    // for tests: points in the chart's series now ("delay", "histogram", "throughput",
    // "drops"; "delay.samples", "delay.envelope", "delay.target", "delay.measured",
    // "histogram.bars", "histogram.density" for one kind of series); -1 for an unknown name
    int pointsDrawn(const QString& chart) const;

    // Additions beyond the main window's needs (tests, preview).
    /// Which directions are drawn: 0 both, 1 only A->B, 2 only B->A.
    void setDirections(int which);
    /// Throughput in packets/s (true) or bit/s (false, the default).
    void setThroughputInPackets(bool packets);
    /// The histogram of direction d as drawn now (density per microsecond).
    Histogram histogram(int direction) const;
    /// The configured distribution's density (1/us) of direction d at x_us (0 for constant).
    double density(int direction, double x_us) const;
    /// Delay samples held for direction d (up to 5 minutes).
    std::size_t storedSamples(int direction) const;
    /// Bytes the stored delay and measured samples of both directions take.
    std::size_t storedBytes() const;
    /// Columns the delay series is decimated into (the plot area's width in pixels).
    int plotColumns() const;
    /// Redraws now if data arrived since the last redraw and not paused; the timer's slot.
    bool redrawIfDue();
    std::uint64_t redrawCount() const;
    ChartsCosts costs() const;
    void resetCosts();
    QChart* chart(const QString& name) const;  // "delay", "histogram", "throughput", "drops"

  signals:
    void redrawn();
    /// A telemetry message was taken in (addStats: false, addDelay: true; its `t_ns`); its
    /// redraw is due.
    void taken(bool delay, qint64 t_ns);

  private:
    struct Impl;
    void redraw();
    void applyStyle();
    std::unique_ptr<Impl> d_;
};

}  // namespace linkem::gui
