// linkem-sim's traffic mix for --classes (docs/simulation.md, "Traffic classes"): flows, each a
// traffic pattern, rate and frame size (the built-in traffic's keys) and the headers its
// frames carry (addresses, protocol, ports, vlan, dscp), sent A->B, B->A or both ways.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/classes.hpp"
#include "linkem/traffic.hpp"

namespace linkem::sim {

/// Which way a flow sends: a_to_b, b_to_a or both (then each way at the flow's rate).
enum class FlowDirection : std::uint8_t { a_to_b, b_to_a, both };

/// One flow of the traffic mix.
struct Flow {
    std::string name;  // [a-z0-9_-]{1,32}, unique among the flows
    FlowDirection direction = FlowDirection::both;
    TrafficSpec traffic;  // pattern, rate_bps (required), frame_size_bytes, period_us
    std::uint16_t ethertype = kEthertypeIpv4;
    IpFamily family = IpFamily::ipv4;  // none for a non-IP ethertype
    std::uint8_t protocol = kProtocolUdp;
    IpAddress a_addr{}, b_addr{};                 // the address on A's / B's side
    std::optional<std::uint16_t> a_port, b_port;  // with TCP, UDP and SCTP
    std::optional<std::uint16_t> vlan;            // an 802.1Q tag
    std::uint8_t dscp = 0;
    bool ect = false;  // the IP header's ECN field ECT(0): ECN-capable
    /// Whether the flow sends in direction d (0: a_to_b, 1: b_to_a).
    bool sends(unsigned d) const {
        return direction == FlowDirection::both || static_cast<unsigned>(direction) == d;
    }
};

/// The most flows a traffic mix holds.
inline constexpr std::size_t kMaxFlows = 256;

/// Reads a `flows` value: a non-empty list of flow objects. Throws ParamError whose field is
/// the key's path, "flows[1].b_addr", and whose message names the flow:
/// "flow 'call': '10.0.0.300' is not an IPv4 or IPv6 address".
std::vector<Flow> flows_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Flow& f);

/// The bytes of one of the flow's frames as seen in direction d (0: a_to_b, 1: b_to_a; B->A
/// carries B's address and port as its source): Ethernet, the VLAN tag, the IP header and
/// the first bytes of TCP, UDP, SCTP or ICMP, zeros after; frame_size_bytes - 4 long (no FCS).
std::vector<std::uint8_t> flow_frame(const Flow& f, unsigned d);

/// The bytes the flow's headers take, with the 4 of the FCS: the least frame_size_bytes.
std::size_t flow_header_bytes(const Flow& f);

}  // namespace linkem::sim
