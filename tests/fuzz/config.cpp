// Fuzz target: linkemd's config file (--config, docs/config.md), the input being the file, as
// far as the libraries read it (backend/linkemd/options.cpp's read_config_file and its
// sections, less what needs DPDK: ports, workers, mbufs): the JSON object, its trace_file
// names resolved against the file's directory (resolve_trace_files), the link parameters of
// each direction layered as linkemd layers them (layered_link_keys, link_params_from_json),
// `classes` (link_classes_from_json) and `traffic` (traffic_from_json). Single-port mode
// when there is no port_b. Invariants: what is refused is refused with a ParamError; a link
// that is read writes as JSON (link_to_json) that reads back to the same JSON.
#include "fuzz_support.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/link_params_json.hpp"
#include "linkem/protocol.hpp"
#include "linkem/stats.hpp"
#include "linkem/trace_file.hpp"
#include "linkem/traffic_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace linkem;
    using nlohmann::json;
    auto parsed = fuzz::parse_json(fuzz::text(data, size));
    if (!parsed || !parsed->is_object() || fuzz::names_a_path(*parsed)) return 0;
    json& file = *parsed;
    resolve_trace_files(file, fuzz::kNoDir);
    const unsigned dirs = file.contains("port_b") && !file["port_b"].is_null() ? 2 : 1;
    if (dirs == 1 && file.contains(kDirectionKeys[1])) return 0;  // linkemd refuses b_to_a
    try {
        LinkConfig link;
        for (unsigned d = 0; d < dirs; ++d)
            link.direction(d) = link_params_from_json(layered_link_keys({&file}, d));
        if (dirs == 1) link.b_to_a = link.a_to_b;
        if (file.contains("classes")) link.classes = link_classes_from_json(file["classes"], dirs);
        const json j1 = proto::link_to_json(link, dirs);
        const json j2 = proto::link_to_json(proto::link_from_json(j1, TraceFiles::name_only), dirs);
        FUZZ_CHECK(j1 == j2, j1.dump() + " != " + j2.dump());
    } catch (const ParamError&) {
    }
    if (file.contains("traffic") && file["traffic"].is_object()) {
        try {
            const TrafficConfig t = traffic_from_json(file["traffic"], TrafficConfig{});
            const json j1 = to_json(t);
            FUZZ_CHECK(to_json(traffic_from_json(j1, TrafficConfig{})) == j1, j1.dump());
        } catch (const ParamError&) {
        }
    }
    return 0;
}
