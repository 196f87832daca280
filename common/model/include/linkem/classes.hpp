// Traffic classes (docs/classes.md): a link holds an ordered list of classes; the first whose
// match holds takes the packet, and the class `default` (the link's own parameters) takes
// every packet no class matches. A class emulates with its own link parameters, passes the
// packet untouched, or drops it.
//
// This header holds the model: what classification reads from a frame (PacketKey), what a
// class asks of it (ClassMatch), the class (TrafficClass), its checks, and the portable
// classifier (Classifier) that linkem-sim and the tests use. The JSON codec is
// linkem/classes_json.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkem/link_params.hpp"

namespace linkem {

/// The most classes a link holds besides `default`, and the most match objects over all of
/// them.
inline constexpr std::size_t kMaxClasses = 64;
inline constexpr std::size_t kMaxClassMatches = 1024;
/// The longest class name.
inline constexpr std::size_t kMaxClassNameLength = 32;
/// The reserved name of the class that takes every packet no other class matches.
inline constexpr const char* kDefaultClassName = "default";

/// A class's number as the classifier gives it: 0 is `default`, class i of the list is i + 1.
using ClassId = std::uint8_t;
inline constexpr ClassId kDefaultClass = 0;
static_assert(kMaxClasses < 255, "ClassId holds every class and default");

/// Ethertypes and IP protocol numbers.
inline constexpr std::uint16_t kEthertypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEthertypeIpv6 = 0x86dd;
inline constexpr std::uint16_t kEthertypeArp = 0x0806;
inline constexpr std::uint16_t kEthertypeVlan = 0x8100;  // 802.1Q tag
inline constexpr std::uint16_t kEthertypeQinQ = 0x88a8;  // 802.1ad (service) tag
inline constexpr std::uint8_t kProtocolIcmp = 1;
inline constexpr std::uint8_t kProtocolTcp = 6;
inline constexpr std::uint8_t kProtocolUdp = 17;
inline constexpr std::uint8_t kProtocolIcmpv6 = 58;
inline constexpr std::uint8_t kProtocolSctp = 132;

/// The ethertypes and IP protocols with a name in a class's match (the JSON's names).
struct NamedNumber {
    const char* name;
    std::uint16_t value;
};
inline constexpr NamedNumber kEthertypeNames[] = {
    {"ipv4", kEthertypeIpv4}, {"ipv6", kEthertypeIpv6}, {"arp", kEthertypeArp}};
inline constexpr NamedNumber kProtocolNames[] = {{"tcp", kProtocolTcp},
                                                 {"udp", kProtocolUdp},
                                                 {"icmp", kProtocolIcmp},
                                                 {"icmpv6", kProtocolIcmpv6},
                                                 {"sctp", kProtocolSctp}};
/// The name of an ethertype (of an IP protocol), "" if it has none.
std::string_view ethertype_name(std::uint16_t ethertype);
std::string_view protocol_name(std::uint8_t protocol);

/// Whether packets of IP protocol `p` carry ports a class can match: TCP, UDP and SCTP.
constexpr bool protocol_has_ports(std::uint8_t p) {
    return p == kProtocolTcp || p == kProtocolUdp || p == kProtocolSctp;
}

enum class IpFamily : std::uint8_t { none, ipv4, ipv6 };

/// The address bytes of a family: 4 for IPv4, 16 for IPv6; its prefix lengths go to 8 times
/// that.
constexpr std::size_t address_bytes(IpFamily f) {
    return f == IpFamily::ipv4 ? 4 : f == IpFamily::ipv6 ? 16 : 0;
}

/// An IP address in network byte order; an IPv4 address in the first 4 bytes, the rest 0.
using IpAddress = std::array<std::uint8_t, 16>;

/// What classification reads from a frame (parse_packet_key). A field is absent when the
/// frame does not carry it or ends before it.
struct PacketKey {
    /// The ethertype after at most one 802.1Q or 802.1ad tag; absent for a frame shorter
    /// than its Ethernet header (and tag).
    std::optional<std::uint16_t> ethertype;
    /// The VLAN id (12 bits) of the tag; absent for an untagged frame.
    std::optional<std::uint16_t> vlan;
    /// ipv4 / ipv6 when the frame holds a whole fixed IP header of that version (20 or 40
    /// bytes, ethertype ipv4 / ipv6): then protocol, src, dst and dscp hold its values.
    IpFamily family = IpFamily::none;
    /// IPv4: the protocol; IPv6: the Next Header of the fixed header (an extension header's
    /// number when one follows).
    std::uint8_t protocol = 0;
    IpAddress src{}, dst{};
    std::uint8_t dscp = 0;
    /// TCP, UDP and SCTP only, read just after the IP header (IPv4: its IHL; IPv6: the fixed
    /// 40 bytes); absent for other protocols, for an IPv4 fragment other than the first, and
    /// when the frame ends before them.
    std::optional<std::uint16_t> src_port, dst_port;
    bool operator==(const PacketKey&) const = default;
};

/// Reads a frame's key (above). Never reads past `len`: a truncated frame gives the fields
/// that it holds whole.
PacketKey parse_packet_key(const std::uint8_t* frame, std::size_t len);

/// An IP prefix: the addresses whose first `length` bits are those of `address`. Its host bits
/// (beyond `length`) are 0.
struct IpPrefix {
    IpFamily family = IpFamily::ipv4;
    IpAddress address{};
    std::uint8_t length = 0;  // 0 .. 32 (IPv4), 0 .. 128 (IPv6)
    /// Whether `a` of family `f` lies in the prefix (never for another family).
    bool contains(IpFamily f, const IpAddress& a) const;
    bool operator==(const IpPrefix&) const = default;
};

/// The ports lo .. hi, both included.
struct PortRange {
    std::uint16_t lo = 0, hi = 65535;
    bool contains(std::uint16_t p) const { return p >= lo && p <= hi; }
    bool operator==(const PortRange&) const = default;
};

/// What a class asks of a packet: every key present must hold (none present: every packet
/// matches). Written as seen on a packet going from A to B: a_net and a_port are A's side,
/// the source of a packet A->B and the destination of one B->A.
///
/// The IP keys (protocol, a_net, b_net, a_port, b_port, dscp) hold only on a packet with an
/// IP header (PacketKey::family); a port key holds only on a packet with ports (TCP, UDP,
/// SCTP, not a later fragment); a net only on a packet of its family. ethertype and vlan are
/// read from the Ethernet header of every packet: a non-IP packet matches only a match
/// without IP keys (one that asks for its ethertype, its vlan, or nothing).
struct ClassMatch {
    std::optional<std::uint16_t> ethertype;
    std::optional<std::uint8_t> protocol;
    std::optional<IpPrefix> a_net, b_net;
    std::optional<PortRange> a_port, b_port;
    std::optional<std::uint16_t> vlan;  // 0 .. 4095
    std::optional<std::uint8_t> dscp;   // 0 .. 63
    /// Whether the match has a key that reads the IP header.
    bool needs_ip() const { return protocol || a_net || b_net || a_port || b_port || dscp; }
    bool operator==(const ClassMatch&) const = default;
};

/// What a class does with its packets.
enum class ClassAction : std::uint8_t {
    emulate,  // its own link parameters (the default)
    pass,     // forwarded at once, untouched: no delay, limiter or loss; counted apart
    drop,     // dropped and counted
};
std::string_view to_string(ClassAction a);
/// The action of a name; nullopt if there is none.
std::optional<ClassAction> class_action_from_string(std::string_view s);

/// One class of a link's class list.
struct TrafficClass {
    std::string name;               // [a-z0-9_-]{1,32}, unique in the list, not `default`
    std::vector<ClassMatch> match;  // any may hold; at least one
    ClassAction action = ClassAction::emulate;
    /// emulate: the class's link parameters, both directions, from the defaults (never the
    /// link's own). pass and drop: the defaults, unused.
    LinkConfig link;
    /// emulate: the class's packets go through the `default` class's limiter (one
    /// bottleneck for every class that shares it), each class keeping its own delay and
    /// loss; its own limiter keys stay at their defaults. Written `"limiter": "link"`.
    bool shares_link_limiter = false;
    bool operator==(const TrafficClass&) const = default;
};

/// A class that breaks a rule: which class (its index in the list and its name, empty when
/// not known), the key at fault within it ("match.b_port", "match[2].a_net", "name",
/// "b_to_a.loss_probability") and what is allowed. As a ParamError, field() is the key's
/// JSON path from the list, "classes[1].match.b_port", and what() reads
/// "field 'classes[1].match.b_port': class 'voip': 70000 is out of range; allowed ...".
class ClassError : public ParamError {
  public:
    ClassError(std::size_t index, std::string name, std::string key, const std::string& message);
    std::size_t index() const { return index_; }
    const std::string& name() const { return name_; }
    const std::string& key() const { return key_; }

  private:
    std::size_t index_;
    std::string name_, key_;
};

/// Whether `name` may name a class: [a-z0-9_-]{1,32}, not `default`.
bool valid_class_name(std::string_view name);
/// The rule for class names, as error messages give it.
inline constexpr const char* kClassNameRule =
    "1 to 32 of a-z, 0-9, '_' and '-', not 'default' (reserved)";

/// The keys of LinkParams that belong to the limiter: limiter, rate_bps, the queue's
/// (queue, queue_limit_bytes, ..., ecn), policer_burst_bytes, trace_file, byte_accounting. A
/// class that shares the link's limiter
/// leaves them at their defaults.
bool is_limiter_key(std::string_view key);
/// Whether a limiter can be shared by several Emulators (SharedLink): the spacer and the
/// policer, without a queue of its own (a trace, or a spacer with a queue discipline,
/// linkem/bottleneck.hpp, is each Emulator's own).
bool shareable(const LinkParams& p);
/// The parameters class `c` (emulate) runs with in direction d of a link whose `default`
/// class has `link` there: its own, a seed of 0 taking the link's, and with "limiter": "link"
/// the link's limiter keys (is_limiter_key).
LinkParams class_params(const TrafficClass& c, const LinkParams& link, unsigned d);

/// Checks one match object of class `index` (named `name`), `key` its path in the class
/// ("match", "match[2]"): values in range, prefixes without host bits, and no combination of
/// keys that can never hold (IP keys with a non-IP ethertype, nets of two families or of
/// the other IP version than the ethertype, ports with a protocol that has none). A port key
/// without a protocol is allowed: it holds on TCP, UDP and SCTP. Throws ClassError.
void validate(const ClassMatch& m, std::size_t index, const std::string& name,
              const std::string& key);
/// Checks one class, `index` in its list: its name, its matches (values in range, prefixes
/// without host bits, no match that can never hold), its link parameters (validate()), and
/// for pass and drop, link parameters and limiter sharing left at their defaults. Throws
/// ClassError.
void validate(const TrafficClass& c, std::size_t index);
/// Checks a class list: each class, unique names, at most kMaxClasses classes and
/// kMaxClassMatches match objects. Throws ClassError.
void validate(const std::vector<TrafficClass>& classes);

/// The portable classifier: the matches of a class list compiled into masks and ranges and
/// tried in order, first match wins (a linear scan; linkemd will classify with DPDK's
/// rte_acl with the same semantics). Immutable once built: safe to share between threads.
class Classifier {
  public:
    Classifier() = default;  // no classes: every packet is `default`'s
    /// Compiles `classes` (checked with validate(): throws ClassError).
    explicit Classifier(const std::vector<TrafficClass>& classes);
    /// The class of a packet seen in `direction` (0: a_to_b, 1: b_to_a): i + 1 for the first
    /// class i of the list whose match holds, kDefaultClass when none does.
    ClassId classify(const PacketKey& k, int direction) const;
    std::size_t class_count() const { return classes_; }
    std::size_t match_count() const { return matches_.size(); }

    /// One match object, compiled. Public for the tests; the layout is the classifier's own.
    struct Compiled {
        std::uint16_t keys = 0;  // which keys the match has: the bits of Key
        std::uint16_t ethertype = 0, vlan = 0;
        std::uint8_t protocol = 0, dscp = 0;
        IpFamily family = IpFamily::none;  // the nets' family, none without a net
        ClassId id = kDefaultClass;
        std::array<std::uint64_t, 2> net[2]{}, mask[2]{};  // [side] a, b
        PortRange port[2];                                 // [side] a, b
    };
    enum Key : std::uint16_t {
        kEthertype = 1 << 0,
        kVlan = 1 << 1,
        kIp = 1 << 2,  // some key reads the IP header
        kProtocol = 1 << 3,
        kDscp = 1 << 4,
        kNetA = 1 << 5,
        kNetB = 1 << 6,
        kPortA = 1 << 7,
        kPortB = 1 << 8,
    };
    static Compiled compile(const ClassMatch& m, ClassId id);

  private:
    std::vector<Compiled> matches_;
    std::size_t classes_ = 0;
};

}  // namespace linkem
