#include "controller.hpp"

#include "linkem/capture_json.hpp"
#include "linkem/presets.hpp"
#include "linkem/traffic_json.hpp"
#include "linkem/units.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

namespace linkem::linkemd {

using nlohmann::json;
using proto::ErrorCode;
using Clock = std::chrono::steady_clock;

namespace {

void log(const std::string& msg) {
    std::fprintf(stderr, "linkemd: %s\n", msg.c_str());
}

[[noreturn]] void refuse(ErrorCode code, const std::string& message,
                         const std::string& field = "") {
    throw proto::ProtocolError(proto::Error{code, message, field});
}

// Methods without parameters (proto::MethodSpec::takes_params) refuse any.
void no_params(const proto::Request& r) {
    if (!r.params.empty())
        refuse(ErrorCode::invalid_params,
               "'" + r.method + "' takes no parameters; got '" + r.params.begin().key() + "'",
               "params." + r.params.begin().key());
}

// Settings the running data plane cannot change: they need a restart.
std::vector<std::string> restart_needed(const Options& running, const Options& next) {
    const dp::DataplaneConfig& a = running.dataplane;
    const dp::DataplaneConfig& b = next.dataplane;
    std::vector<std::string> out;
    if (a.port_a != b.port_a) out.push_back("port_a");
    if (a.port_b != b.port_b) out.push_back("port_b");
    if (a.workers != b.workers) out.push_back("workers");
    if (a.burst != b.burst) out.push_back("burst");
    if (next.mbufs_given && a.mbufs != b.mbufs) out.push_back("mbufs");
    if (a.delay_samples_per_s != b.delay_samples_per_s) out.push_back("delay_samples_per_s");
    if (!(running.control == next.control)) out.push_back("control/telemetry settings");
    return out;
}

}  // namespace

Controller::Controller(const CommandLine& cl, const Options& options, dp::Dataplane& dp,
                       std::string instance_id, gen::Generator* generator)
    : cl_(cl),
      options_(options),
      dp_(dp),
      instance_id_(std::move(instance_id)),
      generator_(generator),
      traffic_run_(generator ? generator->run_number() : 0),
      scenario_(
          dp, [this](const proto::Event& e) { event(e); },
          [this](std::uint64_t gen, const std::string& source) { applied(gen, source); }) {}

void Controller::attach(control::Server* server) {
    server_ = server;
}

json Controller::handle(const proto::Request& r, const std::string& source) {
    // One handler per row of the protocol's method table (proto::kMethods), in its order.
    using Handler = json (*)(Controller&, const proto::Request&, const std::string&);
    using M = proto::Method;
    // The scenario methods are the player's (scenario_control.cpp).
    static constexpr Handler scenario_handler = [](Controller& c, const proto::Request& r,
                                                   const std::string& source) {
        return c.scenario_.handle(proto::find_method(r.method)->method, r.params, source);
    };
    static constexpr std::pair<M, Handler> kHandlers[] = {
        {M::hello,
         [](Controller& c, const proto::Request& r, const std::string&) {
             for (const auto& [key, value] : r.params.items())
                 if (key != "client")
                     refuse(ErrorCode::invalid_params,
                            "unknown parameter '" + key + "'; known: client", "params." + key);
             return c.hello();
         }},
        {M::get_link,
         [](Controller& c, const proto::Request&, const std::string&) {
             return proto::to_json(c.link_state(c.dp_.generation(), c.scenario_.in_force()));
         }},
        {M::set_link, [](Controller& c, const proto::Request& r,
                         const std::string& source) { return c.set_link(r.params, source); }},
        {M::get_stats,
         [](Controller& c, const proto::Request&, const std::string&) {
             // A request served before the first tick: publish the first message now, so
             // that the reply is still the newest `stats` message.
             if (c.last_stats_.header.instance_id.empty()) c.publish_stats();
             return proto::to_json(c.last_stats_);
         }},
        {M::save_config,
         [](Controller& c, const proto::Request&, const std::string&) { return c.save_config(); }},
        {M::load_config, [](Controller& c, const proto::Request&,
                            const std::string& source) { return c.load_config(source); }},
        {M::get_traffic, [](Controller& c, const proto::Request&,
                            const std::string&) { return c.traffic_result(); }},
        {M::set_traffic, [](Controller& c, const proto::Request& r,
                            const std::string& source) { return c.set_traffic(r.params, source); }},
        {M::load_scenario, scenario_handler},
        {M::start_scenario, scenario_handler},
        {M::pause_scenario, scenario_handler},
        {M::resume_scenario, scenario_handler},
        {M::stop_scenario, scenario_handler},
        {M::seek_scenario, scenario_handler},
        {M::get_scenario, scenario_handler},
        {M::capture_start,
         [](Controller& c, const proto::Request& r, const std::string& source) {
             return c.capture_start(r.params, source);
         }},
        {M::capture_stop,
         [](Controller& c, const proto::Request&, const std::string&) {
             const capture::Status s = c.dp_.stop_capture(capture::StopReason::stopped);
             c.capture_events();
             return capture_status_to_json(s);
         }},
        {M::capture_status,
         [](Controller& c, const proto::Request&, const std::string&) {
             c.capture_events();  // a capture that ended on its own is finished first
             return capture_status_to_json(c.dp_.capture_status());
         }},
        {M::shutdown,
         [](Controller& c, const proto::Request&, const std::string& source) {
             if (!c.options_.control.allow_remote_shutdown)
                 refuse(ErrorCode::not_permitted,
                        "shutdown is not allowed; start linkemd with --allow-remote-shutdown");
             log("shutdown requested by " + source + ", stopping");
             c.shutdown_ = true;
             return json::object();
         }},
    };
    static_assert(std::size(kHandlers) == proto::kMethodCount);
    static_assert([] {
        for (std::size_t i = 0; i < proto::kMethodCount; ++i)
            if (kHandlers[i].first != proto::kMethods[i].method) return false;
        return true;
    }());

    const proto::MethodSpec* m = proto::find_method(r.method);
    if (!m) refuse(ErrorCode::unknown_method, "unknown method '" + r.method + "'", "method");
    if (!m->takes_params) no_params(r);
    return kHandlers[static_cast<std::size_t>(m->method)].second(*this, r, source);
}

json Controller::hello() const {
    const dp::DataplaneStats s = dp_.stats();
    proto::Hello h;
    h.linkemd_version = version();
    h.instance_id = instance_id_;
    h.uptime_ns = h.t_ns = dp::now_ns();
    h.directions = dp_.directions();
    for (unsigned p = 0; p < s.ports; ++p)
        h.ports.push_back(proto::PortInfo{kPortNames[p], s.port[p].name, s.port[p].link_up,
                                          s.port[p].speed_mbps});
    h.params_generation = dp_.generation();
    h.methods = proto::method_names();
    h.link_params_schema = link_schema();
    h.telemetry = {server_ ? server_->telemetry_endpoint() : "", options_.control.telemetry_hz,
                   static_cast<unsigned>(kNsPerSec / dp::kReportPeriod),
                   options_.dataplane.delay_samples_per_s};
    h.capabilities = {.save_config = !options_.config_path.empty(),
                      .load_config = !options_.config_path.empty(),
                      .shutdown = options_.control.allow_remote_shutdown,
                      .traffic = generator_ != nullptr,
                      .scenario = true,
                      .classes = true,
                      .capture = true};
    return proto::to_json(h);
}

proto::LinkState Controller::link_state(std::uint64_t generation, const LinkConfig& link) const {
    return proto::LinkState{generation, dp_.directions(), link, std::nullopt, std::nullopt};
}

json Controller::traffic_result() const {
    proto::TrafficState t;
    if (generator_) {
        t.available = true;
        t.config = generator_->config();
        t.run = traffic_run_;
        t.frames_per_s = t.config.spec.rate_bps / t.config.spec.bits_per_packet();
    }
    return proto::to_json(t);
}

json Controller::set_traffic(const json& params, const std::string& source) {
    if (!generator_)
        refuse(ErrorCode::unavailable,
               "this linkemd has no built-in traffic: it runs on virtual ports only (linkemd "
               "--demo, or --port-a virtual --port-b virtual)");
    TrafficConfig next;
    try {
        next = traffic_from_json(params, generator_->config());
    } catch (const ParamError& e) {
        throw ParamError(e.field(), e.message());
    }
    const std::uint32_t run = generator_->apply(next);
    // A new run counts from 0: until its first report, stats show it with no frames, not
    // with the counts of the run before.
    if (run != traffic_run_)
        for (TrafficCounts& c : traffic_counts_)
            c = TrafficCounts{};
    traffic_run_ = run;
    for (RunningStats& m : measured_since_)
        m = RunningStats{};
    for (RunningStats& m : measured_interval_)
        m = RunningStats{};
    const json result = traffic_result();
    proto::Event e = proto::Event::info(
        "traffic", std::string("built-in traffic ") +
                       (next.running ? "sending " + format_rate(next.spec.rate_bps) + " " +
                                           std::string(to_string(next.spec.pattern)) + ", " +
                                           std::to_string(next.spec.frame_bytes) + " B frames"
                                     : "stopped") +
                       " (from " + source + ")");
    e.source = source;
    e.traffic = next;
    event(e);
    return result;
}

json Controller::capture_start(const json& params, const std::string& source) {
    // ParamError (invalid_params, its field) from the params or from the data plane (the
    // direction, the class, the file); Busy: one is running.
    const capture::Settings settings = capture_settings_from_json(params);
    capture::Status s;
    try {
        s = dp_.start_capture(settings);
    } catch (const capture::Busy& e) {
        refuse(ErrorCode::unavailable, e.what());
    }
    log("capture started by " + source);
    capture_events();
    return capture_status_to_json(s);
}

void Controller::start_capture(const capture::Settings& s) {
    dp_.start_capture(s);
    capture_events();
}

void Controller::stop_capture() {
    dp_.stop_capture(capture::StopReason::shutdown);
    capture_events();
}

void Controller::capture_events() {
    for (const capture::Event& e : dp_.take_capture_events())
        event(proto::Event::capture(e));
}

void Controller::applied(std::uint64_t generation, const std::string& source) {
    // The measured delay is compared with the parameters in force: start it again.
    for (RunningStats& m : measured_since_)
        m = RunningStats{};
    proto::Event e =
        proto::Event::info("params_applied", "parameters applied (generation " +
                                                 std::to_string(generation) + ") from " + source);
    e.params_generation = generation;
    e.source = source;
    event(e);
}

json Controller::set_link(const json& params, const std::string& source) {
    const unsigned dirs = dp_.directions();
    // Checked against the parameters in force first: a ParamError names the dotted field and
    // leaves everything as it was, a playing scenario included. A valid change pauses one.
    const LinkConfig next = proto::apply_link_update(params, scenario_.in_force(), dirs);
    scenario_.interrupt(source);
    const auto [gen, link] = dp_.update([&](const LinkConfig&) { return next; });
    proto::LinkState result = link_state(gen, link);
    result.applied = dp_.wait_applied(gen, std::chrono::seconds(2));
    applied(gen, source);
    return proto::to_json(result);
}

json Controller::load_config(const std::string& source) {
    if (cl_.config.empty())
        refuse(ErrorCode::unavailable,
               "linkemd was started without --config: there is no file to load");
    Options next;
    try {
        next = build_options(cl_);
    } catch (const UsageError& e) {
        refuse(ErrorCode::invalid_params, std::string(e.what()) + "; nothing changed");
    }
    const std::vector<std::string> ignored = restart_needed(options_, next);
    scenario_.interrupt(source);
    const auto [gen, link] = dp_.update([&](const LinkConfig&) { return next.dataplane.link; });
    proto::LinkState result = link_state(gen, link);
    result.applied = dp_.wait_applied(gen, std::chrono::seconds(2));
    result.ignored = ignored;
    applied(gen, source);
    return proto::to_json(result);
}

void Controller::reload(const std::string& source) {
    if (cl_.config.empty()) {
        log("SIGHUP: no --config file to re-read; nothing changed");
        return;
    }
    try {
        const auto r = proto::decode<proto::LinkState>(load_config(source));
        if (!r.ignored->empty()) {
            std::string list;
            for (const std::string& k : *r.ignored)
                list += (list.empty() ? "" : ", ") + k;
            log("SIGHUP: " + list + " need a restart; those changes are ignored");
        }
        const std::string gen = std::to_string(r.params_generation);
        log("SIGHUP: " + cl_.config +
            (*r.applied
                 ? " applied (generation " + gen + ")"
                 : " published (generation " + gen + "), not yet acknowledged by the data plane"));
    } catch (const proto::ProtocolError& e) {
        refused_reload(e.error().message, e.error().code);
    } catch (const ParamError& e) {
        refused_reload(e.what(), ErrorCode::invalid_params);
    }
}

// A config file SIGHUP could not apply: the link stays as it is. A request_refused event (of
// load_config, from SIGHUP), on stderr as every event.
void Controller::refused_reload(std::string why, ErrorCode code) {
    const std::string tail = "; nothing changed";
    if (why.ends_with(tail)) why.resize(why.size() - tail.size());
    proto::Event e;
    e.kind = "request_refused";
    e.severity = "warning";
    e.message = "SIGHUP: config not applied, nothing changed: " + why;
    e.source = "SIGHUP";
    e.method = "load_config";
    e.code = std::string(proto::to_string(code));
    event(e);
}

json Controller::save_config() {
    const std::string& path = options_.config_path;
    if (path.empty())
        refuse(ErrorCode::unavailable,
               "linkemd was started without --config: there is no file to save to");
    json file;
    {
        std::ifstream in(path);
        if (!in) refuse(ErrorCode::failed, "cannot read " + path + ": " + std::strerror(errno));
        try {
            file = json::parse(in);
        } catch (const json::exception& e) {
            refuse(ErrorCode::failed,
                   path + " is not valid JSON now (" + e.what() + "); not overwritten");
        }
    }
    if (!file.is_object())
        refuse(ErrorCode::failed, path + " is not a JSON object; not overwritten");
    // Link parameters per direction, every key, with the seeds in use; the other keys stay.
    const std::uint64_t gen = dp_.generation();
    file = link_file_to_json(scenario_.in_force(), dp_.directions(), file);
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) refuse(ErrorCode::failed, "cannot write " + tmp + ": " + std::strerror(errno));
        out << file.dump(2) << "\n";
        out.flush();
        if (!out) {
            std::remove(tmp.c_str());
            refuse(ErrorCode::failed, "cannot write " + tmp + ": " + std::strerror(errno));
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        refuse(ErrorCode::failed, "cannot replace " + path + ": " + why);
    }
    proto::Event e = proto::Event::info(
        "config_saved", "parameters (generation " + std::to_string(gen) + ") saved to " + path);
    e.path = path;
    e.params_generation = gen;
    event(e);
    std::error_code ec;
    const std::string abs = std::filesystem::absolute(path, ec).string();
    return proto::to_json(proto::SavedConfig{ec ? path : abs, gen});
}

void Controller::event(const proto::Event& e) {
    log(e.message);
    if (server_) server_->event(e);
}

void Controller::publish_stats() {
    proto::StatsMessage m;
    m.stats = dp_.stats();
    m.header.t_ns = m.stats.t_ns;
    m.scenario = scenario_.scenario_position(dp::now_ns());
    m.capture = dp_.capture_status();
    if (generator_) {
        take_traffic(nullptr);
        for (unsigned d = 0; d < generator_->directions(); ++d) {
            TrafficStats& t = m.stats.dir[d].traffic;
            static_cast<TrafficCounts&>(t) = traffic_counts_[d];
            t.present = true;
            t.run = traffic_run_;
            t.delay = measured_since_[d];
        }
    }
    last_stats_ = server_ ? server_->publish(std::move(m)) : std::move(m);
    last_stats_.header.instance_id = instance_id_;
}

void Controller::publish_final(const dp::DataplaneStats& s) {
    if (!server_) return;
    proto::StatsMessage m;
    m.stats = s;
    m.header.t_ns = s.t_ns;
    m.final = true;
    m.capture = dp_.capture_status();
    server_->publish(std::move(m));
}

void Controller::publish_delay() {
    dp_.take_telemetry(batch_);
    proto::DelayMessage m;
    m.directions = dp_.directions();
    bool any = false;
    for (unsigned k = 0; k < m.directions; ++k) {
        const auto& reports = batch_.reports[k];
        DirectionDelay& d = m.dir[k];
        if (!reports.empty()) {
            any = true;
            d.start_ns = reports.front().start_ns;
            d.end_ns = reports.back().end_ns;
            for (const IntervalReport& r : reports) {
                d.delay.merge(r.delay);
                d.lateness.merge(r.lateness);
                d.wait.merge(r.wait);
                d.queue.sojourn_count += r.queue.sojourn_count;
                d.queue.sojourn_sum_ns += r.queue.sojourn_sum_ns;
                d.queue.sojourn_max_ns = std::max(d.queue.sojourn_max_ns, r.queue.sojourn_max_ns);
            }
            d.queue.backlog_bytes = reports.back().queue.backlog_bytes;
            d.queue.backlog_packets = reports.back().queue.backlog_packets;
            d.samples_dropped = reports.back().samples_dropped;
            d.params_generation = reports.back().params_generation;
        }
        d.samples = std::move(batch_.samples[k]);
        any = any || !d.samples.empty();
    }
    if (!any || !server_) return;
    if (generator_) take_traffic(&m);
    server_->publish(std::move(m));
}

// Moves the generator's reports in: counts for stats, the measured delay since the parameters
// in force (for stats), and, for a delay message (m), each direction's measured samples and
// the measured delay of the interval.
void Controller::take_traffic(proto::DelayMessage* m) {
    traffic_reports_.clear();
    generator_->take(traffic_reports_, traffic_samples_);
    for (const TrafficReport& r : traffic_reports_) {
        if (r.run != traffic_run_) continue;  // a report of the run before a set_traffic
        for (unsigned d = 0; d < generator_->directions(); ++d) {
            traffic_counts_[d] = r.counts[d];
            measured_since_[d].merge(r.delay[d]);
            measured_interval_[d].merge(r.delay[d]);  // also what stats took in between
        }
        traffic_counted_to_ns_ = std::max(traffic_counted_to_ns_, r.end_ns);
    }
    if (!m) return;
    for (unsigned d = 0; d < generator_->directions() && d < m->directions; ++d) {
        // Samples arrive as their frames do, reports every 50 ms: the samples of frames no
        // report has counted yet wait for the next message.
        counted_samples_.clear();
        take_counted_samples(traffic_samples_[d], traffic_run_, traffic_counted_to_ns_,
                             counted_samples_);
        DirectionDelay& dd = m->dir[d];
        dd.has_measured = true;
        dd.measured.clear();
        for (const MeasuredSample& s : counted_samples_)
            dd.measured.push_back(MeasuredDelay{s.send_ns, s.delay_ns});
        dd.measured_delay = measured_interval_[d];
        measured_interval_[d] = RunningStats{};
    }
}

Clock::time_point Controller::tick(Clock::time_point now) {
    const auto stats_period = std::chrono::nanoseconds(kNsPerSec / options_.control.telemetry_hz);
    const auto delay_period = std::chrono::nanoseconds(dp::kReportPeriod);
    if (now >= next_stats_) {
        publish_stats();
        next_stats_ =
            next_stats_ == Clock::time_point{} ? now + stats_period : next_stats_ + stats_period;
        if (next_stats_ <= now) next_stats_ = now + stats_period;
    }
    if (now >= next_delay_) {
        publish_delay();
        next_delay_ =
            next_delay_ == Clock::time_point{} ? now + delay_period : next_delay_ + delay_period;
        if (next_delay_ <= now) next_delay_ = now + delay_period;
    }
    // A capture's events (started, rotated, stopped, missed), and a capture that ended on its
    // own (duration, packets, a write error) finished.
    capture_events();
    auto next = std::min(next_stats_, next_delay_);
    // A scenario's next step, reported when its time has passed on the data plane's clock.
    const TimeNs dp_now = dp::now_ns();
    if (const TimeNs step = scenario_.tick(dp_now); step != 0)
        next = std::min(next, now + std::chrono::nanoseconds(std::max<TimeNs>(step - dp_now, 0)));
    return next;
}

}  // namespace linkem::linkemd
