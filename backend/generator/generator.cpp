#include "generator.hpp"

#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <variant>

#include "linkem/dataplane/eal.hpp"
#include "linkem/dataplane/virtual_port.hpp"

namespace linkem::gen {

namespace {

using Source = std::variant<CbrSource, PoissonSource, SineSource>;

Source make_source(const TrafficSpec& s, std::uint64_t seed) {
    switch (s.pattern) {
        case TrafficPattern::poisson:
            return PoissonSource(s, seed);
        case TrafficPattern::sine:
            return SineSource(s);
        case TrafficPattern::cbr:
            break;
    }
    return CbrSource(s);
}

// One direction's state on the generator thread.
struct Flow {
    dp::VirtualPort* in = nullptr;  // where its frames enter the emulator
    std::optional<Source> source;
    TimeNs start = 0, next = 0;  // the run's start; the next frame's due time
    std::uint64_t seq = 0;
    TrafficMeter meter;
    TimeNs next_sample = 0;
};

}  // namespace

Generator::Generator(dp::VirtualPort* a, dp::VirtualPort* b, unsigned samples_per_s,
                     const TrafficConfig& initial)
    : a_(a),
      b_(b),
      sample_period_(samples_per_s ? kNsPerSec / samples_per_s : 0),
      pending_(initial) {
    for (auto& s : samples_)
        s = std::make_unique<SpscRing<MeasuredSample>>(std::max(1024u, samples_per_s / 2));
}

Generator::~Generator() {
    stop();
}

void Generator::start() {
    if (go_.exchange(true)) return;
    thread_ = std::thread([this] { run(); });
    // Named, so that its CPU waits can be told apart (/proc/PID/task/TID/comm, top -H).
    pthread_setname_np(thread_.native_handle(), "linkem-traffic");
}

void Generator::stop() {
    if (!go_.exchange(false)) return;
    if (thread_.joinable()) thread_.join();
}

std::uint32_t Generator::apply(const TrafficConfig& c) {
    std::lock_guard lock(mu_);
    if (!(c.spec == pending_.spec)) ++run_;
    pending_ = c;
    changes_.fetch_add(1, std::memory_order_release);
    return run_;
}

std::uint32_t Generator::run_number() const {
    std::lock_guard lock(mu_);
    return run_;
}

TrafficConfig Generator::config() const {
    std::lock_guard lock(mu_);
    return pending_;
}

void Generator::take(std::vector<TrafficReport>& reports, std::vector<MeasuredSample> samples[2]) {
    TrafficReport r[16];
    std::size_t n;
    while ((n = reports_.pop(r, 16)) > 0)
        reports.insert(reports.end(), r, r + n);
    for (int d = 0; d < 2; ++d) {
        MeasuredSample s[256];
        while ((n = samples_[d]->pop(s, 256)) > 0)
            samples[d].insert(samples[d].end(), s, s + n);
    }
}

// The generator thread: each pass adopts new settings, sends what is due, receives what came
// out, reports every kReportPeriod and sleeps until the next frame is due.
struct Generator::Loop {
    explicit Loop(Generator& g)
        : g(g), dirs(g.directions()), sinks{g.b_ ? g.b_ : g.a_, g.b_ ? g.a_ : nullptr} {
        flow[0].in = g.a_;
        flow[1].in = g.b_;
        report_start = dp::now_ns();
        next_report = report_start + kReportPeriod;
    }

    void pass() {
        adopt(dp::now_ns());
        if (cfg.running) send_due(dp::now_ns());
        for (dp::VirtualPort* port : sinks)
            if (port) receive(*port);
        const TimeNs now = dp::now_ns();
        if (now >= next_report) report(now);
        sleep_until_due(now);
    }

    // New settings from apply(): a new run, or a start, begins the sources again.
    void adopt(TimeNs now) {
        if (g.changes_.load(std::memory_order_acquire) == seen_changes) return;
        TrafficConfig next;
        std::uint32_t next_run;
        {
            std::lock_guard lock(g.mu_);
            seen_changes = g.changes_.load(std::memory_order_relaxed);
            next = g.pending_;
            next_run = g.run_;
        }
        if (next_run != run || (next.running && !cfg.running)) {
            for (unsigned d = 0; d < dirs; ++d) {
                Flow& f = flow[d];
                f.source = make_source(next.spec, 0x6c696e6b656d + d);
                f.start = now;
                f.next = now + std::visit([](auto& s) { return s.next(); }, *f.source);
                if (next_run != run) {
                    f.seq = 0;
                    f.meter.start_run(next_run);
                }
            }
            templ.assign(next.spec.frame_bytes - 4, 0);  // the mbuf holds no FCS
        }
        run = next_run;
        cfg = next;
    }

    // What is due, one burst per direction per pass (a pass late by a stall sends the
    // backlog in bursts of up to 256 frames until it has caught up).
    void send_due(TimeNs now) {
        for (unsigned d = 0; d < dirs; ++d) {
            Flow& f = flow[d];
            std::size_t k = 0;
            while (f.next <= now && k < 256) {
                ++k;
                f.next = f.start + std::visit([](auto& s) { return s.next(); }, *f.source);
            }
            if (k == 0) continue;
            const TimeNs stamp = dp::now_ns();
            const std::uint64_t base = f.seq;
            f.seq += f.in->send_burst(k, templ.size(),
                                      [&](std::size_t i, std::span<std::uint8_t> frame) {
                                          GenHeader h;
                                          h.direction = static_cast<std::uint8_t>(d);
                                          h.run = run;
                                          h.seq = base + i;
                                          h.send_ns = stamp;
                                          std::copy(templ.begin(), templ.end(), frame.begin());
                                          write_gen_frame(frame, h);
                                      });
        }
    }

    // Each frame's delay from its own send time; the receive time is taken once per burst,
    // after the burst was taken from the port's transmit ring.
    void receive(dp::VirtualPort& port) {
        std::optional<TimeNs> at;
        port.receive(
            [&](std::span<const std::uint8_t> frame) {
                if (!at) at = dp::now_ns();
                const auto h = read_gen_frame(frame);
                if (!h || h->direction >= dirs) return;
                Flow& f = flow[h->direction];
                // Another run's frames and duplicates give no delay sample.
                const auto d = f.meter.on_frame(h->run, h->seq, h->send_ns, *at);
                if (d) sample(f, h->direction, MeasuredSample{h->send_ns, *d, h->run}, *at);
            },
            512);
    }

    // At most sample_period_ apart per direction; a full ring drops the sample, counted.
    void sample(Flow& f, unsigned d, const MeasuredSample& s, TimeNs at) {
        if (!g.sample_period_ || at < f.next_sample) return;
        f.next_sample = std::max(f.next_sample + g.sample_period_, at - g.sample_period_);
        if (!g.samples_[d]->try_push(s)) f.meter.sample_dropped();
    }

    void report(TimeNs now) {
        TrafficReport r;
        r.start_ns = report_start;
        r.end_ns = now;
        r.run = run;
        for (unsigned d = 0; d < dirs; ++d) {
            r.counts[d] = flow[d].meter.counts(flow[d].seq);
            r.delay[d] = flow[d].meter.take_interval();
        }
        g.reports_.try_push(r);
        report_start = now;
        next_report = now + kReportPeriod;
    }

    // Until the next frame is due, at most a poll period (the sink's lateness).
    void sleep_until_due(TimeNs now) const {
        TimeNs wake = now + kPollPeriod;
        if (cfg.running)
            for (unsigned d = 0; d < dirs; ++d)
                wake = std::min(wake, flow[d].next);
        if (wake > now + 2 * kNsPerUs)
            std::this_thread::sleep_for(std::chrono::nanoseconds(wake - now));
    }

    Generator& g;
    const unsigned dirs;
    dp::VirtualPort* const sinks[2];
    Flow flow[2];
    TrafficConfig cfg;
    std::uint32_t run = 0;
    std::uint64_t seen_changes = ~std::uint64_t{0};
    TimeNs report_start = 0, next_report = 0;
    std::vector<std::uint8_t> templ;
};

void Generator::run() {
    // Sleeps of tens of microseconds: without this the kernel may add 50 us of slack to each.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    Loop loop(*this);
    while (go_.load(std::memory_order_relaxed))
        loop.pass();
}

}  // namespace linkem::gen
