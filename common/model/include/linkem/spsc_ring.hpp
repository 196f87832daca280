// A bounded single-producer single-consumer ring: how the data plane hands telemetry (delay
// samples, interval reports) to the control thread without locks and without ever waiting.
// A full ring refuses the item (the producer counts it as dropped); nothing blocks.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace linkem {

template <class T>
class SpscRing {
    static_assert(std::is_trivially_copyable_v<T>);

  public:
    /// Room for at least `capacity` items (rounded up to a power of two).
    explicit SpscRing(std::size_t capacity)
        : cap_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity)),
          mask_(cap_ - 1),
          items_(std::make_unique<T[]>(cap_)) {}

    std::size_t capacity() const { return cap_; }

    /// Producer: appends x unless the ring is full.
    bool try_push(const T& x) {
        const std::uint64_t t = tail_.load(std::memory_order_relaxed);
        if (t - head_cache_ == cap_) {
            head_cache_ = head_.load(std::memory_order_acquire);
            if (t - head_cache_ == cap_) return false;
        }
        items_[t & mask_] = x;
        tail_.store(t + 1, std::memory_order_release);
        return true;
    }

    /// Consumer: moves up to max items into out; returns how many.
    std::size_t pop(T* out, std::size_t max) {
        const std::uint64_t h = head_.load(std::memory_order_relaxed);
        const std::uint64_t t = tail_.load(std::memory_order_acquire);
        const std::size_t n =
            static_cast<std::size_t>(t - h) < max ? static_cast<std::size_t>(t - h) : max;
        for (std::size_t i = 0; i < n; ++i)
            out[i] = items_[(h + i) & mask_];
        head_.store(h + n, std::memory_order_release);
        return n;
    }

    /// Either side: items in the ring now (a moment's view).
    std::size_t size() const {
        return static_cast<std::size_t>(tail_.load(std::memory_order_acquire) -
                                        head_.load(std::memory_order_acquire));
    }

  private:
    const std::size_t cap_, mask_;
    std::unique_ptr<T[]> items_;
    alignas(64) std::atomic<std::uint64_t> tail_{0};  // written by the producer
    std::uint64_t head_cache_ = 0;                    // the producer's view of head_
    alignas(64) std::atomic<std::uint64_t> head_{0};  // written by the consumer
};

}  // namespace linkem
