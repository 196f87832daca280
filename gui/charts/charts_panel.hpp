// linkem-gui's charts: the delay series (of both directions, or one lane per direction), the
// delay histogram against the configured distribution, throughput and drops per second, drawn
// from the ChartStore that TelemetryModel fills. Qt Widgets + Qt Charts only (no networking).
//
// Drawing: at most every ~30 ms and only when something arrived since the last redraw
// (RedrawScheduler). Each redraw has one frame (RedrawFrame): the time axis moves in steps of
// whole pixel columns (~1% of the window) and the series are decimated to the minimum and
// maximum of each column; each renderer then draws what changed for it. Animations and
// OpenGL are off, so the charts render under QT_QPA_PLATFORM=offscreen.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <QString>
#include <QWidget>

#include "chart_store.hpp"
#include "chart_style.hpp"

class QChart;
class QComboBox;
class QLabel;
class QTabWidget;

namespace linkem::gui {

class ChartRenderer;
class DelayChart;
class HistogramChart;
class RedrawScheduler;
struct ChartsCosts;

class ChartsPanel : public QWidget {
    Q_OBJECT
  public:
    /// How the charts are arranged: the desk's five charts (the delay of both directions,
    /// histogram, throughput, queue, drops), the stage's delay lanes one above the other, or two
    /// lanes side by side (comparing the directions).
    enum class Arrangement { desk, lanes, side_by_side };

    /// `store` is filled by its owner (TelemetryModel); the panel sets its decimation columns.
    explicit ChartsPanel(ChartStore& store, QWidget* parent = nullptr);
    ~ChartsPanel() override;

    /// A message went into the store (a delay message, else a stats message) at t_ns.
    void dataArrived(bool delay, qint64 t_ns);
    /// The link in force changed (the store has its targets).
    void linkChanged();
    /// The store was cleared (a new linkemd instance): draw at once, also when paused.
    void cleared();

    void setWindow(double seconds);  // 1 .. 300; clamped
    double window() const { return window_s_; }
    void setPaused(bool paused);  // paused: keep receiving, stop redrawing and scrolling
    bool paused() const { return paused_; }
    void setArrangement(Arrangement a);
    Arrangement arrangement() const { return arrangement_; }
    void setChartStyle(const ChartStyle& style);
    const ChartStyle& chartStyle() const { return style_; }
    /// Which directions are drawn: 0 both, 1 only A→B, 2 only B→A.
    void setDirections(int which);
    int directions() const { return show_; }
    /// The link's classes (the class box lists them; hidden without classes).
    void setClasses(const std::vector<TrafficClass>& classes);
    /// What the charts show: every class (-1, the directions' totals, with each class's
    /// throughput beside them) or one class (0 `default`, i + 1 the list's class i).
    void setShownClass(int id);
    int shownClass() const { return store_.shownClass(); }
    QComboBox* classCombo() const { return class_combo_; }
    /// The classes' colours, beside the class box.
    QLabel* classKey() const { return class_key_; }
    /// "class voip" when one class is shown, "" for all.
    QString shownClassText() const;
    /// The queue chart under the lanes (the stage's arrangements; the desk always has it
    /// beside the throughput): a teaching view's.
    void setQueueShown(bool on);
    bool queueShown() const { return queue_shown_; }
    /// Throughput in packets/s (true) or bit/s (false, the default); the queue chart's
    /// backlog then in packets (else bytes).
    void setThroughputInPackets(bool packets);
    /// The header over a delay lane (the stage's "set → emulated since the change"), filled by
    /// its owner.
    QLabel* laneHeader(int direction) const { return lane_header_[direction]; }

    /// The time window shown, up to the newest data (ns): what the export writes.
    std::pair<std::int64_t, std::int64_t> visibleRange() const { return {view_lo_, view_hi_}; }
    /// Columns the delay series is decimated into (the plot area's width in pixels).
    int plotColumns() const { return columns_; }
    /// Redraws now if data arrived since the last redraw and not paused.
    bool redrawIfDue();
    std::uint64_t redrawCount() const { return redraws_; }
    /// "delay", "delay.a_to_b", "delay.b_to_a", "histogram", "throughput", "queue", "drops".
    ChartRenderer* renderer(const QString& name) const;
    QChart* chart(const QString& name) const;
    HistogramChart* histogramChart() const { return hist_.get(); }
    /// The renderers shown now, in reading order.
    std::vector<ChartRenderer*> shownRenderers() const;
    /// Writes the charts of the arrangement as PNGs into `directory` (the small charts of a
    /// tabbed panel too, each drawn in its turn); false with *error set when one fails.
    bool exportPng(const QString& directory, QString* error);
    /// Profiling: the cost of redraws and paints are added to *costs (null: not counted).
    void setCosts(ChartsCosts* costs);
    const ChartStore& store() const { return store_; }

  protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

  signals:
    void redrawn();
    /// setArrangement changed the arrangement.
    void arrangementChanged(linkem::gui::ChartsPanel::Arrangement a);
    /// A telemetry message was taken in (a delay message or not; its t_ns): its redraw is due.
    void taken(bool delay, qint64 t_ns);

  private:
    void redraw();
    void markAllDirty();
    void arrange();
    void arrangeOnce();
    int plotWidthNow() const;
    bool tabbed() const;
    /// The desk's four small charts (histogram, throughput, queue, drops): side by side from
    /// kFourAcrossPx (each as wide as three at kThreeAcrossPx, room for the drops chart's
    /// legend); from kThreeAcrossPx three across, the throughput and the queue sharing the
    /// middle place in tabs; narrower, all four in tabs.
    static constexpr int kThreeAcrossPx = 1000, kFourAcrossPx = 1340;
    /// 0: all in tabs, 3: three across, 4: four across (for the panel's width w).
    static int smallAcross(int w) { return w < kThreeAcrossPx ? 0 : w < kFourAcrossPx ? 3 : 4; }
    /// The charts' least height (ChartRenderer's views), and the small charts' in tabs.
    static constexpr int kChartMinPx = 160, kSmallInTabsPx = 140;

    ChartStore& store_;
    // the renderers: the desk's delay chart, the two lanes, the histogram, the rates
    std::unique_ptr<DelayChart> delay_, lane_[2];
    std::unique_ptr<HistogramChart> hist_;
    std::unique_ptr<ChartRenderer> thr_, queue_, drops_;
    std::vector<ChartRenderer*> all_;
    RedrawScheduler* scheduler_ = nullptr;
    QWidget* bar_ = nullptr;
    QComboBox *show_combo_ = nullptr, *unit_combo_ = nullptr, *class_combo_ = nullptr;
    QLabel *class_label_ = nullptr, *class_key_ = nullptr;
    QWidget* grid_host_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTabWidget* pair_tabs_ = nullptr;  // the throughput and the queue, three across
    int across_ = -1;                  // smallAcross() of the arrangement laid out
    int tab_ = 0;
    QLabel* lane_header_[2] = {nullptr, nullptr};
    QWidget* lane_box_[2] = {nullptr, nullptr};
    ChartStyle style_;
    Arrangement arrangement_ = Arrangement::desk;
    bool arranging_ = false, arrange_again_ = false;
    double window_s_ = 30;
    bool paused_ = false, packets_ = false, queue_shown_ = false;
    int show_ = 0;
    bool delay_new_ = false, stats_new_ = false;
    int columns_ = 800;
    std::int64_t view_lo_ = 0, view_hi_ = 30'000'000'000;
    // the frame drawn last: its right edge, column width and split; lag_ns: how far behind
    // the newest time new data landed since the last move (delay samples arrive with their
    // arrival time, a delay earlier), which sets how many columns the heads span
    std::int64_t drawn_hi_ = -1, drawn_q_ = 0, split_ = 0, lag_ns_ = 0;
    std::uint64_t redraws_ = 0;
    ChartsCosts* costs_ = nullptr;
};

}  // namespace linkem::gui
