// docs/glossary.md against the code's own tables: every name a user or client can meet (the
// link fields and their flags, the traffic flags, the protocol's methods, topics, error
// codes and direction keys, the drop causes, and every key the protocol's codecs write) must
// be in the glossary, and no name the glossary retires may come back. The names are generated from
// the same tables and codecs the programs use, so a new key without a glossary entry fails
// here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/classes.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/counters.hpp"
#include "linkem/link_flags.hpp"
#include "linkem/link_params.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/messages.hpp"
#include "linkem/scenario_file.hpp"
#include "linkem/stats.hpp"
#include "linkem/telemetry_json.hpp"
#include "linkem/traffic_flags.hpp"
#include "linkem/traffic_json.hpp"

namespace linkem {
namespace {

using nlohmann::json;

std::string glossary_text() {
    std::ifstream in(LINKEM_GLOSSARY_PATH);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Every `name` in backticks in the glossary, outside its "Retired names" section.
struct Glossary {
    std::set<std::string> names, retired;
    std::string text;
};

Glossary read_glossary() {
    Glossary g;
    g.text = glossary_text();
    const std::size_t cut = g.text.find("## Retired names");
    const std::regex tick("`([^`]+)`");
    auto collect = [&](const std::string& part, std::set<std::string>& into) {
        for (std::sregex_iterator it(part.begin(), part.end(), tick), end; it != end; ++it) {
            std::string n = (*it)[1];
            // "--a-to-b-jitter DURATION" -> "--a-to-b-jitter"; "{count, ...}" stays whole.
            if (n.rfind("--", 0) == 0 && n.find(' ') != std::string::npos)
                n = n.substr(0, n.find(' '));
            into.insert(n);
        }
    };
    collect(g.text.substr(0, cut), g.names);
    if (cut == std::string::npos) return g;
    // The retired names are the first column of the section's table ("| retired | now |").
    std::istringstream lines(g.text.substr(cut));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("| `", 0) != 0) continue;
        collect(line.substr(0, line.find('|', 1)), g.retired);
    }
    return g;
}

/// An event with every kind-specific key set (docs/protocol.md, the event table).
proto::Event every_event() {
    proto::Event e = proto::Event::info("scenario_step", "m");
    e.source = e.direction = e.port = e.method = e.code = e.path = e.name = e.action = e.state =
        e.note = e.file = e.stop_reason = e.error = "x";
    e.params_generation = e.stalls = e.stall_ns = e.longest_stall_ns = e.step = e.repeat =
        e.records = e.bytes = e.capture_missed = 1;
    e.step_t_ns = 1;
    e.link_up = true;
    e.position_s = e.at_s = e.until_s = 1.0;
    e.traffic = TrafficConfig{};
    e.set = e.ramp = proto::LinkUpdate{};
    return e;
}

void keys_of(const json& j, std::set<std::string>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            out.insert(it.key());
            keys_of(it.value(), out);
        }
    } else if (j.is_array()) {
        for (const json& e : j)
            keys_of(e, out);
    }
}

/// A scenario with every kind of step (the scenario file's keys, in get_scenario's result).
Scenario full_scenario() {
    return scenario_from_json(json::parse(R"({"name": "g", "description": "d", "source": "s",
        "loop": true, "duration_s": 10, "steps": [
        {"at_s": 0, "set": {"mean_delay_us": 1000}, "note": "n"},
        {"at_s": 1, "until_s": 2, "ramp": {"b_to_a": {"mean_delay_us": 2000}}}]})"),
                              "glossary");
}

/// Every key linkemd writes: every message of the protocol (linkem/messages.hpp), with every
/// optional part present, as linkemd encodes it.
std::set<std::string> protocol_keys() {
    std::set<std::string> keys;
    proto::StatsMessage stats;
    stats.stats.directions = 2;
    stats.stats.ports = 2;
    stats.stats.dir[0].traffic.present = true;
    stats.stats.dir[0].traffic.delay.add(5);
    stats.scenario = proto::ScenarioPosition{};
    stats.stats.classes.push_back(ClassStats{"default", ClassAction::emulate, {}});
    keys_of(proto::to_json(stats), keys);
    proto::DelayMessage delay;
    DirectionDelay& d = delay.dir[0];
    d.samples.push_back({1, 2, 3, 4, 1});  // class_id: with traffic classes
    d.delay.add(5);
    d.delay.add(7);
    d.lateness.add(1);
    d.wait.merge(WaitSums{1, 2, 3});
    d.params_generation = 1;
    d.has_measured = true;
    d.measured.push_back({1, 2});
    d.measured_delay.add(2);
    keys_of(proto::to_json(delay), keys);
    keys_of(proto::to_json(every_event()), keys);
    proto::Hello hello;
    hello.directions = 2;
    hello.ports.push_back({"a", "net_null0", true, 10000});
    keys_of(proto::to_json(hello), keys);
    proto::LinkState link{1, 2, {}, true, std::vector<std::string>{"port_a"}};
    keys_of(proto::to_json(link), keys);
    keys_of(proto::to_json(proto::SavedConfig{}), keys);
    keys_of(proto::to_json(proto::TrafficState{true, {}, 1, 2}), keys);
    proto::ScenarioStatus scenario;
    scenario.loaded = true;
    scenario.path = "/x.json";
    scenario.origin_ns = 1;
    scenario.scenario = full_scenario();
    keys_of(proto::to_json(scenario), keys);
    capture::Status capture;
    capture.settings.file = "/x.pcapng";
    keys_of(proto::to_json(capture), keys);  // with its settings: capture_start's params
    // what clients send
    keys_of(proto::to_json(proto::HelloParams{"linkemctl"}), keys);
    proto::LinkUpdate update;
    update.class_name = "voip";
    update.classes = std::vector<TrafficClass>{};
    keys_of(proto::to_json(update), keys);
    keys_of(proto::to_json(proto::LoadScenario{full_scenario(), "/x.json", "step-response"}), keys);
    keys_of(proto::to_json(proto::ScenarioPositionParams{1.0}), keys);
    keys_of(proto::to_json(proto::TrafficUpdate::whole(TrafficConfig{})), keys);
    keys_of(to_json(TrafficConfig{}), keys);
    keys_of(to_json(LinkParams{}), keys);
    keys_of(link_params_schema(), keys);
    keys.erase("a");  // ports.a / ports.b: the port keys, checked below with kPortNames
    keys.erase("b");
    return keys;
}

/// Keys of link_params_schema()'s JSON-Schema vocabulary, not linkem's.
const std::set<std::string> kSchemaWords = {"type", "default", "help", "values",
                                            "min",  "max",     "unit"};

TEST(Glossary, NamesEveryLinkFieldAndFlag) {
    const Glossary g = read_glossary();
    ASSERT_FALSE(g.names.empty()) << "cannot read " << LINKEM_GLOSSARY_PATH;
    for (const LinkParamField& f : link_param_fields()) {
        EXPECT_TRUE(g.names.count(f.key))
            << "link field `" << f.key << "` is not in docs/glossary.md";
        for (const std::string& v : f.values)
            EXPECT_TRUE(g.names.count(v))
                << f.key << " value `" << v << "` is not in docs/glossary.md";
    }
    for (const LinkParamFlag& f : link_param_flags())
        EXPECT_TRUE(g.names.count("--" + f.flag))
            << "flag `--" << f.flag << "` is not in docs/glossary.md";
}

/// The "Link parameters" table's rows by JSON key: the "GUI label" and "shown in" columns.
struct LinkRow {
    std::string label, shown;
};

std::string trim(std::string t) {
    const auto b = t.find_first_not_of(' ');
    const auto e = t.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
}

std::map<std::string, LinkRow> link_rows(const std::string& text) {
    std::map<std::string, LinkRow> rows;
    const std::size_t from = text.find("## Link parameters");
    const std::size_t to = text.find("\n## ", from + 1);
    std::istringstream lines(text.substr(from, to - from));
    std::vector<std::string> head;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("|", 0) != 0) continue;
        std::vector<std::string> cells;
        std::istringstream cs(line.substr(1));
        for (std::string c; std::getline(cs, c, '|');)
            cells.push_back(trim(c));
        if (head.empty()) {
            head = cells;
            continue;
        }
        auto column = [&](const char* name) -> std::string {
            for (std::size_t i = 0; i < head.size() && i < cells.size(); ++i)
                if (head[i] == name) return cells[i];
            return "?";
        };
        const std::string key = column("JSON key");
        if (key.size() < 2 || key.front() != '`') continue;  // the |---| line
        rows[key.substr(1, key.size() - 2)] = {column("GUI label"), column("shown in")};
    }
    return rows;
}

// The GUI's label and unit of each link field are the glossary's (its "GUI label" and "shown
// in" columns; "—": no control, or no unit), so that the table and the page cannot drift.
TEST(Glossary, GivesEachLinkFieldsGuiLabelAndUnit) {
    const std::map<std::string, LinkRow> rows = link_rows(glossary_text());
    ASSERT_FALSE(rows.empty()) << "no '## Link parameters' table in " << LINKEM_GLOSSARY_PATH;
    for (const LinkParamField& f : link_param_fields()) {
        const auto it = rows.find(f.key);
        ASSERT_NE(it, rows.end()) << "link field `" << f.key
                                  << "` has no row of its own in the Link parameters table";
        EXPECT_EQ(it->second.label, f.label.empty() ? "—" : f.label_text())
            << f.key << ": the GUI label in docs/glossary.md and the field table differ";
        EXPECT_EQ(it->second.shown, f.shown.name.empty() ? "—" : f.shown.name)
            << f.key << ": the unit shown in docs/glossary.md and the field table differ";
    }
    EXPECT_EQ(rows.size(), link_param_fields().size()) << "a row names no link field";
}

TEST(Glossary, NamesEveryTrafficFlagAndKey) {
    const Glossary g = read_glossary();
    for (const TrafficFlag& f : traffic_flags()) {
        EXPECT_TRUE(g.names.count(f.key))
            << "traffic key `" << f.key << "` is not in docs/glossary.md";
        EXPECT_TRUE(g.names.count(f.flag))
            << "traffic flag `" << f.flag << "` is not in docs/glossary.md";
    }
    for (TrafficPattern p : {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine})
        EXPECT_TRUE(g.names.count(std::string(to_string(p)))) << to_string(p);
}

TEST(Glossary, NamesEveryMethodTopicErrorAndDirection) {
    const Glossary g = read_glossary();
    for (const proto::MethodSpec& m : proto::kMethods)
        EXPECT_TRUE(g.names.count(std::string(m.name)))
            << "method `" << m.name << "` is not in docs/glossary.md";
    for (const char* t : {proto::kTopicStats, proto::kTopicDelay, proto::kTopicEvent})
        EXPECT_TRUE(g.names.count(t)) << "topic `" << t << "` is not in docs/glossary.md";
    for (int c = 0; c <= static_cast<int>(proto::ErrorCode::failed); ++c) {
        const std::string n(proto::to_string(static_cast<proto::ErrorCode>(c)));
        EXPECT_TRUE(g.names.count(n)) << "error code `" << n << "` is not in docs/glossary.md";
    }
    for (const char* k : kDirectionKeys)
        EXPECT_TRUE(g.names.count(k)) << k;
    for (const char* k : kPortNames)
        EXPECT_TRUE(g.names.count(k)) << k;
}

// Every row of kDropCauses (linkem/counters.hpp) has its row in the glossary's "Drop causes"
// table, with the same name, counter, GUI label and meaning, and the table has no other row.
TEST(Glossary, NamesEveryDropCause) {
    const Glossary g = read_glossary();
    const std::size_t at = g.text.find("### Drop causes");
    ASSERT_NE(at, std::string::npos) << "docs/glossary.md has no '### Drop causes' section";
    const std::size_t end = g.text.find("\n#", at + 1);
    const std::string section = g.text.substr(at, end == std::string::npos ? end : end - at);
    for (const DropCauseInfo& c : kDropCauses) {
        EXPECT_TRUE(g.names.count(c.name))
            << "drop cause `" << c.name << "` is not in docs/glossary.md";
        EXPECT_TRUE(g.names.count(c.key)) << "counter `" << c.key << "` is not in docs/glossary.md";
        const std::string row = std::string("| `") + c.name + "` | `" + c.key + "` | " + c.label +
                                " | " + c.meaning + " |";
        EXPECT_NE(section.find(row + "\n"), std::string::npos)
            << "docs/glossary.md's \"Drop causes\" table has no row\n"
            << row;
    }
    std::size_t rows = 0;
    std::istringstream lines(section);
    for (std::string line; std::getline(lines, line);)
        rows += line.rfind("| `", 0) == 0;
    EXPECT_EQ(rows, kDropCauseCount)
        << "docs/glossary.md's \"Drop causes\" table has a row for a cause kDropCauses lacks";
}

TEST(Glossary, NamesEveryKeyTheProtocolWrites) {
    const Glossary g = read_glossary();
    for (const std::string& k : protocol_keys()) {
        if (kSchemaWords.count(k) || link_param_field(k)) continue;
        EXPECT_TRUE(g.names.count(k))
            << "the protocol writes `" << k << "`, which is not in docs/glossary.md";
    }
}

// The classes list (linkem/classes_json.hpp): every key its codec writes for a class with
// every match key, and every name its values take (actions, ethertypes, protocols, `link`).
TEST(Glossary, NamesEveryClassKeyAndValue) {
    const Glossary g = read_glossary();
    ClassMatch m;
    m.ethertype = kEthertypeIpv4;
    m.protocol = kProtocolUdp;
    m.a_net = m.b_net = IpPrefix{};
    m.a_port = m.b_port = PortRange{};
    m.vlan = 1;
    m.dscp = 1;
    TrafficClass c;
    c.name = "x";
    c.match = {m, m};
    c.shares_link_limiter = true;
    c.link.b_to_a.mean_delay = 1000;
    std::set<std::string> names = {"classes", kDefaultClassName};
    const json j = classes_to_json({c});
    keys_of(j, names);
    names.insert(j[0]["limiter"].get<std::string>());
    for (ClassAction a : {ClassAction::emulate, ClassAction::pass, ClassAction::drop})
        names.insert(std::string(to_string(a)));
    for (const NamedNumber& n : kEthertypeNames)
        names.insert(n.name);
    for (const NamedNumber& n : kProtocolNames)
        names.insert(n.name);
    for (const std::string& k : names) {
        if (link_param_field(k)) continue;
        EXPECT_TRUE(g.names.count(k))
            << "the classes list has `" << k << "`, which is not in docs/glossary.md";
        EXPECT_FALSE(g.retired.count(k)) << "retired name `" << k << "` is in use again";
    }
}

TEST(Glossary, RetiredNamesStayRetired) {
    const Glossary g = read_glossary();
    ASSERT_FALSE(g.retired.empty()) << "docs/glossary.md has no '## Retired names' section";
    std::set<std::string> used = protocol_keys();
    for (const LinkParamFlag& f : link_param_flags())
        used.insert("--" + f.flag);
    for (const TrafficFlag& f : traffic_flags()) {
        used.insert(f.key);
        used.insert(f.flag);
    }
    std::string help;
    for (const DropCauseInfo& c : kDropCauses) {
        used.insert(c.name);
        used.insert(c.key);
        help += std::string(c.label) + "\n" + c.meaning + "\n";
    }
    for (const LinkParamField& f : link_param_fields())
        help += f.help + "\n";
    for (const TrafficFlag& f : traffic_flags())
        help += f.help + "\n";
    for (const std::string& r : g.retired) {
        EXPECT_FALSE(g.names.count(r))
            << "`" << r << "` is both retired and in use in the glossary";
        EXPECT_FALSE(used.count(r)) << "retired name `" << r << "` is in use again";
        if (r.find(' ') != std::string::npos) {  // a phrase: no help text may use it
            EXPECT_EQ(help.find(r), std::string::npos) << "retired `" << r << "` is in a help text";
        }
    }
}

}  // namespace
}  // namespace linkem
