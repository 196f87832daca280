#include "events_panel.hpp"

#include <QDateTime>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "event_log.hpp"

namespace linkem::gui {

namespace {
enum Column { kTime, kCount, kWhat, kWhere, kWorst, kMessage, kColumns };

QString clock(std::int64_t ms) {
    return QDateTime::fromMSecsSinceEpoch(ms).toString("HH:mm:ss");
}
}  // namespace

EventsPanel::EventsPanel(const EventLog& log, QWidget* parent) : QWidget(parent), log_(log) {
    setObjectName("events_panel");
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    table_ = new QTreeWidget(this);
    table_->setObjectName("event_table");
    table_->setColumnCount(kColumns);
    table_->setHeaderLabels({"last", "×", "event", "where", "worst", "message"});
    table_->setRootIsDecorated(false);
    table_->setUniformRowHeights(true);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideNone);  // a long message scrolls, it is not cut short
    table_->setAlternatingRowColors(true);
    table_->header()->setStretchLastSection(true);
    table_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);

    table_->setMinimumHeight(90);
    table_->setToolTip(
        "linkemd's events and the GUI's own: a repeated one is one row, with how "
        "often it came (×), the time of the last and its worst figure");
    v->addWidget(table_, 1);
    explanation_ = new QLabel(this);
    explanation_->setObjectName("event_explanation");
    explanation_->setWordWrap(true);
    explanation_->setTextFormat(Qt::PlainText);
    explanation_->hide();
    v->addWidget(explanation_);
}

void EventsPanel::refresh() {
    bool stall = false;
    for (const EventRow& r : log_.rows()) {
        stall = stall || r.kind == "stall";
        auto it = items_.find(r.id);
        QTreeWidgetItem* item = nullptr;
        if (it == items_.end()) {
            item = new QTreeWidgetItem;
            table_->addTopLevelItem(item);
            items_[r.id] = item;
        } else {
            item = it->second;
            const auto& [count, last] = shown_[r.id];
            if (count == r.count && last == r.last_ms) continue;  // unchanged
        }
        shown_[r.id] = {r.count, r.last_ms};
        const bool gui = r.kind == "gui";
        item->setText(kTime, clock(r.last_ms));
        item->setText(kCount, r.count > 1 ? QString::number(r.count) : QString());
        item->setText(kWhat, gui ? QString("linkem-gui") : QString::fromStdString(r.kind));
        item->setText(kWhere, gui ? QString() : QString::fromStdString(r.where));
        item->setText(kWorst, QString::fromStdString(r.worst_text));
        item->setText(kMessage, QString::fromStdString(r.message));
        item->setToolTip(
            kMessage,
            QString::fromStdString(r.message) +
                (r.count > 1
                     ? QString("\nfirst at %1, %2 times since").arg(clock(r.first_ms)).arg(r.count)
                     : QString()));
        const QColor ink = r.needs_action ? QColor(0xb0, 0, 0) : table_->palette().text().color();
        for (int c = 0; c < kColumns; ++c) {
            item->setForeground(c, ink);
            QFont f = item->font(c);
            f.setBold(r.needs_action);
            item->setFont(c, f);
        }
        item->setIcon(kWhat, QIcon());
        if (r.needs_action) item->setText(kWhat, "⚠ " + item->text(kWhat));
    }
    // rows the log let go (the oldest beyond its limit)
    for (auto it = items_.begin(); it != items_.end();) {
        if (log_.row(it->first)) {
            ++it;
            continue;
        }
        delete it->second;
        shown_.erase(it->first);
        it = items_.erase(it);
    }
    if (stall && explanation_->isHidden()) {
        explanation_->setText(QString::fromStdString(EventLog::explanation("stall")));
        explanation_->show();
    }
}

QString EventsPanel::text() const {
    QStringList lines;
    for (int i = 0; i < table_->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* it = table_->topLevelItem(i);
        QStringList cols;
        for (int c = 0; c < kColumns; ++c)
            cols << it->text(c);
        lines << cols.join(" | ");
    }
    return lines.join('\n');
}

QString EventsPanel::explanation() const {
    return explanation_->isHidden() ? QString() : explanation_->text();
}

}  // namespace linkem::gui
