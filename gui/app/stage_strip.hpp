// The stage's strip: large sliders for the five parameters a course talks about (mean delay,
// jitter, half-life, rate, loss) of the direction chosen (or both ways), each with large
// "set → since the change" figures: what the link gave since the last change (the emulated
// delay, α, the rate out, the loss).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include <QWidget>

#include "linkem/classes.hpp"
#include "linkem/link_params_json.hpp"
#include "readout_model.hpp"

class QComboBox;
class QGridLayout;
class QHBoxLayout;
class QLabel;

namespace linkem::gui {

class ParamControl;

class StageStrip : public QWidget {
    Q_OBJECT
  public:
    static constexpr const char* kKeys[5] = {"mean_delay_us", "jitter_us", "half_life_us",
                                             "rate_bps", "loss_probability"};

    explicit StageStrip(const ReadoutModel& readouts, QWidget* parent = nullptr);
    /// Builds the sliders from hello's link_params_schema.
    void build(const LinkSchema& schema, int directions);
    /// The direction the sliders set: -1 both ways, 0 A→B, 1 B→A.
    int target() const;
    void setTarget(int direction);
    /// The link's classes (the class box shows them; hidden without classes).
    void setClasses(const std::vector<TrafficClass>& classes);
    /// The class the sliders set and why they are disabled for it (empty: they are not);
    /// `id` its class id in the charts' store (0 `default`, i + 1 class i; -1: the link has
    /// no classes), whose own samples and counters the figures then come from.
    void setSliderClass(const QString& name, const QString& disabled_why, int id = -1);
    QComboBox* classBox() const { return class_; }
    QLabel* classNote() const { return class_note_; }
    /// The parameters the sliders show: the class's (the chosen direction's, A→B's for both
    /// ways).
    void showLink(const LinkConfig& applied,
                  const std::function<bool(int, const std::string&)>& pending);
    /// The figures since the last change, now.
    void refresh();
    void setEditable(bool on);
    ParamControl* control(const std::string& key) const;
    QLabel* sinceChange(const std::string& key) const;
    /// Larger or smaller text for the screen's size.
    void setTextScale(double points);
    /// Puts the Record controls (RecordPanel) in the strip's top line.
    void setRecordPanel(QWidget* panel);

  signals:
    /// The user chose the class the sliders set.
    void sliderClassChosen(const std::string& name);
    /// A slider or spin box moved: direction -1 is both ways.
    void edited(int direction, const std::string& key, const linkem::FieldValue& value);

  private:
    void applyRules();

    const ReadoutModel& readouts_;
    QGridLayout* grid_ = nullptr;
    QHBoxLayout* top_ = nullptr;
    QComboBox* target_ = nullptr;
    QComboBox* class_ = nullptr;
    QLabel* class_note_ = nullptr;
    QString disabled_why_;
    int class_id_ = -1;
    QString classFigure(const std::string& key, int d) const;
    QLabel* keys_hint_ = nullptr;
    std::map<std::string, ParamControl*> controls_;
    std::map<std::string, QLabel*> names_, since_change_;
    std::optional<LinkConfig> applied_;
    int directions_ = 2;
    bool editable_ = false;
};

}  // namespace linkem::gui
