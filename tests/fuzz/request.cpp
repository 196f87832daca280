// Fuzz target: the protocol's messages (linkem/protocol.hpp), the input being a message body
// as linkemd (parse_request) and a client (parse_reply) receive it, and what linkemd does
// next with a request's params: set_link's update (apply_link_update), set_traffic's
// (traffic_from_json), capture_start's (capture_settings_from_json).
// Invariants: a request that parses, encoded again (encode_request), parses to the same id,
// method and params; a reply likewise (encode_result / encode_error); a link update that is
// taken gives a link whose JSON reads back to the same JSON; the params are refused only
// with a ParamError.
#include "fuzz_support.hpp"
#include "linkem/capture_json.hpp"
#include "linkem/protocol.hpp"
#include "linkem/traffic_json.hpp"

namespace {

using namespace linkem;
using nlohmann::json;

void check_request(std::string_view body) {
    proto::Request r;
    try {
        r = proto::parse_request(body);
    } catch (const proto::ProtocolError&) {
        return;
    }
    FUZZ_CHECK(proto::find_method(r.method) != nullptr, r.method);
    FUZZ_CHECK(r.params.is_object(), r.params.dump());
    const std::string again = proto::encode_request(r.id, r.method, r.params);
    if (again.size() <= proto::kMaxRequestBytes) {
        proto::Request r2;
        try {
            r2 = proto::parse_request(again);
        } catch (const proto::ProtocolError& e) {
            fuzz::fail(__FILE__, __LINE__, "encode_request's output parses", e.what());
        }
        FUZZ_CHECK(r2.id == r.id && r2.method == r.method && r2.params == r.params, again);
    }
    const auto* spec = proto::find_method(r.method);
    try {
        switch (spec->method) {
            case proto::Method::set_link: {
                for (const unsigned dirs : {1u, 2u}) {
                    const LinkConfig c = proto::apply_link_update(r.params, LinkConfig{}, dirs,
                                                                  TraceFiles::name_only);
                    const json j1 = proto::link_to_json(c, dirs);
                    const json j2 =
                        proto::link_to_json(proto::link_from_json(j1, TraceFiles::name_only), dirs);
                    FUZZ_CHECK(j1 == j2, j1.dump() + " != " + j2.dump());
                }
                break;
            }
            case proto::Method::set_traffic: {
                const TrafficConfig t = traffic_from_json(r.params, TrafficConfig{});
                const json j1 = to_json(t);
                FUZZ_CHECK(to_json(traffic_from_json(j1, TrafficConfig{})) == j1, j1.dump());
                break;
            }
            case proto::Method::capture_start: {
                const capture::Settings s = capture_settings_from_json(r.params);
                const json j1 = capture_settings_to_json(s);
                FUZZ_CHECK(capture_settings_from_json(j1) == s, j1.dump());
                break;
            }
            default:
                break;
        }
    } catch (const ParamError&) {
    }
}

void check_reply(std::string_view body) {
    proto::Reply r;
    try {
        r = proto::parse_reply(body);
    } catch (const proto::ProtocolError&) {
        return;
    }
    const std::string again =
        r.ok() ? proto::encode_result(r.id, r.result) : proto::encode_error(r.id, *r.error);
    proto::Reply r2;
    try {
        r2 = proto::parse_reply(again);
    } catch (const proto::ProtocolError& e) {
        fuzz::fail(__FILE__, __LINE__, "an encoded reply parses",
                   std::string(e.what()) + ": " + again);
    }
    FUZZ_CHECK(r2.id == r.id && r2.ok() == r.ok(), again);
    if (r.ok()) {
        FUZZ_CHECK(r2.result == r.result, again);
    } else {
        FUZZ_CHECK(r2.error->code == r.error->code && r2.error->message == r.error->message &&
                       r2.error->field == r.error->field,
                   again);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body = fuzz::text(data, size);
    check_request(body);
    check_reply(body);
    return 0;
}
