#include "linkem/stats.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "linkem/telemetry_json.hpp"

namespace linkem {

using nlohmann::json;

json to_json(const LinkStats& s, bool final) {
    json j = json::object();
    j["t_ns"] = s.t_ns;
    j["final"] = final;
    for (unsigned d = 0; d < s.directions && d < 2; ++d) {
        const DirectionStats& ds = s.dir[d];
        json c = to_json(ds.counters);
        c["tx_queued"] = ds.tx_queued;
        c["params_generation"] = ds.params_generation;
        c["stalls"] = ds.stalls;
        c["stall_ns"] = ds.stall_ns;
        c["longest_stall_ns"] = ds.longest_stall_ns;
        c["delay_samples_dropped"] = ds.delay_samples_dropped;
        if (ds.traffic.present) {
            const TrafficStats& t = ds.traffic;
            c["traffic"] = {{"run", t.run},
                            {"sent", t.sent},
                            {"received", t.received},
                            {"lost", t.lost},
                            {"out_of_order", t.out_of_order},
                            {"duplicates", t.duplicates},
                            {"samples_dropped", t.samples_dropped},
                            {"delay", to_json(t.delay)}};
        }
        j[kDirectionKeys[d]] = std::move(c);
    }
    json ports = json::object();
    for (unsigned p = 0; p < s.ports && p < 2; ++p) {
        const PortStats& ps = s.port[p];
        ports[kPortNames[p]] = {{"device", ps.name},
                                {"rx", ps.rx},
                                {"tx", ps.tx},
                                {"rx_missed", ps.rx_missed},
                                {"rx_nombuf", ps.rx_nombuf},
                                {"tx_failed", ps.tx_failed},
                                {"link_up", ps.link_up},
                                {"speed_mbps", ps.speed_mbps}};
    }
    j["ports"] = std::move(ports);
    if (!s.classes.empty()) {
        json classes = json::array();
        for (const ClassStats& c : s.classes) {
            json o = {{"name", c.name}, {"action", std::string(to_string(c.action))}};
            for (unsigned d = 0; d < s.directions && d < 2; ++d)
                o[kDirectionKeys[d]] = to_json(c.dir[d]);
            classes.push_back(std::move(o));
        }
        j["classes"] = std::move(classes);
    }
    return j;
}

namespace {

const json& need(const json& j, const char* key, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) throw std::invalid_argument(where + key + ": missing");
    return j[key];
}

std::uint64_t u64(const json& j, const char* key, const std::string& where) {
    const json& v = need(j, key, where);
    if (!v.is_number_unsigned())
        throw std::invalid_argument(where + key + ": expected a whole number >= 0, got " +
                                    v.dump());
    return v.get<std::uint64_t>();
}

double real(const json& j, const char* key, const std::string& where) {
    const json& v = need(j, key, where);
    if (!v.is_number()) throw std::invalid_argument(where + key + ": expected a number");
    return v.get<double>();
}

// The counters of a direction (of the link or of a class). Keys added within protocol
// version 1 are optional: an older linkemd does not send them.
void read_counters(const json& c, const std::string& where, CounterSnapshot& k) {
    k.packets_in = u64(c, "packets_in", where);
    k.bytes_in = u64(c, "bytes_in", where);
    k.packets_out = u64(c, "packets_out", where);
    k.bytes_out = u64(c, "bytes_out", where);
    // drops_class and drops_aqm came later: optional.
    for (const DropCauseInfo& dc : kDropCauses)
        if ((dc.cause != DropCause::class_action && dc.cause != DropCause::aqm) ||
            c.contains(dc.key))
            k.drops[dc.cause] = u64(c, dc.key, where);
    k.delays_clamped = u64(c, "delays_clamped", where);
    if (c.contains("waited")) k.waited = u64(c, "waited", where);
    if (c.contains("ecn_marked")) k.ecn_marked = u64(c, "ecn_marked", where);
    k.in_flight = u64(c, "in_flight", where);
    k.alpha = real(c, "alpha", where);
    k.rate_pps = real(c, "rate_pps", where);
    k.rate_intervals = u64(c, "rate_intervals", where);
}

std::string text(const json& j, const char* key, const std::string& where) {
    const json& v = need(j, key, where);
    if (!v.is_string()) throw std::invalid_argument(where + key + ": expected a string");
    return v.get<std::string>();
}

}  // namespace

LinkStats link_stats_from_json(const json& j) {
    LinkStats s;
    const json& t = need(j, "t_ns", "");
    if (!t.is_number_integer()) throw std::invalid_argument("t_ns: expected an integer");
    s.t_ns = t.get<TimeNs>();
    s.directions = j.contains(kDirectionKeys[1]) ? 2 : 1;
    for (unsigned d = 0; d < s.directions; ++d) {
        const std::string where = std::string(kDirectionKeys[d]) + ".";
        const json& c = need(j, kDirectionKeys[d], "");
        DirectionStats& ds = s.dir[d];
        read_counters(c, where, ds.counters);
        ds.tx_queued = u64(c, "tx_queued", where);
        ds.params_generation = u64(c, "params_generation", where);
        ds.stalls = u64(c, "stalls", where);
        ds.stall_ns = u64(c, "stall_ns", where);
        ds.longest_stall_ns = u64(c, "longest_stall_ns", where);
        if (c.contains("delay_samples_dropped"))
            ds.delay_samples_dropped = u64(c, "delay_samples_dropped", where);
        if (c.contains("traffic")) {
            const json& t = c["traffic"];
            const std::string tw = where + "traffic.";
            TrafficStats& ts = ds.traffic;
            ts.present = true;
            ts.run = u64(t, "run", tw);
            ts.sent = u64(t, "sent", tw);
            ts.received = u64(t, "received", tw);
            ts.lost = u64(t, "lost", tw);
            ts.out_of_order = u64(t, "out_of_order", tw);
            if (t.contains("duplicates")) ts.duplicates = u64(t, "duplicates", tw);
            if (t.contains("samples_dropped")) ts.samples_dropped = u64(t, "samples_dropped", tw);
            if (t.contains("delay")) {
                try {
                    ts.delay = running_stats_from_json(t["delay"]);
                } catch (const std::invalid_argument& e) {
                    throw std::invalid_argument(tw + "delay." + e.what());
                }
            }
        }
    }
    s.ports = 0;
    if (j.contains("ports")) {
        const json& ports = j["ports"];
        for (unsigned p = 0; p < 2; ++p) {
            if (!ports.is_object() || !ports.contains(kPortNames[p])) break;
            const std::string where = std::string("ports.") + kPortNames[p] + ".";
            const json& o = ports[kPortNames[p]];
            PortStats& ps = s.port[p];
            if (o.contains("device") && o["device"].is_string()) ps.name = o["device"];
            ps.rx = u64(o, "rx", where);
            ps.tx = u64(o, "tx", where);
            ps.rx_missed = u64(o, "rx_missed", where);
            ps.rx_nombuf = u64(o, "rx_nombuf", where);
            ps.tx_failed = u64(o, "tx_failed", where);
            if (o.contains("link_up") && o["link_up"].is_boolean()) ps.link_up = o["link_up"];
            if (o.contains("speed_mbps"))
                ps.speed_mbps = static_cast<std::uint32_t>(u64(o, "speed_mbps", where));
            s.ports = p + 1;
        }
    }
    // With traffic classes only (absent: none, or an older linkemd).
    if (j.contains("classes")) {
        const json& classes = j["classes"];
        if (!classes.is_array()) throw std::invalid_argument("classes: expected a list");
        for (std::size_t i = 0; i < classes.size(); ++i) {
            const std::string where = "classes[" + std::to_string(i) + "].";
            const json& o = classes[i];
            ClassStats c;
            c.name = text(o, "name", where);
            const std::string action = text(o, "action", where);
            const std::optional<ClassAction> a = class_action_from_string(action);
            if (!a)
                throw std::invalid_argument(where + "action: '" + action +
                                            "' is not one; expected emulate, pass or drop");
            c.action = *a;
            for (unsigned d = 0; d < s.directions; ++d)
                read_counters(need(o, kDirectionKeys[d], where), where + kDirectionKeys[d] + ".",
                              c.dir[d]);
            s.classes.push_back(std::move(c));
        }
    }
    return s;
}

}  // namespace linkem
