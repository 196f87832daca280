// linkem-gui-fake-demo: the GUI tests' fake linkemd (fake_linkemd.hpp) on endpoints of one's
// choice, for looking at linkem-gui without DPDK (screenshots, a quick try):
//   linkem-gui-fake-demo --control tcp://127.0.0.1:47730 --telemetry tcp://127.0.0.1:47731
//                        [--config FILE]
// FILE: a link as linkemd's --config reads it (e.g. with a `classes` list). Runs until
// SIGINT or SIGTERM.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "fake_linkemd.hpp"
#include "linkem/messages.hpp"
#include "linkem/protocol.hpp"

namespace {
std::atomic<bool> g_stop{false};
void onSignal(int) {
    g_stop = true;
}
}  // namespace

int main(int argc, char** argv) {
    std::string control = "tcp://127.0.0.1:47730", telemetry = "tcp://127.0.0.1:47731", config;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--control")
            control = argv[i + 1];
        else if (a == "--telemetry")
            telemetry = argv[i + 1];
        else if (a == "--config")
            config = argv[i + 1];
        else {
            std::fprintf(stderr,
                         "linkem-gui-fake-demo: unknown argument '%s'; allowed --control, "
                         "--telemetry, --config FILE\n",
                         a.c_str());
            return 2;
        }
    }
    linkem::LinkConfig link;
    if (!config.empty()) {
        try {
            std::ifstream in(config);
            // a set_link body on the defaults: the same keys as a config file's link
            link = linkem::proto::apply_link_update(nlohmann::json::parse(in), {}, 2);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "linkem-gui-fake-demo: %s: %s\n", config.c_str(), e.what());
            return 1;
        }
    }
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    linkem::gui::test::FakeLinkemd fake(control, telemetry);
    fake.start(link);
    while (!g_stop)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fake.stop();
    return 0;
}
