// The buffer stage (step 5): packets wait here until their transmission time.
//
// The queues share one interface so the Emulator (and the benchmarks) can swap them:
//   push(tx, pkt)                     store a packet due at tx
//   pop_due(now, out, tx_out, max)    remove up to max packets with tx <= now, in tx order
//   next_time()                       earliest tx held (nullopt when empty)
//   due_at_least(now, k)              whether k packets are due (see each queue)
//   size(), empty(), reserve(n)
//
// FifoQueue     -- order of arrival; the Emulator guarantees non-decreasing tx.
// CalendarQueue -- any order of tx, emitted sorted; O(1) amortised per packet.
// (tests/support/binary_heap_queue.hpp has the DPDS paper's binary heap, the tests' oracle and
// the benchmark's baseline.)
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "linkem/time.hpp"

namespace linkem {

/// Packet handles with spare low bits can carry their CalendarQueue bin themselves.
/// Specialise with
///   static constexpr bool kEmbedded = true;
///   static Packet with_bin(Packet p, std::uint32_t bin);  // bin < 2^kCalendarBinBits
///   static std::uint32_t bin(const Packet& p);             // the bin put there
///   static Packet without_bin(Packet p);                   // p as it was pushed
/// The queue then stores one 8-byte word per packet instead of the packet and a separate
/// 2-byte bin, so a push writes one cache line instead of two; it hands packets out
/// without the bin.
inline constexpr int kCalendarBinBits = 10;
template <class Packet>
struct CalendarBins {
    static constexpr bool kEmbedded = false;
};

/// CalendarBins for a handle that is one std::uint64_t `bits` whose low kCalendarBinBits
/// are zero outside the queue: `struct CalendarBins<H> : CalendarBinsInLowBits<H> {};`.
template <class Packet>
struct CalendarBinsInLowBits {
    static constexpr bool kEmbedded = true;
    static constexpr std::uint64_t kMask = (std::uint64_t{1} << kCalendarBinBits) - 1;
    static Packet with_bin(Packet p, std::uint32_t bin) {
        p.bits |= bin;
        return p;
    }
    static std::uint32_t bin(const Packet& p) { return static_cast<std::uint32_t>(p.bits & kMask); }
    static Packet without_bin(Packet p) {
        p.bits &= ~kMask;
        return p;
    }
};

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

    /// Whether at least k >= 1 packets have tx <= now (exact).
    bool due_at_least(TimeNs now, std::size_t k) const {
        return size() >= k && ring_[(head_ + k - 1) & mask_].tx <= now;
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
/// Calendar queue for the reordering strategy: O(1) amortised push and pop.
///
/// Resolution: transmission times are kept to kResolution = 2^kResolutionBits ns (64 ns):
/// push() rounds tx up to the next multiple (a packet never leaves earlier than asked, and at
/// most 63 ns later, 31.5 ns on average), and pop_due() compares and reports the rounded
/// time. Packets whose rounded times are equal leave in arrival order. (The data plane reads
/// its clock once per burst, so it knows arrival times only to a burst period, a microsecond
/// or more at full rate.) This resolution is what lets a bucket be sorted in one counting
/// pass.
///
/// Time is cut into buckets of 2^kShift ns (65.5 us). A ring of kSlots buckets covers the
/// next ~2.1 s; each bucket is an append-only list of kChunk-entry chunks, so a push is a
/// sequential write into one of the few buckets that the current delays spread over (these
/// stay in cache). A packet's time offset in its bucket (its bin: units of kResolution,
/// 0..1023) goes into the low bits of the packet handle when the handle has room for it
/// (CalendarBins), else into a 16-bit array apart from the packets. When the drain reaches
/// a bucket it is "activated": one counting pass over the offsets, then one stable scatter
/// of the packets into tx order. The counts left by the scatter say where each 64 ns bin
/// ends, so the drain copies the due packets out in one block, as from a FIFO, without
/// comparing times. While it drains, the chunks of the next bucket are prefetched into L2,
/// in step with the drain, so that its activation does not wait for memory. The chunks go
/// back to the free list at activation; they live in one array from ChunkAllocator (the data
/// plane, the simulator and the benchmarks pass one that backs large blocks with large
/// pages: the pushes hop between some hundred buckets, which small pages make TLB misses).
/// Pushes that land in the active bucket or before it (delays shorter than the bucket) go
/// to a small binary heap merged at the drain; pushes beyond the ring's horizon wait in an
/// overflow min-heap and move into the ring when the horizon reaches them.
///
/// Order: strictly by (rounded) tx; equal times leave in arrival order (the sort is stable
/// over the bucket's push order, and the heaps break ties by an arrival sequence number).
template <class Packet, template <class> class ChunkAllocator = std::allocator>
class CalendarQueue {
  public:
    using Entry = QueueEntry<Packet>;
    static constexpr int kShift = 16;
    static constexpr std::size_t kSlots = 32768;
    static constexpr std::uint32_t kChunk = 64;
    static constexpr int kResolutionBits = 6;
    static constexpr DurationNs kResolution = DurationNs{1} << kResolutionBits;

    CalendarQueue() : slots_(kSlots), bitmap_(kSlots / 64, 0) {}

    /// tx as this queue keeps it: rounded up to a multiple of kResolution.
    static constexpr TimeNs round(TimeNs tx) {
        return (tx + (kResolution - 1)) & ~static_cast<TimeNs>(kResolution - 1);
    }

  private:
    struct Slot;
    struct Chunk;

  public:
    /// Storage for n packets: chunks for n / kChunk full buckets and kSlots / 8 sparse ones,
    /// and room in the sorted bucket and the late and far-future heaps for all n, so that
    /// none of those reallocates below n (what fits in the sparse chunks is a guess; beyond
    /// it, more chunks are added, each used again once freed).
    void reserve(std::size_t n) {
        const std::size_t want = n / kChunk + kSlots / 8;
        if (want > chunks_.size()) {
            chunks_.reserve(want);
            next_.reserve(want);
        }
        while (chunks_.size() < want)
            add_chunk();
        sorted_pkt_.reserve(n);
        sorted_bin_.reserve(n);
        late_.reserve(n);
        overflow_.reserve(n);
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

    /// Appends packets with push() semantics, its state in registers: a caller's loop pushes
    /// through the writer and commits once. No other call on the queue in between.
    class Writer {
      public:
        [[gnu::always_inline]] void push(TimeNs tx, const Packet& pkt) {
            tx = round(tx);
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

    /// True when at least k >= 1 packets are due (tx <= now). Exact when the active bucket
    /// alone decides it; once the next bucket has begun (or a late packet is due) it may be
    /// true with fewer, as counting those would take the next bucket's sort.
    bool due_at_least(TimeNs now, std::size_t k) const {
        if (size_ < k) return false;
        if (!late_.empty()) return late_.front().tx <= now || active_due(now) >= k;
        const std::size_t due = active_due(now);
        if (due >= k) return true;
        // All of the active bucket is due: the next bucket may hold more.
        return active_pos_ + due == active_n_ && ((cur_ + 1) << kShift) <= now;
    }

    /// pop_due without the copy where it can: when the due packets lie inside the active,
    /// counting-sorted bucket (and none is late), returns where they are in the sorted
    /// bucket (valid until the next call on the queue); otherwise pops into buf.
    /// With tx_out (room for max), their (rounded) transmission times too.
    std::pair<const Packet*, std::size_t> pop_due_view(TimeNs now, Packet* buf, std::size_t max,
                                                       TimeNs* tx_out = nullptr) {
        if (!active_small_ && late_.empty()) {
            const std::size_t start = active_pos_, due = active_due(now);
            if (start + due < active_n_) {  // the bucket's next packet is not due
                const std::size_t k = std::min(due, max);
                if (tx_out)
                    for (std::size_t i = 0; i < k; ++i)
                        tx_out[i] = active_tx(start + i);
                size_ -= k;
                active_pos_ = start + k;
                prefetch_next_bucket();
                return {sorted_pkt_.data() + start, k};
            }
        }
        return {buf, pop_due(now, buf, tx_out, max)};
    }

    std::size_t pop_due(TimeNs now, Packet* out, TimeNs* tx_out, std::size_t max) {
        std::size_t n = 0;
        while (n < max && size_ > 0) {
            if (current_empty() && !advance(now)) break;
            // The active bucket's packets, up to `now` or to the earliest late packet (equal
            // times: the bucket's packet first, as it was pushed earlier).
            const TimeNs limit = late_.empty() ? now : std::min(now, late_.front().tx);
            const bool more = walk_active(limit, out, tx_out, n, max);
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
            f(sorted_pkt_[pos]);
    }

  private:
    static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
    static constexpr int kBinBits = kShift - kResolutionBits;
    static constexpr std::uint32_t kBins = std::uint32_t{1} << kBinBits;  // 1024 per bucket
    static constexpr std::size_t kAhead = 4;     // chunks prefetched ahead at activation
    static constexpr std::uint32_t kSmall = 32;  // buckets up to this size: rank sort
    static_assert(kBinBits + 5 <= 16, "the rank sort packs a bin and an index into 16 bits");
    static_assert(kBinBits <= kCalendarBinBits, "CalendarBins promises this many bits");

    static constexpr TimeNs kOffsetMask = (TimeNs{1} << kShift) - 1;

    // The bin of a packet: tx - bucket start, in units of kResolution. Either in the packet
    // handle itself (CalendarBins) or, structure of arrays, in 2-byte bins apart from the
    // packets, so that the counting pass reads only those.
    using Bins = CalendarBins<Packet>;
    static constexpr bool kEmbedded = Bins::kEmbedded;
    struct alignas(64) SplitChunk {
        std::uint16_t bin[kChunk];
        Packet pkt[kChunk];
    };
    struct alignas(64) EmbeddedChunk {
        Packet pkt[kChunk];
    };
    struct Chunk : std::conditional_t<kEmbedded, EmbeddedChunk, SplitChunk> {
        [[gnu::always_inline]] std::uint32_t bin_at(std::uint32_t j) const {
            if constexpr (kEmbedded)
                return Bins::bin(this->pkt[j]);
            else
                return this->bin[j];
        }
        [[gnu::always_inline]] Packet pkt_at(std::uint32_t j) const {
            if constexpr (kEmbedded)
                return Bins::without_bin(this->pkt[j]);
            else
                return this->pkt[j];
        }
        [[gnu::always_inline]] void put(std::uint32_t j, std::uint32_t b, const Packet& p) {
            if constexpr (kEmbedded) {
                this->pkt[j] = Bins::with_bin(p, b);
            } else {
                this->bin[j] = static_cast<std::uint16_t>(b);
                this->pkt[j] = p;
            }
        }
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

    bool current_empty() const { return active_pos_ == active_n_ && late_.empty(); }
    // The bin of the active bucket's packet at `pos` (pos < active_n_).
    std::uint32_t active_bin(std::size_t pos) const { return sorted_bin_[pos]; }
    TimeNs active_tx(std::size_t pos) {
        return active_base_ + (static_cast<TimeNs>(active_bin(pos)) << kResolutionBits);
    }

    // Emits the active bucket's packets with tx <= limit. Returns false when a packet after
    // the limit stopped it.
    bool walk_active(TimeNs limit, Packet* out, TimeNs* tx_out, std::size_t& n, std::size_t max) {
        const TimeNs base = active_base_;
        const std::size_t start = active_pos_;
        const std::size_t stop = std::min(active_n_, start + (max - n));
        // Bins up to `last` are due (the bucket spans kBins bins; a limit past its end lets
        // every one through).
        if (limit < base) return start == active_n_;  // none of this bucket is due
        const std::uint32_t last = last_due_bin(limit);
        if (!active_small_) {
            // The packets of bins 0..last are the first end_[last]: a copy, no comparisons.
            const std::size_t due_end = last >= kBins ? active_n_ : end_[last];
            const std::size_t e = std::min(stop, std::max(due_end, start));
            std::copy(sorted_pkt_.data() + start, sorted_pkt_.data() + e, out + n);
            if (tx_out)
                for (std::size_t pos = start; pos < e; ++pos)
                    tx_out[n + pos - start] = active_tx(pos);
            n += e - start;
            size_ -= e - start;
            active_pos_ = e;
            return due_end >= stop;
        }
        // Locals: the stores into out[] could otherwise alias the members.
        const std::uint16_t* const bin = sorted_bin_.data();
        const Packet* const pkt = sorted_pkt_.data();
        std::size_t pos = start, m = n;
        bool due = true;
        for (; pos < stop; ++pos, ++m) {
            const std::uint32_t b = bin[pos];
            if (b > last) {
                due = false;
                break;
            }
            out[m] = pkt[pos];
            if (tx_out) tx_out[m] = base + (static_cast<TimeNs>(b) << kResolutionBits);
        }
        n = m;
        size_ -= pos - start;
        active_pos_ = pos;
        return due;
    }
    // The last bin of the active bucket due at `limit`, kBins when all of it is.
    std::uint32_t last_due_bin(TimeNs limit) const {
        const std::uint64_t span =
            static_cast<std::uint64_t>(limit) - static_cast<std::uint64_t>(active_base_);
        return span >= (std::uint64_t{kBins} << kResolutionBits)
                   ? kBins
                   : static_cast<std::uint32_t>(span >> kResolutionBits);
    }
    // How many of the active bucket's remaining packets are due at `now`.
    std::size_t active_due(TimeNs now) const {
        if (active_pos_ == active_n_ || now < active_base_) return 0;
        const std::uint32_t last = last_due_bin(now);
        if (last >= kBins) return active_n_ - active_pos_;
        if (!active_small_) return std::max<std::size_t>(end_[last], active_pos_) - active_pos_;
        std::size_t pos = active_pos_;
        while (pos < active_n_ && sorted_bin_[pos] <= last)
            ++pos;
        return pos - active_pos_;
    }

    TimeNs current_min() {
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
        chunks_.emplace_back();
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
        chunks[s.tail].put(pos, static_cast<std::uint32_t>((tx & kOffsetMask) >> kResolutionBits),
                           pkt);
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
        Slot& s = slots_[si];
        const std::uint32_t n = s.count;
        const std::uint32_t head = s.head, tail = s.tail;
        active_n_ = n;
        active_pos_ = 0;
        active_base_ = cur_ << kShift;
        pf_chunk_ = kNil;
        if (n == 0) return;
        s = Slot{};
        bitmap_[si / 64] &= ~(std::uint64_t{1} << (si % 64));
        sorted_pkt_.resize(n);
        sorted_bin_.resize(n);
        active_small_ = n <= kSmall;
        if (active_small_) {
            rank_sort(head, n);
        } else {
            counting_sort(head, n);
        }
        free_chunks(head, tail);  // the packets are in the sorted arrays now
        const Slot& next = slots_[(si + 1) & (kSlots - 1)];
        pf_chunk_ = next.head;
        pf_total_ = (next.count + kChunk - 1) / kChunk;
        pf_done_ = 0;
    }

    // Returns a bucket's chunk list (first .. last) to the free list.
    void free_chunks(std::uint32_t first, std::uint32_t last) {
        next_[last] = free_;
        free_ = first;
    }

    // Few packets (low rates), all in one chunk: a rank sort. Each (bin, index) key is
    // distinct, so its rank is the number of smaller keys; counting is branch-free (a
    // comparison sort on random keys mispredicts about once per element) and vectorises.
    void rank_sort(std::uint32_t c, std::uint32_t n) {
        const Chunk& chunk = chunks_[c];
        std::uint16_t k[kSmall];
        for (std::uint32_t i = 0; i < n; ++i)
            k[i] = static_cast<std::uint16_t>(chunk.bin_at(i) << 5 | i);
        for (std::uint32_t i = 0; i < n; ++i) {
            std::uint32_t rank = 0;
            for (std::uint32_t j = 0; j < n; ++j)
                rank += k[j] < k[i];
            sorted_pkt_[rank] = chunk.pkt_at(i);
            sorted_bin_[rank] = static_cast<std::uint16_t>(k[i] >> 5);
        }
    }

    // One counting pass over the bins, then a stable scatter of the packets into tx order.
    // The scatter leaves end_[b] = the number of packets in bins 0..b, which is all the drain
    // needs to know how many are due. The bucket was filled long ago and may be out of cache,
    // and a chunk chain defeats the hardware prefetcher: the counting pass fetches kAhead
    // chunks ahead (which also brings the packets in for the scatter).
    void counting_sort(std::uint32_t head, std::uint32_t n) {
        std::uint32_t* const pos = end_.data();
        std::fill(end_.begin(), end_.end(), 0u);
        {
            std::uint32_t ahead = head;
            for (std::size_t k = 0; k < kAhead && ahead != kNil; ++k, ahead = next_[ahead])
                prefetch_chunk(ahead);
            std::uint32_t left = n;
            for (std::uint32_t c = head; c != kNil; c = next_[c]) {
                if (ahead != kNil) {
                    prefetch_chunk(ahead);
                    ahead = next_[ahead];
                }
                const Chunk& chunk = chunks_[c];
                const std::uint32_t m = std::min(left, kChunk);
#pragma GCC unroll 4
                for (std::uint32_t j = 0; j < m; ++j)
                    ++pos[chunk.bin_at(j)];
                left -= m;
            }
        }
        std::uint32_t sum = 0;
        for (auto& v : end_) {
            const std::uint32_t x = v;
            v = sum;
            sum += x;
        }
        Packet* const out_pkt = sorted_pkt_.data();
        std::uint16_t* const out_bin = sorted_bin_.data();
        std::uint32_t left = n;
        for (std::uint32_t c = head; c != kNil; c = next_[c]) {
            const Chunk& chunk = chunks_[c];
            const std::uint32_t m = std::min(left, kChunk);
#pragma GCC unroll 4
            for (std::uint32_t j = 0; j < m; ++j) {
                const std::uint32_t b = chunk.bin_at(j);
                const std::uint32_t p = pos[b]++;
                out_pkt[p] = chunk.pkt_at(j);
                out_bin[p] = static_cast<std::uint16_t>(b);
            }
            left -= m;
        }
    }

    std::vector<Chunk, ChunkAllocator<Chunk>> chunks_;
    std::vector<std::uint32_t> next_;  // chunk links (free list and bucket lists)
    std::uint32_t free_ = kNil;
    std::vector<Slot> slots_;
    std::vector<std::uint64_t> bitmap_;
    std::int64_t cur_ = 0;
    // The active bucket, sorted: its packets, its start time and each packet's bin (read for
    // every departure's tx when the emulator keeps the lateness: kept, not searched for in
    // end_); a larger bucket (counting sort) also where each bin ends (end_), which counts
    // the due packets without comparisons.
    std::vector<Packet> sorted_pkt_;
    std::vector<std::uint16_t> sorted_bin_;
    std::array<std::uint32_t, kBins> end_{};
    bool active_small_ = true;
    std::size_t active_n_ = 0;
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
