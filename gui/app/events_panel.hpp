// The Events panel: the EventLog's rows (gui/model/event_log.hpp) as a table that is updated
// in place, a repeated warning being one row with its count, worst figure and time of the
// last; red only for what needs someone to act; a stall explained once below the table.
#pragma once

#include <cstdint>
#include <map>

#include <QWidget>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace linkem::gui {

class EventLog;

class EventsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit EventsPanel(const EventLog& log, QWidget* parent = nullptr);
    /// Shows the rows that changed (cheap when nothing did).
    void refresh();
    QTreeWidget* table() const { return table_; }
    /// Every row's text (tests, copying).
    QString text() const;
    /// The explanation shown (empty while none is).
    QString explanation() const;

  private:
    const EventLog& log_;
    QTreeWidget* table_ = nullptr;
    QLabel* explanation_ = nullptr;
    struct Shown {  // a log row's item in the table, and what it shows
        QTreeWidgetItem* item = nullptr;
        std::uint64_t count = 0;
        std::int64_t last_ms = 0;
        bool needs_action = false;
    };
    std::map<std::uint64_t, Shown> shown_;  // by EventRow::id
};

}  // namespace linkem::gui
