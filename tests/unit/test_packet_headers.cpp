// linkem/packet_headers.hpp: the flow hash FQ-CoDel sorts packets by (the 5-tuple of IPv4
// and IPv6 frames, tagged or not; fragments; frames without IP), the ECN field, and CE
// marking, whose IPv4 header checksum is checked against one computed here from scratch.
// Truncated frames lie at the end of a page followed by an inaccessible one, so that a read
// past their length faults.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "linkem/packet_headers.hpp"

namespace linkem {
namespace {

using Frame = std::vector<std::uint8_t>;

void put16(Frame& f, std::size_t at, std::uint16_t v) {
    f[at] = static_cast<std::uint8_t>(v >> 8);
    f[at + 1] = static_cast<std::uint8_t>(v);
}
std::uint16_t get16(const Frame& f, std::size_t at) {
    return static_cast<std::uint16_t>(f[at] << 8 | f[at + 1]);
}

// The IPv4 header checksum (RFC 791) of the ihl*4 bytes at `at`, its own field taken as 0:
// the one's complement of the one's-complement sum of the header's 16-bit words.
std::uint16_t ipv4_checksum(const Frame& f, std::size_t at) {
    const std::size_t ihl = (f[at] & 0xfu) * 4u;
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < ihl; i += 2)
        if (i != 10) sum += get16(f, at + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

// The Ethernet header with `tags` VLAN tags (outer 802.1ad when two), then `ethertype`.
Frame ethernet(std::uint16_t ethertype, int tags = 0) {
    Frame f(12, 0);
    f[0] = 0x02;
    f[6] = 0x02;
    f[11] = 0x01;
    for (int t = 0; t < tags; ++t) {
        f.resize(f.size() + 4);
        put16(f, f.size() - 4, t == 0 && tags > 1 ? 0x88a8 : 0x8100);
        put16(f, f.size() - 2, static_cast<std::uint16_t>(100 + t));  // VLAN id
    }
    f.resize(f.size() + 2);
    put16(f, f.size() - 2, ethertype);
    return f;
}

struct V4 {
    std::uint32_t src = 0x0a000001, dst = 0x0a000002;
    std::uint8_t proto = 17;
    std::uint16_t sport = 5000, dport = 6000;
    std::uint8_t tos = 0;
    std::uint16_t frag = 0;  // flags and fragment offset (MF 0x2000, DF 0x4000)
    std::uint16_t id = 0x1234;
    std::uint8_t options = 0;  // bytes of IP options (a multiple of 4)
    int tags = 0;
    std::size_t payload = 32;  // bytes after the IP header
};

// An IPv4 frame with a valid header checksum; the IP header starts at ip_at(v).
std::size_t ip_at(int tags) {
    return 14 + 4 * static_cast<std::size_t>(tags);
}
Frame ipv4(const V4& v) {
    Frame f = ethernet(0x0800, v.tags);
    const std::size_t at = f.size();
    const std::size_t ihl = 20 + v.options;
    f.resize(at + ihl + v.payload, 0);
    f[at] = static_cast<std::uint8_t>(0x40 | ihl / 4);
    f[at + 1] = v.tos;
    put16(f, at + 2, static_cast<std::uint16_t>(ihl + v.payload));
    put16(f, at + 4, v.id);
    put16(f, at + 6, v.frag);
    f[at + 8] = 64;
    f[at + 9] = v.proto;
    for (int i = 0; i < 4; ++i) {
        f[at + 12 + i] = static_cast<std::uint8_t>(v.src >> (24 - 8 * i));
        f[at + 16 + i] = static_cast<std::uint8_t>(v.dst >> (24 - 8 * i));
    }
    for (std::size_t i = 0; i < v.options; ++i)
        f[at + 20 + i] = 1;  // NOP
    if (v.payload >= 4) {
        put16(f, at + ihl, v.sport);
        put16(f, at + ihl + 2, v.dport);
    }
    for (std::size_t i = 4; i < v.payload; ++i)
        f[at + ihl + i] = static_cast<std::uint8_t>(i * 7);
    put16(f, at + 10, ipv4_checksum(f, at));
    return f;
}

struct V6 {
    std::array<std::uint8_t, 16> src{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    std::array<std::uint8_t, 16> dst{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    std::uint8_t next = 6;
    std::uint16_t sport = 443, dport = 50000;
    std::uint8_t tc = 0;
    std::uint32_t flow_label = 0xabcde;
    int tags = 0;
    std::size_t payload = 32;
};

Frame ipv6(const V6& v) {
    Frame f = ethernet(0x86dd, v.tags);
    const std::size_t at = f.size();
    f.resize(at + 40 + v.payload, 0);
    const std::uint32_t word = 6u << 28 | std::uint32_t{v.tc} << 20 | (v.flow_label & 0xfffff);
    for (int i = 0; i < 4; ++i)
        f[at + i] = static_cast<std::uint8_t>(word >> (24 - 8 * i));
    put16(f, at + 4, static_cast<std::uint16_t>(v.payload));
    f[at + 6] = v.next;
    f[at + 7] = 64;
    std::memcpy(f.data() + at + 8, v.src.data(), 16);
    std::memcpy(f.data() + at + 24, v.dst.data(), 16);
    if (v.payload >= 4) {
        put16(f, at + 40, v.sport);
        put16(f, at + 42, v.dport);
    }
    for (std::size_t i = 4; i < v.payload; ++i)
        f[at + 40 + i] = static_cast<std::uint8_t>(i * 5);
    return f;
}

std::uint32_t hash(const Frame& f) {
    return flow_hash(f.data(), static_cast<std::uint32_t>(f.size()));
}
int ecn(const Frame& f) {
    return ecn_codepoint(f.data(), static_cast<std::uint32_t>(f.size()));
}
bool mark(Frame& f) {
    return mark_ce(f.data(), static_cast<std::uint32_t>(f.size()));
}

// ---------------------------------------------------------------------------- flow_hash

TEST(PacketHeaders, Ipv4SameFiveTupleSameHashAnyFieldChangesIt) {
    const V4 base;
    const std::uint32_t h = hash(ipv4(base));
    // The rest of the frame is not the flow: TOS, id, TTL, payload, length.
    V4 same = base;
    same.tos = 0xb9;
    same.id = 7;
    same.payload = 1000;
    EXPECT_EQ(hash(ipv4(same)), h);
    Frame other_payload = ipv4(base);
    other_payload.back() ^= 0xff;
    EXPECT_EQ(hash(other_payload), h);
    // IP options move the ports, not the flow.
    same = base;
    same.options = 8;
    EXPECT_EQ(hash(ipv4(same)), h);
    // Each of the five fields, and the addresses swapped (the reverse direction).
    std::vector<V4> others(6, base);
    others[0].src = 0x0a000003;
    others[1].dst = 0x0a000003;
    others[2].proto = 6;
    others[3].sport = 5001;
    others[4].dport = 6001;
    std::swap(others[5].src, others[5].dst);
    std::swap(others[5].sport, others[5].dport);
    for (std::size_t i = 0; i < others.size(); ++i)
        EXPECT_NE(hash(ipv4(others[i])), h) << "change " << i;
}

TEST(PacketHeaders, PortsCountForTcpUdpSctpUdpLiteOnly) {
    for (std::uint8_t proto : {6, 17, 132, 136}) {
        V4 a;
        a.proto = proto;
        V4 b = a;
        b.dport = 6002;
        EXPECT_NE(hash(ipv4(a)), hash(ipv4(b))) << "protocol " << int{proto};
    }
    for (std::uint8_t proto : {1, 47, 50}) {  // ICMP, GRE, ESP: the bytes there are no ports
        V4 a;
        a.proto = proto;
        V4 b = a;
        b.dport = 6002;
        EXPECT_EQ(hash(ipv4(a)), hash(ipv4(b))) << "protocol " << int{proto};
    }
}

TEST(PacketHeaders, Ipv6SameFiveTupleSameHashAnyFieldChangesIt) {
    const V6 base;
    const std::uint32_t h = hash(ipv6(base));
    V6 same = base;
    same.tc = 0x2e << 2 | 2;
    same.flow_label = 1;
    same.payload = 1200;
    EXPECT_EQ(hash(ipv6(same)), h);
    std::vector<V6> others(7, base);
    others[0].src[15] = 3;
    others[1].dst[15] = 3;
    others[2].src[0] = 0xfe;  // every address byte counts, not only the last
    others[3].next = 17;
    others[4].sport = 444;
    others[5].dport = 50001;
    std::swap(others[6].src, others[6].dst);
    std::swap(others[6].sport, others[6].dport);
    for (std::size_t i = 0; i < others.size(); ++i)
        EXPECT_NE(hash(ipv6(others[i])), h) << "change " << i;
    // An IPv6 and an IPv4 frame are different flows.
    EXPECT_NE(hash(ipv4(V4{})), h);
}

TEST(PacketHeaders, Ipv6ExtensionHeadersHashByAddressesAndProtocol) {
    // A fragment header (44): every fragment of a datagram, the first with its ports too, is
    // one flow; another pair of addresses is another.
    V6 first;
    first.next = 44;
    V6 later = first;
    later.sport = 1;
    later.dport = 2;
    EXPECT_EQ(hash(ipv6(first)), hash(ipv6(later)));
    V6 elsewhere = first;
    elsewhere.dst[15] = 9;
    EXPECT_NE(hash(ipv6(elsewhere)), hash(ipv6(first)));
}

TEST(PacketHeaders, VlanTagsAreSkipped) {
    for (int tags : {1, 2}) {
        V4 a;
        a.tags = tags;
        EXPECT_EQ(hash(ipv4(a)), hash(ipv4(V4{}))) << tags << " tags: the same 5-tuple";
        V4 b = a;
        b.sport = 1;
        EXPECT_NE(hash(ipv4(b)), hash(ipv4(a))) << tags << " tags: ports read past the tags";
        V6 c;
        c.tags = tags;
        EXPECT_EQ(hash(ipv6(c)), hash(ipv6(V6{}))) << tags << " tags, IPv6";
        V6 d = c;
        d.dport = 1;
        EXPECT_NE(hash(ipv6(d)), hash(ipv6(c))) << tags << " tags, IPv6";
        EXPECT_EQ(ecn(ipv4(a)), 0);
    }
    // Three tags: not read as IP (hashed as a frame without IP, by its outer ethertype).
    V4 three;
    three.tags = 3;
    V4 three_b = three;
    three_b.src = 1;
    EXPECT_EQ(hash(ipv4(three)), hash(ipv4(three_b)));
    EXPECT_EQ(ecn(ipv4(three)), -1);
}

TEST(PacketHeaders, Ipv4FragmentsOfADatagramAreOneFlow) {
    V4 whole;
    whole.frag = 0x4000;  // DF: not a fragment
    V4 unfragmented;
    EXPECT_EQ(hash(ipv4(whole)), hash(ipv4(unfragmented))) << "DF is no part of the flow";
    V4 first;
    first.frag = 0x2000;  // MF, offset 0: carries the ports
    V4 middle = first;
    middle.frag = 0x2000 | 185;  // MF, offset 1480 bytes: the bytes there are payload
    middle.sport = 0x1111;
    middle.dport = 0x2222;
    V4 last = middle;
    last.frag = 370;
    last.sport = 0x3333;
    EXPECT_EQ(hash(ipv4(first)), hash(ipv4(middle)));
    EXPECT_EQ(hash(ipv4(first)), hash(ipv4(last)));
    // Fragments of other addresses or another protocol are another flow.
    V4 other = middle;
    other.src = 0x0a000009;
    EXPECT_NE(hash(ipv4(other)), hash(ipv4(middle)));
    other = middle;
    other.proto = 6;
    EXPECT_NE(hash(ipv4(other)), hash(ipv4(middle)));
}

TEST(PacketHeaders, FramesWithoutIpHashByEthertype) {
    Frame arp = ethernet(0x0806);
    arp.resize(60, 0x11);
    Frame arp2 = arp;
    arp2[30] = 0x22;
    EXPECT_EQ(hash(arp), hash(arp2)) << "the payload of a frame without IP is not its flow";
    Frame exp = ethernet(0x88b5);
    exp.resize(60, 0x11);
    EXPECT_NE(hash(exp), hash(arp));
    EXPECT_EQ(ecn(arp), -1);
    const Frame arp_before = arp;
    EXPECT_FALSE(mark(arp));
    EXPECT_EQ(arp, arp_before) << "unchanged";
    // The IPv4 ethertype over a header of another version is no IP.
    Frame bad = ipv4(V4{});
    bad[14] = 0x65;
    Frame bad2 = bad;
    bad2[14 + 12] ^= 1;
    EXPECT_EQ(hash(bad), hash(bad2));
    EXPECT_EQ(ecn(bad), -1);
    const Frame before = bad;
    EXPECT_FALSE(mark(bad));
    EXPECT_EQ(bad, before);
    Frame bad6 = ipv6(V6{});
    bad6[14] = 0x45;
    EXPECT_EQ(ecn(bad6), -1);
}

// ------------------------------------------------------------------------- ECN and CE

TEST(PacketHeaders, EcnCodepointIpv4AndIpv6) {
    for (std::uint8_t cp = 0; cp < 4; ++cp) {
        V4 a;
        a.tos = static_cast<std::uint8_t>(0xb8 | cp);  // DSCP EF
        EXPECT_EQ(ecn(ipv4(a)), cp);
        V6 b;
        b.tc = static_cast<std::uint8_t>(0xb8 | cp);
        EXPECT_EQ(ecn(ipv6(b)), cp);
        b.tc = cp;
        b.flow_label = 0xfffff;
        EXPECT_EQ(ecn(ipv6(b)), cp) << "the flow label's bits are not the ECN field";
    }
}

TEST(PacketHeaders, MarkCeIpv4EveryCodepoint) {
    for (std::uint8_t dscp : {0x00, 0x2e, 0x3f}) {
        for (std::uint8_t cp = 0; cp < 4; ++cp) {
            V4 v;
            v.tos = static_cast<std::uint8_t>(dscp << 2 | cp);
            v.options = cp == 2 ? 4 : 0;
            const Frame before = ipv4(v);
            Frame f = before;
            const bool marked = mark(f);
            const std::size_t at = 14;
            if (cp == 0) {  // Not-ECT: not marked, not changed
                EXPECT_FALSE(marked);
                EXPECT_EQ(f, before);
                continue;
            }
            EXPECT_TRUE(marked) << "codepoint " << int{cp};
            EXPECT_EQ(ecn(f), 3);
            EXPECT_EQ(f[at + 1] >> 2, dscp) << "the DSCP stays";
            EXPECT_EQ(get16(f, at + 10), ipv4_checksum(f, at)) << "codepoint " << int{cp};
            for (std::size_t i = 0; i < f.size(); ++i) {
                if (i != at + 1 && i != at + 10 && i != at + 11) {
                    ASSERT_EQ(f[i], before[i]) << "byte " << i << " changed";
                }
            }
            if (cp == 3) {
                EXPECT_EQ(f, before) << "CE stays CE, nothing to change";
            }
        }
    }
}

// Every value the header checksum can take: the id runs through all 2^16 values, so the
// checksum after marking does too, 0x0000 and 0xffff included (where an incremental update
// may go wrong by one's-complement's two zeros). Each is checked against the checksum
// computed from scratch, and the marked header sums to 0xffff as a receiver checks it.
TEST(PacketHeaders, MarkCeIpv4ChecksumForEveryIdMatchesAFullRecomputation) {
    for (std::uint8_t cp : {1, 2}) {
        for (int tags : {0, 1}) {
            V4 v;
            v.tos = cp;
            v.tags = tags;
            Frame f = ipv4(v);
            const std::size_t at = ip_at(tags);
            std::size_t bad = 0, seen_zero = 0, seen_ffff = 0;
            for (std::uint32_t id = 0; id <= 0xffff; ++id) {
                put16(f, at + 4, static_cast<std::uint16_t>(id));
                f[at + 1] = cp;
                put16(f, at + 10, ipv4_checksum(f, at));
                ASSERT_TRUE(mark(f));
                const std::uint16_t want = ipv4_checksum(f, at);
                const std::uint16_t got = get16(f, at + 10);
                seen_zero += want == 0;
                seen_ffff += got == 0xffff;
                std::uint32_t sum = 0;
                for (std::size_t i = 0; i < 20; i += 2)
                    sum += get16(f, at + i);
                while (sum >> 16)
                    sum = (sum & 0xffff) + (sum >> 16);
                if ((got != want || sum != 0xffff) && bad++ < 5)
                    ADD_FAILURE() << "id " << id << " codepoint " << int{cp} << ": checksum " << got
                                  << ", from scratch " << want << ", header sum " << sum;
            }
            EXPECT_EQ(bad, 0u);
            EXPECT_GT(seen_zero, 0u) << "the checksum 0 was among those checked";
            EXPECT_EQ(seen_ffff, 0u) << "never the negative zero a full computation never makes";
        }
    }
}

TEST(PacketHeaders, MarkCeIpv6EveryCodepoint) {
    for (std::uint8_t dscp : {0x00, 0x2e, 0x3f}) {
        for (std::uint8_t cp = 0; cp < 4; ++cp) {
            V6 v;
            v.tc = static_cast<std::uint8_t>(dscp << 2 | cp);
            v.flow_label = 0xfffff;
            v.tags = dscp == 0x2e ? 1 : 0;
            const Frame before = ipv6(v);
            Frame f = before;
            const bool marked = mark(f);
            if (cp == 0) {
                EXPECT_FALSE(marked);
                EXPECT_EQ(f, before);
                continue;
            }
            EXPECT_TRUE(marked);
            EXPECT_EQ(ecn(f), 3);
            V6 want = v;
            want.tc = static_cast<std::uint8_t>(dscp << 2 | 3);
            EXPECT_EQ(f, ipv6(want)) << "only the ECN bits change: version, DSCP, flow label stay";
        }
    }
}

// ------------------------------------------------------------------- truncated frames

// A frame's first len bytes at the very end of a readable page, the next page
// inaccessible: any read or write past len faults.
class Guarded {
  public:
    Guarded() {
        page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        void* m =
            ::mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::runtime_error("mmap");
        base_ = static_cast<std::uint8_t*>(m);
        if (::mprotect(base_ + page_, page_, PROT_NONE) != 0) throw std::runtime_error("mprotect");
    }
    ~Guarded() { ::munmap(base_, 2 * page_); }
    Guarded(const Guarded&) = delete;
    Guarded& operator=(const Guarded&) = delete;
    std::uint8_t* place(const Frame& f, std::size_t len) {
        std::uint8_t* p = base_ + page_ - len;
        std::memcpy(p, f.data(), len);
        return p;
    }

  private:
    std::size_t page_ = 0;
    std::uint8_t* base_ = nullptr;
};

TEST(PacketHeaders, TruncatedFramesAreNeverReadPastTheirLength) {
    Guarded g;
    struct Case {
        Frame f;
        std::size_t whole_ip;  // the length from which the IP header is whole (0: no IP)
        int ecn;
    };
    std::vector<Case> cases;
    for (int tags : {0, 1, 2}) {
        V4 a;
        a.tags = tags;
        a.tos = 2;
        a.payload = 8;
        cases.push_back({ipv4(a), ip_at(tags) + 20, 2});
        a.options = 40;  // the longest header: the ports 60 bytes in
        cases.push_back({ipv4(a), ip_at(tags) + 20, 2});
        V6 b;
        b.tags = tags;
        b.tc = 1;
        b.payload = 8;
        cases.push_back({ipv6(b), ip_at(tags) + 40, 1});
    }
    Frame arp = ethernet(0x0806);
    arp.resize(42);
    cases.push_back({arp, 0, -1});
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const Frame& f = cases[k].f;
        const std::size_t whole_ip = cases[k].whole_ip;
        for (std::size_t len = 0; len <= f.size(); ++len) {
            SCOPED_TRACE("frame " + std::to_string(k) + " length " + std::to_string(len));
            std::uint8_t* p = g.place(f, len);
            const auto n = static_cast<std::uint32_t>(len);
            (void)flow_hash(p, n);
            const int cp = ecn_codepoint(p, n);
            const Frame before(p, p + len);
            const bool marked = mark_ce(p, n);
            if (whole_ip == 0 || len < whole_ip) {
                // Without a whole IP header there is no ECN field to read or mark.
                EXPECT_EQ(cp, -1);
                EXPECT_FALSE(marked);
                EXPECT_TRUE(std::equal(before.begin(), before.end(), p));
            } else {
                EXPECT_EQ(cp, cases[k].ecn);
                EXPECT_TRUE(marked);
            }
        }
    }
}

TEST(PacketHeaders, TruncatedPortsHashWithoutThem) {
    // The ports cut off: the hash is the flow's without ports, whatever the bytes past the
    // end would have been.
    V4 a;
    a.proto = 6;
    Frame f = ipv4(a);
    const std::uint32_t cut = 14 + 20 + 3;
    Frame g = f;
    g[14 + 20 + 3] ^= 0xff;
    EXPECT_EQ(flow_hash(f.data(), cut), flow_hash(g.data(), cut));
    EXPECT_NE(flow_hash(f.data(), cut + 1), flow_hash(g.data(), cut + 1));
}

}  // namespace
}  // namespace linkem
