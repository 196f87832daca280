#include "stats_output.hpp"

#include "linkem/capture_json.hpp"
#include "linkem/stats_table.hpp"

namespace linkem::linkemd {

void StatsPrinter::print(const dp::DataplaneStats& s, bool final, const capture::Status* capture) {
    if (json_) {
        nlohmann::json j = to_json(s, final);
        if (capture && !capture->file.empty()) j["capture"] = capture_summary_to_json(*capture);
        std::fprintf(out_, "%s\n", j.dump().c_str());
    } else {
        table(s, final);
    }
    std::fflush(out_);
    last_ = s;
}

void StatsPrinter::table(const dp::DataplaneStats& s, bool final) {
    print_stats_table(out_, s, last_ ? &*last_ : nullptr, final);
}

}  // namespace linkem::linkemd
