// The two charts of the `stats` messages' rates: throughput in and out per direction (bit/s
// or packets/s), and drops per second by cause (one line per row of kDropCauses; solid A→B,
// dashed B→A).
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
    bool nonzero_[2][kDropCauseCount] = {};
};

}  // namespace linkem::gui
