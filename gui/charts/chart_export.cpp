#include "chart_export.hpp"

#include <QChartView>
#include <QDir>
#include <QPixmap>
#include <QSaveFile>
#include <QTextStream>

#include "chart_renderer.hpp"

namespace linkem::gui {

QString delayIncludesText() {
    return QStringLiteral(
        "Actual delay = the emulated delay + the spacer's queueing (+ the wait behind an "
        "earlier packet when order is kept) + lateness (the data plane's polling and "
        "stalls); not the NIC's transmit queue or the wire.");
}

bool exportCsv(const ChartStore& store, std::int64_t lo, std::int64_t hi, const QString& path,
               QString* error) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = QObject::tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    QTextStream o(&f);
    auto sec = [](std::int64_t t) { return QString::number(static_cast<double>(t) / 1e9, 'f', 9); };
    auto us = [](double ns) { return QString::number(ns / 1e3, 'f', 3); };
    auto usNs = [](std::int64_t ns) {  // exactly the ns received, as microseconds
        const std::uint64_t m = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : ns;
        return QStringLiteral("%1%2.%3")
            .arg(ns < 0 ? QStringLiteral("-") : QString())
            .arg(m / 1000)
            .arg(m % 1000, 3, 10, QLatin1Char('0'));
    };
    o << "# linkem-gui chart data: the visible time window, " << sec(lo) << " s to " << sec(hi)
      << " s of linkemd's data-plane clock (seconds since linkemd started).\n"
      << "# Five sections, each a '# [name]' line, a header line naming the columns with "
         "their units, then rows; lines starting with '#' are comments.\n"
      << "# " << delayIncludesText() << "\n"
      << "# [samples] one row per sampled packet: arrival time; delay drawn by the emulator; "
         "scheduled departure - arrival; actual departure - arrival\n"
      << "direction,arrival_s,delay_us,scheduled_us,actual_us\n";
    for (int d = 0; d < 2; ++d)
        store.shown(d).samples.forEach(lo, hi, [&](const DelayPoint& p) {
            o << kDirectionKeys[d] << ',' << sec(p.t_ns) << ',' << usNs(p.delay_ns) << ','
              << usNs(p.scheduled_ns) << ',' << usNs(p.actual_ns) << '\n';
        });
    o << "# [intervals] one row per delay message and direction: the drawn delay over every "
         "packet queued in the interval (jitter_us: its population standard deviation, as the "
         "parameter jitter_us is), "
         "lateness over every packet that left\n"
      << "direction,start_s,end_s,count,min_us,max_us,mean_us,jitter_us,lateness_count,"
         "lateness_mean_us,lateness_max_us\n";
    for (int d = 0; d < 2; ++d)
        for (const Interval& iv : store.shown(d).intervals) {
            if (iv.end_ns < lo || iv.start_ns > hi) continue;
            const RunningStats& m = iv.delay;
            const RunningStats& l = iv.lateness;
            o << kDirectionKeys[d] << ',' << sec(iv.start_ns) << ',' << sec(iv.end_ns) << ','
              << m.count << ',' << (m.count ? us(m.min) : "") << ',' << (m.count ? us(m.max) : "")
              << ',' << (m.count ? us(m.mean()) : "") << ',' << (m.count ? us(m.jitter()) : "")
              << ',' << l.count << ',' << (l.count ? us(l.mean()) : "") << ','
              << (l.count ? us(l.max) : "") << '\n';
        }
    o << "# [measured] one row per measured frame of linkemd's built-in traffic: send time, "
         "one-way delay (receive - send, port to port)\n"
      << "direction,send_s,measured_delay_us\n";
    for (int d = 0; d < 2; ++d)
        store.shown(d).measured.forEach(lo, hi, [&](const DelayPoint& p) {
            o << kDirectionKeys[d] << ',' << sec(p.t_ns) << ',' << usNs(p.actual_ns) << '\n';
        });
    o << "# [rates] one row per stats message and direction: rates since the previous "
         "message (bytes include the 4-byte FCS)\n"
      << "direction,t_s,in_bps,out_bps,in_pps,out_pps";
    for (const DropCauseInfo& c : kDropCauses)
        o << ',' << c.key << "_per_s";
    o << ",ecn_marked_per_s\n";
    auto g = [](double v) { return QString::number(v, 'g', 10); };
    for (int d = 0; d < 2; ++d)
        for (const RatePoint& r : store.shown(d).rates) {
            if (r.t_ns < lo || r.t_ns > hi) continue;
            o << kDirectionKeys[d] << ',' << sec(r.t_ns) << ',' << g(r.in_bps) << ','
              << g(r.out_bps) << ',' << g(r.in_pps) << ',' << g(r.out_pps);
            for (double v : r.drops_per_s)
                o << ',' << g(v);
            o << ',' << g(r.ecn_marked_per_s) << '\n';
        }
    o << "# [queue] one row per delay message and direction: the limiter's queue at the "
         "interval's end (backlog; packets counted by a queue discipline only) and the sojourn "
         "time of the packets that left it in the interval (max: a queue discipline's only)\n"
      << "direction,end_s,backlog_bytes,backlog_packets,sojourn_count,sojourn_mean_us,"
         "sojourn_max_us\n";
    for (int d = 0; d < 2; ++d)
        for (const Interval& iv : store.dir(d).intervals) {
            if (iv.end_ns < lo || iv.end_ns > hi) continue;
            const QueueReport& q = iv.queue;
            o << kDirectionKeys[d] << ',' << sec(iv.end_ns) << ',' << q.backlog_bytes << ','
              << q.backlog_packets << ',' << q.sojourn_count << ','
              << (q.sojourn_count ? us(q.sojourn_mean_ns()) : "") << ','
              << (q.sojourn_max_ns ? usNs(q.sojourn_max_ns) : "") << '\n';
        }
    o.flush();
    if (o.status() != QTextStream::Ok || !f.commit()) {
        if (error) *error = QObject::tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

bool exportPng(const std::vector<ChartRenderer*>& charts, const QString& directory,
               QString* error) {
    QDir dir(directory);
    if (!dir.exists()) {
        if (error)
            *error = QObject::tr("cannot write the charts to %1: no such directory").arg(directory);
        return false;
    }
    for (ChartRenderer* r : charts) {
        const QString path = dir.filePath(r->name() + QStringLiteral(".png"));
        const QPixmap pm = r->view()->grab();
        if (pm.isNull() || !pm.save(path, "PNG")) {
            if (error) *error = QObject::tr("cannot write %1").arg(path);
            return false;
        }
    }
    return true;
}

}  // namespace linkem::gui
