#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "report.hpp"
#include "simulator.hpp"
#include "sweep.hpp"

namespace linkem::sim {
namespace {

SimConfig base(Strategy s, double rate_bps, DurationNs duration) {
    SimConfig c;
    c.link.strategy = s;
    c.link.mean_delay = 10 * kNsPerMs;
    c.link.jitter = 3 * kNsPerMs;
    c.link.seed = 1;
    c.traffic.rate_bps = rate_bps;
    c.duration = duration;
    return c;
}

TEST(Simulator, SeededRunsReproduceExactly) {
    for (Strategy s : {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered}) {
        SimConfig c = base(s, 10e9, 300 * kNsPerMs);
        c.traffic.pattern = TrafficPattern::poisson;
        c.link.loss_model = LossModel::bernoulli;
        c.link.loss_probability = 0.01;
        c.utilization = 0.8;
        RunResult a = run_once(c), b = run_once(c);
        a.wall_s = b.wall_s = 0;
        EXPECT_EQ(to_json(a).dump(), to_json(b).dump()) << to_string(s);
        c.link.seed = 2;
        RunResult d = run_once(c);
        EXPECT_NE(a.mean_delay_us, d.mean_delay_us) << "another seed, another run";
    }
}

TEST(Simulator, EveryPacketIsDeliveredOrCountedAsDropped) {
    SimConfig c = base(Strategy::reordered, 1e9, 500 * kNsPerMs);
    c.link.loss_model = LossModel::gilbert_elliott;
    c.link.ge_p = 0.01;
    c.link.ge_r = 0.3;
    c.link.buffer_limit_packets = 700;  // about 8.5 ms of 1 Gbit/s: some buffer_full drops
    const RunResult r = run_once(c);
    // 1518 B at 1 Gbit/s for 0.5 s: ceil(0.5 / 12.144 us) packets.
    EXPECT_EQ(r.packets_in, 41173u);
    EXPECT_GT(r.drops[DropCause::loss], 0u);
    EXPECT_GT(r.drops[DropCause::buffer_full], 0u);
    EXPECT_EQ(r.packets_in, r.packets_out + r.drops.total());
}

TEST(Simulator, ReorderingSwapsAndCorrelationKeepsOrder) {
    const RunResult reo = run_once(base(Strategy::reordered, 10e9, 200 * kNsPerMs));
    const RunResult cor = run_once(base(Strategy::correlated, 10e9, 200 * kNsPerMs));
    // I.i.d. normal delays, sd sigma, spacing T: E[swaps per packet] = sigma / (sqrt(pi) T)
    // = 3 ms / (1.7725 * 1.2144 us) = 1394. 10 % tolerance: 1.6e6 packets, but strongly
    // dependent counts.
    EXPECT_NEAR(reo.swaps_per_packet, 1394, 140);
    EXPECT_EQ(cor.swaps, 0u);
    // Reordering meets the desired delay (paper IV-D); the order-keeping naive method not.
    EXPECT_NEAR(reo.mean_delay_dev_pct, 0, 1);
    const RunResult unc = run_once(base(Strategy::uncorrelated, 10e9, 200 * kNsPerMs));
    EXPECT_GT(unc.mean_delay_dev_pct, 50);
    EXPECT_LT(unc.jitter_dev_pct, -40);
}

TEST(Simulator, VirtualQueueAddsAtLeastTheTransmissionTime) {
    SimConfig c = base(Strategy::correlated, 0.1e9, 2 * kNsPerSec);
    c.link.jitter = 0;
    const RunResult no_queue = run_once(c);
    c.utilization = 0.5;
    const RunResult queue = run_once(c);
    // Constant delay, CBR: no queueing, only the service time u * 121.44 us = 60.72 us.
    EXPECT_NEAR(no_queue.mean_delay_us, 10000, 0.001);
    EXPECT_NEAR(queue.mean_delay_us, 10060.72, 0.001);
    EXPECT_NEAR(queue.jitter_us, 0, 0.001);
}

TEST(Simulator, TrafficPatternsCarryTheirRate) {
    SimConfig c = base(Strategy::correlated, 10e9, 2 * kNsPerSec);
    c.link.jitter = 0;
    c.traffic.pattern = TrafficPattern::poisson;
    const double expected = 2 * 10e9 / (1518 * 8);  // 1.647e6 packets
    const RunResult p = run_once(c);
    EXPECT_NEAR(static_cast<double>(p.packets_in), expected, 5 * std::sqrt(expected));
    // Sine over whole periods: mean rate = peak / 2.
    c.traffic.pattern = TrafficPattern::sine;
    c.traffic.period = 500 * kNsPerMs;
    const RunResult s = run_once(c);
    EXPECT_NEAR(static_cast<double>(s.packets_in), expected / 2, 2);
    EXPECT_GT(s.rate_pps_max, 0.9 * 10e9 / (1518 * 8));
    EXPECT_LT(s.rate_pps_min, 0.1 * 10e9 / (1518 * 8));
}

TEST(Simulator, CorrelatedStartsStationaryAndTracksRate) {
    // Start-up (delayer.hpp): D_0 is drawn from the stationary law and held until the first
    // rate interval closes (T_min = 10 ms), then alpha = 0.5^(1/(t_h R)).
    SimConfig c = base(Strategy::correlated, 1e9, 1 * kNsPerSec);
    std::ostringstream series;
    c.series = &series;
    c.series_interval = kNsPerMs;
    const RunResult r = run_once(c);
    const double pps = 1e9 / (1518 * 8);
    EXPECT_NEAR(r.rate_pps_mean, pps, 1e-6 * pps);
    EXPECT_NEAR(r.alpha_mean, std::pow(0.5, 1 / (0.021 * pps)), 1e-9);
    EXPECT_EQ(r.swaps, 0u);
    // The series has a sample per millisecond of departure time from the first departure
    // (at about 10 ms) on.
    std::string line;
    int lines = 0;
    std::istringstream in(series.str());
    while (std::getline(in, line))
        ++lines;
    EXPECT_NEAR(lines, 1000, 30);
}

TEST(Sweep, ShortSweepWritesOneRowPerPoint) {
    SimConfig b;
    b.link.mean_delay = 10 * kNsPerMs;
    SweepSettings s;
    s.rates_bps = {0.1e9, 1e9};
    s.duration = 300 * kNsPerMs;
    s.runs = 2;
    s.quiet = true;
    s.jobs = 2;
    std::ostringstream csv, err;
    ASSERT_EQ(run_sweep("fig6", b, s, csv, err), 0);
    std::istringstream in(csv.str());
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line.rfind("figure,strategy,distribution,rate_gbps", 0), 0u);
    int rows = 0, reordered_swapping = 0, correlated_zero = 0;
    while (std::getline(in, line)) {
        ++rows;
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string x; std::getline(ls, x, ',');)
            f.push_back(x);
        ASSERT_GE(f.size(), 24u);
        const double swaps = std::stod(f[22]);  // swaps_per_packet
        if (f[1] == "reordered" && swaps > 0) ++reordered_swapping;
        if (f[1] == "correlated" && swaps == 0) ++correlated_zero;
    }
    EXPECT_EQ(rows, 16);  // 2 strategies x 4 jitters x 2 rates
    EXPECT_EQ(reordered_swapping, 8);
    EXPECT_EQ(correlated_zero, 8);
    // The plot script refers to the CSV and the PNG.
    std::ostringstream gp;
    write_plot_script("fig6", "x.csv", "x.png", gp);
    EXPECT_NE(gp.str().find("'x.csv'"), std::string::npos);
    EXPECT_NE(gp.str().find("set output 'x.png'"), std::string::npos);
}

TEST(Sweep, DefaultDurationsCoverSixtyPassageTimes) {
    SimConfig c;
    c.link.strategy = Strategy::correlated;
    c.link.half_life = 21 * kNsPerMs;
    EXPECT_EQ(default_duration(c), static_cast<DurationNs>(60 * 4.7 * 21 * kNsPerMs));
    c.link.strategy = Strategy::reordered;
    EXPECT_EQ(default_duration(c), 2 * kNsPerSec);
}

}  // namespace
}  // namespace linkem::sim
