// The charts of the link's rates and its queue: throughput in and out per direction (bit/s
// or packets/s) and drops per second by cause (one line per row of kDropCauses, and the ECN
// marks; solid A→B, dashed B→A) from the `stats` messages; the limiter's queue (sojourn time
// and backlog per direction) from the `delay` messages' queue object.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "chart_renderer.hpp"

namespace linkem::gui {

/// The rates of direction d's stats messages with a <= t <= b, min/max per pixel column.
QList<QPointF> ratePoints(const RedrawFrame& f, int d, std::int64_t a, std::int64_t b,
                          const std::function<double(const RatePoint&)>& value);

class ThroughputChart : public ChartRenderer {
  public:
    ThroughputChart();
    void applyStyle(const ChartStyle& style) override;
    QList<QXYSeries*> parts(const QString& part) const override;

  protected:
    void draw(const RedrawFrame& f, bool all) override;

  private:
    bool drawHeads(const RedrawFrame& f);
    void drawAll(const RedrawFrame& f);
    void setTitles() override;
    QValueAxis *x_ = nullptr, *y_ = nullptr;
    /// With every class shown, each class's rate out (the directions shown together) in its
    /// colour; none with one class shown or without classes.
    void classLines(const RedrawFrame& f, std::vector<QList<QPointF>>& out, double& tmax);
    QLineSeries *in_[2][2], *out_[2][2];
    std::vector<QLineSeries*> class_out_;  // by class id
    std::vector<std::string> class_names_;
    double div_ = 1;
};

class DropsChart : public ChartRenderer {
  public:
    DropsChart();
    void applyStyle(const ChartStyle& style) override;
    QList<QXYSeries*> parts(const QString& part) const override;

  protected:
    void draw(const RedrawFrame& f, bool all) override;

  private:
    bool drawHeads(const RedrawFrame& f);
    void drawAll(const RedrawFrame& f);
    void setTitles() override;
    QValueAxis *x_ = nullptr, *y_ = nullptr;
    QLineSeries* drop_[2][kDropCauseCount][2];
    QLineSeries* ecn_[2][2];  // ECN marks per second (not drops: the packet went on, CE)
    bool nonzero_[2][kDropCauseCount] = {};
    bool ecn_nonzero_[2] = {};
};

/// The limiter's queue per direction, one point per `delay` interval: the sojourn time of
/// the packets that left it (mean solid, max dotted; left axis) and the backlog at the
/// interval's end (dashed; right axis, bytes, or packets with the throughput in packets/s).
class QueueChart : public ChartRenderer {
  public:
    QueueChart();
    void applyStyle(const ChartStyle& style) override;
    /// "sojourn_mean", "sojourn_max", "backlog" or "all".
    QList<QXYSeries*> parts(const QString& part) const override;

  protected:
    void draw(const RedrawFrame& f, bool all) override;

  private:
    void setTitles() override;
    QValueAxis *x_ = nullptr, *y_ = nullptr, *y2_ = nullptr;
    QLineSeries *mean_[2], *max_[2], *backlog_[2];
    bool packets_ = false;
};

/// The queue chart's points of direction d with lo <= end <= hi: sojourn mean and max (ms;
/// intervals where packets left the queue) and backlog (bytes, or packets).
struct QueuePoints {
    QList<QPointF> mean_ms, max_ms, backlog;
};
QueuePoints queuePoints(const ChartStore& store, int d, std::int64_t lo, std::int64_t hi,
                        bool packets);

}  // namespace linkem::gui
