// Parsing and printing of values with units.
#include <gtest/gtest.h>

#include <string>

#include "linkem/units.hpp"

namespace linkem {
namespace {

TEST(Units, ParseDurationAcceptsTheDocumentedForms) {
    EXPECT_EQ(parse_duration("10ms"), 10 * kNsPerMs);
    EXPECT_EQ(parse_duration("1.5us"), 1500);
    EXPECT_EQ(parse_duration("250ns"), 250);
    EXPECT_EQ(parse_duration("2s"), 2 * kNsPerSec);
    EXPECT_EQ(parse_duration("1min"), 60 * kNsPerSec);
    EXPECT_EQ(parse_duration("0ns"), 0);
    EXPECT_EQ(parse_duration("0s"), 0);
    EXPECT_EQ(parse_duration("1e3us"), kNsPerMs);
    EXPECT_EQ(parse_duration("0.5ms"), 500 * kNsPerUs);
    EXPECT_EQ(parse_duration("+5us"), 5000);
    EXPECT_EQ(parse_duration(" 10ms "), 10 * kNsPerMs);
    EXPECT_EQ(parse_duration("10 ms"), 10 * kNsPerMs);
    EXPECT_EQ(parse_duration("3µs"), 3000);
    EXPECT_EQ(parse_duration("21ms"), 21 * kNsPerMs);
}

TEST(Units, ParseDurationRejectsBareNumbersNegativesAndGarbage) {
    for (const char* s : {"10", "0", "1.5", "-1ms", "-0.1s", "abc", "", " ", "ms", "10 parsecs",
                          "10msx", "10MS", "1h", "nanms", "infs", "1e30s", "10ms5", "--1ms"})
        EXPECT_FALSE(parse_duration(s).has_value()) << '"' << s << '"';
}

TEST(Units, ParseRateAcceptsTheDocumentedForms) {
    EXPECT_DOUBLE_EQ(*parse_rate("10Gbit"), 1e10);
    EXPECT_DOUBLE_EQ(*parse_rate("100Mbit/s"), 1e8);
    EXPECT_DOUBLE_EQ(*parse_rate("2.5G"), 2.5e9);
    EXPECT_DOUBLE_EQ(*parse_rate("64kbit"), 64e3);
    EXPECT_DOUBLE_EQ(*parse_rate("64Kbit"), 64e3);
    EXPECT_DOUBLE_EQ(*parse_rate("1e9bps"), 1e9);
    EXPECT_DOUBLE_EQ(*parse_rate("10Gbps"), 1e10);
    EXPECT_DOUBLE_EQ(*parse_rate("1Tbit/s"), 1e12);
    EXPECT_DOUBLE_EQ(*parse_rate("100bit"), 100);
    EXPECT_DOUBLE_EQ(*parse_rate("100 bit/s"), 100);
    EXPECT_DOUBLE_EQ(*parse_rate("0Gbit"), 0);
}

TEST(Units, ParseRateRejectsBareNumbersNegativesAndGarbage) {
    // "100" alone could be bit/s, Mbit/s or bytes: rejected rather than guessed.
    for (const char* s : {"100", "1e9", "-1Gbit", "-5M", "10Xbit", "Gbit", "", "fast", "10GB",
                          "10 Gbit extra", "nanGbit", "1.5.5G"})
        EXPECT_FALSE(parse_rate(s).has_value()) << '"' << s << '"';
}

TEST(Units, ParseBytesAcceptsTheDocumentedForms) {
    EXPECT_EQ(parse_bytes("1518"), 1518u);
    EXPECT_EQ(parse_bytes("64KiB"), 65536u);
    EXPECT_EQ(parse_bytes("1MB"), 1'000'000u);
    EXPECT_EQ(parse_bytes("1MiB"), 1'048'576u);
    EXPECT_EQ(parse_bytes("2GiB"), 2'147'483'648u);
    EXPECT_EQ(parse_bytes("10kB"), 10'000u);
    EXPECT_EQ(parse_bytes("1GB"), 1'000'000'000u);
    EXPECT_EQ(parse_bytes("100B"), 100u);
    EXPECT_EQ(parse_bytes("1.5KiB"), 1536u);
    EXPECT_EQ(parse_bytes("0"), 0u);
}

TEST(Units, ParseBytesRejectsNegativesFractionsAndGarbage) {
    for (const char* s :
         {"-1", "-1KiB", "1.5", "0.3B", "abc", "", "10XB", "1e30", "1 KiBB", "KiB", "12bytes"})
        EXPECT_FALSE(parse_bytes(s).has_value()) << '"' << s << '"';
}

TEST(Units, FormatDurationAndRate) {
    EXPECT_EQ(format_duration(0), "0ns");
    EXPECT_EQ(format_duration(250), "250ns");
    EXPECT_EQ(format_duration(1500), "1.5us");
    EXPECT_EQ(format_duration(10 * kNsPerMs), "10ms");
    EXPECT_EQ(format_duration(2 * kNsPerSec), "2s");
    EXPECT_EQ(format_rate(1e10), "10Gbit/s");
    EXPECT_EQ(format_rate(1e8), "100Mbit/s");
    EXPECT_EQ(format_rate(1.5e3), "1.5kbit/s");
    EXPECT_EQ(format_rate(1.6e12), "1.6Tbit/s");
    // What is printed parses back to the same value.
    for (DurationNs d : {DurationNs{0}, DurationNs{7}, DurationNs{1500}, 21 * kNsPerMs,
                         3 * kNsPerSec, DurationNs{123'456}})
        EXPECT_EQ(parse_duration(format_duration(d)), d) << format_duration(d);
    for (double r : {1e3, 64e3, 2.5e9, 1e10, 1e11})
        EXPECT_DOUBLE_EQ(*parse_rate(format_rate(r)), r) << format_rate(r);
}

TEST(Units, PlainNumbersAreTheWholeText) {
    EXPECT_EQ(parse_number("0.01"), 0.01);
    EXPECT_EQ(parse_number("1e-3"), 1e-3);
    EXPECT_EQ(parse_number("-2"), -2.0);
    for (const char* bad : {"", "1%", "0.5 ", " 1", "abc", "inf", "nan", "1e999"})
        EXPECT_FALSE(parse_number(bad).has_value()) << bad;
    EXPECT_EQ(parse_whole("100000"), 100000u);
    EXPECT_EQ(parse_whole("18446744073709551615"), UINT64_MAX);
    for (const char* bad : {"", "-1", "1.5", "1e3", "18446744073709551616", "7 "})
        EXPECT_FALSE(parse_whole(bad).has_value()) << bad;
}

TEST(Units, EthernetWireOverheadIsPreambleAndGap) {
    EXPECT_EQ(kEthernetWireOverhead, 20u);
}

}  // namespace
}  // namespace linkem
