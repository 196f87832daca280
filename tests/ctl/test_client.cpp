// liblinkem_client against a real control::Server (real ZeroMQ sockets on ipc:// endpoints in
// a temporary directory) whose Backend is a fake: results and refusals reach the caller with
// their code, message and field; no answer is told apart from a refusal; a request given up
// on is never answered into a later call; CURVE lets in the allowed key only; the subscriber
// gets the topics it asked for.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "linkem/client.hpp"
#include "server.hpp"

namespace {

using namespace linkem;
using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string temp_dir() {
    std::string t = (fs::temp_directory_path() / "linkem_client_test_XXXXXX").string();
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    return t;
}

class FakeBackend : public control::Backend {
  public:
    json handle(const proto::Request& r, const std::string& source) override {
        {
            std::lock_guard<std::mutex> lock(mu);
            sources.push_back(source);
            methods.push_back(r.method);
        }
        if (r.method == "hello") return {{"protocol_version", 1}, {"who", "fake"}};
        if (r.method == "get_link") return {{"params_generation", 7}};
        if (r.method == "set_link")
            throw ParamError("a_to_b.jitter_us", "-1 is out of range; allowed 0 .. 10000000 us");
        if (r.method == "shutdown")
            throw proto::ProtocolError(
                proto::Error{proto::ErrorCode::not_permitted, "shutdown is not allowed", ""});
        if (r.method == "get_stats") {
            std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms.load()));
            return {{"slow", true}};
        }
        return json::object();
    }
    std::mutex mu;
    std::vector<std::string> sources, methods;
    std::atomic<int> slow_ms{0};
};

// A server on its own thread (it is used by that thread only), publishing a `stats` and an
// `event` message every 10 ms when asked to.
class ServerThread {
  public:
    ServerThread(const control::ServerOptions& o, control::Backend& b)
        : server_(
              o, b, "00112233aabbccdd", [] { return TimeNs{42}; }, [](const std::string&) {}) {
        thread_ = std::thread([this] {
            while (!stop_) {
                server_.serve(10ms);
                if (publish_) {
                    server_.publish(proto::kTopicStats, json{{"n", 1}});
                    server_.event(proto::Event::info("test", "hello from the test"));
                }
            }
        });
    }
    ~ServerThread() {
        stop_ = true;
        thread_.join();
    }
    void publish(bool on) { publish_ = on; }

  private:
    control::Server server_;
    std::atomic<bool> stop_{false}, publish_{false};
    std::thread thread_;
};

class ClientTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir = temp_dir();
        opts.control = "ipc://" + dir + "/control";
        opts.telemetry = "ipc://" + dir + "/telemetry";
    }
    void TearDown() override { fs::remove_all(dir); }
    client::ControlOptions client_options() const {
        client::ControlOptions c;
        c.endpoint = opts.control;
        return c;
    }
    std::string dir;
    control::ServerOptions opts;
    FakeBackend backend;
};

TEST_F(ClientTest, CallReturnsTheResultAndNamesTheClient) {
    ServerThread server(opts, backend);
    client::ControlOptions co = client_options();
    co.client_name = "client test";
    client::Control c(co);
    EXPECT_EQ(c.call("get_link", json::object(), 2s), (json{{"params_generation", 7}}));
    EXPECT_EQ(c.call("hello", json::object(), 2s)["who"], "fake");
    EXPECT_EQ(c.connections(), 1u);
    std::lock_guard<std::mutex> lock(backend.mu);
    // The client said hello with its name before its first call; the server names it so.
    ASSERT_EQ(backend.methods, (std::vector<std::string>{"hello", "get_link", "hello"}));
    for (const std::string& s : backend.sources)
        EXPECT_EQ(s, "client test");
}

TEST_F(ClientTest, RefusalCarriesCodeMessageAndField) {
    ServerThread server(opts, backend);
    client::Control c(client_options());
    try {
        c.call("set_link", json{{"jitter_us", -1}}, 2s);
        FAIL() << "set_link was not refused";
    } catch (const client::Refused& e) {
        EXPECT_EQ(e.error().code, proto::ErrorCode::invalid_params);
        EXPECT_EQ(e.error().field, "a_to_b.jitter_us");
        EXPECT_NE(e.error().message.find("-1 is out of range"), std::string::npos)
            << e.error().message;
    }
    try {
        c.call("shutdown", json::object(), 2s);
        FAIL() << "shutdown was not refused";
    } catch (const client::Refused& e) {
        EXPECT_EQ(e.error().code, proto::ErrorCode::not_permitted);
        EXPECT_TRUE(e.error().field.empty());
    }
    // Refused by the server's envelope check, before the backend.
    try {
        c.call("set_delay", json::object(), 2s);
        FAIL() << "an unknown method was not refused";
    } catch (const client::Refused& e) {
        EXPECT_EQ(e.error().code, proto::ErrorCode::unknown_method);
        EXPECT_EQ(e.error().field, "method");
    }
    // A refusal is not a lost connection.
    EXPECT_EQ(c.connections(), 1u);
    EXPECT_EQ(c.call("get_link", json::object(), 2s)["params_generation"], 7);
}

TEST_F(ClientTest, NothingListeningIsNoAnswerNotARefusal) {
    client::Control c(client_options());  // no server
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(c.call("hello", json::object(), 200ms), client::NoAnswer);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 200ms);
}

// A reply that comes after the caller gave up never answers a later call: the socket was
// closed without lingering, and the next call gets its own reply on a new one.
TEST_F(ClientTest, AfterATimeoutTheNextCallGetsItsOwnReply) {
    ServerThread server(opts, backend);
    client::Control c(client_options());
    backend.slow_ms = 500;
    EXPECT_THROW(c.call("get_stats", json::object(), 100ms), client::NoAnswer);
    backend.slow_ms = 0;
    EXPECT_EQ(c.call("get_link", json::object(), 3s), (json{{"params_generation", 7}}));
    EXPECT_EQ(c.connections(), 2u);
    EXPECT_EQ(c.call("hello", json::object(), 3s)["who"], "fake");
}

// Once linkemd runs again, the client that timed out gets answers again.
TEST_F(ClientTest, ServerThatComesLateIsReached) {
    client::Control c(client_options());
    EXPECT_THROW(c.call("hello", json::object(), 100ms), client::NoAnswer);
    ServerThread server(opts, backend);
    EXPECT_EQ(c.call("hello", json::object(), 3s)["who"], "fake");
}

TEST_F(ClientTest, BadEndpointIsASetupError) {
    client::ControlOptions co;
    co.endpoint = "bogus://nowhere";
    EXPECT_THROW(client::Control{co}, client::SetupError);
    EXPECT_THROW(client::Subscriber("bogus://nowhere", {"stats"}), client::SetupError);
}

TEST_F(ClientTest, SubscriberGetsTheTopicsItAskedFor) {
    ServerThread server(opts, backend);
    server.publish(true);
    client::Subscriber sub(opts.telemetry, {proto::kTopicEvent});
    int events = 0;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (events < 5 && std::chrono::steady_clock::now() < deadline) {
        const auto m = sub.receive(1s);
        if (!m) continue;
        ASSERT_EQ(m->topic, proto::kTopicEvent);
        EXPECT_EQ(m->body["kind"], "test");
        EXPECT_EQ(m->body["instance_id"], "00112233aabbccdd");
        EXPECT_TRUE(m->body["seq"].is_number_unsigned());
        ++events;
    }
    EXPECT_EQ(events, 5);
    client::Subscriber all(opts.telemetry, {});
    bool stats = false, event = false;
    for (int i = 0; i < 50 && !(stats && event); ++i) {
        const auto m = all.receive(1s);
        if (!m) continue;
        stats = stats || m->topic == proto::kTopicStats;
        event = event || m->topic == proto::kTopicEvent;
    }
    EXPECT_TRUE(stats && event);
    server.publish(false);
}

TEST_F(ClientTest, ReceiveReturnsNothingAfterItsTimeout) {
    ServerThread server(opts, backend);  // not publishing
    client::Subscriber sub(opts.telemetry, {});
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(sub.receive(150ms));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 150ms);
}

TEST_F(ClientTest, CertificatesRoundTripAndKeepTheSecretPrivate) {
    const client::KeyPair k = client::generate_key_pair();
    ASSERT_EQ(k.public_key.size(), 40u);
    ASSERT_EQ(k.secret_key.size(), 40u);
    const auto [pub, sec] = client::write_certificates(dir + "/keys", "me", k, false);
    EXPECT_EQ(pub, dir + "/keys/me.key");
    EXPECT_EQ(sec, dir + "/keys/me.key_secret");
    const client::KeyPair p = client::read_certificate(pub);
    EXPECT_EQ(p.public_key, k.public_key);
    EXPECT_TRUE(p.secret_key.empty());
    const client::KeyPair s = client::read_certificate(sec);
    EXPECT_EQ(s.public_key, k.public_key);
    EXPECT_EQ(s.secret_key, k.secret_key);
    struct stat st {};
    ASSERT_EQ(::stat(sec.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // Not overwritten unless asked.
    const client::KeyPair other = client::generate_key_pair();
    EXPECT_THROW(client::write_certificates(dir + "/keys", "me", other, false), client::SetupError);
    EXPECT_EQ(client::read_certificate(sec).secret_key, k.secret_key);
    client::write_certificates(dir + "/keys", "me", other, true);
    EXPECT_EQ(client::read_certificate(sec).secret_key, other.secret_key);
}

TEST_F(ClientTest, BadKeyFilesNameTheFile) {
    const std::string junk = dir + "/junk.key";
    std::ofstream(junk) << "not a certificate\n";
    const std::string bad = dir + "/bad.key";
    std::ofstream(bad) << "curve\n    public-key = \"tooshort\"\n";
    for (const std::string& f : {junk, bad, dir + "/missing.key"}) {
        try {
            client::read_certificate(f);
            FAIL() << f;
        } catch (const client::SetupError& e) {
            EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
        }
    }
    // A public certificate is not a client key pair.
    const auto [pub, sec] =
        client::write_certificates(dir, "c", client::generate_key_pair(), false);
    try {
        client::curve_from_files(pub, pub);
        FAIL() << "a .key file was taken as a key pair";
    } catch (const client::SetupError& e) {
        EXPECT_NE(std::string(e.what()).find("no secret-key"), std::string::npos) << e.what();
    }
}

// linkemd's side reads what keygen writes: the server's pair from its .key_secret, allowed
// clients from the *.key files of a directory.
TEST_F(ClientTest, CurveLetsInTheAllowedKeyOnly) {
    const auto server_files =
        client::write_certificates(dir + "/server", "linkemd", client::generate_key_pair(), false);
    const auto allowed_files =
        client::write_certificates(dir + "/client", "allowed", client::generate_key_pair(), false);
    const auto other_files =
        client::write_certificates(dir + "/other", "other", client::generate_key_pair(), false);
    fs::create_directories(dir + "/allow");
    fs::copy_file(allowed_files.first, dir + "/allow/allowed.key");
    opts.curve_secret = server_files.second;
    opts.curve_allow = dir + "/allow";
    ServerThread server(opts, backend);
    server.publish(true);

    client::ControlOptions co = client_options();
    co.curve = client::curve_from_files(server_files.first, allowed_files.second);
    client::Control allowed(co);
    EXPECT_EQ(allowed.call("get_link", json::object(), 3s)["params_generation"], 7);
    client::Subscriber sub(opts.telemetry, {proto::kTopicStats}, co.curve);
    EXPECT_TRUE(sub.receive(3s));

    co.curve = client::curve_from_files(server_files.first, other_files.second);
    client::Control unknown(co);
    EXPECT_THROW(unknown.call("get_link", json::object(), 500ms), client::NoAnswer);
    client::Subscriber unknown_sub(opts.telemetry, {proto::kTopicStats}, co.curve);
    EXPECT_FALSE(unknown_sub.receive(500ms));

    client::Control plain(client_options());  // no CURVE at all
    EXPECT_THROW(plain.call("get_link", json::object(), 500ms), client::NoAnswer);
    // The allowed client is still served after the others were turned away.
    EXPECT_EQ(allowed.call("hello", json::object(), 3s)["who"], "fake");
}

}  // namespace
