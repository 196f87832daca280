#include "redraw_scheduler.hpp"

#include <algorithm>

namespace linkem::gui {

RedrawScheduler::RedrawScheduler(QObject* parent) : QObject(parent) {
    tick_.setInterval(static_cast<int>(kSpacingMs));
    connect(&tick_, &QTimer::timeout, this, [this] {
        if (!soon_.isActive()) emit check();  // else a message's redraw is due shortly
    });
    tick_.start();
    soon_.setSingleShot(true);
    soon_.setTimerType(Qt::PreciseTimer);
    connect(&soon_, &QTimer::timeout, this, &RedrawScheduler::check);
}

void RedrawScheduler::arrived(bool delay) {
    if (paused_) return;
    const QElapsedTimer& last = delay ? since_delay_ : since_;
    const qint64 e = last.isValid() ? last.elapsed() : kSpacingMs;
    const qint64 wait = std::max<qint64>(delay ? 1 : kCompanionMs, kSpacingMs - e);
    if (!soon_.isActive() || (delay && soon_.remainingTime() > wait))
        soon_.start(static_cast<int>(wait));
}

}  // namespace linkem::gui
