// Capture's writer (docs/capture.md, docs/performance.md): how many records a second one CPU
// writes into pcapng, and from which offered rate records start to be missed.
//
//   bench_capture [--dir /tmp] [--seconds 3] [--snaplen 128]
//
// 1. writer: CaptureWriter alone, records of 1500-byte frames cut to the snaplen, into a file
//    in --dir: records/s and MB/s.
// 2. recorder: a producer thread (as a data-plane lane) offers records at a paced rate into a
//    Recorder's ring (8 MiB, as linkemd's), the writer thread merges and writes them;
//    for each offered rate: records written/s and the share missed (capture_missed).
// Prints figures, asserts nothing.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "linkem/capture.hpp"

using namespace linkem;
using namespace linkem::capture;

namespace {

TimeNs now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void fill(RecordHeader& h, TimeNs t, std::uint64_t seq, std::uint32_t cap) {
    const std::uint32_t size = h.size, cap_len = h.cap_len;
    h = RecordHeader{};
    h.size = size;
    h.cap_len = cap_len;
    h.point = seq % 50 == 49 ? Point::drop : Point::out;
    h.cause = static_cast<std::uint8_t>(DropCause::loss);
    h.flags = RecordHeader::kHasFate | RecordHeader::kHasSeq;
    h.frame_len = 1500;
    h.time_ns = t;
    h.arrived_ns = t - 20'000'000;
    h.tx_ns = t - 1200;
    h.delay_ns = 19'734'123;
    h.limiter_wait_ns = 1234;
    h.seq = seq;
    (void)cap;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir = "/tmp";
    double seconds = 3;
    std::uint32_t snaplen = 128;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--dir")
            dir = argv[i + 1];
        else if (a == "--seconds")
            seconds = std::stod(argv[i + 1]);
        else if (a == "--snaplen")
            snaplen = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
        else {
            std::fprintf(stderr,
                         "bench_capture: unknown argument '%s'; allowed: --dir, --seconds, "
                         "--snaplen\n",
                         a.c_str());
            return 2;
        }
    }
    const std::string file = dir + "/linkem-bench-capture.pcapng";
    std::vector<std::uint8_t> frame(1500, 0x5a);

    // 1. The writer alone.
    {
        Settings s;
        s.file = file;
        s.snaplen = snaplen;
        CaptureWriter w(
            s, 2, [](unsigned, unsigned) { return std::string("default"); },
            1'796'000'000'000'000'000);
        RecordHeader h;
        h.cap_len = std::min<std::uint32_t>(1500, snaplen);
        const TimeNs start = now_ns();
        std::uint64_t n = 0;
        while (now_ns() - start < static_cast<TimeNs>(seconds * 1e9)) {
            for (int i = 0; i < 1000; ++i, ++n) {
                fill(h, start + static_cast<TimeNs>(n) * 100, n, h.cap_len);
                w.write(h, frame.data());
            }
        }
        w.close(0);
        const double t = static_cast<double>(now_ns() - start) / 1e9;
        std::printf("writer: %.2f M records/s, %.0f MB/s (snaplen %u, comment ~%zu bytes), %s\n",
                    static_cast<double>(n) / t / 1e6, static_cast<double>(w.bytes()) / t / 1e6,
                    snaplen, std::size_t{190}, file.c_str());
        std::filesystem::remove(file);
    }

    // 2. The recorder at paced rates.
    std::printf("\noffered (M rec/s)   written (M rec/s)   missed\n");
    for (const double mrate : {0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0}) {
        Settings s;
        s.file = file;
        s.snaplen = snaplen;
        Recorder cs(s, 1, {{0, 0}}, std::size_t{8} << 20, nullptr, now_ns, 0);
        CaptureRing& r = cs.ring(0);
        const TimeNs start = now_ns();
        const TimeNs end = start + static_cast<TimeNs>(seconds * 1e9);
        std::uint64_t offered = 0;
        for (TimeNs t = start; t < end; t = now_ns()) {
            r.set_watermark(t);
            // Records due by now at the offered rate, in bursts of up to 32 (a lane's burst).
            const auto due =
                static_cast<std::uint64_t>(static_cast<double>(t - start) * mrate / 1e3);
            for (int b = 0; b < 32 && offered < due; ++b, ++offered)
                if (RecordHeader* h = r.reserve(std::min<std::uint32_t>(1500, snaplen))) {
                    fill(*h, t, offered, h->cap_len);
                    std::memcpy(h + 1, frame.data(), h->cap_len);
                    r.commit();
                }
        }
        r.set_watermark(end);
        const Status st = cs.finish(StopReason::stopped);
        const double t = static_cast<double>(now_ns() - start) / 1e9;
        std::printf(
            "%8.2f            %8.2f            %5.1f %%\n",
            static_cast<double>(offered) / (seconds * 1e6),
            static_cast<double>(st.records) / t / 1e6,
            100.0 * static_cast<double>(st.missed) / static_cast<double>(offered ? offered : 1));
        std::filesystem::remove(file);
    }
    return 0;
}
