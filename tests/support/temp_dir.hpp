// A directory of its own for a test's files, removed with everything in it at the end.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace linkem::test {

struct TempDir {
    std::filesystem::path path;
    /// /tmp/<prefix>-XXXXXX
    explicit TempDir(const std::string& prefix = "linkem-test") {
        std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace linkem::test
