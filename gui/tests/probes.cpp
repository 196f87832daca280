#include "probes.hpp"

#include <QAbstractScrollArea>
#include <QChart>
#include <QChartView>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QTextDocument>
#include <QTreeView>
#include <QXYSeries>

#include "chart_renderer.hpp"
#include "charts_panel.hpp"

namespace linkem::gui {

int pointsDrawn(const ChartsPanel& panel, const QString& what) {
    // "delay.a_to_b.samples": renderer "delay.a_to_b", part "samples"
    QString chart = what, part = QStringLiteral("all");
    for (const char* name :
         {"delay.a_to_b", "delay.b_to_a", "delay", "histogram", "throughput", "queue", "drops"}) {
        const QString n = QString::fromLatin1(name);
        if (what == n || what.startsWith(n + QLatin1Char('.'))) {
            chart = n;
            if (what != n) part = what.mid(n.size() + 1);
            break;
        }
    }
    ChartRenderer* r = panel.renderer(chart);
    if (!r) return -1;
    const QList<QXYSeries*> series = r->parts(part);
    if (series.isEmpty()) return -1;
    int n = 0;
    for (const QXYSeries* s : series) {
        n += static_cast<int>(s->count());
        if (r->startsWithJoint(s)) --n;
    }
    return n;
}

namespace {

struct Text {
    QString text;
    QRectF rect;  // scene coordinates, without the document margin
};

// Is `item` shown, with every ancestor?
bool shown(const QGraphicsItem* item) {
    for (; item; item = item->parentItem())
        if (!item->isVisible() || item->opacity() == 0) return false;
    return true;
}

}  // namespace

QStringList chartTextProblems(QChart* chart) {
    QStringList out;
    if (!chart || !chart->scene()) return {QStringLiteral("no chart")};
    const QString name = chart->title().isEmpty() ? QStringLiteral("chart") : chart->title();
    const QRectF bounds = chart->sceneBoundingRect().adjusted(-1, -1, 1, 1);
    std::vector<Text> texts;
    for (QGraphicsItem* it : chart->scene()->items()) {
        if (!shown(it)) continue;
        Text t;
        if (auto* ti = dynamic_cast<QGraphicsTextItem*>(it)) {
            t.text = ti->toPlainText();
            const qreal m = ti->document()->documentMargin();
            // the text itself: its laid-out size within the margin
            const QSizeF size = ti->document()->size() - QSizeF(2 * m, 2 * m);
            const QRectF local(QPointF(m, m), size);
            t.rect = ti->mapRectToScene(local.intersected(ti->boundingRect()));
        } else if (auto* si = dynamic_cast<QGraphicsSimpleTextItem*>(it)) {
            t.text = si->text();
            t.rect = si->sceneBoundingRect();
        } else {
            continue;
        }
        if (t.text.trimmed().isEmpty()) continue;
        texts.push_back(t);
    }
    for (const Text& t : texts) {
        if (t.text.endsWith(QStringLiteral("...")) || t.text.contains(QChar(0x2026)))
            out << QStringLiteral("'%1' is cut short").arg(t.text);
        if (!bounds.contains(t.rect))
            out << QStringLiteral("'%1' lies outside the chart").arg(t.text);
    }
    for (std::size_t i = 0; i < texts.size(); ++i)
        for (std::size_t j = i + 1; j < texts.size(); ++j) {
            const QRectF x = texts[i].rect.intersected(texts[j].rect);
            if (x.width() > 0.5 && x.height() > 0.5)
                out << QStringLiteral("'%1' and '%2' overlap").arg(texts[i].text, texts[j].text);
        }
    for (QString& s : out)
        s = QStringLiteral("[%1] %2").arg(
            QString(name).remove(QRegularExpression("<[^>]*>")).left(40), s);
    return out;
}

QStringList windowTextProblems(QWidget* window) {
    QStringList out;
    const QRect area = window->rect();
    for (QWidget* w : window->findChildren<QWidget*>()) {
        if (!w->isVisibleTo(window) || w->isWindow()) continue;
        // wholly out of sight: a dock behind another's tab (Qt moves it away)
        if (!QRect(w->mapTo(window, QPoint(0, 0)), w->size()).intersects(window->rect())) continue;
        // inside a scroll area: it may scroll; its own size counts only sideways
        const QAbstractScrollArea* scroll = nullptr;
        for (QWidget* p = w->parentWidget(); p && p != window; p = p->parentWidget())
            if (auto* s = qobject_cast<QAbstractScrollArea*>(p)) {
                scroll = s;
                break;
            }
        const QRect r(w->mapTo(window, QPoint(0, 0)), w->size());
        if (!scroll && !area.contains(r) && w->width() > 0 && w->height() > 0)
            out << QStringLiteral("%1 '%2' lies outside the window (%3,%4 %5x%6)")
                       .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName())
                       .arg(r.x())
                       .arg(r.y())
                       .arg(r.width())
                       .arg(r.height());
        if (auto* l = qobject_cast<QLabel*>(w); l && !l->text().isEmpty() && l->pixmap().isNull()) {
            const QString what =
                QStringLiteral("label '%1' (%2)").arg(l->objectName(), l->text().left(60));
            if (l->wordWrap()) {
                if (l->heightForWidth(l->width()) > l->height() + 1)
                    out << what + QStringLiteral(": %1 px of text in %2 px")
                                      .arg(l->heightForWidth(l->width()))
                                      .arg(l->height());
            } else if (l->minimumSizeHint().width() > l->width() + 1 ||
                       l->sizeHint().height() > l->height() + 1) {
                out << what + QStringLiteral(": needs %1x%2, has %3x%4")
                                  .arg(l->sizeHint().width())
                                  .arg(l->sizeHint().height())
                                  .arg(l->width())
                                  .arg(l->height());
            }
            if (scroll) {
                const QRect vr(scroll->viewport()->mapTo(window, QPoint(0, 0)),
                               scroll->viewport()->size());
                if (r.left() < vr.left() - 1 || r.right() > vr.right() + 1)
                    out << what + QStringLiteral(": wider than its scroll area");
            }
        }
        // A scroll area shows what does not fit by scrolling, never by squeezing or cutting
        // it: its widget at least its minimum height, a scroll bar where it is taller.
        if (auto* sa = qobject_cast<QScrollArea*>(w); sa && sa->widget()) {
            const QWidget* inner = sa->widget();
            const int need = inner->minimumSizeHint().height();
            if (inner->height() + 1 < need)
                out << QStringLiteral("scroll area '%1': its content squeezed to %2 of %3 px")
                           .arg(sa->objectName())
                           .arg(inner->height())
                           .arg(need);
            if (inner->height() > sa->viewport()->height() + 1 &&
                !sa->verticalScrollBar()->isVisible())
                out << QStringLiteral("scroll area '%1': %2 px of content in %3 px, no scroll bar")
                           .arg(sa->objectName())
                           .arg(inner->height())
                           .arg(sa->viewport()->height());
        }
        // A table whose last column stretches (a message that may scroll sideways): every
        // column before it whole within the table's width.
        if (auto* t = qobject_cast<QTreeView*>(w); t && t->header()->stretchLastSection()) {
            const QHeaderView* h = t->header();
            int before_last = 0;
            for (int c = 0; c + 1 < h->count(); ++c)
                if (!h->isSectionHidden(c)) before_last += h->sectionSize(c);
            if (before_last > t->viewport()->width() + 1)
                out << QStringLiteral("table '%1': its first %2 columns need %3 px, it has %4")
                           .arg(t->objectName())
                           .arg(h->count() - 1)
                           .arg(before_last)
                           .arg(t->viewport()->width());
        }
        if (auto* v = qobject_cast<QChartView*>(w); v && v->chart())
            out << chartTextProblems(v->chart());
    }
    return out;
}

}  // namespace linkem::gui
