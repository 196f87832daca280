// The delay histogram over the time window against the configured distribution's density.
// Counting the window's samples is the one step that grows with the window (up to 6 million
// samples a direction): done at most every kRecountMs, and at once when the window, the
// directions or the data (clear) change; from up to kMaxBinned samples of the window in runs
// of 64 consecutive ones.
#pragma once

#include <QElapsedTimer>

#include "chart_renderer.hpp"

namespace linkem::gui {

class HistogramChart : public ChartRenderer {
  public:
    static constexpr qint64 kRecountMs = 500;
    static constexpr std::size_t kMaxBinned = 200'000;

    HistogramChart();
    /// Delay samples arrived: a recount is due within kRecountMs.
    void samplesArrived() { samples_new_ = true; }
    /// Forget the counts (a new linkemd instance).
    void reset();
    bool due() const override;
    void applyStyle(const ChartStyle& style) override;
    QList<QXYSeries*> parts(const QString& part) const override;
    /// The histogram of direction d as drawn now (density per microsecond).
    const Histogram& drawn(int d) const { return drawn_[d]; }

  protected:
    void draw(const RedrawFrame& f, bool all) override;

  private:
    void setTitles() override;
    QValueAxis *x_ = nullptr, *y_ = nullptr;
    QLineSeries* bars_[2];
    QAreaSeries* area_[2];
    QLineSeries* density_[2];
    Histogram drawn_[2];
    bool valid_ = false, samples_new_ = false;
    QElapsedTimer clock_;
    std::int64_t span_ = 0;
    int show_ = -1;
};

}  // namespace linkem::gui
