#include "sim_capture.hpp"

#include <algorithm>

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
    while (!pending_.empty() && pending_.front().h.time_ns <= t) {
        writer_->write(pending_.front().h, frames_[pending_.front().frame].data());
        pending_.pop_front();
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
    if (wants(Point::out)) fates_.emplace(seq * 2 + direction, fate);
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

void SimCapture::departed(unsigned direction, unsigned slot, std::uint64_t seq, TimeNs arrival,
                          TimeNs departure, std::uint32_t frame) {
    if (!wants(Point::out)) return;
    const auto it = fates_.find(seq * 2 + direction);
    RecordHeader h = header(Point::out, direction, slot, seq, departure, arrival, frame);
    if (it != fates_.end()) {
        h.flags |= RecordHeader::kHasFate;
        h.tx_ns = it->second.tx;
        h.delay_ns = it->second.delay;
        h.limiter_wait_ns = it->second.limiter_wait;
        fates_.erase(it);
    }
    // Departures come in time order; a record at an earlier time may still come.
    pending_.push_back({h, frame});
}

void SimCapture::close() {
    if (closed_) return;
    closed_ = true;
    for (const Pending& p : pending_)
        writer_->write(p.h, frames_[p.frame].data());
    pending_.clear();
    writer_->close(0);
}

RunResult run_once_captured(const SimConfig& cfg) {
    return run_emulator<true>(cfg);
}

std::vector<std::uint8_t> plain_capture_frame(std::uint32_t frame_bytes, unsigned d) {
    Flow f;
    f.name = "plain";
    f.traffic.frame_bytes = frame_bytes;
    f.a_addr = {10, 0, 0, 1};
    f.b_addr = {10, 0, 0, 2};
    f.a_port = kCapturePortA;
    f.b_port = kCapturePortB;
    return flow_frame(f, d);
}

}  // namespace linkem::sim
