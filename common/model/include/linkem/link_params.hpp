// LinkParams: everything that describes one direction of an emulated link.
//
// One vocabulary on every surface. JSON keys (config files, protocol) carry their unit in
// the name: durations in microseconds (`_us`, fractions allowed), rates in bit/s (`_bps`),
// sizes in bytes (`_bytes`) or packets (`_packets`), probabilities as fractions 0..1.
// Command-line flags use the same names with dashes and without the unit suffix, and take
// a value with a unit: --mean-delay 10ms  <->  "mean_delay_us": 10000.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "linkem/bottleneck.hpp"
#include "linkem/delayer.hpp"
#include "linkem/distributions.hpp"
#include "linkem/loss.hpp"
#include "linkem/time.hpp"

namespace linkem {

/// The keys of the two directions (A->B, B->A) in link, stats and delay bodies, config and
/// scenario files and tables: the one constant that names them (docs/glossary.md). The
/// ports' keys.
inline constexpr const char* kDirectionKeys[2] = {"a_to_b", "b_to_a"};
inline constexpr const char* kPortNames[2] = {"a", "b"};

/// The direction a key names (0: a_to_b, 1: b_to_a), or -1 when it names none.
constexpr int direction_of_key(std::string_view key) {
    for (int d = 0; d < 2; ++d)
        if (key == kDirectionKeys[d]) return d;
    return -1;
}

enum class Limiter : std::uint8_t { none, spacer, policer, trace };
enum class ByteAccounting : std::uint8_t { frame, wire };
enum class Ecn : std::uint8_t { off, on };

std::string_view to_string(Strategy s);
std::string_view to_string(Limiter l);
std::string_view to_string(LossModel m);
std::string_view to_string(ByteAccounting b);
std::string_view to_string(QueueKind q);
std::string_view to_string(Ecn e);

struct DeliveryTrace;  // linkem/limiter.hpp

/// The trace limiter's trace (key trace_file): shared, never changed once loaded; equal when
/// the traces are (path and opportunities), so that a parameter set read back from its JSON
/// compares equal to the one written. Read from its file by the protocol's JSON codec
/// (linkem/link_params_json.hpp, linkem/trace_file.hpp): the model reads no files.
struct TraceRef {
    std::shared_ptr<const DeliveryTrace> trace;
    /// A trace known by its file name only, not read (no opportunities): a client's copy of
    /// the link of a linkemd that read it. Never given to an Emulator.
    static TraceRef named(std::string path);
    const DeliveryTrace* get() const { return trace.get(); }
    explicit operator bool() const { return trace != nullptr; }
    bool operator==(const TraceRef& o) const;
};

struct LinkParams {
    Strategy strategy = Strategy::correlated;
    Distribution distribution = Distribution::normal;
    DurationNs mean_delay = 0;
    DurationNs jitter = 0;
    DurationNs half_life = 21 * kNsPerMs;
    DurationNs rate_window = 10 * kNsPerMs;  // T_min of the rate estimator

    Limiter limiter = Limiter::none;
    double rate_bps = 0;
    std::uint64_t policer_burst_bytes = 65'536;
    TraceRef trace;  // limiter `trace`: the mahimahi trace read from trace_file
    ByteAccounting byte_accounting = ByteAccounting::frame;

    // The queue of a limiter that queues (spacer, trace): its discipline and limit
    // (linkem/bottleneck.hpp, docs/queues.md). The limit is in packets when
    // queue_limit_packets > 0, else in bytes (the spacer's backlog limit).
    QueueKind queue = QueueKind::droptail;
    std::uint64_t queue_limit_bytes = 1'048'576;
    std::uint64_t queue_limit_packets = 0;
    DurationNs codel_target = 5 * kNsPerMs;
    DurationNs codel_interval = 100 * kNsPerMs;
    std::uint64_t fq_flows = 1024;
    std::uint64_t fq_quantum_bytes = 1514;
    DurationNs pie_target = 15 * kNsPerMs;
    DurationNs pie_tupdate = 15 * kNsPerMs;
    DurationNs pie_max_burst = 150 * kNsPerMs;
    Ecn ecn = Ecn::off;

    LossModel loss_model = LossModel::none;
    double loss_probability = 0;  // Bernoulli
    double ge_p = 0;              // Gilbert-Elliott: good -> bad per packet
    double ge_r = 1;              // Gilbert-Elliott: bad -> good per packet
    double ge_loss_good = 0;      // loss probability in state good
    double ge_loss_bad = 1;       // loss probability in state bad

    std::uint64_t buffer_limit_packets = 1'048'576;
    std::uint64_t seed = 0;  // 0: chosen at random when the Emulator starts (and reported)

    bool operator==(const LinkParams&) const = default;

    /// The queue's discipline and parameters as the Bottleneck takes them.
    QueueConfig queue_config() const {
        return QueueConfig{queue,
                           queue_limit_bytes,
                           queue_limit_packets,
                           codel_target,
                           codel_interval,
                           static_cast<std::uint32_t>(fq_flows),
                           static_cast<std::uint32_t>(fq_quantum_bytes),
                           pie_target,
                           pie_tupdate,
                           pie_max_burst,
                           ecn == Ecn::on};
    }
    /// Whether the limiter's packets go through a real queue (the Bottleneck): a queue
    /// discipline other than droptail, or a limit in packets, on a limiter that queues.
    bool uses_bottleneck() const {
        return (limiter == Limiter::spacer || limiter == Limiter::trace) &&
               (queue != QueueKind::droptail || queue_limit_packets > 0);
    }
};

/// Parameters of both directions of a link (b_to_a is unused in single-port mode).
struct TrafficClass;  // linkem/classes.hpp, included at the end of this header

/// A link: the parameters of its `default` class, per direction, and its traffic classes
/// (docs/classes.md), tried in order; empty: every packet is `default`'s. A class's own
/// `link` never holds classes.
struct LinkConfig {
    LinkParams a_to_b;
    LinkParams b_to_a;
#if defined(__clang__)
    // clang instantiates the vector's destructor at a default member initializer, where
    // TrafficClass is not yet complete (the fuzz build, tests/fuzz/); g++ needs the
    // initializer so that LinkConfig{a, b} does not warn of a missing one.
    std::vector<TrafficClass> classes;
#else
    std::vector<TrafficClass> classes{};
#endif
    /// Direction d's parameters: 0 a_to_b, 1 b_to_a (the order of kDirectionKeys).
    LinkParams& direction(unsigned d) {
        return d == 0 ? a_to_b : b_to_a;
    }
    const LinkParams& direction(unsigned d) const {
        return d == 0 ? a_to_b : b_to_a;
    }
    bool operator==(const LinkConfig&) const = default;
};

/// A parameter error: which field, and a message that says what is allowed.
class ParamError : public std::invalid_argument {
  public:
    ParamError(std::string field, const std::string& message)
        : std::invalid_argument("field '" + field + "': " + message),
          field_(std::move(field)),
          message_(message) {}
    /// The JSON key at fault ("jitter_us"), or a dotted path ("a_to_b.jitter_us").
    const std::string& field() const { return field_; }
    /// What is wrong and what is allowed, without the field: "-1 is out of range; ...".
    const std::string& message() const { return message_; }

  private:
    std::string field_, message_;
};

/// Throws ParamError naming the first field that is out of range or inconsistent.
void validate(const LinkParams& p);

/// A field's value in the unit of its key: a number (double: mean_delay_us in us, rate_bps,
/// probabilities), a whole number (bytes, packets, the seed) or an enum's name. Its JSON
/// (to_json, link_params_from_json, link_params_schema) is linkem/link_params_json.hpp.
using FieldValue = std::variant<double, std::uint64_t, std::string>;

/// How people read a field's value: the unit shown, and the key's units per one of it. The
/// JSON key and its unit stay those of the wire and the config file (loss_probability 0.01
/// is shown as 1 %).
struct LinkParamUnit {
    std::string name;  // "ms", "Mbit/s", "%", "bytes", "packets", "" (a count or a name)
    double per = 1;    // the key's units per unit shown: 1000 us per ms, 1e6, 0.01 per %
    int decimals = 0;  // the decimals a value is typed with, in this unit
};

/// The values a slider covers (the working range a demo needs), in the key's unit: log-like
/// from `low` (> 0) to `high`, with a position for 0 below `low` when `zero`. `high == 0`:
/// the field has no working range of its own (a slider covers its whole range).
struct LinkParamSlider {
    double low = 0, high = 0;
    bool zero = false;
    /// The key of the field whose value the range's top follows: high is at least that
    /// value (the jitter's range reaches the mean delay in force). Empty: none.
    std::string follows;
};

/// When a field has an effect: while the field `key` has one of `values` (rate_bps while the
/// limiter is spacer or policer). An empty key: always.
struct LinkParamCondition {
    std::string key;
    std::vector<std::string> values;
    bool holds(std::string_view value) const;
};

/// One LinkParams field: the single place that knows its key, type, unit, range and help,
/// and how people meet it: its label, the unit it is shown in, its slider's range and what
/// it depends on. The JSON codec, the command-line flags, --help, the schema, validate()
/// and the GUI (its controls, the stage, the scenario strip, descriptions of a link) all
/// read it.
struct LinkParamField {
    std::string key;   // the JSON key, unit-suffixed: "mean_delay_us"
    std::string type;  // "number" (a double), "integer" (a std::uint64_t), "enum" (a name),
                       // "path" (trace_file: a file name)
    std::string unit;  // "us", "bit/s", "bytes", "packets", "probability", ""
    double min = 0, max = 0;
    std::vector<std::string> values;  // enum: the names
    std::string help;
    std::string example;  // command-line text, e.g. "10ms"; for enums the names: "a|b"
    /// The field's value in its key's unit.
    std::function<FieldValue(const LinkParams&)> get;
    /// Stores a value of the field's type after checking its range (or name); throws
    /// ParamError naming the key: "-1 is out of range; allowed 0 .. 10000000 us".
    std::function<void(LinkParams&, const FieldValue&)> set;
    /// What is allowed, as error messages say it: "0 .. 10000000 us", "'none', 'spacer'".
    std::string allowed() const;

    /// docs/glossary.md's "GUI label", with '&' before its keyboard mnemonic ("&Mean
    /// delay", "Limiter (&bandwidth)"); empty where the GUI has no control for the field.
    std::string label;
    LinkParamUnit shown;
    LinkParamSlider slider;
    LinkParamCondition applies;
    /// The label as people read it, without the '&' ("Mean delay"); the key without one.
    std::string label_text() const;
    /// A value (in the key's unit) in the unit people read, with at most `significant`
    /// significant digits and the unit: "94.7 ms", "1 %", "100 Mbit/s", "65536 bytes".
    std::string shown_text(double value, int significant = 4) const;
};

/// Whether field `f` has an effect with the parameters `p` (f.applies).
bool link_param_applies(const LinkParamField& f, const LinkParams& p);

/// A number's value as a double (an integer's too); nullopt for a name.
inline std::optional<double> as_number(const FieldValue& v) {
    if (const double* d = std::get_if<double>(&v)) return *d;
    if (const std::uint64_t* u = std::get_if<std::uint64_t>(&v)) return static_cast<double>(*u);
    return std::nullopt;
}
/// The value `x` in the type of field `f`: a double for numbers, rounded to a whole number >= 0
/// for integers.
inline FieldValue number_value(const LinkParamField& f, double x) {
    if (f.type == "integer") return static_cast<std::uint64_t>(x < 0 ? 0 : x + 0.5);
    return x;
}

/// Every LinkParams field, in the struct's order.
const std::vector<LinkParamField>& link_param_fields();
/// The field of a JSON key; nullptr if there is none.
const LinkParamField* link_param_field(std::string_view key);

/// The fields by their index in link_param_fields(), for code that changes single fields
/// while packets flow (scenario timelines): numbers without a FieldValue of a string.
inline constexpr std::size_t kMaxLinkParamFields = 32;
/// The index of a JSON key in link_param_fields(); -1 if there is none.
int link_param_index(std::string_view key);
/// Whether field i is a number (a duration, rate, size, probability or count), which a
/// scenario's ramp may move; enums and trace_file are not.
bool link_param_is_number(std::size_t i);
/// Whether field i holds whole numbers (sizes, counts, the seed).
bool link_param_is_integer(std::size_t i);
/// A number field's value in its key's unit (mean_delay_us: microseconds).
double link_param_number(std::size_t i, const LinkParams& p);
/// Sets a number field from a value in its key's unit (whole-number fields round it), kept
/// within the field's range.
void set_link_param_number(std::size_t i, LinkParams& p, double v);
/// Copies field i of `from` into `to`.
void copy_link_param(std::size_t i, const LinkParams& from, LinkParams& to);

/// A bad value given to a command-line flag. what() is "<flag>: <message>", and the message
/// says what is allowed: "--jitter: '3' is not a duration with a unit (ns, us, ms, s, min),
/// e.g. 3ms; allowed 0ns .. 10s [jitter_us]".
class FlagError : public std::invalid_argument {
  public:
    FlagError(std::string flag, std::string field, const std::string& message)
        : std::invalid_argument(flag + ": " + message),
          flag_(std::move(flag)),
          field_(std::move(field)),
          message_(message) {}
    const std::string& flag() const { return flag_; }
    const std::string& field() const { return field_; }  // the JSON key
    const std::string& message() const { return message_; }

  private:
    std::string flag_, field_, message_;
};

/// How a LinkParams field is written on a command line.
struct LinkParamFlag {
    std::string key;         // JSON key: "mean_delay_us"
    std::string flag;        // the key with '_' -> '-' and no unit suffix: "mean-delay"
    std::string value_name;  // for --help: DURATION, RATE, BYTES, P, N or NAME
    std::string example;     // "10ms"; for enums the names: "none|spacer|policer"
    std::string help;        // as in link_params_schema()
};

/// One entry per LinkParams field, in the struct's order: the flags every CLI offers.
const std::vector<LinkParamFlag>& link_param_flags();

/// The entry of link_param_flags() for a JSON key; nullptr if there is none.
const LinkParamFlag* link_param_flag(std::string_view key);

/// Converts the text given to a command-line flag for the LinkParams field `key` into the
/// field's value, in the key's unit (link_param_from_text in linkem/link_flags.hpp gives it
/// as JSON): durations need a unit ("10ms" -> 10000 for mean_delay_us), rates too
/// ("10Gbit" -> 1e10 for rate_bps), sizes take one optionally
/// ("64KiB" -> 65536), probabilities and counts are plain numbers, enums their names.
/// Checks the field's range; the rules that tie fields together are validate()'s.
/// Throws FlagError naming `flag` (as the user wrote it, e.g. "--a-to-b-jitter") and the
/// key, with the allowed form and range in the flag's units.
FieldValue link_param_value_from_text(std::string_view key, std::string_view text,
                                      std::string_view flag);

/// The three layers of link flags every linkem command line offers (linkemd, linkemctl
/// set): --FLAG for both directions, --a-to-b-FLAG and --b-to-a-FLAG for one.
inline constexpr const char* kLinkFlagPrefix[3] = {"", "a-to-b-", "b-to-a-"};
/// "--mean-delay" (layer 0), "--a-to-b-mean-delay" (1), "--b-to-a-mean-delay" (2).
std::string link_flag_name(const LinkParamFlag& f, int layer);

/// The text given to the link flags of a command line: [i][layer] for link_param_flags()[i];
/// empty: not given. link_update_from_flags (linkem/link_flags.hpp) converts it.
using LinkFlagText = std::vector<std::array<std::string, 3>>;

/// Limits (also used by validation).
struct ParamLimits {
    static constexpr DurationNs kMaxDelay = 10 * kNsPerSec;
    static constexpr DurationNs kMinHalfLife = 1 * kNsPerUs;
    static constexpr DurationNs kMaxHalfLife = 10 * kNsPerSec;
    static constexpr DurationNs kMinRateWindow = 1 * kNsPerUs;
    static constexpr DurationNs kMaxRateWindow = 10 * kNsPerSec;
    static constexpr double kMinRate = 1e3;
    static constexpr double kMaxRate = 1.6e12;
    static constexpr std::uint64_t kMinBytes = 64;
    static constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 36;
    static constexpr std::uint64_t kMaxBufferPackets = std::uint64_t{1} << 28;
    static constexpr DurationNs kMinAqmTime = 100 * kNsPerUs;
    static constexpr DurationNs kMaxAqmTime = 10 * kNsPerSec;
    static constexpr std::uint64_t kMaxFqFlows = 65536;
};

}  // namespace linkem

// TrafficClass, complete wherever LinkConfig is used.
#include "linkem/classes.hpp"
