// Per-direction counters. Written only by the lcore/thread that owns the Emulator, read by
// any thread (control server, stats printer) with relaxed atomics: a reader may see a
// snapshot that is a few packets old, never a torn value.
#pragma once

#include <atomic>
#include <cstdint>

namespace linkem {

enum class DropCause : std::uint8_t { loss, policer, spacer, buffer_full };

/// Plain copy of the counters at one instant.
struct CounterSnapshot {
    std::uint64_t packets_in = 0, bytes_in = 0;
    std::uint64_t packets_out = 0, bytes_out = 0;
    std::uint64_t drops_loss = 0, drops_policer = 0, drops_spacer = 0, drops_buffer_full = 0;
    std::uint64_t delays_clamped = 0;
    std::uint64_t in_flight = 0;
    double alpha = 0;     // correlation weight in use
    double rate_pps = 0;  // last rate estimate R
    std::uint64_t rate_intervals = 0;

    std::uint64_t drops() const {
        return drops_loss + drops_policer + drops_spacer + drops_buffer_full;
    }
};

/// in = out + drops + in_flight: what every consistent snapshot of a direction satisfies.
bool balances(const CounterSnapshot& c);

/// The live counters. Single writer: add() is a relaxed load + store, no lock prefix.
struct alignas(64) Counters {
    std::atomic<std::uint64_t> packets_in{0}, bytes_in{0};
    std::atomic<std::uint64_t> packets_out{0}, bytes_out{0};
    std::atomic<std::uint64_t> drops_loss{0}, drops_policer{0}, drops_spacer{0},
        drops_buffer_full{0};
    std::atomic<std::uint64_t> delays_clamped{0};
    std::atomic<std::uint64_t> in_flight{0};
    std::atomic<double> alpha{0}, rate_pps{0};
    std::atomic<std::uint64_t> rate_intervals{0};

    static void add(std::atomic<std::uint64_t>& c, std::uint64_t n) {
        c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    static void set(std::atomic<std::uint64_t>& c, std::uint64_t v) {
        c.store(v, std::memory_order_relaxed);
    }
    std::atomic<std::uint64_t>& drops(DropCause cause) {
        switch (cause) {
            case DropCause::loss:
                return drops_loss;
            case DropCause::policer:
                return drops_policer;
            case DropCause::spacer:
                return drops_spacer;
            case DropCause::buffer_full:
                break;
        }
        return drops_buffer_full;
    }

    CounterSnapshot snapshot() const {
        constexpr auto r = std::memory_order_relaxed;
        CounterSnapshot s;
        s.packets_in = packets_in.load(r);
        s.bytes_in = bytes_in.load(r);
        s.packets_out = packets_out.load(r);
        s.bytes_out = bytes_out.load(r);
        s.drops_loss = drops_loss.load(r);
        s.drops_policer = drops_policer.load(r);
        s.drops_spacer = drops_spacer.load(r);
        s.drops_buffer_full = drops_buffer_full.load(r);
        s.delays_clamped = delays_clamped.load(r);
        s.in_flight = in_flight.load(r);
        s.alpha = alpha.load(r);
        s.rate_pps = rate_pps.load(r);
        s.rate_intervals = rate_intervals.load(r);
        return s;
    }
};

}  // namespace linkem
