// A linkemd started for a test: virtual ports, --no-huge, its own EAL file prefix, control
// and telemetry on ipc:// endpoints in a temporary directory; requests over a REQ socket
// (reopened after a timeout) and telemetry over a SUB socket, as linkemctl and the GUI use
// them. Stopped with SIGTERM and cleaned up when it goes.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace linkem::test {

class LinkemdProcess {
  public:
    using json = nlohmann::json;
    using Clock = std::chrono::steady_clock;

    /// Starts linkemd with `args` (ports, link flags, ...) and subscribes to `topics`.
    LinkemdProcess(const std::vector<std::string>& args, const std::vector<std::string>& topics) {
        char tmpl[] = "/tmp/linkemd_test_XXXXXX";
        dir_ = mkdtemp(tmpl);
        control_ = "ipc://" + dir_ + "/control";
        telemetry_ = "ipc://" + dir_ + "/telemetry";
        std::vector<std::string> argv_s = {
            LINKEMD_PATH, "--control",        control_, "--telemetry",
            telemetry_,   "--stats-interval", "0"};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        prefix_ = "linkemd-test-" + std::to_string(getpid()) + "-" + std::to_string(++starts_);
        argv_s.push_back("--");
        argv_s.push_back("--file-prefix=" + prefix_);
        pid_ = fork();
        if (pid_ == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            const std::string log = dir_ + "/stderr";
            if (!freopen(log.c_str(), "w", stderr)) _exit(127);
            if (!freopen("/dev/null", "w", stdout)) _exit(127);
            std::vector<char*> argv;
            for (std::string& a : argv_s)
                argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        ctx_ = zmq_ctx_new();
        subscribe(topics);
        open_req();
    }
    ~LinkemdProcess() {
        close_sockets();
        zmq_ctx_term(ctx_);
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            int status = 0;
            waitpid(pid_, &status, 0);
        }
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        std::filesystem::remove_all("/var/run/dpdk/" + prefix_, ec);
    }
    LinkemdProcess(const LinkemdProcess&) = delete;
    LinkemdProcess& operator=(const LinkemdProcess&) = delete;

    const std::string& dir() const { return dir_; }

    /// Drops both sockets (a client going away) and connects new ones.
    void reconnect(const std::vector<std::string>& topics) {
        close_sockets();
        subscribe(topics);
        open_req();
    }

    /// The whole reply body ({"result": ...} or {"error": ...}); retries while linkemd starts
    /// (the REQ socket is reopened after a timeout).
    json call(const std::string& method, const json& params = json::object(),
              std::chrono::seconds patience = std::chrono::seconds(150)) {
        const auto until = Clock::now() + patience;
        json req = {{"v", 1}, {"id", ++id_}, {"method", method}};
        if (!params.empty()) req["params"] = params;
        const std::string text = req.dump();
        while (Clock::now() < until) {
            zmq_send(req_, text.data(), text.size(), 0);
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, req_, 0) >= 0) {
                const std::string body(static_cast<char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
                zmq_msg_close(&m);
                return json::parse(body);
            }
            zmq_msg_close(&m);
            zmq_close(req_);
            open_req();
            if (exited()) break;
        }
        return json{{"error", {{"code", "timeout"}, {"message", "no reply; " + log()}}}};
    }
    json result(const std::string& method, const json& params = json::object()) {
        const json r = call(method, params);
        EXPECT_TRUE(r.contains("result")) << method << " " << params.dump() << ": " << r.dump();
        return r.value("result", json::object());
    }
    json error(const std::string& method, const json& params) {
        const json r = call(method, params);
        EXPECT_TRUE(r.contains("error")) << method << " " << params.dump() << ": " << r.dump();
        return r.value("error", json::object());
    }

    /// The next telemetry message (topic, body) within `wait`, or nullopt.
    std::optional<std::pair<std::string, json>> next(std::chrono::milliseconds wait) {
        const auto until = Clock::now() + wait;
        while (Clock::now() < until) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, sub_, 0) < 0) {
                zmq_msg_close(&m);
                continue;
            }
            const std::string topic(static_cast<char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
            const bool more = zmq_msg_more(&m);
            zmq_msg_close(&m);
            if (!more) continue;
            zmq_msg_init(&m);
            zmq_msg_recv(&m, sub_, 0);
            const std::string body(static_cast<char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
            zmq_msg_close(&m);
            return std::make_pair(topic, json::parse(body));
        }
        return std::nullopt;
    }
    /// The body of the next message within `wait` (of the topics subscribed), or null.
    json next_body(std::chrono::milliseconds wait) {
        auto m = next(wait);
        return m ? std::move(m->second) : json(nullptr);
    }

    bool exited() {
        int status = 0;
        if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
        return pid_ < 0;
    }
    std::string log() const {
        std::string s;
        if (FILE* f = fopen((dir_ + "/stderr").c_str(), "r")) {
            char buf[4096];
            std::size_t n;
            while ((n = fread(buf, 1, sizeof buf, f)) > 0)
                s.append(buf, n);
            fclose(f);
        }
        return "linkemd's stderr:\n" + s;
    }

  private:
    void subscribe(const std::vector<std::string>& topics) {
        sub_ = zmq_socket(ctx_, ZMQ_SUB);
        int ms = 200, linger = 0;
        zmq_setsockopt(sub_, ZMQ_RCVTIMEO, &ms, sizeof ms);
        zmq_setsockopt(sub_, ZMQ_LINGER, &linger, sizeof linger);
        int hwm = 100000;
        zmq_setsockopt(sub_, ZMQ_RCVHWM, &hwm, sizeof hwm);
        for (const std::string& t : topics)
            zmq_setsockopt(sub_, ZMQ_SUBSCRIBE, t.data(), t.size());
        zmq_connect(sub_, telemetry_.c_str());
    }
    void open_req() {
        req_ = zmq_socket(ctx_, ZMQ_REQ);
        int ms = 2000, linger = 0;
        zmq_setsockopt(req_, ZMQ_RCVTIMEO, &ms, sizeof ms);
        zmq_setsockopt(req_, ZMQ_LINGER, &linger, sizeof linger);
        zmq_connect(req_, control_.c_str());
    }
    void close_sockets() {
        if (req_) zmq_close(req_);
        if (sub_) zmq_close(sub_);
        req_ = sub_ = nullptr;
    }

    static inline int starts_ = 0;
    std::string dir_, control_, telemetry_, prefix_;
    pid_t pid_ = -1;
    void* ctx_ = nullptr;
    void* req_ = nullptr;
    void* sub_ = nullptr;
    int id_ = 0;
};

}  // namespace linkem::test
