// The control server (backend/control) over real ZeroMQ sockets with a fake Backend: the
// envelope errors that only the server sees (parts, sizes, the REQ delimiter), the error
// replies of a Backend's ProtocolError and ParamError, request_refused events and the
// telemetry header, the start-up refusals of section 7, and CURVE with the ZAP handler.
// No DPDK: this runs under the sanitizer build too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "linkem/messages.hpp"
#include "server.hpp"

namespace linkem {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

class FakeBackend : public control::Backend {
  public:
    json handle(const proto::Request& r, const std::string& source) override {
        sources.push_back(source);
        if (r.method == "hello") return json{{"hello", true}};
        if (r.method == "get_link") return proto::link_to_json(link, 2);
        if (r.method == "set_link") {
            link = proto::apply_link_update(r.params, link, 2);  // ParamError: unchanged
            return proto::link_to_json(link, 2);
        }
        if (r.method == "get_stats") throw std::runtime_error("the backend broke");
        if (r.method == "shutdown")
            throw proto::ProtocolError(
                proto::Error{proto::ErrorCode::not_permitted, "shutdown is not allowed", ""});
        throw proto::ProtocolError(
            proto::Error{proto::ErrorCode::unavailable, "no " + r.method + " here", ""});
    }
    LinkConfig link;
    std::vector<std::string> sources;
};

std::string temp_dir() {
    char tmpl[] = "/tmp/linkem-server-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) throw std::runtime_error("mkdtemp failed");
    return d;
}

// A server on ipc:// endpoints in a temporary directory, served by its own thread.
class Running {
  public:
    explicit Running(control::ServerOptions o = {}, bool ipc = true) : dir_(temp_dir()) {
        if (ipc) {
            o.control = "ipc://" + dir_ + "/control";
            o.telemetry = "ipc://" + dir_ + "/telemetry";
        }
        server = std::make_unique<control::Server>(
            o, backend, "0123456789abcdef", [] { return TimeNs{42}; },
            [this](const std::string& w) { warnings.push_back(w); });
        thread_ = std::thread([this] {
            while (!stop_) {
                server->serve(5ms);
                if (publish_) {
                    server->publish(proto::kTopicStats, json{{"x", 1}});
                    publish_ = false;
                }
            }
        });
    }
    ~Running() {
        stop_ = true;
        thread_.join();
        server.reset();
        fs::remove_all(dir_);
    }
    void publish_stats() {
        publish_ = true;
        while (publish_)
            std::this_thread::sleep_for(1ms);
    }
    FakeBackend backend;
    std::vector<std::string> warnings;
    std::unique_ptr<control::Server> server;

  private:
    std::string dir_;
    std::atomic<bool> stop_{false}, publish_{false};
    std::thread thread_;
};

struct Client {
    zmq::context_t ctx{1};
    zmq::socket_t sock;
    Client(const std::string& endpoint, zmq::socket_type type = zmq::socket_type::dealer)
        : sock(ctx, type) {
        sock.set(zmq::sockopt::linger, 0);
        sock.connect(endpoint);
    }
    void send(const std::vector<std::string>& parts) {
        std::vector<zmq::const_buffer> b;
        for (const auto& p : parts)
            b.push_back(zmq::buffer(p));
        zmq::send_multipart(sock, b);
    }
    // The reply's parts (without a leading empty delimiter), or none after `timeout`.
    std::vector<std::string> recv(std::chrono::milliseconds timeout = 5000ms) {
        zmq::pollitem_t item{sock.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, timeout) <= 0) return {};
        std::vector<zmq::message_t> msgs;
        (void)zmq::recv_multipart(sock, std::back_inserter(msgs));
        std::vector<std::string> out;
        for (auto& m : msgs)
            out.push_back(m.to_string());
        return out;
    }
    json call(const std::string& body) {
        send({body});
        const auto r = recv();
        if (r.empty()) return json{{"no_reply", true}};
        return json::parse(r.back());
    }
};

TEST(ControlServer, AnswersDealerAndReqClientsInTheirShape) {
    Running s;
    Client dealer(s.server->control_endpoint());
    const json r = dealer.call(R"({"v":1,"id":1,"method":"hello"})");
    EXPECT_EQ(r, (json{{"v", 1}, {"id", 1}, {"result", {{"hello", true}}}}));
    // A DEALER that sends the empty delimiter gets it back.
    dealer.send({"", R"({"v":1,"id":"d","method":"hello"})"});
    const auto parts = dealer.recv();
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0], "");
    EXPECT_EQ(json::parse(parts[1])["id"], "d");
    Client req(s.server->control_endpoint(), zmq::socket_type::req);
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(req.call(R"({"v":1,"id":5,"method":"get_link"})")["id"], 5);
    EXPECT_EQ(s.backend.sources.size(), 5u);  // every request answered went to the backend
}

TEST(ControlServer, RefusesWhatOnlyTheServerSees) {
    Running s;
    Client c(s.server->control_endpoint());
    // More than one part after the envelope.
    c.send({R"({"v":1,"id":1,"method":"hello"})", R"({"v":1,"id":2,"method":"hello"})"});
    auto r = c.recv();
    ASSERT_EQ(r.size(), 1u);
    json e = json::parse(r[0]);
    EXPECT_EQ(e["error"]["code"], "invalid_request");
    EXPECT_TRUE(e["id"].is_null());
    EXPECT_NE(e["error"]["message"].get<std::string>().find("one message part"), std::string::npos);
    // An empty delimiter and nothing after it.
    c.send({""});
    r = c.recv();
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(json::parse(r.back())["error"]["code"], "invalid_request");
    // Above 64 KiB: invalid_request naming the limit.
    e = c.call(R"({"v":1,"id":3,"method":"hello","params":{"client":")" + std::string(70000, 'x') +
               "\"}}");
    EXPECT_EQ(e["error"]["code"], "invalid_request");
    EXPECT_NE(e["error"]["message"].get<std::string>().find("at most 65536"), std::string::npos);
    // hello's client name: a string of at most 64 characters.
    e = c.call(R"({"v":1,"id":4,"method":"hello","params":{"client":7}})");
    EXPECT_EQ(e["error"]["code"], "invalid_params");
    EXPECT_EQ(e["error"]["field"], "params.client");
    // The Backend's errors: ProtocolError keeps its code, ParamError is invalid_params with
    // the dotted field; the request's id is in both.
    e = c.call(R"({"v":1,"id":5,"method":"shutdown"})");
    EXPECT_EQ(
        e, (json{{"v", 1},
                 {"id", 5},
                 {"error", {{"code", "not_permitted"}, {"message", "shutdown is not allowed"}}}}));
    const json before = c.call(R"({"v":1,"id":6,"method":"get_link"})");
    e = c.call(
        R"({"v":1,"id":7,"method":"set_link","params":{"mean_delay_us":5,"a_to_b":{"jitter_us":-1}}})");
    EXPECT_EQ(e["id"], 7);
    EXPECT_EQ(e["error"]["code"], "invalid_params");
    EXPECT_EQ(e["error"]["field"], "a_to_b.jitter_us");
    EXPECT_EQ(c.call(R"({"v":1,"id":6,"method":"get_link"})"), before);
    e = c.call(R"({"v":1,"id":8,"method":"save_config"})");
    EXPECT_EQ(e["error"]["code"], "unavailable");
    // Anything else a Backend throws: `failed`, and the server goes on.
    e = c.call(R"({"v":1,"id":10,"method":"get_stats"})");
    EXPECT_EQ(e["id"], 10);
    EXPECT_EQ(e["error"]["code"], "failed");
    EXPECT_NE(e["error"]["message"].get<std::string>().find("the backend broke"),
              std::string::npos);
    // Still serving.
    EXPECT_TRUE(c.call(R"({"v":1,"id":9,"method":"hello"})").contains("result"));
}

TEST(ControlServer, AMessageAboveOneMebibyteDropsOnlyThatConnection) {
    Running s;
    {
        Client big(s.server->control_endpoint());
        big.send({std::string(2 << 20, 'x')});
        EXPECT_TRUE(big.recv(500ms).empty());
    }
    Client c(s.server->control_endpoint());
    EXPECT_TRUE(c.call(R"({"v":1,"id":1,"method":"hello"})").contains("result"));
}

TEST(ControlServer, PublishesHeadersAndRefusedRequests) {
    Running s;
    zmq::context_t ctx{1};
    zmq::socket_t sub(ctx, zmq::socket_type::sub);
    sub.set(zmq::sockopt::linger, 0);
    sub.set(zmq::sockopt::subscribe, "");
    sub.connect(s.server->telemetry_endpoint());
    Client c(s.server->control_endpoint());
    // Until the subscription is in force, publish and look.
    std::vector<zmq::message_t> m;
    for (int i = 0; i < 200 && m.empty(); ++i) {
        s.publish_stats();
        zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, 10ms) > 0) (void)zmq::recv_multipart(sub, std::back_inserter(m));
    }
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m[0].to_string(), "stats");
    const json first = json::parse(m[1].to_string());
    const auto hd = proto::decode<proto::Header>(first);
    EXPECT_EQ(hd.instance_id, "0123456789abcdef");
    EXPECT_EQ(hd.t_ns, 42);
    // The next stats message has the next seq.
    m.clear();
    s.publish_stats();
    for (int i = 0; i < 100 && m.empty(); ++i) {
        zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, 10ms) > 0) (void)zmq::recv_multipart(sub, std::back_inserter(m));
        if (!m.empty() && m[0].to_string() != "stats") m.clear();
    }
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(proto::decode<proto::Header>(json::parse(m[1].to_string())).seq, hd.seq + 1);
    // A refused request: a request_refused event with the client's hello name.
    const json hello = c.call(R"({"v":1,"id":1,"method":"hello","params":{"client":"tester"}})");
    c.call(R"({"v":1,"id":2,"method":"nope"})");
    json ev;
    for (int i = 0; i < 100 && ev.is_null(); ++i) {
        m.clear();
        zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
        if (zmq::poll(&item, 1, 20ms) > 0) (void)zmq::recv_multipart(sub, std::back_inserter(m));
        if (m.size() == 2 && m[0].to_string() == "event") ev = json::parse(m[1].to_string());
    }
    ASSERT_FALSE(ev.is_null());
    const auto e = proto::decode<proto::Event>(ev);
    EXPECT_EQ(e.kind, "request_refused");
    EXPECT_EQ(e.severity, "warning");
    EXPECT_EQ(e.source, std::optional<std::string>("tester"));
    EXPECT_EQ(e.code, std::optional<std::string>("unknown_method"));
    EXPECT_TRUE(hello.contains("result"));  // one request refused: the unknown method
    EXPECT_EQ(s.backend.sources.back(), "tester");
}

// The hello names are bounded: the client used longest ago is forgotten first, a client
// still talking keeps its name however many have said hello since.
TEST(ControlServer, ClientNamesForgetTheOneUsedLongestAgo) {
    control::ClientNames names(3);
    names.remember("a", "gui");
    names.remember("b", "ctl-1");
    names.remember("c", "ctl-2");
    ASSERT_NE(names.find("a"), nullptr);  // a used now: b is the oldest
    names.remember("d", "ctl-3");
    EXPECT_EQ(names.size(), 3u);
    EXPECT_EQ(names.find("b"), nullptr);
    ASSERT_NE(names.find("a"), nullptr);
    EXPECT_EQ(*names.find("a"), "gui");
    names.remember("c", "renamed");  // a second hello renames, adds nothing
    EXPECT_EQ(names.size(), 3u);
    EXPECT_EQ(*names.find("c"), "renamed");
    // Many short-lived clients: the table stays at its capacity and the busy one stays.
    control::ClientNames many;
    many.remember("long-lived", "linkem-gui");
    for (int i = 0; i < 10000; ++i) {
        many.remember("peer" + std::to_string(i), "linkemctl");
        if (i % 100 == 0) {
            ASSERT_NE(many.find("long-lived"), nullptr) << i;
        }
    }
    EXPECT_EQ(many.size(), control::ClientNames::kCapacity);
    EXPECT_EQ(*many.find("long-lived"), "linkem-gui");
    EXPECT_EQ(many.find("peer0"), nullptr);
}

TEST(ControlServer, LocalEndpoints) {
    for (const char* e : {"ipc:///tmp/x", "inproc://x", "tcp://127.0.0.1:7710", "tcp://127.3.4.5:1",
                          "tcp://localhost:7710", "tcp://[::1]:7710", "tcp://127.0.0.1:*"})
        EXPECT_TRUE(control::is_local_endpoint(e)) << e;
    for (const char* e : {"tcp://0.0.0.0:7710", "tcp://*:7710", "tcp://10.0.0.5:7710",
                          "tcp://eth0:7710", "tcp://128.0.0.1:1", "tcp://127.0.0.1.evil.com:1",
                          "udp://127.0.0.1:1", "tcp://127.0.0.1", "pgm://x"})
        EXPECT_FALSE(control::is_local_endpoint(e)) << e;
}

TEST(ControlServer, ANonLoopbackEndpointNeedsCurveOrInsecureListen) {
    FakeBackend b;
    control::ServerOptions o;
    o.control = "tcp://0.0.0.0:0";
    o.telemetry = "";
    std::vector<std::string> warned;
    auto warn = [&](const std::string& w) { warned.push_back(w); };
    try {
        control::Server s(
            o, b, "x", [] { return TimeNs{0}; }, warn);
        FAIL() << "bound without CURVE";
    } catch (const control::ServerError& e) {
        EXPECT_NE(std::string(e.what()).find("--insecure-listen"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("tcp://0.0.0.0:0"), std::string::npos) << e.what();
    }
    o.insecure_listen = true;
    control::Server s(
        o, b, "x", [] { return TimeNs{0}; }, warn);
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_NE(warned[0].find("warning"), std::string::npos);
    // One CURVE option without the other.
    control::ServerOptions half;
    half.control = "ipc:///tmp/linkem-never";
    half.telemetry = "";
    half.curve_secret = "/nonexistent";
    EXPECT_THROW(control::Server(
                     half, b, "x", [] { return TimeNs{0}; }, warn),
                 control::ServerError);
}

// A second server on an ipc:// endpoint a first one listens on is refused (ZeroMQ alone
// would replace the socket file and take the endpoint); a file nothing listens on is taken.
TEST(ControlServer, AnIpcEndpointInUseIsRefused) {
    FakeBackend b;
    const auto quiet = [](const std::string&) {};
    const std::string dir = temp_dir();
    control::ServerOptions o;
    o.control = "ipc://" + dir + "/control";
    o.telemetry = "ipc://" + dir + "/telemetry";
    auto first = std::make_unique<control::Server>(
        o, b, "x", [] { return TimeNs{0}; }, quiet);
    for (const char* which : {"control", "telemetry"}) {
        control::ServerOptions again = o;
        (std::string(which) == "control" ? again.telemetry : again.control) =
            "ipc://" + dir + "/other-" + which;
        try {
            control::Server s(
                again, b, "y", [] { return TimeNs{0}; }, quiet);
            FAIL() << "a second server bound the " << which << " endpoint";
        } catch (const control::ServerError& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find(std::string("the ") + which + " socket"), std::string::npos) << m;
            EXPECT_NE(m.find("'ipc://" + dir + "/" + which + "'"), std::string::npos) << m;
            EXPECT_NE(m.find("a process listens there"), std::string::npos) << m;
        }
    }
    // The first one gone, its socket files (if left) are taken over.
    first.reset();
    EXPECT_NO_THROW(control::Server(
        o, b, "z", [] { return TimeNs{0}; }, quiet));
    std::filesystem::remove_all(dir);
}

void write_cert(const std::string& path, const char* pub, const char* sec) {
    std::ofstream f(path);
    f << "metadata\ncurve\n    public-key = \"" << pub << "\"\n";
    if (sec) f << "    secret-key = \"" << sec << "\"\n";
}

TEST(ControlServer, CurveLetsInOnlyAllowedKeys) {
    char spub[41], ssec[41], apub[41], asec[41], upub[41], usec[41];
    ASSERT_EQ(zmq_curve_keypair(spub, ssec), 0) << "libzmq without CURVE";
    zmq_curve_keypair(apub, asec);
    zmq_curve_keypair(upub, usec);
    const std::string dir = temp_dir();
    fs::create_directory(dir + "/allow");
    write_cert(dir + "/server.key_secret", spub, ssec);
    write_cert(dir + "/allow/ok.key", apub, nullptr);
    write_cert(dir + "/allow/ignored.txt", upub, nullptr);  // not a *.key file
    control::ServerOptions o;
    o.curve_secret = dir + "/server.key_secret";
    o.curve_allow = dir + "/allow";
    {
        Running s(o);
        auto client = [&](const char* pub, const char* sec) {
            auto c = std::make_unique<Client>("inproc://unused");
            c->sock = zmq::socket_t(c->ctx, zmq::socket_type::dealer);
            c->sock.set(zmq::sockopt::linger, 0);
            if (pub) {
                c->sock.set(zmq::sockopt::curve_serverkey, std::string(spub));
                c->sock.set(zmq::sockopt::curve_publickey, std::string(pub));
                c->sock.set(zmq::sockopt::curve_secretkey, std::string(sec));
            }
            c->sock.connect(s.server->control_endpoint());
            return c;
        };
        auto ok = client(apub, asec);
        EXPECT_TRUE(ok->call(R"({"v":1,"id":1,"method":"hello"})").contains("result"));
        auto unknown = client(upub, usec);
        unknown->send({R"({"v":1,"id":1,"method":"hello"})"});
        EXPECT_TRUE(unknown->recv(700ms).empty());
        auto plain = client(nullptr, nullptr);
        plain->send({R"({"v":1,"id":1,"method":"hello"})"});
        EXPECT_TRUE(plain->recv(300ms).empty());
        EXPECT_TRUE(ok->call(R"({"v":1,"id":2,"method":"hello"})").contains("result"));
    }
    // A key file that is not one.
    write_cert(dir + "/bad.key_secret", "short", "short");
    o.curve_secret = dir + "/bad.key_secret";
    FakeBackend b;
    EXPECT_THROW(control::Server(
                     o, b, "x", [] { return TimeNs{0}; }, [](const std::string&) {}),
                 control::ServerError);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace linkem
