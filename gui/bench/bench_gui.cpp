// linkem-gui-bench: the real main window of linkem-gui connected to a linkemd, measured while
// the telemetry arrives (docs/performance.md, "linkem-gui at full telemetry"): the UI
// thread's CPU share (utime + stime of /proc/self/task/<tid>/stat over wall time), the
// drawing latency (a telemetry message's intake by the charts, ChartsPanel::taken, or its
// receipt on the client thread, to the end of the chart redraw that draws it,
// ChartsPanel::redrawn), the gaps between redraws, the UI thread's longest stall,
// and the process's memory (VmHWM, VmRSS of /proc/self/status), with the time window at
// 5 minutes. Prints figures against the targets; never fails on a timing.
#include <QApplication>
#include <QChart>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QThread>
#include <QTimer>
#include <QValueAxis>
#include <nlohmann/json.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "charts_panel.hpp"
#include "charts_profile.hpp"
#include "linkem/messages.hpp"
#include "main_window.hpp"

namespace {

double thread_cpu_s(long tid) {  // utime + stime of the thread, seconds
    std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::istringstream rest(s.substr(s.rfind(')') + 2));  // after "(comm) "
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
    }
    return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

// The thread's time on a CPU and runnable but waiting for one (/proc/.../schedstat), ns.
struct Sched {
    std::int64_t ran = 0, waited = 0;
};
Sched sched(long tid) {
    std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/schedstat");
    long long ran = 0, waited = 0;
    f >> ran >> waited;
    return {ran, waited};
}

double pctOf(const std::vector<double>& sorted, double q) {
    return sorted.empty() ? 0.0
                          : sorted[std::min(sorted.size() - 1, std::size_t(q * sorted.size()))];
}

double status_mib(const char* key) {  // VmHWM / VmRSS of /proc/self/status, MiB
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(key, 0) == 0) return std::stod(line.substr(std::strlen(key) + 1)) / 1024.0;
    return -1;
}

std::string loadavg() {
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    f >> a >> b >> c;
    return a + " " + b + " " + c;
}

// Synthetic telemetry as linkemd would send it: a `delay` message every 50 ms with `rate`
// samples/s and as many measured samples per direction (20 ms +- ~4 ms; arrivals spaced
// 1/rate +- half of it), a `stats` message every 100 ms (49 000 packets/s of 256 bytes per
// direction).
class Synthetic {
  public:
    static constexpr std::int64_t kDelayNs = 50'000'000, kStatsNs = 100'000'000;
    explicit Synthetic(double rate)
        : rate_(rate), per_msg_(std::max(1, static_cast<int>(rate * 0.05))) {}

    /// The messages of the 50 ms that begin at t (a multiple of 50 ms): a delay message, and
    /// a stats message when t is a multiple of 100 ms, handed to the window as the client
    /// thread hands it linkemd's.
    void feed(linkem::gui::MainWindow& w, std::int64_t t) {
        linkem::proto::Telemetry m;
        m.topic = linkem::proto::kTopicDelay;
        m.header = {"00000000000000b0", seq_++, t + kDelayNs};
        linkem::proto::DelayMessage& dm = m.delay.emplace();
        dm.header = m.header;
        dm.directions = 2;
        for (linkem::DirectionDelay& dd : dm.dir) {
            dd.start_ns = t;
            dd.end_ns = t + kDelayNs;
            dd.has_measured = true;
            dd.delay.shift = dd.measured_delay.shift = 20e6;
            for (int i = 0; i < per_msg_; ++i) {
                // arrivals 50 +- 25 us apart at 20 000/s: real arrivals are not evenly
                // spaced, and the store packs even spacing into fewer bits
                const std::int64_t ta =
                    std::max(t, t + kDelayNs * i / per_msg_ +
                                    static_cast<std::int64_t>((uniform() - 0.5) * 1e9 / rate_));
                const std::int64_t d = delay_ns();
                const std::int64_t a = d + static_cast<std::int64_t>(uniform() * 20'000);
                dd.samples.push_back(linkem::DelaySample{ta, d, d, a});
                dd.measured.push_back(linkem::MeasuredDelay{ta, a + 3'000});
                dd.delay.add(static_cast<double>(d));
                dd.lateness.add(static_cast<double>(a - d));
                dd.measured_delay.add(static_cast<double>(a + 3'000));
            }
            dd.params_generation = 0;
        }
        emit w.client().telemetry(m);
        if (t % kStatsNs != 0) return;
        packets_ += 4'900;
        linkem::proto::Telemetry st;
        st.topic = linkem::proto::kTopicStats;
        st.header = {"00000000000000b0", seq_++, t + kDelayNs};
        linkem::proto::StatsMessage& sm = st.stats.emplace();
        sm.header = st.header;
        sm.stats.t_ns = t + kDelayNs;
        sm.stats.directions = 2;
        for (linkem::DirectionStats& d : sm.stats.dir) {
            d.counters.packets_in = d.counters.packets_out = packets_;
            d.counters.bytes_in = d.counters.bytes_out = packets_ * 260;
            d.counters.drops[linkem::DropCause::loss] = packets_ / 1000;
        }
        emit w.client().telemetry(st);
    }

  private:
    double uniform() {  // [0, 1)
        lcg_ = lcg_ * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(lcg_ >> 11) * 0x1.0p-53;
    }
    std::int64_t delay_ns() {  // ~normal, mean 20 ms, sd 4 ms
        const double z = (uniform() + uniform() + uniform() + uniform() - 2.0) * std::sqrt(3.0);
        return static_cast<std::int64_t>(20e6 + 4e6 * z);
    }
    double rate_;
    int per_msg_;
    std::uint64_t lcg_ = 12345;
    std::uint64_t packets_ = 0, seq_ = 0;
};

// --prefill: `seconds` of synthetic telemetry ending at t_end_ns (data-plane time), fed to
// the charts as linkemd's messages would be. The window is then full at once, as after
// `seconds` of real telemetry.
void prefill(linkem::gui::MainWindow& w, std::int64_t t_end_ns, double seconds, double rate) {
    Synthetic s(rate);
    const std::int64_t t0 = (t_end_ns - static_cast<std::int64_t>(seconds * 1e9)) /
                            Synthetic::kDelayNs * Synthetic::kDelayNs;
    for (std::int64_t t = t0; t < t_end_ns; t += Synthetic::kDelayNs)
        s.feed(w, t);
}

// --steps: the charts alone (the main window, not connected), a full 5-minute window, then
// `steps` steps of the time axis of synthetic telemetry, message by message; each message
// is drawn (redrawIfDue) and painted (the posted paint events) before the next. What a
// redraw and its paint cost on the UI thread, in CPU time, for the redraws that moved the
// time axis (steps) and for the others (heads only).
int step_costs(int steps, double rate) {
    linkem::gui::Options options;
    options.connect = false;
    options.use_settings = false;
    linkem::gui::MainWindow w(options);
    w.resize(1600, 1000);
    w.show();
    w.setWindowSeconds(300);
    linkem::gui::ChartsCosts costs;
    w.setCosts(&costs);
    linkem::gui::ChartsPanel* charts = w.charts();
    // lay the window out and let the charts take their plot width
    for (int i = 0; i < 20; ++i) {
        QCoreApplication::processEvents();
        charts->redrawIfDue();
        QThread::msleep(5);
    }
    Synthetic s(rate);
    constexpr std::int64_t kStart = 300'000'000'000;
    for (std::int64_t t = 0; t < kStart; t += Synthetic::kDelayNs)
        s.feed(w, t);
    charts->redrawIfDue();
    QCoreApplication::processEvents();
    // A step every 1% of the window's columns; which redraws moved the axis is told by the
    // delay chart's x range.
    struct Cost {
        double redraw, paint;
    };
    std::vector<Cost> moved, heads;
    QChart* delay = charts->chart("delay");
    auto xmax = [delay] {
        const auto axes = delay->axes(Qt::Horizontal);
        return axes.isEmpty() ? 0.0 : static_cast<QValueAxis*>(axes.first())->max();
    };
    const int messages = steps * 60;  // 3 s of 50 ms messages a step
    std::int64_t t = kStart;
    for (int i = 0; i < messages; ++i, t += Synthetic::kDelayNs) {
        s.feed(w, t);
        const double x_before = xmax();
        const linkem::gui::ChartsCosts c0 = costs;
        charts->redrawIfDue();
        QCoreApplication::processEvents();
        const linkem::gui::ChartsCosts c1 = costs;
        const Cost c{c1.redraw_ms - c0.redraw_ms, c1.paint_ms - c0.paint_ms};
        (xmax() != x_before ? moved : heads).push_back(c);
    }
    auto report = [](const char* what, std::vector<Cost>& v) {
        if (v.empty()) {
            std::printf("%s: none\n", what);
            return;
        }
        auto stat = [&v](auto field) {
            std::vector<double> x;
            for (const Cost& c : v)
                x.push_back(field(c));
            std::sort(x.begin(), x.end());
            double sum = 0;
            for (double e : x)
                sum += e;
            return std::array<double, 3>{sum / x.size(), pctOf(x, 0.5), x.back()};
        };
        const auto r = stat([](const Cost& c) { return c.redraw; });
        const auto p = stat([](const Cost& c) { return c.paint; });
        const auto b = stat([](const Cost& c) { return c.redraw + c.paint; });
        std::printf(
            "%s: %zu; CPU ms mean/median/max: redraw %.2f/%.2f/%.2f, paint "
            "%.2f/%.2f/%.2f, both %.2f/%.2f/%.2f\n",
            what, v.size(), r[0], r[1], r[2], p[0], p[1], p[2], b[0], b[1], b[2]);
    };
    std::printf(
        "platform: %s; window 300 s, full; %d messages at %.0f samples/s per "
        "direction; plot columns %d\n",
        qPrintable(QGuiApplication::platformName()), messages, rate, charts->plotColumns());
    report("redraws that moved the time axis (steps)", moved);
    report("redraws of the heads only", heads);
    std::printf("load average: %s\n", loadavg().c_str());
    return 0;
}

const char* verdict(bool met) {
    return met ? "met" : "NOT met";
}

// The targets (docs/performance.md, "linkem-gui at full telemetry").
constexpr double kUiCpuTargetPct = 20.0, kLatencyTargetMs = 50.0, kMemoryTargetMiB = 250.0;

struct BenchOptions {
    QString control, telemetry;
    double duration_s = 60, warmup_s = 2, every_s = 60, prefill_s = 0, prefill_rate = 20000;
    int steps = 0;
};

// The command line into *o; false (with the error printed) when a value is not allowed.
bool parseOptions(const QApplication& app, BenchOptions* o) {
    QCommandLineParser cli;
    cli.setApplicationDescription(
        "linkem-gui-bench: linkem-gui's main window against a linkemd, measured for --duration: "
        "UI thread CPU share, drawing latency, memory at a 5-minute window.");
    cli.addHelpOption();
    QCommandLineOption control("control", "linkemd's control endpoint", "ENDPOINT");
    QCommandLineOption telemetry("telemetry", "linkemd's telemetry endpoint", "ENDPOINT");
    QCommandLineOption duration("duration", "seconds measured (default 60)", "S", "60");
    QCommandLineOption warmup(
        "warmup", "seconds after the first delay message before measuring (default 2)", "S", "2");
    QCommandLineOption report("report-every", "also print RSS every S seconds (0: never)", "S",
                              "60");
    QCommandLineOption prefill_opt(
        "prefill",
        "before measuring, fill the charts with S seconds of synthetic telemetry (delay "
        "samples at --prefill-rate per direction) ending at the first delay message, so that "
        "a 5-minute window is full at once (default 0: only linkemd's telemetry)",
        "S", "0");
    QCommandLineOption prefill_rate(
        "prefill-rate", "synthetic delay samples/s per direction (default 20000)", "N", "20000");
    QCommandLineOption steps_opt(
        "steps",
        "no linkemd: fill the charts alone with 300 s of synthetic telemetry, then feed them "
        "N steps of the time axis (3 s each) of it, one 50 ms message at a time, each drawn "
        "and painted at once; prints the CPU time of the redraws and paints, the steps' apart "
        "(default 0: measure against linkemd)",
        "N", "0");
    cli.addOptions(
        {control, telemetry, duration, warmup, report, prefill_opt, prefill_rate, steps_opt});
    cli.process(app);
    o->control = cli.value(control);
    o->telemetry = cli.value(telemetry);
    bool ok[5] = {};
    o->duration_s = cli.value(duration).toDouble(&ok[0]);
    o->warmup_s = cli.value(warmup).toDouble(&ok[1]);
    o->every_s = cli.value(report).toDouble(&ok[2]);
    o->prefill_s = cli.value(prefill_opt).toDouble(&ok[3]);
    o->prefill_rate = cli.value(prefill_rate).toDouble(&ok[4]);
    if (!std::all_of(std::begin(ok), std::end(ok), [](bool b) { return b; }) ||
        o->duration_s <= 0 || o->warmup_s < 0 || o->every_s < 0 || o->prefill_s < 0 ||
        o->prefill_s > 300 || o->prefill_rate < 1 || o->prefill_rate > 20000) {
        std::fprintf(stderr,
                     "linkem-gui-bench: --duration > 0, --warmup >= 0, --report-every >= 0, "
                     "--prefill 0 .. 300, --prefill-rate 1 .. 20000\n");
        return false;
    }
    bool steps_ok = false;
    o->steps = cli.value(steps_opt).toInt(&steps_ok);
    if (!steps_ok || o->steps < 0 || o->steps > 1000) {
        std::fprintf(stderr, "linkem-gui-bench: --steps '%s': allowed a whole number 0 .. 1000\n",
                     qPrintable(cli.value(steps_opt)));
        return false;
    }
    return true;
}

// The measurement against linkemd: the main window connected with a 5-minute window; it waits
// for the first delay message (and prefills then), warms up, measures for --duration, prints.
class Bench {
  public:
    Bench(QApplication& app, const BenchOptions& o);
    int run();

  private:
    enum Phase { kWaiting, kWarming, kMeasuring };
    // Of a latency: the UI thread's run-queue wait within it (schedstat), and the redraw's
    // wall and CPU time; the rest waited for the redraw (the 30 ms spacing, queued events).
    struct Breakdown {
        double latency = 0, runqueue = 0, ran = 0, redraw_wall = 0, redraw_cpu = 0;
    };
    // The UI thread's recent events, and a copy of those around the longest latency: where
    // its time went (printed at the end).
    struct Event {
        qint64 t_ns;
        char what;      // 's' stats, 'd' delay message, 'r' redraw ended, 'l' a 5 ms pulse late
        double ms;      // 'r': the redraw's wall time; 'l': how late
        double paint;   // ms painting since the previous event
        double queued;  // ms of run-queue wait since the previous event (schedstat)
    };
    using Key = std::pair<bool, std::int64_t>;  // delay message?, t_ns

    void onDelivered(const linkem::gui::Delivery& dv);  // the client thread
    void onTaken(bool delay, qint64 t_ns);
    void prefillNow(qint64 t_ns);
    void onRedrawn();
    void onPulse();
    void onTick();
    void note(char what, double ms);
    void report(double el);
    void reportLatency(double el);
    void reportTimeline();
    void reportCosts(double el);
    std::size_t stored(int d) { return w_.model().store().dir(d).samples.size(); }

    QApplication& app_;
    BenchOptions o_;
    long tid_;
    linkem::gui::MainWindow w_;
    linkem::gui::ChartsCosts costs_;
    QElapsedTimer clock_;
    QTimer pulse_, tick_;
    Phase phase_ = kWaiting;
    qint64 first_delay_ns_ = 0, t0_ns_ = 0, last_redraw_ns_ = -1, max_gap_ns_ = 0;
    // Drawing latency: from a delay or stats message's arrival on the UI thread (after the
    // window took it in) to the end of the redraw that draws it. UI stalls: how late a 5 ms
    // timer fires.
    qint64 pending_ns_ = -1, max_latency_ns_ = 0, last_tick_ns_ = -1, max_stall_ns_ = 0;
    std::uint64_t latencies_over_50_ = 0, own_over_50_ = 0;
    std::vector<double> latency_ms_;
    // The same from the client thread's receipt of the message (its queue to the UI thread
    // included), matched to the charts' intake by topic and t_ns. The bench's receipt runs
    // after the window's call was posted, so the UI thread may take a message in first: then
    // its queue time counts as 0, and the late receipt is dropped.
    std::mutex receipts_mutex_;
    std::map<Key, qint64> receipts_;
    std::set<Key> taken_first_;
    qint64 pending_receipt_ns_ = -1;
    std::vector<double> queue_ms_;  // intake less receipt
    bool prefilling_ = false;       // the prefill's own messages have no receipt
    std::vector<double> from_receipt_ms_;
    Sched pending_sched_;
    Breakdown worst_, worst_own_;
    double max_own_ms_ = 0;
    // linkemd sends a stats and a delay message in the same tick: how far apart they arrive
    qint64 last_stats_ns_ = -1;
    std::vector<double> pair_gap_ms_;
    double cpu0_ = 0, next_report_ = 0;
    std::uint64_t redraws_ = 0, gaps_over_50_ = 0, messages_ = 0;
    std::vector<Event> events_, worst_events_;
    // The delay chart's columns (its plot's width): a change rebuilds them from every sample
    // held (ChartStore::setColumns). Each change: when, from, to, that redraw's CPU ms.
    int columns_ = -1;
    std::string column_changes_;
    double last_paint_ms_ = 0;
    std::int64_t last_waited_ = 0;
    // the samples received (the client thread counts them)
    std::atomic<std::uint64_t> received_[2] = {0, 0};
    std::uint64_t received0_[2] = {0, 0};
};

linkem::gui::Options windowOptions(const BenchOptions& o) {
    linkem::gui::Options options;
    options.endpoints.control = o.control;
    options.endpoints.telemetry = o.telemetry;
    options.use_settings = false;
    return options;
}

Bench::Bench(QApplication& app, const BenchOptions& o)
    : app_(app), o_(o), tid_(syscall(SYS_gettid)), w_(windowOptions(o)), next_report_(o.every_s) {
    w_.resize(1600, 1000);
    w_.show();
    w_.setWindowSeconds(300);
    w_.setCosts(&costs_);
    clock_.start();
    // The bench reads the telemetry in the client's thread, as it arrives (a direct
    // connection): a second queued receiver would copy every message a second time in that
    // thread, and its call would reach the UI thread apart from the window's, sometimes after
    // the redraw that drew the message.
    QObject::connect(
        &w_.client(), &linkem::gui::Client::delivered, &app_,
        [this](const linkem::gui::Delivery& dv) { onDelivered(dv); }, Qt::DirectConnection);
    // A message's arrival on the UI thread: the charts took it in.
    QObject::connect(w_.charts(), &linkem::gui::ChartsPanel::taken, &app_,
                     [this](bool delay, qint64 t_ns) { onTaken(delay, t_ns); });
    QObject::connect(w_.charts(), &linkem::gui::ChartsPanel::redrawn, &app_,
                     [this] { onRedrawn(); });
    pulse_.setTimerType(Qt::PreciseTimer);
    pulse_.setInterval(5);
    QObject::connect(&pulse_, &QTimer::timeout, &app_, [this] { onPulse(); });
    tick_.setInterval(200);
    QObject::connect(&tick_, &QTimer::timeout, &app_, [this] { onTick(); });
}

int Bench::run() {
    pulse_.start();
    tick_.start();
    return app_.exec();
}

void Bench::note(char what, double ms) {
    if (phase_ != kMeasuring) return;
    const double p = costs_.paint_ms;
    const std::int64_t q = sched(tid_).waited;
    events_.push_back(
        {clock_.nsecsElapsed(), what, ms, p - last_paint_ms_, (q - last_waited_) / 1e6});
    last_paint_ms_ = p;
    last_waited_ = q;
    if (events_.size() > 4096) events_.erase(events_.begin(), events_.begin() + 2048);
}

void Bench::onDelivered(const linkem::gui::Delivery& dv) {
    if (dv.kind != linkem::gui::Delivery::Kind::telemetry) return;
    const linkem::proto::Telemetry& m = *dv.telemetry;
    if (!m.delay && !m.stats) return;
    // as the charts read it (ChartsPanel::taken): the header's t_ns
    {
        const Key key{m.delay.has_value(), m.header.t_ns};
        const std::lock_guard<std::mutex> lock(receipts_mutex_);
        if (taken_first_.erase(key) == 0) receipts_.emplace(key, clock_.nsecsElapsed());
    }
    if (!m.delay) return;
    for (unsigned d = 0; d < m.delay->directions; ++d)
        received_[d] += m.delay->dir[d].samples.size();
}

void Bench::onTaken(bool delay, qint64 t_ns) {
    const qint64 now = clock_.nsecsElapsed();
    qint64 receipt = now;
    if (!prefilling_) {
        const std::lock_guard<std::mutex> lock(receipts_mutex_);
        const auto it = receipts_.find(Key{delay, t_ns});
        if (it == receipts_.end()) {
            taken_first_.insert(Key{delay, t_ns});
        } else {
            receipt = it->second;
            receipts_.erase(it);
        }
        if (phase_ == kMeasuring) queue_ms_.push_back((now - receipt) / 1e6);
    }
    if (phase_ == kMeasuring && pending_ns_ < 0) {
        pending_ns_ = now;
        pending_receipt_ns_ = receipt;
        pending_sched_ = sched(tid_);
    }
    note(delay ? 'd' : 's', 0);
    if (!delay) {
        last_stats_ns_ = now;
        return;
    }
    if (phase_ == kMeasuring && last_stats_ns_ >= 0 && now - last_stats_ns_ < 40'000'000) {
        pair_gap_ms_.push_back((now - last_stats_ns_) / 1e6);
        last_stats_ns_ = -1;
    }
    if (phase_ == kWaiting) {
        phase_ = kWarming;
        std::printf("first delay message after %.1f s; VmRSS %.1f MiB\n", now / 1e9,
                    status_mib("VmRSS:"));
        if (o_.prefill_s > 0) prefillNow(t_ns);
        first_delay_ns_ = clock_.nsecsElapsed();
    }
    if (phase_ == kMeasuring) ++messages_;
}

void Bench::prefillNow(qint64 t_ns) {
    QElapsedTimer p;
    p.start();
    prefilling_ = true;
    prefill(w_, std::max<qint64>(0, t_ns), o_.prefill_s, o_.prefill_rate);
    prefilling_ = false;
    std::printf(
        "prefilled %.0f s at %.0f samples/s per direction in %.1f s; VmRSS %.1f MiB, sample "
        "store %.1f MiB; messages refused %llu%s%s\n",
        o_.prefill_s, o_.prefill_rate, p.nsecsElapsed() / 1e9, status_mib("VmRSS:"),
        w_.model().store().storedBytes() / 1048576.0,
        static_cast<unsigned long long>(w_.model().refused()),
        w_.model().refused() ? "; the last: " : "", w_.model().lastRefusal().c_str());
}

void Bench::onRedrawn() {
    if (phase_ != kMeasuring) return;
    const qint64 now = clock_.nsecsElapsed();
    if (last_redraw_ns_ >= 0) {
        const qint64 gap = now - last_redraw_ns_;
        max_gap_ns_ = std::max(max_gap_ns_, gap);
        if (gap > 50'000'000) ++gaps_over_50_;
    }
    last_redraw_ns_ = now;
    ++redraws_;
    note('r', costs_.last_redraw_wall_ms);
    if (const int cols = w_.charts()->plotColumns(); cols != columns_) {
        if (columns_ >= 0 && column_changes_.size() < 400)
            column_changes_ += (column_changes_.empty() ? "" : ", ") + std::to_string(columns_) +
                               " -> " + std::to_string(cols) + " at " +
                               std::to_string(static_cast<int>((now - t0_ns_) / 1e9)) +
                               " s (redraw " +
                               std::to_string(static_cast<int>(costs_.last_redraw_ms)) + " ms CPU)";
        columns_ = cols;
    }
    if (pending_ns_ < 0) return;
    const qint64 l = now - pending_ns_;
    const linkem::gui::ChartsCosts c = costs_;
    const Sched now_sched = sched(tid_);
    const Breakdown b{l / 1e6, (now_sched.waited - pending_sched_.waited) / 1e6,
                      (now_sched.ran - pending_sched_.ran) / 1e6, c.last_redraw_wall_ms,
                      c.last_redraw_ms};
    if (l > max_latency_ns_) {
        worst_ = b;
        worst_events_.clear();
        for (const Event& e : events_)
            if (e.t_ns >= pending_ns_ - 60'000'000) worst_events_.push_back(e);
    }
    max_latency_ns_ = std::max(max_latency_ns_, l);
    latency_ms_.push_back(l / 1e6);
    from_receipt_ms_.push_back((now - pending_receipt_ns_) / 1e6);
    if (l > 50'000'000) ++latencies_over_50_;
    const double own = b.latency - b.runqueue;
    if (own > max_own_ms_) {
        max_own_ms_ = own;
        worst_own_ = b;
    }
    if (own > 50) ++own_over_50_;
    pending_ns_ = -1;
}

void Bench::onPulse() {
    const qint64 now = clock_.nsecsElapsed();
    if (phase_ == kMeasuring && last_tick_ns_ >= 0) {
        max_stall_ns_ = std::max(max_stall_ns_, now - last_tick_ns_ - 5'000'000);
        if (now - last_tick_ns_ > 7'000'000) note('l', (now - last_tick_ns_ - 5'000'000) / 1e6);
    }
    last_tick_ns_ = now;
}

void Bench::onTick() {
    const qint64 now = clock_.nsecsElapsed();
    if (phase_ == kWaiting && now > 20'000'000'000LL) {
        std::fprintf(stderr, "linkem-gui-bench: no delay message within 20 s\n");
        app_.exit(1);
    }
    if (phase_ == kWarming && now - first_delay_ns_ >= qint64(o_.warmup_s * 1e9)) {
        phase_ = kMeasuring;
        t0_ns_ = now;
        cpu0_ = thread_cpu_s(tid_);
        costs_ = linkem::gui::ChartsCosts{};
        for (int d = 0; d < 2; ++d)
            received0_[d] = received_[d];
    }
    if (phase_ != kMeasuring) return;
    const double el = (now - t0_ns_) / 1e9;
    if (o_.every_s > 0 && el >= next_report_ && el < o_.duration_s) {
        std::printf("after %.0f s: VmRSS %.1f MiB, VmHWM %.1f MiB, samples held %zu + %zu\n", el,
                    status_mib("VmRSS:"), status_mib("VmHWM:"), stored(0), stored(1));
        std::fflush(stdout);
        next_report_ += o_.every_s;
    }
    if (el < o_.duration_s) return;
    report(el);
    std::fflush(stdout);
    app_.exit(0);
}

void Bench::report(double el) {
    const double cpu = thread_cpu_s(tid_) - cpu0_;
    const double share = cpu / el * 100.0;
    std::printf("platform: %s; main window %dx%d, time window %.0f s; measured %.1f s\n",
                qPrintable(QGuiApplication::platformName()), w_.width(), w_.height(),
                w_.charts()->window(), el);
    std::printf(
        "received: %.0f + %.0f delay samples/s (a_to_b + b_to_a), %.1f delay "
        "messages/s; samples held %zu + %zu\n",
        (received_[0] - received0_[0]) / el, (received_[1] - received0_[1]) / el, messages_ / el,
        stored(0), stored(1));
    std::printf("UI thread CPU: %.2f s of %.1f s = %.1f %% of a core (target <= %.0f %%): %s\n",
                cpu, el, share, kUiCpuTargetPct, verdict(share <= kUiCpuTargetPct));
    std::printf(
        "redraws: %llu (%.1f/s); longest gap between two redraws %.1f ms, %llu gaps over "
        "50 ms (a redraw follows new data: linkemd sends a delay message every 50 ms)\n",
        (unsigned long long)redraws_, redraws_ / el, max_gap_ns_ / 1e6,
        (unsigned long long)gaps_over_50_);
    reportLatency(el);
    reportCosts(el);
    std::printf("delay chart columns: %d; rebuilt from the samples held: %s\n", columns_,
                column_changes_.empty() ? "never" : column_changes_.c_str());
    const double hwm = status_mib("VmHWM:"), rss = status_mib("VmRSS:");
    std::printf(
        "memory: VmHWM %.1f MiB, VmRSS %.1f MiB (target <= %.0f MiB): %s; sample store %.1f "
        "MiB\n",
        hwm, rss, kMemoryTargetMiB, verdict(hwm <= kMemoryTargetMiB),
        w_.model().store().storedBytes() / 1048576.0);
    std::printf("load average: %s\n", loadavg().c_str());
}

void Bench::reportLatency(double) {
    std::printf(
        "drawing latency (a message's arrival to the end of the redraw that draws it): "
        "longest %.1f ms (target <= %.0f ms): %s; %llu of %zu over 50 ms; longest UI "
        "thread stall (a 5 ms timer's lateness) %.1f ms\n",
        max_latency_ns_ / 1e6, kLatencyTargetMs, verdict(max_latency_ns_ / 1e6 <= kLatencyTargetMs),
        (unsigned long long)latencies_over_50_, latency_ms_.size(), max_stall_ns_ / 1e6);
    std::sort(latency_ms_.begin(), latency_ms_.end());
    auto pct = [this](double q) { return pctOf(latency_ms_, q); };
    std::printf("  percentiles: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, p99.9 %.1f ms\n", pct(0.5),
                pct(0.9), pct(0.99), pct(0.999));
    std::sort(from_receipt_ms_.begin(), from_receipt_ms_.end());
    std::sort(queue_ms_.begin(), queue_ms_.end());
    std::size_t not_taken = 0;
    {
        const std::lock_guard<std::mutex> lock(receipts_mutex_);
        not_taken = receipts_.size();
    }
    const auto over = from_receipt_ms_.end() -
                      std::upper_bound(from_receipt_ms_.begin(), from_receipt_ms_.end(), 50.0);
    std::printf(
        "  from the client thread's receipt: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, "
        "longest %.1f ms; %lld over 50 ms; the UI thread took a message in p50 %.2f ms, p99 "
        "%.2f ms, longest %.2f ms after its receipt (%zu receipts not matched)\n",
        pctOf(from_receipt_ms_, 0.5), pctOf(from_receipt_ms_, 0.9), pctOf(from_receipt_ms_, 0.99),
        from_receipt_ms_.empty() ? 0.0 : from_receipt_ms_.back(), static_cast<long long>(over),
        pctOf(queue_ms_, 0.5), pctOf(queue_ms_, 0.99), queue_ms_.empty() ? 0.0 : queue_ms_.back(),
        not_taken);
    auto parts = [](const char* what, const Breakdown& b) {
        std::printf(
            "  %s %.1f ms: the UI thread ran %.1f ms and was runnable but not running "
            "%.1f ms; redraw %.1f ms wall (%.1f ms CPU), waiting for the redraw %.1f ms\n",
            what, b.latency, b.ran, b.runqueue, b.redraw_wall, b.redraw_cpu,
            b.latency - b.redraw_wall);
    };
    parts("longest", worst_);
    reportTimeline();
    std::printf(
        "drawing latency less the UI thread's run-queue wait within it: longest %.1f ms "
        "(target <= %.0f ms): %s; %llu over 50 ms\n",
        max_own_ms_, kLatencyTargetMs, verdict(max_own_ms_ <= kLatencyTargetMs),
        (unsigned long long)own_over_50_);
    parts("its longest", worst_own_);
    std::sort(pair_gap_ms_.begin(), pair_gap_ms_.end());
    const auto late =
        pair_gap_ms_.end() - std::upper_bound(pair_gap_ms_.begin(), pair_gap_ms_.end(), 8.0);
    std::printf(
        "a stats message and the delay message after it (< 40 ms): %zu pairs on the UI "
        "thread, apart p50 %.2f ms, p90 %.2f ms, longest %.2f ms; %lld over the charts' 8 ms "
        "wait for the pair\n",
        pair_gap_ms_.size(), pctOf(pair_gap_ms_, 0.5), pctOf(pair_gap_ms_, 0.9),
        pair_gap_ms_.empty() ? 0.0 : pair_gap_ms_.back(), static_cast<long long>(late));
}

void Bench::reportTimeline() {
    if (worst_events_.empty()) return;
    std::printf(
        "  its timeline (ms from the message's arrival; paint and run-queue "
        "wait since the line before):\n");
    const qint64 t0 = max_latency_ns_ > 0 ? worst_events_.back().t_ns - max_latency_ns_ : 0;
    for (const Event& e : worst_events_) {
        const double at = (e.t_ns - t0) / 1e6;
        switch (e.what) {
            case 's':
                std::printf("    %+7.1f stats message", at);
                break;
            case 'd':
                std::printf("    %+7.1f delay message", at);
                break;
            case 'r':
                std::printf("    %+7.1f redraw ended (began %+.1f)", at, at - e.ms);
                break;
            default:
                std::printf("    %+7.1f a 5 ms pulse %.1f ms late", at, e.ms);
        }
        std::printf("; paint %.1f, run queue %.1f\n", e.paint, e.queued);
    }
}

void Bench::reportCosts(double el) {
    const linkem::gui::ChartsCosts c = costs_;
    std::printf(
        "UI thread CPU in the charts: redraw %.1f ms/s (%llu, mean %.2f ms, max %.2f ms), "
        "paint %.1f ms/s (%llu, mean %.2f ms, max %.2f ms), taking messages in %.1f ms/s "
        "(%llu, mean %.2f ms, max %.2f ms)\n",
        c.redraw_ms / el, (unsigned long long)c.redraws, c.redraws ? c.redraw_ms / c.redraws : 0.0,
        c.redraw_max_ms, c.paint_ms / el, (unsigned long long)c.paints,
        c.paints ? c.paint_ms / c.paints : 0.0, c.paint_max_ms, c.ingest_ms / el,
        (unsigned long long)c.ingests, c.ingests ? c.ingest_ms / c.ingests : 0.0, c.ingest_max_ms);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    BenchOptions o;
    if (!parseOptions(app, &o)) return 2;
    if (o.steps > 0) return step_costs(o.steps, o.prefill_rate);
    Bench bench(app, o);
    return bench.run();
}
