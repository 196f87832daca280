// The calendar queue (linkem/queues.hpp) with its chunks on transparent huge pages: the
// reordering queue of the data plane, the simulator and the benchmarks.
#pragma once

#include "linkem/huge_pages.hpp"
#include "linkem/queues.hpp"

namespace linkem {

template <class Packet>
using HugePageCalendarQueue = CalendarQueue<Packet, HugePageAllocator>;

}  // namespace linkem
