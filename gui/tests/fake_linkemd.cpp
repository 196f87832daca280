#include "fake_linkemd.hpp"

#include <chrono>
#include <cmath>
#include <random>

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
    }
    control::ServerOptions o;
    o.control = control_;
    o.telemetry = telemetry_;
    o.curve_secret = curve_secret_;
    o.curve_allow = curve_allow_;
    server_ =
        std::make_unique<control::Server>(o, *this, instance_, now_ns, [](const std::string&) {});
    stop_ = false;
    server_->event(proto::Event{"started", "info", "fake linkemd started", json::object()});
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

json FakeLinkemd::handle(const proto::Request& r, const std::string& source) {
    std::lock_guard lock(mutex_);
    requests_.push_back({r.method, r.params, now_ms()});
    if (r.method == "hello") {
        json ports = json::array();
        for (unsigned p = 0; p < directions_; ++p)
            ports.push_back({{"port", p == 0 ? "a" : "b"},
                             {"device", p == 0 ? "fake_a" : "fake_b"},
                             {"link_up", true},
                             {"speed_mbps", 10000}});
        json dirs = json::array({"a_to_b"});
        if (directions_ > 1) dirs.push_back("b_to_a");
        return {{"protocol_version", proto::kVersion},
                {"linkemd_version", "0.1.0-fake"},
                {"instance_id", instance_},
                {"uptime_ns", now_ns()},
                {"t_ns", now_ns()},
                {"directions", dirs},
                {"ports", ports},
                {"params_generation", generation_},
                {"link_params_schema", link_params_schema()},
                {"telemetry",
                 {{"endpoint", telemetry_},
                  {"stats_hz", 10},
                  {"delay_hz", 20},
                  {"delay_samples_per_s", 2000}}},
                {"capabilities",
                 {{"save_config", false},
                  {"load_config", false},
                  {"shutdown", false},
                  {"traffic", true}}}};
    }
    auto link_result = [&] {
        json j = proto::link_to_json(link_, directions_);
        j["params_generation"] = generation_;
        return j;
    };
    if (r.method == "get_link") return link_result();
    if (r.method == "set_link") {
        LinkConfig next =
            proto::apply_link_update(r.params, link_, directions_);  // throws ParamError
        link_ = next;
        ++generation_;
        events_.push_back(proto::Event{
            "params_applied", "info",
            "parameters applied (generation " + std::to_string(generation_) + ") from " + source,
            json{{"params_generation", generation_}, {"source", source}}});
        json j = link_result();
        j["applied"] = true;
        return j;
    }
    if (r.method == "get_stats") return stats_body();
    if (r.method == "get_traffic") {
        json t = traffic_;
        t["available"] = true;
        t["run"] = 1;
        t["frames_per_s"] =
            t["rate_bps"].get<double>() / (8.0 * t["frame_size_bytes"].get<double>());
        return t;
    }
    if (r.method == "set_traffic") {
        const TrafficConfig base = traffic_from_json(traffic_, TrafficConfig{});
        traffic_ = to_json(traffic_from_json(r.params, base));  // throws ParamError
        json t = traffic_;
        t["available"] = true;
        t["run"] = 2;
        t["frames_per_s"] =
            t["rate_bps"].get<double>() / (8.0 * t["frame_size_bytes"].get<double>());
        return t;
    }
    throw proto::ProtocolError(proto::Error{proto::ErrorCode::unavailable,
                                            "the fake linkemd does not do " + r.method, ""});
}

json FakeLinkemd::stats_body() const {
    json body = json::object();
    body["final"] = false;
    for (unsigned d = 0; d < directions_; ++d) {
        const LinkParams& p = d == 0 ? link_.a_to_b : link_.b_to_a;
        const double in = static_cast<double>(packets_);
        body[d == 0 ? "a_to_b" : "b_to_a"] = {{"packets_in", in},
                                              {"bytes_in", in * 1518},
                                              {"packets_out", in},
                                              {"bytes_out", in * 1518},
                                              {"drops_loss", 0},
                                              {"drops_policer", 0},
                                              {"drops_spacer", 0},
                                              {"drops_buffer_full", 0},
                                              {"delays_clamped", 0},
                                              {"in_flight", 0},
                                              {"tx_queued", 0},
                                              {"alpha", 0.99},
                                              {"rate_pps", 10000.0},
                                              {"rate_intervals", 1},
                                              {"params_generation", generation_},
                                              {"stalls", 0},
                                              {"stall_ns", 0},
                                              {"longest_stall_ns", 0},
                                              {"delay_samples_dropped", 0},
                                              {"traffic",
                                               {{"run", 1},
                                                {"sent", in},
                                                {"received", in},
                                                {"lost", 0},
                                                {"out_of_order", 0},
                                                {"samples_dropped", 0},
                                                {"delay", {{"count", 0}}}}}};
        (void)p;
    }
    body["ports"] = {{"a",
                      {{"device", "fake_a"},
                       {"rx", 0},
                       {"tx", 0},
                       {"rx_missed", 0},
                       {"rx_nombuf", 0},
                       {"tx_failed", 0},
                       {"link_up", true},
                       {"speed_mbps", 10000}}}};
    if (directions_ > 1)
        body["ports"]["b"] = {
            {"device", "fake_b"}, {"rx", 0},        {"tx", 0},         {"rx_missed", 0},
            {"rx_nombuf", 0},     {"tx_failed", 0}, {"link_up", true}, {"speed_mbps", 10000}};
    return body;
}

json FakeLinkemd::delay_body(std::int64_t start, std::int64_t end) {
    static thread_local std::mt19937_64 rng(7);
    json body = json::object();
    for (unsigned d = 0; d < directions_; ++d) {
        const LinkParams& p = d == 0 ? link_.a_to_b : link_.b_to_a;
        std::normal_distribution<double> dist(static_cast<double>(p.mean_delay),
                                              std::max(1.0, static_cast<double>(p.jitter)));
        json arr = json::array(), del = json::array(), sch = json::array(), act = json::array();
        double sum = 0, sum2 = 0, mn = 1e300, mx = 0;
        const int n = 20;
        for (int i = 0; i < n; ++i) {
            const double x = std::max(0.0, dist(rng));
            arr.push_back(start + (end - start) * i / n);
            del.push_back(std::llround(x));
            sch.push_back(std::llround(x));
            act.push_back(std::llround(x) + 1500);
            sum += x;
            sum2 += x * x;
            mn = std::min(mn, x);
            mx = std::max(mx, x);
        }
        const double mean = sum / n, sd = std::sqrt(std::max(0.0, sum2 / n - mean * mean));
        body[d == 0 ? "a_to_b" : "b_to_a"] = {
            {"start_ns", start},
            {"end_ns", end},
            {"samples",
             {{"arrival_ns", arr}, {"delay_ns", del}, {"scheduled_ns", sch}, {"actual_ns", act}}},
            {"delay",
             {{"count", n}, {"min_ns", mn}, {"max_ns", mx}, {"mean_ns", mean}, {"jitter_ns", sd}}},
            {"lateness",
             {{"count", n},
              {"min_ns", 1000},
              {"max_ns", 2000},
              {"mean_ns", 1500},
              {"jitter_ns", 300}}},
            {"samples_dropped", 0}};
    }
    return body;
}

void FakeLinkemd::run() {
    auto next_stats = Clock::now(), next_delay = Clock::now();
    std::int64_t last_delay = now_ns();
    while (!stop_) {
        server_->serve(std::chrono::milliseconds(5));
        std::vector<proto::Event> events;
        json stats, delay;
        const auto now = Clock::now();
        {
            std::lock_guard lock(mutex_);
            events.swap(events_);
            if (now >= next_stats) {
                packets_ += 1000;
                stats = stats_body();
                next_stats = now + std::chrono::milliseconds(100);
            }
            if (now >= next_delay) {
                const std::int64_t t = now_ns();
                delay = delay_body(last_delay, t);
                last_delay = t;
                next_delay = now + std::chrono::milliseconds(50);
            }
        }
        for (const auto& e : events)
            server_->event(e);
        if (stats.is_object()) server_->publish(proto::kTopicStats, stats);
        if (delay.is_object()) server_->publish(proto::kTopicDelay, delay);
    }
}

}  // namespace linkem::gui::test
