// When the charts draw: at most every kSpacingMs, and only when something arrived. A message
// is drawn as soon as kSpacingMs have passed since the last redraw began (at most ~33
// redraws a second, however long one takes): 30 ms ticks alone would add up to 30 ms to the
// 50 ms between delay messages. linkemd sends a stats message and then a delay message in the
// same tick; a stats message waits up to kCompanionMs for it, so that one redraw draws both.
// A delay message that comes later than that is drawn kSpacingMs after the last redraw that
// drew a delay message, not after the stats message's own: else it waited up to 30 ms behind
// a redraw of the small charts (at 10 stats messages a second the redraws are as many as
// before, one a message, pairs drawn once).
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
    /// A redraw begins (`delay`: with a delay message's data): the spacing counts from now.
    void started(bool delay) {
        since_.start();
        if (delay) since_delay_.start();
    }
    /// Wall time of the redraw that began last, ns (for the profile).
    qint64 sinceStartNs() const { return since_.nsecsElapsed(); }
    void setPaused(bool paused) { paused_ = paused; }

  signals:
    /// Time to see whether a redraw is due (every kSpacingMs, and soon after a message).
    void check();

  private:
    QTimer tick_, soon_;
    QElapsedTimer since_, since_delay_;
    bool paused_ = false;
};

}  // namespace linkem::gui
