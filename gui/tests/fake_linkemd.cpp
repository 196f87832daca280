#include "fake_linkemd.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "linkem/capture_json.hpp"
#include "linkem/classes.hpp"
#include "linkem/traffic.hpp"
#include "linkem/traffic_json.hpp"

namespace linkem::gui::test {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
std::int64_t now_ns() {
    static const auto t0 = Clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}
std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
        .count();
}
}  // namespace

FakeLinkemd::FakeLinkemd(std::string control, std::string telemetry, unsigned directions)
    : control_(std::move(control)), telemetry_(std::move(telemetry)), directions_(directions) {}

FakeLinkemd::~FakeLinkemd() {
    stop();
}

void FakeLinkemd::start(const LinkConfig& link) {
    stop();
    {
        std::lock_guard lock(mutex_);
        link_ = link;
        for (LinkParams* p : {&link_.a_to_b, &link_.b_to_a})
            if (p->seed == 0) p->seed = 12345;
        generation_ = 0;
        instance_ = proto::new_instance_id();
        capture_ = {};
    }
    control::ServerOptions o;
    o.control = control_;
    o.telemetry = telemetry_;
    o.curve_secret = curve_secret_;
    o.curve_allow = curve_allow_;
    server_ =
        std::make_unique<control::Server>(o, *this, instance_, now_ns, [](const std::string&) {});
    stop_ = false;
    server_->event(proto::Event::info("started", "fake linkemd started"));
    thread_ = std::thread([this] { run(); });
}

void FakeLinkemd::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    server_.reset();
}

void FakeLinkemd::restart(const LinkConfig& link) {
    start(link);
}

std::string FakeLinkemd::instance_id() const {
    std::lock_guard lock(mutex_);
    return instance_;
}
LinkConfig FakeLinkemd::link() const {
    std::lock_guard lock(mutex_);
    return link_;
}
std::uint64_t FakeLinkemd::generation() const {
    std::lock_guard lock(mutex_);
    return generation_;
}
std::vector<RecordedRequest> FakeLinkemd::requests(const std::string& method) const {
    std::lock_guard lock(mutex_);
    std::vector<RecordedRequest> out;
    for (const auto& r : requests_)
        if (method.empty() || r.method == method) out.push_back(r);
    return out;
}
void FakeLinkemd::clear_requests() {
    std::lock_guard lock(mutex_);
    requests_.clear();
}
void FakeLinkemd::queue_event(const proto::Event& e) {
    std::lock_guard lock(mutex_);
    events_.push_back(e);
}
capture::Status FakeLinkemd::capture_status() const {
    std::lock_guard lock(mutex_);
    return capture_;
}

void FakeLinkemd::capture_event(capture::Event::Kind kind, std::string message) {
    events_.push_back(proto::Event::capture(capture::Event{kind, capture_, std::move(message)}));
}

void FakeLinkemd::stop_capture(capture::StopReason reason) {
    if (!capture_.running) return;
    capture_.running = false;
    capture_.reason = reason;
    capture_.elapsed = now_ns() - capture_start_ns_;
    capture_event(capture::Event::Kind::stopped,
                  std::string("capture stopped (") + capture::stop_reason_name(reason) +
                      "): " + std::to_string(capture_.records) + " records");
}

json FakeLinkemd::handle(const proto::Request& r, const std::string& source) {
    std::lock_guard lock(mutex_);
    requests_.push_back({r.method, r.params, now_ms()});
    if (r.method == "hello") {
        proto::Hello h;
        h.linkemd_version = "0.1.0-fake";
        h.instance_id = instance_;
        h.uptime_ns = h.t_ns = now_ns();
        h.directions = directions_;
        for (unsigned p = 0; p < directions_; ++p)
            h.ports.push_back({kPortNames[p], p == 0 ? "fake_a" : "fake_b", true, 10000});
        h.params_generation = generation_;
        h.methods = proto::method_names();
        h.link_params_schema = link_schema();
        h.telemetry = {telemetry_, 10, 20, 2000};
        h.capabilities.traffic = true;
        h.capabilities.classes = true;
        h.capabilities.capture = true;
        return proto::to_json(h);
    }
    auto link_result = [&](std::optional<bool> applied) {
        return proto::to_json(
            proto::LinkState{generation_, directions_, link_, applied, std::nullopt});
    };
    if (r.method == "get_link") return link_result(std::nullopt);
    if (r.method == "set_link") {
        LinkConfig next =
            proto::apply_link_update(r.params, link_, directions_);  // throws ParamError
        link_ = next;
        ++generation_;
        proto::Event e = proto::Event::info(
            "params_applied",
            "parameters applied (generation " + std::to_string(generation_) + ") from " + source);
        e.params_generation = generation_;
        e.source = source;
        events_.push_back(e);
        return link_result(true);
    }
    if (r.method == "get_stats") return proto::to_json(stats_message());
    auto traffic_result = [&](std::uint64_t run) {
        return proto::to_json(proto::TrafficState{
            true, traffic_, run, traffic_.spec.rate_bps / traffic_.spec.bits_per_packet()});
    };
    if (r.method == "get_traffic") return traffic_result(1);
    if (r.method == "set_traffic") {
        traffic_ = traffic_from_json(r.params, traffic_);  // throws ParamError
        return traffic_result(2);
    }
    if (r.method == "capture_start") {
        const capture::Settings s = capture_settings_from_json(r.params);  // throws ParamError
        if (capture_.running)
            throw proto::ProtocolError(
                proto::Error{proto::ErrorCode::unavailable,
                             "a capture is running (to " + capture_.file + "); stop it first", ""});
        std::ofstream f(s.file, std::ios::binary | std::ios::trunc);
        if (!f) throw ParamError("file", "cannot create " + s.file + ": " + std::strerror(errno));
        f << "fake pcapng\n";
        capture_ = {};
        capture_.running = true;
        capture_.settings = s;
        capture_.file = s.file;
        capture_.files = {s.file};
        capture_.started_utc_ns = now_ns();
        capture_start_ns_ = now_ns();
        capture_event(capture::Event::Kind::started, "capture started: " + s.file);
        return capture_status_to_json(capture_);
    }
    if (r.method == "capture_stop") {
        stop_capture(capture::StopReason::stopped);
        return capture_status_to_json(capture_);
    }
    if (r.method == "capture_status") {
        capture::Status s = capture_;
        if (s.running) s.elapsed = now_ns() - capture_start_ns_;
        return capture_status_to_json(s);
    }
    throw proto::ProtocolError(proto::Error{proto::ErrorCode::unavailable,
                                            "the fake linkemd does not do " + r.method, ""});
}

// The messages are built with the protocol's encoders, as linkemd's are.
proto::StatsMessage FakeLinkemd::stats_message() const {
    proto::StatsMessage m;
    LinkStats& s = m.stats;
    s.t_ns = now_ns();
    s.directions = directions_;
    s.ports = directions_;
    for (unsigned d = 0; d < directions_; ++d) {
        DirectionStats& ds = s.dir[d];
        // like linkemd --demo: 0.5 % lost by the loss model
        ds.counters.packets_in = packets_;
        ds.counters.drops[DropCause::loss] = packets_ / 200;
        ds.counters.packets_out = packets_ - ds.counters.drops[DropCause::loss];
        // a queue discipline drops (or with ECN marks) 1 % at the head
        const LinkParams& lp = link_.direction(d);
        if (lp.queue != QueueKind::droptail &&
            (lp.limiter == Limiter::spacer || lp.limiter == Limiter::trace)) {
            if (lp.ecn == Ecn::on) {
                ds.counters.ecn_marked = packets_ / 100;
            } else {
                ds.counters.drops[DropCause::aqm] = packets_ / 100;
                ds.counters.packets_out -= packets_ / 100;
            }
        }
        ds.counters.bytes_in = packets_ * 1518;
        ds.counters.bytes_out = ds.counters.packets_out * 1518;
        ds.counters.alpha = 0.99;
        ds.counters.rate_pps = 10000;
        ds.counters.rate_intervals = 1;
        ds.params_generation = generation_;
        // with classes: the packets shared out evenly, `default` first (stats' classes)
        if (!link_.classes.empty()) {
            const std::size_t ids = link_.classes.size() + 1;
            if (s.classes.size() != ids) {
                s.classes.assign(ids, {});
                s.classes[0].name = kDefaultClassName;
                for (std::size_t i = 1; i < ids; ++i) {
                    s.classes[i].name = link_.classes[i - 1].name;
                    s.classes[i].action = link_.classes[i - 1].action;
                }
            }
            for (std::size_t i = 0; i < ids; ++i) {
                CounterSnapshot& c = s.classes[i].dir[d];
                const std::uint64_t n = packets_ * (i + 1) / (ids * (ids + 1) / 2);
                c.packets_in = n;
                c.bytes_in = n * 1518;
                const bool drop = i > 0 && link_.classes[i - 1].action == ClassAction::drop;
                if (drop)
                    c.drops[DropCause::class_action] = n;
                else
                    c.drops[DropCause::loss] = n / 200;
                c.packets_out = n - (drop ? n : n / 200);
                c.bytes_out = c.packets_out * 1518;
            }
        }
        ds.traffic.present = true;
        ds.traffic.run = 1;
        ds.traffic.sent = packets_;
        ds.traffic.received = ds.counters.packets_out;
        ds.traffic.lost = ds.counters.drops[DropCause::loss];
        PortStats& p = s.port[d];
        p.name = d == 0 ? "fake_a" : "fake_b";
        p.link_up = true;
        p.speed_mbps = 10000;
    }
    m.capture.running = capture_.running;
    m.capture.file = capture_.file;
    m.capture.records = capture_.records;
    m.capture.bytes = capture_.bytes;
    m.capture.missed = capture_.missed;
    m.header.t_ns = s.t_ns;
    return m;
}

proto::DelayMessage FakeLinkemd::delay_message(std::int64_t start, std::int64_t end) {
    static thread_local std::mt19937_64 rng(7);
    proto::DelayMessage m;
    m.directions = directions_;
    for (unsigned d = 0; d < directions_; ++d) {
        DirectionDelay& dd = m.dir[d];
        dd.start_ns = start;
        dd.end_ns = end;
        const int n = 20;
        const std::size_t ids = link_.classes.size() + 1;
        for (int i = 0; i < n; ++i) {
            // with classes, the samples go round the classes (a drop class has none; a pass
            // class's packets see no delay)
            const std::size_t id = static_cast<std::size_t>(i) % ids;
            const TrafficClass* c = id > 0 ? &link_.classes[id - 1] : nullptr;
            if (c && c->action == ClassAction::drop) continue;
            const LinkParams& p = c ? c->link.direction(d) : link_.direction(d);
            const bool pass = c && c->action == ClassAction::pass;
            std::normal_distribution<double> dist(static_cast<double>(p.mean_delay),
                                                  std::max(1.0, static_cast<double>(p.jitter)));
            const auto x = pass ? DurationNs{0}
                                : static_cast<DurationNs>(std::llround(std::max(0.0, dist(rng))));
            DelaySample sample{start + (end - start) * i / n, x, x, x + 1500};
            sample.class_id = static_cast<std::uint8_t>(id);
            dd.samples.push_back(sample);
            dd.delay.add(static_cast<double>(x));
            dd.lateness.add(1500);
        }
        // the limiter's queue, as a load above the rate settles it: drop-tail full (its wait,
        // limit * 8 / rate; the spacer counts no packets and no max), a discipline near its
        // target (max twice that)
        const LinkParams& lp = link_.direction(d);
        if (lp.limiter == Limiter::spacer && lp.rate_bps > 0) {
            QueueReport& q = dd.queue;
            q.sojourn_count = 100;
            if (lp.queue == QueueKind::droptail) {
                q.backlog_bytes = lp.queue_limit_bytes;
                q.sojourn_sum_ns =
                    100.0 * static_cast<double>(lp.queue_limit_bytes) * 8 / lp.rate_bps * 1e9;
            } else {
                const DurationNs target =
                    lp.queue == QueueKind::pie ? lp.pie_target : lp.codel_target;
                q.backlog_bytes =
                    static_cast<std::uint64_t>(lp.rate_bps * static_cast<double>(target) / 8e9);
                q.backlog_packets = q.backlog_bytes / 1518;
                q.sojourn_sum_ns = 100.0 * static_cast<double>(target);
                q.sojourn_max_ns = 2 * target;
            }
        }
        // the fake adopts a change at once: every interval runs with the generation in force
        dd.params_generation = generation_;
        // the built-in traffic's measured delay: the actual delay and 3 us of wire
        dd.has_measured = true;
        for (std::size_t i = 0; i < dd.samples.size(); i += 2) {
            const DelaySample& x = dd.samples[i];
            dd.measured.push_back(MeasuredDelay{x.arrival_ns, x.actual_ns + 3000});
            dd.measured_delay.add(static_cast<double>(x.actual_ns + 3000));
        }
    }
    return m;
}

void FakeLinkemd::run() {
    auto next_stats = Clock::now(), next_delay = Clock::now();
    std::int64_t last_delay = now_ns();
    while (!stop_) {
        server_->serve(std::chrono::milliseconds(std::min(5, delay_period_ms_.load())));
        std::vector<proto::Event> events;
        std::optional<proto::StatsMessage> stats;
        std::optional<proto::DelayMessage> delay;
        const auto now = Clock::now();
        {
            std::lock_guard lock(mutex_);
            events.swap(events_);
            if (now >= next_stats) {
                packets_ += 1000;
                if (capture_.running) {
                    capture_.records += 100;
                    capture_.bytes += 12800;
                    if (capture_.settings.duration > 0 &&
                        now_ns() - capture_start_ns_ >= capture_.settings.duration)
                        stop_capture(capture::StopReason::duration);
                }
                stats = stats_message();
                next_stats = now + std::chrono::milliseconds(100);
            }
            if (now >= next_delay) {
                const std::int64_t t = now_ns();
                delay = delay_message(last_delay, t);
                last_delay = t;
                next_delay = now + std::chrono::milliseconds(delay_period_ms_.load());
            }
        }
        for (const auto& e : events)
            server_->event(e);
        if (stats) server_->publish(std::move(*stats));
        if (delay) server_->publish(std::move(*delay));
    }
}

}  // namespace linkem::gui::test
