// linkem-charts-preview: feeds ChartsPanel with synthetic telemetry (the `stats` and
// `delay` bodies of docs/protocol.md, section 4) and writes the four charts as PNGs and
// the visible data as CSV. For looking at the charts without linkemd:
//
//   QT_QPA_PLATFORM=offscreen linkem-charts-preview OUTDIR [--seconds 60] [--window 30]
//       [--samples 2000] [--projector] [--width 1600 --height 1000]
//
// It prints the readouts, the points drawn and the CPU time of this thread for feeding a
// `delay` message, one redraw and one paint of the whole panel.
//
// A->B: correlated, normal, 20 ms +- 4 ms at 100 000 packets/s with 1 % loss, changed to
// 40 ms +- 2 ms halfway; built-in traffic measured at 200 frames/s.
// B->A: uncorrelated (order kept), gamma, 10 ms +- 3 ms at 20 000 packets/s, with a spacer
// that drops a little.
#include <time.h>
#include <cmath>
#include <cstdio>
#include <random>

#include <QApplication>
#include <QChart>
#include <QDir>
#include <QElapsedTimer>
#include <QGraphicsItem>
#include <QLegend>
#include <QLegendMarker>
#include <QPixmap>
#include <QString>
#include <nlohmann/json.hpp>

#include "chart_data.hpp"
#include "charts_panel.hpp"

using linkem::gui::ChartsPanel;
using nlohmann::json;

namespace {

struct Dir {
    double mean_us, jitter_us, pps, loss;
    bool correlated;
    std::string distribution;
    double d_us = 0;  // AR(1) state
    double prev_depart_ns = 0;
    double c[8] = {};  // cumulative counters
};

json link(const Dir& a, const Dir& b) {
    auto one = [](const Dir& d) {
        return json{{"mean_delay_us", d.mean_us},
                    {"jitter_us", d.jitter_us},
                    {"distribution", d.distribution},
                    {"strategy", d.correlated ? "correlated" : "uncorrelated"}};
    };
    return json{{"a_to_b", one(a)}, {"b_to_a", one(b)}};
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QString out = QStringLiteral(".");
    double seconds = 60, window = 30, samples_per_s = 2000;
    int width = 1600, height = 1000;
    bool projector = false;
    for (int i = 1; i < argc; ++i) {
        const QString a = QString::fromLocal8Bit(argv[i]);
        auto next = [&]() -> double {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", argv[i]);
                std::exit(2);
            }
            return QString::fromLocal8Bit(argv[++i]).toDouble();
        };
        if (a == "--seconds")
            seconds = next();
        else if (a == "--window")
            window = next();
        else if (a == "--width")
            width = static_cast<int>(next());
        else if (a == "--height")
            height = static_cast<int>(next());
        else if (a == "--samples")
            samples_per_s = next();
        else if (a == "--projector")
            projector = true;
        else if (a.startsWith("--")) {
            std::fprintf(stderr,
                         "unknown option %s (allowed: --seconds, --window, --width, --height, "
                         "--samples, --projector)\n",
                         argv[i]);
            return 2;
        } else {
            out = a;
        }
    }
    QDir().mkpath(out);

    ChartsPanel panel;
    panel.resize(width, height);
    panel.setWindow(window);
    panel.setProjectorMode(projector);
    panel.show();

    std::mt19937_64 rng(42);
    std::normal_distribution<double> z;
    Dir dirs[2] = {{20000, 4000, 100000, 0.01, true, "normal"},
                   {10000, 3000, 20000, 0.0, false, "gamma"}};
    panel.setLink(link(dirs[0], dirs[1]));
    const double kSamplesPerS = samples_per_s;
    constexpr double kDelayHz = 20, kStatsHz = 10;
    // CPU time of this thread: the figures do not depend on what else the machine runs
    struct {
        qint64 t0 = 0;
        static qint64 now() {
            timespec ts{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
            return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
        }
        void start() { t0 = now(); }
        qint64 nsecsElapsed() const { return now() - t0; }
    } clock;
    qint64 feed_ns = 0;
    const std::int64_t step = static_cast<std::int64_t>(1e9 / kDelayHz);
    std::uint64_t seq = 0;
    for (std::int64_t t = step; t <= static_cast<std::int64_t>(seconds * 1e9); t += step) {
        if (t > seconds * 0.5e9 && dirs[0].mean_us == 20000) {
            dirs[0].mean_us = 40000;
            dirs[0].jitter_us = 2000;
            panel.setLink(link(dirs[0], dirs[1]));
        }
        json delay = {{"v", 1}, {"instance_id", "0000000000000001"}, {"seq", seq}, {"t_ns", t}};
        for (int d = 0; d < 2; ++d) {
            Dir& D = dirs[d];
            json arr = json::array(), del = json::array(), sch = json::array(), act = json::array();
            linkem::gui::Moments all, late;
            const int n = static_cast<int>(kSamplesPerS / kDelayHz);
            std::gamma_distribution<double> g(D.mean_us * D.mean_us / (D.jitter_us * D.jitter_us),
                                              D.jitter_us * D.jitter_us / D.mean_us);
            const double rho = std::pow(0.5, (D.pps / kSamplesPerS) / (21e-3 * D.pps));
            for (int i = 0; i < n; ++i) {
                const double arrival = static_cast<double>(t - step) + (i + 0.5) * step / n;
                double dl;
                if (D.correlated) {
                    if (D.d_us == 0) D.d_us = D.mean_us;
                    D.d_us = D.mean_us + rho * (D.d_us - D.mean_us) +
                             std::sqrt(1 - rho * rho) * D.jitter_us * z(rng);
                    dl = std::max(0.0, D.d_us);
                } else {
                    dl = D.distribution == "gamma" ? g(rng) : D.mean_us + D.jitter_us * z(rng);
                }
                // order kept: wait behind the previous packet's departure
                double sched = dl;
                const double depart = arrival + dl * 1e3;
                if (!D.correlated && depart < D.prev_depart_ns)
                    sched = (D.prev_depart_ns - arrival) / 1e3;
                D.prev_depart_ns = std::max(D.prev_depart_ns, depart);
                const double lat = std::abs(z(rng)) * 2 + (rng() % 1000 == 0 ? 300 : 0);
                arr.push_back(static_cast<std::int64_t>(arrival));
                del.push_back(static_cast<std::int64_t>(dl * 1e3));
                sch.push_back(static_cast<std::int64_t>(sched * 1e3));
                act.push_back(static_cast<std::int64_t>((sched + lat) * 1e3));
                all.add(dl * 1e3);
                late.add(lat * 1e3);
            }
            // the interval's summary stands for every packet: widen by the unsampled ones
            const double extra = D.jitter_us * 1e3 * 0.6;
            json body = {{"start_ns", t - step},
                         {"end_ns", t},
                         {"samples",
                          {{"arrival_ns", arr},
                           {"delay_ns", del},
                           {"scheduled_ns", sch},
                           {"actual_ns", act}}},
                         {"delay",
                          {{"count", static_cast<std::uint64_t>(D.pps / kDelayHz)},
                           {"min_ns", all.min - extra},
                           {"max_ns", all.max + extra},
                           {"mean_ns", all.mean},
                           {"jitter_ns", all.sd()}}},
                         {"lateness",
                          {{"count", static_cast<std::uint64_t>(D.pps / kDelayHz)},
                           {"min_ns", late.min},
                           {"max_ns", late.max},
                           {"mean_ns", late.mean},
                           {"sd_ns", late.sd()}}},
                         {"samples_dropped", 0}};
            if (d == 0) {
                json send = json::array(), md = json::array();
                linkem::gui::Moments m;
                for (int i = 0; i < 10; ++i) {
                    const double s = static_cast<double>(t - step) + i * step / 10.0;
                    const double v = (D.d_us + 30 + std::abs(z(rng)) * 5) * 1e3;
                    send.push_back(static_cast<std::int64_t>(s));
                    md.push_back(static_cast<std::int64_t>(v));
                    m.add(v);
                }
                body["measured"] = {{"send_ns", send}, {"delay_ns", md}};
                body["measured_delay"] = {{"count", m.n},
                                          {"min_ns", m.min},
                                          {"max_ns", m.max},
                                          {"mean_ns", m.mean},
                                          {"sd_ns", m.sd()}};
            }
            delay[linkem::gui::kDirectionKeys[d]] = body;
        }
        clock.start();
        panel.addDelay(delay);
        feed_ns += clock.nsecsElapsed();
        if (seq % static_cast<std::uint64_t>(kDelayHz / kStatsHz) == 0) {
            json stats = {
                {"v", 1}, {"instance_id", "0000000000000001"}, {"t_ns", t}, {"final", false}};
            for (int d = 0; d < 2; ++d) {
                Dir& D = dirs[d];
                const double dt = 1.0 / kStatsHz;
                const double wobble = 1 + 0.1 * std::sin(static_cast<double>(t) / 3e9 + d);
                const double pin = D.pps * dt * wobble;
                const double loss = pin * D.loss * (1 + 0.5 * z(rng));
                const double spacer = d == 1 && (t / 1000000000) % 10 > 6 ? pin * 0.02 : 0;
                const double pout = pin - std::max(0.0, loss) - spacer;
                D.c[0] += pin;
                D.c[1] += pin * 1000;
                D.c[2] += pout;
                D.c[3] += pout * 1000;
                D.c[4] += std::max(0.0, loss);
                D.c[6] += spacer;
                stats[linkem::gui::kDirectionKeys[d]] = {{"packets_in", std::llround(D.c[0])},
                                                         {"bytes_in", std::llround(D.c[1])},
                                                         {"packets_out", std::llround(D.c[2])},
                                                         {"bytes_out", std::llround(D.c[3])},
                                                         {"drops_loss", std::llround(D.c[4])},
                                                         {"drops_policer", 0},
                                                         {"drops_spacer", std::llround(D.c[6])},
                                                         {"drops_buffer_full", 0},
                                                         {"in_flight", 2000},
                                                         {"alpha", 0.9995},
                                                         {"rate_pps", D.pps}};
            }
            panel.addStats(stats);
        }
        ++seq;
    }
    app.processEvents();
    panel.redrawIfDue();
    app.processEvents();
    panel.redrawIfDue();  // again after the layout settled
    if (qEnvironmentVariableIsSet("LINKEM_PREVIEW_DEBUG")) {
        QChart* c = panel.chart("throughput");
        for (QLegendMarker* m : c->legend()->markers())
            std::printf("marker '%s' visible %d\n", m->label().toUtf8().constData(),
                        m->isVisible());
        std::printf("legend geometry %f %f %f %f\n", c->legend()->geometry().x(),
                    c->legend()->geometry().y(), c->legend()->geometry().width(),
                    c->legend()->geometry().height());
        for (QGraphicsItem* it : c->legend()->childItems())
            for (QGraphicsItem* k : it->childItems())
                std::printf("  item type %d pos %f %f visible %d\n", k->type(), k->scenePos().x(),
                            k->scenePos().y(), k->isVisible());
    }
    // Redraw cost: a small message, then a redraw, 50 times.
    qint64 redraw_sum = 0, redraw_max = 0;
    const std::int64_t end = static_cast<std::int64_t>(seconds * 1e9);
    for (int i = 0; i < 50; ++i) {
        panel.addDelay(
            json{{"t_ns", end + i},
                 {"a_to_b", {{"samples", {{"arrival_ns", {end}}, {"actual_ns", {20'000'000}}}}}}});
        clock.start();
        panel.redrawIfDue();
        const qint64 ns = clock.nsecsElapsed();
        redraw_sum += ns;
        redraw_max = std::max(redraw_max, ns);
    }
    // Paint cost: the whole panel rendered into a pixmap, 10 times.
    qint64 paint_sum = 0;
    for (int i = 0; i < 10; ++i) {
        clock.start();
        const QPixmap pm = panel.grab();
        paint_sum += clock.nsecsElapsed();
    }
    long rss_kb = 0;
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
        char line[256];
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "VmRSS: %ld", &rss_kb) == 1) break;
        std::fclose(f);
    }
    std::printf(
        "samples/s per direction %.0f, %.0f s, window %.0f s: addDelay %.1f us per "
        "message (%zu + %zu samples stored), redraw mean %.2f ms max %.2f ms, paint %.2f ms (CPU "
        "time), RSS %.0f MB\n",
        kSamplesPerS, seconds, window, feed_ns / 1e3 / static_cast<double>(seq),
        panel.storedSamples(0), panel.storedSamples(1), redraw_sum / 50 / 1e6, redraw_max / 1e6,
        paint_sum / 10 / 1e6, rss_kb / 1024.0);
    QString error;
    if (!panel.exportPng(out, &error) ||
        !panel.exportCsv(QDir(out).filePath(QStringLiteral("charts.csv")), &error)) {
        std::fprintf(stderr, "%s\n", error.toLocal8Bit().constData());
        return 1;
    }
    for (int d = 0; d < 2; ++d) {
        const linkem::gui::WindowStats w = panel.windowStats(d);
        std::printf(
            "%s: %llu samples, mean %.1f us (target %.1f, %+.1f %%), sd %.1f us (target %.1f, "
            "%+.1f %%), lateness mean %.2f max %.2f us, measured %s %.1f/%.1f us\n",
            linkem::gui::kDirectionKeys[d], static_cast<unsigned long long>(w.samples), w.mean_us,
            w.target_mean_us, w.mean_dev_pct, w.sd_us, w.target_jitter_us, w.jitter_dev_pct,
            w.lateness_mean_us, w.lateness_max_us, w.has_measured ? "yes" : "no",
            w.measured_mean_us, w.measured_sd_us);
    }
    std::printf("points: delay %d (columns %d), histogram %d, throughput %d, drops %d\n",
                panel.pointsDrawn("delay"), panel.plotColumns(), panel.pointsDrawn("histogram"),
                panel.pointsDrawn("throughput"), panel.pointsDrawn("drops"));
    return 0;
}
