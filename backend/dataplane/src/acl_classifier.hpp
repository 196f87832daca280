// The data plane's traffic classifier (docs/classes.md, docs/dataplane.md "Traffic
// classifier"): a link's class list compiled into DPDK rte_acl contexts, with exactly the
// semantics of the portable linkem::Classifier (common/model), which the tests check packet
// by packet against it and against the linear oracle of tests/support.
//
// Layout. Each frame is parsed into a 44-byte AclInput written *as seen from A to B*: the
// parser puts the source address and port in A's slots for a packet going A to B and the
// destination's for one going B to A, so one context per IP version holds every rule once
// and serves both directions. An IPv4 context and an IPv6 context take the frames with a
// whole IP header of their version; fields: protocol, a flags byte (the packet carries
// ports), DSCP, the VLAN (0x1000 | id when tagged, 0 untagged), A's and B's address (IPv6: 4
// x 32 bits each), A's and B's port (ranges). A match object is one rule in each context
// whose packets it can hold on, priority by class order (an earlier class, a higher
// priority; match objects of one class tie and give the same class), userdata the ClassId
// (0 is rte_acl's "no match": kDefaultClass). Every key has its rte_acl field, so no rule
// falls back to the portable classifier.
// Frames without a whole IP header (non-IP, truncated, a wrong version nibble) can only be
// held by match objects without IP keys (ethertype, vlan, nothing): those few are tried in
// order on one 32-bit word of ethertype and VLAN, first match wins.
//
// Threads. Built on the control thread (rte_acl_create/add_rules/build allocate from the EAL
// heap; each context gets a process-unique name, since rte_acl_create hands back an existing
// context of the same name), immutable afterwards: classify_burst() only reads it and may
// run on several lanes at once. The lanes are to take a new one the way they take new
// parameters (lane.hpp): the control thread publishes it in a ParamBlock (held by
// shared_ptr), a lane adopts it at a burst boundary and acks the generation, and the control
// thread drops the old one only once every lane has acked a later generation, so the
// destructor (rte_acl_free) never runs on a lane and no burst sees a context freed under it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "linkem/classes.hpp"

struct rte_acl_ctx;
struct rte_mbuf;

namespace linkem::dp {

class AclClassifier {
  public:
    /// No classes: every packet is kDefaultClass's (classify_burst only fills `out`).
    AclClassifier() = default;
    /// Compiles `classes` (checked with validate(): throws ClassError). Throws DataplaneError
    /// when DPDK refuses a context (no EAL, out of memory). Needs the EAL; any thread.
    explicit AclClassifier(const std::vector<TrafficClass>& classes);
    ~AclClassifier();
    AclClassifier(const AclClassifier&) = delete;
    AclClassifier& operator=(const AclClassifier&) = delete;

    /// The class of each of `n` frames (`frames[i]`, `lengths[i]` bytes, from the Ethernet
    /// header on) seen going `direction` (0: a_to_b, 1: b_to_a) into out[0 .. n): what
    /// Classifier::classify(parse_packet_key(frame, len), direction) gives. Never reads past
    /// a frame's length.
    void classify_burst(const std::uint8_t* const* frames, const std::uint16_t* lengths, unsigned n,
                        int direction, ClassId* out) const;
    /// The same for mbufs: each one's first segment (the headers a class reads are there for
    /// every PMD linkemd uses; a header split over segments reads as truncated).
    void classify_burst(rte_mbuf* const* pkts, unsigned n, int direction, ClassId* out) const;

    std::size_t class_count() const { return classes_; }
    /// Rules in the IPv4 and IPv6 contexts, and match objects without IP keys (tried on
    /// frames without an IP header).
    std::size_t ipv4_rules() const { return rules_[0]; }
    std::size_t ipv6_rules() const { return rules_[1]; }
    std::size_t l2_rules() const { return l2_.size(); }
    /// Whether IP frames are classified by the port table instead of rte_acl (see PortTable).
    bool uses_port_table() const { return ports_ != nullptr; }

    /// One match object without IP keys: holds when (word & mask) == value, word being
    /// ethertype << 16 | has_ethertype << 15 | tagged << 12 | vlan id.
    struct L2Rule {
        std::uint32_t mask = 0, value = 0;
        ClassId id = kDefaultClass;
    };

    /// The lists most classes come in: at most 64 match objects, each with no key but
    /// `protocol`, `a_port` and `b_port`. An IP frame's class is then a few table lookups
    /// instead of an rte_acl trie walk: a bit per match object, set in the mask of the frame's
    /// protocol, of the interval its A port falls in and of its B port's; the lowest bit left
    /// is the first match object that holds (they are in class order).
    struct PortTable {
        std::array<std::uint64_t, 256> proto{};  // match objects whose protocol key admits it
        std::uint64_t needs_ports = 0;           // match objects with a port key
        std::array<std::vector<std::uint8_t>, 2> interval;  // [side] port -> its interval
        std::array<std::vector<std::uint64_t>, 2> mask;     // [side] interval -> match objects
        std::vector<ClassId> id;                            // match object -> its class
    };

  private:
    struct Chunk;
    void classify_chunk(Chunk& c, ClassId* out) const;
    static std::unique_ptr<PortTable> make_port_table(const std::vector<TrafficClass>& classes);

    std::size_t classes_ = 0;
    rte_acl_ctx* ctx_[2] = {nullptr, nullptr};  // [0] IPv4, [1] IPv6; null: no rules
    std::size_t rules_[2] = {0, 0};
    std::vector<L2Rule> l2_;
    std::unique_ptr<PortTable> ports_;  // null: rte_acl
};

}  // namespace linkem::dp
