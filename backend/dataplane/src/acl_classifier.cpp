#include "acl_classifier.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include <rte_acl.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_prefetch.h>

#include "linkem/dataplane/eal.hpp"

namespace linkem::dp {

namespace {

// What rte_acl reads of one frame, written as seen from A to B (acl_classifier.hpp). Multi-
// byte fields in network byte order, as rte_acl wants them.
struct alignas(4) AclInput {
    std::uint8_t proto, pad[3];  // rte_acl's first field: one byte, then groups of 4
    std::uint8_t flags, dscp, vlan[2];
    std::uint8_t a[16], b[16];  // IPv4: the first 4 bytes
    std::uint8_t a_port[2], b_port[2];
};
static_assert(sizeof(AclInput) == 44);
static_assert(offsetof(AclInput, b) == offsetof(AclInput, a) + 16);
static_assert(offsetof(AclInput, b_port) == offsetof(AclInput, a_port) + 2);

constexpr std::uint8_t kHasPorts = 1;  // AclInput::flags: the frame carries ports
constexpr std::uint16_t kTagged = 0x1000;
constexpr std::uint32_t kHasEthertype = 0x8000;  // in an L2 word
constexpr unsigned kChunk = 64;                  // frames per rte_acl_classify call
constexpr unsigned kL2 = 2;                      // parse(): not IPv4 (0) nor IPv6 (1)
// rte_acl_build's bound on a context's run-time tables. Any bound (not 0) makes it start
// from its larger node limit per trie (0x4000 nodes, not 0x800) and halve it only while the
// tables exceed the bound, which lets 1024 match objects fit its 8 tries.
constexpr std::size_t kMaxContextBytes = std::size_t{256} << 20;

// Fields: proto, flags, dscp, vlan, A's address (words x 32 bits), B's, A's port, B's.
constexpr unsigned kMaxFields = 4 + 2 * 4 + 2;
RTE_ACL_RULE_DEF(AclRule, kMaxFields);

unsigned words_of(IpFamily f) {
    return f == IpFamily::ipv4 ? 1 : 4;
}

void define_fields(rte_acl_config& c, IpFamily f) {
    const unsigned words = words_of(f);
    c.num_categories = 1;
    c.num_fields = 0;
    auto def = [&c](std::uint8_t type, std::uint8_t size, unsigned input, std::size_t at) {
        rte_acl_field_def& d = c.defs[c.num_fields];
        d.type = type;
        d.size = size;
        d.field_index = static_cast<std::uint8_t>(c.num_fields++);
        d.input_index = static_cast<std::uint8_t>(input);
        d.offset = static_cast<std::uint32_t>(at);
    };
    def(RTE_ACL_FIELD_TYPE_BITMASK, 1, 0, offsetof(AclInput, proto));
    def(RTE_ACL_FIELD_TYPE_BITMASK, 1, 1, offsetof(AclInput, flags));
    def(RTE_ACL_FIELD_TYPE_BITMASK, 1, 1, offsetof(AclInput, dscp));
    def(RTE_ACL_FIELD_TYPE_BITMASK, 2, 1, offsetof(AclInput, vlan));
    for (unsigned w = 0; w < words; ++w)
        def(RTE_ACL_FIELD_TYPE_MASK, 4, 2 + w, offsetof(AclInput, a) + 4 * w);
    for (unsigned w = 0; w < words; ++w)
        def(RTE_ACL_FIELD_TYPE_MASK, 4, 2 + words + w, offsetof(AclInput, b) + 4 * w);
    def(RTE_ACL_FIELD_TYPE_RANGE, 2, 2 + 2 * words, offsetof(AclInput, a_port));
    def(RTE_ACL_FIELD_TYPE_RANGE, 2, 2 + 2 * words, offsetof(AclInput, b_port));
}

// A prefix as `words` MASK fields from `first` on: host-order values, prefix lengths.
void set_prefix(AclRule& r, unsigned first, unsigned words, const IpPrefix& p) {
    for (unsigned w = 0; w < words; ++w) {
        const int bits = std::clamp(static_cast<int>(p.length) - 32 * static_cast<int>(w), 0, 32);
        std::uint32_t v = 0;
        for (unsigned i = 0; i < 4; ++i)
            v = v << 8 | p.address[4 * w + i];
        r.field[first + w].value.u32 = bits == 0 ? 0 : v & (~0u << (32 - bits));
        r.field[first + w].mask_range.u32 = static_cast<std::uint32_t>(bits);
    }
}

// The rule of match `m` of class `id` in family f's context; false when `m` never holds on
// a packet of that family (another ethertype or the other family's nets).
bool make_rule(const ClassMatch& m, IpFamily f, ClassId id, AclRule& r) {
    const std::uint16_t ethertype = f == IpFamily::ipv4 ? kEthertypeIpv4 : kEthertypeIpv6;
    if (m.ethertype && *m.ethertype != ethertype) return false;
    if ((m.a_net && m.a_net->family != f) || (m.b_net && m.b_net->family != f)) return false;
    const unsigned words = words_of(f);
    r = AclRule{};
    r.data.category_mask = 1;
    r.data.priority = static_cast<std::int32_t>(RTE_ACL_MAX_PRIORITY - id);  // earlier wins
    r.data.userdata = id;
    if (m.protocol) r.field[0] = {{.u8 = *m.protocol}, {.u8 = 0xff}};
    if (m.a_port || m.b_port) r.field[1] = {{.u8 = kHasPorts}, {.u8 = kHasPorts}};
    if (m.dscp) r.field[2] = {{.u8 = *m.dscp}, {.u8 = 0xff}};
    if (m.vlan)
        r.field[3] = {{.u16 = static_cast<std::uint16_t>(kTagged | *m.vlan)}, {.u16 = 0xffff}};
    if (m.a_net) set_prefix(r, 4, words, *m.a_net);
    if (m.b_net) set_prefix(r, 4 + words, words, *m.b_net);
    const PortRange any;
    const PortRange& a_port = m.a_port ? *m.a_port : any;
    const PortRange& b_port = m.b_port ? *m.b_port : any;
    r.field[4 + 2 * words] = {{.u16 = a_port.lo}, {.u16 = a_port.hi}};
    r.field[5 + 2 * words] = {{.u16 = b_port.lo}, {.u16 = b_port.hi}};
    return true;
}

AclClassifier::L2Rule make_l2_rule(const ClassMatch& m, ClassId id) {
    AclClassifier::L2Rule r;
    r.id = id;
    if (m.ethertype) {
        r.mask |= 0xffff0000u | kHasEthertype;
        r.value |= std::uint32_t{*m.ethertype} << 16 | kHasEthertype;
    }
    if (m.vlan) {
        r.mask |= 0x1fff;
        r.value |= kTagged | *m.vlan;
    }
    return r;
}

[[noreturn]] void refuse(const char* what, const char* name, int error) {
    throw DataplaneError(std::string("traffic classifier: ") + what + " for " + name +
                         " failed: " + rte_strerror(error));
}

// A built context of `rules` for family f, named uniquely in the process; null for none.
rte_acl_ctx* build_context(IpFamily f, const std::vector<AclRule>& rules) {
    if (rules.empty()) return nullptr;
    static std::atomic<unsigned> serial{0};
    char name[RTE_ACL_NAMESIZE];
    std::snprintf(name, sizeof name, "linkem_acl%d_%u", f == IpFamily::ipv4 ? 4 : 6,
                  serial.fetch_add(1, std::memory_order_relaxed));
    rte_acl_param param{};
    param.name = name;
    param.socket_id = SOCKET_ID_ANY;
    param.rule_size = sizeof(AclRule);
    param.max_rule_num = static_cast<std::uint32_t>(rules.size());
    std::unique_ptr<rte_acl_ctx, void (*)(rte_acl_ctx*)> ctx(rte_acl_create(&param), rte_acl_free);
    if (!ctx) refuse("rte_acl_create", name, rte_errno);
    int rc = rte_acl_add_rules(ctx.get(), reinterpret_cast<const rte_acl_rule*>(rules.data()),
                               static_cast<std::uint32_t>(rules.size()));
    if (rc != 0) refuse("rte_acl_add_rules", name, -rc);
    rte_acl_config cfg{};
    define_fields(cfg, f);
    cfg.max_size = kMaxContextBytes;
    rc = rte_acl_build(ctx.get(), &cfg);
    if (rc != 0) refuse("rte_acl_build", name, -rc);
    return ctx.release();
}

inline std::uint16_t read16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

// The fields after the addresses: protocol, DSCP, VLAN, and the ports at `l4` when the frame
// carries them (`left` bytes there) and `ports` allows them.
inline void fill_common(AclInput& in, std::uint8_t proto, std::uint8_t dscp, std::uint16_t vlan,
                        bool ports, const std::uint8_t* l4, std::size_t left, unsigned dir) {
    const std::uint32_t first = proto;  // zeroes the padding rte_acl may read with it
    std::memcpy(&in.proto, &first, 4);
    in.dscp = dscp;
    in.vlan[0] = static_cast<std::uint8_t>(vlan >> 8);
    in.vlan[1] = static_cast<std::uint8_t>(vlan);
    if (ports && protocol_has_ports(proto) && left >= 4) {
        in.flags = kHasPorts;
        std::memcpy(in.a_port + 2 * dir, l4, 2);  // the source is B's side going B to A
        std::memcpy(in.a_port + 2 * (1 - dir), l4 + 2, 2);
    } else {
        in.flags = 0;
        std::memset(in.a_port, 0, 4);
    }
}

// As parse_packet_key reads a header (common/model/src/classes.cpp).
inline bool fill_ipv4(AclInput& in, const std::uint8_t* ip, std::size_t left, std::uint16_t vlan,
                      unsigned dir) {
    if (left < 20 || ip[0] >> 4 != 4 || (ip[0] & 0x0f) < 5) return false;
    const std::size_t header = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
    const bool first_fragment = (read16(ip + 6) & 0x1fff) == 0;
    std::memcpy(in.a + 16 * dir, ip + 12, 4);
    std::memcpy(in.a + 16 * (1 - dir), ip + 16, 4);
    const bool ports = first_fragment && left >= header;
    fill_common(in, ip[9], ip[1] >> 2, vlan, ports, ip + header, ports ? left - header : 0, dir);
    return true;
}

inline bool fill_ipv6(AclInput& in, const std::uint8_t* ip, std::size_t left, std::uint16_t vlan,
                      unsigned dir) {
    if (left < 40 || ip[0] >> 4 != 6) return false;
    std::memcpy(in.a + 16 * dir, ip + 8, 16);
    std::memcpy(in.a + 16 * (1 - dir), ip + 24, 16);
    const auto dscp = static_cast<std::uint8_t>(((ip[0] & 0x0fu) << 4 | ip[1] >> 4) >> 2);
    fill_common(in, ip[6], dscp, vlan, true, ip + 40, left - 40, dir);
    return true;
}

// Fills `in` for an IPv4 (0) or IPv6 (1) frame, else gives kL2 with `word` for the L2 rules.
inline unsigned parse(const std::uint8_t* f, std::size_t len, unsigned dir, AclInput& in,
                      std::uint32_t& word) {
    word = 0;
    if (len < 14) return kL2;
    std::uint16_t type = read16(f + 12);
    std::size_t at = 14;
    std::uint16_t vlan = 0;
    if (type == kEthertypeVlan || type == kEthertypeQinQ) {
        if (len < 16) return kL2;
        vlan = static_cast<std::uint16_t>(kTagged | (read16(f + 14) & 0x0fff));
        word = vlan;
        if (len < 18) return kL2;
        type = read16(f + 16);
        at = 18;
    }
    word = std::uint32_t{type} << 16 | kHasEthertype | vlan;
    if (type == kEthertypeIpv4 && fill_ipv4(in, f + at, len - at, vlan, dir)) return 0;
    if (type == kEthertypeIpv6 && fill_ipv6(in, f + at, len - at, vlan, dir)) return 1;
    return kL2;
}

}  // namespace

struct AclClassifier::Chunk {
    AclInput in[kChunk];
    const std::uint8_t* data[2][kChunk];
    std::uint8_t slot[2][kChunk];
    std::uint32_t result[kChunk];
    unsigned count[2];
};

std::unique_ptr<AclClassifier::PortTable> AclClassifier::make_port_table(
    const std::vector<TrafficClass>& classes) {
    std::vector<std::pair<ClassId, const ClassMatch*>> matches;
    for (std::size_t i = 0; i < classes.size(); ++i)
        for (const ClassMatch& m : classes[i].match) {
            if (m.ethertype || m.a_net || m.b_net || m.vlan || m.dscp) return nullptr;
            matches.emplace_back(static_cast<ClassId>(i + 1), &m);
        }
    if (matches.empty() || matches.size() > 64) return nullptr;
    auto t = std::make_unique<PortTable>();
    for (std::size_t j = 0; j < matches.size(); ++j) {
        const ClassMatch& m = *matches[j].second;
        const std::uint64_t bit = std::uint64_t{1} << j;
        t->id.push_back(matches[j].first);
        for (unsigned p = 0; p < 256; ++p)
            if (!m.protocol || *m.protocol == p) t->proto[p] |= bit;
        if (m.a_port || m.b_port) t->needs_ports |= bit;
    }
    for (unsigned side = 0; side < 2; ++side) {
        auto range_of = [side](const ClassMatch& m) { return side == 0 ? m.a_port : m.b_port; };
        std::vector<std::uint32_t> starts = {0};  // where an interval of equal masks begins
        for (const auto& [id, m] : matches)
            if (const auto r = range_of(*m)) {
                starts.push_back(r->lo);
                starts.push_back(std::uint32_t{r->hi} + 1);
            }
        std::sort(starts.begin(), starts.end());
        starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
        if (starts.back() == 65536) starts.pop_back();
        t->interval[side].resize(65536);
        t->mask[side].resize(starts.size());
        for (std::size_t k = 0; k < starts.size(); ++k) {
            const std::uint32_t lo = starts[k];
            const std::uint32_t end = k + 1 < starts.size() ? starts[k + 1] : 65536;
            for (std::uint32_t port = lo; port < end; ++port)
                t->interval[side][port] = static_cast<std::uint8_t>(k);
            for (std::size_t j = 0; j < matches.size(); ++j) {
                const auto r = range_of(*matches[j].second);
                if (!r || (r->lo <= lo && lo <= r->hi)) t->mask[side][k] |= std::uint64_t{1} << j;
            }
        }
    }
    return t;
}

AclClassifier::AclClassifier(const std::vector<TrafficClass>& classes) : classes_(classes.size()) {
    validate(classes);
    ports_ = make_port_table(classes);
    std::vector<AclRule> rules[2];
    const IpFamily families[2] = {IpFamily::ipv4, IpFamily::ipv6};
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const auto id = static_cast<ClassId>(i + 1);
        for (const ClassMatch& m : classes[i].match) {
            AclRule r;
            for (int f = 0; f < 2; ++f)
                if (make_rule(m, families[f], id, r)) rules[f].push_back(r);
            if (!m.needs_ip()) l2_.push_back(make_l2_rule(m, id));
        }
    }
    for (int f = 0; f < 2; ++f) {
        rules_[f] = rules[f].size();
        try {
            ctx_[f] = build_context(families[f], rules[f]);
        } catch (...) {
            rte_acl_free(ctx_[0]);
            throw;
        }
    }
}

AclClassifier::~AclClassifier() {
    rte_acl_free(ctx_[0]);
    rte_acl_free(ctx_[1]);
}

void AclClassifier::classify_chunk(Chunk& c, ClassId* out) const {
    for (int f = 0; f < 2; ++f) {
        const unsigned k = c.count[f];
        if (k == 0) continue;
        if (ctx_[f] == nullptr) {
            for (unsigned j = 0; j < k; ++j)
                out[c.slot[f][j]] = kDefaultClass;
            continue;
        }
        rte_acl_classify(ctx_[f], c.data[f], c.result, k, 1);
        for (unsigned j = 0; j < k; ++j)
            out[c.slot[f][j]] = static_cast<ClassId>(c.result[j]);
    }
}

void AclClassifier::classify_burst(const std::uint8_t* const* frames, const std::uint16_t* lengths,
                                   unsigned n, int direction, ClassId* out) const {
    if (classes_ == 0) {
        std::memset(out, kDefaultClass, n);
        return;
    }
    const unsigned dir = direction == 0 ? 0 : 1;
    Chunk c;
    for (unsigned base = 0; base < n; base += kChunk) {
        const unsigned m = std::min(kChunk, n - base);
        c.count[0] = c.count[1] = 0;
        for (unsigned i = 0; i < m; ++i) {
            std::uint32_t word;
            const unsigned kind = parse(frames[base + i], lengths[base + i], dir, c.in[i], word);
            if (kind != kL2 && ports_) {
                const PortTable& t = *ports_;
                const AclInput& in = c.in[i];
                std::uint64_t m = t.proto[in.proto];
                if (in.flags & kHasPorts)
                    m &= t.mask[0][t.interval[0][read16(in.a_port)]] &
                         t.mask[1][t.interval[1][read16(in.b_port)]];
                else
                    m &= ~t.needs_ports;
                out[base + i] =
                    m ? t.id[static_cast<unsigned>(std::countr_zero(m))] : kDefaultClass;
                continue;
            }
            if (kind != kL2) {
                const unsigned k = c.count[kind]++;
                c.data[kind][k] = &c.in[i].proto;
                c.slot[kind][k] = static_cast<std::uint8_t>(i);
                continue;
            }
            ClassId id = kDefaultClass;
            for (const L2Rule& r : l2_)
                if ((word & r.mask) == r.value) {
                    id = r.id;
                    break;
                }
            out[base + i] = id;
        }
        classify_chunk(c, out + base);
    }
}

void AclClassifier::classify_burst(rte_mbuf* const* pkts, unsigned n, int direction,
                                   ClassId* out) const {
    const std::uint8_t* frames[kChunk];
    std::uint16_t lengths[kChunk];
    for (unsigned base = 0; base < n; base += kChunk) {
        const unsigned m = std::min(kChunk, n - base);
        for (unsigned i = 0; i < m; ++i) {
            frames[i] = rte_pktmbuf_mtod(pkts[base + i], const std::uint8_t*);
            lengths[i] = rte_pktmbuf_data_len(pkts[base + i]);
            rte_prefetch0(frames[i]);
        }
        classify_burst(frames, lengths, m, direction, out + base);
    }
}

}  // namespace linkem::dp
