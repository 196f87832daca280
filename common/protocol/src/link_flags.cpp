#include "linkem/link_flags.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>

#include "linkem/units.hpp"

namespace linkem {

using nlohmann::json;

namespace {

using Field = LinkParamField;

std::string num(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "'" : ", '") + x + "'";
    return s;
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

const std::vector<LinkParamFlag>& link_param_flags() {
    static const std::vector<LinkParamFlag> kFlags = [] {
        std::vector<LinkParamFlag> v;
        for (const Field& f : link_param_fields())
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

json link_param_from_text(std::string_view key, std::string_view text, std::string_view flag) {
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
            return us;
        }
        case TextKind::rate: {
            const auto r = parse_rate(t);
            if (!r) throw refused(parse_rate, kRateForm);
            check(*r);
            return *r;
        }
        case TextKind::bytes: {
            const auto b = parse_bytes(t);
            if (!b) throw refused(parse_bytes, kBytesForm);
            check(static_cast<double>(*b));
            return *b;
        }
        case TextKind::number: {
            const auto x = parse_number(t);
            if (!x) throw not_a(std::string(kNumberForm));
            check(*x);
            return *x;
        }
        case TextKind::integer: {
            const auto x = parse_whole(t);
            if (!x) throw not_a(std::string(kWholeForm));
            check(static_cast<double>(*x));
            return *x;
        }
        case TextKind::choice:
            for (const std::string& v : f->values)
                if (t == v) return t;
            throw error("'" + t + "' is not allowed");
        case TextKind::path:
            return t;
    }
    return t;
}

std::string link_flag_name(const LinkParamFlag& f, int layer) {
    return std::string("--") + kLinkFlagPrefix[layer] + f.flag;
}

json link_update_from_flags(const LinkFlagText& text) {
    const std::vector<LinkParamFlag>& flags = link_param_flags();
    json update = json::object();
    for (int layer = 0; layer < 3; ++layer) {
        for (std::size_t i = 0; i < flags.size() && i < text.size(); ++i) {
            const std::string& v = text[i][static_cast<std::size_t>(layer)];
            if (v.empty()) continue;
            json x = link_param_from_text(flags[i].key, v, link_flag_name(flags[i], layer));
            if (layer == 0)
                update[flags[i].key] = std::move(x);
            else
                update[layer == 1 ? "a_to_b" : "b_to_a"][flags[i].key] = std::move(x);
        }
    }
    return update;
}

}  // namespace linkem
