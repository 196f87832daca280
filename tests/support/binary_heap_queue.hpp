// The DPDS paper's reorder buffer, a binary heap, with the queues' interface
// (linkem/queues.hpp): the oracle of the calendar queue's tests and the baseline of
// bench_emulator. Not used by linkem itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "linkem/time.hpp"

namespace linkem {

/// The DPDS paper's reorder buffer: a binary min-heap on (tx, arrival sequence).
template <class Packet>
class BinaryHeapQueue {
  public:
    void reserve(std::size_t n) { heap_.reserve(n); }
    std::size_t size() const { return heap_.size(); }
    bool empty() const { return heap_.empty(); }

    /// The same interface as the other queues' writers (here, plain pushes).
    struct Writer {
        BinaryHeapQueue& q;
        void push(TimeNs tx, const Packet& pkt) { q.push(tx, pkt); }
        void commit() {}
    };
    Writer writer() { return Writer{*this}; }

    void push(TimeNs tx, const Packet& pkt) {
        heap_.push_back(Item{tx, seq_++, pkt});
        std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
    std::optional<TimeNs> next_time() const {
        if (heap_.empty()) return std::nullopt;
        return heap_.front().tx;
    }
    /// True when at least k >= 1 packets are due; may be true with fewer (only the earliest
    /// is looked at).
    bool due_at_least(TimeNs now, std::size_t k) const {
        return heap_.size() >= k && heap_.front().tx <= now;
    }
    std::size_t pop_due(TimeNs now, Packet* out, TimeNs* tx_out, std::size_t max) {
        std::size_t n = 0;
        while (n < max && !heap_.empty() && heap_.front().tx <= now) {
            out[n] = heap_.front().pkt;
            if (tx_out) tx_out[n] = heap_.front().tx;
            ++n;
            std::pop_heap(heap_.begin(), heap_.end(), Later{});
            heap_.pop_back();
        }
        return n;
    }

  private:
    struct Item {
        TimeNs tx;
        std::uint64_t seq;
        Packet pkt;
    };
    struct Later {
        bool operator()(const Item& a, const Item& b) const {
            return a.tx != b.tx ? a.tx > b.tx : a.seq > b.seq;
        }
    };
    std::vector<Item> heap_;
    std::uint64_t seq_ = 0;
};

}  // namespace linkem
