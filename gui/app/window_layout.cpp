#include "window_layout.hpp"

#include <algorithm>

#include <QDockWidget>
#include <QStatusBar>

#include "charts_panel.hpp"
#include "connection_bar.hpp"
#include "events_panel.hpp"
#include "link_controls.hpp"
#include "main_window.hpp"
#include "readouts.hpp"
#include "recorder.hpp"
#include "stage_strip.hpp"

namespace linkem::gui {

void WindowLayout::leave(MainWindow& w) {
    docks_ = w.saveState();
    window_s_ = w.connectionBar()->windowSeconds();
}

void DeskLayout::enter(MainWindow& w) {
    w.strip_->hide();
    w.charts_->setArrangement(ChartsPanel::Arrangement::desk);
    w.charts_->setChartStyle(chartStyle(w.height()));
    w.setWindowSeconds(window_s_);
    setCorner(w);
    w.record_panel_->show();  // the stage's Record controls are in its strip
    if (!docks_.isEmpty() && w.restoreState(docks_)) return;
    // The first desk: the Link pane on the left (in a wide window down its whole height),
    // the readouts under the charts (in a narrow one across the window), events and the
    // built-in traffic beside them or, where they would be too narrow, tabs beside them.
    w.bar_->show();
    w.addDockWidget(Qt::LeftDockWidgetArea, w.link_dock_);
    w.addDockWidget(Qt::BottomDockWidgetArea, w.readouts_dock_);
    w.addDockWidget(Qt::BottomDockWidgetArea, w.events_dock_);
    w.splitDockWidget(w.readouts_dock_, w.events_dock_, Qt::Horizontal);
    w.tabifyDockWidget(w.events_dock_, w.traffic_dock_);
    for (QDockWidget* d : {w.link_dock_, w.readouts_dock_, w.events_dock_, w.traffic_dock_})
        d->show();
    w.events_dock_->raise();
    sizeDocks(w);
}

void DeskLayout::leave(MainWindow& w) {
    WindowLayout::leave(w);
    sized_for_ = 0;
}

void DeskLayout::resized(MainWindow& w) {
    if (sized_for_ > 0 &&
        (std::abs(w.width() - sized_for_) > 50 || std::abs(w.height() - sized_h_) > 50))
        sizeDocks(w);
}

int DeskLayout::readoutsWidth(MainWindow& w) {
    // as wide as their figures need (up to 3/4 of the window)
    return std::min(w.readouts_->sizeHint().width() + 40, w.width() * 3 / 4);
}

bool DeskLayout::setCorner(MainWindow& w) {
    // A wide window (1920 px): the Link pane in one column (A→B above B→A) down the whole
    // left side, the readouts under the charts beside it. Otherwise (1280 px) the readouts
    // need the window's width: they span it under the Link pane and the charts.
    const bool tall = w.width() - w.controls_->columnsFit()->oneColumn() >= readoutsWidth(w);
    w.setCorner(Qt::BottomLeftCorner, tall ? Qt::LeftDockWidgetArea : Qt::BottomDockWidgetArea);
    return tall;
}

void DeskLayout::sizeDocks(MainWindow& w) {
    sized_for_ = w.width();
    sized_h_ = w.height();
    ColumnsFit* fit = w.controls_->columnsFit();
    const int one = fit->oneColumn();
    const int readouts_w = readoutsWidth(w);
    const bool tall_link = setCorner(w);
    // one column, with room for the widths its figures take once linkemd's link is shown
    const int link_w = std::max(one, w.width() * (tall_link ? 27 : 30) / 100);
    w.resizeDocks({w.link_dock_}, {link_w}, Qt::Horizontal);
    // The events beside the readouts when that leaves them room for their columns and the
    // start of a message (84 characters); otherwise the events and the built-in traffic are
    // tabs beside the readouts, each then as wide as the readouts' place.
    const int bottom_w = tall_link ? w.width() - link_w : w.width();
    const int events_min = w.events_->fontMetrics().averageCharWidth() * 84;
    const bool tabbed = w.tabifiedDockWidgets(w.readouts_dock_).contains(w.events_dock_);
    if (readouts_w + events_min > bottom_w) {
        if (!tabbed) {
            w.tabifyDockWidget(w.readouts_dock_, w.events_dock_);
            w.tabifyDockWidget(w.events_dock_, w.traffic_dock_);
        }
        w.readouts_dock_->raise();
    } else {
        if (tabbed) {
            w.splitDockWidget(w.readouts_dock_, w.events_dock_, Qt::Horizontal);
            w.tabifyDockWidget(w.events_dock_, w.traffic_dock_);
            w.events_dock_->raise();
        }
        w.resizeDocks({w.readouts_dock_, w.events_dock_}, {readouts_w, bottom_w - readouts_w},
                      Qt::Horizontal);
    }
    w.resizeDocks({w.readouts_dock_}, {std::clamp(w.height() * 28 / 100, 160, 360)}, Qt::Vertical);
}

ChartStyle StageLayout::chartStyle(int h) const {
    ChartStyle s = ChartStyle::stage();
    // 720 px: titles 13 pt, labels 10; 1080 px: 17 and 13
    const double k = std::clamp(h / 1080.0, 0.6, 1.4);
    s.title_pt = 17 * k;
    s.label_pt = 13 * k;
    s.legend_pt = 13 * k;
    s.line_scale = 2.5 * std::max(0.8, k);
    return s;
}

double StageLayout::stripPoints(int h) {
    return std::clamp(h / 60.0, 11.0, 22.0);
}

void StageLayout::enter(MainWindow& w) {
    w.setCorner(Qt::BottomLeftCorner, Qt::BottomDockWidgetArea);
    w.charts_->setArrangement(ChartsPanel::Arrangement::lanes);
    w.setWindowSeconds(window_s_);
    w.strip_->show();
    w.record_panel_->hide();  // the Record controls are in the strip
    if (docks_.isEmpty() || !w.restoreState(docks_)) {
        // For the audience: the lanes and the strip; the rest one key away (F2 .. F6).
        w.bar_->hide();
        for (QDockWidget* d : {w.link_dock_, w.readouts_dock_, w.events_dock_, w.traffic_dock_})
            d->hide();
    }
    resized(w);
}

void StageLayout::resized(MainWindow& w) {
    w.charts_->setChartStyle(chartStyle(w.height()));
    w.strip_->setTextScale(stripPoints(w.height()));
}

}  // namespace linkem::gui
