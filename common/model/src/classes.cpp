#include "linkem/classes.hpp"

#include <cstring>
#include <string>

namespace linkem {

// ------------------------------------------------------------------------- packet key

namespace {

std::uint16_t read16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

// The ports of a TCP, UDP or SCTP header at `l4` when the frame holds them.
void read_ports(PacketKey& k, const std::uint8_t* l4, std::size_t left) {
    if (!protocol_has_ports(k.protocol) || left < 4) return;
    k.src_port = read16(l4);
    k.dst_port = read16(l4 + 2);
}

void read_ipv4(PacketKey& k, const std::uint8_t* ip, std::size_t left) {
    if (left < 20 || ip[0] >> 4 != 4 || (ip[0] & 0x0f) < 5) return;
    k.family = IpFamily::ipv4;
    k.dscp = ip[1] >> 2;
    k.protocol = ip[9];
    std::memcpy(k.src.data(), ip + 12, 4);
    std::memcpy(k.dst.data(), ip + 16, 4);
    const std::size_t header = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
    const bool later_fragment = (read16(ip + 6) & 0x1fff) != 0;
    if (!later_fragment && left >= header) read_ports(k, ip + header, left - header);
}

// The fixed header only: an extension header's number is the protocol, and no ports follow.
void read_ipv6(PacketKey& k, const std::uint8_t* ip, std::size_t left) {
    if (left < 40 || ip[0] >> 4 != 6) return;
    k.family = IpFamily::ipv6;
    const unsigned traffic_class = (ip[0] & 0x0fu) << 4 | ip[1] >> 4;
    k.dscp = static_cast<std::uint8_t>(traffic_class >> 2);
    k.protocol = ip[6];
    std::memcpy(k.src.data(), ip + 8, 16);
    std::memcpy(k.dst.data(), ip + 24, 16);
    read_ports(k, ip + 40, left - 40);
}

}  // namespace

PacketKey parse_packet_key(const std::uint8_t* frame, std::size_t len) {
    PacketKey k;
    if (len < 14) return k;
    std::uint16_t type = read16(frame + 12);
    std::size_t at = 14;
    if (type == kEthertypeVlan || type == kEthertypeQinQ) {
        if (len < 16) return k;
        k.vlan = read16(frame + 14) & 0x0fff;
        if (len < 18) return k;
        type = read16(frame + 16);
        at = 18;
    }
    k.ethertype = type;
    if (type == kEthertypeIpv4) read_ipv4(k, frame + at, len - at);
    if (type == kEthertypeIpv6) read_ipv6(k, frame + at, len - at);
    return k;
}

// ------------------------------------------------------------------------ the model

namespace {

std::string_view name_of(const auto& table, std::uint16_t value) {
    for (const NamedNumber& n : table)
        if (n.value == value) return n.name;
    return {};
}

// The mask of a prefix's first `length` bits.
IpAddress prefix_mask(std::size_t length) {
    IpAddress m{};
    for (std::size_t i = 0; i < m.size(); ++i) {
        const std::size_t bits = length > 8 * i ? length - 8 * i : 0;
        m[i] = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff00u >> bits);
    }
    return m;
}

}  // namespace

std::string_view ethertype_name(std::uint16_t ethertype) {
    return name_of(kEthertypeNames, ethertype);
}
std::string_view protocol_name(std::uint8_t protocol) {
    return name_of(kProtocolNames, protocol);
}

bool IpPrefix::contains(IpFamily f, const IpAddress& a) const {
    if (f != family) return false;
    const IpAddress m = prefix_mask(length);
    for (std::size_t i = 0; i < a.size(); ++i)
        if ((a[i] & m[i]) != (address[i] & m[i])) return false;
    return true;
}

std::string_view to_string(ClassAction a) {
    switch (a) {
        case ClassAction::emulate:
            return "emulate";
        case ClassAction::pass:
            return "pass";
        case ClassAction::drop:
            return "drop";
    }
    return "?";
}

std::optional<ClassAction> class_action_from_string(std::string_view s) {
    for (ClassAction a : {ClassAction::emulate, ClassAction::pass, ClassAction::drop})
        if (to_string(a) == s) return a;
    return std::nullopt;
}

namespace {

std::string class_path(std::size_t index, const std::string& key) {
    return "classes[" + std::to_string(index) + "]" + (key.empty() ? "" : "." + key);
}
std::string class_label(std::size_t index, const std::string& name) {
    return name.empty() ? "class " + std::to_string(index) : "class '" + name + "'";
}

}  // namespace

ClassError::ClassError(std::size_t index, std::string name, std::string key,
                       const std::string& message)
    : ParamError(class_path(index, key), class_label(index, name) + ": " + message),
      index_(index),
      name_(std::move(name)),
      key_(std::move(key)) {}

bool valid_class_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxClassNameLength || name == kDefaultClassName)
        return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    return true;
}

bool is_limiter_key(std::string_view key) {
    if (key == "limiter" || key == "byte_accounting") return true;
    const LinkParamField* f = link_param_field(key);
    return f && (f->applies.key == "limiter" || f->applies.key == "queue");
}

bool shareable(const LinkParams& p) {
    return (p.limiter == Limiter::spacer || p.limiter == Limiter::policer) && !p.uses_bottleneck();
}

LinkParams class_params(const TrafficClass& c, const LinkParams& link, unsigned d) {
    LinkParams p = c.link.direction(d);
    if (p.seed == 0) p.seed = link.seed;
    if (c.shares_link_limiter) {
        const std::vector<LinkParamField>& fields = link_param_fields();
        for (std::size_t i = 0; i < fields.size(); ++i)
            if (is_limiter_key(fields[i].key)) copy_link_param(i, link, p);
    }
    return p;
}

// ----------------------------------------------------------------------------- checks

namespace {

// The keys of one match object of a class, for its errors.
struct MatchPlace {
    std::size_t index;
    const std::string& name;
    const std::string& key;
    [[noreturn]] void fail(const char* sub, const std::string& message) const {
        throw ClassError(index, name, key + "." + sub, message);
    }
};

std::string number_text(unsigned value, std::string_view name) {
    return std::to_string(value) + (name.empty() ? "" : " (" + std::string(name) + ")");
}

void check_prefix(const MatchPlace& at, const char* sub, const IpPrefix& p) {
    const std::size_t bits = 8 * address_bytes(p.family);
    if (bits == 0) at.fail(sub, "a prefix is of IPv4 or IPv6");
    if (p.length > bits)
        at.fail(sub, "prefix length " + std::to_string(p.length) +
                         " is out of range; allowed 0 .. " + std::to_string(bits));
    const IpAddress mask = prefix_mask(p.length);
    for (std::size_t i = 0; i < mask.size(); ++i)
        if (p.address[i] & ~mask[i])
            at.fail(sub, "the address has bits set beyond its prefix length /" +
                             std::to_string(p.length) + "; allowed: the prefix's first address");
}

const char* first_ip_key(const ClassMatch& m) {
    return m.protocol ? "protocol"
           : m.a_net  ? "a_net"
           : m.b_net  ? "b_net"
           : m.a_port ? "a_port"
           : m.b_port ? "b_port"
                      : "dscp";
}

IpFamily family_of_ethertype(std::uint16_t e) {
    return e == kEthertypeIpv4   ? IpFamily::ipv4
           : e == kEthertypeIpv6 ? IpFamily::ipv6
                                 : IpFamily::none;
}

const char* family_text(IpFamily f) {
    return f == IpFamily::ipv4 ? "IPv4" : "IPv6";
}

// Keys that are each fine but never hold together.
void check_families(const MatchPlace& at, const ClassMatch& m) {
    const IpFamily packet = m.ethertype ? family_of_ethertype(*m.ethertype) : IpFamily::none;
    if (m.ethertype && packet == IpFamily::none && m.needs_ip())
        at.fail(first_ip_key(m), "never holds: ethertype " +
                                     number_text(*m.ethertype, ethertype_name(*m.ethertype)) +
                                     " has no IP header; protocol, a_net, b_net, a_port, b_port "
                                     "and dscp hold only on ipv4 and ipv6 packets");
    const std::optional<IpPrefix>* nets[2] = {&m.a_net, &m.b_net};
    const char* keys[2] = {"a_net", "b_net"};
    for (int s = 0; s < 2; ++s)
        if (*nets[s] && packet != IpFamily::none && (*nets[s])->family != packet)
            at.fail(keys[s], std::string("never holds: an ") + family_text((*nets[s])->family) +
                                 " prefix on ethertype " +
                                 std::string(ethertype_name(*m.ethertype)) +
                                 "; allowed: a prefix of the ethertype's family");
    if (m.a_net && m.b_net && m.a_net->family != m.b_net->family)
        at.fail("b_net", std::string("never holds: a_net is ") + family_text(m.a_net->family) +
                             " and b_net " + family_text(m.b_net->family) +
                             "; allowed: two prefixes of one family (or two match objects)");
}

void check_match_values(const MatchPlace& at, const ClassMatch& m) {
    if (m.a_net) check_prefix(at, "a_net", *m.a_net);
    if (m.b_net) check_prefix(at, "b_net", *m.b_net);
    const std::optional<PortRange>* ports[2] = {&m.a_port, &m.b_port};
    const char* keys[2] = {"a_port", "b_port"};
    for (int s = 0; s < 2; ++s) {
        if (!*ports[s]) continue;
        if ((*ports[s])->lo > (*ports[s])->hi)
            at.fail(keys[s], "the range " + std::to_string((*ports[s])->lo) + "-" +
                                 std::to_string((*ports[s])->hi) +
                                 " is empty; allowed lo-hi with lo <= hi");
        if (m.protocol && !protocol_has_ports(*m.protocol))
            at.fail(keys[s], "protocol " + number_text(*m.protocol, protocol_name(*m.protocol)) +
                                 " has no ports; ports hold with tcp, udp and sctp, or with no "
                                 "protocol (any of the three)");
    }
    if (m.vlan && *m.vlan > 4095)
        at.fail("vlan", std::to_string(*m.vlan) + " is out of range; allowed 0 .. 4095");
    if (m.dscp && *m.dscp > 63)
        at.fail("dscp", std::to_string(*m.dscp) + " is out of range; allowed 0 .. 63");
}

const LinkParams kDefaults;

// emulate: each direction's parameters valid; with the link's limiter, its own untouched.
void check_emulate(const TrafficClass& c, std::size_t index) {
    for (unsigned d = 0; d < 2; ++d) {
        const LinkParams& p = c.link.direction(d);
        try {
            validate(p);
        } catch (const ParamError& e) {
            throw ClassError(index, c.name, std::string(kDirectionKeys[d]) + "." + e.field(),
                             e.message());
        }
        if (!c.shares_link_limiter) continue;
        for (const LinkParamField& f : link_param_fields())
            if (is_limiter_key(f.key) && f.get(p) != f.get(kDefaults))
                throw ClassError(index, c.name, std::string(kDirectionKeys[d]) + "." + f.key,
                                 "the class shares the link's limiter ('limiter': 'link'); "
                                 "allowed: its own limiter keys left out");
    }
}

// pass and drop: no link parameters, no limiter.
void check_untouched(const TrafficClass& c, std::size_t index) {
    const std::string why = "action '" + std::string(to_string(c.action)) +
                            "' takes no link parameters; allowed only with action 'emulate'";
    if (c.shares_link_limiter) throw ClassError(index, c.name, "limiter", why);
    for (unsigned d = 0; d < 2; ++d)
        for (const LinkParamField& f : link_param_fields())
            if (f.get(c.link.direction(d)) != f.get(kDefaults))
                throw ClassError(index, c.name, std::string(kDirectionKeys[d]) + "." + f.key, why);
}

}  // namespace

void validate(const ClassMatch& m, std::size_t index, const std::string& name,
              const std::string& key) {
    const MatchPlace at{index, name, key};
    check_match_values(at, m);
    check_families(at, m);
}

void validate(const TrafficClass& c, std::size_t index) {
    if (!valid_class_name(c.name))
        throw ClassError(index, c.name, "name",
                         "'" + c.name + "' is not allowed; allowed " + kClassNameRule);
    if (c.match.empty())
        throw ClassError(index, c.name, "match",
                         "an empty list matches no packet; allowed: one match object or more "
                         "({} matches every packet)");
    for (std::size_t j = 0; j < c.match.size(); ++j)
        validate(c.match[j], index, c.name,
                 c.match.size() == 1 ? "match" : "match[" + std::to_string(j) + "]");
    if (c.action == ClassAction::emulate)
        check_emulate(c, index);
    else
        check_untouched(c, index);
}

void validate(const std::vector<TrafficClass>& classes) {
    if (classes.size() > kMaxClasses)
        throw ClassError(kMaxClasses, classes[kMaxClasses].name, "",
                         "one class too many (" + std::to_string(classes.size()) +
                             " classes); allowed at most " + std::to_string(kMaxClasses) +
                             " besides 'default'");
    std::size_t total = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const TrafficClass& c = classes[i];
        validate(c, i);
        for (std::size_t j = 0; j < i; ++j)
            if (classes[j].name == c.name)
                throw ClassError(i, c.name, "name",
                                 "'" + c.name + "' is the name of classes[" + std::to_string(j) +
                                     "] too; allowed: a name no other class has");
        total += c.match.size();
        if (total > kMaxClassMatches)
            throw ClassError(i, c.name, "match",
                             "its " + std::to_string(c.match.size()) +
                                 " match objects bring the list to " + std::to_string(total) +
                                 "; allowed at most " + std::to_string(kMaxClassMatches) +
                                 " over all classes");
    }
}

// ------------------------------------------------------------------------- classifier

namespace {

std::array<std::uint64_t, 2> words(const IpAddress& a) {
    std::array<std::uint64_t, 2> w;
    std::memcpy(w.data(), a.data(), sizeof w);
    return w;
}

// A packet's fields by side: [0] A's, [1] B's.
struct Sides {
    std::array<std::uint64_t, 2> addr[2];
    const std::optional<std::uint16_t>* port[2];
};

bool holds(const Classifier::Compiled& m, const PacketKey& k, const Sides& s) {
    using C = Classifier;
    if ((m.keys & C::kEthertype) && k.ethertype != m.ethertype) return false;
    if ((m.keys & C::kVlan) && k.vlan != m.vlan) return false;
    if (!(m.keys & C::kIp)) return true;
    if (k.family == IpFamily::none) return false;
    if ((m.keys & C::kProtocol) && k.protocol != m.protocol) return false;
    if ((m.keys & C::kDscp) && k.dscp != m.dscp) return false;
    if (m.family != IpFamily::none && m.family != k.family) return false;
    for (int i = 0; i < 2; ++i) {
        if ((m.keys & (C::kNetA << i)) && (((s.addr[i][0] & m.mask[i][0]) != m.net[i][0]) ||
                                           ((s.addr[i][1] & m.mask[i][1]) != m.net[i][1])))
            return false;
        if ((m.keys & (C::kPortA << i)) && (!*s.port[i] || !m.port[i].contains(**s.port[i])))
            return false;
    }
    return true;
}

}  // namespace

Classifier::Compiled Classifier::compile(const ClassMatch& m, ClassId id) {
    Compiled c;
    c.id = id;
    c.keys = static_cast<std::uint16_t>((m.ethertype ? kEthertype : 0) | (m.vlan ? kVlan : 0) |
                                        (m.needs_ip() ? kIp : 0) | (m.protocol ? kProtocol : 0) |
                                        (m.dscp ? kDscp : 0));
    c.ethertype = m.ethertype.value_or(0);
    c.vlan = m.vlan.value_or(0);
    c.protocol = m.protocol.value_or(0);
    c.dscp = m.dscp.value_or(0);
    const std::optional<IpPrefix>* nets[2] = {&m.a_net, &m.b_net};
    const std::optional<PortRange>* ports[2] = {&m.a_port, &m.b_port};
    for (int s = 0; s < 2; ++s) {
        if (*nets[s]) {
            c.keys |= static_cast<std::uint16_t>(kNetA << s);
            c.family = (*nets[s])->family;
            c.mask[s] = words(prefix_mask((*nets[s])->length));
            c.net[s] = words((*nets[s])->address);
            for (int w = 0; w < 2; ++w)
                c.net[s][w] &= c.mask[s][w];
        }
        if (*ports[s]) {
            c.keys |= static_cast<std::uint16_t>(kPortA << s);
            c.port[s] = **ports[s];
        }
    }
    return c;
}

Classifier::Classifier(const std::vector<TrafficClass>& classes) : classes_(classes.size()) {
    validate(classes);
    for (std::size_t i = 0; i < classes.size(); ++i)
        for (const ClassMatch& m : classes[i].match)
            matches_.push_back(compile(m, static_cast<ClassId>(i + 1)));
}

ClassId Classifier::classify(const PacketKey& k, int direction) const {
    const int a = direction == 0 ? 0 : 1;  // A's side: the source A->B, the destination B->A
    Sides s;
    s.addr[a] = words(k.src);
    s.addr[1 - a] = words(k.dst);
    s.port[a] = &k.src_port;
    s.port[1 - a] = &k.dst_port;
    for (const Compiled& m : matches_)
        if (holds(m, k, s)) return m.id;
    return kDefaultClass;
}

}  // namespace linkem
