#include "split_series.hpp"

#include <algorithm>
#include <cmath>

namespace linkem::gui {

QString partName(const QString& name, int part) {
    return part == kBody ? name : name + QStringLiteral(" (newest)");
}

QList<QPointF> decimateMinMax(const QList<QPointF>& in, double x0, double column_w) {
    QList<QPointF> out;
    if (in.isEmpty() || !(column_w > 0)) return in;
    out.reserve(std::min<qsizetype>(in.size(), 4096));
    qsizetype i = 0;
    while (i < in.size()) {
        const double col = std::floor((in[i].x() - x0) / column_w);
        qsizetype lo = i, hi = i, j = i;
        for (; j < in.size() && std::floor((in[j].x() - x0) / column_w) == col; ++j) {
            if (in[j].y() < in[lo].y()) lo = j;
            if (in[j].y() > in[hi].y()) hi = j;
        }
        if (lo == hi) {
            out.push_back(in[lo]);
        } else {
            out.push_back(in[std::min(lo, hi)]);
            out.push_back(in[std::max(lo, hi)]);
        }
        i = j;
    }
    return out;
}

bool replaceHeads(Heads& heads, double ylo, double yhi, double div, const Joints& joints) {
    for (const auto& [series, v] : heads)
        for (const QPointF& p : v)
            if (p.y() < ylo || p.y() > yhi) return false;
    for (auto& [series, v] : heads) {
        if (div != 1)
            for (QPointF& p : v)
                p.setY(p.y() / div);
        joints.prepend(series, v);
        series->replace(v);
    }
    return true;
}

}  // namespace linkem::gui
