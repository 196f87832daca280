// linkem-sim's command line run in-process for the sim tests: its exit code and what it
// printed, and a file's bytes.
#pragma once

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace linkem::sim::test_run {

struct SimRun {
    int rc = 0;
    std::string out, err;
};

/// run_cli with "linkem-sim" and args.
inline SimRun sim(std::vector<std::string> args) {
    args.insert(args.begin(), "linkem-sim");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    std::ostringstream out, err;
    SimRun r;
    r.rc = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace linkem::sim::test_run
