// Per-direction counters. Written only by the lcore/thread that owns the Emulator, read by
// any thread (control server, stats printer) with relaxed atomics: a reader may see a
// snapshot that is a few packets old, never a torn value.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace linkem {

/// Why the emulator dropped a packet; kDropCauses below describes each.
enum class DropCause : std::uint8_t { loss, policer, spacer, buffer_full, class_action, aqm };

/// One drop cause as every surface shows it.
struct DropCauseInfo {
    DropCause cause;
    const char* name;     // the cause: `loss`; linkemd's counter table's column
    const char* key;      // the counter's JSON key: "drops_" + name
    const char* label;    // the GUI's label, in words: "loss model"
    const char* meaning;  // one line, for help texts and tooltips
};

/// The drop causes, in DropCause order. Everything that shows a cause loops over this
/// table: the counters (an array indexed by cause), the JSON codec (stats topic,
/// get_stats, --stats-json), linkemd's counter table and `linkemctl watch`, linkem-sim's
/// report, the GUI's drops chart, readouts and CSV export, and the glossary test.
///
/// Adding a cause: add its enumerator to DropCause and its row here (same order), and its
/// row to the "Drop causes" table of docs/glossary.md (Glossary.NamesEveryDropCause checks
/// that the two tables agree). Nothing else names a cause's counter; the packet path counts
/// a drop with Counters::add(counters.drops(DropCause::x), n).
inline constexpr DropCauseInfo kDropCauses[] = {
    {DropCause::loss, "loss", "drops_loss", "loss model", "the loss model dropped it"},
    {DropCause::policer, "policer", "drops_policer", "policer", "above the policer's rate"},
    {DropCause::spacer, "spacer", "drops_spacer", "queue limit",
     "the limiter's queue was full: its backlog passed the queue limit"},
    {DropCause::buffer_full, "buffer_full", "drops_buffer_full", "buffer full",
     "no room: the buffer limit or the mbuf pool"},
    {DropCause::class_action, "class", "drops_class", "class drop",
     "its traffic class's action is drop"},
    {DropCause::aqm, "aqm", "drops_aqm", "queue discipline",
     "the queue discipline (codel, fq_codel, pie) dropped it to keep the queue short"},
};
inline constexpr std::size_t kDropCauseCount = std::size(kDropCauses);

constexpr std::size_t cause_index(DropCause c) {
    return static_cast<std::size_t>(c);
}
constexpr const DropCauseInfo& drop_cause(DropCause c) {
    return kDropCauses[cause_index(c)];
}

namespace detail {
consteval bool drop_causes_in_order() {
    for (std::size_t i = 0; i < kDropCauseCount; ++i) {
        const DropCauseInfo& c = kDropCauses[i];
        const std::string_view key = c.key;
        if (cause_index(c.cause) != i || key.substr(0, 6) != "drops_" || key.substr(6) != c.name)
            return false;
    }
    return true;
}
}  // namespace detail
static_assert(detail::drop_causes_in_order(),
              "kDropCauses: rows in DropCause order, each key \"drops_\" + its name");

/// One count per drop cause, indexed by DropCause.
struct DropCounts {
    std::array<std::uint64_t, kDropCauseCount> n{};

    std::uint64_t& operator[](DropCause c) { return n[cause_index(c)]; }
    std::uint64_t operator[](DropCause c) const { return n[cause_index(c)]; }
    /// Drops of every cause.
    std::uint64_t total() const {
        std::uint64_t t = 0;
        for (std::uint64_t v : n)
            t += v;
        return t;
    }
    DropCounts& operator+=(const DropCounts& o) {
        for (std::size_t i = 0; i < kDropCauseCount; ++i)
            n[i] += o.n[i];
        return *this;
    }
    bool operator==(const DropCounts&) const = default;
};

/// Plain copy of the counters at one instant.
struct CounterSnapshot {
    std::uint64_t packets_in = 0, bytes_in = 0;
    std::uint64_t packets_out = 0, bytes_out = 0;
    DropCounts drops;  // drops[DropCause::loss] ..., drops.total()
    std::uint64_t delays_clamped = 0;
    std::uint64_t waited = 0;      // order-keeping strategies: left at the predecessor's time
    std::uint64_t ecn_marked = 0;  // packets the queue discipline marked CE instead of dropping
    std::uint64_t in_flight = 0;
    double alpha = 0;     // correlation weight in use
    double rate_pps = 0;  // last rate estimate R
    std::uint64_t rate_intervals = 0;
};

/// in = out + drops + in_flight: what every consistent snapshot of a direction satisfies.
bool balances(const CounterSnapshot& c);

/// The live counters. Single writer: add() is a relaxed load + store, no lock prefix.
struct alignas(64) Counters {
    std::atomic<std::uint64_t> packets_in{0}, bytes_in{0};
    std::atomic<std::uint64_t> packets_out{0}, bytes_out{0};
    std::array<std::atomic<std::uint64_t>, kDropCauseCount> drop_counts{};  // by DropCause
    std::atomic<std::uint64_t> delays_clamped{0};
    std::atomic<std::uint64_t> waited{0};
    std::atomic<std::uint64_t> ecn_marked{0};
    std::atomic<std::uint64_t> in_flight{0};
    std::atomic<double> alpha{0}, rate_pps{0};
    std::atomic<std::uint64_t> rate_intervals{0};

    static void add(std::atomic<std::uint64_t>& c, std::uint64_t n) {
        c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    static void set(std::atomic<std::uint64_t>& c, std::uint64_t v) {
        c.store(v, std::memory_order_relaxed);
    }
    /// The counter of one cause: with a constant cause, the same fixed-offset field a
    /// named member would be.
    std::atomic<std::uint64_t>& drops(DropCause cause) { return drop_counts[cause_index(cause)]; }
    const std::atomic<std::uint64_t>& drops(DropCause cause) const {
        return drop_counts[cause_index(cause)];
    }

    CounterSnapshot snapshot() const {
        constexpr auto r = std::memory_order_relaxed;
        CounterSnapshot s;
        s.packets_in = packets_in.load(r);
        s.bytes_in = bytes_in.load(r);
        s.packets_out = packets_out.load(r);
        s.bytes_out = bytes_out.load(r);
        for (std::size_t i = 0; i < kDropCauseCount; ++i)
            s.drops.n[i] = drop_counts[i].load(r);
        s.delays_clamped = delays_clamped.load(r);
        s.waited = waited.load(r);
        s.ecn_marked = ecn_marked.load(r);
        s.in_flight = in_flight.load(r);
        s.alpha = alpha.load(r);
        s.rate_pps = rate_pps.load(r);
        s.rate_intervals = rate_intervals.load(r);
        return s;
    }
};

}  // namespace linkem
