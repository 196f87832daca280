#include "sim_capture.hpp"

#include <algorithm>
#include <limits>

#include "flows.hpp"
#include "run_loop.hpp"

namespace linkem::sim {

using capture::Point;
using capture::RecordHeader;

SimCapture::SimCapture(const capture::Settings& settings, unsigned directions,
                       std::function<std::string(unsigned, unsigned)> names)
    : points_(settings.points),
      snaplen_(settings.snaplen),
      writer_(std::make_unique<capture::CaptureWriter>(settings, directions, std::move(names),
                                                       kCaptureEpochNs)) {}

SimCapture::~SimCapture() {
    try {
        close();
    } catch (...) {
    }
}

std::uint32_t SimCapture::add_frame(std::vector<std::uint8_t> frame) {
    frames_.push_back(std::move(frame));
    return static_cast<std::uint32_t>(frames_.size() - 1);
}

RecordHeader SimCapture::header(Point p, unsigned direction, unsigned slot, std::uint64_t seq,
                                TimeNs time, TimeNs arrived, std::uint32_t frame) const {
    const auto frame_len = static_cast<std::uint32_t>(frames_[frame].size());
    RecordHeader h;
    h.point = p;
    h.direction = static_cast<std::uint8_t>(direction);
    h.slot = static_cast<std::uint8_t>(slot);
    h.frame_len = frame_len;
    h.cap_len = std::min(frame_len, snaplen_);
    h.time_ns = time;
    h.arrived_ns = arrived;
    h.seq = seq;
    h.flags = RecordHeader::kHasSeq;  // the simulation knows every packet's number
    return h;
}

void SimCapture::flush_until(TimeNs t) {
    for (;;) {
        // The earlier of the two queues' fronts (an out record first at equal times).
        std::deque<Pending>* q = nullptr;
        if (!pending_.empty() && pending_.front().h.time_ns <= t) q = &pending_;
        if (!late_.empty() && late_.front().h.time_ns <= t &&
            (!q || late_.front().h.time_ns < q->front().h.time_ns))
            q = &late_;
        if (!q) return;
        writer_->write(q->front().h, frames_[q->front().frame].data());
        q->pop_front();
    }
}

void SimCapture::write_at(const RecordHeader& h, std::uint32_t frame) {
    flush_until(h.time_ns);
    writer_->write(h, frames_[frame].data());
}

void SimCapture::arrived(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs now,
                         const PacketFate& fate, std::uint32_t frame) {
    // `in`: as it arrived, before the emulator (as linkemd records it).
    RecordHeader h = header(Point::in, direction, slot, seq, now, now, frame);
    if (wants(Point::in)) write_at(h, frame);
    if (fate.outcome != PacketFate::kQueued) {
        if (!wants(Point::drop)) return;
        h.point = Point::drop;
        h.cause = fate.outcome;
        h.flags |= RecordHeader::kHasFate;
        h.delay_ns = fate.delay;
        h.limiter_wait_ns = fate.limiter_wait;
        write_at(h, frame);
        return;
    }
    if (wants(Point::out)) fates_.emplace(seq * 2 + direction, Held{fate, false});
}

void SimCapture::passed(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs now,
                        std::uint32_t frame) {
    const PacketFate fate{now, 0, 0, PacketFate::kQueued};
    arrived(direction, slot, seq, now, fate, frame);
    departed(direction, slot, seq, now, now, frame);
}

void SimCapture::class_dropped(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs now,
                               std::uint32_t frame) {
    RecordHeader h = header(Point::in, direction, slot, seq, now, now, frame);
    if (wants(Point::in)) write_at(h, frame);
    if (!wants(Point::drop)) return;
    h.point = Point::drop;
    h.cause = static_cast<std::uint8_t>(DropCause::class_action);
    write_at(h, frame);
}

void SimCapture::dequeued(unsigned direction, std::uint64_t seq, TimeNs tx, DurationNs wait,
                          bool marked) {
    const auto it = fates_.find(seq * 2 + direction);
    if (it == fates_.end()) return;
    it->second.fate.tx = tx;
    it->second.fate.limiter_wait = wait;
    it->second.marked = marked;
}

void SimCapture::late_dropped(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs arrival,
                              TimeNs at, DropCause cause, std::uint32_t frame) {
    const auto it = fates_.find(seq * 2 + direction);
    if (!wants(Point::drop)) {
        if (it != fates_.end()) fates_.erase(it);
        return;
    }
    RecordHeader h = header(Point::drop, direction, slot, seq, at, arrival, frame);
    h.cause = static_cast<std::uint8_t>(cause);
    if (it != fates_.end()) {
        h.flags |= RecordHeader::kHasFate;
        h.delay_ns = it->second.fate.delay;
        fates_.erase(it);
    }
    // A discipline drops in time order, but an `in` record at an earlier time may still come
    // (a FIFO strategy's packet reaches the queue after its delay).
    late_.push_back({h, frame});
}

void SimCapture::departed(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs arrival,
                          TimeNs departure, std::uint32_t frame) {
    if (!wants(Point::out)) return;
    const auto it = fates_.find(seq * 2 + direction);
    RecordHeader h = header(Point::out, direction, slot, seq, departure, arrival, frame);
    if (it != fates_.end()) {
        h.flags |= RecordHeader::kHasFate;
        h.tx_ns = it->second.fate.tx;
        h.delay_ns = it->second.fate.delay;
        h.limiter_wait_ns = it->second.fate.limiter_wait;
        if (it->second.marked) h.flags |= RecordHeader::kEcnCe;
        fates_.erase(it);
    }
    // Departures come in time order; a record at an earlier time may still come.
    pending_.push_back({h, frame});
}

void SimCapture::close() {
    if (closed_) return;
    closed_ = true;
    flush_until(std::numeric_limits<TimeNs>::max());
    writer_->close(0);
}

RunResult run_once_captured(const SimConfig& cfg) {
    return run_emulator<true>(cfg);
}

std::vector<std::uint8_t> plain_capture_frame(std::uint32_t frame_bytes, unsigned d,
                                              std::uint32_t flow, bool ect) {
    Flow f;
    f.name = "plain";
    f.traffic.frame_bytes = frame_bytes;
    f.a_addr = {10, 0, 0, 1};
    f.b_addr = {10, 0, 0, 2};
    f.a_port = static_cast<std::uint16_t>(kCapturePortA + flow);
    f.b_port = kCapturePortB;
    std::vector<std::uint8_t> frame = flow_frame(f, d);
    if (ect) frame[14 + 1] |= 2;  // the IPv4 header's TOS byte: ECN field ECT(0)
    return frame;
}

}  // namespace linkem::sim
