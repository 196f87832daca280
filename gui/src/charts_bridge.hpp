// The one place where the main window talks to the charts (gui/charts: ChartsPanel).
#pragma once

#include <QLabel>
#include <QString>
#include <QWidget>

#include <nlohmann/json.hpp>

#if LINKEM_GUI_HAVE_CHARTS
#include "charts_panel.hpp"
#endif

namespace linkem::gui {

#if LINKEM_GUI_HAVE_CHARTS
#else
class ChartsPanel : public QLabel {
  public:
    using QLabel::QLabel;
};
inline ChartsPanel* make_charts_panel(QWidget* parent) {
    auto* l = new ChartsPanel("(charts not built)", parent);
    l->setAlignment(Qt::AlignCenter);
    return l;
}
inline QWidget* charts_widget(ChartsPanel* c, QWidget*) {
    return c;
}
inline void charts_set_directions(ChartsPanel*, int) {}
inline void charts_add_stats(ChartsPanel*, const nlohmann::json&) {}
inline void charts_add_delay(ChartsPanel*, const nlohmann::json&) {}
inline void charts_set_link(ChartsPanel*, const nlohmann::json&) {}
inline void charts_set_window(ChartsPanel*, int) {}
inline void charts_set_paused(ChartsPanel*, bool) {}
inline void charts_set_projector(ChartsPanel*, bool) {}
inline void charts_clear(ChartsPanel*) {}
inline QString charts_export_csv(ChartsPanel*, const QString&) {
    return "the charts are not built";
}
inline QString charts_export_png(ChartsPanel*, const QString&) {
    return "the charts are not built";
}
inline bool charts_has_points(ChartsPanel*) {
    return false;
}
#endif

}  // namespace linkem::gui
