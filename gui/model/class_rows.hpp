// The link's traffic classes as linkem-gui's Classes table edits them (docs/classes.md),
// independent of Qt: a class's match as one line of text ("protocol=udp,b_port=5060-5061",
// several match objects separated by ';': the model's class_match_text), its link parameters as a
// short summary, the table's rows checked with the model's own codec (classes_from_json,
// validate()) before anything is sent, and an error's field path ("classes[1].match.b_port", the
// model's ClassError or linkemd's refusal) turned into the row and column it names.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkem/classes.hpp"

namespace linkem::gui {

/// A class's match objects as text (class_match_text, linkemctl's form): key=value pairs
/// separated by ',', the objects by "; ", `any` for the object that takes every packet. The
/// table reads it back with class_match_json_from_text.
std::string matchText(const std::vector<ClassMatch>& match);

/// The link parameters of an emulate class that differ from the defaults, as "key=value"
/// separated by ", " (a direction's own keys as "b_to_a.loss_probability=0.02"), and
/// "limiter=link" when it shares the link's limiter; "" when it has none.
std::string parametersText(const TrafficClass& c);

/// One row of the table: what the user typed, over the class it started from (its link
/// parameters are kept as they are, or dropped for pass and drop).
struct ClassRow {
    std::string name;
    std::string match;   // matchText's form
    std::string action;  // "emulate", "pass", "drop"
    bool shares_link_limiter = false;
    LinkConfig link;  // the class's link parameters (emulate)
    bool operator==(const ClassRow&) const = default;
};
ClassRow classRow(const TrafficClass& c);

/// Where an error is in the table: the class's index in the list (its row is index + 1, the
/// first row being `default`), the column ("name", "match", "action", "limiter" or
/// "parameters"), and the message as the codec gives it.
struct ClassCellError {
    std::size_t index = 0;
    std::string column;
    std::string field;  // the whole path, "classes[1].match.b_port"
    std::string message;
    bool operator==(const ClassCellError&) const = default;
};
/// The cell an error's field path names: "classes[1].match.b_port" is class 1's match. A
/// path that names no class (e.g. "classes" for too many of them) is nullopt.
std::optional<ClassCellError> classCellError(std::string_view field, std::string_view message);

/// The rows as a `classes` JSON value (what set_link sends).
nlohmann::json classesJson(const std::vector<ClassRow>& rows);
/// The rows checked as linkemd will: the list on success, the first error otherwise.
struct CheckedClasses {
    std::vector<TrafficClass> classes;
    std::optional<ClassCellError> error;
    std::string list_error;  // an error of the whole list that names no class
};
CheckedClasses checkClassRows(const std::vector<ClassRow>& rows);

}  // namespace linkem::gui
