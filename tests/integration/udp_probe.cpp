// linkem-udp-probe: the UDP sender and receiver of scripts/dataplane/accuracy_veth.py in C++
// (its `send` and `recv`, same arguments and outputs), for rates at which the Python sender
// cannot keep its schedule (50 000 frames/s).
//
//   linkem-udp-probe send DEST_IP PORT COUNT PPS cbr|sine
//   linkem-udp-probe recv BIND_IP PORT COUNT TIMEOUT_S OUT
//   linkem-udp-probe schedule COUNT PPS cbr|sine
//
// send: COUNT datagrams of 1472 bytes ("!QQ": sequence, CLOCK_MONOTONIC send time in ns,
// big-endian) on a CLOCK_MONOTONIC schedule: CBR at PPS, or the paper's sine of mean PPS
// (peak 2 PPS, period 30 s; accuracy_veth.py's sine_schedule()). It sleeps until ~50 us
// before each frame's due time, busy-waits the rest and stamps right before its sendto():
// one frame per system call, so that each frame's stamp is its own send time (sendmmsg would
// send frames due at different times together). Prints one JSON line: sent, send_errors,
// behind_max_ns and late_100us (frames more than 100 us behind the schedule: the arrivals at
// linkemd are then not the pattern's), seconds, and (keys accuracy_veth.py's sender does not
// write) stall_max_ns and stall_total_ns: the longest time it wanted a CPU and did not run (a
// sleep that ended late, a busy-wait interrupted, one sendto()), and the sum of such stalls
// over 100 us.
// recv: binds, prints "ready", receives with recvmmsg and each datagram's kernel stamp
// (SO_TIMESTAMPNS, CLOCK_REALTIME) until COUNT arrived, TIMEOUT_S passed or 5 s without a
// datagram; the stamp minus the REALTIME - MONOTONIC offset (the tightest of 2000 pairings,
// as scripts/dataplane/kernel_clock.py) minus the send time is the one-way delay. Writes OUT
// (JSON: received, offset_change_ns: the offset at end minus at start) and OUT.seq, OUT.delay
// (int64 arrays in the machine's byte order, one entry per datagram in arrival order).
// schedule: prints the send offsets (ns from the first frame) that `send` would use, one a
// line (to compare with sine_schedule()).
// Bad arguments: a usage error naming the wrong one, exit code 2.
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kPayload = 1518 - 4 - 14 - 20 - 8;  // 1472: a 1518-byte Ethernet frame with FCS
constexpr double kPeriodS = 30.0;                 // the sine's period, as in the paper
constexpr std::int64_t kLateNs = 100'000;

const char* const kUsage =
    "usage: linkem-udp-probe send DEST_IP PORT COUNT PPS cbr|sine\n"
    "       linkem-udp-probe recv BIND_IP PORT COUNT TIMEOUT_S OUT\n"
    "       linkem-udp-probe schedule COUNT PPS cbr|sine\n";

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "linkem-udp-probe: %s\n%s", what.c_str(), kUsage);
    std::exit(2);
}

std::int64_t mono_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t real_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// CLOCK_REALTIME - CLOCK_MONOTONIC in ns from the tightest of `pairings` readings
// (kernel_clock.offset_realtime_minus_monotonic()).
std::int64_t offset_realtime_minus_monotonic(int pairings = 2000) {
    std::optional<std::pair<std::int64_t, std::int64_t>> best;
    for (int i = 0; i < pairings; ++i) {
        const std::int64_t m0 = mono_ns();
        const std::int64_t r = real_ns();
        const std::int64_t m1 = mono_ns();
        if (!best || m1 - m0 < best->first) best = {{m1 - m0, r - (m0 + (m1 - m0) / 2)}};
    }
    return best->second;
}

// accuracy_veth.py's sine_schedule(), operation for operation (the same doubles): send times
// in s of the paper's sine, rate(t) = peak (1 + sin(w t)) / 2, peak = 2 mean; packet k when
// the expected count reaches k (linkem's SineSource).
std::vector<double> sine_schedule(double mean_pps, std::int64_t count) {
    const double peak = 2.0 * mean_pps;
    const double w = 2 * std::numbers::pi / kPeriodS;
    auto cnt = [&](double t) { return 0.5 * peak * (t + (1 - std::cos(w * t)) / w); };
    auto rate = [&](double t) { return 0.5 * peak * (1 + std::sin(w * t)); };
    std::vector<double> out{0.0};
    out.reserve(static_cast<std::size_t>(count > 1 ? count : 1));
    double t = 0.0;
    for (std::int64_t k = 1; k < count; ++k) {
        double lo = t, hi = t + kPeriodS;
        double r = rate(t);
        double x = t + (r > 0 ? 1.0 / r : 0.5 * kPeriodS);
        for (int it = 0; it < 100; ++it) {
            if (!(lo < x && x < hi)) x = 0.5 * (lo + hi);
            const double f = cnt(x) - static_cast<double>(k);
            if (f > 0)
                hi = x;
            else
                lo = x;
            if (hi - lo < 1e-12) break;
            r = rate(x);
            const double step = r > 0 ? f / r : 0;
            if (std::abs(step) < 1e-12) {
                x -= step;
                break;
            }
            x -= step;
        }
        t = x;
        out.push_back(t);
    }
    return out;
}

// The send offsets in ns from the first frame, as accuracy_veth.py's send() computes them
// (Python's int() truncates toward zero, as the cast does).
std::vector<std::int64_t> offsets_ns(std::int64_t count, std::int64_t pps, bool sine) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    if (sine) {
        const std::vector<double> s = sine_schedule(static_cast<double>(pps), count);
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = static_cast<std::int64_t>(s[i] * 1e9);
    } else {
        const double period = 1e9 / static_cast<double>(pps);
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = static_cast<std::int64_t>(static_cast<double>(i) * period);
    }
    return out;
}

std::int64_t parse_int(std::string_view text, const char* name, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || p != text.data() + text.size() || v < lo || v > hi)
        usage_error(std::string(name) + " takes an integer " + std::to_string(lo) + " .. " +
                    std::to_string(hi) + ", not '" + std::string(text) + "'");
    return v;
}

double parse_seconds(std::string_view text, const char* name) {
    double v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || p != text.data() + text.size() || !(v > 0) || !std::isfinite(v))
        usage_error(std::string(name) + " takes a number of seconds > 0, not '" +
                    std::string(text) + "'");
    return v;
}

in_addr parse_ipv4(std::string_view text, const char* name) {
    in_addr a{};
    if (inet_pton(AF_INET, std::string(text).c_str(), &a) != 1)
        usage_error(std::string(name) + " takes an IPv4 address (e.g. 10.93.0.2), not '" +
                    std::string(text) + "'");
    return a;
}

bool parse_pattern(std::string_view text) {
    if (text == "sine") return true;
    if (text != "cbr") usage_error("the pattern is cbr or sine, not '" + std::string(text) + "'");
    return false;
}

constexpr std::int64_t kMaxCount = std::int64_t{1} << 32;
constexpr std::int64_t kMaxPps = 10'000'000;

// Python's repr() of a float in its usual range: the shortest digits that read back the
// same, in fixed notation, with ".0" if they are a whole number.
std::string py_float(double v) {
    char buf[64];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
    std::string s(buf, ec == std::errc{} ? p : buf);
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
}

int run_send(char** argv) {
    const in_addr dest = parse_ipv4(argv[2], "DEST_IP");
    const auto port = static_cast<std::uint16_t>(parse_int(argv[3], "PORT", 1, 65535));
    const std::int64_t count = parse_int(argv[4], "COUNT", 0, kMaxCount);
    const std::int64_t pps = parse_int(argv[5], "PPS", 1, kMaxPps);
    const bool sine = parse_pattern(argv[6]);

    const int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) {
        std::perror("linkem-udp-probe: socket");
        return 1;
    }
    const int sndbuf = 8 << 20;
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    prctl(PR_SET_TIMERSLACK, 1UL);  // sleeps end when asked, not up to 50 us later
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr = dest;
    const std::vector<std::int64_t> offsets = offsets_ns(count, pps, sine);
    unsigned char buf[kPayload] = {};
    std::int64_t errors = 0, behind_max = 0, late = 0;
    // Stalls: times the sender wanted a CPU and did not run (a sleep that ended later than
    // asked, a gap between two clock reads of the busy-wait, one sendto()); the longest, and
    // the sum of those over 100 us (the ones that can make a frame late).
    std::int64_t stall_max = 0, stall_total = 0;
    const auto stalled = [&](std::int64_t ns) {
        stall_max = std::max(stall_max, ns);
        if (ns > kLateNs) stall_total += ns;
    };
    const std::int64_t start = mono_ns() + 20'000'000;
    for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t due = start + offsets[i];
        std::int64_t now = mono_ns();
        if (due - now > 100'000) {  // sleep to ~50 us before, then busy-wait
            const std::int64_t wake = due - 50'000;
            const timespec ts{static_cast<time_t>(wake / 1'000'000'000),
                              static_cast<long>(wake % 1'000'000'000)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
            }
            now = mono_ns();
            stalled(now - wake);
        }
        while (now < due) {
            const std::int64_t prev = now;
            now = mono_ns();
            stalled(now - prev);
        }
        if (now - due > kLateNs) {
            ++late;
            if (now - due > behind_max) behind_max = now - due;
        }
        const std::int64_t stamp = mono_ns();
        const std::uint64_t seq = htobe64(static_cast<std::uint64_t>(i));
        const std::uint64_t sent = htobe64(static_cast<std::uint64_t>(stamp));
        std::memcpy(buf, &seq, 8);
        std::memcpy(buf + 8, &sent, 8);
        if (sendto(s, buf, sizeof buf, 0, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) <
            0)
            ++errors;
        stalled(mono_ns() - stamp);
    }
    const double seconds = static_cast<double>(mono_ns() - start) / 1e9;
    std::printf(
        "{\"sent\": %lld, \"send_errors\": %lld, \"behind_max_ns\": %lld, \"late_100us\": %lld, "
        "\"seconds\": %s, \"stall_max_ns\": %lld, \"stall_total_ns\": %lld}\n",
        static_cast<long long>(count), static_cast<long long>(errors),
        static_cast<long long>(behind_max), static_cast<long long>(late), py_float(seconds).c_str(),
        static_cast<long long>(stall_max), static_cast<long long>(stall_total));
    std::fflush(stdout);
    close(s);
    return 0;
}

bool write_all(const std::string& path, const void* data, std::size_t bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool ok = (bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes);
    return std::fclose(f) == 0 && ok;
}

int run_recv(char** argv) {
    const in_addr bind_ip = parse_ipv4(argv[2], "BIND_IP");
    const auto port = static_cast<std::uint16_t>(parse_int(argv[3], "PORT", 0, 65535));
    const std::int64_t count = parse_int(argv[4], "COUNT", 0, kMaxCount);
    const double timeout_s = parse_seconds(argv[5], "TIMEOUT_S");
    const std::string out = argv[6];
    if (out.empty()) usage_error("OUT is a file name, not empty");

    const int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) {
        std::perror("linkem-udp-probe: socket");
        return 1;
    }
    const int rcvbuf = 64 << 20;  // root: beyond net.core.rmem_max
    if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    const int on = 1;
    setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr = bind_ip;
    if (bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        std::fprintf(stderr, "linkem-udp-probe: bind %s port %u: %s\n", argv[2], port,
                     std::strerror(errno));
        return 1;
    }
    const std::int64_t off0 = offset_realtime_minus_monotonic();
    std::printf("ready\n");
    std::fflush(stdout);

    constexpr int kBatch = 64;
    unsigned char data[kBatch][16];
    alignas(cmsghdr) unsigned char ctrl[kBatch][CMSG_SPACE(sizeof(timespec))];
    iovec iov[kBatch];
    mmsghdr msgs[kBatch];
    std::vector<std::int64_t> seqs, delays;
    seqs.reserve(static_cast<std::size_t>(count < 4'000'000 ? count : 4'000'000));
    delays.reserve(seqs.capacity());
    const std::int64_t deadline = mono_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
    std::int64_t last = -1;
    std::int64_t n = 0;
    while (n < count && mono_ns() < deadline) {
        pollfd pfd{s, POLLIN, 0};
        const int pr = poll(&pfd, 1, 500);
        if (pr <= 0) {
            if (pr < 0 && errno != EINTR) {
                std::perror("linkem-udp-probe: poll");
                return 1;
            }
            // 20 s without a datagram: the flow is over, the rest was lost (a linkemd stalled
            // for seconds on a loaded machine still delivers what its ring holds)
            if (last >= 0 && mono_ns() - last > 20'000'000'000) break;
            continue;
        }
        const int want = static_cast<int>(count - n < kBatch ? count - n : kBatch);
        for (int i = 0; i < want; ++i) {
            iov[i] = {data[i], sizeof data[i]};
            msgs[i] = {};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = ctrl[i];
            msgs[i].msg_hdr.msg_controllen = sizeof ctrl[i];
        }
        const int got = recvmmsg(s, msgs, static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
            std::perror("linkem-udp-probe: recvmmsg");
            return 1;
        }
        last = mono_ns();
        for (int i = 0; i < got; ++i) {
            std::optional<std::int64_t> stamp;
            for (cmsghdr* c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c;
                 c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                    c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
                    timespec ts{};
                    std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
                    stamp = std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
                }
            }
            if (!stamp || msgs[i].msg_len < 16) continue;
            std::uint64_t seq = 0, sent = 0;
            std::memcpy(&seq, data[i], 8);
            std::memcpy(&sent, data[i] + 8, 8);
            seqs.push_back(static_cast<std::int64_t>(be64toh(seq)));
            delays.push_back(*stamp - off0 - static_cast<std::int64_t>(be64toh(sent)));
            ++n;
        }
    }
    const std::int64_t off1 = offset_realtime_minus_monotonic();
    const std::string json = "{\"received\": " + std::to_string(seqs.size()) +
                             ", \"offset_change_ns\": " + std::to_string(off1 - off0) + "}";
    if (!write_all(out + ".seq", seqs.data(), seqs.size() * sizeof(std::int64_t)) ||
        !write_all(out + ".delay", delays.data(), delays.size() * sizeof(std::int64_t)) ||
        !write_all(out, json.data(), json.size())) {
        std::fprintf(stderr, "linkem-udp-probe: cannot write %s[.seq|.delay]: %s\n", out.c_str(),
                     std::strerror(errno));
        return 1;
    }
    close(s);
    return 0;
}

int run_schedule(char** argv) {
    const std::int64_t count = parse_int(argv[2], "COUNT", 0, kMaxCount);
    const std::int64_t pps = parse_int(argv[3], "PPS", 1, kMaxPps);
    const bool sine = parse_pattern(argv[4]);
    for (std::int64_t v : offsets_ns(count, pps, sine))
        std::printf("%lld\n", (long long)v);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view mode = argc > 1 ? argv[1] : "";
    if (mode == "send") {
        if (argc != 7)
            usage_error("send takes 5 arguments, " + std::to_string(argc - 2) + " given");
        return run_send(argv);
    }
    if (mode == "recv") {
        if (argc != 7)
            usage_error("recv takes 5 arguments, " + std::to_string(argc - 2) + " given");
        return run_recv(argv);
    }
    if (mode == "schedule") {
        if (argc != 5)
            usage_error("schedule takes 3 arguments, " + std::to_string(argc - 2) + " given");
        return run_schedule(argv);
    }
    if (mode == "-h" || mode == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    usage_error(argc > 1 ? "unknown mode '" + std::string(mode) + "' (send, recv or schedule)"
                         : "no mode given (send, recv or schedule)");
}
