// pcapng (draft-ietf-opsawg-pcapng): the section header, interface description, enhanced
// packet and interface statistics blocks, little-endian (the machine's order, declared by the
// section header's byte-order magic).
#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "linkem/capture.hpp"

namespace linkem::capture {

static_assert(std::endian::native == std::endian::little, "pcapng written in the machine's order");

// g++ 12 at -O3 warns that growing these byte vectors writes "into a region of size 0" (its
// value range analysis of std::vector's reallocation, GCC bug 106199 and its kin); the writes
// are into the room resize() just made.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

namespace {

constexpr std::uint32_t kSectionHeader = 0x0A0D0D0A, kInterfaceDescription = 1,
                        kInterfaceStatistics = 5, kEnhancedPacket = 6;
constexpr std::uint16_t kOptEnd = 0, kOptComment = 1;
constexpr std::uint16_t kShbUserAppl = 4;
constexpr std::uint16_t kIfName = 2, kIfDescription = 3, kIfTsresol = 9;
constexpr std::uint16_t kIsbStartTime = 2, kIsbEndTime = 3, kIsbIfRecv = 4, kIsbIfDrop = 5;
constexpr std::uint16_t kLinkTypeEthernet = 1;
// An option's value is at most 65535 bytes; comments are far shorter.
constexpr std::size_t kMaxOption = 65535;
// Blocks are written out once this many bytes are buffered (and at every flush()).
constexpr std::size_t kFlushAt = 1 << 20;

struct Body {
    std::vector<std::uint8_t>& b;
    template <class T>
    void put(T v) {
        const std::size_t at = b.size();
        b.resize(at + sizeof v);
        std::memcpy(b.data() + at, &v, sizeof v);
    }
    void bytes(const void* p, std::size_t n) {
        const std::size_t at = b.size();
        b.resize(at + n + (4 - n % 4) % 4, 0);
        if (n) std::memcpy(b.data() + at, p, n);
    }
    void option(std::uint16_t code, const void* p, std::size_t n) {
        n = n > kMaxOption ? kMaxOption : n;
        put(code);
        put(static_cast<std::uint16_t>(n));
        bytes(p, n);
    }
    void option(std::uint16_t code, std::string_view s) {
        if (!s.empty()) option(code, s.data(), s.size());
    }
    void time(TimeNs ns) {
        const auto u = static_cast<std::uint64_t>(ns);
        put(static_cast<std::uint32_t>(u >> 32));
        put(static_cast<std::uint32_t>(u));
    }
    void end() {
        put(kOptEnd);
        put(std::uint16_t{0});
    }
};

}  // namespace

PcapngFile::PcapngFile(const std::string& path, const std::vector<Interface>& interfaces,
                       std::uint32_t snaplen, std::string_view application,
                       std::string_view comment)
    : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot create " + path);
    std::vector<std::uint8_t> b;
    {
        Body o{b};
        o.put(std::uint32_t{0x1A2B3C4D});
        o.put(std::uint16_t{1});
        o.put(std::uint16_t{0});
        o.put(std::int64_t{-1});  // section length: not given
        o.option(kOptComment, comment);
        o.option(kShbUserAppl, application);
        o.end();
        block(kSectionHeader, b);
    }
    for (const Interface& i : interfaces) {
        b.clear();
        Body o{b};
        o.put(kLinkTypeEthernet);
        o.put(std::uint16_t{0});
        o.put(snaplen);
        o.option(kIfName, i.name);
        o.option(kIfDescription, i.description);
        const std::uint8_t tsresol = 9;  // 10^-9 s
        o.option(kIfTsresol, &tsresol, 1);
        o.end();
        block(kInterfaceDescription, b);
    }
    try {
        flush();
    } catch (...) {
        ::close(fd_);
        fd_ = -1;
        throw;
    }
}

PcapngFile::~PcapngFile() {
    if (fd_ < 0) return;
    try {
        flush();
    } catch (...) {
    }
    ::close(fd_);
}

void PcapngFile::block(std::uint32_t type, std::span<const std::uint8_t> body) {
    const auto total = static_cast<std::uint32_t>(12 + body.size());
    Body o{buf_};
    o.put(type);
    o.put(total);
    const std::size_t at = buf_.size();
    buf_.resize(at + body.size());
    if (!body.empty()) std::memcpy(buf_.data() + at, body.data(), body.size());
    o.put(total);
    size_ += total;
}

void PcapngFile::packet(std::uint32_t interface, TimeNs utc_ns, std::uint32_t frame_len,
                        std::span<const std::uint8_t> data, std::string_view comment) {
    // Built in place at the buffer's end: no copy of the body.
    const std::size_t start = buf_.size();
    Body o{buf_};
    o.put(kEnhancedPacket);
    o.put(std::uint32_t{0});  // total length, below
    o.put(interface);
    o.time(utc_ns);
    o.put(static_cast<std::uint32_t>(data.size()));
    o.put(frame_len);
    o.bytes(data.data(), data.size());
    o.option(kOptComment, comment);
    o.end();
    const auto total = static_cast<std::uint32_t>(buf_.size() - start + 4);
    o.put(total);
    std::memcpy(buf_.data() + start + 4, &total, 4);
    size_ += total;
    ++packets_buffered_;
    if (buf_.size() >= kFlushAt) flush();
}

void PcapngFile::statistics(std::uint32_t interface, TimeNs start_utc_ns, TimeNs end_utc_ns,
                            std::uint64_t received, std::uint64_t dropped,
                            std::string_view comment) {
    std::vector<std::uint8_t> b;
    Body o{b};
    o.put(interface);
    o.time(end_utc_ns);
    o.option(kOptComment, comment);
    std::uint8_t t[8];
    const auto put_time = [&](std::uint16_t code, TimeNs ns) {
        const auto u = static_cast<std::uint64_t>(ns);
        const auto hi = static_cast<std::uint32_t>(u >> 32), lo = static_cast<std::uint32_t>(u);
        std::memcpy(t, &hi, 4);
        std::memcpy(t + 4, &lo, 4);
        o.option(code, t, 8);
    };
    put_time(kIsbStartTime, start_utc_ns);
    put_time(kIsbEndTime, end_utc_ns);
    o.option(kIsbIfRecv, &received, 8);
    o.option(kIsbIfDrop, &dropped, 8);
    o.end();
    block(kInterfaceStatistics, b);
}

void PcapngFile::flush() {
    std::size_t at = 0;
    while (at < buf_.size()) {
        const ssize_t n = ::write(fd_, buf_.data() + at, buf_.size() - at);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int e = errno;
            // The file ends at the last whole block written: what was written of the block
            // the failure cut goes again (blocks lie back to back in buf_, each with its
            // length at offset 4).
            std::size_t whole = 0;
            while (whole + 8 <= buf_.size()) {
                std::uint32_t type, len;
                std::memcpy(&type, buf_.data() + whole, 4);
                std::memcpy(&len, buf_.data() + whole + 4, 4);
                if (whole + len > at) break;
                whole += len;
                packets_written_ += type == kEnhancedPacket;
            }
            size_ -= buf_.size() - whole;
            packets_buffered_ = 0;
            if (whole != at) {
                const off_t end = ::lseek(fd_, 0, SEEK_CUR);
                const off_t keep = end - static_cast<off_t>(at - whole);
                if (end >= 0 && ::ftruncate(fd_, keep) == 0) ::lseek(fd_, keep, SEEK_SET);
            }
            buf_.clear();
            throw std::system_error(e, std::generic_category(), "cannot write " + path_);
        }
        at += static_cast<std::size_t>(n);
    }
    packets_written_ += packets_buffered_;
    packets_buffered_ = 0;
    buf_.clear();
}

}  // namespace linkem::capture
