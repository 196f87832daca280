// The delay series: each sampled packet's actual delay over its arrival time (the minimum and
// maximum of each pixel column), the min/max of the emulated delay over every packet of each
// interval (shaded), the target mean (dashed) with ± jitter (dotted), and the built-in
// traffic's measured one-way delay (squares). Of both directions, or one (a stage lane).
#pragma once

#include <string>
#include <vector>

#include "chart_renderer.hpp"

class QScatterSeries;

namespace linkem::gui {

class DelayChart : public ChartRenderer {
  public:
    /// lane -1: both directions (named "delay"); 0 or 1: that direction alone ("delay.a_to_b",
    /// "delay.b_to_a").
    explicit DelayChart(int lane = -1);
    int lane() const { return lane_; }
    void applyStyle(const ChartStyle& style) override;
    QList<QXYSeries*> parts(const QString& part) const override;
    /// The columns of the plot (its width in pixels).
    int plotWidth() const;

  protected:
    void draw(const RedrawFrame& f, bool all) override;

  private:
    struct Points {
        QList<QPointF> samples, measured, envUp, envLo;
    };
    bool shown(const RedrawFrame& f, int d) const {
        return f.shown(d) && (lane_ < 0 || lane_ == d);
    }
    Points points(const RedrawFrame& f, int d, std::int64_t a, std::int64_t b) const;
    bool drawHeads(const RedrawFrame& f);
    void drawAll(const RedrawFrame& f);
    void setTitles() override;

    int lane_;
    QValueAxis *x_ = nullptr, *y_ = nullptr;
    QLineSeries* samples_[2][2];
    QXYSeries* measured_[2][2];  // the body a QScatterSeries, the head a QLineSeries
    QLineSeries* target_[2];
    QLineSeries *band_up_[2], *band_lo_[2], *env_up_[2][2], *env_lo_[2][2];
    QAreaSeries* env_[2][2];
    double div_ = 1;  // the axis' unit in µs
    /// With every class shown and the link having classes: each class's samples (min/max per
    /// column) in its colour, per direction (B→A darker), instead of the directions' totals.
    void syncClassLines(const RedrawFrame& f);
    std::vector<QLineSeries*> class_lines_[2];  // [d][class id]
    std::vector<std::string> class_names_;
};

}  // namespace linkem::gui
