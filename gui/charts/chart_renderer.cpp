#include "chart_renderer.hpp"

#include <algorithm>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>

namespace linkem::gui {

ChartRenderer::ChartRenderer(QString name) : name_(std::move(name)) {}

ChartRenderer::~ChartRenderer() = default;  // the view (a widget) owns the chart

void ChartRenderer::redraw(const RedrawFrame& f) {
    if (view_->isHidden()) {
        dirty_ = true;
        return;
    }
    const bool all = dirty_ || f.moved;
    if (all) joints_.clear();
    draw(f, all);
    dirty_ = false;
}

void ChartRenderer::setCosts(ChartsCosts* costs) {
    static_cast<TimedChartView*>(view_)->setCosts(costs);
}

void ChartRenderer::setCompact(bool on) {
    // a small chart keeps its height for the plot: the legend goes to the side, unless the
    // chart is narrow (a lane beside another) and the side would take the plot's width
    const QSize size = view_->size();
    chart_->legend()->setAlignment(on && size.width() >= 2 * size.height() ? Qt::AlignRight
                                                                           : Qt::AlignBottom);
    if (on == compact_) return;
    compact_ = on;
    setTitles();
    dirty_ = true;
}

void ChartRenderer::setTitleShown(bool on) {
    if (on == title_shown_) return;
    title_shown_ = on;
    setTitles();
}

void ChartRenderer::showTitle(const QString& title, const QString& caption,
                              const QString& caption2) {
    chart_->setTitle(title_shown_
                         ? chartTitle(title, caption, caption2, style_.captions && !compact_)
                         : QString());
}

QString ChartRenderer::timeTitle() const {
    return compact_ ? QObject::tr("time (s)") : QObject::tr("Time since linkemd started (s)");
}

void ChartRenderer::applyStyle(const ChartStyle& s) {
    style_ = s;
    view_->setRenderHint(QPainter::Antialiasing, s.antialias);
    QFont title = view_->font(), labels = view_->font(), legend = view_->font();
    title.setPointSizeF(s.title_pt);
    labels.setPointSizeF(s.label_pt);
    legend.setPointSizeF(s.legend_pt);
    chart_->setTitleFont(title);
    chart_->legend()->setFont(legend);
    for (QAbstractAxis* a : chart_->axes()) {
        a->setLabelsFont(labels);
        QFont t = labels;
        t.setBold(true);
        a->setTitleFont(t);
    }
    setTitles();
    dirty_ = true;
}

int ChartRenderer::xTicks() const {
    // a tick label of the time axis is up to ~6 characters ("-12.5"): one every ~7 em
    const double em = std::max(6.0, style_.label_pt * 1.35);
    return std::clamp(static_cast<int>(chart_->plotArea().width() / (7 * em)), 2, 8);
}

int ChartRenderer::yTicks() const {
    const double em = std::max(6.0, style_.label_pt * 1.35);
    return std::clamp(static_cast<int>(chart_->plotArea().height() / (2.6 * em)), 2, 8);
}

QChart* newChart() {
    auto* c = new QChart;
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->setAlignment(Qt::AlignBottom);
    c->legend()->setShowToolTips(true);  // an entry cut short shows whole in its tooltip
    c->setMargins(QMargins(4, 4, 4, 4));
    return c;
}

QChartView* newView(QChart* c, const QString& tip) {
    auto* v = new TimedChartView(c);
    // Antialiasing triples the cost of painting dense series; the stage turns it on.
    v->setRenderHint(QPainter::Antialiasing, false);
    // Most redraws change only the heads of the series (the newest columns): the view
    // repaints the region they cover. When the time axis moves, every item moves: a BSP
    // index of them would be rebuilt each time, so the scene keeps none.
    v->scene()->setItemIndexMethod(QGraphicsScene::NoIndex);
    v->setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    v->setOptimizationFlags(QGraphicsView::DontSavePainterState |
                            QGraphicsView::DontAdjustForAntialiasing);
    v->setToolTip(tip);
    v->setMinimumSize(240, 160);
    return v;
}

void attach(QChart* c, QAbstractSeries* s, QValueAxis* x, QValueAxis* y) {
    c->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
}

QLineSeries* newLine(const QString& name, const QColor& color, qreal width, Qt::PenStyle style) {
    auto* s = new QLineSeries;
    s->setName(name);
    QPen p(color);
    p.setWidthF(width);
    p.setStyle(style);
    s->setPen(p);
    s->setProperty("linkem_width", width);
    return s;
}

QAreaSeries* newArea(const QString& name, QLineSeries* up, QLineSeries* lo, const QColor& fill) {
    auto* a = new QAreaSeries(up, lo);
    a->setName(name);
    a->setBrush(fill);
    a->setPen(Qt::NoPen);
    return a;
}

void labelMarker(QChart* c, QAbstractSeries* s, const QString& label) {
    for (QLegendMarker* m : c->legend()->markers(s))
        m->setLabel(label);
}

// QLegend does not lay itself out again when a marker's visibility changes (Qt 6.4: the
// entries then all sit at one place), so a change invalidates its layout.
void showMarker(QChart* c, QAbstractSeries* s, bool on) {
    bool changed = false;
    for (QLegendMarker* m : c->legend()->markers(s)) {
        if (m->isVisible() == on) continue;
        m->setVisible(on);
        changed = true;
    }
    if (changed && c->legend()->layout()) c->legend()->layout()->invalidate();
}

QString chartTitle(const QString& title, const QString& caption, const QString& caption2,
                   bool captions) {
    if (!captions) return QStringLiteral("<b>%1</b>").arg(title);
    QString t = QStringLiteral("<b>%1</b><br><small>%2</small>").arg(title, caption);
    if (!caption2.isEmpty()) t += QStringLiteral("<br><small>%1</small>").arg(caption2);
    return t;
}

void setLineWidth(QXYSeries* s, double w, const ChartStyle& style) {
    QPen p = s->pen();
    p.setWidthF(w * style.line_scale);
    s->setPen(p);
}

}  // namespace linkem::gui
