#include "linkem/link_params.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <vector>

#include "linkem/limiter.hpp"
#include "linkem/units.hpp"

namespace linkem {

std::string_view to_string(Strategy s) {
    switch (s) {
        case Strategy::correlated:
            return "correlated";
        case Strategy::uncorrelated:
            return "uncorrelated";
        case Strategy::reordered:
            return "reordered";
        case Strategy::smooth:
            return "smooth";
    }
    return "?";
}
std::string_view to_string(Limiter l) {
    switch (l) {
        case Limiter::none:
            return "none";
        case Limiter::spacer:
            return "spacer";
        case Limiter::policer:
            return "policer";
        case Limiter::trace:
            return "trace";
    }
    return "?";
}
std::string_view to_string(LossModel m) {
    switch (m) {
        case LossModel::none:
            return "none";
        case LossModel::bernoulli:
            return "bernoulli";
        case LossModel::gilbert_elliott:
            return "gilbert_elliott";
    }
    return "?";
}
std::string_view to_string(ByteAccounting b) {
    switch (b) {
        case ByteAccounting::frame:
            return "frame";
        case ByteAccounting::wire:
            return "wire";
    }
    return "?";
}

std::string_view to_string(QueueKind q) {
    switch (q) {
        case QueueKind::droptail:
            return "droptail";
        case QueueKind::codel:
            return "codel";
        case QueueKind::fq_codel:
            return "fq_codel";
        case QueueKind::pie:
            return "pie";
    }
    return "?";
}
std::string_view to_string(Ecn e) {
    return e == Ecn::on ? "on" : "off";
}

TraceRef TraceRef::named(std::string path) {
    auto t = std::make_shared<DeliveryTrace>();
    t->path = std::move(path);
    return TraceRef{std::move(t)};
}

bool TraceRef::operator==(const TraceRef& o) const {
    return trace == o.trace || (trace && o.trace && *trace == *o.trace);
}

namespace {

std::string num(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

template <class E>
std::vector<std::string> enum_names(std::initializer_list<E> values) {
    std::vector<std::string> out;
    for (E v : values)
        out.emplace_back(to_string(v));
    return out;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "'" : ", '") + x + "'";
    return s;
}

using Field = LinkParamField;

double need_number(const Field& f, const FieldValue& v) {
    const double x = std::get<double>(v);
    if (!std::isfinite(x) || x < f.min || x > f.max)
        throw ParamError(f.key, num(x) + " is out of range; allowed " + f.allowed());
    return x;
}

std::uint64_t need_integer(const Field& f, const FieldValue& v) {
    const std::uint64_t x = std::get<std::uint64_t>(v);
    if (static_cast<double>(x) < f.min || static_cast<double>(x) > f.max)
        throw ParamError(f.key, std::to_string(x) + " is out of range; allowed " + f.allowed());
    return x;
}

template <class E>
E need_enum(const Field& f, const FieldValue& v, const std::vector<E>& values) {
    const std::string& s = std::get<std::string>(v);
    for (E e : values)
        if (s == to_string(e)) return e;
    throw ParamError(f.key, "'" + s + "' is not allowed; allowed " + f.allowed());
}

template <class E>
Field enum_field(std::string key, E LinkParams::*m, std::initializer_list<E> values,
                 std::string help) {
    Field f;
    f.key = std::move(key);
    f.type = "enum";
    f.values = enum_names(values);
    f.get = [m](const LinkParams& p) { return FieldValue(std::string(to_string(p.*m))); };
    // Capture a copy: an initializer_list's array dies with the call that built the table.
    f.set = [m, values = std::vector<E>(values), key = f.key, vals = f.values](
                LinkParams& p, const FieldValue& v) {
        Field tmp;
        tmp.key = key;
        tmp.type = "enum";
        tmp.values = vals;
        p.*m = need_enum<E>(tmp, v, values);
    };
    f.help = std::move(help);
    for (const std::string& name : f.values)
        f.example += (f.example.empty() ? "" : "|") + name;
    return f;
}

Field duration_field(std::string key, DurationNs LinkParams::*m, DurationNs min, DurationNs max,
                     std::string help, std::string example) {
    Field f;
    f.key = std::move(key);
    f.type = "number";
    f.unit = "us";
    f.min = static_cast<double>(min) / kNsPerUs;
    f.max = static_cast<double>(max) / kNsPerUs;
    f.get = [m](const LinkParams& p) { return FieldValue(static_cast<double>(p.*m) / kNsPerUs); };
    f.set = [m, f](LinkParams& p, const FieldValue& v) {
        p.*m = static_cast<DurationNs>(std::llround(need_number(f, v) * kNsPerUs));
    };
    f.help = std::move(help);
    f.example = std::move(example);
    return f;
}

Field real_field(std::string key, double LinkParams::*m, std::string unit, double min, double max,
                 std::string help, std::string example) {
    Field f;
    f.key = std::move(key);
    f.type = "number";
    f.unit = std::move(unit);
    f.min = min;
    f.max = max;
    f.get = [m](const LinkParams& p) { return FieldValue(p.*m); };
    f.set = [m, f](LinkParams& p, const FieldValue& v) { p.*m = need_number(f, v); };
    f.help = std::move(help);
    f.example = std::move(example);
    return f;
}

Field integer_field(std::string key, std::uint64_t LinkParams::*m, std::string unit, double min,
                    double max, std::string help, std::string example) {
    Field f;
    f.key = std::move(key);
    f.type = "integer";
    f.unit = std::move(unit);
    f.min = min;
    f.max = max;
    f.get = [m](const LinkParams& p) { return FieldValue(p.*m); };
    f.set = [m, f](LinkParams& p, const FieldValue& v) { p.*m = need_integer(f, v); };
    f.help = std::move(help);
    f.example = std::move(example);
    return f;
}

// trace_file: the trace limiter's mahimahi trace. Its value is the trace's file name; the
// trace itself is read by the protocol's JSON codec (the model reads no files), so setting
// it here only keeps the trace it names or clears it.
Field trace_file_field() {
    Field f;
    f.key = "trace_file";
    f.type = "path";
    f.get = [](const LinkParams& p) { return FieldValue(p.trace ? p.trace.get()->path : ""); };
    f.set = [](LinkParams& p, const FieldValue& v) {
        const std::string& path = std::get<std::string>(v);
        if (path.empty()) {
            p.trace = {};
        } else if (!p.trace || p.trace.get()->path != path) {
            throw ParamError("trace_file",
                             "'" + path +
                                 "' is not the trace in force; a trace is read from its file "
                                 "by link_params_from_json (linkem/link_params_json.hpp)");
        }
    };
    f.help =
        "mahimahi link trace for limiter 'trace': one millisecond timestamp per line, each a "
        "delivery opportunity for 1504 bytes, repeated at its end";
    f.example = "uplink.trace";
    return f;
}

// How people meet a field: its GUI label ('&' before the mnemonic; docs/glossary.md's
// "GUI label" column, which tests/unit/test_glossary.cpp compares), the unit it is shown in,
// its slider's working range and when it applies.
Field shown_as(Field f, std::string label, LinkParamUnit unit, LinkParamSlider slider = {},
               LinkParamCondition applies = {}) {
    f.label = std::move(label);
    f.shown = std::move(unit);
    f.slider = std::move(slider);
    f.applies = std::move(applies);
    return f;
}

const std::vector<Field>& fields() {
    static const std::vector<Field> kFields = [] {
        using L = ParamLimits;
        // The units people read: durations in ms, rates in Mbit/s, probabilities in %.
        const LinkParamUnit ms{"ms", 1000, 3}, mbit{"Mbit/s", 1e6, 3}, percent{"%", 0.01, 4},
            bytes{"bytes", 1, 0}, packets{"packets", 1, 0}, none{};
        // Where the distribution varies the delay: all but constant.
        const LinkParamCondition varying{"distribution",
                                         {"normal", "uniform", "gamma", "lognormal"}};
        const LinkParamCondition gilbert_elliott{"loss_model", {"gilbert_elliott"}};
        const LinkParamCondition queueing{"limiter", {"spacer", "trace"}};
        const LinkParamCondition codel{"queue", {"codel", "fq_codel"}};
        return std::vector<Field>{
            shown_as(
                enum_field("strategy", &LinkParams::strategy,
                           {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered,
                            Strategy::smooth},
                           "correlated: adaptive delay correlation, order kept (default); "
                           "uncorrelated: i.i.d. delays, order kept (the naive method); "
                           "reordered: i.i.d. delays, sent strictly by transmission time; "
                           "smooth: delay a smooth function of time with the set mean, jitter, "
                           "distribution and half-life, order kept"),
                "S&trategy", none),
            shown_as(enum_field("distribution", &LinkParams::distribution,
                                {Distribution::normal, Distribution::uniform, Distribution::gamma,
                                 Distribution::lognormal, Distribution::constant},
                                "distribution of the generated delays, given mean_delay_us and "
                                "jitter_us"),
                     "D&istribution", none),
            shown_as(duration_field("mean_delay_us", &LinkParams::mean_delay, 0, L::kMaxDelay,
                                    "mean added delay", "10ms"),
                     "&Mean delay", ms, {100, 1e6, true, ""}),  // 0, 0.1 ms .. 1 s
            shown_as(duration_field("jitter_us", &LinkParams::jitter, 0, L::kMaxDelay,
                                    "standard deviation of the added delay; 0ms: a constant delay",
                                    "3ms"),
                     "&Jitter", ms,
                     {100, 1e5, true, "mean_delay_us"},  // 0, 0.1 ms .. max(100 ms, mean)
                     varying),
            shown_as(duration_field("half_life_us", &LinkParams::half_life, L::kMinHalfLife,
                                    L::kMaxHalfLife,
                                    "half-life t_h of the delay's correlation in time (correlated, "
                                    "smooth)",
                                    "21ms"),
                     "&Half-life", ms, {1000, 1e6, false, ""},  // 1 ms .. 1 s
                     {"strategy", {"correlated", "smooth"}}),
            shown_as(duration_field("rate_window_us", &LinkParams::rate_window, L::kMinRateWindow,
                                    L::kMaxRateWindow,
                                    "minimum interval T_min of the packet-rate estimator", "10ms"),
                     "", ms),
            shown_as(enum_field("limiter", &LinkParams::limiter,
                                {Limiter::none, Limiter::spacer, Limiter::policer, Limiter::trace},
                                "bandwidth limit: spacer (delays to rate), policer (drops above "
                                "rate) or trace (delivers at a mahimahi trace's opportunities, "
                                "trace_file)"),
                     "Limiter (&bandwidth)", none),
            shown_as(real_field("rate_bps", &LinkParams::rate_bps, "bit/s", 0, L::kMaxRate,
                                "rate of the spacer or policer", "100Mbit"),
                     "&Rate", mbit, {1e6, 1e10, false, ""},  // 1 Mbit/s .. 10 Gbit/s
                     {"limiter", {"spacer", "policer"}}),
            shown_as(
                integer_field("policer_burst_bytes", &LinkParams::policer_burst_bytes, "bytes",
                              static_cast<double>(L::kMinBytes), static_cast<double>(L::kMaxBytes),
                              "policer bucket size", "64KiB"),
                "", bytes, {}, {"limiter", {"policer"}}),
            shown_as(trace_file_field(), "", none, {}, {"limiter", {"trace"}}),
            shown_as(
                enum_field("byte_accounting", &LinkParams::byte_accounting,
                           {ByteAccounting::frame, ByteAccounting::wire},
                           "bytes a limiter charges: frame, or wire = frame + 20 (preamble and "
                           "gap)"),
                "", none),
            shown_as(enum_field("queue", &LinkParams::queue,
                                {QueueKind::droptail, QueueKind::codel, QueueKind::fq_codel,
                                 QueueKind::pie},
                                "the limiter's queue discipline (spacer, trace): droptail, codel "
                                "(RFC 8289), fq_codel (RFC 8290) or pie (RFC 8033)"),
                     "&Queue", none, {}, queueing),
            shown_as(
                integer_field("queue_limit_bytes", &LinkParams::queue_limit_bytes, "bytes",
                              static_cast<double>(L::kMinBytes), static_cast<double>(L::kMaxBytes),
                              "queue limit in bytes: beyond it the queue drops arrivals "
                              "(drops_spacer); on the command line also in packets: 1000p",
                              "1MiB"),
                "Q&ueue limit", bytes, {1500, 1.6e7, false, ""}, queueing),
            shown_as(
                integer_field("queue_limit_packets", &LinkParams::queue_limit_packets, "packets", 0,
                              static_cast<double>(L::kMaxBufferPackets),
                              "queue limit in packets; 0: the limit is queue_limit_bytes", "1000"),
                "", packets, {}, queueing),
            shown_as(duration_field("codel_target_us", &LinkParams::codel_target, L::kMinAqmTime,
                                    L::kMaxAqmTime,
                                    "CoDel's target: the sojourn time it tolerates (codel, "
                                    "fq_codel)",
                                    "5ms"),
                     "", ms, {}, codel),
            shown_as(duration_field("codel_interval_us", &LinkParams::codel_interval,
                                    L::kMinAqmTime, L::kMaxAqmTime,
                                    "CoDel's interval: how long the sojourn time must stay above "
                                    "target before it drops (codel, fq_codel)",
                                    "100ms"),
                     "", ms, {}, codel),
            shown_as(
                integer_field("fq_flows", &LinkParams::fq_flows, "", 1,
                              static_cast<double>(L::kMaxFqFlows),
                              "FQ-CoDel's flow queues (packets hashed by their 5-tuple)", "1024"),
                "", none, {}, {"queue", {"fq_codel"}}),
            shown_as(
                integer_field("fq_quantum_bytes", &LinkParams::fq_quantum_bytes, "bytes", 64, 65536,
                              "FQ-CoDel's quantum: bytes a flow sends per round", "1514"),
                "", bytes, {}, {"queue", {"fq_codel"}}),
            shown_as(
                duration_field("pie_target_us", &LinkParams::pie_target, L::kMinAqmTime,
                               L::kMaxAqmTime, "PIE's target queueing delay (QDELAY_REF)", "15ms"),
                "", ms, {}, {"queue", {"pie"}}),
            shown_as(duration_field(
                         "pie_tupdate_us", &LinkParams::pie_tupdate, L::kMinAqmTime, L::kMaxAqmTime,
                         "PIE's update interval of the drop probability (T_UPDATE)", "15ms"),
                     "", ms, {}, {"queue", {"pie"}}),
            shown_as(
                duration_field("pie_max_burst_us", &LinkParams::pie_max_burst, 0, L::kMaxAqmTime,
                               "PIE's burst allowance (MAX_BURST): no early drops for this "
                               "long after congestion starts",
                               "150ms"),
                "", ms, {}, {"queue", {"pie"}}),
            shown_as(enum_field("ecn", &LinkParams::ecn, {Ecn::off, Ecn::on},
                                "on: the queue discipline marks ECN-capable packets CE "
                                "(ecn_marked) where it would drop them (codel, fq_codel, pie)"),
                     "E&CN", none, {}, {"queue", {"codel", "fq_codel", "pie"}}),
            shown_as(enum_field("loss_model", &LinkParams::loss_model,
                                {LossModel::none, LossModel::bernoulli, LossModel::gilbert_elliott},
                                "packet loss model"),
                     "Loss m&odel", none),
            shown_as(real_field("loss_probability", &LinkParams::loss_probability, "probability", 0,
                                1, "Bernoulli loss probability per packet", "0.01"),
                     "&Loss", percent, {1e-4, 0.2, true, ""},  // 0, 0.01 % .. 20 %
                     {"loss_model", {"bernoulli"}}),
            shown_as(real_field("ge_p", &LinkParams::ge_p, "probability", 0, 1,
                                "Gilbert-Elliott: probability of moving good -> bad after a packet",
                                "0.01"),
                     "p: good→bad", percent, {}, gilbert_elliott),
            shown_as(real_field("ge_r", &LinkParams::ge_r, "probability", 0, 1,
                                "Gilbert-Elliott: probability of moving bad -> good after a packet",
                                "0.3"),
                     "r: bad→good", percent, {}, gilbert_elliott),
            shown_as(real_field("ge_loss_good", &LinkParams::ge_loss_good, "probability", 0, 1,
                                "Gilbert-Elliott: loss probability in state good", "0"),
                     "loss in good", percent, {}, gilbert_elliott),
            shown_as(real_field("ge_loss_bad", &LinkParams::ge_loss_bad, "probability", 0, 1,
                                "Gilbert-Elliott: loss probability in state bad", "1"),
                     "loss in bad", percent, {}, gilbert_elliott),
            shown_as(
                integer_field("buffer_limit_packets", &LinkParams::buffer_limit_packets, "packets",
                              1, static_cast<double>(L::kMaxBufferPackets),
                              "packets the emulator may hold at once; beyond: buffer_full drops",
                              "100000"),
                "", packets),
            shown_as(integer_field("seed", &LinkParams::seed, "", 0, 1.8446744073709552e19,
                                   "random seed; 0 = chosen at start and reported", "42"),
                     "S&eed", none),
        };
    }();
    return kFields;
}

// How a field's value is written on a command line, from its type and unit.
enum class TextKind { duration, rate, bytes, number, integer, choice, path };

TextKind text_kind(const Field& f) {
    if (f.type == "enum") return TextKind::choice;
    if (f.type == "path") return TextKind::path;
    if (f.unit == "us") return TextKind::duration;
    if (f.unit == "bit/s") return TextKind::rate;
    if (f.unit == "bytes") return TextKind::bytes;
    if (f.type == "integer") return TextKind::integer;
    return TextKind::number;
}

// "mean_delay_us" -> "mean-delay": the unit suffix goes, since the flag's text carries a unit.
std::string flag_name(const std::string& key) {
    std::string k = key;
    // queue_limit_packets keeps its suffix: --queue-limit is queue_limit_bytes' flag (which
    // also takes a limit in packets, 1000p).
    if (key == "queue_limit_packets") return "queue-limit-packets";
    for (std::string_view suffix : {"_us", "_bps", "_bytes", "_packets"})
        if (k.size() > suffix.size() && k.ends_with(suffix)) {
            k.resize(k.size() - suffix.size());
            break;
        }
    for (char& c : k)
        if (c == '_') c = '-';
    return k;
}

std::string whole(double v) {
    // The seed's maximum, 2^64 - 1, is 2^64 as a double: out of range for a cast.
    if (v >= 18446744073709551615.0) return std::to_string(UINT64_MAX);
    return std::to_string(static_cast<std::uint64_t>(v));
}

// "allowed 0ns .. 10s": the field's range in the units the flag is written in.
std::string allowed_text(const Field& f) {
    switch (text_kind(f)) {
        case TextKind::choice:
            return "allowed " + join(f.values);
        case TextKind::path:
            return "allowed a file name";
        case TextKind::duration:
            return "allowed " + format_duration(std::llround(f.min * kNsPerUs)) + " .. " +
                   format_duration(std::llround(f.max * kNsPerUs));
        case TextKind::rate:
            return "allowed " + format_rate(f.min) + " .. " + format_rate(f.max);
        case TextKind::bytes:
            return "allowed " + whole(f.min) + " .. " + whole(f.max) + " bytes";
        case TextKind::integer:
            return "allowed " + whole(f.min) + " .. " + whole(f.max) +
                   (f.unit.empty() ? "" : " " + f.unit);
        case TextKind::number:
            break;
    }
    return "allowed " + num(f.min) + " .. " + num(f.max);
}

const char* value_name(TextKind k) {
    switch (k) {
        case TextKind::duration:
            return "DURATION";
        case TextKind::rate:
            return "RATE";
        case TextKind::bytes:
            return "BYTES";
        case TextKind::number:
            return "P";
        case TextKind::integer:
            return "N";
        case TextKind::path:
            return "FILE";
        case TextKind::choice:
            break;
    }
    return "NAME";
}

}  // namespace

std::string LinkParamField::allowed() const {
    if (type == "enum") return join(values);
    if (type == "path") return "a file name";
    return num(min) + " .. " + num(max) + (unit.empty() ? "" : " " + unit);
}

bool LinkParamCondition::holds(std::string_view value) const {
    return key.empty() || std::find(values.begin(), values.end(), value) != values.end();
}

std::string LinkParamField::label_text() const {
    if (label.empty()) return key;
    std::string t;
    for (char c : label)
        if (c != '&') t += c;
    return t;
}

std::string LinkParamField::shown_text(double value, int significant) const {
    // Fixed notation (never "1e+04"), rounded to `significant` digits, no trailing zeros.
    const double v = value / shown.per;
    const int magnitude = v == 0 ? 0 : static_cast<int>(std::floor(std::log10(std::abs(v))));
    const int decimals = std::clamp(std::max(1, significant) - 1 - magnitude, 0, 9);
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(decimals);
    os << v;
    std::string t = os.str();
    if (t.find('.') != std::string::npos) {
        while (t.back() == '0')
            t.pop_back();
        if (t.back() == '.') t.pop_back();
    }
    if (t == "-0") t = "0";
    return shown.name.empty() ? t : t + " " + shown.name;
}

bool link_param_applies(const LinkParamField& f, const LinkParams& p) {
    if (f.applies.key.empty()) return true;
    const LinkParamField* on = link_param_field(f.applies.key);
    if (!on) return true;
    const FieldValue v = on->get(p);
    const std::string* name = std::get_if<std::string>(&v);
    return !name || f.applies.holds(*name);
}

const std::vector<LinkParamField>& link_param_fields() {
    static const bool fits = fields().size() <= kMaxLinkParamFields;
    if (!fits) throw std::logic_error("link_params.cpp: more fields than kMaxLinkParamFields");
    return fields();
}

int link_param_index(std::string_view key) {
    const std::vector<Field>& all = fields();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i].key == key) return static_cast<int>(i);
    return -1;
}

bool link_param_is_number(std::size_t i) {
    const std::string& t = fields().at(i).type;
    return t == "number" || t == "integer";
}

bool link_param_is_integer(std::size_t i) {
    return fields().at(i).type == "integer";
}

double link_param_number(std::size_t i, const LinkParams& p) {
    const FieldValue v = fields()[i].get(p);
    if (const auto* x = std::get_if<std::uint64_t>(&v)) return static_cast<double>(*x);
    return std::get<double>(v);
}

void set_link_param_number(std::size_t i, LinkParams& p, double v) {
    const Field& f = fields()[i];
    v = std::clamp(v, f.min, f.max);
    if (f.type == "integer") {
        const double r = std::round(v);
        f.set(p,
              FieldValue(r >= 1.8446744073709552e19 ? UINT64_MAX : static_cast<std::uint64_t>(r)));
    } else {
        f.set(p, FieldValue(v));
    }
}

void copy_link_param(std::size_t i, const LinkParams& from, LinkParams& to) {
    const Field& f = fields()[i];
    if (f.type == "path")
        to.trace = from.trace;
    else
        f.set(to, f.get(from));
}

const LinkParamField* link_param_field(std::string_view key) {
    for (const Field& f : fields())
        if (f.key == key) return &f;
    return nullptr;
}

void validate(const LinkParams& p) {
    // Ranges first (same table as the JSON reader), then the rules that tie fields together.
    for (const Field& f : fields()) {
        LinkParams scratch = p;
        f.set(scratch, f.get(p));
    }
    if (p.limiter == Limiter::trace && !p.trace)
        throw ParamError("trace_file",
                         "required when limiter is 'trace': a mahimahi link trace (one "
                         "millisecond timestamp per line)");
    if ((p.limiter == Limiter::spacer || p.limiter == Limiter::policer) &&
        p.rate_bps < ParamLimits::kMinRate)
        throw ParamError("rate_bps", "must be at least " + num(ParamLimits::kMinRate) +
                                         " bit/s when limiter is '" +
                                         std::string(to_string(p.limiter)) + "'");
    // ecn is a key of codel, fq_codel and pie: under droptail it is kept, without effect (as
    // codel_target_us under pie), so that a link that went back to droptail can drop its
    // limiter without first turning ecn off under a discipline it no longer has.
    if (p.ecn == Ecn::on && p.queue != QueueKind::droptail && p.limiter != Limiter::spacer &&
        p.limiter != Limiter::trace)
        throw ParamError("ecn", "needs a limiter that queues, spacer or trace ('" +
                                    std::string(to_string(p.limiter)) +
                                    "' has no queue to mark in)");
    const bool varying = p.jitter > 0 && p.distribution != Distribution::constant;
    if (p.distribution == Distribution::constant && p.jitter > 0)
        throw ParamError("jitter_us",
                         "must be 0 when distribution is 'constant' (use another "
                         "distribution for a varying delay)");
    if (varying && p.mean_delay == 0 &&
        (p.distribution == Distribution::gamma || p.distribution == Distribution::lognormal))
        throw ParamError("mean_delay_us", "must be > 0 for distribution '" +
                                              std::string(to_string(p.distribution)) +
                                              "' with jitter (it has positive support)");
    if (p.loss_model == LossModel::gilbert_elliott && p.ge_p + p.ge_r <= 0)
        throw ParamError("ge_r", "ge_p and ge_r cannot both be 0 (the chain would never move)");
}

const std::vector<LinkParamFlag>& link_param_flags() {
    static const std::vector<LinkParamFlag> kFlags = [] {
        std::vector<LinkParamFlag> v;
        for (const Field& f : fields())
            v.push_back({f.key, flag_name(f.key), value_name(text_kind(f)), f.example, f.help});
        return v;
    }();
    return kFlags;
}

const LinkParamFlag* link_param_flag(std::string_view key) {
    for (const LinkParamFlag& f : link_param_flags())
        if (f.key == key) return &f;
    return nullptr;
}

FieldValue link_param_value_from_text(std::string_view key, std::string_view text,
                                      std::string_view flag) {
    const Field* f = link_param_field(key);
    if (!f)
        throw std::invalid_argument("link_param_from_text: no field '" + std::string(key) + "'");
    const std::string t(text);
    const std::string tail = "; " + allowed_text(*f) + " [" + f->key + "]";
    auto error = [&](const std::string& what) {
        return FlagError(std::string(flag), f->key, what + tail);
    };
    auto not_a = [&](const std::string& form) {
        return error("'" + t + "' is not " + form + ", e.g. " + f->example);
    };
    auto out_of_range = [&] { return error("'" + t + "' is out of range"); };
    auto check = [&](double x) {
        if (!(x >= f->min && x <= f->max)) throw out_of_range();
    };
    // Text that `parse` refused: a negative duration, rate or size is out of range (below the
    // minimum given), anything else not of the form.
    auto refused = [&](auto parse, std::string_view form) {
        return t.starts_with('-') && parse(t.substr(1)) ? out_of_range() : not_a(std::string(form));
    };
    switch (text_kind(*f)) {
        case TextKind::duration: {
            const auto d = parse_duration(t);
            if (!d) throw refused(parse_duration, kDurationForm);
            const double us = static_cast<double>(*d) / kNsPerUs;
            check(us);
            return FieldValue(us);
        }
        case TextKind::rate: {
            const auto r = parse_rate(t);
            if (!r) throw refused(parse_rate, kRateForm);
            check(*r);
            return FieldValue(*r);
        }
        case TextKind::bytes: {
            const auto b = parse_bytes(t);
            if (!b) throw refused(parse_bytes, kBytesForm);
            check(static_cast<double>(*b));
            return FieldValue(std::uint64_t{*b});
        }
        case TextKind::number: {
            const auto x = parse_number(t);
            if (!x) throw not_a(std::string(kNumberForm));
            check(*x);
            return FieldValue(*x);
        }
        case TextKind::integer: {
            const auto x = parse_whole(t);
            if (!x) throw not_a(std::string(kWholeForm));
            check(static_cast<double>(*x));
            return FieldValue(std::uint64_t{*x});
        }
        case TextKind::choice:
            for (const std::string& v : f->values)
                if (t == v) return FieldValue(t);
            throw error("'" + t + "' is not allowed");
        case TextKind::path:
            return FieldValue(t);
    }
    return FieldValue(t);
}

std::string link_flag_name(const LinkParamFlag& f, int layer) {
    return std::string("--") + kLinkFlagPrefix[layer] + f.flag;
}

}  // namespace linkem
