// The buffer stage (step 5): packets wait here until their transmission time.
//
// Three queues share one interface so the Emulator (and the benchmarks) can swap them:
//   push(tx, pkt)                     store a packet due at tx
//   pop_due(now, out, tx_out, max)    remove up to max packets with tx <= now, in tx order
//   next_time()                       earliest tx held (nullopt when empty)
//   size(), empty(), reserve(n)
//
// FifoQueue     -- order of arrival; the Emulator guarantees non-decreasing tx.
// CalendarQueue -- any order of tx, emitted sorted; O(1) amortised per packet.
// BinaryHeapQueue -- the DPDS paper's reorder buffer, kept as the benchmark baseline.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "linkem/time.hpp"

namespace linkem {

template <class Packet>
struct QueueEntry {
    TimeNs tx;
    Packet pkt;
};

// ---------------------------------------------------------------------------------------
/// Ring buffer that grows by doubling. Capacity is a power of two.
template <class Packet>
class FifoQueue {
public:
    using Entry = QueueEntry<Packet>;

    void reserve(std::size_t n) {
        if (n > ring_.size()) grow(std::bit_ceil(n));
    }
    std::size_t size() const { return static_cast<std::size_t>(tail_ - head_); }
    bool empty() const { return tail_ == head_; }

    void push(TimeNs tx, const Packet& pkt) {
        if (size() == ring_.size()) grow(ring_.empty() ? 1024 : ring_.size() * 2);
        ring_[tail_++ & mask_] = Entry{tx, pkt};
    }

    std::optional<TimeNs> next_time() const {
        if (empty()) return std::nullopt;
        return ring_[head_ & mask_].tx;
    }

    std::size_t pop_due(TimeNs now, Packet* out, TimeNs* tx_out, std::size_t max) {
        std::size_t n = 0;
        while (n < max && head_ != tail_) {
            const Entry& e = ring_[head_ & mask_];
            if (e.tx > now) break;
            out[n] = e.pkt;
            if (tx_out) tx_out[n] = e.tx;
            ++n;
            ++head_;
        }
        return n;
    }

private:
    void grow(std::size_t cap) {
        std::vector<Entry> next(cap);
        const std::size_t n = size();
        for (std::size_t i = 0; i < n; ++i) next[i] = ring_[(head_ + i) & mask_];
        ring_.swap(next);
        head_ = 0;
        tail_ = n;
        mask_ = cap - 1;
    }

    std::vector<Entry> ring_;
    std::uint64_t head_ = 0, tail_ = 0, mask_ = 0;
};

// ---------------------------------------------------------------------------------------
/// The DPDS paper's reorder buffer: a binary min-heap on (tx, arrival sequence).
template <class Packet>
class BinaryHeapQueue {
public:
    void reserve(std::size_t n) { heap_.reserve(n); }
    std::size_t size() const { return heap_.size(); }
    bool empty() const { return heap_.empty(); }

    void push(TimeNs tx, const Packet& pkt) {
        heap_.push_back(Item{tx, seq_++, pkt});
        std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
    std::optional<TimeNs> next_time() const {
        if (heap_.empty()) return std::nullopt;
        return heap_.front().tx;
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

// ---------------------------------------------------------------------------------------
/// Calendar queue for the reordering strategy: O(1) amortised push and pop.
///
/// Time is cut into buckets of 2^kShift ns (131 us). A ring of kSlots buckets covers the
/// next ~2.1 s; each bucket is an append-only list of 64-entry chunks, so a push is a
/// sequential write into one of the few buckets that the current delays spread over (these
/// stay in cache). When the drain reaches a bucket it is "activated": its entries are
/// radix-sorted on the low kShift bits of tx (two stable counting passes) into a sorted
/// array that the drain consumes front to back. Pushes that land in the active bucket or
/// before it (delays shorter than the bucket) go to a small binary heap merged at the
/// drain; pushes beyond the ring's horizon wait in an overflow list that is re-examined
/// each time the horizon moves past its earliest entry.
///
/// Order: strictly by tx; equal tx leave in arrival order (both sorts are stable and the
/// heap breaks ties by an arrival sequence number).
template <class Packet>
class CalendarQueue {
public:
    using Entry = QueueEntry<Packet>;
    static constexpr int kShift = 17;
    static constexpr std::size_t kSlots = 16384;
    static constexpr std::uint32_t kChunk = 64;

    CalendarQueue() : slots_(kSlots), bitmap_(kSlots / 64, 0) {}

    void reserve(std::size_t n) {
        const std::size_t want = n / kChunk + kSlots / 8;
        while (chunks_.size() < want) add_chunk();
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

    void push(TimeNs tx, const Packet& pkt) {
        const std::int64_t b = tx >> kShift;
        if (size_ == 0) cur_ = b - 1;  // empty: re-anchor the calendar just before tx
        ++size_;
        if (b <= cur_) {
            late_push(tx, pkt);
        } else if (b - cur_ < static_cast<std::int64_t>(kSlots)) {
            slot_append(b, Entry{tx, pkt});
        } else {
            overflow_.push_back(Entry{tx, pkt});
            overflow_min_b_ = std::min(overflow_min_b_, b);
        }
    }

    /// Earliest tx held. May activate the next bucket early (which is always correct).
    std::optional<TimeNs> next_time() {
        if (size_ == 0) return std::nullopt;
        if (!current_empty()) return current_min();
        advance(std::numeric_limits<TimeNs>::max());
        return current_min();
    }

    std::size_t pop_due(TimeNs now, Packet* out, TimeNs* tx_out, std::size_t max) {
        std::size_t n = 0;
        while (n < max && size_ > 0) {
            if (current_empty() && !advance(now)) break;
            const bool from_active =
                active_pos_ < active_.size() &&
                (late_.empty() || active_[active_pos_].tx <= late_.front().tx);
            const TimeNs tx = from_active ? active_[active_pos_].tx : late_.front().tx;
            if (tx > now) break;
            if (from_active) {
                out[n] = active_[active_pos_++].pkt;
            } else {
                out[n] = late_.front().pkt;
                std::pop_heap(late_.begin(), late_.end(), LateLater{});
                late_.pop_back();
            }
            if (tx_out) tx_out[n] = tx;
            ++n;
            --size_;
        }
        return n;
    }

private:
    static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
    static constexpr int kLowBits = (kShift + 1) / 2;
    static constexpr int kHighBits = kShift - kLowBits;

    struct Chunk {
        Entry e[kChunk];
        std::uint32_t next;
    };
    struct Slot {
        std::uint32_t head = kNil, tail = kNil, count = 0;
    };
    struct LateItem {
        TimeNs tx;
        std::uint64_t seq;
        Packet pkt;
    };
    struct LateLater {
        bool operator()(const LateItem& a, const LateItem& b) const {
            return a.tx != b.tx ? a.tx > b.tx : a.seq > b.seq;
        }
    };

    bool current_empty() const { return active_pos_ == active_.size() && late_.empty(); }
    TimeNs current_min() const {
        TimeNs t = std::numeric_limits<TimeNs>::max();
        if (active_pos_ < active_.size()) t = active_[active_pos_].tx;
        if (!late_.empty()) t = std::min(t, late_.front().tx);
        return t;
    }

    void late_push(TimeNs tx, const Packet& pkt) {
        late_.push_back(LateItem{tx, late_seq_++, pkt});
        std::push_heap(late_.begin(), late_.end(), LateLater{});
    }

    void add_chunk() {
        chunks_.emplace_back();
        chunks_.back().next = free_;
        free_ = static_cast<std::uint32_t>(chunks_.size() - 1);
    }

    void slot_append(std::int64_t b, const Entry& e) {
        const std::size_t si = static_cast<std::size_t>(b) & (kSlots - 1);
        Slot& s = slots_[si];
        const std::uint32_t pos = s.count % kChunk;
        if (pos == 0) {
            if (free_ == kNil) add_chunk();
            const std::uint32_t c = free_;
            free_ = chunks_[c].next;
            chunks_[c].next = kNil;
            if (s.tail == kNil) {
                s.head = c;
                bitmap_[si / 64] |= std::uint64_t{1} << (si % 64);
            } else {
                chunks_[s.tail].next = c;
            }
            s.tail = c;
        }
        chunks_[s.tail].e[pos] = e;
        ++s.count;
    }

    // Next non-empty ring bucket after cur_, or nullopt.
    std::optional<std::int64_t> next_ring_bucket() const {
        const std::size_t start = static_cast<std::size_t>(cur_ + 1) & (kSlots - 1);
        for (std::size_t scanned = 0; scanned < kSlots;) {
            const std::size_t si = (start + scanned) & (kSlots - 1);
            const std::uint64_t word = bitmap_[si / 64] >> (si % 64);
            if (word) {
                const std::size_t off = static_cast<std::size_t>(std::countr_zero(word));
                if (scanned + off >= kSlots) break;
                return cur_ + 1 + static_cast<std::int64_t>(scanned + off);
            }
            scanned += 64 - si % 64;
        }
        return std::nullopt;
    }

    // Makes the next non-empty bucket current if it starts at or before `now`.
    bool advance(TimeNs now) {
        std::optional<std::int64_t> b = next_ring_bucket();
        if (!b && !overflow_.empty()) b = overflow_min_b_;
        if (!b || (*b << kShift) > now) return false;
        cur_ = *b;
        if (!overflow_.empty() && overflow_min_b_ - cur_ < static_cast<std::int64_t>(kSlots))
            pull_overflow();
        activate(static_cast<std::size_t>(cur_) & (kSlots - 1));
        return true;
    }

    void pull_overflow() {
        std::int64_t min_b = std::numeric_limits<std::int64_t>::max();
        std::size_t keep = 0;
        for (const Entry& e : overflow_) {
            const std::int64_t b = e.tx >> kShift;
            if (b - cur_ < static_cast<std::int64_t>(kSlots)) {
                slot_append(b, e);  // b >= cur_: earlier buckets were drained before
            } else {
                overflow_[keep++] = e;
                min_b = std::min(min_b, b);
            }
        }
        overflow_.resize(keep);
        overflow_min_b_ = min_b;
    }

    template <class F>
    void for_each_in_slot(const Slot& s, F&& f) const {
        std::uint32_t left = s.count;
        for (std::uint32_t c = s.head; c != kNil; c = chunks_[c].next) {
            const std::uint32_t n = std::min(left, kChunk);
            for (std::uint32_t i = 0; i < n; ++i) f(chunks_[c].e[i]);
            left -= n;
        }
    }

    void activate(std::size_t si) {
        Slot& s = slots_[si];
        active_.resize(s.count);
        active_pos_ = 0;
        if (s.count == 0) return;
        const TimeNs base = cur_ << kShift;
        if (s.count <= 32) {
            std::size_t n = 0;
            for_each_in_slot(s, [&](const Entry& e) {
                std::size_t j = n++;  // stable insertion sort
                while (j > 0 && active_[j - 1].tx > e.tx) {
                    active_[j] = active_[j - 1];
                    --j;
                }
                active_[j] = e;
            });
        } else {
            radix_sort(s, base);
        }
        // Return the chunks to the free list.
        chunks_[s.tail].next = free_;
        free_ = s.head;
        s = Slot{};
        bitmap_[si / 64] &= ~(std::uint64_t{1} << (si % 64));
    }

    void radix_sort(const Slot& s, TimeNs base) {
        std::uint32_t lo_count[1u << kLowBits] = {};
        std::uint32_t hi_count[1u << kHighBits] = {};
        constexpr std::uint64_t lo_mask = (1u << kLowBits) - 1;
        for_each_in_slot(s, [&](const Entry& e) {
            const std::uint64_t k = static_cast<std::uint64_t>(e.tx - base);
            ++lo_count[k & lo_mask];
            ++hi_count[k >> kLowBits];
        });
        prefix_sum(lo_count);
        prefix_sum(hi_count);
        tmp_.resize(s.count);
        for_each_in_slot(s, [&](const Entry& e) {
            tmp_[lo_count[static_cast<std::uint64_t>(e.tx - base) & lo_mask]++] = e;
        });
        for (const Entry& e : tmp_)
            active_[hi_count[static_cast<std::uint64_t>(e.tx - base) >> kLowBits]++] = e;
    }

    template <std::size_t N>
    static void prefix_sum(std::uint32_t (&c)[N]) {
        std::uint32_t sum = 0;
        for (auto& v : c) {
            const std::uint32_t x = v;
            v = sum;
            sum += x;
        }
    }

    std::vector<Chunk> chunks_;
    std::uint32_t free_ = kNil;
    std::vector<Slot> slots_;
    std::vector<std::uint64_t> bitmap_;
    std::int64_t cur_ = 0;
    std::vector<Entry> active_, tmp_;
    std::size_t active_pos_ = 0;
    std::vector<LateItem> late_;
    std::uint64_t late_seq_ = 0;
    std::vector<Entry> overflow_;
    std::int64_t overflow_min_b_ = std::numeric_limits<std::int64_t>::max();
    std::size_t size_ = 0;
};

}  // namespace linkem
