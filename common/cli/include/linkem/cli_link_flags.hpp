// The link flags on a CLI11 command line, the same for every linkem program that takes them
// (linkemd, linkemctl set): --FLAG for both directions, --a-to-b-FLAG / --b-to-a-FLAG for one,
// one per link_param_flags() entry, with its help and value name. Header-only (linkem::cli,
// the target that links CLI11); convert what was given with link_update_from_flags()
// (linkem/link_flags.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "linkem/link_flags.hpp"

namespace linkem {

/// Registers the flags on `app`, writing into `text` (resized to link_param_flags()). The
/// both-directions flags are listed in --help under `group`; the per-direction ones are
/// hidden there (the footer should say they exist).
inline void add_link_flag_options(CLI::App& app, LinkFlagText& text, const std::string& group) {
    const std::vector<LinkParamFlag>& flags = link_param_flags();
    text.resize(flags.size());
    for (std::size_t i = 0; i < flags.size(); ++i) {
        const LinkParamFlag& f = flags[i];
        for (int layer = 0; layer < 3; ++layer) {
            const std::string help = layer == 0 ? f.help + " (e.g. " + f.example + ")" : "";
            // --spacer-limit: --queue-limit's earlier name, still taken.
            const std::string names =
                link_flag_name(f, layer) +
                (f.key == "queue_limit_bytes"
                     ? std::string(",--") + kLinkFlagPrefix[layer] + "spacer-limit"
                     : "");
            app.add_option(names, text[i][static_cast<std::size_t>(layer)], help)
                ->group(layer == 0 ? group : "")
                ->type_name(f.value_name);
        }
    }
}

/// The footer line that tells about the per-direction flags.
inline constexpr const char* kLinkFlagFooter =
    "Per-direction overrides: --a-to-b-<flag> / --b-to-a-<flag> for every link parameter,\n"
    "e.g. --a-to-b-mean-delay 5ms --b-to-a-mean-delay 20ms.";

}  // namespace linkem
