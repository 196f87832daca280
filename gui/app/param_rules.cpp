#include "param_rules.hpp"

#include <QStringList>

#include "param_control.hpp"

namespace linkem::gui {

bool paramApplies(const std::string& key, const ShownField& shown, QString* why) {
    const LinkParamField* f = link_param_field(key);
    if (!f || f->applies.key.empty()) return true;
    // A field applies only where the field its condition names applies itself: ECN needs a
    // queue discipline, which needs a limiter that queues.
    if (!paramApplies(f->applies.key, shown, why)) return false;
    const std::optional<FieldValue> v = shown(f->applies.key);
    const std::string* name = v ? std::get_if<std::string>(&*v) : nullptr;
    if (!name || f->applies.holds(*name)) return true;
    if (why) {
        QStringList values;
        for (const std::string& s : f->applies.values)
            values << QString::fromStdString(s);
        *why = QString("applies with %1 %2 (now %3)")
                   .arg(paramLabel(f->applies.key), values.join(" or "),
                        QString::fromStdString(*name));
    }
    return false;
}

void applyParamRules(const std::map<std::string, ParamControl*>& controls,
                     const std::vector<ShownField>& sets) {
    if (sets.empty()) return;
    for (const auto& [key, c] : controls) {
        bool on = false;
        QString why;
        for (const ShownField& shown : sets)
            on = on || paramApplies(key, shown, &why);
        c->setApplies(on, on ? QString() : why);
        const LinkParamField* f = link_param_field(key);
        if (!f || f->slider.follows.empty()) continue;
        const std::optional<FieldValue> v = sets.front()(f->slider.follows);
        if (const std::optional<double> x = v ? as_number(*v) : std::nullopt) c->setFollowed(*x);
    }
}

}  // namespace linkem::gui
