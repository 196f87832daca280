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
inline ChartsPanel* make_charts_panel(QWidget* parent) {
    return new ChartsPanel(parent);
}
inline QWidget* charts_widget(ChartsPanel* c, QWidget*) {
    return c;
}
/// 1 or 2 directions (single-port mode has only A->B).
inline void charts_set_directions(ChartsPanel* c, int n) {
    c->setDirections(n > 1 ? 0 : 1);
}
inline void charts_add_stats(ChartsPanel* c, const nlohmann::json& m) {
    c->addStats(m);
}
inline void charts_add_delay(ChartsPanel* c, const nlohmann::json& m) {
    c->addDelay(m);
}
inline void charts_set_link(ChartsPanel* c, const nlohmann::json& link) {
    c->setLink(link);
}
inline void charts_set_window(ChartsPanel* c, int seconds) {
    c->setWindow(seconds);
}
inline void charts_set_paused(ChartsPanel* c, bool on) {
    c->setPaused(on);
}
inline void charts_set_projector(ChartsPanel* c, bool on) {
    c->setProjectorMode(on);
}
inline void charts_clear(ChartsPanel* c) {
    c->clear();
}
inline QString charts_export_csv(ChartsPanel* c, const QString& path) {
    QString err;
    return c->exportCsv(path, &err) ? QString() : (err.isEmpty() ? "export failed" : err);
}
inline QString charts_export_png(ChartsPanel* c, const QString& dir) {
    QString err;
    return c->exportPng(dir, &err) ? QString() : (err.isEmpty() ? "export failed" : err);
}
inline bool charts_has_points(ChartsPanel* c) {
    return c->pointsDrawn("delay.samples") > 0;
}
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
