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
    if (!docks_.isEmpty() && w.restoreState(docks_)) return;
    // The first desk: the Link pane on the left (both columns side by side when the window
    // leaves the charts 35 % of its width), readouts below across the window, events and the
    // built-in traffic beside them (or, in a narrow window, tabs beside the readouts).
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

void DeskLayout::sizeDocks(MainWindow& w) {
    sized_for_ = w.width();
    sized_h_ = w.height();
    ColumnsFit* fit = w.controls_->columnsFit();
    const int both = fit->sideBySide(), one = fit->oneColumn();
    const int link_w =
        both > 0 && both <= w.width() * 65 / 100 ? both : std::max(one, w.width() * 30 / 100);
    w.resizeDocks({w.link_dock_}, {link_w}, Qt::Horizontal);
    // The readouts as wide as their figures need (up to 3/4 of the window), the events beside
    // when that leaves them room for their columns and the start of a message (84
    // characters); otherwise (1280 px) the events and the built-in traffic are tabs beside
    // the readouts, each then as wide as the window.
    const int readouts_w = std::min(w.readouts_->sizeHint().width() + 40, w.width() * 3 / 4);
    const int events_min = w.events_->fontMetrics().averageCharWidth() * 84;
    const bool tabbed = w.tabifiedDockWidgets(w.readouts_dock_).contains(w.events_dock_);
    if (readouts_w + events_min > w.width()) {
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
        w.resizeDocks({w.readouts_dock_, w.events_dock_}, {readouts_w, w.width() - readouts_w},
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
    w.charts_->setArrangement(ChartsPanel::Arrangement::lanes);
    w.setWindowSeconds(window_s_);
    w.strip_->show();
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
