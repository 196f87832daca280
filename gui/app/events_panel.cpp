#include "events_panel.hpp"

#include <bitset>

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
    // Each column is fitted to its contents when a refresh changed what could widen it
    // (refresh()). Not QHeaderView::ResizeToContents: that measures every row's text in
    // every column at each change of any cell, and linkemd's events change a row several
    // times a second (a set_link storm: 20).
    table_->header()->setStretchLastSection(true);
    table_->header()->setSectionResizeMode(QHeaderView::Interactive);

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
    std::bitset<kColumns> widen;  // columns a new or longer text may have widened
    auto put = [&widen](QTreeWidgetItem* item, int column, const QString& text) {
        const QString old = item->text(column);
        if (old == text) return;
        if (text.size() != old.size()) widen.set(static_cast<std::size_t>(column));
        item->setText(column, text);
    };
    for (const EventRow& r : log_.rows()) {
        stall = stall || r.kind == "stall";
        Shown& shown = shown_[r.id];
        const bool shown_before = shown.item != nullptr;
        if (!shown_before) {
            shown.item = new QTreeWidgetItem;
            table_->addTopLevelItem(shown.item);
            widen.set();
        } else if (shown.count == r.count && shown.last_ms == r.last_ms) {
            continue;  // unchanged
        }
        QTreeWidgetItem* item = shown.item;
        const bool restyle = !shown_before || shown.needs_action != r.needs_action;
        shown.count = r.count;
        shown.last_ms = r.last_ms;
        shown.needs_action = r.needs_action;
        const bool gui = r.kind == "gui";
        const QString what = gui ? QString("linkem-gui") : QString::fromStdString(r.kind);
        put(item, kTime, clock(r.last_ms));
        put(item, kCount, r.count > 1 ? QString::number(r.count) : QString());
        put(item, kWhat, r.needs_action ? "⚠ " + what : what);
        put(item, kWhere, gui ? QString() : QString::fromStdString(r.where));
        put(item, kWorst, QString::fromStdString(r.worst_text));
        put(item, kMessage, QString::fromStdString(r.message));
        item->setToolTip(
            kMessage,
            QString::fromStdString(r.message) +
                (r.count > 1
                     ? QString("\nfirst at %1, %2 times since").arg(clock(r.first_ms)).arg(r.count)
                     : QString()));
        if (!restyle) continue;
        // Red and bold for what needs action; the table's own ink and font otherwise (no
        // style of the row's own: a row holds nothing more than its texts, and there are up
        // to EventLog::kMaxRows of them).
        if (r.needs_action) {
            QFont bold = table_->font();
            bold.setBold(true);
            for (int c = 0; c < kColumns; ++c) {
                item->setForeground(c, QColor(0xb0, 0, 0));
                item->setFont(c, bold);
            }
        } else if (shown_before) {
            for (int c = 0; c < kColumns; ++c) {
                item->setData(c, Qt::ForegroundRole, QVariant());
                item->setData(c, Qt::FontRole, QVariant());
            }
        }
        widen.set();  // (bold is wider)
    }
    // rows the log let go (the oldest beyond its limit)
    for (auto it = shown_.begin(); it != shown_.end();) {
        if (log_.row(it->first)) {
            ++it;
            continue;
        }
        delete it->second.item;
        it = shown_.erase(it);
        widen.set();  // (a column may now be narrower)
    }
    for (int c = 0; c < kColumns; ++c)
        if (widen.test(static_cast<std::size_t>(c))) table_->resizeColumnToContents(c);
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
