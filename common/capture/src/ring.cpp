#include <bit>
#include <cstring>

#include "linkem/capture.hpp"

namespace linkem::capture {

// Records lie whole in the buffer, each 8-aligned, in the order they were committed. One that
// does not fit before the end starts at the beginning; the room before the end becomes a
// padding record (its size, and a zero where a record's point is).

namespace {
constexpr std::uint32_t record_size(std::uint32_t cap_len) {
    return (static_cast<std::uint32_t>(sizeof(RecordHeader)) + cap_len + 7) & ~7u;
}
struct Padding {
    std::uint32_t size;
    std::uint8_t zero;  // where RecordHeader::point is: never 0 in a record
};
}  // namespace

CaptureRing::CaptureRing(std::size_t bytes)
    : cap_(std::bit_ceil(bytes < (std::size_t{64} << 10) ? (std::size_t{64} << 10) : bytes)),
      mask_(cap_ - 1),
      buf_(new std::uint8_t[cap_]) {}

RecordHeader* CaptureRing::reserve(std::uint32_t cap_len) {
    const std::uint32_t need = record_size(cap_len);
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    const std::size_t off = t & mask_;
    const std::size_t to_end = cap_ - off;
    const std::uint64_t total = need <= to_end ? need : to_end + need;
    if (total > cap_ - (t - head_cache_)) {
        head_cache_ = head_.load(std::memory_order_acquire);
        if (total > cap_ - (t - head_cache_)) {
            missed_.store(missed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            return nullptr;
        }
    }
    std::uint8_t* at = buf_.get() + off;
    if (need > to_end) {
        Padding pad{static_cast<std::uint32_t>(to_end), 0};
        std::memcpy(at, &pad, sizeof pad);
        at = buf_.get();
    }
    reserved_ = t + total;
    auto* h = reinterpret_cast<RecordHeader*>(at);
    h->size = need;
    h->cap_len = cap_len;
    return h;
}

void CaptureRing::commit() {
    tail_.store(reserved_, std::memory_order_release);
}

const RecordHeader* CaptureRing::peek() {
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    const std::uint64_t t = tail_.load(std::memory_order_acquire);
    while (h != t) {
        const std::uint8_t* at = buf_.get() + (h & mask_);
        Padding pad;
        std::memcpy(&pad, at, sizeof pad);
        if (pad.zero != 0) return reinterpret_cast<const RecordHeader*>(at);
        h += pad.size;
        head_.store(h, std::memory_order_release);
    }
    return nullptr;
}

void CaptureRing::pop() {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    const auto* r = reinterpret_cast<const RecordHeader*>(buf_.get() + (h & mask_));
    head_.store(h + r->size, std::memory_order_release);
}

}  // namespace linkem::capture
