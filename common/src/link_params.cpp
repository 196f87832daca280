#include "linkem/link_params.hpp"

#include <cmath>
#include <functional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace linkem {

using nlohmann::json;

std::string_view to_string(Strategy s) {
    switch (s) {
        case Strategy::correlated:
            return "correlated";
        case Strategy::uncorrelated:
            return "uncorrelated";
        case Strategy::reordered:
            return "reordered";
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

// One row per field: the single place that knows a key, its type, unit, range and member.
struct Field {
    std::string key;
    std::string type;  // "number", "integer", "enum"
    std::string unit;  // "us", "bit/s", "bytes", "packets", "probability", ""
    double min = 0, max = 0;
    std::vector<std::string> values;  // enum
    std::function<json(const LinkParams&)> get;
    std::function<void(LinkParams&, const json&)> set;
    std::string help;
};

double need_number(const Field& f, const json& v) {
    if (!v.is_number())
        throw ParamError(f.key, "expected a number" + (f.unit.empty() ? "" : " (" + f.unit + ")") +
                                    ", got " + std::string(v.type_name()));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < f.min || x > f.max)
        throw ParamError(f.key, num(x) + " is out of range; allowed " + num(f.min) + " .. " +
                                    num(f.max) + (f.unit.empty() ? "" : " " + f.unit));
    return x;
}

std::uint64_t need_integer(const Field& f, const json& v) {
    const std::string range =
        num(f.min) + " .. " + num(f.max) + (f.unit.empty() ? "" : " " + f.unit);
    if (!v.is_number_integer())
        throw ParamError(f.key, "expected a whole number in " + range + ", got " +
                                    (v.is_number() ? v.dump() : std::string(v.type_name())));
    if (!v.is_number_unsigned())  // nlohmann stores non-negative integers as unsigned
        throw ParamError(f.key, v.dump() + " is out of range; allowed " + range);
    const std::uint64_t x = v.get<std::uint64_t>();
    if (static_cast<double>(x) < f.min || static_cast<double>(x) > f.max)
        throw ParamError(f.key, std::to_string(x) + " is out of range; allowed " + range);
    return x;
}

template <class E>
E need_enum(const Field& f, const json& v, const std::vector<E>& values) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        for (E e : values)
            if (s == to_string(e)) return e;
    }
    throw ParamError(f.key, (v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump()) +
                                " is not allowed; allowed " + join(f.values));
}

template <class E>
Field enum_field(std::string key, E LinkParams::*m, std::initializer_list<E> values,
                 std::string help) {
    Field f;
    f.key = std::move(key);
    f.type = "enum";
    f.values = enum_names(values);
    f.get = [m](const LinkParams& p) { return json(std::string(to_string(p.*m))); };
    // Capture a copy: an initializer_list's array dies with the call that built the table.
    f.set = [m, values = std::vector<E>(values), key = f.key, vals = f.values](LinkParams& p,
                                                                               const json& v) {
        Field tmp;
        tmp.key = key;
        tmp.values = vals;
        p.*m = need_enum<E>(tmp, v, values);
    };
    f.help = std::move(help);
    return f;
}

Field duration_field(std::string key, DurationNs LinkParams::*m, DurationNs min, DurationNs max,
                     std::string help) {
    Field f;
    f.key = std::move(key);
    f.type = "number";
    f.unit = "us";
    f.min = static_cast<double>(min) / kNsPerUs;
    f.max = static_cast<double>(max) / kNsPerUs;
    f.get = [m](const LinkParams& p) { return json(static_cast<double>(p.*m) / kNsPerUs); };
    f.set = [m, f](LinkParams& p, const json& v) {
        p.*m = static_cast<DurationNs>(std::llround(need_number(f, v) * kNsPerUs));
    };
    f.help = std::move(help);
    return f;
}

Field real_field(std::string key, double LinkParams::*m, std::string unit, double min, double max,
                 std::string help) {
    Field f;
    f.key = std::move(key);
    f.type = "number";
    f.unit = std::move(unit);
    f.min = min;
    f.max = max;
    f.get = [m](const LinkParams& p) { return json(p.*m); };
    f.set = [m, f](LinkParams& p, const json& v) { p.*m = need_number(f, v); };
    f.help = std::move(help);
    return f;
}

Field integer_field(std::string key, std::uint64_t LinkParams::*m, std::string unit, double min,
                    double max, std::string help) {
    Field f;
    f.key = std::move(key);
    f.type = "integer";
    f.unit = std::move(unit);
    f.min = min;
    f.max = max;
    f.get = [m](const LinkParams& p) { return json(p.*m); };
    f.set = [m, f](LinkParams& p, const json& v) { p.*m = need_integer(f, v); };
    f.help = std::move(help);
    return f;
}

const std::vector<Field>& fields() {
    using L = ParamLimits;
    static const std::vector<Field> kFields = {
        enum_field("strategy", &LinkParams::strategy,
                   {Strategy::correlated, Strategy::uncorrelated, Strategy::reordered},
                   "correlated: adaptive delay correlation, order kept (default); "
                   "uncorrelated: i.i.d. delays, order kept (the naive method); "
                   "reordered: i.i.d. delays, sent strictly by transmission time"),
        enum_field("distribution", &LinkParams::distribution,
                   {Distribution::normal, Distribution::uniform, Distribution::gamma,
                    Distribution::lognormal, Distribution::constant},
                   "distribution of the generated delays, given mean_delay_us and jitter_us"),
        duration_field("mean_delay_us", &LinkParams::mean_delay, 0, L::kMaxDelay,
                       "mean added delay"),
        duration_field("jitter_us", &LinkParams::jitter, 0, L::kMaxDelay,
                       "standard deviation of the added delay; 0 = constant delay"),
        duration_field("half_life_us", &LinkParams::half_life, L::kMinHalfLife, L::kMaxHalfLife,
                       "half-life period t_h of adaptive delay correlation"),
        duration_field("rate_window_us", &LinkParams::rate_window, L::kMinRateWindow,
                       L::kMaxRateWindow, "minimum interval T_min of the packet-rate estimator"),
        enum_field("limiter", &LinkParams::limiter,
                   {Limiter::none, Limiter::spacer, Limiter::policer},
                   "bandwidth limit: spacer (delays to rate) or policer (drops above rate)"),
        real_field("rate_bps", &LinkParams::rate_bps, "bit/s", 0, L::kMaxRate,
                   "rate of the spacer or policer"),
        integer_field("spacer_limit_bytes", &LinkParams::spacer_limit_bytes, "bytes",
                      static_cast<double>(L::kMinBytes), static_cast<double>(L::kMaxBytes),
                      "spacer fill limit: backlog beyond which packets are dropped"),
        integer_field("policer_burst_bytes", &LinkParams::policer_burst_bytes, "bytes",
                      static_cast<double>(L::kMinBytes), static_cast<double>(L::kMaxBytes),
                      "policer bucket size"),
        enum_field("byte_accounting", &LinkParams::byte_accounting,
                   {ByteAccounting::frame, ByteAccounting::wire},
                   "bytes a limiter charges: frame, or wire = frame + 20 (preamble and gap)"),
        enum_field("loss_model", &LinkParams::loss_model,
                   {LossModel::none, LossModel::bernoulli, LossModel::gilbert_elliott},
                   "packet loss model"),
        real_field("loss_probability", &LinkParams::loss_probability, "probability", 0, 1,
                   "Bernoulli loss probability per packet"),
        real_field("ge_p", &LinkParams::ge_p, "probability", 0, 1,
                   "Gilbert-Elliott: probability of moving good -> bad after a packet"),
        real_field("ge_r", &LinkParams::ge_r, "probability", 0, 1,
                   "Gilbert-Elliott: probability of moving bad -> good after a packet"),
        real_field("ge_loss_good", &LinkParams::ge_loss_good, "probability", 0, 1,
                   "Gilbert-Elliott: loss probability in state good"),
        real_field("ge_loss_bad", &LinkParams::ge_loss_bad, "probability", 0, 1,
                   "Gilbert-Elliott: loss probability in state bad"),
        integer_field("buffer_limit_packets", &LinkParams::buffer_limit_packets, "packets", 1,
                      static_cast<double>(L::kMaxBufferPackets),
                      "packets the emulator may hold at once; beyond: buffer_full drops"),
        integer_field("seed", &LinkParams::seed, "", 0, 1.8446744073709552e19,
                      "random seed; 0 = chosen at start and reported"),
    };
    return kFields;
}

}  // namespace

void validate(const LinkParams& p) {
    // Ranges first (same table as the JSON reader), then the rules that tie fields together.
    for (const Field& f : fields()) {
        const json v = f.get(p);
        LinkParams scratch = p;
        f.set(scratch, v);
    }
    if (p.limiter != Limiter::none && p.rate_bps < ParamLimits::kMinRate)
        throw ParamError("rate_bps", "must be at least " + num(ParamLimits::kMinRate) +
                                         " bit/s when limiter is '" +
                                         std::string(to_string(p.limiter)) + "'");
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

json to_json(const LinkParams& p) {
    json j = json::object();
    for (const Field& f : fields())
        j[f.key] = f.get(p);
    return j;
}

LinkParams link_params_from_json(const json& j, const LinkParams& base) {
    if (!j.is_object())
        throw ParamError(
            "", "expected a JSON object of link parameters, got " + std::string(j.type_name()));
    LinkParams p = base;
    for (const auto& [key, value] : j.items()) {
        const Field* field = nullptr;
        for (const Field& f : fields())
            if (f.key == key) field = &f;
        if (!field) {
            std::vector<std::string> names;
            for (const Field& f : fields())
                names.push_back(f.key);
            throw ParamError(key, "unknown parameter; known: " + join(names));
        }
        field->set(p, value);
    }
    validate(p);
    return p;
}

json link_params_schema() {
    const LinkParams defaults;
    json j = json::object();
    for (const Field& f : fields()) {
        json d = {{"type", f.type}, {"default", f.get(defaults)}, {"help", f.help}};
        if (f.type == "enum") {
            d["values"] = f.values;
        } else {
            d["min"] = f.min;
            d["max"] = f.max;
            d["unit"] = f.unit;
        }
        j[f.key] = d;
    }
    return j;
}

}  // namespace linkem
