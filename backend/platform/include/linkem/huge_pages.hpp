// Memory for large arrays that are touched at random (the calendar queue's chunks, the data
// plane's mbuf pools): with 4 KiB pages nearly every access to them also misses the TLB,
// and page walks are dear in a VM. Blocks come 2 MiB-aligned, rounded up to whole 2 MiB
// pages, and (on Linux) advised for transparent huge pages, which Debian's default THP
// setting ("madvise") only grants on request. Advice only: without THP the memory is
// ordinary 4 KiB pages and everything works the same, slower.
#pragma once

#include <cstddef>
#include <new>

namespace linkem {

inline constexpr std::size_t kHugePageSize = std::size_t{2} << 20;

/// bytes rounded up to whole huge pages.
constexpr std::size_t huge_pages_round(std::size_t bytes) {
    return (bytes + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
}

/// Maps huge_pages_round(bytes) of zeroed memory, 2 MiB-aligned and advised for huge pages.
/// With prefault, the pages are faulted in now (not later, on a packet path). Throws
/// std::bad_alloc when the memory cannot be mapped.
void* huge_pages_allocate(std::size_t bytes, bool prefault = false);

/// Unmaps a block from huge_pages_allocate (bytes as passed to it).
void huge_pages_free(void* p, std::size_t bytes);

/// How many bytes of [p, p + bytes) are backed by transparent huge pages right now (from
/// /proc/self/smaps; 0 where it cannot be read).
std::size_t huge_pages_backed(const void* p, std::size_t bytes);

/// Allocator for large arrays read and written at random: blocks of 2 MiB or more go on
/// transparent huge pages (smaller ones come from operator new). With 4 KiB pages every
/// bucket of the calendar queue sits on pages of its own, and the pushes, which hop between
/// some hundred buckets, miss the first-level TLB (page walks are dearer in a VM).
template <class T>
struct HugePageAllocator {
    using value_type = T;

    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}

    T* allocate(std::size_t n) {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugePageSize)
            return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
        return static_cast<T*>(huge_pages_allocate(bytes));
    }
    void deallocate(T* p, std::size_t n) {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugePageSize)
            ::operator delete (p, std::align_val_t{alignof(T)});
        else
            huge_pages_free(p, bytes);
    }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const {
        return true;
    }
};

}  // namespace linkem
