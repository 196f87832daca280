// QTest of linkem_gui_charts under QT_QPA_PLATFORM=offscreen, fed through the model layer
// (TelemetryModel) as the main window feeds it: the charts get points and decimate them, the
// window trims, rates come from counter deltas, the histogram is a density comparable with
// the configured distribution's (sampled with the emulator's own DelayDistribution), CSV and
// PNG exports, clear(), pause, the window's readouts, bad input refused whole.
#include <QChart>
#include <QFile>
#include <QGraphicsTextItem>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextStream>
#include <QtTest>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "chart_export.hpp"
#include "chart_renderer.hpp"
#include "charts_panel.hpp"
#include "histogram_chart.hpp"
#include "linkem/distributions.hpp"
#include "linkem/rng.hpp"
#include "probes.hpp"
#include "telemetry_model.hpp"

using nlohmann::json;
using namespace linkem::gui;

namespace {

constexpr std::int64_t kS = 1'000'000'000;

// A `delay` body for one direction with the given samples (arrival ns, actual us); the
// drawn delay is actual - 2 us and scheduled actual - 1 us.
json delayMsg(int dir, std::int64_t start, std::int64_t end,
              const std::vector<std::pair<std::int64_t, double>>& samples,
              json summary = json{{"count", 0}}) {
    json arr = json::array(), del = json::array(), sch = json::array(), act = json::array();
    for (const auto& [t, us] : samples) {
        arr.push_back(t);
        del.push_back(std::llround((us - 2) * 1000));
        sch.push_back(std::llround((us - 1) * 1000));
        act.push_back(std::llround(us * 1000));
    }
    json body = {
        {"start_ns", start},
        {"end_ns", end},
        {"samples",
         {{"arrival_ns", arr}, {"delay_ns", del}, {"scheduled_ns", sch}, {"actual_ns", act}}},
        {"delay", summary},
        {"lateness", {{"count", 0}}},
        {"samples_dropped", 0}};
    json empty = {{"start_ns", start},
                  {"end_ns", end},
                  {"samples",
                   {{"arrival_ns", json::array()},
                    {"delay_ns", json::array()},
                    {"scheduled_ns", json::array()},
                    {"actual_ns", json::array()}}},
                  {"delay", {{"count", 0}}},
                  {"lateness", {{"count", 0}}},
                  {"samples_dropped", 0}};
    return json{{"v", 1},
                {"instance_id", "00000000000000aa"},
                {"seq", std::uint64_t{0}},
                {"t_ns", end},
                {kDirectionKeys[dir], body},
                // the protocol always has A→B: an empty interval when the samples are B→A's
                {kDirectionKeys[0], dir == 0 ? body : empty}};
}

json linkMsg(double mean, double jitter, const char* dist = "normal") {
    json one = {{"mean_delay_us", mean},
                {"jitter_us", jitter},
                {"distribution", dist},
                {"strategy", "reordered"}};
    return json{{"params_generation", 0}, {"a_to_b", one}, {"b_to_a", one}};
}

json statsMsg(std::int64_t t, std::uint64_t pin, std::uint64_t bin, std::uint64_t pout,
              std::uint64_t bout, std::uint64_t loss, std::uint64_t policer) {
    linkem::LinkStats s;
    s.t_ns = t;
    s.directions = 1;
    linkem::CounterSnapshot& c = s.dir[0].counters;
    c.packets_in = pin;
    c.bytes_in = bin;
    c.packets_out = pout;
    c.bytes_out = bout;
    c.drops[linkem::DropCause::loss] = loss;
    c.drops[linkem::DropCause::policer] = policer;
    c.in_flight = 7;
    c.alpha = 0.25;
    c.rate_pps = 1234.5;
    linkem::proto::StatsMessage m;
    m.header = {"00000000000000aa", 0, t};
    m.stats = s;
    return linkem::proto::to_json(m);
}

// The window's figures of one direction, as the readouts compute them (ReadoutModel).
struct WindowStats {
    std::uint64_t samples = 0;
    double mean_us = 0, jitter_us = 0, target_mean_us = 0, target_jitter_us = 0;
    double mean_dev_pct = 0, jitter_dev_pct = 0, lateness_mean_us = 0, lateness_max_us = 0;
    bool has_measured = false;
    double measured_mean_us = 0, measured_jitter_us = 0, alpha = 0, rate_pps = 0;
    std::uint64_t in_flight = 0;
};

struct Model {
    TelemetryModel model;
};

// The charts panel with its model, fed as the main window feeds it.
class Panel : public Model, public ChartsPanel {
  public:
    Panel() : ChartsPanel(model.store()) {}
    // What the GUI's client does first: the protocol's decoder.
    TelemetryModel::Took add(std::string_view topic, const json& m) {
        try {
            const auto t = linkem::proto::decode_telemetry(topic, m);
            return t ? model.add(*t, 0) : TelemetryModel::Took::ignored;
        } catch (const std::invalid_argument& e) {
            return model.refuse(e.what());
        }
    }
    void addDelay(const json& m) {
        if (add("delay", m) == TelemetryModel::Took::delay)
            dataArrived(true, model.lastTimeNs());
        else
            qInfo("delay message refused: %s", model.lastRefusal().c_str());
    }
    void addStats(const json& m) {
        if (add("stats", m) == TelemetryModel::Took::stats)
            dataArrived(false, model.lastTimeNs());
        else
            qInfo("stats message refused: %s", model.lastRefusal().c_str());
    }
    void setLink(const json& link) {
        linkem::LinkConfig c;
        c.a_to_b = linkem::link_params_from_json(link["a_to_b"]);
        c.b_to_a = linkem::link_params_from_json(link["b_to_a"]);
        model.setLink(c, 2, ++generation_);
        linkChanged();
    }
    void setWindow(double s) {
        ChartsPanel::setWindow(s);
        model.setWindow(window());
    }
    void clear() {
        model.clear();
        cleared();
    }
    int pointsDrawn(const QString& what) const { return linkem::gui::pointsDrawn(*this, what); }
    Histogram histogram(int d) const { return histogramChart()->drawn(d); }
    double density(int d, double x_us) const {
        const auto& t = model.store().dir(d).targets.back();
        return distributionDensity(t.distribution, t.mean_us, t.jitter_us, x_us);
    }
    std::size_t storedSamples(int d) const { return model.store().dir(d).samples.size(); }
    bool exportCsv(const QString& path, QString* error) const {
        return linkem::gui::exportCsv(model.store(), visibleRange().first, visibleRange().second,
                                      path, error);
    }
    bool exportPng(const QString& dir, QString* error) const {
        return linkem::gui::exportPng(shownRenderers(), dir, error);
    }
    WindowStats windowStats(int d) const {
        WindowStats w;
        if (d < 0 || d > 1) return w;
        const DirectionReadout r = model.readouts().get(d);
        const ScopeDelays& a = r.window;
        w.samples = a.actual.count;
        w.mean_us = a.actual.mean() / 1e3;
        w.jitter_us = a.actual.jitter() / 1e3;
        w.target_mean_us = static_cast<double>(r.link.mean_delay) / 1e3;
        w.target_jitter_us = static_cast<double>(r.link.jitter) / 1e3;
        if (w.samples > 0 && w.target_mean_us > 0)
            w.mean_dev_pct = (w.mean_us - w.target_mean_us) / w.target_mean_us * 100;
        if (w.samples > 0 && w.target_jitter_us > 0)
            w.jitter_dev_pct = (w.jitter_us - w.target_jitter_us) / w.target_jitter_us * 100;
        w.lateness_mean_us = a.lateness.count ? a.lateness.mean() / 1e3 : 0;
        w.lateness_max_us = a.lateness.count ? a.lateness.max / 1e3 : 0;
        w.has_measured = a.measured.count > 0;
        w.measured_mean_us = a.measured.mean() / 1e3;
        w.measured_jitter_us = a.measured.jitter() / 1e3;
        w.alpha = r.alpha;
        w.rate_pps = r.rate_pps;
        w.in_flight = r.in_flight;
        return w;
    }

  private:
    std::uint64_t generation_ = 0;
};

QLineSeries* seriesNamed(Panel& p, const QString& chart, const QString& name) {
    for (QAbstractSeries* s : p.chart(chart)->series())
        if (s->name() == name) return qobject_cast<QLineSeries*>(s);
    return nullptr;
}

// The points drawn of a series that follows the time axis: its body, then its head (the
// newest columns, named "<name> (newest)") without the body's last point it begins with.
QList<QPointF> pointsOf(Panel& p, const QString& chart, const QString& name) {
    QLineSeries* body = seriesNamed(p, chart, name);
    QLineSeries* head = seriesNamed(p, chart, name + QStringLiteral(" (newest)"));
    if (!body || !head) return {};
    QList<QPointF> v = body->points(), h = head->points();
    if (!v.isEmpty() && !h.isEmpty() && h.first() == v.last()) h.removeFirst();
    return v + h;
}

// Sections of an exported CSV: name -> rows (the header line first).
std::map<QString, QList<QStringList>> readCsv(const QString& path) {
    std::map<QString, QList<QStringList>> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return out;
    QTextStream in(&f);
    QString section;
    while (!in.atEnd()) {
        const QString line = in.readLine();
        if (line.startsWith(QLatin1String("# ["))) {
            section = line.mid(3, line.indexOf(QLatin1Char(']')) - 3);
            out[section];
            continue;
        }
        if (line.startsWith(QLatin1Char('#')) || line.isEmpty()) continue;
        out[section].push_back(line.split(QLatin1Char(',')));
    }
    return out;
}

// ---- SampleRing against a plain reference ----

bool samePoint(const DelayPoint& a, const DelayPoint& b) {
    return a.t_ns == b.t_ns && a.delay_ns == b.delay_ns && a.scheduled_ns == b.scheduled_ns &&
           a.actual_ns == b.actual_ns;
}

// Samples of a kind: "random" (reordering, delays 0 .. 1 h), "equal" (every field constant),
// "jumps" (times jumping by +-2^31 .. 2^62, cutting chunks short), "extremes" (int64 limits).
std::vector<DelayPoint> storeSamples(const QString& kind, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    auto uni = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
    };
    std::vector<DelayPoint> v;
    std::int64_t t = uni(0, 1'000'000'000'000);
    for (std::size_t i = 0; i < n; ++i) {
        DelayPoint p;
        if (kind == "equal") {
            p = DelayPoint{123'456'789, 5'000'000, 5'000'000, 5'000'000};
        } else if (kind == "extremes") {
            const std::int64_t lim[] = {std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max(), 0, -1};
            p.t_ns = lim[uni(0, 3)];
            p.delay_ns = lim[uni(0, 3)];
            p.scheduled_ns = lim[uni(0, 3)];
            p.actual_ns = uni(0, 1) ? lim[uni(0, 3)] : uni(-1000, 1000);
        } else {
            t += uni(-30'000, 100'000);  // nearly increasing: packets reorder
            if (kind == "jumps" && uni(0, 999) == 0) {
                const std::int64_t jumps[] = {std::int64_t{1} << 31, -(std::int64_t{1} << 31) - 1,
                                              std::int64_t{1} << 40, -(std::int64_t{1} << 40),
                                              std::int64_t{1} << 62, 2'147'483'647};
                t += jumps[uni(0, 5)];
            }
            p.t_ns = t;
            p.delay_ns = uni(0, 9) == 0 ? uni(0, 3'600'000'000'000) : uni(19'000'000, 21'000'000);
            p.scheduled_ns = p.delay_ns + (uni(0, 3) == 0 ? uni(0, 5'000'000) : 0);
            p.actual_ns = p.scheduled_ns + uni(0, 20'000);
        }
        v.push_back(p);
    }
    return v;
}

}  // namespace

class ChartsTest : public QObject {
    Q_OBJECT
  private slots:
    void decimateKeepsColumnExtremesInOrder();
    void chartsGetPointsAndDecimate();
    void windowTrimsOldData();
    void onlyHeadsBetweenMoves();
    void storeKeepsFiveMinutes();
    void storeRoundTripIsExact_data();
    void storeRoundTripIsExact();
    void storeTrimAndClear();
    void storeFitsBudget();
    void ratesFromCounterDeltas();
    void densitiesIntegrateToOne();
    void histogramMatchesEmulatorDraws_data();
    void histogramMatchesEmulatorDraws();
    void histogramCatchesUp();
    void csvExportContent();
    void pngExportWritesFourCharts();
    void clearForgetsEverything();
    void pauseStopsRedraws();
    void legendEntriesFitWhole();
    void narrowPanelTabsTheSmallCharts();
    void statsAndDelayOfOneTickDrawnTogether();
    void lateDelayNotHeldBackByStatsRedraw();
    void takenNamesEachMessage();
    void windowStatsReadouts();
    void badInputIsIgnored();
    void windowIsClamped();
};

void ChartsTest::decimateKeepsColumnExtremesInOrder() {
    // column 0: max before min; column 1: min before max; column 2: one point
    const QList<QPointF> in = {{0.1, 5}, {0.2, 9},  {0.3, 7}, {0.5, 1}, {0.9, 4},
                               {1.1, 3}, {1.2, -2}, {1.5, 8}, {1.7, 0}, {2.5, 6}};
    const QList<QPointF> out = decimateMinMax(in, 0.0, 1.0);
    const QList<QPointF> want = {{0.2, 9}, {0.5, 1}, {1.2, -2}, {1.5, 8}, {2.5, 6}};
    QCOMPARE(out, want);

    ColumnDecimator c;
    c.reset(100);
    for (std::int64_t t = 0; t < 1000; ++t)
        c.add(t, static_cast<float>((t * 37) % 101));
    c.add(450, 1000.0f);  // the largest of column 4
    c.add(460, -5.0f);    // the smallest of column 4, after it
    int points = 0;
    std::int64_t last_t = -1;
    bool saw_max = false, saw_min = false, ordered = true;
    c.visit(0, 999, [&](std::int64_t t, float v) {
        ++points;
        if (t == 450 && v == 1000.0f) saw_max = true;
        if (t == 460 && v == -5.0f) saw_min = saw_max;  // after the max
        if (t / 100 == last_t / 100 && t < last_t) ordered = false;
        last_t = t;
    });
    QCOMPARE(points, 20);
    QVERIFY(saw_max);
    QVERIFY(saw_min);
    QVERIFY(ordered);
}

void ChartsTest::chartsGetPointsAndDecimate() {
    Panel p;
    p.resize(1200, 800);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    p.setWindow(10);
    p.setLink(linkMsg(20000, 4000));
    // 100 000 samples over 10 s, in 200 messages; one spike up and one down
    std::mt19937_64 rng(7);
    std::normal_distribution<double> z(20000, 4000);
    const int kMsgs = 200, kPer = 500;
    for (int m = 0; m < kMsgs; ++m) {
        std::vector<std::pair<std::int64_t, double>> s;
        const std::int64_t start = m * (10 * kS / kMsgs), end = (m + 1) * (10 * kS / kMsgs);
        for (int i = 0; i < kPer; ++i) {
            const std::int64_t t = start + i * (end - start) / kPer;
            double v = std::max(1.0, z(rng));
            if (m == 100 && i == 10) v = 90000;
            if (m == 100 && i == 20) v = 100;
            s.emplace_back(t, v);
        }
        p.addDelay(delayMsg(0, start, end, s));
    }
    QCOMPARE(p.storedSamples(0), std::size_t(kMsgs * kPer));
    const std::uint64_t before = p.redrawCount();
    QTRY_VERIFY(p.redrawCount() > before);
    QTRY_VERIFY(p.pointsDrawn("delay.samples") > 0);
    const int cols = p.plotColumns();
    QVERIFY2(cols > 300, qPrintable(QString::number(cols)));
    const int n = p.pointsDrawn("delay.samples");
    QVERIFY2(n <= 2 * cols + 4,
             qPrintable(QStringLiteral("%1 points for %2 columns").arg(n).arg(cols)));
    QVERIFY2(n >= cols, qPrintable(QStringLiteral("%1 points for %2 columns").arg(n).arg(cols)));
    // the whole delay chart (samples, target, band) stays within 2 points per pixel + a few
    QVERIFY(p.pointsDrawn("delay") <= 2 * cols + 20);
    // the spike and the dip are drawn (ms: the values are above 2 ms)
    const QList<QPointF> s = pointsOf(p, "delay", QStringLiteral("A→B actual"));
    QVERIFY(!s.isEmpty());
    QCOMPARE(s.size(), n);
    double lo = 1e300, hi = -1e300, prev_x = -1e300;
    bool increasing = true;
    for (const QPointF& q : s) {
        lo = std::min(lo, q.y());
        hi = std::max(hi, q.y());
        if (q.x() < prev_x) increasing = false;
        prev_x = q.x();
    }
    QCOMPARE(hi, 90.0);
    QCOMPARE(lo, 0.1);
    QVERIFY(increasing);
    QCOMPARE(p.pointsDrawn("nonsense"), -1);
}

void ChartsTest::windowTrimsOldData() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.setWindow(5);
    // 20 s, one sample every 10 ms
    for (int m = 0; m < 20; ++m) {
        std::vector<std::pair<std::int64_t, double>> s;
        for (int i = 0; i < 100; ++i)
            s.emplace_back(m * kS + i * 10'000'000, 1000 + m);
        p.addDelay(delayMsg(0, m * kS, (m + 1) * kS, s));
    }
    QTRY_VERIFY(p.pointsDrawn("delay.samples") > 0);
    // latest time seen: 20 s (end of the last interval): the window is [15 s, 20 s]
    const QList<QPointF> s = pointsOf(p, "delay", QStringLiteral("A→B actual"));
    QVERIFY(!s.isEmpty());
    for (const QPointF& q : s)
        QVERIFY2(q.x() >= 15.0 - 1e-9, qPrintable(QString::number(q.x())));
    QCOMPARE(p.windowStats(0).samples, std::uint64_t(500));  // 15.00 .. 19.99 s
    QCOMPARE(p.windowStats(0).mean_us, 1017.0);
    // a longer window shows the older data again (the store keeps 5 minutes)
    p.setWindow(60);
    QTRY_COMPARE(p.windowStats(0).samples, std::uint64_t(2000));
}

// Between two steps of the time axis (whole columns) a message changes only the heads; a
// sample older than the heads, or a step, lays the bodies out again. What is drawn is the
// same either way: every column's min and max.
void ChartsTest::onlyHeadsBetweenMoves() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.setWindow(300);
    p.setLink(linkMsg(20000, 4000));
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(15000, 25000);
    // 300 s, 20 samples per 1 s message
    std::int64_t end = 0;
    for (int m = 0; m < 300; ++m) {
        std::vector<std::pair<std::int64_t, double>> s;
        for (int i = 0; i < 20; ++i)
            s.emplace_back(m * kS + i * (kS / 20), u(rng));
        end = (m + 1) * kS;
        p.addDelay(delayMsg(0, m * kS, end, s));
    }
    QTRY_VERIFY(p.pointsDrawn("delay.samples") > 0);
    QTRY_VERIFY(!p.redrawIfDue());
    QLineSeries* body = seriesNamed(p, "delay", QStringLiteral("A→B actual"));
    QLineSeries* head = seriesNamed(p, "delay", QStringLiteral("A→B actual (newest)"));
    QVERIFY(body && head);
    QSignalSpy bodySpy(body, &QXYSeries::pointsReplaced), headSpy(head, &QXYSeries::pointsReplaced);
    const double x_before =
        p.chart("delay")->axes(Qt::Horizontal).first()->property("max").toDouble();
    // the axis ends a little after the newest data; up to there, it does not move
    const std::int64_t axis_end = std::llround(x_before * 1e9);
    QVERIFY2(axis_end > end + 2000, qPrintable(QString::number(x_before, 'f', 9)));
    // a new sample in the newest column, within the axis' range
    p.addDelay(delayMsg(0, end, end + 1000, {{end + 500, 24000}}));
    QVERIFY(p.redrawIfDue());
    QCOMPARE(bodySpy.count(), 0);
    QCOMPARE(headSpy.count(), 1);
    QCOMPARE(p.chart("delay")->axes(Qt::Horizontal).first()->property("max").toDouble(), x_before);
    const QList<QPointF> v = pointsOf(p, "delay", QStringLiteral("A→B actual"));
    QVERIFY(std::any_of(v.begin(), v.end(), [&](const QPointF& pt) {
        return std::fabs(pt.x() - static_cast<double>(end + 500) / 1e9) < 1e-9;
    }));
    // a late sample in the middle of the window: the bodies again
    p.addDelay(delayMsg(0, end + 1000, end + 2000, {{150 * kS + 7, 25500}}));
    QVERIFY(p.redrawIfDue());
    const int late = static_cast<int>(bodySpy.count());
    QVERIFY(late > 0);
    // the axis moves: the bodies again
    p.addDelay(delayMsg(0, end + 2000, axis_end + 1, {{axis_end, 20000}}));
    QVERIFY(p.redrawIfDue());
    QVERIFY(bodySpy.count() > late);
    QVERIFY(p.chart("delay")->axes(Qt::Horizontal).first()->property("max").toDouble() > x_before);
    // every column is drawn with at most 2 points
    QVERIFY(p.pointsDrawn("delay.samples") <= 2 * p.plotColumns() + 4);
}

void ChartsTest::storeKeepsFiveMinutes() {
    ChartStore d;
    // 400 s, 1000 samples per second
    for (int sec = 0; sec < 400; ++sec) {
        linkem::proto::DelayMessage m;
        for (int i = 0; i < 1000; ++i)
            m.dir[0].samples.push_back(
                {std::int64_t(sec) * kS + i * 1'000'000, 5'000'000, 5'000'000, 5'000'000});
        d.addDelay(m, std::int64_t(sec + 1) * kS);
    }
    const std::size_t n = d.dir(0).samples.size();
    // 300 s of 1000/s are kept; whole chunks go, so at most a chunk more
    QVERIFY2(n >= 300'000 && n <= 300'000 + kChunkSamples, qPrintable(QString::number(n)));
    QCOMPARE(d.dir(0).samples.count(100 * kS, 400 * kS), std::size_t(300'000));
    QCOMPARE(d.dir(0).samples.count(0, 100 * kS - (kChunkSamples + 1) * 1000000), std::size_t(0));
    // every 7th sample of a range that cuts chunks: the same as counting them one by one
    const std::int64_t lo = 150 * kS + 333'000'000, hi = 260 * kS + 1;
    std::vector<std::int64_t> all, strided;
    std::size_t k = 0;
    d.dir(0).samples.forEach(lo, hi, [&](const DelayPoint& p) {
        if (k++ % 7 == 0) all.push_back(p.t_ns);
    });
    d.dir(0).samples.forEachStrided(lo, hi, 7,
                                    [&](const DelayPoint& p) { strided.push_back(p.t_ns); });
    QVERIFY(all.size() > 10000);
    QVERIFY(all == strided);
    // runs of 5 consecutive samples, one run every 7 * 5: the same as picking them one by one
    std::vector<std::int64_t> runs_all, runs;
    k = 0;
    d.dir(0).samples.forEach(lo, hi, [&](const DelayPoint& p) {
        if (k++ % 35 < 5) runs_all.push_back(p.t_ns);
    });
    d.dir(0).samples.forEachStrided(
        lo, hi, 7, [&](const DelayPoint& p) { runs.push_back(p.t_ns); }, 5);
    QVERIFY(runs_all.size() > 10000);
    QVERIFY(runs_all == runs);
}

void ChartsTest::storeRoundTripIsExact_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<bool>("full");
    for (const char* k : {"random", "equal", "jumps", "extremes"})
        for (bool full : {true, false})
            QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(k, full ? "full" : "measured")))
                << QString::fromLatin1(k) << full;
}

void ChartsTest::storeRoundTripIsExact() {
    QFETCH(QString, kind);
    QFETCH(bool, full);
    const std::size_t n = 5 * kChunkSamples + 1234;
    std::vector<DelayPoint> ref = storeSamples(kind, n, 7);
    if (!full)
        for (DelayPoint& p : ref)
            p.delay_ns = p.scheduled_ns = p.actual_ns;
    SampleRing r(full);
    for (const DelayPoint& p : ref)
        r.add(p);
    QCOMPARE(r.size(), n);
    std::vector<DelayPoint> back;
    r.forEach(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
              [&](const DelayPoint& p) { back.push_back(p); });
    QCOMPARE(back.size(), n);
    for (std::size_t i = 0; i < n; ++i)
        QVERIFY2(samePoint(back[i], ref[i]), qPrintable(QStringLiteral("sample %1").arg(i)));
    // ranges cutting chunks (and the open one), every sample, strides and runs
    std::vector<std::int64_t> times;
    for (const DelayPoint& p : ref)
        times.push_back(p.t_ns);
    std::mt19937_64 g(11);
    for (int k = 0; k < 40; ++k) {
        std::int64_t lo = times[g() % n], hi = times[g() % n];
        if (lo > hi) std::swap(lo, hi);
        if (k == 0) hi = lo;  // one instant
        const std::size_t stride = 1 + g() % 40, run = 1 + g() % 70;
        std::vector<DelayPoint> want, want_strided, got, got_strided;
        linkem::RunningStats m;
        std::size_t j = 0;
        for (const DelayPoint& p : ref) {
            if (p.t_ns < lo || p.t_ns > hi) continue;
            want.push_back(p);
            addCentred(m, static_cast<double>(p.actual_ns));
            if (stride <= 1 || j % (stride * run) < run) want_strided.push_back(p);
            ++j;
        }
        r.forEach(lo, hi, [&](const DelayPoint& p) { got.push_back(p); });
        r.forEachStrided(
            lo, hi, stride, [&](const DelayPoint& p) { got_strided.push_back(p); }, run);
        QCOMPARE(got.size(), want.size());
        QCOMPARE(got_strided.size(), want_strided.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            QVERIFY(samePoint(got[i], want[i]));
        for (std::size_t i = 0; i < got_strided.size(); ++i)
            QVERIFY(samePoint(got_strided[i], want_strided[i]));
        const linkem::RunningStats a = r.actual(lo, hi);
        QCOMPARE(a.count, m.count);
        QCOMPARE(r.count(lo, hi), want.size());
        if (m.count > 0) {
            QCOMPARE(a.min, m.min);
            QCOMPARE(a.max, m.max);
            const double scale = std::max({1.0, std::fabs(m.min), std::fabs(m.max)});
            QVERIFY(std::fabs(a.mean() - m.mean()) <= 1e-9 * scale);
        }
    }
}

void ChartsTest::storeTrimAndClear() {
    // increasing times: trimBefore keeps every sample at or after the cut and drops whole
    // chunks only (sealed ones, then the open one)
    std::vector<DelayPoint> ref;
    for (std::size_t i = 0; i < 4 * kChunkSamples + 100; ++i)
        ref.push_back(DelayPoint{std::int64_t(i) * 50'000, 20'000'000 + std::int64_t(i % 977),
                                 20'000'000 + std::int64_t(i % 977),
                                 20'000'000 + std::int64_t(i % 977) + std::int64_t(i % 13)});
    SampleRing r;
    for (const DelayPoint& p : ref)
        r.add(p);
    std::size_t last_bytes = r.bytes(), prev_first = 0;
    QVERIFY(last_bytes > 0);
    for (const std::size_t cut : {std::size_t{10}, kChunkSamples + 5, 3 * kChunkSamples,
                                  4 * kChunkSamples + 50, 4 * kChunkSamples + 99}) {
        r.trimBefore(ref[cut].t_ns);
        std::vector<DelayPoint> back;
        r.forEach(0, std::numeric_limits<std::int64_t>::max(),
                  [&](const DelayPoint& p) { back.push_back(p); });
        QCOMPARE(back.size(), r.size());
        QVERIFY(back.size() >= ref.size() - cut);
        QVERIFY(back.size() < ref.size() - cut + kChunkSamples);
        const std::size_t first = ref.size() - back.size();
        QCOMPARE(first % kChunkSamples, std::size_t(0));  // whole chunks went
        for (std::size_t i = 0; i < back.size(); ++i)
            QVERIFY(samePoint(back[i], ref[first + i]));
        QCOMPARE(r.count(0, std::numeric_limits<std::int64_t>::max()), back.size());
        QVERIFY(r.bytes() <= last_bytes);
        if (first > prev_first) QVERIFY(r.bytes() < last_bytes);  // sealed chunks went
        prev_first = first;
        last_bytes = r.bytes();
    }
    // past everything: the open chunk goes too
    r.trimBefore(ref.back().t_ns + 1);
    QCOMPARE(r.size(), std::size_t(0));
    QCOMPARE(r.count(0, std::numeric_limits<std::int64_t>::max()), std::size_t(0));
    // adding again after a trim, then clear() gives everything back
    for (const DelayPoint& p : ref)
        r.add(p);
    QCOMPARE(r.size(), ref.size());
    QVERIFY(r.bytes() > 0);
    r.clear();
    QCOMPARE(r.size(), std::size_t(0));
    QCOMPARE(r.bytes(), std::size_t(0));
    std::size_t visits = 0;
    r.forEach(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
              [&](const DelayPoint&) { ++visits; });
    QCOMPARE(visits, std::size_t(0));
    QCOMPARE(r.actual(0, std::numeric_limits<std::int64_t>::max()).count, std::uint64_t(0));
}

void ChartsTest::storeFitsBudget() {
    // samples like linkem-gui-bench's: delays 20 ms +- ~4 ms (sum of four uniforms), lateness
    // 0 .. 20 us, arrivals 50 us apart +- 25 us (a sampled 49 000 frames/s stream), measured
    // = actual + 3 us; the budget of a 300 MB linkem-gui at the protocol's maximum: <= 9 bytes
    // a sample in the full ring, <= 6 in the measured one
    std::mt19937_64 g(3);
    std::uniform_real_distribution<double> u(0, 1);
    SampleRing full(true), measured(false);
    const std::size_t n = 60 * kChunkSamples;
    std::int64_t t = 1'000'000'000;
    for (std::size_t i = 0; i < n; ++i) {
        t += 25'000 + static_cast<std::int64_t>(u(g) * 50'000);
        const double z = (u(g) + u(g) + u(g) + u(g) - 2.0) * std::sqrt(3.0);
        const auto d = static_cast<std::int64_t>(20e6 + 4e6 * z);
        const std::int64_t a = d + static_cast<std::int64_t>(u(g) * 20'000);
        full.add(DelayPoint{t, d, d, a});
        measured.add(DelayPoint{t, a + 3'000, a + 3'000, a + 3'000});
    }
    const double full_b = static_cast<double>(full.bytes()) / static_cast<double>(n);
    const double meas_b = static_cast<double>(measured.bytes()) / static_cast<double>(n);
    qInfo("store: %.2f bytes a sample (full), %.2f (measured)", full_b, meas_b);
    QVERIFY2(full_b <= 9.0, qPrintable(QString::number(full_b)));
    QVERIFY2(meas_b <= 6.0, qPrintable(QString::number(meas_b)));
}

void ChartsTest::ratesFromCounterDeltas() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    // 0.5 s apart: 1000 packets in, 1.5e6 bytes in, 990 out / 1.485e6 bytes, 10 loss, 0 policer
    p.addStats(statsMsg(1 * kS, 5000, 7'500'000, 4950, 7'425'000, 50, 0));
    p.addStats(statsMsg(1 * kS + kS / 2, 6000, 9'000'000, 5940, 8'910'000, 60, 0));
    p.addStats(statsMsg(1 * kS + kS / 2, 6000, 9'000'000, 5940, 8'910'000, 60, 0));  // repeated
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QTRY_VERIFY(p.pointsDrawn("throughput") > 0);
    QCOMPARE(p.pointsDrawn("throughput"), 2);  // one rate point, in and out
    QCOMPARE(p.pointsDrawn("drops"), 1);       // loss; causes without drops are not drawn
    QString error;
    const QString path = dir.filePath("rates.csv");
    QVERIFY2(p.exportCsv(path, &error), qPrintable(error));
    const auto csv = readCsv(path);
    const QList<QStringList>& rates = csv.at(QStringLiteral("rates"));
    QCOMPARE(rates.size(), 2);  // header + one row
    QCOMPARE(rates[0], QStringList({"direction", "t_s", "in_bps", "out_bps", "in_pps", "out_pps",
                                    "drops_loss_per_s", "drops_policer_per_s", "drops_spacer_per_s",
                                    "drops_buffer_full_per_s", "drops_class_per_s",
                                    "drops_aqm_per_s", "ecn_marked_per_s"}));
    const QStringList& r = rates[1];
    QCOMPARE(r[0], QStringLiteral("a_to_b"));
    QCOMPARE(r[1].toDouble(), 1.5);
    QCOMPARE(r[2].toDouble(), 24e6);     // 1.5e6 bytes * 8 / 0.5 s
    QCOMPARE(r[3].toDouble(), 23.76e6);  // 1.485e6 * 8 / 0.5
    QCOMPARE(r[4].toDouble(), 2000.0);
    QCOMPARE(r[5].toDouble(), 1980.0);
    QCOMPARE(r[6].toDouble(), 20.0);
    QCOMPARE(r[7].toDouble(), 0.0);
    // the chart in Mbit/s: 24 and 23.76
    const QList<QPointF> in = pointsOf(p, "throughput", QStringLiteral("A→B in"));
    QCOMPARE(in.size(), 1);
    QCOMPARE(in[0].y(), 24.0);
    // counters going back (linkemd restarted without clear()) start again: no negative rate
    p.addStats(statsMsg(2 * kS, 10, 15000, 10, 15000, 0, 0));
    p.addStats(statsMsg(3 * kS, 1010, 1'515'000, 1010, 1'515'000, 0, 5));
    QTRY_COMPARE(p.pointsDrawn("throughput"), 4);
    QVERIFY2(p.exportCsv(path, &error), qPrintable(error));
    const auto csv2 = readCsv(path);
    QCOMPARE(csv2.at(QStringLiteral("rates")).size(), 3);
    QCOMPARE(csv2.at(QStringLiteral("rates"))[2][4].toDouble(), 1000.0);
    QCOMPARE(csv2.at(QStringLiteral("rates"))[2][7].toDouble(), 5.0);
    // readouts from the newest stats message
    const WindowStats w = p.windowStats(0);
    QCOMPARE(w.alpha, 0.25);
    QCOMPARE(w.rate_pps, 1234.5);
    QCOMPARE(w.in_flight, std::uint64_t(7));
}

void ChartsTest::densitiesIntegrateToOne() {
    for (const char* dist : {"normal", "uniform", "gamma", "lognormal"}) {
        const double mean = 20000, sd = 6000;
        double area = 0, m1 = 0, m2 = 0;
        const double dx = 1.0;
        for (double x = 0.5; x < 200000; x += dx) {
            const double f = distributionDensity(dist, mean, sd, x);
            area += f * dx;
            m1 += x * f * dx;
            m2 += x * x * f * dx;
        }
        const double var = m2 - m1 * m1;
        QVERIFY2(std::fabs(area - 1) < 2e-3, dist);
        QVERIFY2(std::fabs(m1 - mean) < 0.002 * mean, dist);
        QVERIFY2(std::fabs(std::sqrt(var) - sd) < 0.01 * sd, dist);
    }
    QCOMPARE(distributionDensity("constant", 100, 0, 100), 0.0);
}

void ChartsTest::histogramMatchesEmulatorDraws_data() {
    QTest::addColumn<QString>("dist");
    QTest::addColumn<int>("kind");
    QTest::newRow("normal") << "normal" << int(linkem::Distribution::normal);
    QTest::newRow("uniform") << "uniform" << int(linkem::Distribution::uniform);
    QTest::newRow("gamma") << "gamma" << int(linkem::Distribution::gamma);
    QTest::newRow("lognormal") << "lognormal" << int(linkem::Distribution::lognormal);
}

void ChartsTest::histogramMatchesEmulatorDraws() {
    QFETCH(QString, dist);
    QFETCH(int, kind);
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.setWindow(60);
    // (mean 4 sd above 0: the emulator's clamping of negative draws to 0 stays negligible)
    const double mean = 20000, sd = 5000;
    p.setLink(linkMsg(mean, sd, dist.toLatin1().constData()));
    // draws of the emulator's own distribution code, in microseconds
    linkem::DelayDistribution law(static_cast<linkem::Distribution>(kind), mean, sd);
    linkem::Rng rng(99);
    constexpr int kN = 100'000;
    std::vector<std::pair<std::int64_t, double>> s;
    for (int i = 0; i < kN; ++i)
        s.emplace_back(std::int64_t(i) * 500'000, std::max(0.0, law.sample(rng)));
    p.addDelay(delayMsg(0, 0, 50 * kS, s));
    QTRY_VERIFY(p.pointsDrawn("histogram.bars") > 0);
    const Histogram h = p.histogram(0);
    QCOMPARE(h.samples, std::uint64_t(kN));
    QVERIFY(h.density.size() >= 10);
    double area = 0, worst = 0;
    for (std::size_t i = 0; i < h.density.size(); ++i) {
        area += h.density[i] * h.bin_us;
        // the density's mean over the bin
        double f = 0;
        for (int k = 0; k < 20; ++k)
            f += p.density(0, h.lo_us + h.bin_us * (i + (k + 0.5) / 20)) / 20;
        // the bin's count is binomial: allow 5 standard deviations of it, plus 1 %
        const double expected = f * h.bin_us * kN;
        const double tolerance = (5 * std::sqrt(expected) + 0.01 * expected + 3) / (h.bin_us * kN);
        worst = std::max(worst, std::fabs(f - h.density[i]) / tolerance);
    }
    // samples beyond mean +- 6 sd of the data fall outside the bins (lognormal's tail)
    QVERIFY2(area > 0.995 && area <= 1.0 + 1e-9, qPrintable(QString::number(area)));
    QVERIFY2(worst <= 1, qPrintable(QStringLiteral("worst bin at %1 of its tolerance").arg(worst)));
    QVERIFY(p.pointsDrawn("histogram.density") > 100);
}

void ChartsTest::histogramCatchesUp() {
    // the histogram is counted at most every kRecountMs: samples that arrive just after a count
    // still reach it without further messages
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.addDelay(delayMsg(0, 0, kS, {{1, 5}, {2, 6}}));
    QTRY_COMPARE(p.histogram(0).samples, std::uint64_t(2));
    p.addDelay(delayMsg(0, kS, 2 * kS, {{kS + 1, 5}, {kS + 2, 6}, {kS + 3, 7}}));
    QTRY_COMPARE(p.histogram(0).samples, std::uint64_t(5));
    QTRY_VERIFY(!p.redrawIfDue());  // then it rests
}

void ChartsTest::csvExportContent() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.setWindow(5);
    p.setLink(linkMsg(1000, 100));
    // one old sample (outside the 5 s window) and three inside
    p.addDelay(delayMsg(0, 0, kS, {{500'000'000, 111.5}}));
    p.addDelay(delayMsg(1, 9 * kS, 10 * kS, {{9'000'000'001, 1234.567}, {9'500'000'000, 1500}},
                        json{{"count", 40},
                             {"min_ns", 900000},
                             {"max_ns", 1600000},
                             {"mean_ns", 1250000},
                             {"jitter_ns", 100000}}));
    p.addDelay(delayMsg(0, 9 * kS, 10 * kS, {{9'250'000'000, 999.25}}));
    QTRY_VERIFY(p.pointsDrawn("delay.samples") >= 3);
    QTemporaryDir dir;
    QString error;
    const QString path = dir.filePath("data.csv");
    QVERIFY2(p.exportCsv(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY(text.startsWith(QLatin1String("# linkem-gui chart data")));
    QVERIFY(text.contains(QLatin1String("lateness")));
    QVERIFY(text.contains(QLatin1String("not the NIC")));
    const auto csv = readCsv(path);
    const QList<QStringList>& s = csv.at(QStringLiteral("samples"));
    QCOMPARE(s[0],
             QStringList({"direction", "arrival_s", "delay_us", "scheduled_us", "actual_us"}));
    QCOMPARE(s.size(), 4);  // the 0.5 s sample is outside [5 s, 10 s]
    QCOMPARE(s[1], QStringList({"a_to_b", "9.250000000", "997.250", "998.250", "999.250"}));
    QCOMPARE(s[2], QStringList({"b_to_a", "9.000000001", "1232.567", "1233.567", "1234.567"}));
    QCOMPARE(s[3][4].toDouble(), 1500.0);
    const QList<QStringList>& iv = csv.at(QStringLiteral("intervals"));
    QCOMPARE(iv[0].size(), 11);
    QCOMPARE(iv[0][0], QStringLiteral("direction"));
    // a_to_b's intervals [9, 10] (count 0: one of the b_to_a message, one of its own) and
    // b_to_a's
    QCOMPARE(iv.size(), 4);
    QCOMPARE(iv[1][3], QStringLiteral("0"));
    QCOMPARE(iv[3][0], QStringLiteral("b_to_a"));
    QCOMPARE(iv[3][3], QStringLiteral("40"));
    QCOMPARE(iv[3][4].toDouble(), 900.0);
    QCOMPARE(iv[3][5].toDouble(), 1600.0);
    QCOMPARE(iv[3][6].toDouble(), 1250.0);
    QCOMPARE(iv[3][7].toDouble(), 100.0);
    QCOMPARE(csv.at(QStringLiteral("measured")).size(), 1);  // header only
    QCOMPARE(csv.at(QStringLiteral("rates")).size(), 1);
    // an unwritable path fails with a message naming it, and changes nothing
    QVERIFY(!p.exportCsv(dir.filePath("no/such/dir/x.csv"), &error));
    QVERIFY(error.contains(QLatin1String("no/such/dir")));
}

void ChartsTest::pngExportWritesFourCharts() {
    Panel p;
    p.resize(1200, 800);
    p.show();
    p.setLink(linkMsg(20000, 4000));
    std::vector<std::pair<std::int64_t, double>> s;
    for (int i = 0; i < 2000; ++i)
        s.emplace_back(std::int64_t(i) * 5'000'000, 20000 + (i % 50) * 100);
    p.addDelay(delayMsg(0, 0, 10 * kS, s));
    p.addStats(statsMsg(kS, 100, 100000, 100, 100000, 0, 0));
    p.addStats(statsMsg(2 * kS, 200, 200000, 190, 190000, 10, 0));
    QTRY_VERIFY(p.pointsDrawn("delay.samples") > 0);
    QTemporaryDir dir;
    QString error;
    QVERIFY2(p.exportPng(dir.path(), &error), qPrintable(error));
    for (const char* name : {"delay.png", "histogram.png", "throughput.png", "drops.png"}) {
        const QString path = dir.filePath(QString::fromLatin1(name));
        QVERIFY2(QFileInfo(path).size() > 1000, name);
        QImage img(path);
        QVERIFY2(!img.isNull() && img.width() > 100 && img.height() > 100, name);
    }
    // the delay chart shows A->B's colour (31, 119, 180) somewhere: points are plotted
    QImage img(dir.filePath("delay.png"));
    int blue = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QColor c = img.pixelColor(x, y);
            if (std::abs(c.red() - 31) < 12 && std::abs(c.green() - 119) < 12 &&
                std::abs(c.blue() - 180) < 12)
                ++blue;
        }
    QVERIFY2(blue > 200, qPrintable(QString::number(blue)));
    QVERIFY(!p.exportPng(dir.filePath("missing"), &error));
    QVERIFY(error.contains(QLatin1String("missing")));
}

void ChartsTest::clearForgetsEverything() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.addDelay(delayMsg(0, 0, kS, {{1, 5}, {2, 6}}));
    p.addStats(statsMsg(kS, 1, 1, 1, 1, 0, 0));
    p.addStats(statsMsg(2 * kS, 2, 2, 2, 2, 0, 0));
    QTRY_VERIFY(p.pointsDrawn("delay.samples") > 0 && p.pointsDrawn("throughput") > 0);
    p.clear();
    QCOMPARE(p.storedSamples(0), std::size_t(0));
    QCOMPARE(p.pointsDrawn("delay"), 0);
    QCOMPARE(p.pointsDrawn("throughput"), 0);
    QCOMPARE(p.pointsDrawn("drops"), 0);
    QCOMPARE(p.pointsDrawn("histogram"), 0);
    QCOMPARE(p.windowStats(0).samples, std::uint64_t(0));
    // a new instance's counters start from 0 without a bogus rate from the old ones
    p.addStats(statsMsg(kS / 2, 10, 10, 10, 10, 0, 0));
    p.addStats(statsMsg(kS, 20, 20, 20, 20, 0, 0));
    QTRY_COMPARE(p.pointsDrawn("throughput"), 2);
}

// linkemd sends a stats message and then a delay message in the same tick: the first redraw
// after the stats message waits for the delay message (up to 8 ms) and draws both, instead of
// drawing the stats at once and the delay message 30 ms later.
void ChartsTest::statsAndDelayOfOneTickDrawnTogether() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    p.addDelay(delayMsg(0, 0, kS, {{1, 5}, {2, 6}}));
    QTRY_COMPARE(p.pointsDrawn("delay.samples"), 2);
    // settled: the histogram's recount (kRecountMs) done, no redraw in the last 60 ms (the
    // 30 ms spacing is over)
    for (int i = 0; i < 100; ++i) {
        QSignalSpy quiet(&p, &ChartsPanel::redrawn);
        QTest::qWait(60);
        if (quiet.isEmpty() && i * 60 > HistogramChart::kRecountMs + 60) break;
    }
    int delay_points = -1;
    QSignalSpy spy(&p, &ChartsPanel::redrawn);
    connect(&p, &ChartsPanel::redrawn, this, [&] {
        if (delay_points < 0) delay_points = p.pointsDrawn("delay.samples");
    });
    QElapsedTimer t;
    t.start();
    p.addStats(statsMsg(kS, 20, 20, 20, 20, 0, 0));
    {  // the delay message is parsed on the client thread meanwhile; the UI thread's event
       // loop runs (QTest::qWait would sleep instead of dispatching the charts' timers)
        QEventLoop loop;
        QTimer::singleShot(3, Qt::PreciseTimer, &loop, &QEventLoop::quit);
        loop.exec();
    }
    const qint64 gap = t.elapsed();
    const bool drawn_before = spy.count() > 0;
    p.addDelay(delayMsg(0, kS, 2 * kS, {{kS + 1, 5}, {kS + 2, 6}}));
    QTRY_VERIFY(spy.count() > 0);
    if (gap >= 8)
        QSKIP(qPrintable(QStringLiteral("timing bound: skipped: the 3 ms wait between the two "
                                        "messages took %1 ms (busy machine)")
                             .arg(gap)));
    QVERIFY2(!drawn_before, "the stats message was drawn before its delay message came");
    QCOMPARE(delay_points, 4);
}

// A delay message that comes after its tick's stats message was drawn alone (later than the
// 8 ms the stats message waits) is drawn at once, not 30 ms after the stats' redraw: it is
// spaced from the last redraw that drew a delay message.
void ChartsTest::lateDelayNotHeldBackByStatsRedraw() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    std::int64_t t0 = 0;
    p.addDelay(delayMsg(0, t0, t0 + kS, {{t0 + 1, 5}, {t0 + 2, 6}}));
    QTRY_COMPARE(p.pointsDrawn("delay.samples"), 2);
    // Three tries (a busy machine stalls the UI thread now and then): in one at least the
    // delay message is drawn within 15 ms; held back by the spacing it takes 28 ms or more.
    QList<qint64> took;
    for (int attempt = 0; attempt < 3; ++attempt) {
        for (int i = 0; i < 100; ++i) {  // settled, as above
            QSignalSpy quiet(&p, &ChartsPanel::redrawn);
            QTest::qWait(60);
            if (quiet.isEmpty() && i * 60 > HistogramChart::kRecountMs + 60) break;
        }
        t0 += kS;
        // the delay message comes 2 ms after the stats message's redraw (drawn alone, after
        // its 8 ms wait for the delay message)
        QElapsedTimer t;
        qint64 stats_drawn = -1, delay_drawn = -1;
        auto c = connect(&p, &ChartsPanel::redrawn, this, [&] {
            if (stats_drawn < 0) {
                stats_drawn = t.elapsed();
                QTimer::singleShot(2, Qt::PreciseTimer, this, [&] {
                    t.start();
                    p.addDelay(delayMsg(0, t0, t0 + kS, {{t0 + 1, 5}, {t0 + 2, 6}}));
                });
            } else if (delay_drawn < 0) {
                delay_drawn = t.elapsed();
            }
        });
        t.start();
        p.addStats(statsMsg(t0, 20, 20, 20, 20, 0, 0));
        {
            QEventLoop loop;  // the charts' timers run (as in the test above)
            QTimer check;
            connect(&check, &QTimer::timeout, &loop, [&] {
                if (delay_drawn >= 0 || t.elapsed() > 500) loop.quit();
            });
            check.start(1);
            loop.exec();
        }
        disconnect(c);
        QVERIFY(stats_drawn >= 0 && delay_drawn >= 0);
        took << delay_drawn;
        if (delay_drawn <= 15) break;
    }
    QCOMPARE(p.pointsDrawn("delay.samples"), 2 * static_cast<int>(took.size()) + 2);
    QVERIFY2(*std::min_element(took.begin(), took.end()) <= 15,
             qPrintable(QStringLiteral("the delay message was drawn %1 ms after it came (three "
                                       "tries): held back by the spacing after the stats "
                                       "message's redraw")
                            .arg(took.last())));
}

// Each message taken in is announced with its kind and t_ns (what linkem-gui-bench times the
// drawing latency from), also one whose t_ns cannot be read.
void ChartsTest::takenNamesEachMessage() {
    Panel p;
    QSignalSpy spy(&p, &ChartsPanel::taken);
    p.addStats(statsMsg(kS, 20, 20, 20, 20, 0, 0));
    p.addDelay(delayMsg(0, kS, 2 * kS, {{kS + 1, 5}}));
    json bad = delayMsg(0, 2 * kS, 3 * kS, {{2 * kS + 1, 5}});
    bad["t_ns"] = "soon";
    p.addDelay(bad);  // refused whole: not taken
    QCOMPARE(spy.count(), 2);
    QCOMPARE(p.model.refused(), std::uint64_t(1));
    QCOMPARE(spy[0][0].toBool(), false);
    QCOMPARE(spy[0][1].toLongLong(), statsMsg(kS, 20, 20, 20, 20, 0, 0)["t_ns"].get<qint64>());
    QCOMPARE(spy[1][0].toBool(), true);
    QCOMPARE(spy[1][1].toLongLong(), delayMsg(0, kS, 2 * kS, {{kS + 1, 5}})["t_ns"].get<qint64>());
}

// With both directions, measured traffic and all four drop causes, the delay and drops charts
// each show four legend entries; in a panel of 1100x600 (the drops chart a third of its width)
// none is cut short ("A→B mea..."), and no text of the charts overlaps another.
void ChartsTest::legendEntriesFitWhole() {
    Panel p;
    p.resize(1100, 600);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    for (int d = 0; d < 2; ++d) {
        json m = delayMsg(d, 0, kS, {{kS / 4, 5000}, {kS / 2, 6000}});
        m[kDirectionKeys[d]]["measured"] = {{"send_ns", {kS / 3, kS / 2}},
                                            {"delay_ns", {5'500'000, 6'500'000}}};
        p.addDelay(m);
    }
    for (int i = 1; i <= 3; ++i) {
        json st = statsMsg(i * kS, 100 * i, 10000 * i, 80 * i, 8000 * i, 3 * i, 2 * i);
        st["a_to_b"]["drops_spacer"] = std::uint64_t(4 * i);
        st["a_to_b"]["drops_buffer_full"] = std::uint64_t(i);
        st["b_to_a"] = st["a_to_b"];
        p.addStats(st);
    }
    auto visible = [&](const char* chart) {
        QStringList labels;
        for (QLegendMarker* m : p.chart(chart)->legend()->markers())
            if (m->isVisible()) labels << m->label();
        return labels;
    };
    QTRY_COMPARE(visible("delay").size(), 4);
    QTRY_COMPARE(visible("drops").size(), 4);
    QCOMPARE(visible("delay"), (QStringList{"A→B", "B→A", "A→B measured", "B→A measured"}));
    QCOMPARE(visible("drops"), (QStringList{"loss", "policer", "spacer", "buffer full"}));
    QTest::qWait(100);  // laid out
    for (const char* chart : {"delay", "drops"}) {
        QList<QGraphicsItem*> items = p.chart(chart)->legend()->childItems();
        int texts = 0;
        while (!items.isEmpty()) {
            QGraphicsItem* it = items.takeFirst();
            items += it->childItems();
            if (auto* t = dynamic_cast<QGraphicsTextItem*>(it); t && t->isVisible()) {
                ++texts;
                const QString s = t->toPlainText();
                QVERIFY2(!s.endsWith(QStringLiteral("...")) && !s.endsWith(QChar(0x2026)),
                         qPrintable(QStringLiteral("%1 legend: '%2' cut short").arg(chart, s)));
            }
        }
        QVERIFY2(texts >= 4, chart);
        const QStringList problems = chartTextProblems(p.chart(chart));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }
}

// A panel too narrow for three small charts side by side puts the four in tabs; the chart of
// the tab shown draws, and a chart shown later draws whole.
void ChartsTest::narrowPanelTabsTheSmallCharts() {
    Panel p;
    p.resize(800, 600);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    p.addStats(statsMsg(kS, 10, 15000, 10, 15000, 0, 0));
    p.addStats(statsMsg(2 * kS, 1010, 1'515'000, 1010, 1'515'000, 0, 0));
    p.addDelay(delayMsg(0, 0, 2 * kS, {{1, 5}, {2, 6}}));
    auto* tabs = p.findChild<QTabWidget*>("charts_tabs");
    QVERIFY(tabs && tabs->isVisible());
    QCOMPARE(tabs->count(), 4);
    QTRY_VERIFY(p.pointsDrawn("histogram.bars") > 0);
    QCOMPARE(p.pointsDrawn("throughput"), 0);  // hidden: not drawn
    tabs->setCurrentIndex(1);
    QTRY_VERIFY(p.pointsDrawn("throughput") > 0);
    p.resize(1300, 600);
    QTRY_VERIFY(!tabs->isVisible());
    QTRY_VERIFY(p.pointsDrawn("drops") >= 0 && p.renderer("drops")->view()->isVisible());
    // three across, the throughput and the queue share the middle place; four across from
    // 1340 px
    auto* pair = p.findChild<QTabWidget*>("charts_throughput_queue_tabs");
    QVERIFY(pair && pair->isVisible());
    QCOMPARE(pair->count(), 2);
    QVERIFY(!p.renderer("queue")->view()->isVisible());
    p.resize(1400, 600);
    QTRY_VERIFY(!pair->isVisible());
    QTRY_VERIFY(p.renderer("queue")->view()->isVisible());
    QVERIFY(p.renderer("drops")->view()->isVisible());
}

void ChartsTest::pauseStopsRedraws() {
    Panel p;
    p.resize(1200, 700);
    p.show();
    p.addDelay(delayMsg(0, 0, kS, {{1, 5}, {2, 6}}));
    QTRY_COMPARE(p.pointsDrawn("delay.samples"), 2);
    QSignalSpy spy(&p, &ChartsPanel::redrawn);
    p.setPaused(true);
    QVERIFY(p.paused());
    const std::uint64_t count = p.redrawCount();
    p.addDelay(delayMsg(0, kS, 2 * kS, {{kS + 1, 5}, {kS + 2, 6}, {kS + 3, 7}}));
    QVERIFY(!p.redrawIfDue());
    QTest::qWait(300);  // ten timer periods: none may redraw
    QCOMPARE(spy.count(), 0);
    QCOMPARE(p.redrawCount(), count);
    QCOMPARE(p.pointsDrawn("delay.samples"), 2);
    QCOMPARE(p.storedSamples(0), std::size_t(5));  // still receiving
    p.setPaused(false);
    QTRY_VERIFY(spy.count() > 0);
    QTRY_VERIFY(p.pointsDrawn("delay.samples") > 2);
    // nothing new: no redraw
    QTRY_VERIFY(!p.redrawIfDue());
    const std::uint64_t after = p.redrawCount();
    QVERIFY(!p.redrawIfDue());
    QCOMPARE(p.redrawCount(), after);
    // clear() while paused empties the charts at once
    p.setPaused(true);
    p.clear();
    QCOMPARE(p.pointsDrawn("delay"), 0);
    QVERIFY(p.paused());
}

void ChartsTest::windowStatsReadouts() {
    Panel p;
    p.resize(1200, 700);
    p.setWindow(10);
    p.setLink(linkMsg(1000, 100));
    // actual delays 900 and 1100 alternating: mean 1000, sd 100
    std::vector<std::pair<std::int64_t, double>> s;
    for (int i = 0; i < 1000; ++i)
        s.emplace_back(std::int64_t(i) * 1'000'000, i % 2 ? 1100 : 900);
    json m = delayMsg(0, 0, kS, s);
    m["a_to_b"]["lateness"] = {
        {"count", 1000}, {"min_ns", 100}, {"max_ns", 40000}, {"mean_ns", 2000}, {"jitter_ns", 500}};
    m["a_to_b"]["measured"] = {{"send_ns", {1, 2}}, {"delay_ns", {1'050'000, 1'150'000}}};
    m["a_to_b"]["measured_delay"] = {{"count", 2},
                                     {"min_ns", 1'050'000},
                                     {"max_ns", 1'150'000},
                                     {"mean_ns", 1'100'000},
                                     {"jitter_ns", 50'000}};
    p.addDelay(m);
    json m2 = delayMsg(0, kS, 2 * kS, {});
    m2["a_to_b"]["lateness"] = {
        {"count", 3000}, {"min_ns", 100}, {"max_ns", 10000}, {"mean_ns", 6000}, {"jitter_ns", 500}};
    p.addDelay(m2);
    QVERIFY(p.redrawIfDue());
    const WindowStats w = p.windowStats(0);
    QCOMPARE(w.samples, std::uint64_t(1000));
    QCOMPARE(w.mean_us, 1000.0);
    QVERIFY(std::fabs(w.jitter_us - 100.0) < 1e-6);
    QCOMPARE(w.target_mean_us, 1000.0);
    QCOMPARE(w.target_jitter_us, 100.0);
    QVERIFY(std::fabs(w.mean_dev_pct) < 1e-9);
    QVERIFY(std::fabs(w.jitter_dev_pct) < 1e-6);
    QCOMPARE(w.lateness_mean_us, 5.0);  // (1000 * 2 + 3000 * 6) / 4000 us
    QCOMPARE(w.lateness_max_us, 40.0);
    QVERIFY(w.has_measured);
    QCOMPARE(w.measured_mean_us, 1100.0);
    QCOMPARE(w.measured_jitter_us, 50.0);
    QCOMPARE(p.pointsDrawn("delay.measured"), 2);
    // against another target
    p.setLink(linkMsg(800, 200));
    const WindowStats w2 = p.windowStats(0);
    QCOMPARE(w2.mean_dev_pct, 25.0);
    QVERIFY(std::fabs(w2.jitter_dev_pct + 50.0) < 1e-6);
    // the other direction has nothing
    QCOMPARE(p.windowStats(1).samples, std::uint64_t(0));
    QVERIFY(!p.windowStats(1).has_measured);
}

// A message the protocol's decoders refuse is dropped whole (nothing of it is drawn) and
// counted; the good ones around it are taken.
void ChartsTest::badInputIsIgnored() {
    Panel p;
    p.resize(1200, 700);
    p.addDelay(json::array());
    p.addDelay(json{{"a_to_b", "x"}});
    json bad = delayMsg(0, 0, kS, {{1, 5}, {3, 7}});
    bad["a_to_b"]["samples"]["arrival_ns"][1] = "x";
    p.addDelay(bad);
    json short_ = delayMsg(1, 0, kS, {{5, 5}});
    short_["b_to_a"]["samples"]["actual_ns"] = json::array();
    p.addDelay(short_);
    json count = delayMsg(0, 0, kS, {});
    count["a_to_b"]["delay"] = {{"count", "many"}};
    p.addDelay(count);
    p.addStats(json{{"t_ns", "soon"}});
    json st = statsMsg(5, 1, 1, 1, 1, 0, 0);
    st["a_to_b"]["packets_in"] = "many";
    p.addStats(st);
    QCOMPARE(p.model.refused(), std::uint64_t(7));
    QCOMPARE(p.storedSamples(0), std::size_t(0));
    QCOMPARE(p.storedSamples(1), std::size_t(0));
    p.addDelay(delayMsg(0, 0, kS, {{1, 5}}));
    QCOMPARE(p.storedSamples(0), std::size_t(1));
    QVERIFY(p.redrawIfDue());
    QCOMPARE(p.pointsDrawn("delay.samples"), 1);
}

void ChartsTest::windowIsClamped() {
    Panel p;
    p.setWindow(0.5);
    QCOMPARE(p.window(), 1.0);  // from 1 s: the correlated wander shows
    p.setWindow(1);
    QCOMPARE(p.window(), 1.0);
    p.setWindow(1000);
    QCOMPARE(p.window(), 300.0);
    p.setWindow(std::nan(""));
    QCOMPARE(p.window(), 300.0);
    p.setWindow(42);
    QCOMPARE(p.window(), 42.0);
    p.setChartStyle(ChartStyle::stage());
    QVERIFY(p.chartStyle().antialias);
}

QTEST_MAIN(ChartsTest)
#include "test_charts.moc"
