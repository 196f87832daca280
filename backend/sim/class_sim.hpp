// linkem-sim --classes: a class file (a link's parameters, its `classes` list and a `flows`
// list, the traffic mix) run on a virtual clock. Each flow's frames are built with its headers
// and classified as the data plane will: parse_packet_key, then Classifier::classify. Per
// class and direction, an `emulate` class has its own Emulator with the class's parameters,
// `pass` delivers at once with zero delay, `drop` counts. Arrivals of all flows are taken in
// time order, and the departures of all classes in time order before each arrival.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flows.hpp"
#include "linkem/classes.hpp"
#include "linkem/counters.hpp"
#include "linkem/link_params.hpp"

namespace linkem::sim {

/// What a class file holds.
struct ClassFile {
    LinkConfig link;  // the `default` class's parameters, both directions
    std::vector<TrafficClass> classes;
    std::vector<Flow> flows;
};

/// The keys a class file may hold besides the link parameters (and a_to_b / b_to_a).
inline constexpr const char* kClassFileKeys = "'classes', 'flows'";

/// Reads a class file's JSON: the link's keys as a linkemd config file has them (top level
/// for both directions, `a_to_b` / `b_to_a` for one, from the defaults with seed
/// `default_seed`), then `link_flags` (the command line's link keys, both directions) on top,
/// a `classes` list (classes_json.hpp) and a `flows` list (flows.hpp; required). A class
/// sharing the link's limiter with the link's `trace` limiter is refused (not in linkem-sim).
/// Throws ParamError naming the key's path ("flows[1].b_addr", "classes[0].match.b_port").
ClassFile class_file_from_json(const nlohmann::json& j,
                               const nlohmann::json& link_flags = nlohmann::json::object(),
                               std::uint64_t default_seed = 1);

class SimCapture;

struct ClassSimConfig {
    ClassFile file;
    DurationNs duration = 60 * kNsPerSec;  // arrivals in [0, duration); then drained
    /// Where every packet's records go (--capture), or none: the flows' frames, each class
    /// by its name.
    SimCapture* capture = nullptr;
};

/// One class in one direction.
struct ClassLaneResult {
    ClassId id = kDefaultClass;
    std::string name;  // "default" for id 0
    ClassAction action = ClassAction::emulate;
    unsigned direction = 0;            // 0: a_to_b, 1: b_to_a
    bool shares_link_limiter = false;  // goes through the shared link limiter
    std::uint64_t seed = 0;            // emulate: the Emulator's seed
    std::uint64_t packets_in = 0, packets_out = 0;
    DropCounts drops;                    // emulate: by cause
    std::uint64_t passed = 0;            // pass: delivered untouched
    std::uint64_t dropped_by_class = 0;  // drop: all its packets
    std::uint64_t delays_clamped = 0;
    std::uint64_t ecn_marked = 0;  // emulate: marked CE by the queue discipline
    double mean_delay_us = 0, jitter_us = 0, min_delay_us = 0, max_delay_us = 0;  // NaN: none
    std::vector<std::string> flows;  // the flows that landed in it
};

/// One flow in one direction.
struct FlowLaneResult {
    std::string flow;
    unsigned direction = 0;
    ClassId id = kDefaultClass;
    std::string class_name;
    std::uint64_t packets_in = 0, packets_out = 0, dropped = 0;
    double mean_delay_us = 0, jitter_us = 0, min_delay_us = 0, max_delay_us = 0;  // NaN: none
};

/// One direction, all classes together, in the order packets leave.
struct DirectionResult {
    std::uint64_t packets_in = 0, packets_out = 0, dropped = 0;
    /// The Kendall tau distance of the departures from the arrival order, over all classes:
    /// packets of different classes pass each other.
    std::uint64_t swaps = 0;
};

struct ClassRunResult {
    double duration_s = 0;
    std::vector<ClassLaneResult>
        classes;                        // the class-directions with packets, by id then direction
    std::vector<FlowLaneResult> flows;  // by flow then direction
    DirectionResult direction[2];
    double wall_s = 0;
};

ClassRunResult run_classes(const ClassSimConfig& cfg);

}  // namespace linkem::sim
