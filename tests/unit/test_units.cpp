#include <gtest/gtest.h>

#include "linkem/emulator.hpp"

namespace linkem {
namespace {
struct P { std::uint64_t seq; std::uint32_t length; };
TEST(Smoke, Compiles) {
    Emulator<P> e;
    P p{1, 100};
    EXPECT_EQ(e.ingest(&p, 1, 0), 0u);
    P out;
    EXPECT_EQ(e.drain(0, &out, 1), 1u);
}
}  // namespace
}  // namespace linkem
