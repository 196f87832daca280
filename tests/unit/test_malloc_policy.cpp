// linkem/malloc_policy.hpp: what linkemd and linkem-gui do with glibc's allocator so that
// their resident memory follows what they hold over hours (docs/reliability.md). The kernel's
// count of the process's resident anonymous memory (/proc/self/status, RssAnon) is the
// reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "linkem/malloc_policy.hpp"

namespace linkem {
namespace {

long rss_anon_kib() {
    std::ifstream f("/proc/self/status");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("RssAnon:", 0) == 0) return std::stol(line.substr(8));
    return -1;
}

// A thread's arena whose free space lies between blocks still in use (as a control thread's
// does after clients came and went): glibc keeps those pages resident; return_free_memory()
// hands them back.
TEST(MallocPolicy, ReturnFreeMemoryHandsBackAThreadArenasFreePages) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer's allocator is not glibc's";
#else
    constexpr std::size_t kBlocks = 64 * 1024, kBytes = 200, kKeepEvery = 128;
    std::vector<char*> kept;
    std::thread([&] {
        std::vector<char*> all(kBlocks);
        for (char*& p : all) {
            p = static_cast<char*>(std::malloc(kBytes));
            for (std::size_t i = 0; i < kBytes; i += 64)
                p[i] = 1;  // resident
        }
        for (std::size_t i = 0; i < kBlocks; ++i)
            if (i % kKeepEvery == kKeepEvery - 1)
                kept.push_back(all[i]);
            else
                std::free(all[i]);
    }).join();
    const long freed_kib = static_cast<long>(kBlocks - kBlocks / kKeepEvery) * kBytes / 1024;
    const long before = rss_anon_kib();
    ASSERT_GT(before, 0) << "no RssAnon in /proc/self/status";
    EXPECT_TRUE(return_free_memory());
    const long after = rss_anon_kib();
    for (char* p : kept)
        std::free(p);
    // Pages wholly inside the free gaps (127 blocks, about 26 KB, between two kept ones) go
    // back: at least half of what was freed.
    EXPECT_GE(before - after, freed_kib / 2)
        << "RssAnon " << before << " kB before, " << after << " kB after; " << freed_kib
        << " kB freed in the thread's arena";
#endif
}

// glibc's arenas now: its own report (malloc_info) has one <heap> per arena.
int arenas() {
    char* text = nullptr;
    std::size_t size = 0;
    std::FILE* f = open_memstream(&text, &size);
    if (f == nullptr) return -1;
    malloc_info(0, f);
    std::fclose(f);
    const std::string report(text, size);
    std::free(text);
    int n = 0;
    for (std::size_t at = report.find("<heap nr="); at != std::string::npos;
         at = report.find("<heap nr=", at + 1))
        ++n;
    return n;
}

void allocate_on_a_thread() {
    std::thread([] {
        void* volatile p = std::malloc(64);
        std::free(p);
    }).join();
}

// Each case runs in a fresh process (a death test re-runs this executable), where no second
// thread has allocated yet, as at the start of the GUI's main().
TEST(MallocPolicy, UseOneArenaKeepsASecondThreadInTheMainArena) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer's allocator is not glibc's";
#else
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            allocate_on_a_thread();
            std::exit(arenas());
        },
        testing::ExitedWithCode(2), "")
        << "without use_one_arena() a second thread gets an arena of its own";
    EXPECT_EXIT(
        {
            use_one_arena();
            allocate_on_a_thread();
            std::exit(arenas());
        },
        testing::ExitedWithCode(1), "");
#endif
}

}  // namespace
}  // namespace linkem
