// For programs that run for days (linkemd, linkem-gui): glibc's allocator with fixed
// thresholds instead of its dynamic ones.
#pragma once

#include <malloc.h>

namespace linkem {

/// glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB, and
/// the heap's trim threshold to twice that): once a large block (a class's Emulator, a
/// capture's ring, a chart's arrays) was freed, blocks of that size come from the heap and
/// the free space they leave stays resident, so RSS creeps up over hours of changes. Setting
/// the threshold (to glibc's default, 128 KiB) turns that off: larger blocks get mappings of
/// their own, returned when freed, and the heap's top is trimmed beyond 128 KiB
/// (docs/reliability.md, "A run of one hour"). Call it first thing in main().
inline void keep_large_blocks_mapped() {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

}  // namespace linkem
