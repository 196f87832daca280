// linkem-sim --classes: class files, flows, their frames and the run per class and flow.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "class_report.hpp"
#include "class_sim.hpp"
#include "cli.hpp"
#include "flows.hpp"

namespace linkem::sim {
namespace {

using nlohmann::json;

// A UDP or TCP flow both ways between 10.0.0.1:a_port and 10.0.0.2:b_port.
json flow(const std::string& name, const std::string& protocol, int a_port, int b_port,
          double rate_bps = 100000) {
    return {{"name", name},         {"protocol", protocol},   {"a_addr", "10.0.0.1"},
            {"b_addr", "10.0.0.2"}, {"a_port", a_port},       {"b_port", b_port},
            {"rate_bps", rate_bps}, {"frame_size_bytes", 200}};
}

// The issue's example: the link 10 ms, voip (UDP to B's 5060-5061) 80 ms, ssh passes.
json voip_ssh_file() {
    return {{"mean_delay_us", 10000},
            {"classes", json::parse(R"([
                {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
                 "mean_delay_us": 80000},
                {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}])")},
            {"flows",
             {flow("call", "udp", 40000, 5060), flow("shell", "tcp", 50022, 22),
              flow("web", "tcp", 50080, 443)}}};
}

ClassRunResult run(const json& file, DurationNs duration = 2 * kNsPerSec) {
    ClassSimConfig cfg;
    cfg.file = class_file_from_json(file);
    cfg.duration = duration;
    return run_classes(cfg);
}

const FlowLaneResult& flow_result(const ClassRunResult& r, const std::string& name, unsigned d) {
    for (const FlowLaneResult& f : r.flows)
        if (f.flow == name && f.direction == d) return f;
    throw std::runtime_error("no result for flow " + name);
}

// The ParamError class_file_from_json gives for `file`; fails the test if it reads.
ParamError error_of(const json& file) {
    try {
        class_file_from_json(file);
    } catch (const ParamError& e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << file.dump();
    return ParamError("", "");
}

TEST(ClassSim, VoipGetsItsDelaySshPassesTheRestGetsTheLinks) {
    const ClassRunResult r = run(voip_ssh_file());
    for (unsigned d = 0; d < 2; ++d) {
        const FlowLaneResult& call = flow_result(r, "call", d);
        EXPECT_EQ(call.class_name, "voip");
        EXPECT_GT(call.packets_in, 100u);
        EXPECT_EQ(call.packets_out, call.packets_in);
        EXPECT_NEAR(call.mean_delay_us, 80000, 1);
        const FlowLaneResult& shell = flow_result(r, "shell", d);
        EXPECT_EQ(shell.class_name, "ssh");
        EXPECT_EQ(shell.packets_out, shell.packets_in);
        EXPECT_EQ(shell.mean_delay_us, 0);
        EXPECT_EQ(shell.max_delay_us, 0);
        const FlowLaneResult& web = flow_result(r, "web", d);
        EXPECT_EQ(web.class_name, "default");
        EXPECT_NEAR(web.mean_delay_us, 10000, 1);
    }
    // Per class and direction: ssh counted as passed, voip as emulated.
    for (const ClassLaneResult& c : r.classes) {
        if (c.name == "ssh") {
            EXPECT_EQ(c.passed, c.packets_in);
        }
        if (c.name == "voip") {
            EXPECT_EQ(c.passed, 0u);
        }
        EXPECT_EQ(c.packets_out, c.packets_in) << c.name;
    }
    // The ssh packets leave before voip's and web's that came earlier: they pass them.
    EXPECT_GT(r.direction[0].swaps, 0u);
    EXPECT_EQ(r.direction[0].packets_out, r.direction[0].packets_in);
}

TEST(ClassSim, ADropClassDropsAllItsPackets) {
    json file = voip_ssh_file();
    file["classes"].push_back({{"name", "web"}, {"match", {{"b_port", 443}}}, {"action", "drop"}});
    const ClassRunResult r = run(file);
    for (unsigned d = 0; d < 2; ++d) {
        const FlowLaneResult& web = flow_result(r, "web", d);
        EXPECT_EQ(web.class_name, "web");
        EXPECT_GT(web.packets_in, 100u);
        EXPECT_EQ(web.dropped, web.packets_in);
        EXPECT_EQ(web.packets_out, 0u);
    }
    for (const ClassLaneResult& c : r.classes)
        if (c.name == "web") {
            EXPECT_EQ(c.dropped_by_class, c.packets_in);
            EXPECT_EQ(c.packets_out, 0u);
        }
}

TEST(ClassSim, TheFirstClassThatMatchesWins) {
    json file = voip_ssh_file();
    // Both match the shell flow (TCP to B's port 22); the first in the list takes it.
    file["classes"] = json::parse(R"([
        {"name": "tcp-all", "match": {"protocol": "tcp"}, "mean_delay_us": 30000},
        {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}])");
    ClassRunResult r = run(file);
    EXPECT_EQ(flow_result(r, "shell", 0).class_name, "tcp-all");
    EXPECT_NEAR(flow_result(r, "shell", 0).mean_delay_us, 30000, 1);
    std::swap(file["classes"][0], file["classes"][1]);
    r = run(file);
    EXPECT_EQ(flow_result(r, "shell", 0).class_name, "ssh");
    EXPECT_EQ(flow_result(r, "web", 0).class_name, "tcp-all");
}

TEST(ClassSim, BToAPacketsCarryBsAddressAsSourceAndClassifyWithSidesSwapped) {
    json file = {{"classes", json::parse(R"([{"name": "lab",
                   "match": {"a_net": "10.1.0.0/16", "b_port": 22}, "mean_delay_us": 5000}])")},
                 {"flows", json::parse(R"([
                   {"name": "in", "direction": "b_to_a", "protocol": "tcp", "a_addr": "10.1.2.3",
                    "b_addr": "192.0.2.1", "a_port": 40000, "b_port": 22, "rate_bps": 50000},
                   {"name": "mirror", "direction": "b_to_a", "protocol": "tcp",
                    "a_addr": "192.0.2.1", "b_addr": "10.1.2.3", "a_port": 22,
                    "b_port": 40000, "rate_bps": 50000}])")}};
    const ClassFile cf = class_file_from_json(file);
    // The frame of a B->A packet: B's address and port are its source.
    const std::vector<std::uint8_t> frame = flow_frame(cf.flows[0], 1);
    const PacketKey k = parse_packet_key(frame.data(), frame.size());
    ASSERT_EQ(k.family, IpFamily::ipv4);
    EXPECT_EQ(k.protocol, kProtocolTcp);
    EXPECT_EQ(k.src[0], 192);
    EXPECT_EQ(k.dst[0], 10);
    EXPECT_EQ(k.src_port, 22);
    EXPECT_EQ(k.dst_port, 40000);
    const ClassRunResult r = run(file);
    EXPECT_EQ(flow_result(r, "in", 1).class_name, "lab");
    EXPECT_NEAR(flow_result(r, "in", 1).mean_delay_us, 5000, 1);
    // The same packets written with A and B exchanged are not the class's.
    EXPECT_EQ(flow_result(r, "mirror", 1).class_name, "default");
    EXPECT_EQ(r.direction[0].packets_in, 0u);
}

TEST(ClassSim, FramesCarryVlanDscpAndIpv6) {
    const ClassFile cf = class_file_from_json(json::parse(R"({"flows": [
        {"name": "v6", "protocol": "udp", "a_addr": "2001:db8::1", "b_addr": "2001:db8::2",
         "a_port": 1, "b_port": 2, "vlan": 100, "dscp": 46, "rate_bps": 1e6,
         "frame_size_bytes": 86},
        {"name": "arp", "ethertype": "arp", "rate_bps": 1e5, "frame_size_bytes": 64}]})"));
    std::vector<std::uint8_t> frame = flow_frame(cf.flows[0], 0);
    EXPECT_EQ(frame.size(), 82u);
    PacketKey k = parse_packet_key(frame.data(), frame.size());
    EXPECT_EQ(k.family, IpFamily::ipv6);
    EXPECT_EQ(k.ethertype, kEthertypeIpv6);
    EXPECT_EQ(k.vlan, 100);
    EXPECT_EQ(k.dscp, 46);
    EXPECT_EQ(k.src[15], 1);
    EXPECT_EQ(k.src_port, 1);
    EXPECT_EQ(k.dst_port, 2);
    frame = flow_frame(cf.flows[1], 1);
    k = parse_packet_key(frame.data(), frame.size());
    EXPECT_EQ(k.ethertype, kEthertypeArp);
    EXPECT_EQ(k.family, IpFamily::none);
}

TEST(ClassSim, ClassesSharingTheLinksSpacerShareOneBottleneck) {
    // Two flows of 8 Mbit/s each, in two classes with their own delays, through the link's
    // 10 Mbit/s spacer (backlog limit 30 000 B): together they get the 10 Mbit/s.
    const json file = json::parse(R"({
        "limiter": "spacer", "rate_bps": 10e6, "queue_limit_bytes": 30000,
        "classes": [
          {"name": "one", "match": {"b_port": 1000}, "mean_delay_us": 20000, "limiter": "link"},
          {"name": "two", "match": {"b_port": 2000}, "mean_delay_us": 50000, "limiter": "link"}],
        "flows": [
          {"name": "f1", "direction": "a_to_b", "protocol": "udp", "a_port": 9, "b_port": 1000,
           "rate_bps": 8e6, "frame_size_bytes": 1000},
          {"name": "f2", "direction": "a_to_b", "protocol": "udp", "a_port": 9, "b_port": 2000,
           "rate_bps": 8e6, "frame_size_bytes": 1000, "pattern": "poisson"}]})");
    const DurationNs duration = 5 * kNsPerSec;
    const ClassRunResult r = run(file, duration);
    const double bits = 8000.0 * static_cast<double>(r.direction[0].packets_out);
    // At most the rate over the arrivals plus the backlog drained after them (+ one frame).
    EXPECT_GE(bits, 10e6 * 5 * 0.995);
    EXPECT_LE(bits, 10e6 * 5 + 8 * 30000 + 8000);
    EXPECT_GT(r.direction[0].dropped, 0u);
    for (const ClassLaneResult& c : r.classes) {
        EXPECT_TRUE(c.shares_link_limiter) << c.name;
        EXPECT_GT(c.drops[DropCause::spacer], 0u) << c.name;
    }
    EXPECT_GE(flow_result(r, "f1", 0).min_delay_us, 20000);
    EXPECT_GE(flow_result(r, "f2", 0).min_delay_us, 50000);
}

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

TEST(ClassSim, SharingTheLinksTraceLimiterIsNotYetInLinkemSim) {
    const std::string trace = write_temp("classes_sim.trace", "1\n2\n3\n4\n");
    json file = json::parse(R"({"limiter": "trace",
        "classes": [{"name": "one", "match": {"b_port": 1}, "limiter": "link"}],
        "flows": [{"name": "f", "protocol": "udp", "a_port": 1, "b_port": 1, "rate_bps": 1e5}]})");
    file["trace_file"] = trace;
    const ParamError e = error_of(file);
    EXPECT_EQ(e.field(), "classes[0].limiter");
    EXPECT_NE(std::string(e.what()).find("not yet in linkem-sim"), std::string::npos) << e.what();
    file["classes"][0].erase("limiter");  // the class's own (no) limiter: fine
    EXPECT_NO_THROW(class_file_from_json(file));
}

TEST(ClassSim, BadFlowsAreRefusedNamingTheFlowAndTheKey) {
    auto with_flow = [](json f) { return json{{"flows", json::array({std::move(f)})}}; };
    json f = flow("call", "udp", 1, 2);
    f["rate_bsp"] = 1;
    ParamError e = error_of(with_flow(f));
    EXPECT_EQ(e.field(), "flows[0].rate_bsp");
    EXPECT_NE(std::string(e.what()).find("flow 'call': unknown key; allowed"), std::string::npos)
        << e.what();

    f = flow("call", "udp", 1, 2);
    f["b_addr"] = "10.0.0.300";
    e = error_of(with_flow(f));
    EXPECT_EQ(e.field(), "flows[0].b_addr");
    EXPECT_NE(std::string(e.what()).find("flow 'call': '10.0.0.300' is not an IPv4 or IPv6"),
              std::string::npos)
        << e.what();

    f = flow("call", "udp", 1, 2);
    f.erase("rate_bps");
    e = error_of(with_flow(f));
    EXPECT_EQ(e.field(), "flows[0].rate_bps");
    EXPECT_NE(std::string(e.what()).find("flow 'call': required"), std::string::npos) << e.what();

    f = flow("call", "udp", 1, 2);
    f["rate_bps"] = 10;  // below the traffic's 1 kbit/s
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].rate_bps");

    f = flow("call", "udp", 1, 2);
    f.erase("b_port");
    e = error_of(with_flow(f));
    EXPECT_EQ(e.field(), "flows[0].b_port");
    EXPECT_NE(std::string(e.what()).find("required with protocol 'udp'"), std::string::npos);

    f = flow("call", "udp", 1, 2);
    f["b_port"] = "10-20";
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].b_port");

    f = flow("call", "udp", 1, 2);
    f["a_addr"] = "10.0.0.0/8";
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].a_addr");

    f = flow("call", "udp", 1, 2);
    f["b_addr"] = "2001:db8::2";
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].b_addr");

    f = flow("call", "udp", 1, 2);
    f["direction"] = "up";
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].direction");

    f = flow("call", "tcp", 1, 2);
    f["a_addr"] = "2001:db8::1";
    f["b_addr"] = "2001:db8::2";
    f["vlan"] = 7;
    f["frame_size_bytes"] = 64;  // 14 + 4 + 40 + 20 + 4 = 82 needed
    e = error_of(with_flow(f));
    EXPECT_EQ(e.field(), "flows[0].frame_size_bytes");
    EXPECT_NE(std::string(e.what()).find("allowed at least 82"), std::string::npos) << e.what();

    f = json{{"name", "arp"}, {"ethertype", "arp"}, {"b_port", 1}, {"rate_bps", 1e5}};
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].b_port");

    f = flow("Call", "udp", 1, 2);
    EXPECT_EQ(error_of(with_flow(f)).field(), "flows[0].name");

    e = error_of(json{{"flows", {flow("a", "udp", 1, 2), flow("a", "udp", 3, 4)}}});
    EXPECT_EQ(e.field(), "flows[1].name");
}

TEST(ClassSim, BadFilesAreRefused) {
    ParamError e = error_of(json{{"mean_delay_us", 1000}});
    EXPECT_EQ(e.field(), "flows");
    EXPECT_NE(std::string(e.what()).find("makes no traffic of its own"), std::string::npos);
    EXPECT_EQ(error_of(json{{"flows", json::array()}}).field(), "flows");
    json file = voip_ssh_file();
    file["flow"] = file["flows"];
    EXPECT_EQ(error_of(file).field(), "flow");
    file = voip_ssh_file();
    file["classes"][0]["match"]["b_port"] = "6000-5000";
    e = error_of(file);
    EXPECT_EQ(e.field(), "classes[0].match.b_port");
    file = voip_ssh_file();
    file["b_to_a"] = {{"jitter_us", -1}};
    EXPECT_EQ(error_of(file).field(), "b_to_a.jitter_us");
}

TEST(ClassSim, LinkFlagsGoOverTheFilesLink) {
    ClassFile f = class_file_from_json(voip_ssh_file(), {{"mean_delay_us", 3000}});
    EXPECT_EQ(f.link.a_to_b.mean_delay, 3 * kNsPerMs);
    EXPECT_EQ(f.link.b_to_a.mean_delay, 3 * kNsPerMs);
    EXPECT_EQ(f.link.a_to_b.seed, 1u);
    EXPECT_EQ(f.classes[0].link.a_to_b.mean_delay, 80 * kNsPerMs);
}

TEST(ClassSim, SameSeedSameResult) {
    json file = voip_ssh_file();
    file["jitter_us"] = 2000;
    file["flows"][2]["pattern"] = "poisson";
    const json a = class_report_json(ClassSimConfig{class_file_from_json(file), kNsPerSec},
                                     run(file, kNsPerSec));
    const json b = class_report_json(ClassSimConfig{class_file_from_json(file), kNsPerSec},
                                     run(file, kNsPerSec));
    EXPECT_EQ(a["flows"], b["flows"]);
    EXPECT_EQ(a["classes"], b["classes"]);
}

TEST(ClassSimCli, RunsAFileAndReportsEachClassAndFlow) {
    const std::string path = write_temp("classes_cli.json", voip_ssh_file().dump());
    std::ostringstream out, err;
    const char* argv[] = {"linkem-sim", "--classes", path.c_str(), "--duration", "1s", "--json"};
    ASSERT_EQ(run_cli(6, argv, out, err), 0) << err.str();
    const json j = json::parse(out.str());
    EXPECT_EQ(j["config"]["classes"].size(), 2u);
    EXPECT_EQ(j["flows"].size(), 6u);  // three flows both ways
    for (const json& c : j["classes"])
        for (const char* k : {"packets_in", "packets_out", "drops_loss", "drops_class", "passed",
                              "mean_delay_us", "jitter_us"})
            EXPECT_TRUE(c.contains(k)) << k;
    std::ostringstream table;
    const char* argv2[] = {"linkem-sim", "--classes", path.c_str(), "--duration", "1s"};
    ASSERT_EQ(run_cli(5, argv2, table, err), 0) << err.str();
    EXPECT_NE(table.str().find("voip"), std::string::npos);
    EXPECT_NE(table.str().find("call"), std::string::npos);
}

TEST(ClassSimCli, RefusesTrafficFlagsAndBadFilesWithExitCode2) {
    const std::string path = write_temp("classes_cli2.json", voip_ssh_file().dump());
    std::ostringstream out, err;
    const char* argv[] = {"linkem-sim", "--classes", path.c_str(), "--traffic-rate", "1Gbit"};
    EXPECT_EQ(run_cli(5, argv, out, err), 2);
    EXPECT_NE(err.str().find("--traffic-rate: not available with --classes"), std::string::npos)
        << err.str();
    const std::string bad = write_temp("classes_bad.json", R"({"flows": [{"name": "x"}]})");
    err.str("");
    const char* argv2[] = {"linkem-sim", "--classes", bad.c_str()};
    EXPECT_EQ(run_cli(3, argv2, out, err), 2);
    EXPECT_NE(err.str().find("field 'flows[0].rate_bps': flow 'x': required"), std::string::npos)
        << err.str();
}

std::string read_text(const char* path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every key linkem-sim --classes writes (a flow, the report's entries) and every value a
// flow's keys take by name is in docs/glossary.md, in backticks.
TEST(ClassSimDocs, TheGlossaryNamesEveryFlowAndReportKey) {
    const std::string text = read_text(LINKEM_GLOSSARY_PATH);
    std::set<std::string> glossary;
    const std::regex tick("`([^`]+)`");
    for (std::sregex_iterator it(text.begin(), text.end(), tick), end; it != end; ++it)
        glossary.insert((*it)[1]);
    json file = voip_ssh_file();
    file["flows"][0]["vlan"] = 1;
    ClassSimConfig cfg{class_file_from_json(file), kNsPerSec};
    const json report = class_report_json(cfg, run_classes(cfg));
    std::set<std::string> names = {"flows", "both", "a_to_b", "b_to_a"};
    for (const auto& [k, v] : report.items())
        names.insert(k);
    for (const char* part : {"classes", "flows"})
        for (const json& entry : report[part])
            for (const auto& [k, v] : entry.items())
                names.insert(k);
    for (const auto& [k, v] : report["directions"]["a_to_b"].items())
        names.insert(k);
    const json flow_json = to_json(cfg.file.flows[0]);
    for (const auto& [k, v] : flow_json.items())
        names.insert(k);
    for (const std::string& k : names)
        EXPECT_TRUE(glossary.count(k) || link_param_field(k))
            << "linkem-sim --classes writes `" << k << "`, which is not in docs/glossary.md";
}

// docs/simulation.md's class file is examples/classes/voip-ssh.json, and both read.
TEST(ClassSimDocs, TheExampleFileIsTheDocsAndReads) {
    const std::string doc = read_text(LINKEM_SIMULATION_DOC_PATH);
    const std::string example = read_text(LINKEM_CLASSES_EXAMPLE_PATH);
    ASSERT_FALSE(example.empty());
    EXPECT_NE(doc.find(example), std::string::npos)
        << "docs/simulation.md does not show examples/classes/voip-ssh.json as it is";
    const ClassFile f = class_file_from_json(json::parse(example));
    EXPECT_EQ(f.classes.size(), 3u);
    EXPECT_EQ(f.flows.size(), 4u);
}

}  // namespace
}  // namespace linkem::sim
