#include <time.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "linkem/capture.hpp"

namespace linkem::capture {

namespace {

TimeNs realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<TimeNs>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// How often the writer writes its buffered blocks to the file, and how long it sleeps when
// every ring is empty.
constexpr DurationNs kFlushPeriod = 100 * kNsPerMs;
constexpr auto kIdleSleep = std::chrono::microseconds(500);
// At most one `missed` event a second.
constexpr DurationNs kMissedEventPeriod = kNsPerSec;

}  // namespace

TimeNs utc_offset(const std::function<TimeNs()>& now) {
    // The reading of the data-plane clock closest to the wall clock's: the pair with the
    // shortest interval around it.
    TimeNs best_gap = std::numeric_limits<TimeNs>::max(), offset = 0;
    for (int i = 0; i < 16; ++i) {
        const TimeNs a = now();
        const TimeNs w = realtime_ns();
        const TimeNs b = now();
        if (b - a < best_gap) {
            best_gap = b - a;
            offset = w - (a + (b - a) / 2);
        }
    }
    return offset;
}

struct Recorder::Impl {
    Settings settings;
    unsigned directions;
    std::vector<Lane> lanes;
    std::function<TimeNs()> now;
    TimeNs utc_offset;
    TimeNs started = 0;  // producers' clock
    std::unique_ptr<CaptureWriter> writer;

    mutable std::mutex mu;  // status, events
    Status status;
    std::vector<Event> events;
    std::atomic<bool> stop{false};
    std::atomic<bool> forget{false};
    std::thread thread;
    std::uint64_t missed_reported = 0;
    TimeNs last_missed_event = std::numeric_limits<TimeNs>::min() / 2;

    std::uint64_t missed(const std::vector<std::unique_ptr<CaptureRing>>& rings) const {
        std::uint64_t m = 0;
        for (const auto& r : rings)
            m += r->missed();
        return m;
    }

    // Under mu.
    void update_status(const std::vector<std::unique_ptr<CaptureRing>>& rings, TimeNs t) {
        status.file = writer->current_file();
        status.files = writer->files();
        status.records = writer->records();
        for (int i = 0; i < 3; ++i)
            status.records_by_point[i] = writer->records_by_point()[i];
        status.bytes = writer->bytes();
        status.missed = missed(rings);
        status.rotations = writer->rotations();
        status.elapsed = t - started;
    }

    void event(Event::Kind k, std::string message) {
        events.push_back(Event{k, status, std::move(message)});
    }
};

Recorder::Recorder(Settings settings, unsigned directions, std::vector<Lane> lanes,
                   std::size_t ring_bytes, std::function<std::string(unsigned, unsigned)> names,
                   std::function<TimeNs()> now, TimeNs utc_offset)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.settings = std::move(settings);
    m.directions = directions;
    m.lanes = std::move(lanes);
    m.now = std::move(now);
    m.utc_offset = utc_offset;
    m.writer =
        std::make_unique<CaptureWriter>(m.settings, directions, std::move(names), utc_offset);
    for (std::size_t i = 0; i < m.lanes.size(); ++i)
        rings_.push_back(std::make_unique<CaptureRing>(ring_bytes));
    m.started = m.now();
    {
        std::lock_guard lock(m.mu);
        m.status.running = true;
        m.status.settings = m.settings;
        m.status.started_utc_ns = m.started + utc_offset;
        m.update_status(rings_, m.started);
        m.event(Event::Kind::started, "capture started: " + m.status.file + " (" +
                                          points_text(m.settings.points) + ", snaplen " +
                                          std::to_string(m.settings.snaplen) + ")");
    }
    m.thread = std::thread([this] { run(); });
}

Recorder::~Recorder() {
    if (impl_->thread.joinable()) finish(StopReason::shutdown);
}

void Recorder::forget_names() {
    impl_->forget.store(true, std::memory_order_release);
}

// The writer thread: merges the rings' records in time order. A ring's head record is
// written once no other ring can still bring an earlier one: each other ring holds a record
// at least as late, or its producer's clock (watermark) has passed it (a producer's records
// never go back in time). At the end (stop), everything left is merged without waiting.
void Recorder::run() {
    Impl& m = *impl_;
    TimeNs next_flush = m.now() + kFlushPeriod;
    bool ending = false;
    for (;;) {
        const bool last = m.stop.load(std::memory_order_acquire);
        if (m.forget.exchange(false, std::memory_order_acq_rel)) m.writer->forget_names();
        std::size_t wrote = 0;
        StopReason end = StopReason::none;
        std::string error;
        try {
            for (;;) {
                const RecordHeader* best = nullptr;
                std::size_t best_i = 0;
                TimeNs floor = std::numeric_limits<TimeNs>::max();  // the earliest still to come
                for (std::size_t i = 0; i < rings_.size(); ++i) {
                    const RecordHeader* h = rings_[i]->peek();
                    if (!h) {
                        if (!last) floor = std::min(floor, rings_[i]->watermark());
                        continue;
                    }
                    if (!best || h->time_ns < best->time_ns) {
                        best = h;
                        best_i = i;
                    }
                }
                if (!best || best->time_ns > floor) break;
                if (!ending) {
                    m.writer->write(*best, reinterpret_cast<const std::uint8_t*>(best + 1));
                    if (m.settings.packets != 0 && m.writer->records() >= m.settings.packets)
                        end = StopReason::packets;
                }
                rings_[best_i]->pop();
                if (++wrote == 4096) break;
                if (end != StopReason::none) break;
            }
            const TimeNs t = m.now();
            if (t >= next_flush || last) {
                m.writer->flush();
                next_flush = t + kFlushPeriod;
            }
            if (m.settings.duration > 0 && t - m.started >= m.settings.duration && !ending)
                end = StopReason::duration;
        } catch (const std::system_error& e) {
            end = StopReason::write_error;
            error = e.code().message();
        }
        const TimeNs t = m.now();
        {
            std::lock_guard lock(m.mu);
            if (!ending) m.update_status(rings_, t);
            if (m.writer->take_rotated())
                m.event(Event::Kind::rotated, "capture continues in " + m.status.file);
            if (m.status.missed > m.missed_reported &&
                t - m.last_missed_event >= kMissedEventPeriod) {
                m.event(Event::Kind::missed,
                        "capture missed " + std::to_string(m.status.missed - m.missed_reported) +
                            " records (the writer fell behind; packets were not affected)");
                m.missed_reported = m.status.missed;
                m.last_missed_event = t;
            }
            if (end != StopReason::none && !ending) {
                ending = true;
                m.status.reason = end;
                m.status.error = error;
                if (end == StopReason::write_error) {  // what reached the file
                    m.status.records = m.writer->records_written();
                    m.status.bytes = m.writer->bytes();
                }
                ended_.store(true, std::memory_order_release);
            }
        }
        if (last && wrote == 0) break;
        if (wrote == 0) std::this_thread::sleep_for(kIdleSleep);
    }
}

Status Recorder::finish(StopReason reason) {
    Impl& m = *impl_;
    m.stop.store(true, std::memory_order_release);
    if (m.thread.joinable()) m.thread.join();
    const TimeNs t = m.now();
    std::lock_guard lock(m.mu);
    const std::uint64_t missed = m.missed(rings_);
    // The statistics blocks end the file (after a write error too: a full disk may still take
    // their few hundred bytes; if not, the file ends at its last whole block).
    try {
        m.writer->close(missed);
    } catch (const std::system_error& e) {
        if (m.status.reason != StopReason::write_error) m.status.error = e.code().message();
        m.status.reason = StopReason::write_error;
    }
    if (m.status.reason == StopReason::none) m.status.reason = reason;
    if (m.status.reason != StopReason::write_error) {
        m.update_status(rings_, t);
    } else {  // what reached the files
        m.status.records = m.writer->records_written();
        m.status.bytes = m.writer->bytes();
    }
    m.status.missed = missed;
    m.status.elapsed = t - m.started;
    m.status.running = false;
    if (missed > m.missed_reported)
        m.event(Event::Kind::missed,
                "capture missed " + std::to_string(missed - m.missed_reported) +
                    " records (the writer fell behind; packets were not affected)");
    std::string msg = std::string("capture stopped (") + stop_reason_name(m.status.reason) +
                      "): " + std::to_string(m.status.records) + " records, " +
                      std::to_string(m.status.bytes) + " bytes, " + std::to_string(missed) +
                      " missed";
    if (!m.status.error.empty()) msg += "; " + m.status.error;
    m.event(Event::Kind::stopped, msg);
    return m.status;
}

Status Recorder::status() const {
    std::lock_guard lock(impl_->mu);
    return impl_->status;
}

std::vector<Event> Recorder::take_events() {
    std::lock_guard lock(impl_->mu);
    return std::exchange(impl_->events, {});
}

}  // namespace linkem::capture
