// For programs that run for days (linkemd, linkem-gui): glibc's allocator with fixed
// thresholds instead of its dynamic ones, and its free memory handed back once a minute
// (docs/reliability.md, "Memory over hours").
#pragma once

#include <malloc.h>

#include <chrono>

namespace linkem {

/// glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB, and
/// the heap's trim threshold to twice that): once a large block (a class's Emulator, a
/// capture's ring, a chart's arrays) was freed, blocks of that size come from the heap and
/// the free space they leave stays resident, so RSS creeps up over hours of changes. Setting
/// the threshold (to glibc's default, 128 KiB) turns that off: larger blocks get mappings of
/// their own, returned when freed, and the heap's top is trimmed beyond 128 KiB. Call it
/// first thing in main().
inline void keep_large_blocks_mapped() {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

/// One arena for every thread (M_ARENA_MAX 1), for a program whose threads free what
/// another allocated (the GUI: its telemetry thread decodes each message, the UI thread
/// frees it). glibc puts a block another thread frees into the freeing thread's cache
/// (tcache), which then serves that thread's own allocations from it: each thread's data
/// spreads over the other's arena, and every arena's heap grows toward the high-water mark
/// of the mix while the memory in use stays the same. With one arena there is one heap
/// and one free space. The threads then share its lock, except for what their caches
/// serve. Call it first thing in main(), before a second thread allocates.
inline void use_one_arena() {
    mallopt(M_ARENA_MAX, 1);
}

/// How often a long-running program calls return_free_memory().
inline constexpr std::chrono::seconds kReturnFreeMemoryEvery{60};

/// Hands the pages that lie wholly in free space back to the system, in every arena
/// (malloc_trim(0)). glibc trims only the top of the main heap by itself; a thread's arena
/// whose free space lies between blocks in use keeps it resident, and under hours of
/// changes (clients connecting and leaving, messages of every size) that arena's resident
/// part grows while what is in use in it does not. It took 3-7 ms on a deliberately
/// fragmented test heap of four arenas; linkemd's and the GUI's heaps are a few MiB. It runs
/// on the control thread, never on the data plane's lcores (which do not allocate on the
/// packet path). Returns true when memory was handed back.
inline bool return_free_memory() {
    return malloc_trim(0) != 0;
}

}  // namespace linkem
