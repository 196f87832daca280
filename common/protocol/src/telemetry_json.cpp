#include "linkem/telemetry_json.hpp"

#include <stdexcept>
#include <string>

#include "linkem/classes.hpp"

namespace linkem {

using nlohmann::json;

json to_json(const CounterSnapshot& c) {
    json j = {{"packets_in", c.packets_in},
              {"bytes_in", c.bytes_in},
              {"packets_out", c.packets_out},
              {"bytes_out", c.bytes_out},
              {"delays_clamped", c.delays_clamped},
              {"waited", c.waited},
              {"ecn_marked", c.ecn_marked},
              {"in_flight", c.in_flight},
              {"alpha", c.alpha},
              {"rate_pps", c.rate_pps},
              {"rate_intervals", c.rate_intervals}};
    for (const DropCauseInfo& d : kDropCauses)
        j[d.key] = c.drops[d.cause];
    return j;
}

json to_json(const RunningStats& s) {
    json j = {{"count", s.count}};
    if (s.count == 0) return j;
    j["min_ns"] = s.min;
    j["max_ns"] = s.max;
    j["mean_ns"] = s.mean();
    j["jitter_ns"] = s.jitter();
    return j;
}

json to_json(const WaitSums& w) {
    json j = {{"count", w.count}};
    if (w.count == 0) return j;
    j["mean_ns"] = w.mean();
    j["spacer_mean_ns"] = w.spacer_mean();
    j["order_mean_ns"] = w.order_mean();
    return j;
}

json to_json(const QueueReport& q) {
    json j = {{"backlog_bytes", q.backlog_bytes},
              {"backlog_packets", q.backlog_packets},
              {"sojourn_count", q.sojourn_count}};
    if (q.sojourn_count == 0) return j;
    j["sojourn_mean_ns"] = q.sojourn_mean_ns();
    j["sojourn_max_ns"] = q.sojourn_max_ns;
    return j;
}

QueueReport queue_report_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("queue: expected an object");
    QueueReport q;
    for (const char* k : {"backlog_bytes", "backlog_packets", "sojourn_count"})
        if (!j.contains(k) || !j[k].is_number_unsigned())
            throw std::invalid_argument(std::string("queue.") + k + ": expected a whole number");
    q.backlog_bytes = j["backlog_bytes"].get<std::uint64_t>();
    q.backlog_packets = j["backlog_packets"].get<std::uint64_t>();
    q.sojourn_count = j["sojourn_count"].get<std::uint64_t>();
    if (q.sojourn_count != 0) {
        if (!j.contains("sojourn_mean_ns") || !j["sojourn_mean_ns"].is_number() ||
            !j.contains("sojourn_max_ns") || !j["sojourn_max_ns"].is_number_integer())
            throw std::invalid_argument("queue: sojourn_mean_ns/sojourn_max_ns missing");
        q.sojourn_sum_ns =
            j["sojourn_mean_ns"].get<double>() * static_cast<double>(q.sojourn_count);
        q.sojourn_max_ns = j["sojourn_max_ns"].get<DurationNs>();
    }
    return q;
}

bool has_class_ids(const DirectionDelay& d) {
    for (const DelaySample& s : d.samples)
        if (s.class_id != kDefaultClass) return true;
    return false;
}

json to_json(const DirectionDelay& d) {
    return to_json(d, has_class_ids(d));
}

json to_json(const DirectionDelay& d, bool class_ids) {
    json arrival = json::array(), delay = json::array(), scheduled = json::array(),
         actual = json::array(), class_id = json::array();
    for (const DelaySample& s : d.samples) {
        arrival.push_back(s.arrival_ns);
        delay.push_back(s.delay_ns);
        scheduled.push_back(s.scheduled_ns);
        actual.push_back(s.actual_ns);
        if (class_ids) class_id.push_back(s.class_id);
    }
    json j = {{"start_ns", d.start_ns},
              {"end_ns", d.end_ns},
              {"samples",
               {{"arrival_ns", std::move(arrival)},
                {"delay_ns", std::move(delay)},
                {"scheduled_ns", std::move(scheduled)},
                {"actual_ns", std::move(actual)}}},
              {"delay", to_json(d.delay)},
              {"lateness", to_json(d.lateness)},
              {"wait", to_json(d.wait)},
              {"queue", to_json(d.queue)},
              {"samples_dropped", d.samples_dropped}};
    if (class_ids) j["samples"]["class_id"] = std::move(class_id);
    if (d.params_generation) j["params_generation"] = *d.params_generation;
    if (d.has_measured) {
        json send = json::array(), delay_ns = json::array();
        for (const MeasuredDelay& m : d.measured) {
            send.push_back(m.send_ns);
            delay_ns.push_back(m.delay_ns);
        }
        j["measured"] = {{"send_ns", std::move(send)}, {"delay_ns", std::move(delay_ns)}};
        j["measured_delay"] = to_json(d.measured_delay);
    }
    return j;
}

namespace {

double number(const json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_number())
        throw std::invalid_argument(std::string(key) + ": missing or not a number");
    return j[key].get<double>();
}

std::int64_t integer(const json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_number_integer())
        throw std::invalid_argument(std::string(key) + ": missing or not an integer");
    return j[key].get<std::int64_t>();
}

}  // namespace

RunningStats running_stats_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("expected an object");
    RunningStats s;
    const std::int64_t n = integer(j, "count");
    if (n < 0) throw std::invalid_argument("count: negative");
    if (n == 0) return s;
    s.count = static_cast<std::uint64_t>(n);
    s.min = number(j, "min_ns");
    s.max = number(j, "max_ns");
    s.shift = number(j, "mean_ns");
    // sd_ns: jitter_ns's retired name, still read from a peer that sends only it
    // (docs/glossary.md, "Retired names").
    const double jitter = number(j, j.contains("jitter_ns") ? "jitter_ns" : "sd_ns");
    s.sum = 0;
    s.sumsq = jitter * jitter * static_cast<double>(s.count);
    return s;
}

WaitSums wait_sums_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("expected an object");
    WaitSums w;
    const std::int64_t n = integer(j, "count");
    if (n < 0) throw std::invalid_argument("count: negative");
    if (n == 0) return w;
    w.count = static_cast<std::uint64_t>(n);
    w.spacer_ns = number(j, "spacer_mean_ns") * static_cast<double>(w.count);
    w.order_ns = number(j, "order_mean_ns") * static_cast<double>(w.count);
    return w;
}

DirectionDelay direction_delay_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("expected an object");
    DirectionDelay d;
    d.start_ns = integer(j, "start_ns");
    d.end_ns = integer(j, "end_ns");
    if (!j.contains("samples") || !j["samples"].is_object())
        throw std::invalid_argument("samples: missing or not an object");
    const json& s = j["samples"];
    const char* keys[4] = {"arrival_ns", "delay_ns", "scheduled_ns", "actual_ns"};
    for (const char* k : keys)
        if (!s.contains(k) || !s[k].is_array())
            throw std::invalid_argument(std::string("samples.") + k + ": missing or not an array");
    const std::size_t n = s["arrival_ns"].size();
    for (const char* k : keys)
        if (s[k].size() != n)
            throw std::invalid_argument(std::string("samples.") + k +
                                        ": not as long as samples.arrival_ns");
    d.samples.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 4; ++k)
            if (!s[keys[k]][i].is_number_integer())
                throw std::invalid_argument(std::string("samples.") + keys[k] +
                                            ": expected integers");
        d.samples[i] = DelaySample{
            s["arrival_ns"][i].get<TimeNs>(), s["delay_ns"][i].get<DurationNs>(),
            s["scheduled_ns"][i].get<DurationNs>(), s["actual_ns"][i].get<DurationNs>()};
    }
    // class_id: only from a link with traffic classes; absent, every sample is `default`'s.
    if (s.contains("class_id")) {
        const json& c = s["class_id"];
        if (!c.is_array() || c.size() != n)
            throw std::invalid_argument(
                "samples.class_id: expected a list as long as samples.arrival_ns");
        for (std::size_t i = 0; i < n; ++i) {
            if (!c[i].is_number_unsigned() || c[i].get<std::uint64_t>() > kMaxClasses)
                throw std::invalid_argument("samples.class_id: expected integers 0 to " +
                                            std::to_string(kMaxClasses));
            d.samples[i].class_id = static_cast<ClassId>(c[i].get<std::uint64_t>());
        }
    }
    if (!j.contains("delay") || !j.contains("lateness"))
        throw std::invalid_argument("delay/lateness: missing");
    d.delay = running_stats_from_json(j["delay"]);
    d.lateness = running_stats_from_json(j["lateness"]);
    // Added within protocol version 1: a linkemd from before it sends no `wait`.
    if (j.contains("wait")) d.wait = wait_sums_from_json(j["wait"]);
    if (j.contains("queue")) d.queue = queue_report_from_json(j["queue"]);
    const std::int64_t dropped = integer(j, "samples_dropped");
    d.samples_dropped = dropped < 0 ? 0 : static_cast<std::uint64_t>(dropped);
    // params_generation and the built-in traffic's keys are optional.
    if (j.contains("params_generation")) {
        if (!j["params_generation"].is_number_unsigned())
            throw std::invalid_argument("params_generation: not a whole number >= 0");
        d.params_generation = j["params_generation"].get<std::uint64_t>();
    }
    if (j.contains("measured")) {
        const json& m = j["measured"];
        if (!m.is_object() || !m.contains("send_ns") || !m["send_ns"].is_array() ||
            !m.contains("delay_ns") || !m["delay_ns"].is_array() ||
            m["send_ns"].size() != m["delay_ns"].size())
            throw std::invalid_argument(
                "measured: expected {\"send_ns\": [...], \"delay_ns\": [...]} of equal length");
        d.has_measured = true;
        d.measured.resize(m["send_ns"].size());
        for (std::size_t i = 0; i < d.measured.size(); ++i) {
            const json &s = m["send_ns"][i], &v = m["delay_ns"][i];
            if (!s.is_number_integer() || !v.is_number_integer())
                throw std::invalid_argument("measured: expected integers");
            d.measured[i] = MeasuredDelay{s.get<TimeNs>(), v.get<DurationNs>()};
        }
        if (j.contains("measured_delay"))
            d.measured_delay = running_stats_from_json(j["measured_delay"]);
    }
    return d;
}

}  // namespace linkem
