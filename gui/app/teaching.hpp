// Teaching views: "compare strategies" puts two delay strategies side by side — the same
// mean and jitter both ways, A→B with one strategy and B→A with another, the two lanes next
// to each other with what each gave since the change (the DPDS paper's Fig. 1, live), over a
// time window short enough to tell them apart (compareWindowSeconds). The strategies come from
// linkemd's schema, so any two it knows can be compared. "Bufferbloat: drop-tail against
// FQ-CoDel" gives both directions the same loaded link (a 10 Mbit/s spacer, a 1 MiB queue,
// 20 ms), A→B with a drop-tail queue and B→A with FQ-CoDel, the lanes side by side over the
// queue chart, each lane's header with the sojourn time the student should see.
#pragma once

#include <QObject>
#include <QStringList>

#include "linkem/link_params_json.hpp"

#include "readout_model.hpp"

class QMenu;

namespace linkem::gui {

class ChartsPanel;
class LinkSync;

class Teaching : public QObject {
    Q_OBJECT
  public:
    Teaching(LinkSync& sync, ChartsPanel& charts, QObject* parent = nullptr);
    /// The strategies linkemd offers (hello's link_params_schema).
    void setSchema(const LinkSchema& schema);
    QStringList strategies() const { return strategies_; }
    /// The Teaching menu: the compare actions (rebuilt when the schema changes).
    void fillMenu(QMenu* menu);
    /// A→B with strategy a, B→A with strategy b, the rest as A→B's in force; the lanes side
    /// by side. Returns an error (not connected, an unknown strategy), empty if fine.
    QString compareStrategies(const QString& a, const QString& b);
    /// The time window a comparison opens on: the shortest of the connection bar's windows
    /// (kTimeWindows) that spans 50 half-lives or more, at most the longest (a half-life of
    /// 21 ms: 2 s; 100 ms: 5 s; 1 s: 60 s). Long enough for the correlated delay's walk, short
    /// enough that the uncorrelated one's packet-to-packet spread is not a band of noise.
    static int compareWindowSeconds(DurationNs half_life);
    /// The bufferbloat view (bufferbloatUpdate): A→B drop-tail, B→A fq_codel on the same
    /// link, the lanes side by side with the queue chart under them, over a 30 s window.
    /// Returns an error (not connected, a linkemd without queue disciplines), empty if fine.
    QString bufferbloat();
    static constexpr int kBufferbloatWindowS = 30;

  signals:
    void changing(const QString& what);
    /// A comparison is shown (the lanes side by side): `window_s`, the time window it opens
    /// on. The window's owner goes back to the user's window when the comparison ends.
    void comparing(int window_s);
    /// Teaching → "Back to the charts": the comparison ends.
    void endRequested();
    void note(const QString& severity, const QString& text);

  private:
    LinkSync& sync_;
    ChartsPanel& charts_;
    QStringList strategies_;
    bool queues_ = false;  // the schema has queue fq_codel
    QMenu* menu_ = nullptr;
};

/// The text over a delay lane: the direction, its strategy, set → what it gave since the last
/// change (the emulated delay over every packet; with `compare`, also the actual delay of the
/// sampled packets and the built-in traffic's out-of-order frames). With `queue` (the
/// bufferbloat view), the limiter and queue discipline, the sojourn time of the last interval
/// (`last`, null if none yet) and what it should settle at (queueExpectation).
QString laneText(int direction, const DirectionReadout& r, bool compare, bool queue = false,
                 const QueueReport* last = nullptr);

}  // namespace linkem::gui
