#include "linkem/scenario_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "linkem/link_flags.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/trace_file.hpp"
#include "linkem/units.hpp"

#include "blanks.hpp"

namespace linkem {

namespace detail {
// common/scenarios/*.json, embedded by common/scenarios/embed.cmake at build time.
struct EmbeddedScenario {
    const char* name;
    const char* text;
};
extern const EmbeddedScenario kBuiltinScenarios[];
extern const std::size_t kBuiltinScenarioCount;
}  // namespace detail

namespace {

using nlohmann::json;

constexpr const char* kFileKeys[] = {"name", "description", "source",
                                     "loop", "duration_s",  "steps"};
constexpr const char* kStepKeys[] = {"at_s", "until_s", "set", "ramp", "class", "note"};

std::string join_quoted(const auto& names) {
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "'" : ", '") + std::string(n) + "'";
    return s;
}

std::string num(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

// Seconds (a number, 0 .. the longest scenario) to ns.
DurationNs seconds_value(const json& v, const std::string& place, const std::string& field) {
    if (!v.is_number())
        throw ScenarioError(place, field,
                            "expected a number of seconds, got " + std::string(v.type_name()));
    const double s = v.get<double>();
    const double max = static_cast<double>(kMaxScenarioDuration) / kNsPerSec;
    if (!std::isfinite(s) || s < 0 || s > max)
        throw ScenarioError(place, field,
                            num(s) + " is out of range; allowed 0 .. " + num(max) + " s");
    return static_cast<DurationNs>(std::llround(s * kNsPerSec));
}

std::string text_value(const json& v, const std::string& place, const std::string& field) {
    if (!v.is_string())
        throw ScenarioError(place, field, "expected a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
}

// A step's `set` or `ramp` object (layered as set_link's params) into the changes of both
// directions. `path` is the object's JSON path ("steps[3].set").
std::array<ScenarioChange, 2> changes_from_json(const json& obj, const std::string& place,
                                                const std::string& path, const std::string& dir) {
    if (!obj.is_object())
        throw ScenarioError(place, path,
                            "expected an object of link parameters (as set_link takes them), got " +
                                std::string(obj.type_name()));
    for (const auto& [key, value] : obj.items()) {
        if (key == kDirectionKeys[0] || key == kDirectionKeys[1]) {
            if (!value.is_object())
                throw ScenarioError(
                    place, path + "." + key,
                    "expected an object of link parameters, got " + std::string(value.type_name()));
        } else if (!link_param_field(key)) {
            // layered_link_keys leaves out what is not a link key: named here.
            try {
                (void)link_param_values_from_json(json{{key, value}});
            } catch (const ParamError& e) {
                throw ScenarioError(place, path + "." + e.field(), e.message());
            }
        }
    }
    std::array<ScenarioChange, 2> out;
    for (int d = 0; d < 2; ++d) {
        json merged = layered_link_keys({&obj}, static_cast<unsigned>(d));
        if (!dir.empty()) resolve_trace_files(merged, dir);
        try {
            out[d].values = link_param_values_from_json(merged);
        } catch (const ParamError& e) {
            const bool own =
                obj.contains(kDirectionKeys[d]) && obj[kDirectionKeys[d]].contains(e.field());
            throw ScenarioError(
                place, path + (own ? std::string(".") + kDirectionKeys[d] : "") + "." + e.field(),
                e.message());
        }
        for (const auto& [key, value] : merged.items())
            out[d].fields.set(static_cast<std::size_t>(link_param_index(key)));
    }
    return out;
}

json change_to_json(const ScenarioChange& c) {
    const json all = to_json(c.values);
    json out = json::object();
    const auto& flags = link_param_flags();
    for (std::size_t i = 0; i < flags.size(); ++i)
        if (c.fields.test(i)) out[flags[i].key] = all[flags[i].key];
    return out;
}

void check_duration(Scenario& s, const std::string& place, bool given) {
    DurationNs end = 0;
    for (const ScenarioStep& st : s.steps)
        end = std::max(end, st.ramp ? st.until : st.at);
    if (!given) {
        s.duration = end;
        if (s.duration == 0)
            throw ScenarioError(place, "duration_s",
                                "missing, and the steps do not say it (all are at 0): give "
                                "duration_s, the timeline's length");
    } else if (s.duration <= 0) {
        throw ScenarioError(place, "duration_s", "must be greater than 0");
    } else if (s.duration < end) {
        throw ScenarioError(place, "duration_s",
                            num(static_cast<double>(s.duration) / kNsPerSec) +
                                " s ends before the last step (" +
                                num(static_cast<double>(end) / kNsPerSec) + " s)");
    }
}

std::vector<std::string> split_csv(std::string_view line) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = line.find(',', start);
        out.emplace_back(detail::trim_blanks(
            line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out;
}

std::string stem(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

// Step k of a JSON scenario; `last`: the time of the step before (steps come in time
// order).
ScenarioStep step_from_json(const json& steps, std::size_t k, DurationNs& last,
                            const std::string& place, const std::string& dir) {
    const std::string path = "steps[" + std::to_string(k) + "]";
    const json& st = steps[k];
    if (!st.is_object())
        throw ScenarioError(place, path,
                            "expected an object ({\"at_s\": T, \"set\": {...}} or {\"at_s\": "
                            "T1, \"until_s\": T2, \"ramp\": {...}}), got " +
                                std::string(st.type_name()));
    for (const auto& [key, value] : st.items())
        if (std::find(std::begin(kStepKeys), std::end(kStepKeys), key) == std::end(kStepKeys))
            throw ScenarioError(place, path + "." + key,
                                "unknown key; known: " + join_quoted(kStepKeys));
    ScenarioStep step;
    step.where = path;
    if (!st.contains("at_s"))
        throw ScenarioError(place, path + ".at_s", "missing: when the step happens (seconds)");
    step.at = seconds_value(st["at_s"], place, path + ".at_s");
    if (step.at < last)
        throw ScenarioError(
            place, path + ".at_s",
            num(static_cast<double>(step.at) / kNsPerSec) + " s goes back (the step before is at " +
                num(static_cast<double>(last) / kNsPerSec) + " s); steps come in time order");
    last = step.at;
    if (st.contains("note")) step.note = text_value(st["note"], place, path + ".note");
    if (st.contains("class")) {
        // A traffic class's step (docs/classes.md): its keys change that class's parameters.
        const std::string c = text_value(st["class"], place, path + ".class");
        if (c != kDefaultClassName && !valid_class_name(c))
            throw ScenarioError(place, path + ".class",
                                "'" + c +
                                    "' is not a class name; allowed 'default' or a class's "
                                    "name: " +
                                    kClassNameRule);
        if (c != kDefaultClassName) step.class_name = c;
        if (!step.class_name.empty() && st.contains("ramp"))
            throw ScenarioError(place, path + ".ramp",
                                "a ramp on a traffic class is not supported; allowed for class '" +
                                    c + "': 'set' (its keys take their values at at_s)");
    }
    const bool set = st.contains("set"), ramp = st.contains("ramp");
    if (set == ramp)
        throw ScenarioError(place, path,
                            "give exactly one of 'set' (keys take values at at_s) and 'ramp' "
                            "(numbers move linearly from at_s to until_s)");
    if (set && st.contains("until_s"))
        throw ScenarioError(place, path + ".until_s",
                            "only a ramp has an end; a step with 'set' happens at at_s");
    if (ramp) {
        if (!st.contains("until_s"))
            throw ScenarioError(place, path + ".until_s", "missing: when the ramp ends (seconds)");
        step.ramp = true;
        step.until = seconds_value(st["until_s"], place, path + ".until_s");
        if (step.until <= step.at)
            throw ScenarioError(place, path + ".until_s",
                                "must be after at_s (a ramp takes time; for a jump use 'set')");
    } else {
        step.until = step.at;
    }
    step.dir =
        changes_from_json(st[set ? "set" : "ramp"], place, path + (set ? ".set" : ".ramp"), dir);
    if (step.dir[0].empty() && step.dir[1].empty())
        throw ScenarioError(place, path + (set ? ".set" : ".ramp"),
                            "empty: give at least one link parameter");
    return step;
}

}  // namespace

ScenarioError::ScenarioError(std::string place, std::string field, const std::string& message)
    : std::invalid_argument((place.empty() ? "" : place + ": ") +
                            (field.empty() ? "" : field + ": ") + message),
      place_(std::move(place)),
      field_(std::move(field)),
      message_(message) {}

Scenario scenario_from_json(const json& j, const std::string& place, const std::string& dir) {
    if (!j.is_object())
        throw ScenarioError(place, "",
                            "a scenario is a JSON object (name, description, source, loop, "
                            "duration_s, steps), got " +
                                std::string(j.type_name()));
    for (const auto& [key, value] : j.items())
        if (std::find(std::begin(kFileKeys), std::end(kFileKeys), key) == std::end(kFileKeys))
            throw ScenarioError(place, key,
                                "unknown key; known: " + join_quoted(kFileKeys) +
                                    (link_param_flag(key) || direction_of_key(key) >= 0
                                         ? " (link parameters go into a step's set, e.g. "
                                           "{\"at_s\": 0, \"set\": {...}})"
                                         : ""));
    Scenario s;
    if (j.contains("name")) s.name = text_value(j["name"], place, "name");
    if (j.contains("description"))
        s.description = text_value(j["description"], place, "description");
    if (j.contains("source")) s.source = text_value(j["source"], place, "source");
    if (j.contains("loop")) {
        if (!j["loop"].is_boolean())
            throw ScenarioError(place, "loop", "expected true or false, got " + j["loop"].dump());
        s.loop = j["loop"].get<bool>();
    }
    if (j.contains("duration_s")) s.duration = seconds_value(j["duration_s"], place, "duration_s");
    if (!j.contains("steps") || !j["steps"].is_array() || j["steps"].empty())
        throw ScenarioError(place, "steps",
                            "expected an array of at least one step ({\"at_s\": 0, \"set\": "
                            "{\"mean_delay_us\": 10000}}, ...)");
    const json& steps = j["steps"];
    if (steps.size() > kMaxScenarioSteps)
        throw ScenarioError(
            place, "steps",
            std::to_string(steps.size()) + " steps; at most " + std::to_string(kMaxScenarioSteps));
    DurationNs last = 0;
    for (std::size_t k = 0; k < steps.size(); ++k)
        s.steps.push_back(step_from_json(steps, k, last, place, dir));
    check_duration(s, place, j.contains("duration_s"));
    return s;
}

json scenario_to_json(const Scenario& s) {
    json steps = json::array();
    for (const ScenarioStep& st : s.steps) {
        json step = {{"at_s", static_cast<double>(st.at) / kNsPerSec}};
        if (st.ramp) step["until_s"] = static_cast<double>(st.until) / kNsPerSec;
        json body;
        if (st.dir[0] == st.dir[1]) {
            body = change_to_json(st.dir[0]);
        } else {
            body = json::object();
            for (int d = 0; d < 2; ++d)
                if (!st.dir[d].empty()) body[kDirectionKeys[d]] = change_to_json(st.dir[d]);
        }
        step[st.ramp ? "ramp" : "set"] = std::move(body);
        if (!st.class_name.empty()) step["class"] = st.class_name;
        if (!st.note.empty()) step["note"] = st.note;
        steps.push_back(std::move(step));
    }
    return {{"name", s.name},
            {"description", s.description},
            {"source", s.source},
            {"loop", s.loop},
            {"duration_s", static_cast<double>(s.duration) / kNsPerSec},
            {"steps", std::move(steps)}};
}

namespace {

// A CSV scenario, line by line: '#' lines (metadata "# key: value", or comments), the
// header (time_s, then link parameters' keys, each optionally prefixed a_to_b. or b_to_a.),
// then one step per row.
class CsvScenarioReader {
  public:
    CsvScenarioReader(const std::string& place, const std::string& dir)
        : place_(place), dir_(dir) {}

    // Line n (from 1) of the file.
    void line(std::size_t n, const std::string& text) {
        const std::string at = place_ + ":" + std::to_string(n);
        const std::string_view t = detail::trim_blanks(text);
        if (t.empty()) return;
        if (t.front() == '#') {
            meta(t.substr(1), at);
            return;
        }
        const std::vector<std::string> cells = split_csv(t);
        if (header_.empty())
            read_header(cells, at);
        else
            row(cells, n, at);
    }

    Scenario finish(const std::istream& in) {
        if (in.bad()) throw ScenarioError(place_, "", "read error");
        if (header_.empty()) throw ScenarioError(place_, "", "empty: no header line (time_s,...)");
        if (s_.steps.empty()) throw ScenarioError(place_, "", "no rows after the header");
        if (!duration_given_) {
            // Each row holds until the next; the last as long as the one before it (1 s if
            // alone).
            const std::size_t k = s_.steps.size();
            s_.duration =
                s_.steps[k - 1].at + (k > 1 ? s_.steps[k - 1].at - s_.steps[k - 2].at : kNsPerSec);
            duration_given_ = true;
        }
        check_duration(s_, place_, duration_given_);
        return std::move(s_);
    }

  private:
    // A '#' line: "key: value" for the scenario's name, description, source, loop or
    // duration_s; anything else is a comment.
    void meta(std::string_view line, const std::string& at) {
        const std::string_view m = detail::trim_blanks(line);
        const std::size_t colon = m.find(':');
        if (colon == std::string_view::npos) return;  // a comment
        const std::string key(detail::trim_blanks(m.substr(0, colon)));
        const std::string value(detail::trim_blanks(m.substr(colon + 1)));
        if (key == "name") {
            s_.name = value;
        } else if (key == "description") {
            s_.description = value;
        } else if (key == "source") {
            s_.source += (s_.source.empty() ? "" : " ") + value;
        } else if (key == "loop") {
            if (value != "true" && value != "false")
                throw ScenarioError(at, "loop", "allowed true, false");
            s_.loop = value == "true";
        } else if (key == "duration_s") {
            const auto x = parse_number(value);
            if (!x) throw ScenarioError(at, "duration_s", "not a number of seconds");
            s_.duration = seconds_value(json(*x), at, "duration_s");
            duration_given_ = true;
        }
    }

    void read_header(const std::vector<std::string>& cells, const std::string& at) {
        header_ = cells;
        // The header's text is named only once it is known to be a key: linkemd reads files
        // named by its clients, and an error must not show what a file that is no scenario
        // holds.
        if (header_.front() != "time_s")
            throw ScenarioError(at, "column 1",
                                "the first column must be time_s (seconds since the start), "
                                "then link parameters' keys, e.g. "
                                "time_s,mean_delay_us,jitter_us,rate_bps,loss_probability");
        for (std::size_t c = 1; c < header_.size(); ++c)
            add_column(c, at);
        if (columns_.empty())
            throw ScenarioError(at, "",
                                "no parameter columns after time_s, e.g. "
                                "time_s,mean_delay_us,rate_bps");
    }

    // Header column c (from 0): its direction and key.
    void add_column(std::size_t c, const std::string& at) {
        std::string key = header_[c];
        int d = -1;
        for (int k = 0; k < 2; ++k)
            if (key.starts_with(std::string(kDirectionKeys[k]) + ".")) {
                d = k;
                key = key.substr(std::strlen(kDirectionKeys[k]) + 1);
            }
        if (!link_param_flag(key)) {
            std::string known;
            for (const LinkParamFlag& f : link_param_flags())
                known += (known.empty() ? "" : ", ") + f.key;
            throw ScenarioError(at, "column " + std::to_string(c + 1),
                                "not a link parameter's key; allowed time_s first, then "
                                "link parameters' keys (" +
                                    known + "), each optionally prefixed a_to_b. or b_to_a.");
        }
        for (const auto& [dd, kk] : columns_)
            if (dd == d && kk == key)
                throw ScenarioError(at, header_[c], "the column appears twice");
        columns_.emplace_back(d, key);
        for (int k = 0; k < 2; ++k) {
            if (d != -1 && d != k) continue;
            if (key == "rate_bps") dir_has_rate_[k] = true;
            if (key == "loss_probability") dir_has_loss_[k] = true;
        }
        limiter_column_ = limiter_column_ || key == "limiter";
        loss_model_column_ = loss_model_column_ || key == "loss_model";
    }

    // A row: one step at its time_s, setting the keys of its non-empty cells.
    void row(const std::vector<std::string>& cells, std::size_t n, const std::string& at) {
        if (cells.size() != header_.size())
            throw ScenarioError(at, "",
                                std::to_string(cells.size()) + " cells; the header has " +
                                    std::to_string(header_.size()));
        if (s_.steps.size() == kMaxScenarioSteps)
            throw ScenarioError(at, "", "more than " + std::to_string(kMaxScenarioSteps) + " rows");
        const auto time = parse_number(cells[0]);
        if (!time) throw ScenarioError(at, "time_s", "not a number of seconds");
        ScenarioStep step;
        step.where = "line " + std::to_string(n);
        step.at = seconds_value(json(*time), at, "time_s");
        step.until = step.at;
        if (step.at < last_ || (!s_.steps.empty() && step.at == last_))
            throw ScenarioError(at, "time_s",
                                num(static_cast<double>(step.at) / kNsPerSec) +
                                    " s is not after the row before (" +
                                    num(static_cast<double>(last_) / kNsPerSec) +
                                    " s); rows come in increasing time order");
        last_ = step.at;
        json set = row_values(cells, at);
        // A rate needs a limiter, a loss probability a loss model: the first row adds them
        // where the file has no column for them.
        if (s_.steps.empty()) {
            for (int k = 0; k < 2; ++k) {
                if (dir_has_rate_[k] && !limiter_column_)
                    set[kDirectionKeys[k]]["limiter"] = "spacer";
                if (dir_has_loss_[k] && !loss_model_column_)
                    set[kDirectionKeys[k]]["loss_model"] = "bernoulli";
            }
        }
        try {
            step.dir = changes_from_json(set, at, "", dir_);
        } catch (const ScenarioError& e) {
            // The path inside the row's object ("a_to_b.jitter_us" or ".jitter_us"): name the
            // column.
            std::string f = e.field();
            if (f.starts_with(".")) f = f.substr(1);
            throw ScenarioError(at, f, e.message());
        }
        // A step that sets nothing has no JSON form ("set": {} is refused there too).
        if (step.dir[0].empty() && step.dir[1].empty())
            throw ScenarioError(at, "",
                                "no value: a row gives at least one column besides time_s "
                                "(leave the row out to keep the values before it)");
        s_.steps.push_back(std::move(step));
    }

    // A row's non-empty cells as a set_link object (layered: the keys of a column for one
    // direction under that direction's key).
    json row_values(const std::vector<std::string>& cells, const std::string& at) const {
        json set = json::object();
        for (std::size_t c = 1; c < cells.size(); ++c) {
            if (cells[c].empty()) continue;
            const auto& [d, key] = columns_[c - 1];
            const auto i = static_cast<std::size_t>(link_param_index(key));
            json value;
            if (link_param_is_number(i)) {
                const auto x = parse_number(cells[c]);
                if (!x) throw ScenarioError(at, header_[c], "not a number (in the key's unit)");
                value = link_param_is_integer(i) && *x >= 0 && *x == std::floor(*x) && *x < 1.8e19
                            ? json(static_cast<std::uint64_t>(*x))
                            : json(*x);
            } else {
                value = cells[c];
            }
            if (d == -1)
                set[key] = value;
            else
                set[kDirectionKeys[d]][key] = value;
        }
        return set;
    }

    const std::string& place_;
    const std::string& dir_;
    Scenario s_;
    bool duration_given_ = false;
    std::vector<std::string> header_;
    // Per column: the direction it gives (0, 1, or -1 for both) and the key.
    std::vector<std::pair<int, std::string>> columns_;
    bool dir_has_rate_[2] = {false, false}, dir_has_loss_[2] = {false, false};
    bool limiter_column_ = false, loss_model_column_ = false;
    DurationNs last_ = 0;
};

}  // namespace

Scenario scenario_from_csv(std::istream& in, const std::string& place, const std::string& dir) {
    CsvScenarioReader reader(place, dir);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line))
        reader.line(++n, line);
    return reader.finish(in);
}

Scenario read_scenario_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ScenarioError(path, "", std::string("cannot open: ") + std::strerror(errno));
    const std::string dir = std::filesystem::path(path).parent_path().string();
    Scenario s;
    if (path.ends_with(".csv")) {
        s = scenario_from_csv(in, path, dir.empty() ? "." : dir);
    } else {
        json j;
        try {
            j = json::parse(in);
        } catch (const json::parse_error& e) {
            // nlohmann's message names the line and column, and then what it read there,
            // which is left out (see scenario_from_csv).
            std::string what = e.what();
            const std::size_t p = what.find("parse error");
            if (p != std::string::npos) what = what.substr(p);
            const std::size_t read = what.find("; last read");
            if (read != std::string::npos) what = what.substr(0, read);
            throw ScenarioError(path, "", "not valid JSON: " + what);
        }
        s = scenario_from_json(j, path, dir.empty() ? "." : dir);
    }
    if (s.name.empty()) s.name = stem(path);
    return s;
}

const std::vector<BuiltinScenario>& builtin_scenarios() {
    static const std::vector<BuiltinScenario> kAll = [] {
        std::vector<BuiltinScenario> v;
        for (std::size_t i = 0; i < detail::kBuiltinScenarioCount; ++i)
            v.push_back({detail::kBuiltinScenarios[i].name, detail::kBuiltinScenarios[i].text});
        return v;
    }();
    return kAll;
}

std::optional<Scenario> builtin_scenario(std::string_view name) {
    for (const BuiltinScenario& b : builtin_scenarios())
        if (b.name == name) {
            Scenario s = scenario_from_json(json::parse(b.text), "built-in scenario " + b.name);
            if (s.name.empty()) s.name = b.name;
            return s;
        }
    return std::nullopt;
}

std::string builtin_scenario_names() {
    std::string s;
    for (const BuiltinScenario& b : builtin_scenarios())
        s += (s.empty() ? "" : ", ") + b.name;
    return s;
}

Scenario scenario_by_name_or_path(const std::string& name_or_path) {
    std::error_code ec;
    if (!std::filesystem::exists(name_or_path, ec))
        if (auto b = builtin_scenario(name_or_path)) return *b;
    if (!std::filesystem::exists(name_or_path, ec) && name_or_path.find('/') == std::string::npos &&
        name_or_path.find('.') == std::string::npos)
        throw ScenarioError(name_or_path, "",
                            "no such file, and no built-in scenario of that name; built-in: " +
                                builtin_scenario_names());
    return read_scenario_file(name_or_path);
}

ScenarioTracks compile_scenario(const Scenario& s, const LinkConfig& base, unsigned directions,
                                const std::string& place) {
    try {
        return compile(s, base, directions);
    } catch (const ParamError& e) {
        // "line 12.a_to_b.jitter_us" (a CSV's step) -> "place:12", "a_to_b.jitter_us".
        const std::string& f = e.field();
        if (f.starts_with("line ")) {
            const std::size_t dot = f.find('.');
            throw ScenarioError(place + ":" + f.substr(5, dot - 5),
                                dot == std::string::npos ? "" : f.substr(dot + 1), e.message());
        }
        throw ScenarioError(place, f, e.message());
    }
}

}  // namespace linkem
