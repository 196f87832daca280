// How the charts look in a layout: font sizes, line widths, antialiasing, and whether the
// titles carry their caption lines (the desk) or only a short title (the stage).
#pragma once

#include <iterator>

#include <QColor>
#include <QString>

#include "direction_label.hpp"
#include "linkem/counters.hpp"

namespace linkem::gui {

struct ChartStyle {
    double title_pt = 10, label_pt = 8.5, legend_pt = 8.5;
    double line_scale = 1;   // line widths and marker sizes multiplied by it
    bool antialias = false;  // triples the cost of painting dense series
    bool captions = true;    // the title's caption lines (what the chart shows, in words)

    static ChartStyle desk() { return {}; }
    static ChartStyle stage() { return {17, 13, 13, 2.5, true, false}; }
};

/// A→B, B→A; darker shades for the measured samples and the targets.
inline const QColor kDirectionColor[2] = {QColor(31, 119, 180), QColor(230, 115, 0)};
inline const QColor kDirectionDark[2] = {QColor(8, 48, 107), QColor(140, 60, 0)};
/// The drop causes' colours, in kDropCauses order (loss, policer, spacer, buffer full), with
/// spares for causes to come: a new row in kDropCauses takes the next one.
inline const QColor kCauseColor[] = {
    QColor(214, 39, 40),  QColor(148, 103, 189), QColor(44, 160, 44),  QColor(120, 80, 40),
    QColor(23, 190, 207), QColor(227, 119, 194), QColor(188, 189, 34), QColor(127, 127, 127)};
static_assert(std::size(kCauseColor) >= kDropCauseCount,
              "a colour per drop cause: add one to kCauseColor");
/// The drops chart's ECN marks: a colour none of the causes has.
inline const QColor kEcnColor(255, 127, 14);

/// The traffic classes' colours by class id (0 `default`, i + 1 the list's class i),
/// repeating after the tenth.
inline const QColor kClassColor[] = {QColor(90, 90, 90),  QColor(0, 150, 136), QColor(156, 39, 176),
                                     QColor(205, 160, 0), QColor(63, 81, 181), QColor(233, 30, 99),
                                     QColor(121, 85, 72), QColor(0, 172, 230), QColor(139, 195, 74),
                                     QColor(255, 87, 34)};
inline QColor classColor(std::size_t id) {
    return kClassColor[id % std::size(kClassColor)];
}

inline QString directionLabel(int d) {
    return QString::fromUtf8(kDirectionLabels[d == 0 ? 0 : 1]);
}

inline QColor withAlpha(QColor c, int a) {
    c.setAlpha(a);
    return c;
}

}  // namespace linkem::gui
