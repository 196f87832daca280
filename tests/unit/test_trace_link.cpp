// The trace limiter: mahimahi link traces read as mm-link reads them (and refused where it
// refuses them, with the file and line), and packets released exactly at the trace's
// delivery opportunities with mm-link's byte accounting, checked packet by packet against
// a model of mm-link's LinkQueue::rationalize written here from its description, for random
// traces and traffic (sizes that share an opportunity or span several, idle gaps longer than
// the trace).
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "linkem/emulator.hpp"
#include "linkem/limiter.hpp"
#include "linkem/link_flags.hpp"
#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/trace_file.hpp"
#include "mm_link_model.hpp"
#include "test_support.hpp"

namespace linkem {
namespace {

using test::MmLinkModel;
using test::Packet;

DeliveryTrace random_trace(std::mt19937_64& rng, std::size_t n) {
    DeliveryTrace t;
    std::uint32_t ms = std::uniform_int_distribution<std::uint32_t>(0, 3)(rng);
    for (std::size_t i = 0; i < n; ++i) {
        // Often several opportunities in one millisecond, sometimes gaps (a cellular trace).
        const int r = std::uniform_int_distribution<int>(0, 9)(rng);
        ms += r < 4 ? 0 : r < 8 ? 1 : static_cast<std::uint32_t>(r * 3);
        t.ms.push_back(ms);
    }
    if (t.ms.back() == 0) t.ms.back() = 1;
    return t;
}

TEST(TraceLink, MatchesMmLinksAccountingPacketByPacket) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937_64 rng(seed);
        const DeliveryTrace trace = random_trace(rng, 50 + seed * 37);
        TraceLink link;
        link.configure(&trace);
        MmLinkModel model(trace.ms);
        std::vector<TimeNs> got;
        TimeNs t = 1'000'000'007 * static_cast<TimeNs>(seed);
        const TimeNs period = trace.period();
        for (int i = 0; i < 20000; ++i) {
            // Mostly back to back (a backlog), sometimes idle for up to three repeats.
            const int r = std::uniform_int_distribution<int>(0, 999)(rng);
            if (r < 990)
                t += std::uniform_int_distribution<TimeNs>(0, 300'000)(rng);
            else
                t += std::uniform_int_distribution<TimeNs>(0, 3 * period)(rng);
            const int s = std::uniform_int_distribution<int>(0, 9)(rng);
            const std::uint32_t bytes =
                s < 6 ? 1504
                      : static_cast<std::uint32_t>(std::uniform_int_distribution<int>(
                            s < 9 ? 46 : 1505, s < 9 ? 1504 : 4600)(rng));
            got.push_back(link.schedule(t, bytes));
            model.arrive(t, bytes);
        }
        const std::vector<TimeNs> want = model.finish();
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << "packet " << i;
    }
}

TEST(TraceLink, ChargesAFullSizeFrameOneOpportunity) {
    // A 1518-byte frame (with FCS) holds a 1500-byte IP packet: mm-link's TUN device hands it
    // over with a 4-byte header, 1504 bytes, one opportunity.
    EXPECT_EQ(DeliveryTrace::charge(1518), 1504u);
    EXPECT_EQ(DeliveryTrace::charge(64), 50u);
    DeliveryTrace trace;
    trace.ms = {0, 1, 1, 5};
    TraceLink link;
    link.configure(&trace);
    const TimeNs t0 = 1000;
    // A backlog of full-size frames: one per opportunity, repeating after 5 ms.
    const TimeNs want[] = {0, 1, 1, 5, 5, 6, 6, 10, 10, 11};
    for (TimeNs w : want)
        EXPECT_EQ(link.schedule(t0, DeliveryTrace::charge(1518)), t0 + w * kNsPerMs);
    // The same trace again keeps the position; another starts afresh at the next packet.
    link.configure(&trace);
    EXPECT_EQ(link.schedule(t0, 1504), t0 + 11 * kNsPerMs);
    DeliveryTrace other = trace;
    link.configure(&other);
    EXPECT_EQ(link.schedule(t0 + 3 * kNsPerMs, 1504), t0 + 3 * kNsPerMs);
}

// --------------------------------------------------------------------- reading traces
DeliveryTrace parse(const std::string& text) {
    std::istringstream in(text);
    return parse_delivery_trace(in, "up.trace");
}

void expect_refused(const std::string& text, const std::string& where, const std::string& what) {
    try {
        (void)parse(text);
        FAIL() << "accepted: " << text;
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "trace_file");
        EXPECT_NE(e.message().find(where), std::string::npos) << e.message();
        EXPECT_NE(e.message().find(what), std::string::npos) << e.message();
    }
}

TEST(TraceFile, ReadsMahimahiTraces) {
    const DeliveryTrace t = parse("0\n0\n3\r\n 7 \n7\n12\n");
    EXPECT_EQ(t.ms, (std::vector<std::uint32_t>{0, 0, 3, 7, 7, 12}));
    EXPECT_EQ(t.period(), 12 * kNsPerMs);
    EXPECT_EQ(t.path, "up.trace");
}

TEST(TraceFile, RefusesWhatMmLinkRefusesNamingTheLine) {
    expect_refused("", "up.trace", "empty: no timestamps");
    expect_refused("0\n0\n0\n", "up.trace:3", "lasts 0 ms");
    expect_refused("1\n5\n4\n9\n", "up.trace:3", "4 goes back (line 2 says 5)");
    expect_refused("1\n\n2\n", "up.trace:2", "empty line");
    expect_refused("1\n2\n-3\n", "up.trace:3", "not a whole number of milliseconds");
    expect_refused("1\n2.5\n", "up.trace:2", "not a whole number of milliseconds");
    expect_refused("1\n99999999999\n", "up.trace:2", "too large");
}

TEST(TraceFile, NeverShowsWhatALineHolds) {
    // linkemd reads files its clients name: a file that is no trace must not leak.
    try {
        (void)parse("root:x:0:0:root:/root:/bin/bash\n");
        FAIL();
    } catch (const ParamError& e) {
        EXPECT_EQ(std::string(e.what()).find("root"), std::string::npos) << e.what();
    }
}

TEST(TraceFile, IsTheLimitersKeyInTheFieldTable) {
    const std::string path = testing::TempDir() + "/linkem_up.trace";
    {
        std::ofstream f(path);
        f << "1\n1\n2\n4\n";
    }
    const LinkParams p =
        link_params_from_json({{"limiter", "trace"}, {"trace_file", path}, {"mean_delay_us", 0}});
    EXPECT_EQ(p.limiter, Limiter::trace);
    ASSERT_TRUE(p.trace);
    EXPECT_EQ(p.trace.get()->ms, (std::vector<std::uint32_t>{1, 1, 2, 4}));
    // Written back as the file's name, and read again to the same parameters.
    EXPECT_EQ(to_json(p)["trace_file"], path);
    EXPECT_EQ(link_params_from_json(to_json(p)), p);
    // The limiter needs the trace; the trace alone is no limiter.
    try {
        (void)link_params_from_json({{"limiter", "trace"}});
        FAIL();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "trace_file");
    }
    try {
        (void)link_params_from_json({{"trace_file", path + ".missing"}});
        FAIL();
    } catch (const ParamError& e) {
        EXPECT_EQ(e.field(), "trace_file");
        EXPECT_NE(e.message().find("cannot open"), std::string::npos);
    }
    // The flags: --trace-file FILE.
    EXPECT_EQ(link_param_flag("trace_file")->flag, "trace-file");
    EXPECT_EQ(link_param_from_text("trace_file", path, "--a-to-b-trace-file"), path);
    std::filesystem::remove(path);
}

struct Frame {
    std::uint64_t seq;
    std::uint32_t length;
};

TEST(TraceLimiter, EmulatorReleasesFramesAtTheOpportunities) {
    // Frames of 1000 bytes (986 charged): opportunities carry one or two, and a frame's last
    // byte may go with the next one. The Emulator with the trace limiter and no delay gives
    // exactly the model's departures; packets are never dropped or reordered.
    std::mt19937_64 rng(7);
    auto trace = std::make_shared<DeliveryTrace>(random_trace(rng, 300));
    LinkParams p;
    p.limiter = Limiter::trace;
    p.trace.trace = trace;
    p.buffer_limit_packets = 1 << 20;
    for (Strategy s : {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered}) {
        SCOPED_TRACE(std::string(to_string(s)));
        p.strategy = s;
        Emulator<Frame> emu(p);
        MmLinkModel model(trace->ms);
        TimeNs t = 5'000'000;
        for (std::uint64_t i = 0; i < 30000; ++i) {
            t += i % 1000 < 900 ? 200'000 : 3'000'000;  // a backlog, then idle now and then
            const Frame f{i, 1000};
            ASSERT_EQ(emu.ingest(&f, 1, t), 0u);
            model.arrive(t, DeliveryTrace::charge(1000));
        }
        const std::vector<TimeNs> want = model.finish();
        Frame out[64];
        TimeNs tx[64];
        std::vector<TimeNs> got(want.size(), -1);
        std::uint64_t n_out = 0;
        while (n_out < want.size()) {
            const std::size_t n = emu.drain(std::numeric_limits<TimeNs>::max(), out, 64, tx);
            ASSERT_GT(n, 0u);
            for (std::size_t i = 0; i < n; ++i, ++n_out) {
                // Order is kept (reordered: frames with one departure time may swap).
                if (s != Strategy::reordered) {
                    ASSERT_EQ(out[i].seq, n_out);
                }
                ASSERT_EQ(got[out[i].seq], -1) << "frame " << out[i].seq << " twice";
                got[out[i].seq] = tx[i];
            }
        }
        EXPECT_EQ(got, want);
        EXPECT_EQ(emu.snapshot().packets_out, want.size());
    }
}

}  // namespace
}  // namespace linkem
