// An independent model of mahimahi's mm-link accounting, for the tests of the trace limiter
// (unit, simulator and data plane): written from mm-link's description
// (src/frontend/link_queue.cc, LinkQueue::rationalize), one opportunity at a time, not from
// linkem's TraceLink.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace linkem::test {

// mm-link's accounting, as its link_queue.cc does it, one opportunity at a time: an
// opportunity carries up to 1504 bytes of the queue's packets in order; a packet larger than
// what is left is carried on by the next opportunities and leaves with the one that carries
// its last byte; bytes with no packet to carry are lost; the trace repeats with the period of
// its last timestamp. Times in ns; the trace starts at the first packet's arrival, and an
// opportunity at the arrival's very time carries the packet (linkem's time is in ns, where
// mm-link's is in whole ms and spends an opportunity of the current ms before it queues a
// packet that arrives in it; see docs/scenarios.md).
class MmLinkModel {
  public:
    explicit MmLinkModel(std::vector<std::uint32_t> ms) : ms_(std::move(ms)) {}

    void arrive(std::int64_t t, std::uint32_t bytes) {
        if (!started_) {
            started_ = true;
            base_ = t;
        }
        run_until(t - 1);  // the opportunities before t pass without this packet
        queue_.push_back({bytes, index_++});
    }
    // Runs the link until every packet has left; departure time per packet, in order.
    std::vector<std::int64_t> finish() {
        while (departures_.size() < index_)
            run_until(next_time() + 1'000'000'000);
        return departures_;
    }

  private:
    struct Queued {
        std::uint32_t bytes;
        std::size_t index;
    };
    std::int64_t next_time() const {
        return base_ + static_cast<std::int64_t>(ms_[next_]) * 1'000'000;
    }
    void run_until(std::int64_t now) {
        while (next_time() <= now) {
            const std::int64_t t = next_time();
            std::uint32_t left = 1504;
            next_ = (next_ + 1) % ms_.size();
            if (next_ == 0) base_ += static_cast<std::int64_t>(ms_.back()) * 1'000'000;
            while (left > 0) {
                if (transit_left_ == 0) {
                    if (queue_.empty()) break;
                    transit_ = queue_.front();
                    queue_.pop_front();
                    transit_left_ = transit_.bytes;
                }
                const std::uint32_t n = std::min(left, transit_left_);
                transit_left_ -= n;
                left -= n;
                if (transit_left_ == 0) {
                    departures_.resize(std::max(departures_.size(), transit_.index + 1));
                    departures_[transit_.index] = t;
                }
            }
        }
    }

    std::vector<std::uint32_t> ms_;
    bool started_ = false;
    std::int64_t base_ = 0;
    std::size_t next_ = 0, index_ = 0;
    std::deque<Queued> queue_;
    Queued transit_{0, 0};
    std::uint32_t transit_left_ = 0;
    std::vector<std::int64_t> departures_;
};

}  // namespace linkem::test
