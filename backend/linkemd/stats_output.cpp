#include "stats_output.hpp"

#include "linkem/stats_table.hpp"

namespace linkem::linkemd {

void StatsPrinter::print(const dp::DataplaneStats& s, bool final) {
    if (json_) {
        std::fprintf(out_, "%s\n", to_json(s, final).dump().c_str());
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
