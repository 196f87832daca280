// Traffic classes as JSON: the `classes` list of a config file (docs/classes.md), e.g.
//   [{"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
//     "mean_delay_us": 80000, "b_to_a": {"loss_probability": 0.02}},
//    {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"}]
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/classes.hpp"
#include "linkem/link_params_json.hpp"

namespace linkem {

/// A class list as the `classes` value: one object per class, `name`, `match` (an object for
/// one match object, a list for several), `action`, and for emulate the link keys that
/// differ from the defaults (top-level where both directions agree, `a_to_b` / `b_to_a`
/// where they differ) and `"limiter": "link"` when it shares the link's limiter.
nlohmann::json classes_to_json(const std::vector<TrafficClass>& classes);
nlohmann::json to_json(const TrafficClass& c);
nlohmann::json to_json(const ClassMatch& m);

/// Reads a `classes` value: a list of class objects, checked one by one and as a list
/// (validate()). Throws ClassError (a ParamError) naming the class (index and name), the key
/// and what is allowed; ParamError with field "classes" when the value is not a list.
/// Returns a new list: nothing of a bad list is applied anywhere.
///
/// A class's key `limiter` at its top level is the link's limiter for both directions (`none`,
/// `spacer`, `policer`, `trace`), except the value `"link"`, which shares the `default`
/// class's limiter (TrafficClass::shares_link_limiter); "link" is refused in `a_to_b` /
/// `b_to_a`. Trace files are read or only named as `traces` says (link_params_from_json).
std::vector<TrafficClass> classes_from_json(const nlohmann::json& j,
                                            TraceFiles traces = TraceFiles::read);
/// The `classes` of a link with `directions` directions (a config file, set_link, a link
/// body): as classes_from_json, and in single-port mode (1) a class's `b_to_a` is refused
/// (ClassError, key "b_to_a": there is no port B) and each class's b_to_a is its a_to_b.
std::vector<TrafficClass> link_classes_from_json(const nlohmann::json& j, unsigned directions,
                                                 TraceFiles traces = TraceFiles::read);
/// One class of a list, `index` its place (for errors), checked alone (validate(c, index)).
TrafficClass traffic_class_from_json(const nlohmann::json& j, std::size_t index,
                                     TraceFiles traces = TraceFiles::read);
/// One match object's keys and values (not the rules validate() adds). Throws ParamError whose
/// field is the key within the object ("b_port").
ClassMatch class_match_from_json(const nlohmann::json& j);

/// A class's match as one line of text, as linkemctl's --match and the GUI's Classes table
/// take it (docs/classes.md, "Match as text"): match objects separated by ';' (any may
/// hold), each key=value pairs separated by ',' ("protocol=udp,b_port=5060-5061"; a whole
/// number is a number, anything else a string; spaces around names and values are ignored),
/// `any` or `*` for the object that takes every packet, or a JSON object ("{...}").
/// Returns the `match` JSON value: an object for one match object, a list for several.
/// Only the form is checked here (class_match_from_json checks the keys and values).
/// Throws ParamError whose field is `field` ("match[i]" for the i-th of several), or
/// "FIELD.KEY" for a key given twice, saying what is allowed; text that is not UTF-8 is
/// refused whole.
nlohmann::json class_match_json_from_text(std::string_view text,
                                          const std::string& field = "match");
/// The text of a `match` JSON value (an object or a list of them): keys in the order
/// ethertype, protocol, a_net, b_net, a_port, b_port, vlan, dscp, then any other by name;
/// "; " between objects; `any` for the empty object. class_match_json_from_text reads it
/// back to the same match.
std::string class_match_text(const nlohmann::json& match);

/// A prefix as written: "10.0.0.0/8", "2001:db8::/32"; a bare address is its full-length
/// prefix ("10.1.2.3" is 10.1.2.3/32). An address with bits set beyond the length
/// ("10.0.0.1/8") is refused, naming its first address. Throws std::invalid_argument saying
/// what is allowed.
IpPrefix ip_prefix_from_string(std::string_view text);
/// "10.0.0.0/8", "2001:db8::/32": always with its length.
std::string to_string(const IpPrefix& p);

}  // namespace linkem
