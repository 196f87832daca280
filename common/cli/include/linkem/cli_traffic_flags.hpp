// The built-in traffic's flags on a CLI11 command line (linkemd, linkemctl traffic): one per
// traffic_flags() entry, with its help and value name. Convert what was given with
// traffic_update_from_flags() (linkem/traffic_flags.hpp).
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "linkem/traffic_flags.hpp"

namespace linkem {

/// Registers the flags on `app`, writing into `text` (resized to traffic_flags()), listed in
/// --help under `group` (empty: the app's default group); `notes` adds a program's own words to a
/// key's help ("(default 1518)").
inline void add_traffic_flag_options(CLI::App& app, TrafficFlagText& text, const std::string& group,
                                     const std::map<std::string, std::string>& notes = {}) {
    const std::vector<TrafficFlag>& flags = traffic_flags();
    text.resize(flags.size());
    for (std::size_t i = 0; i < flags.size(); ++i) {
        const TrafficFlag& f = flags[i];
        const auto note = notes.find(f.key);
        CLI::Option* o = app.add_option(f.flag, text[i],
                                        f.help + (note == notes.end() ? "" : " " + note->second));
        o->type_name(f.value_name);
        if (!group.empty()) o->group(group);
    }
}

}  // namespace linkem
