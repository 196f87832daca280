#include "readouts.hpp"

#include <algorithm>
#include <cmath>
#include "chart_style.hpp"

namespace linkem::gui {

QString formatMs(double ns, int decimals) {
    return QString::number(ns / 1e6, 'f', decimals) + " ms";
}

QString deviation(double got, double want) {
    if (!(want > 0)) return {};
    const double pct = (got - want) / want * 100;
    return QString("%1%2 %").arg(pct >= 0 ? "+" : "").arg(pct, 0, 'f', 1);
}

QString formatCount(std::uint64_t n) {
    QString s = QString::number(n);
    for (int i = s.size() - 3; i > 0; i -= 3)
        s.insert(i, QChar(0x2009));
    return s;
}

namespace {
QString rate(double bps) {
    if (bps >= 1e9) return QString::number(bps / 1e9, 'f', 3) + " Gbit/s";
    if (bps >= 1e6) return QString::number(bps / 1e6, 'f', 3) + " Mbit/s";
    return QString::number(bps / 1e3, 'f', 1) + " kbit/s";
}
QString count(double x) {
    return formatCount(static_cast<std::uint64_t>(std::max(0.0, std::round(x))));
}
// A figure over its sample count, in a smaller grey line.
QString withCount(const QString& figure, std::uint64_t n, const char* what = "packets") {
    return QString("%1<br><span style='color:gray; font-size:small'>n %2 %3</span>")
        .arg(figure.toHtmlEscaped(), formatCount(n), what);
}
const char* kScopeKey[2] = {"since", "window"};
}  // namespace

Readouts::Readouts(const ReadoutModel& model, QWidget* parent) : QWidget(parent), model_(model) {
    setObjectName("readouts");
    grid_ = new QGridLayout(this);
    grid_->setHorizontalSpacing(14);
    grid_->setVerticalSpacing(3);
    for (int d = 0; d < 2; ++d) {
        dir_head_[d] = new QLabel(QString("<b>%1</b>").arg(directionLabel(d)), this);
        dir_head_[d]->setObjectName(QString("readout_header_") + kDirectionKeys[d]);
        grid_->addWidget(dir_head_[d], 0, 1 + 2 * d, 1, 2);
        for (int s = 0; s < 2; ++s) {
            scope_head_[d][s] = new QLabel(this);
            scope_head_[d][s]->setObjectName(
                QString("readout_scope_%1_%2").arg(kDirectionKeys[d]).arg(kScopeKey[s]));
            grid_->addWidget(scope_head_[d][s], 1, 1 + 2 * d + s);
        }
    }
    addRow("target", "set: mean ± jitter",
           "mean_delay_us ± jitter_us in force (the emulated delay asked for)", false);
    addRow("emulated_mean", "mean (emulated)",
           "mean of the delay the emulator drew (delay_ns) over every packet queued, since the "
           "last parameter change and over the time window, with the deviation from the set "
           "mean and the packets it covers. Correlation (strategy correlated) keeps it on "
           "target.",
           true);
    addRow("emulated_jitter", "jitter (emulated)",
           "standard deviation (over n, as jitter_us) of delay_ns over every packet queued, "
           "against jitter_us",
           true);
    addRow("queueing", "spacer / order wait",
           "scheduled_ns − delay_ns of the sampled packets, mean (max): the spacer's queue "
           "(rate limit) and, with order kept, the wait behind an earlier packet",
           true);
    addRow("lateness", "lateness mean / max",
           "departure minus scheduled departure over every packet that left: the data "
           "plane's polling and stalls",
           true);
    addRow("actual", "actual delay (sampled)",
           "actual_ns of the sampled packets, mean ± jitter: the emulated delay + spacer/order "
           "wait + lateness; not the NIC's transmit queue or the wire",
           true);
    addRow("measured", "measured one-way (traffic)",
           "the built-in traffic's own measurement, mean ± jitter: send time to receive time of "
           "its frames, through the ports (everything above plus the virtual wire)",
           true);
    addRow("out_of_order", "out-of-order / lost (traffic)",
           "frames of the built-in traffic received after a later one, and missing ones: "
           "since the last change, and since the traffic's run began",
           true);
    addRow("drops_total", "drops (all causes)",
           "packets dropped: since the last change, and since linkemd started", true);
    addRow("alpha", "α and measured rate R",
           "α: the delay correlation weight in use, computed from the packet rate R the "
           "rate estimator measured (stats: alpha, rate_pps)",
           false);
    addRow("in_flight", "packets in flight", "packets held, waiting for their transmission time",
           false);
    addRow("throughput", "in → out",
           "bit/s and packets/s into the emulator and handed to the port, from the last two "
           "stats messages",
           false);
    QString causes, labels;  // "loss·policer·...", "loss model, policer, ..."
    for (const DropCauseInfo& c : kDropCauses) {
        causes += (causes.isEmpty() ? "" : "·") + QString(c.name).replace('_', ' ');
        labels += (labels.isEmpty() ? "" : ", ") + QString(c.label);
    }
    addRow("drops", "drops/s " + causes, "packets dropped per second, by cause: " + labels, false);
    for (int c = 1; c <= 4; ++c)
        grid_->setColumnStretch(c, 1);
    setWindow(30);
}

void Readouts::addRow(const QString& id, const QString& name, const QString& tooltip, bool scoped) {
    auto* n = new QLabel(name, this);
    n->setToolTip(tooltip);
    grid_->addWidget(n, rows_, 0);
    scoped_[id] = scoped;
    for (int d = 0; d < 2; ++d)
        for (int s = 0; s < (scoped ? 2 : 1); ++s) {
            auto* c = new QLabel("–", this);
            c->setObjectName(id + "_" + kDirectionKeys[d] +
                             (scoped ? QString("_") + kScopeKey[s] : QString()));
            c->setToolTip(tooltip);
            c->setTextFormat(Qt::RichText);
            c->setTextInteractionFlags(Qt::TextSelectableByMouse);
            // room for the widest figure from the start: the pane is laid out before data
            if (scoped)
                c->setMinimumWidth(fontMetrics().horizontalAdvance("888.888 ms ± 88.888 ms"));
            grid_->addWidget(c, rows_, 1 + 2 * d + s, 1, scoped ? 1 : 2);
            cells_[d][s][id] = c;
            if (!scoped) cells_[d][1][id] = c;
        }
    ++rows_;
}

void Readouts::setDirections(int n) {
    directions_ = std::clamp(n, 1, 2);
    for (int s = 0; s < 2; ++s)
        for (auto& [id, c] : cells_[1][s])
            c->setVisible(directions_ > 1);
    dir_head_[1]->setVisible(directions_ > 1);
    for (QLabel* h : scope_head_[1])
        h->setVisible(directions_ > 1);
}

void Readouts::setWindow(double seconds) {
    window_s_ = seconds;
    for (int d = 0; d < 2; ++d) {
        scope_head_[d][window]->setText(QString("<i>window %1</i>")
                                            .arg(seconds < 60
                                                     ? QString("%1 s").arg(seconds)
                                                     : QString("%1 min").arg(seconds / 60)));
        scope_head_[d][window]->setToolTip(
            "over the charts' time window: may mix the link "
            "before a change with the one after it");
    }
}

void Readouts::clear() {
    for (auto& dir : cells_)
        for (auto& scope : dir)
            for (auto& [id, c] : scope)
                c->setText("–");
}

void Readouts::set(const QString& id, int d, Scope s, const QString& text, const QString& style) {
    QLabel* c = cells_[d][s][id];
    if (c->text() != text) c->setText(text);
    if (c->styleSheet() != style) c->setStyleSheet(style);
}

QString Readouts::text(const QString& row, int d, Scope s) const {
    const auto it = cells_[d][s].find(row);
    if (it == cells_[d][s].end()) return {};
    // the figure, without the sample count's line
    QString t = it->second->text();
    t = t.section("<br><span style='color:gray", 0, 0);
    t.replace("<br>", "\n");
    t.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    return t;
}

void Readouts::refresh() {
    for (int d = 0; d < directions_; ++d) {
        const DirectionReadout r = model_.get(d);
        const double target_mean = static_cast<double>(r.link.mean_delay);
        const double target_jitter = static_cast<double>(r.link.jitter);
        if (r.have_link)
            set("target", d, since_change,
                (classes_ ? QString("default: ") : QString()) + formatMs(target_mean) + " ± " +
                    formatMs(target_jitter));
        // since the change
        const double lasted_s =
            static_cast<double>(r.since_change.to_ns - r.since_change.from_ns) / 1e9;
        scope_head_[d][since_change]->setText(
            r.since_change.emulated.count > 0
                ? QString("<i>since change, %1 s</i>").arg(lasted_s, 0, 'f', 1)
                : QString("<i>since change</i>"));
        scope_head_[d][since_change]->setToolTip(
            QString("since parameter generation %1 took effect in the data plane (the first "
                    "interval after the change is left out: it may hold packets of the link "
                    "before)")
                .arg(r.generation));
        for (int s = 0; s < 2; ++s) {
            const Scope scope = static_cast<Scope>(s);
            const ScopeDelays& a = s == since_change ? r.since_change : r.window;
            // Colour only what needs a look: a settled since-change figure far off target.
            const bool judge = !classes_ && s == since_change && a.emulated.count >= 1000 &&
                               a.to_ns - a.from_ns >= 1'000'000'000;
            auto style = [&](double got, double want) {
                return judge && want > 0 && std::abs(got - want) / want > 0.1
                           ? QString("color: #b35900;")
                           : QString();
            };
            if (a.emulated.count > 0) {
                const double m = a.emulated.mean(), j = a.emulated.jitter();
                set("emulated_mean", d, scope,
                    withCount(
                        formatMs(m) + (classes_ ? QString() : " " + deviation(m, target_mean)),
                        a.emulated.count),
                    style(m, target_mean));
                set("emulated_jitter", d, scope,
                    withCount(
                        formatMs(j) + (classes_ ? QString() : " " + deviation(j, target_jitter)),
                        a.emulated.count),
                    style(j, target_jitter));
            } else {
                set("emulated_mean", d, scope, s == since_change ? "waiting…" : "–");
                set("emulated_jitter", d, scope, "–");
            }
            set("queueing", d, scope,
                a.wait.count > 0
                    ? withCount(formatMs(a.wait.mean()) + " (" + formatMs(a.wait.max) + ")",
                                a.wait.count, "samples")
                    : "–");
            set("lateness", d, scope,
                a.lateness.count > 0
                    ? withCount(QString::number(a.lateness.mean() / 1e3, 'f', 1) + " / " +
                                    QString::number(a.lateness.max / 1e3, 'f', 1) + " µs",
                                a.lateness.count)
                    : "–");
            set("actual", d, scope,
                a.actual.count > 0
                    ? withCount(formatMs(a.actual.mean()) + " ± " + formatMs(a.actual.jitter()),
                                a.actual.count, "samples")
                    : "–");
            set("measured", d, scope,
                a.measured.count > 0
                    ? withCount(formatMs(a.measured.mean()) + " ± " + formatMs(a.measured.jitter()),
                                a.measured.count, "frames")
                    : "–");
        }
        if (!r.have_stats) continue;
        set("alpha", d, since_change,
            QString("α %1, R %2 pkt/s").arg(r.alpha, 0, 'f', 4).arg(count(r.rate_pps)));
        set("in_flight", d, since_change, formatCount(r.in_flight));
        if (r.have_traffic) {
            set("out_of_order", d, since_change,
                formatCount(r.out_of_order_since_change) + " / " +
                    formatCount(r.lost_since_change));
            set("out_of_order", d, window,
                "run: " + formatCount(r.out_of_order) + " / " + formatCount(r.lost));
        } else {
            set("out_of_order", d, since_change, "no built-in traffic");
            set("out_of_order", d, window, "–");
        }
        set("drops_total", d, since_change, formatCount(r.drops_since_change));
        set("drops_total", d, window, "total " + formatCount(r.drops_total));
        if (r.rate) {
            const RatePoint& p = *r.rate;
            set("throughput", d, since_change,
                rate(p.in_bps) + " → " + rate(p.out_bps) + "<br>" + count(p.in_pps) + " → " +
                    count(p.out_pps) + " pkt/s");
            QString drops;
            for (double v : p.drops_per_s)
                drops += (drops.isEmpty() ? "" : " · ") + count(v);
            set("drops", d, since_change, drops);
        }
    }
}

}  // namespace linkem::gui
