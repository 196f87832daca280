#include "linkem/huge_pages.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <new>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#else
#include <cstdlib>
#endif

namespace linkem {

#if defined(__linux__)

void* huge_pages_allocate(std::size_t bytes, bool prefault) {
    const std::size_t len = huge_pages_round(bytes);
    // Over-map by one huge page so the block can start on a 2 MiB boundary, then trim.
    void* raw = mmap(nullptr, len + kHugePageSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto r = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t a = (r + kHugePageSize - 1) & ~(kHugePageSize - 1);
    if (a > r) munmap(raw, a - r);
    munmap(reinterpret_cast<void*>(a + len), r + kHugePageSize - a);
    void* p = reinterpret_cast<void*>(a);
    madvise(p, len, MADV_HUGEPAGE);
#if defined(MADV_POPULATE_WRITE)
    if (prefault) madvise(p, len, MADV_POPULATE_WRITE);  // Linux 5.14+; else faults later
#endif
    return p;
}

void huge_pages_free(void* p, std::size_t bytes) {
    if (p) munmap(p, huge_pages_round(bytes));
}

std::size_t huge_pages_backed(const void* p, std::size_t bytes) {
    std::ifstream smaps("/proc/self/smaps");
    const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + bytes;
    bool inside = false;
    std::size_t kib = 0;
    for (std::string line; std::getline(smaps, line);) {
        unsigned long a = 0, b = 0;
        // A mapping's header line ("start-end perms ..."); field lines start with a name.
        if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2) {
            inside = a < hi && b > lo;
            continue;
        }
        unsigned long k = 0;
        if (inside && std::sscanf(line.c_str(), "AnonHugePages: %lu kB", &k) == 1) kib += k;
    }
    return kib * 1024;
}

#else

void* huge_pages_allocate(std::size_t bytes, bool) {
    void* p = std::aligned_alloc(kHugePageSize, huge_pages_round(bytes));
    if (!p) throw std::bad_alloc();
    return p;
}

void huge_pages_free(void* p, std::size_t) {
    std::free(p);
}

std::size_t huge_pages_backed(const void*, std::size_t) {
    return 0;
}

#endif

}  // namespace linkem
