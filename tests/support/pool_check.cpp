#include "pool_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rte_mbuf.h>
#include <rte_mempool.h>

namespace linkem::test {

std::string pool_check(const dp::Dataplane& dp) {
    std::string problems;
    const std::vector<std::string> names = dp.mempool_names();
    for (std::size_t k = 0; k < names.size(); ++k) {
        rte_mempool* mp = rte_mempool_lookup(names[k].c_str());
        if (!mp) {
            problems += "pool " + std::to_string(k) + ": " + names[k] + " not found; ";
            continue;
        }
        // Each mbuf's own buffer lies right after its header and private area; after any
        // number of exchanges the buffers in use must be exactly that set.
        struct Walk {
            std::vector<std::uintptr_t> own, in_use;
        } w;
        w.own.reserve(mp->size);
        w.in_use.reserve(mp->size);
        rte_mempool_obj_iter(
            mp,
            [](rte_mempool* pool, void* arg, void* obj, unsigned) {
                auto* walk = static_cast<Walk*>(arg);
                auto* m = static_cast<rte_mbuf*>(obj);
                walk->own.push_back(reinterpret_cast<std::uintptr_t>(m) + sizeof(rte_mbuf) +
                                    rte_pktmbuf_priv_size(pool));
                walk->in_use.push_back(reinterpret_cast<std::uintptr_t>(m->buf_addr));
            },
            &w);
        std::sort(w.own.begin(), w.own.end());
        std::sort(w.in_use.begin(), w.in_use.end());
        const auto shared = std::adjacent_find(w.in_use.begin(), w.in_use.end());
        char line[160];
        if (shared != w.in_use.end()) {
            std::snprintf(line, sizeof line, "pool %zu: two mbufs share the buffer at %#lx; ", k,
                          static_cast<unsigned long>(*shared));
            problems += line;
        } else if (w.own != w.in_use) {
            std::snprintf(line, sizeof line, "pool %zu: an mbuf holds a buffer not of the pool; ",
                          k);
            problems += line;
        }
        const unsigned back = rte_mempool_avail_count(mp);
        if (back != mp->size) {
            std::snprintf(line, sizeof line, "pool %zu: %u of %u mbufs back; ", k, back, mp->size);
            problems += line;
        }
    }
    return problems;
}

}  // namespace linkem::test
