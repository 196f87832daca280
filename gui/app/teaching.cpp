#include "teaching.hpp"

#include <algorithm>

#include <QMenu>

#include "chart_style.hpp"
#include "charts_panel.hpp"
#include "connection_bar.hpp"
#include "link_match.hpp"
#include "link_sync.hpp"
#include "readouts.hpp"

namespace linkem::gui {

Teaching::Teaching(LinkSync& sync, ChartsPanel& charts, QObject* parent)
    : QObject(parent), sync_(sync), charts_(charts) {}

void Teaching::setSchema(const LinkSchema& schema) {
    strategies_.clear();
    queues_ = false;
    if (const ParamSchema* q = schema.find("queue"))
        queues_ = std::find(q->values.begin(), q->values.end(), "fq_codel") != q->values.end();
    if (const ParamSchema* s = schema.find("strategy"))
        for (const std::string& v : s->values)
            strategies_ << QString::fromStdString(v);
    if (menu_) fillMenu(menu_);
}

void Teaching::fillMenu(QMenu* menu) {
    menu_ = menu;
    menu->clear();
    menu->setToolTipsVisible(true);
    // The paper's pair first: correlated against uncorrelated.
    QList<QPair<QString, QString>> pairs;
    if (strategies_.contains("correlated") && strategies_.contains("uncorrelated"))
        pairs.append(qMakePair(QString("correlated"), QString("uncorrelated")));
    for (int i = 0; i < strategies_.size(); ++i)
        for (int j = i + 1; j < strategies_.size(); ++j)
            if (!pairs.contains(qMakePair(strategies_[i], strategies_[j])))
                pairs.append(qMakePair(strategies_[i], strategies_[j]));
    bool first = true;
    for (const auto& [a, b] : pairs) {
        auto* act = menu->addAction(QString("Compare &strategies: %1 (A→B) vs %2 (B→A)").arg(a, b));
        act->setObjectName(QString("compare_%1_%2").arg(a, b));
        act->setToolTip("the same mean and jitter both ways, the two lanes side by side");
        if (first) act->setShortcut(QKeySequence("Ctrl+T"));
        first = false;
        connect(act, &QAction::triggered, this, [this, a = a, b = b] { compareStrategies(a, b); });
    }
    if (pairs.isEmpty()) {
        menu->addAction("(connect to linkemd to compare its strategies)")->setEnabled(false);
        return;
    }
    menu->addSeparator();
    if (queues_) {
        auto* bb = menu->addAction("B&ufferbloat: drop-tail against FQ-CoDel");
        bb->setObjectName("teach_bufferbloat");
        bb->setToolTip(
            "the same 10 Mbit/s link both ways, loaded above its rate: A→B with a drop-tail "
            "queue, B→A with FQ-CoDel, the queue chart under the lanes");
        connect(bb, &QAction::triggered, this, [this] { bufferbloat(); });
        menu->addSeparator();
    }
    auto* back = menu->addAction("&Back to the charts (and their time window)");
    back->setObjectName("compare_end");
    back->setToolTip(
        "ends the comparison: the layout's charts and the time window chosen before it "
        "(F6 and F11 end it too); the link stays as it is");
    connect(back, &QAction::triggered, this, &Teaching::endRequested);
}

int Teaching::compareWindowSeconds(DurationNs half_life) {
    const double want_s = 50.0 * static_cast<double>(half_life) / 1e9;
    for (int s : kTimeWindows)
        if (s >= want_s) return s;
    return std::end(kTimeWindows)[-1];
}

QString Teaching::compareStrategies(const QString& a, const QString& b) {
    if (!sync_.valid()) return "not connected: there is no link to compare on";
    for (const QString& s : {a, b})
        if (!strategies_.contains(s))
            return QString("'%1' is not a strategy of this linkemd; it offers %2")
                .arg(s, strategies_.join(", "));
    const LinkParams in_force = sync_.applied().a_to_b;
    emit changing("compare");
    sync_.setUpdate(compareStrategiesUpdate(in_force, a.toStdString(), b.toStdString()));
    charts_.setDirections(0);
    charts_.setArrangement(ChartsPanel::Arrangement::side_by_side);
    charts_.setQueueShown(false);
    const int window_s = compareWindowSeconds(in_force.half_life);
    emit comparing(window_s);
    emit note("info", QString("comparing strategies: %1 (A→B) and %2 (B→A), %3 ms ± %4 ms both "
                              "ways, half-life %5 ms, over a %6 s window (Teaching → Back to "
                              "the charts, or F6, returns to the charts and their window)")
                          .arg(a, b)
                          .arg(static_cast<double>(in_force.mean_delay) / 1e6)
                          .arg(static_cast<double>(in_force.jitter) / 1e6)
                          .arg(static_cast<double>(in_force.half_life) / 1e6)
                          .arg(window_s));
    return {};
}

QString Teaching::bufferbloat() {
    if (!sync_.valid()) return "not connected: there is no link to show bufferbloat on";
    if (!queues_) return "this linkemd has no queue disciplines (its schema has no queue fq_codel)";
    const LinkParams in_force = sync_.applied().a_to_b;
    emit changing("bufferbloat");
    sync_.setUpdate(bufferbloatUpdate(in_force));
    charts_.setDirections(0);
    charts_.setArrangement(ChartsPanel::Arrangement::side_by_side);
    charts_.setQueueShown(true);
    emit comparing(kBufferbloatWindowS);
    emit note("info",
              QString("bufferbloat: both ways a 10 Mbit/s spacer, 1 MiB queue limit, 20 ms; A→B "
                      "drop-tail, B→A fq_codel. Under a load above 10 Mbit/s (the demo's built-in "
                      "traffic: 1000 frames/s of 1518 bytes, 12.1 Mbit/s) A→B's sojourn grows to "
                      "1 MiB × 8 / 10 Mbit/s = 0.84 s; B→A's FQ-CoDel keeps flows that back "
                      "off (TCP) near its 5 ms target (RFC 8290), but this constant-rate load "
                      "makes it cycle: the queue grows to a few hundred ms until CoDel's drop "
                      "rate matches the 17 % excess, drains, and CoDel stops dropping. Teaching "
                      "→ Back to the charts, or F6, returns"));
    return {};
}

QString laneText(int d, const DirectionReadout& r, bool compare, bool queue,
                 const QueueReport* last) {
    if (queue && r.have_link) {
        const LinkParams& p = r.link;
        const bool queues = p.limiter == Limiter::spacer || p.limiter == Limiter::trace;
        QString text =
            QString("<b>%1</b> · %2 %3 Mbit/s · queue <b>%4</b>")
                .arg(directionLabel(d), QString::fromStdString(std::string(to_string(p.limiter))))
                .arg(p.rate_bps / 1e6, 0, 'g', 3)
                .arg(queues ? QString::fromStdString(std::string(to_string(p.queue)))
                            : QString("none (the limiter does not queue)"));
        if (last && last->sojourn_count > 0)
            text +=
                QString(" → sojourn <b>%1 ms</b>").arg(last->sojourn_mean_ns() / 1e6, 0, 'f', 1);
        const std::string expect = queueExpectation(p);
        if (!expect.empty())
            text += "<br><i>expect: " + QString::fromStdString(expect).toHtmlEscaped() + "</i>";
        return text;
    }
    const QString dir = directionLabel(d);
    if (!r.have_link) return QString("<b>%1</b>").arg(dir);
    const double mean = static_cast<double>(r.link.mean_delay),
                 jitter = static_cast<double>(r.link.jitter);
    const ScopeDelays& a = r.since_change;
    QString got = "waiting for the first interval after the change…";
    if (a.emulated.count > 0)
        got = QString("<b>%1 ± %2 ms</b> emulated (n %3)")
                  .arg(a.emulated.mean() / 1e6, 0, 'f', 2)
                  .arg(a.emulated.jitter() / 1e6, 0, 'f', 2)
                  .arg(formatCount(a.emulated.count));
    QString text = QString("<b>%1</b> · %2 · set %3 ± %4 ms → %5")
                       .arg(dir, QString::fromStdString(std::string(to_string(r.link.strategy))))
                       .arg(mean / 1e6, 0, 'f', 2)
                       .arg(jitter / 1e6, 0, 'f', 2)
                       .arg(got);
    if (compare) {
        if (a.actual.count > 0)
            text += QString(" · actual %1 ± %2 ms")
                        .arg(a.actual.mean() / 1e6, 0, 'f', 2)
                        .arg(a.actual.jitter() / 1e6, 0, 'f', 2);
        if (r.have_traffic)
            text += QString(" · out of order %1").arg(formatCount(r.out_of_order_since_change));
    }
    return text;
}

}  // namespace linkem::gui
