// Drawing series that follow the time axis cheaply. Each such series is two QXYSeries: a body
// (the columns before the frame's split) and a head (the newest columns). The time axis moves
// in steps of whole columns, so between two steps a message changes only the heads: Qt
// Charts lays out (and strokes) the few points of the heads again, not the thousands of the
// bodies. A head begins with its body's last point (the joint), so the line goes on without
// a gap. The body carries the legend entry; a head's is hidden.
#pragma once

#include <utility>
#include <vector>

#include <QHash>
#include <QList>
#include <QPointF>
#include <QXYSeries>

#include "charts_profile.hpp"

namespace linkem::gui {

enum Part { kBody = 0, kHead = 1 };

/// A head series is named after its body, marked as the newest part (never in a legend).
QString partName(const QString& name, int part);

/// Min/max decimation of a series in increasing x into columns of width column_w starting
/// at x0: per column the point with the smallest y and the one with the largest, in their
/// original order (one point when they coincide).
QList<QPointF> decimateMinMax(const QList<QPointF>& in, double x0, double column_w);

/// Series and their new points, replaced together.
using Batch = std::vector<std::pair<QXYSeries*, QList<QPointF>*>>;

/// Empties the series, lets `axes` set the ranges, then gives each series its new points. A
/// range change makes Qt Charts lay out every series of the chart again (and stroke its line
/// for hit testing, the dearest part of a redraw); on empty series that costs nothing, so
/// each series is laid out once per redraw instead of once per axis change plus once.
/// (Scatter series are left as they are: emptying one deletes its marker items, refilling
/// creates them again.)
template <class Axes>
void commit(const Batch& items, Axes&& axes) {
    const bool print = profilingPrints();
    const std::int64_t t0 = threadCpuNs();
    for (const auto& [s, v] : items)
        if (s->count() > 0 && s->type() != QAbstractSeries::SeriesTypeScatter)
            s->replace(QList<QPointF>());
    const std::int64_t t1 = threadCpuNs();
    axes();
    const std::int64_t t2 = threadCpuNs();
    for (const auto& [s, v] : items) {
        const std::int64_t u = threadCpuNs();
        s->replace(*v);
        if (print)
            qDebug("  %s: %lld points %.2f ms", qPrintable(s->name()),
                   static_cast<long long>(v->size()), (threadCpuNs() - u) / 1e6);
    }
    if (print)
        qDebug("commit: empty %.2f axes %.2f fill %.2f ms", (t1 - t0) / 1e6, (t2 - t1) / 1e6,
               (threadCpuNs() - t2) / 1e6);
}

/// Each head's joint: its body's last point, as drawn.
class Joints {
  public:
    void clear() { joint_.clear(); }
    /// Remembers body's last point as head's joint.
    void keep(const QXYSeries* head, const QList<QPointF>& body) {
        if (!body.isEmpty()) joint_.insert(head, body.last());
    }
    /// Puts head's joint before its new points.
    void prepend(const QXYSeries* head, QList<QPointF>& v) const {
        const auto j = joint_.constFind(head);
        if (j != joint_.constEnd() && !v.isEmpty()) v.prepend(*j);
    }
    /// The head begins with its joint (a repeated point, for counting).
    bool startsWithJoint(const QXYSeries* s) const {
        const auto j = joint_.constFind(s);
        return j != joint_.constEnd() && s->count() > 0 && s->at(0) == *j;
    }

  private:
    QHash<const QXYSeries*, QPointF> joint_;
};

/// Heads and their new points (in the chart's base unit).
using Heads = std::vector<std::pair<QXYSeries*, QList<QPointF>>>;

/// Gives each head its new points, divided by `div` for the axis' unit, after its joint;
/// false, and no head changed, when a point lies outside [ylo, yhi] (base unit): the axis
/// must change, the chart is drawn again whole.
bool replaceHeads(Heads& heads, double ylo, double yhi, double div, const Joints& joints);

}  // namespace linkem::gui
