// Test probes of the GUI, kept out of the product classes: what the charts' series hold now,
// and whether any text of a chart or a window is cut short, outside its place or overlapping.
#pragma once

#include <QString>
#include <QStringList>

class QChart;
class QWidget;

namespace linkem::gui {

class ChartsPanel;

/// Points in a chart's series now: "delay", "histogram", "throughput", "drops" (every
/// series), or one part: "delay.samples", "delay.envelope", "delay.target",
/// "delay.measured", "histogram.bars", "histogram.density", "throughput.all", "drops.all";
/// a lane: "delay.a_to_b.samples". A head's repeated first point counts once. -1 for an
/// unknown name.
int pointsDrawn(const ChartsPanel& panel, const QString& what);

/// What is wrong with a chart's texts as laid out now, one line each: a title, axis title,
/// tick label or legend entry that is cut short ("…", "...") or lies outside the view, and
/// two texts that overlap. Empty when every text is whole and apart.
QStringList chartTextProblems(QChart* chart);

/// The same for a window: every visible label whose text does not fit (cut off at its width,
/// or its wrapped lines taller than it), every chart shown (chartTextProblems), and every
/// visible widget that lies partly outside the window, every scroll area whose content is
/// squeezed below its minimum height or taller than it without a scroll bar, and every table
/// (a tree view whose last column stretches) whose columns before the last do not fit its
/// width. Labels inside a scroll area count against the scroll area's width only (they may
/// scroll up and down).
QStringList windowTextProblems(QWidget* window);

}  // namespace linkem::gui
