#include "flows.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string_view>

#include "linkem/classes_json.hpp"
#include "linkem/traffic_json.hpp"

namespace linkem::sim {
namespace {

using nlohmann::json;

constexpr const char* kFlowKeys =
    "'name', 'direction', 'pattern', 'rate_bps', 'frame_size_bytes', 'period_us', 'ethertype', "
    "'protocol', 'a_addr', 'b_addr', 'a_port', 'b_port', 'vlan', 'dscp', 'ect'";
constexpr const char* kBoth = "both";

// A flow direction's name: kDirectionKeys' two, then `both`.
const char* direction_name(FlowDirection d) {
    return d == FlowDirection::both ? kBoth : kDirectionKeys[static_cast<int>(d)];
}

// Where a flow is, for its errors: its index and, once read, its name.
struct FlowPlace {
    std::size_t index;
    std::string name;
    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        const std::string at = "flows[" + std::to_string(index) + "]";
        throw ParamError(key.empty() ? at : at + "." + key,
                         (name.empty() ? "flow: " : "flow '" + name + "': ") + message);
    }
};

bool is_traffic_key(std::string_view k) {
    return k == "pattern" || k == "rate_bps" || k == "frame_size_bytes" || k == "period_us";
}
bool is_header_key(std::string_view k) {
    return k == "ethertype" || k == "protocol" || k == "a_port" || k == "b_port" || k == "vlan" ||
           k == "dscp";
}

std::string read_flow_name(const json& j, const FlowPlace& at) {
    if (!j.is_object())
        at.fail("", "expected a flow object ({\"name\": ..., \"rate_bps\": ...}), got " +
                        std::string(j.type_name()));
    if (!j.contains("name")) at.fail("name", "required");
    const json& n = j["name"];
    if (!n.is_string()) at.fail("name", "expected a string, got " + n.dump());
    const std::string name = n.get<std::string>();
    const bool ok =
        !name.empty() && name.size() <= kMaxClassNameLength &&
        std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        });
    if (!ok)
        at.fail("name", "'" + name + "' is not allowed; allowed 1 to 32 of a-z, 0-9, '_', '-'");
    return name;
}

FlowDirection read_direction(const json& v, const FlowPlace& at) {
    for (FlowDirection d : {FlowDirection::a_to_b, FlowDirection::b_to_a, FlowDirection::both})
        if (v.is_string() && v.get<std::string>() == direction_name(d)) return d;
    at.fail("direction", v.dump() + " is not allowed; allowed '" + kDirectionKeys[0] + "', '" +
                             kDirectionKeys[1] + "', '" + kBoth + "'");
}

// An address: IPv4 or IPv6, without a length.
IpPrefix read_address(const json& v, const std::string& key, const FlowPlace& at) {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (!v.is_string() || text.find('/') != std::string::npos)
        at.fail(key, "'" + text +
                         "' is not allowed; allowed an IPv4 or IPv6 address, "
                         "such as 10.0.0.1 or 2001:db8::1");
    try {
        return ip_prefix_from_string(text);
    } catch (const std::invalid_argument&) {
        at.fail(key, "'" + text +
                         "' is not an IPv4 or IPv6 address, such as 10.0.0.1 or "
                         "2001:db8::1");
    }
}

// pattern, rate_bps, frame_size_bytes, period_us: the built-in traffic's keys and limits.
TrafficSpec read_traffic(const json& keys, const FlowPlace& at) {
    if (!keys.contains("rate_bps"))
        at.fail("rate_bps", "required: the flow's bit rate (frames' bytes x 8 per second)");
    try {
        return traffic_from_json(keys, TrafficConfig{}).spec;
    } catch (const ParamError& e) {
        at.fail(e.field(), e.message());
    }
}

// ethertype, protocol, ports, vlan, dscp: read as a class's match reads them.
void read_headers(const json& keys, Flow& f, const FlowPlace& at) {
    ClassMatch m;
    try {
        m = class_match_from_json(keys);
    } catch (const ParamError& e) {
        at.fail(e.field(), e.message());
    }
    for (auto [key, range, port] :
         {std::tuple{"a_port", &m.a_port, &f.a_port}, std::tuple{"b_port", &m.b_port, &f.b_port}}) {
        if (!*range) continue;
        if ((*range)->lo != (*range)->hi)
            at.fail(key, "a flow has one port, not a range; allowed 0 .. 65535");
        *port = (*range)->lo;
    }
    if (m.ethertype) f.ethertype = *m.ethertype;
    if (m.protocol) f.protocol = *m.protocol;
    f.vlan = m.vlan;
    if (m.dscp) f.dscp = *m.dscp;
}

}  // namespace

std::size_t flow_header_bytes(const Flow& f) {
    std::size_t n = 14 + (f.vlan ? 4 : 0) + 4;  // Ethernet, the tag, the FCS
    if (f.family == IpFamily::none) return n;
    n += f.family == IpFamily::ipv4 ? 20 : 40;
    switch (f.protocol) {
        case kProtocolTcp:
            return n + 20;
        case kProtocolUdp:
            return n + 8;
        case kProtocolSctp:
            return n + 12;
        case kProtocolIcmp:
        case kProtocolIcmpv6:
            return n + 8;
        default:
            return n;
    }
}

namespace {

// The addresses (defaults 10.0.0.1 and 10.0.0.2, or 2001:db8::1 and ::2), and the family
// and ethertype they and the ethertype key agree on.
void settle_addresses(const json& j, bool ethertype_given, Flow& f, const FlowPlace& at) {
    std::optional<IpPrefix> a, b;
    if (j.contains("a_addr")) a = read_address(j["a_addr"], "a_addr", at);
    if (j.contains("b_addr")) b = read_address(j["b_addr"], "b_addr", at);
    if (a && b && a->family != b->family)
        at.fail("b_addr", "is of another IP version than a_addr; allowed both IPv4 or both IPv6");
    const IpFamily given = a ? a->family : b ? b->family : IpFamily::none;
    if (!ethertype_given && given == IpFamily::ipv6) f.ethertype = kEthertypeIpv6;
    f.family = f.ethertype == kEthertypeIpv4   ? IpFamily::ipv4
               : f.ethertype == kEthertypeIpv6 ? IpFamily::ipv6
                                               : IpFamily::none;
    if (f.family == IpFamily::none) {
        for (const char* k : {"protocol", "a_addr", "b_addr", "a_port", "b_port", "dscp", "ect"})
            if (j.contains(k))
                at.fail(k,
                        "a flow of a non-IP ethertype carries no IP header; allowed only with "
                        "ethertype ipv4 or ipv6");
        return;
    }
    if (given != IpFamily::none && given != f.family)
        at.fail(a ? "a_addr" : "b_addr", std::string("is not an ") +
                                             (f.family == IpFamily::ipv4 ? "IPv4" : "IPv6") +
                                             " address as the ethertype asks");
    const bool v4 = f.family == IpFamily::ipv4;
    f.a_addr = a ? a->address : ip_prefix_from_string(v4 ? "10.0.0.1" : "2001:db8::1").address;
    f.b_addr = b ? b->address : ip_prefix_from_string(v4 ? "10.0.0.2" : "2001:db8::2").address;
}

// Ports with TCP, UDP and SCTP (both required), none with other protocols; headers that fit.
void check_flow(const Flow& f, const FlowPlace& at) {
    if (f.family != IpFamily::none && protocol_has_ports(f.protocol)) {
        for (auto [key, port] : {std::pair{"a_port", &f.a_port}, {"b_port", &f.b_port}})
            if (!*port)
                at.fail(key, "required with protocol '" + std::string(protocol_name(f.protocol)) +
                                 "'; allowed 0 .. 65535");
    } else if (f.a_port || f.b_port) {
        at.fail(f.a_port ? "a_port" : "b_port",
                "this flow's protocol has no ports; allowed only with tcp, udp and sctp");
    }
    const std::size_t need = flow_header_bytes(f);
    if (f.traffic.frame_bytes < need)
        at.fail("frame_size_bytes", std::to_string(f.traffic.frame_bytes) +
                                        " is too small for the flow's headers; allowed at least " +
                                        std::to_string(need) + " (with the FCS)");
}

Flow read_flow(const json& j, std::size_t index) {
    FlowPlace at{index, ""};
    Flow f;
    f.name = read_flow_name(j, at);
    at.name = f.name;
    json traffic = json::object(), headers = json::object();
    for (const auto& [key, value] : j.items()) {
        if (is_traffic_key(key))
            traffic[key] = value;
        else if (is_header_key(key))
            headers[key] = value;
        else if (key == "direction")
            f.direction = read_direction(value, at);
        else if (key == "ect") {
            if (!value.is_boolean())
                at.fail("ect", value.dump() +
                                   " is not allowed; allowed true (the frames are "
                                   "ECN-capable, ECT(0)) or false");
            f.ect = value.get<bool>();
        } else if (key != "name" && key != "a_addr" && key != "b_addr")
            at.fail(key, "unknown key; allowed " + std::string(kFlowKeys));
    }
    f.traffic = read_traffic(traffic, at);
    read_headers(headers, f, at);
    settle_addresses(j, headers.contains("ethertype"), f, at);
    check_flow(f, at);
    return f;
}

}  // namespace

std::vector<Flow> flows_from_json(const json& j) {
    if (!j.is_array() || j.empty())
        throw ParamError("flows",
                         "expected a non-empty list of flows ([{\"name\": \"call\", "
                         "\"rate_bps\": 64000, ...}]), got " +
                             (j.is_array() ? std::string("an empty list") : j.dump()));
    if (j.size() > kMaxFlows)
        throw ParamError("flows", std::to_string(j.size()) + " flows; allowed at most " +
                                      std::to_string(kMaxFlows));
    std::vector<Flow> flows;
    std::set<std::string> names;
    for (std::size_t i = 0; i < j.size(); ++i) {
        flows.push_back(read_flow(j[i], i));
        if (!names.insert(flows.back().name).second)
            FlowPlace{i, flows.back().name}.fail(
                "name", "another flow has this name; allowed a name no other flow has");
    }
    return flows;
}

json to_json(const Flow& f) {
    json j = {{"name", f.name},
              {"direction", direction_name(f.direction)},
              {"pattern", std::string(to_string(f.traffic.pattern))},
              {"rate_bps", f.traffic.rate_bps},
              {"frame_size_bytes", f.traffic.frame_bytes}};
    if (f.traffic.pattern == TrafficPattern::sine)
        j["period_us"] = static_cast<double>(f.traffic.period) / kNsPerUs;
    const std::string_view et = ethertype_name(f.ethertype);
    j["ethertype"] = et.empty() ? json(f.ethertype) : json(std::string(et));
    if (f.family != IpFamily::none) {
        const std::string_view p = protocol_name(f.protocol);
        j["protocol"] = p.empty() ? json(f.protocol) : json(std::string(p));
        const std::uint8_t len = f.family == IpFamily::ipv4 ? 32 : 128;
        auto addr = [&](const IpAddress& a) {
            const std::string s = to_string(IpPrefix{f.family, a, len});
            return s.substr(0, s.find('/'));
        };
        j["a_addr"] = addr(f.a_addr);
        j["b_addr"] = addr(f.b_addr);
        if (f.a_port) j["a_port"] = *f.a_port;
        if (f.b_port) j["b_port"] = *f.b_port;
        j["dscp"] = f.dscp;
        j["ect"] = f.ect;
    }
    if (f.vlan) j["vlan"] = *f.vlan;
    return j;
}

namespace {

void put16(std::uint8_t* p, std::uint16_t v) {
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}

// The IPv4 header's checksum (RFC 791), over its 20 bytes with the checksum field 0.
std::uint16_t ipv4_checksum(const std::uint8_t* h) {
    std::uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += static_cast<std::uint32_t>(h[i] << 8 | h[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

// The IP header at p, `len` bytes from it to the frame's end; returns its size.
std::size_t put_ip(std::uint8_t* p, std::size_t len, const Flow& f, const IpAddress& src,
                   const IpAddress& dst) {
    const std::uint8_t tc = static_cast<std::uint8_t>(f.dscp << 2 | (f.ect ? 2 : 0));
    if (f.family == IpFamily::ipv4) {
        p[0] = 0x45;
        p[1] = tc;
        put16(p + 2, static_cast<std::uint16_t>(len));
        put16(p + 6, 0x4000);  // don't fragment
        p[8] = 64;
        p[9] = f.protocol;
        std::memcpy(p + 12, src.data(), 4);
        std::memcpy(p + 16, dst.data(), 4);
        put16(p + 10, ipv4_checksum(p));
        return 20;
    }
    p[0] = static_cast<std::uint8_t>(0x60 | tc >> 4);
    p[1] = static_cast<std::uint8_t>((tc & 0xf) << 4);
    put16(p + 4, static_cast<std::uint16_t>(len - 40));
    p[6] = f.protocol;
    p[7] = 64;
    std::memcpy(p + 8, src.data(), 16);
    std::memcpy(p + 24, dst.data(), 16);
    return 40;
}

// The transport header's first bytes: ports (and UDP's length, TCP's data offset and ACK
// flag), or an ICMP echo request.
void put_transport(std::uint8_t* p, std::size_t len, const Flow& f, std::uint16_t src_port,
                   std::uint16_t dst_port) {
    if (protocol_has_ports(f.protocol)) {
        put16(p, src_port);
        put16(p + 2, dst_port);
    }
    if (f.protocol == kProtocolUdp) put16(p + 4, static_cast<std::uint16_t>(len));
    if (f.protocol == kProtocolTcp) {
        p[12] = 5 << 4;
        p[13] = 0x10;
        put16(p + 14, 65535);
    }
    if (f.protocol == kProtocolIcmp) p[0] = 8;
    if (f.protocol == kProtocolIcmpv6) p[0] = 128;
}

}  // namespace

std::vector<std::uint8_t> flow_frame(const Flow& f, unsigned d) {
    std::vector<std::uint8_t> frame(f.traffic.frame_bytes - 4, 0);
    std::uint8_t* p = frame.data();
    const bool ab = d == 0;
    const std::uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0a}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0b};
    std::memcpy(p, ab ? mac_b : mac_a, 6);  // destination
    std::memcpy(p + 6, ab ? mac_a : mac_b, 6);
    std::size_t off = 12;
    if (f.vlan) {
        put16(p + off, kEthertypeVlan);
        put16(p + off + 2, *f.vlan);
        off += 4;
    }
    put16(p + off, f.ethertype);
    off += 2;
    if (f.family == IpFamily::none) return frame;
    off +=
        put_ip(p + off, frame.size() - off, f, ab ? f.a_addr : f.b_addr, ab ? f.b_addr : f.a_addr);
    const std::uint16_t a_port = f.a_port.value_or(0), b_port = f.b_port.value_or(0);
    put_transport(p + off, frame.size() - off, f, ab ? a_port : b_port, ab ? b_port : a_port);
    return frame;
}

}  // namespace linkem::sim
