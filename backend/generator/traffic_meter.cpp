#include "traffic_meter.hpp"

#include <cstring>

namespace linkem {

namespace {

template <class T>
void put(std::span<std::uint8_t> f, std::size_t at, T v) {
    std::memcpy(f.data() + at, &v, sizeof v);  // host order: both ends are this process
}
template <class T>
T get(std::span<const std::uint8_t> f, std::size_t at) {
    T v;
    std::memcpy(&v, f.data() + at, sizeof v);
    return v;
}

constexpr std::uint8_t kDst[6] = {0x02, 0x4c, 0x4b, 0x00, 0x00, 0x02};
constexpr std::uint8_t kSrc[6] = {0x02, 0x4c, 0x4b, 0x00, 0x00, 0x01};
constexpr std::size_t o = GenHeader::kOffset;

}  // namespace

void write_gen_frame(std::span<std::uint8_t> f, const GenHeader& h) {
    std::memcpy(f.data(), kDst, 6);
    std::memcpy(f.data() + 6, kSrc, 6);
    f[12] = GenHeader::kEtherType >> 8;
    f[13] = GenHeader::kEtherType & 0xff;
    put<std::uint32_t>(f, o, GenHeader::kMagic);
    f[o + 4] = h.direction;
    f[o + 5] = 1;  // header version
    put<std::uint16_t>(f, o + 6, 0);
    put<std::uint32_t>(f, o + 8, h.run);
    put<std::uint32_t>(f, o + 12, 0);
    restamp_gen_frame(f, h.seq, h.send_ns);
}

void restamp_gen_frame(std::span<std::uint8_t> f, std::uint64_t seq, TimeNs send_ns) {
    put<std::uint64_t>(f, o + 16, seq);
    put<std::int64_t>(f, o + 24, send_ns);
}

std::optional<GenHeader> read_gen_frame(std::span<const std::uint8_t> f) {
    if (f.size() < kGenFrameMin || f[12] != (GenHeader::kEtherType >> 8) ||
        f[13] != (GenHeader::kEtherType & 0xff) || get<std::uint32_t>(f, o) != GenHeader::kMagic ||
        f[o + 5] != 1 || f[o + 4] > 1)
        return std::nullopt;
    GenHeader h;
    h.direction = f[o + 4];
    h.run = get<std::uint32_t>(f, o + 8);
    h.seq = get<std::uint64_t>(f, o + 16);
    h.send_ns = get<std::int64_t>(f, o + 24);
    return h;
}

void take_counted_samples(std::vector<MeasuredSample>& held, std::uint32_t run,
                          TimeNs counted_to_ns, std::vector<MeasuredSample>& out) {
    std::size_t keep = 0;
    for (const MeasuredSample& s : held) {
        if (s.run != run) continue;
        if (s.received_ns() <= counted_to_ns)
            out.push_back(s);
        else
            held[keep++] = s;
    }
    held.resize(keep);
}

}  // namespace linkem
