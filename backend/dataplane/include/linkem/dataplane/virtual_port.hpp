// VirtualPort: an ethdev backed by rte_rings (a pair per queue) whose far end the caller
// holds.
//
// The data plane sees an ordinary port (pass name() as a port); the caller sends raw
// frames into the port's receive side and receives what the data plane transmitted. Used by
// the in-process tests and the built-in traffic generator. All calls on the far end must
// come from one thread (single producer, single consumer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace linkem::dp {

class Eal;

class VirtualPort {
  public:
    /// Where frames sent into the port are put: like a NIC, into mbufs of the pool the data
    /// plane gave the port's RX queue (the port's own pool when that has none to spare or
    /// no data plane uses the port); or always into the port's own pool.
    enum class FramePool : std::uint8_t { rx_queue, own };

    /// Creates the rings, a pool of `mbufs` for frames sent into the port, and the ethdev
    /// (named "net_ring_" + name) with `queues` receive and transmit queues (for as many
    /// workers per direction). Throws DataplaneError.
    VirtualPort(Eal& eal, const std::string& name, unsigned ring_size = 8192,
                unsigned mbufs = 16383, FramePool frames = FramePool::rx_queue,
                unsigned queues = 1);
    ~VirtualPort();
    VirtualPort(const VirtualPort&) = delete;
    VirtualPort& operator=(const VirtualPort&) = delete;

    /// The ethdev name, to use as DataplaneConfig::port_a / port_b.
    const std::string& name() const;

    /// Puts one frame on the port's receive ring. False if the ring or the pool is full.
    bool send(std::span<const std::uint8_t> frame);
    /// How the mbufs of a frame are laid out. Default: one segment, the data at the standard
    /// headroom, one reference, as NICs deliver them; the others are the cases a data plane
    /// must handle without assuming that (tests).
    struct FrameShape {
        bool two_segments = false;   // the frame split over two chained mbufs
        std::uint16_t headroom = 0;  // extra bytes of headroom before the data
        bool shared = false;         // a second reference kept by this port (release_shared())
    };

    unsigned queues() const;
    /// The receive queue a frame lands on, like a NIC's RSS: a hash of its Ethernet
    /// addresses and type and, for IPv4, its protocol, addresses and TCP/UDP ports, so that
    /// each flow keeps to one queue (always 0 with one queue).
    unsigned queue_of(std::span<const std::uint8_t> frame) const;

    /// Puts up to n frames of `length` bytes on the receive rings (the queue_of() each);
    /// fill(i, bytes) writes frame i. Returns how many were queued, in order (fewer when a
    /// ring or the pool is full).
    std::size_t send_burst(std::size_t n, std::size_t length,
                           const std::function<void(std::size_t, std::span<std::uint8_t>)>& fill,
                           const FrameShape& shape);
    std::size_t send_burst(std::size_t n, std::size_t length,
                           const std::function<void(std::size_t, std::span<std::uint8_t>)>& fill) {
        return send_burst(n, length, fill, FrameShape{});
    }
    /// Drops the references kept for FrameShape::shared frames. Returns how many of those
    /// mbufs no longer held their frame where it was sent (buffer or bytes changed): a data
    /// plane must leave a shared mbuf as it is. Call it before the data plane whose pool the
    /// frames came from is destroyed (the port's destructor does not).
    std::size_t release_shared();
    /// Takes up to max frames the data plane transmitted (from every queue in turn; each
    /// queue's in the order sent), calling sink for each. Returns the count.
    std::size_t receive(const std::function<void(std::span<const std::uint8_t>)>& sink,
                        std::size_t max = 64);
    /// Frames sent but not yet taken by the data plane.
    std::size_t rx_backlog() const;

  private:
    std::size_t send_spread(std::size_t n, std::size_t length,
                            const std::function<void(std::size_t, std::span<std::uint8_t>)>& fill,
                            const FrameShape& shape);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace linkem::dp
