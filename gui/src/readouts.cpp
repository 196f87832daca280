#include "readouts.hpp"

#include <algorithm>
#include <cmath>

#include <QGridLayout>

namespace linkem::gui {

using nlohmann::json;

void SummaryStats::add(double x) {
    SummaryStats o;
    o.n = 1;
    o.mean = x;
    o.min = o.max = x;
    merge(o);
}

void SummaryStats::merge(const SummaryStats& o) {
    if (o.n <= 0) return;
    if (n <= 0) {
        *this = o;
        return;
    }
    const double total = n + o.n, delta = o.mean - mean;
    mean += delta * o.n / total;
    m2 += o.m2 + delta * delta * n * o.n / total;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
    n = total;
}

double SummaryStats::sd() const {
    return n > 1 ? std::sqrt(m2 / (n - 1)) : 0;
}

SummaryStats SummaryStats::from_json(const json& j) {
    SummaryStats m;
    if (!j.is_object()) return m;
    m.n = j.value("count", 0.0);
    if (m.n <= 0) return SummaryStats{};
    m.mean = j.value("mean_ns", 0.0);
    const double sd = j.value("sd_ns", 0.0);
    m.m2 = sd * sd * std::max(m.n - 1, 0.0);
    m.min = j.value("min_ns", m.mean);
    m.max = j.value("max_ns", m.mean);
    return m;
}

void DelayWindow::add(const json& msg) {
    Entry e;
    e.t_ns = msg.value("t_ns", 0.0);
    for (int d = 0; d < 2; ++d) {
        const char* key = d == 0 ? "a_to_b" : "b_to_a";
        if (!msg.contains(key)) continue;
        const json& j = msg[key];
        DirectionWindow& w = e.d[d];
        w.emulated = SummaryStats::from_json(j.value("delay", json()));
        w.lateness = SummaryStats::from_json(j.value("lateness", json()));
        w.measured = SummaryStats::from_json(j.value("measured_delay", json()));
        if (j.contains("samples") && j["samples"].is_object()) {
            const json& s = j["samples"];
            // by reference: json::value() would copy the arrays (thousands of samples)
            static const json kNone = json::array();
            auto array = [&s](const char* k) -> const json& {
                const auto it = s.find(k);
                return it != s.end() && it->is_array() ? *it : kNone;
            };
            const json &dl = array("delay_ns"), &sc = array("scheduled_ns"),
                       &ac = array("actual_ns");
            const std::size_t n = std::min({dl.size(), sc.size(), ac.size()});
            for (std::size_t i = 0; i < n; ++i) {
                if (!ac[i].is_number() || !sc[i].is_number() || !dl[i].is_number()) continue;
                w.actual.add(ac[i].get<double>());
                w.queueing.add(sc[i].get<double>() - dl[i].get<double>());
            }
        }
    }
    entries_.push_back(std::move(e));
    const double newest = entries_.back().t_ns;
    while (!entries_.empty() && entries_.front().t_ns < newest - window_ns_)
        entries_.pop_front();
}

DirectionWindow DelayWindow::get(int d) const {
    DirectionWindow w;
    for (const Entry& e : entries_) {
        w.emulated.merge(e.d[d].emulated);
        w.lateness.merge(e.d[d].lateness);
        w.actual.merge(e.d[d].actual);
        w.queueing.merge(e.d[d].queueing);
        w.measured.merge(e.d[d].measured);
    }
    return w;
}

namespace {
QString ms(double ns, int prec = 3) {
    return QString::number(ns / 1e6, 'f', prec) + " ms";
}
QString rate(double bps) {
    if (bps >= 1e9) return QString::number(bps / 1e9, 'f', 3) + " Gbit/s";
    if (bps >= 1e6) return QString::number(bps / 1e6, 'f', 3) + " Mbit/s";
    return QString::number(bps / 1e3, 'f', 1) + " kbit/s";
}
QString count(double x) {
    return QString::number(static_cast<qlonglong>(std::llround(x)));
}
}  // namespace

Readouts::Readouts(QWidget* parent) : QWidget(parent) {
    grid_ = new QGridLayout(this);
    grid_->setHorizontalSpacing(16);
    grid_->setVerticalSpacing(2);
    auto* h0 = new QLabel("<b>A→B</b>", this);
    auto* h1 = new QLabel("<b>B→A</b>", this);
    grid_->addWidget(h0, 0, 1);
    grid_->addWidget(h1, 0, 2);
    h1->setObjectName("readout_header_b");
    addRow("target", "target mean ± jitter",
           "mean_delay_us ± jitter_us in force (the emulated delay asked for)");
    addRow("emulated_mean", "emulated mean",
           "mean of the delay the emulator drew (delay_ns) over every packet queued in the "
           "time window; deviation from the target mean in %. Correlation (strategy "
           "correlated) keeps it on target; uncorrelated with order kept raises it.");
    addRow("emulated_jitter", "emulated jitter",
           "standard deviation of delay_ns over every packet in the window, against "
           "jitter_us, deviation in %");
    addRow("alpha", "α and measured rate R",
           "α: the delay correlation weight in use, computed from the packet rate R the "
           "rate estimator measured (stats: alpha, rate_pps)");
    addRow("queueing", "spacer / order wait",
           "scheduled_ns − delay_ns of the sampled packets: time added by the spacer's "
           "queue (rate limit) and, with order kept, waiting behind an earlier packet");
    addRow("lateness", "lateness (mean / max)",
           "departure minus scheduled departure over every packet that left: the data "
           "plane's polling and stalls");
    addRow("actual", "actual delay (sampled)",
           "actual_ns of the sampled packets: the emulated delay + spacer/order wait + "
           "lateness; not the NIC's transmit queue or the wire");
    addRow("measured", "measured one-way (traffic)",
           "the built-in traffic's own measurement: send time to receive time of its "
           "frames, through the ports (everything above plus the virtual wire)");
    addRow("in_flight", "packets in flight", "packets held, waiting for their transmission time");
    addRow("out_of_order", "out-of-order / lost (traffic)",
           "frames of the built-in traffic received after a later one, and missing ones");
    addRow("throughput", "in → out",
           "bit/s and packets/s into the emulator and handed to the port, from the last "
           "two stats messages");
    addRow("drops", "drops/s loss·policer·spacer·buffer",
           "packets dropped per second, by cause: loss model, policer, spacer limit, "
           "buffer full");
    addRow("drops_total", "drops since start", "cumulative drops, all causes");
    grid_->setColumnStretch(1, 1);
    grid_->setColumnStretch(2, 1);
}

void Readouts::addRow(const QString& id, const QString& name, const QString& tooltip) {
    auto* n = new QLabel(name, this);
    n->setToolTip(tooltip);
    grid_->addWidget(n, rows_, 0);
    names_[id] = n;
    for (int d = 0; d < 2; ++d) {
        auto* c = new QLabel("–", this);
        c->setObjectName(id + (d == 0 ? "_a_to_b" : "_b_to_a"));
        c->setToolTip(tooltip);
        c->setTextInteractionFlags(Qt::TextSelectableByMouse);
        grid_->addWidget(c, rows_, 1 + d);
        cells_[d][id] = c;
    }
    ++rows_;
}

void Readouts::setDirections(int n) {
    directions_ = n;
    for (auto& [id, c] : cells_[1])
        c->setVisible(n > 1);
    if (auto* h = findChild<QLabel*>("readout_header_b")) h->setVisible(n > 1);
}

void Readouts::setLink(const json& applied) {
    link_ = applied;
}
void Readouts::addStats(const json& stats) {
    prev_stats_ = std::move(stats_);
    stats_ = stats;
}
void Readouts::addDelay(const json& delay) {
    window_.add(delay);
}
void Readouts::setWindow(double seconds) {
    window_s_ = seconds;
    window_.setWindow(seconds);
}
void Readouts::clear() {
    window_.clear();
    stats_ = prev_stats_ = json();
    for (auto& cells : cells_)
        for (auto& [id, c] : cells)
            c->setText("–");
}

void Readouts::set(const QString& id, int d, const QString& text, const QString& style) {
    QLabel* c = cells_[d][id];
    if (c->text() != text) c->setText(text);
    if (c->styleSheet() != style) c->setStyleSheet(style);
}

QString Readouts::text(const QString& row, int d) const {
    const auto it = cells_[d].find(row);
    return it == cells_[d].end() ? QString() : it->second->text();
}

void Readouts::refresh() {
    for (int d = 0; d < directions_; ++d) {
        const char* key = d == 0 ? "a_to_b" : "b_to_a";
        const json p = link_.is_object() ? link_.value(key, json()) : json();
        const double target_mean = p.is_object() ? p.value("mean_delay_us", 0.0) * 1e3 : 0;
        const double target_jitter = p.is_object() ? p.value("jitter_us", 0.0) * 1e3 : 0;
        if (p.is_object()) set("target", d, ms(target_mean) + " ± " + ms(target_jitter));
        const DirectionWindow w = window_.get(d);
        auto deviation = [](double got, double want) -> std::pair<QString, QString> {
            if (want <= 0) return {"", ""};
            const double pct = (got - want) / want * 100;
            const QString style = std::abs(pct) > 10 ? "color: #b35900;" : "";
            return {QString(" (%1%2 %)").arg(pct >= 0 ? "+" : "").arg(pct, 0, 'f', 1), style};
        };
        if (w.emulated.n > 0) {
            const auto [dm, sm] = deviation(w.emulated.mean, target_mean);
            set("emulated_mean", d, ms(w.emulated.mean) + dm, sm);
            const auto [dj, sj] = deviation(w.emulated.sd(), target_jitter);
            set("emulated_jitter", d, ms(w.emulated.sd()) + dj, sj);
        }
        if (w.queueing.n > 0)
            set("queueing", d, ms(w.queueing.mean) + " (max " + ms(w.queueing.max) + ")");
        if (w.lateness.n > 0)
            set("lateness", d,
                QString::number(w.lateness.mean / 1e3, 'f', 1) + " µs / " +
                    QString::number(w.lateness.max / 1e3, 'f', 1) + " µs");
        if (w.actual.n > 0) set("actual", d, ms(w.actual.mean) + " ± " + ms(w.actual.sd()));
        if (w.measured.n > 0) set("measured", d, ms(w.measured.mean) + " ± " + ms(w.measured.sd()));

        if (!stats_.is_object() || !stats_.contains(key)) continue;
        const json& s = stats_[key];
        set("alpha", d,
            QString("α %1, R %2 pkt/s")
                .arg(s.value("alpha", 0.0), 0, 'f', 4)
                .arg(s.value("rate_pps", 0.0), 0, 'f', 0));
        set("in_flight", d, count(s.value("in_flight", 0.0)));
        if (s.contains("traffic") && s["traffic"].is_object()) {
            const json& t = s["traffic"];
            set("out_of_order", d,
                count(t.value("out_of_order", 0.0)) + " / " + count(t.value("lost", 0.0)));
        } else {
            set("out_of_order", d, "no built-in traffic");
        }
        const double drops_total = s.value("drops_loss", 0.0) + s.value("drops_policer", 0.0) +
                                   s.value("drops_spacer", 0.0) + s.value("drops_buffer_full", 0.0);
        set("drops_total", d, count(drops_total));
        if (prev_stats_.is_object() && prev_stats_.contains(key)) {
            const json& q = prev_stats_[key];
            const double dt = (stats_.value("t_ns", 0.0) - prev_stats_.value("t_ns", 0.0)) / 1e9;
            if (dt > 0) {
                auto per_s = [&](const char* k) {
                    return (s.value(k, 0.0) - q.value(k, 0.0)) / dt;
                };
                set("throughput", d,
                    rate(per_s("bytes_in") * 8) + " → " + rate(per_s("bytes_out") * 8) + "\n" +
                        count(per_s("packets_in")) + " → " + count(per_s("packets_out")) +
                        " pkt/s");
                const double total = per_s("drops_loss") + per_s("drops_policer") +
                                     per_s("drops_spacer") + per_s("drops_buffer_full");
                set("drops", d,
                    count(per_s("drops_loss")) + " · " + count(per_s("drops_policer")) + " · " +
                        count(per_s("drops_spacer")) + " · " + count(per_s("drops_buffer_full")),
                    total > 0 ? "color: #b00000;" : "");
            }
        }
    }
}

}  // namespace linkem::gui
