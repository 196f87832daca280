// linkem-sim-bench: simulated packets per second of linkem-sim's run loop on one core.
//
//   linkem-sim-bench [simulated seconds per repetition (default 10)] [repetitions (default 3)]
//
// Scenarios: 1518-byte CBR at 100 Gbit/s (8.2 Mpackets per simulated second), mean delay
// 10 ms, jitter 3 ms, normal distribution; each strategy, plus correlated behind a virtual
// queue at 80 % utilisation. Prints the best and the median repetition, by wall-clock time
// and by the thread's CPU time (the latter is what to quote on a machine shared with other
// jobs: it leaves out the time the thread was not running).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "simulator.hpp"

static double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int main(int argc, char** argv) {
    using namespace linkem;
    const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    if (!(seconds > 0) || reps < 1) {
        std::fprintf(stderr,
                     "usage: linkem-sim-bench [simulated seconds > 0] [repetitions >= 1]\n");
        return 2;
    }
    struct Scenario {
        const char* name;
        Strategy strategy;
        double utilization;
    };
    const Scenario scenarios[] = {{"correlated", Strategy::correlated, 0},
                                  {"uncorrelated", Strategy::uncorrelated, 0},
                                  {"reordered", Strategy::reordered, 0},
                                  {"correlated+queue(u=0.8)", Strategy::correlated, 0.8}};
    std::printf(
        "linkem-sim-bench: 1518 B CBR at 100 Gbit/s, mean 10 ms, jitter 3 ms, normal, "
        "%.3g s simulated x %d\n",
        seconds, reps);
    std::printf("%-26s %10s %10s %10s %10s %13s\n", "scenario", "wall best", "median", "cpu best",
                "median", "packets/run");
    for (const Scenario& s : scenarios) {
        sim::SimConfig c;
        c.link.strategy = s.strategy;
        c.link.mean_delay = 10 * kNsPerMs;
        c.link.jitter = 3 * kNsPerMs;
        c.link.seed = 1;
        c.traffic.rate_bps = 100e9;
        c.utilization = s.utilization;
        c.duration = static_cast<DurationNs>(seconds * 1e9);
        std::vector<double> wall, cpu;
        std::uint64_t packets = 0;
        for (int r = 0; r < reps; ++r) {
            const double c0 = thread_cpu_s();
            const sim::RunResult res = sim::run_once(c);
            const double c1 = thread_cpu_s();
            wall.push_back(res.packets_per_s() * 1e-6);
            cpu.push_back(static_cast<double>(res.packets_in) / (c1 - c0) * 1e-6);
            packets = res.packets_in;
        }
        std::sort(wall.begin(), wall.end());
        std::sort(cpu.begin(), cpu.end());
        std::printf("%-26s %10.1f %10.1f %10.1f %10.1f %13llu\n", s.name, wall.back(),
                    wall[wall.size() / 2], cpu.back(), cpu[cpu.size() / 2],
                    static_cast<unsigned long long>(packets));
        std::fflush(stdout);
    }
    return 0;
}
