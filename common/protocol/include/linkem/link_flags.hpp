// The link parameters on a command line: one flag per field of the table
// (linkem/link_params.hpp), the text each takes ("10ms", "1Gbit", "64KiB") and its conversion
// into the JSON of a config file or a set_link update. Every linkem program that takes link
// flags (linkemd, linkemctl set, linkem-sim) reads them from here; CLI11 registration is
// linkem/cli_link_flags.hpp (linkem::cli).
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/link_params.hpp"

namespace linkem {

/// A bad value given to a command-line flag. what() is "<flag>: <message>", and the message
/// says what is allowed: "--jitter: '3' is not a duration with a unit (ns, us, ms, s, min),
/// e.g. 3ms; allowed 0ns .. 10s [jitter_us]".
class FlagError : public std::invalid_argument {
  public:
    FlagError(std::string flag, std::string field, const std::string& message)
        : std::invalid_argument(flag + ": " + message),
          flag_(std::move(flag)),
          field_(std::move(field)),
          message_(message) {}
    const std::string& flag() const { return flag_; }
    const std::string& field() const { return field_; }  // the JSON key
    const std::string& message() const { return message_; }

  private:
    std::string flag_, field_, message_;
};

/// How a LinkParams field is written on a command line.
struct LinkParamFlag {
    std::string key;         // JSON key: "mean_delay_us"
    std::string flag;        // the key with '_' -> '-' and no unit suffix: "mean-delay"
    std::string value_name;  // for --help: DURATION, RATE, BYTES, P, N or NAME
    std::string example;     // "10ms"; for enums the names: "none|spacer|policer"
    std::string help;        // as in link_params_schema()
};

/// One entry per LinkParams field, in the struct's order: the flags every CLI offers.
const std::vector<LinkParamFlag>& link_param_flags();

/// The entry of link_param_flags() for a JSON key; nullptr if there is none.
const LinkParamFlag* link_param_flag(std::string_view key);

/// Converts the text given to a command-line flag for the LinkParams field `key` into the
/// field's JSON value, in the key's unit: durations need a unit ("10ms" -> 10000 for
/// mean_delay_us), rates too ("10Gbit" -> 1e10 for rate_bps), sizes take one optionally
/// ("64KiB" -> 65536), probabilities and counts are plain numbers, enums their names.
/// Checks the field's range; the rules that tie fields together are validate()'s.
/// Throws FlagError naming `flag` (as the user wrote it, e.g. "--a-to-b-jitter") and the
/// key, with the allowed form and range in the flag's units.
nlohmann::json link_param_from_text(std::string_view key, std::string_view text,
                                    std::string_view flag);

/// The three layers of link flags every linkem command line offers (linkemd, linkemctl
/// set): --FLAG for both directions, --a-to-b-FLAG and --b-to-a-FLAG for one.
inline constexpr const char* kLinkFlagPrefix[3] = {"", "a-to-b-", "b-to-a-"};
/// "--mean-delay" (layer 0), "--a-to-b-mean-delay" (1), "--b-to-a-mean-delay" (2).
std::string link_flag_name(const LinkParamFlag& f, int layer);

/// The text given to the link flags of a command line: [i][layer] for link_param_flags()[i];
/// empty: not given.
using LinkFlagText = std::vector<std::array<std::string, 3>>;

/// The link flags given, converted with link_param_from_text into the partial update of the
/// config file and of the protocol's set_link: keys at the top level for both directions,
/// "a_to_b" / "b_to_a" objects for one, e.g. {"mean_delay_us": 20000, "b_to_a":
/// {"loss_probability": 0.01}}. Only the flags given appear. Throws FlagError naming the flag
/// as written (--b-to-a-loss-probability). The rules that tie fields together are
/// link_params_from_json's, once the update is merged.
nlohmann::json link_update_from_flags(const LinkFlagText& text);

}  // namespace linkem
