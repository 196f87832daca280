// One chart of linkem-gui: its QChart, its view and its own redraw from the ChartStore. The
// ChartsPanel decides when to redraw (RedrawScheduler) and what the frame is (the time axis,
// the pixel columns, the split between the series' bodies and heads); each renderer draws
// what changed for it in that frame.
#pragma once

#include <cstdint>

#include <QList>
#include <QString>

#include "chart_store.hpp"
#include "chart_style.hpp"
#include "charts_profile.hpp"
#include "split_series.hpp"

class QAbstractSeries;
class QAreaSeries;
class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;
class QXYSeries;

namespace linkem::gui {

/// What one redraw draws: the same for every chart.
struct RedrawFrame {
    const ChartStore* store = nullptr;
    std::int64_t lo = 0, hi = 0;  // the time axis, ns (hi a multiple of the axis step)
    std::int64_t column_ns = 1;   // one pixel column of the delay chart
    std::int64_t split = 0;       // the bodies hold [lo, split), the heads [split, hi]
    bool moved = false;           // everything again: the view moved, the columns changed, or
                                  // data landed before the split
    bool delay_new = false, stats_new = false;  // messages since the last redraw
    int show = 0;                               // 0 both directions, 1 only A→B, 2 only B→A
    bool packets = false;                       // throughput in packets/s (else bit/s)

    double seconds(std::int64_t t) const { return static_cast<double>(t) / 1e9; }
    bool shown(int d) const { return show == 0 || show == d + 1; }
};

class ChartRenderer {
  public:
    /// `name`: "delay", "delay.a_to_b", "histogram", "throughput", "drops".
    explicit ChartRenderer(QString name);
    virtual ~ChartRenderer();
    ChartRenderer(const ChartRenderer&) = delete;
    ChartRenderer& operator=(const ChartRenderer&) = delete;

    const QString& name() const { return name_; }
    QChart* chart() const { return chart_; }
    QChartView* view() const { return view_; }

    /// Draws what changed for this renderer in the frame: everything when the frame moved or
    /// the renderer is dirty, else the heads its new data touched. A renderer whose view is
    /// hidden draws nothing and is drawn whole when shown again.
    void redraw(const RedrawFrame& f);
    /// Something of the renderer's own changed (a setting, the style, the link).
    void markDirty() { dirty_ = true; }
    /// A setting changed since the last redraw: the next one draws this renderer whole.
    bool redrawPending() const { return dirty_; }
    /// A redraw is due although no message arrived (the histogram's recount).
    virtual bool due() const { return false; }
    virtual void applyStyle(const ChartStyle& style);
    /// The series of one part ("samples", "measured", "target", "envelope", "bars",
    /// "density", "all"), for probes; empty for an unknown part.
    virtual QList<QXYSeries*> parts(const QString& part) const = 0;
    /// A head that begins with its body's last point (counted once by probes).
    bool startsWithJoint(const QXYSeries* s) const { return joints_.startsWithJoint(s); }
    void setCosts(ChartsCosts* costs);
    /// A small chart: its title without captions, short axis titles ("time (s)", "ms").
    void setCompact(bool on);
    bool compact() const { return compact_; }
    /// The chart's own title shown (a stage lane has a header of its own instead).
    void setTitleShown(bool on);

  protected:
    virtual void draw(const RedrawFrame& f, bool all) = 0;
    /// Sets the chart's title and the titles that do not depend on the data.
    virtual void setTitles() = 0;
    /// The title with its captions as the size allows (empty when not shown).
    void showTitle(const QString& title, const QString& caption, const QString& caption2 = {});
    /// The time axis' title as the size allows.
    QString timeTitle() const;
    /// Tick intervals that keep the labels apart, for the plot's size now.
    int xTicks() const;
    int yTicks() const;

    QString name_;
    QChart* chart_ = nullptr;
    QChartView* view_ = nullptr;
    ChartStyle style_;
    Joints joints_;
    bool dirty_ = true;
    bool compact_ = false, title_shown_ = true;
};

// Building blocks of the renderers.
QChart* newChart();
QChartView* newView(QChart* chart, const QString& tooltip);
void attach(QChart* c, QAbstractSeries* s, QValueAxis* x, QValueAxis* y);
QLineSeries* newLine(const QString& name, const QColor& color, qreal width,
                     Qt::PenStyle style = Qt::SolidLine);
QAreaSeries* newArea(const QString& name, QLineSeries* up, QLineSeries* lo, const QColor& fill);
/// The legend's label of a series, shorter than its name (the name stays whole in CSV exports
/// and tooltips).
void labelMarker(QChart* c, QAbstractSeries* s, const QString& label);
/// Shows or hides a series' legend entry (and lays the legend out again when it changed).
void showMarker(QChart* c, QAbstractSeries* s, bool on);
/// A bold title over up to two small lines of caption (captions off: the title alone).
QString chartTitle(const QString& title, const QString& caption, const QString& caption2,
                   bool captions);
/// Line width w times the style's scale.
void setLineWidth(QXYSeries* s, double w, const ChartStyle& style);

}  // namespace linkem::gui
