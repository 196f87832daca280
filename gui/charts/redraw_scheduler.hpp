// When the charts draw: at most every kSpacingMs, and only when something arrived. A message
// is drawn as soon as kSpacingMs have passed since the last redraw began (at most ~33
// redraws a second, however long one takes): 30 ms ticks alone would add up to 30 ms to the
// 50 ms between delay messages. linkemd sends a stats message and then a delay message in the
// same tick; a stats message waits up to kCompanionMs for it, so that one redraw draws both.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace linkem::gui {

class RedrawScheduler : public QObject {
    Q_OBJECT
  public:
    static constexpr qint64 kSpacingMs = 30, kCompanionMs = 8;

    explicit RedrawScheduler(QObject* parent = nullptr);
    /// A message arrived (a delay message, else a stats message): its redraw is due soon.
    void arrived(bool delay);
    /// A redraw begins: the spacing counts from now.
    void started() { since_.start(); }
    /// Wall time of the redraw that began last, ns (for the profile).
    qint64 sinceStartNs() const { return since_.nsecsElapsed(); }
    void setPaused(bool paused) { paused_ = paused; }

  signals:
    /// Time to see whether a redraw is due (every kSpacingMs, and soon after a message).
    void check();

  private:
    QTimer tick_, soon_;
    QElapsedTimer since_;
    bool paused_ = false;
};

}  // namespace linkem::gui
