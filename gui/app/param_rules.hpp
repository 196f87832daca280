// The field table's "depends on" rules (linkem/link_params.hpp: LinkParamField::applies,
// LinkParamField::slider.follows), applied in one place for every set of controls that
// shows link parameters: the desk's direction panels and the stage strip.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "linkem/link_params.hpp"

namespace linkem::gui {

class ParamControl;

/// The value a field has as the user sees it: a name for an enum (the combo's), a number in
/// JSON units (the control's); nullopt where nothing shows it.
using ShownField = std::function<std::optional<FieldValue>(const std::string& key)>;

/// Whether field `key` has an effect with the values `shown` gives (the field table's
/// `applies`; a field whose condition is not shown applies; a field whose condition's field
/// does not apply does not apply either); if not, `why` says when it does: "applies with
/// Limiter (bandwidth) spacer or policer".
bool paramApplies(const std::string& key, const ShownField& shown, QString* why = nullptr);

/// Applies the rules to `controls`: each is greyed, saying why, where its field applies in
/// none of `sets` (the values of each direction the controls set: one, or two for the
/// stage's "both ways"), and its slider's working range follows the field the table names
/// (the jitter's the mean delay) as the first set shows it.
void applyParamRules(const std::map<std::string, ParamControl*>& controls,
                     const std::vector<ShownField>& sets);

}  // namespace linkem::gui
