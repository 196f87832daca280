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
#include <new>
#include <optional>
#include <vector>

#include "linkem/huge_pages.hpp"
#include "linkem/time.hpp"

namespace linkem {

namespace detail {

/// Allocator for large arrays read and written at random (huge_pages.hpp): blocks of 2 MiB
/// or more go on transparent huge pages. With 4 KiB pages every bucket of the calendar
/// queue sits on pages of its own, and the pushes, which hop between some hundred buckets,
/// miss the first-level TLB (page walks are dearer in a VM).
template <class T>
struct LargePageAllocator {
    using value_type = T;

    LargePageAllocator() = default;
    template <class U>
    LargePageAllocator(const LargePageAllocator<U>&) {}

    T* allocate(std::size_t n) {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugePageSize)
            return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
        return static_cast<T*>(huge_pages_allocate(bytes));
    }
    void deallocate(T* p, std::size_t n) {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugePageSize)
            ::operator delete (p, std::align_val_t{alignof(T)});
        else
            huge_pages_free(p, bytes);
    }
    template <class U>
    bool operator==(const LargePageAllocator<U>&) const {
        return true;
    }
};

}  // namespace detail

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

    /// Appends up to k packets with push() semantics, its state in registers: a caller's
    /// loop stores entries through the writer and commits once. No other call on the queue
    /// in between.
    class Writer {
      public:
        void push(TimeNs tx, const Packet& pkt) { ring_[tail_++ & mask_] = Entry{tx, pkt}; }
        void commit() { q_.tail_ = tail_; }

      private:
        friend class FifoQueue;
        explicit Writer(FifoQueue& q)
            : q_(q), ring_(q.ring_.data()), tail_(q.tail_), mask_(q.mask_) {}
        FifoQueue& q_;
        Entry* ring_;
        std::uint64_t tail_, mask_;
    };
    /// A writer with room for k more packets (the queue grows first if needed).
    Writer writer(std::size_t k) {
        if (size() + k > ring_.size()) grow(std::bit_ceil(std::max<std::size_t>(size() + k, 1024)));
        return Writer(*this);
    }

    std::optional<TimeNs> next_time() const {
        if (empty()) return std::nullopt;
        return ring_[head_ & mask_].tx;
    }

    /// f(pkt) for up to k packets next in line (those the next pop_due will return first).
    /// Also prefetches the ring entries a few such calls further on, so that reading the
    /// packets' handles next time does not wait for memory either.
    template <class F>
    void for_next(std::size_t k, F&& f) const {
        const std::uint64_t end = head_ + std::min<std::uint64_t>(k, tail_ - head_);
        for (std::uint64_t i = head_; i < end; ++i)
            f(ring_[i & mask_].pkt);
        if (tail_ - head_ > 4 * k) {
            const char* far = reinterpret_cast<const char*>(&ring_[(head_ + 3 * k) & mask_]);
            for (std::size_t b = 0; b < k * sizeof(Entry); b += 64)
                __builtin_prefetch(far + b);
        }
    }

    std::size_t pop_due(TimeNs now, Packet* out, TimeNs* tx_out, std::size_t max) {
        // Locals: the stores into out[] could otherwise alias head_ and the ring pointer.
        const Entry* const ring = ring_.data();
        const std::uint64_t mask = mask_;
        std::uint64_t head = head_;
        const std::uint64_t end = head + std::min<std::uint64_t>(max, tail_ - head);
        std::size_t n = 0;
        for (; head != end; ++head, ++n) {
            const Entry& e = ring[head & mask];
            if (e.tx > now) break;
            out[n] = e.pkt;
            if (tx_out) tx_out[n] = e.tx;
        }
        head_ = head;
        return n;
    }

  private:
    void grow(std::size_t cap) {
        std::vector<Entry> next(cap);
        const std::size_t n = size();
        for (std::size_t i = 0; i < n; ++i)
            next[i] = ring_[(head_ + i) & mask_];
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
/// Time is cut into buckets of 2^kShift ns (65.5 us). A ring of kSlots buckets covers the
/// next ~2.1 s; each bucket is an append-only list of kChunk-entry chunks, so a push is a
/// sequential write into one of the few buckets that the current delays spread over (these
/// stay in cache). A chunk keeps the 16-bit tx offsets apart from the packets. When the
/// drain reaches a bucket it is "activated": each entry gets a key (tx offset << index
/// bits | position in the bucket; 32 bits while the bucket holds at most 2^16 packets,
/// else 64), the keys are radix-sorted on the offset bits (two counting passes of 8 bits
/// over the keys rather than the entries; a rank sort for small buckets), and the drain
/// walks the sorted keys, fetching each packet from its chunk. While it drains, the chunks of the
/// next bucket are prefetched into L2, in step with the drain, so that its activation does
/// not wait for memory. The chunks go back to the free list when the next bucket is
/// activated; they live in one array on transparent huge pages. Pushes that land
/// in the active bucket or before it (delays shorter than the bucket) go to a small binary
/// heap merged at the drain; pushes beyond the ring's horizon wait in an overflow min-heap
/// and move into the ring when the horizon reaches them.
///
/// Order: strictly by tx; equal tx leave in arrival order (the key's low bits are the
/// arrival position within the bucket, and the heap breaks ties by an arrival sequence
/// number).
template <class Packet>
class CalendarQueue {
  public:
    using Entry = QueueEntry<Packet>;
    static constexpr int kShift = 16;
    static constexpr std::size_t kSlots = 32768;
    static constexpr std::uint32_t kChunk = 64;

    CalendarQueue() : slots_(kSlots), bitmap_(kSlots / 64, 0) {}

  private:
    struct Slot;
    struct Chunk;

  public:
    void reserve(std::size_t n) {
        const std::size_t want = n / kChunk + kSlots / 8;
        if (want > chunks_.size()) {
            chunks_.reserve(want);
            next_.reserve(want);
        }
        while (chunks_.size() < want)
            add_chunk();
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

    /// Appends packets with push() semantics, its state in registers: a caller's loop pushes
    /// through the writer and commits once. No other call on the queue in between.
    class Writer {
      public:
        [[gnu::always_inline]] void push(TimeNs tx, const Packet& pkt) {
            const std::int64_t b = tx >> kShift;
            if (size_ == 0) [[unlikely]]
                cur_ = q_.cur_ = b - 1;  // empty: re-anchor the calendar just before tx
            ++size_;
            // Inlined common case: a bucket after the active one, within the ring (cur_ < b <
            // cur_ + kSlots).
            if (static_cast<std::uint64_t>(b - cur_ - 1) < kSlots - 1) [[likely]]
                q_.slot_append(slots_, chunks_, b, tx, pkt);
            else
                q_.push_outside_ring(b, tx, pkt);
        }
        void commit() { q_.size_ = size_; }

      private:
        friend class CalendarQueue;
        explicit Writer(CalendarQueue& q)
            : q_(q),
              slots_(q.slots_.data()),
              chunks_(q.chunks_.data()),
              cur_(q.cur_),
              size_(q.size_) {}
        CalendarQueue& q_;
        Slot* slots_;
        Chunk* chunks_;  // refreshed when a chunk is added
        std::int64_t cur_;
        std::size_t size_;
    };
    Writer writer() { return Writer(*this); }

    void push(TimeNs tx, const Packet& pkt) {
        Writer w(*this);
        w.push(tx, pkt);
        w.commit();
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
            // The active bucket's sorted keys, up to `now` or to the earliest late packet
            // (equal times: the bucket's packet first, as it was pushed earlier).
            const TimeNs limit = late_.empty() ? now : std::min(now, late_.front().tx);
            const bool more =
                wide_ ? walk_active<std::uint64_t, 32>(keys64_, limit, out, tx_out, n, max)
                      : walk_active<std::uint32_t, kNarrowIndexBits>(keys32_, limit, out, tx_out, n,
                                                                     max);
            if (n == max) break;
            if (late_.empty()) {
                if (!more) break;  // the next packet is not due
                continue;          // the bucket is drained: the next one
            }
            // A late packet is next (the bucket is drained or its next packet is later).
            const TimeNs tx = late_.front().tx;
            if (tx > now) break;
            out[n] = late_.front().pkt;
            if (tx_out) tx_out[n] = tx;
            std::pop_heap(late_.begin(), late_.end(), LateLater{});
            late_.pop_back();
            ++n;
            --size_;
        }
        prefetch_next_bucket();
        return n;
    }

    /// f(pkt) for up to k packets next in line in the active bucket (the first ones the next
    /// pop_due returns, unless the late heap holds earlier ones).
    template <class F>
    void for_next(std::size_t k, F&& f) const {
        const std::size_t end = std::min(active_n_, active_pos_ + k);
        for (std::size_t pos = active_pos_; pos < end; ++pos)
            f(active_packet(active_index(pos)));
    }

  private:
    static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
    static constexpr int kLowBits = (kShift + 1) / 2;
    static constexpr int kHighBits = kShift - kLowBits;
    static constexpr std::size_t kAhead = 4;     // chunks prefetched ahead at activation
    static constexpr std::uint32_t kSmall = 32;  // buckets up to this size: rank sort

    static constexpr TimeNs kOffsetMask = (TimeNs{1} << kShift) - 1;

    // Structure of arrays: the sort reads only the 4-byte offsets (tx - bucket start); the
    // packets are read once, by the drain.
    struct alignas(64) Chunk {
        std::uint32_t off[kChunk];
        Packet pkt[kChunk];
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

    // Keys of the active bucket: (tx offset << index bits) | position in the bucket. Narrow
    // 32-bit keys (16 + 16 bits) while the bucket holds at most 2^16 packets, else 64-bit.
    static constexpr int kNarrowIndexBits = 32 - kShift;
    static constexpr std::uint32_t kNarrowMax = std::uint32_t{1} << kNarrowIndexBits;

    bool current_empty() const { return active_pos_ == active_n_ && late_.empty(); }
    TimeNs active_tx(std::size_t pos) const {
        return active_base_ +
               static_cast<TimeNs>(wide_ ? keys64_[pos] >> 32 : keys32_[pos] >> kNarrowIndexBits);
    }
    std::uint32_t active_index(std::size_t pos) const {
        return wide_ ? static_cast<std::uint32_t>(keys64_[pos]) : keys32_[pos] & (kNarrowMax - 1);
    }

    // Emits the active bucket's packets with tx <= limit. Returns false when a packet after
    // the limit stopped it.
    template <class K, int kIndexBits>
    bool walk_active(const std::vector<K>& keys, TimeNs limit, Packet* out, TimeNs* tx_out,
                     std::size_t& n, std::size_t max) {
        constexpr K index_mask = (K{1} << kIndexBits) - 1;
        // Locals: the stores into out[] could otherwise alias the members.
        const K* key = keys.data();
        const Packet* const* pkts = active_pkts_.data();
        const TimeNs base = active_base_;
        const std::size_t start = active_pos_;
        const std::size_t stop = std::min(active_n_, start + (max - n));
        std::size_t pos = start, m = n;
        bool due = true;
        for (; pos < stop; ++pos, ++m) {
            const K k = key[pos];
            const TimeNs tx = base + static_cast<TimeNs>(k >> kIndexBits);
            if (tx > limit) {
                due = false;
                break;
            }
            out[m] = packet_at(pkts, static_cast<std::uint32_t>(k & index_mask));
            if (tx_out) tx_out[m] = tx;
        }
        n = m;
        size_ -= pos - start;
        active_pos_ = pos;
        return due;
    }
    // Packet i of the active bucket (in push order), through its chunks' packet arrays.
    static const Packet& packet_at(const Packet* const* pkts, std::uint32_t i) {
        return pkts[i / kChunk][i % kChunk];
    }
    const Packet& active_packet(std::uint32_t i) const { return packet_at(active_pkts_.data(), i); }
    TimeNs current_min() const {
        TimeNs t = std::numeric_limits<TimeNs>::max();
        if (active_pos_ < active_n_) t = active_tx(active_pos_);
        if (!late_.empty()) t = std::min(t, late_.front().tx);
        return t;
    }

    [[gnu::noinline]] void push_outside_ring(std::int64_t b, TimeNs tx, const Packet& pkt) {
        if (b <= cur_) {
            late_push(tx, pkt);
        } else {
            // Beyond the horizon: a min-heap, so each entry is moved into the ring exactly
            // once, when the horizon reaches it (O(log n) per far-future packet).
            overflow_.push_back(LateItem{tx, late_seq_++, pkt});
            std::push_heap(overflow_.begin(), overflow_.end(), LateLater{});
            overflow_min_b_ = overflow_.front().tx >> kShift;
        }
    }

    void late_push(TimeNs tx, const Packet& pkt) {
        late_.push_back(LateItem{tx, late_seq_++, pkt});
        std::push_heap(late_.begin(), late_.end(), LateLater{});
    }

    template <int kLocality = 3>
    void prefetch_chunk(std::uint32_t c) const {
        const char* p = reinterpret_cast<const char*>(&chunks_[c]);
        for (std::size_t off = 0; off < sizeof(Chunk); off += 64)
            __builtin_prefetch(p + off, 0, kLocality);
    }

    // The next bucket was filled long ago and is out of cache. Fetching it all at its
    // activation stalls on memory; fetching it into L2 in step with the drain of the active
    // bucket overlaps the misses with the work. (Only ever a hint: pf_chunk_ follows a chunk
    // list, and a stale one just prefetches the wrong lines.)
    void prefetch_next_bucket() {
        while (pf_chunk_ != kNil && pf_done_ * active_n_ <= active_pos_ * pf_total_) {
            prefetch_chunk<2>(pf_chunk_);
            pf_chunk_ = next_[pf_chunk_];
            ++pf_done_;
        }
    }

    void add_chunk() {
        const Chunk* before = chunks_.data();
        chunks_.emplace_back();
        if (chunks_.data() != before) {  // moved: the active bucket's packets too
            for (std::size_t k = 0; k < active_chunks_.size(); ++k)
                active_pkts_[k] = chunks_[active_chunks_[k]].pkt;
        }
        next_.push_back(free_);
        free_ = static_cast<std::uint32_t>(chunks_.size() - 1);
    }

    // Inlined into push: two stores and a count; taking a chunk is out of line (and may move
    // the chunks, hence `chunks` by reference).
    [[gnu::always_inline]] void slot_append(Slot* slots, Chunk*& chunks, std::int64_t b, TimeNs tx,
                                            const Packet& pkt) {
        const std::size_t si = static_cast<std::size_t>(b) & (kSlots - 1);
        Slot& s = slots[si];
        const std::uint32_t pos = s.count % kChunk;
        if (pos == 0) [[unlikely]] {
            take_chunk(s, si);
            chunks = chunks_.data();
        }
        Chunk& c = chunks[s.tail];
        c.off[pos] = static_cast<std::uint32_t>(tx & kOffsetMask);
        c.pkt[pos] = pkt;
        ++s.count;
    }

    // Appends a free chunk to slot si's list (its previous chunk is full, or it had none).
    [[gnu::noinline]] void take_chunk(Slot& s, std::size_t si) {
        if (free_ == kNil) add_chunk();
        const std::uint32_t c = free_;
        free_ = next_[c];
        next_[c] = kNil;
        if (s.tail == kNil) {
            s.head = c;
            bitmap_[si / 64] |= std::uint64_t{1} << (si % 64);
        } else {
            next_[s.tail] = c;
        }
        s.tail = c;
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
        // Pops in (tx, arrival) order, so equal-tx entries keep their arrival order in the
        // slot; direct pushes into these slots only start after this pull (their bucket was
        // beyond the horizon until now).
        Chunk* chunks = chunks_.data();
        while (!overflow_.empty() &&
               (overflow_.front().tx >> kShift) - cur_ < static_cast<std::int64_t>(kSlots)) {
            const LateItem e = overflow_.front();
            std::pop_heap(overflow_.begin(), overflow_.end(), LateLater{});
            overflow_.pop_back();
            // >= cur_: earlier buckets are drained
            slot_append(slots_.data(), chunks, e.tx >> kShift, e.tx, e.pkt);
        }
        overflow_min_b_ = overflow_.empty() ? std::numeric_limits<std::int64_t>::max()
                                            : overflow_.front().tx >> kShift;
    }

    // Called only when the previous active bucket has been drained completely.
    void activate(std::size_t si) {
        if (!active_chunks_.empty()) {  // return the drained bucket's chunks
            next_[active_chunks_.back()] = free_;
            free_ = active_chunks_.front();
            active_chunks_.clear();
            active_pkts_.clear();
        }
        Slot& s = slots_[si];
        const std::uint32_t n = s.count;
        active_n_ = n;
        active_pos_ = 0;
        active_base_ = cur_ << kShift;
        pf_chunk_ = kNil;
        if (n == 0) return;

        // The bucket was filled long ago and is likely out of cache, and a chunk chain
        // defeats the hardware prefetcher: fetch kAhead chunks ahead of the histogram pass
        // (which also brings the packets in for the drain).
        for (std::uint32_t c = s.head; c != kNil; c = next_[c]) {
            if (active_chunks_.size() < kAhead) prefetch_chunk(c);
            active_chunks_.push_back(c);
            active_pkts_.push_back(chunks_[c].pkt);
        }
        wide_ = n > kNarrowMax;
        if (wide_)
            sort_keys<std::uint64_t, 32>(keys64_, tmp64_, n);
        else
            sort_keys<std::uint32_t, kNarrowIndexBits>(keys32_, tmp32_, n);
        s = Slot{};
        bitmap_[si / 64] &= ~(std::uint64_t{1} << (si % 64));
        const Slot& next = slots_[(si + 1) & (kSlots - 1)];
        pf_chunk_ = next.head;
        pf_total_ = (next.count + kChunk - 1) / kChunk;
        pf_done_ = 0;
    }

    // LSD radix sort of the keys on the offset bits: two stable counting passes.
    template <class K, int kIndexBits>
    void sort_keys(std::vector<K>& keys, std::vector<K>& tmp, std::uint32_t n) {
        keys.resize(n);
        if (n <= kSmall) {
            // Few packets (low rates): rank sort. The keys are distinct, so each key's rank
            // is the number of smaller keys; counting is branch-free (a comparison sort on
            // random keys mispredicts about once per element) and vectorises.
            K k[kSmall];
            for_each_offset(n, [&](std::uint32_t i, std::uint32_t off) {
                k[i] = static_cast<K>(off) << kIndexBits | i;
            });
            for (std::uint32_t i = 0; i < n; ++i) {
                std::uint32_t rank = 0;
                for (std::uint32_t j = 0; j < n; ++j)
                    rank += k[j] < k[i];
                keys[rank] = k[i];
            }
            return;
        }
        constexpr std::uint32_t lo_mask = (1u << kLowBits) - 1;
        std::uint32_t lo_count[1u << kLowBits] = {};
        std::uint32_t hi_count[1u << kHighBits] = {};
        for (std::size_t ci = 0, left = n; ci < active_chunks_.size(); ++ci) {
            if (ci + kAhead < active_chunks_.size()) prefetch_chunk(active_chunks_[ci + kAhead]);
            const std::uint32_t* off = chunks_[active_chunks_[ci]].off;
            const auto m = static_cast<std::uint32_t>(std::min<std::size_t>(left, kChunk));
#pragma GCC unroll 4
            for (std::uint32_t j = 0; j < m; ++j) {
                ++lo_count[off[j] & lo_mask];
                ++hi_count[off[j] >> kLowBits];
            }
            left -= m;
        }
        prefix_sum(lo_count);
        prefix_sum(hi_count);
        tmp.resize(n);
        for_each_offset(n, [&](std::uint32_t i, std::uint32_t off) {
            tmp[lo_count[off & lo_mask]++] = static_cast<K>(off) << kIndexBits | i;
        });
#pragma GCC unroll 4
        for (const K k : tmp)
            keys[hi_count[k >> (kIndexBits + kLowBits)]++] = k;
    }

    // f(i, offset) for the active bucket's entries in push order.
    template <class F>
    void for_each_offset(std::uint32_t n, F&& f) const {
        std::uint32_t i = 0;
        for (const std::uint32_t c : active_chunks_) {
            const std::uint32_t* off = chunks_[c].off;
            const std::uint32_t m = std::min(n - i, kChunk);
#pragma GCC unroll 4
            for (std::uint32_t j = 0; j < m; ++j, ++i)
                f(i, off[j]);
        }
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

    std::vector<Chunk, detail::LargePageAllocator<Chunk>> chunks_;
    std::vector<std::uint32_t> next_;  // chunk links (free list and bucket lists)
    std::uint32_t free_ = kNil;
    std::vector<Slot> slots_;
    std::vector<std::uint64_t> bitmap_;
    std::int64_t cur_ = 0;
    // The active bucket: its sorted keys, its chunks in push order, and its start time.
    std::vector<std::uint32_t> keys32_, tmp32_;
    std::vector<std::uint64_t> keys64_, tmp64_;
    bool wide_ = false;
    std::size_t active_n_ = 0;
    std::vector<std::uint32_t> active_chunks_;
    std::vector<const Packet*> active_pkts_;  // their packets, for the drain's look-ups
    std::size_t active_pos_ = 0;
    TimeNs active_base_ = 0;
    // Prefetch of the next bucket during the drain: next chunk, chunks done, chunks in all.
    std::uint32_t pf_chunk_ = kNil;
    std::size_t pf_done_ = 0, pf_total_ = 0;
    std::vector<LateItem> late_;
    std::uint64_t late_seq_ = 0;
    std::vector<LateItem> overflow_;
    std::int64_t overflow_min_b_ = std::numeric_limits<std::int64_t>::max();
    std::size_t size_ = 0;
};

}  // namespace linkem
