// One numeric link parameter as a slider and a spin box with its unit, its range and
// default from hello's link_params_schema, the value linkemd applied shown back, and
// linkemd's error at the field when it refused a value. Its label, the unit it is shown in
// (ms, Mbit/s, %) and its slider's working range are the field table's
// (linkem/link_params.hpp: LinkParamField::label, shown, slider).
//
// The slider covers the parameter's working range (SliderScale, gui/model/slider_scale.hpp):
// one position a pixel or fewer, each on a round value, never more than 3x per 100 pixels;
// a short slider covers a window of the range that follows the value. The arrow keys step by
// one position (about 1 %), Page Up/Down by ten; the spin box takes any value within the
// schema's limits.
#pragma once

#include <QLabel>
#include <QSlider>
#include <QString>
#include <QWidget>

#include "linkem/link_params_json.hpp"
#include "slider_scale.hpp"

class QDoubleSpinBox;

namespace linkem::gui {

/// A link parameter's label in the GUI, the field table's (LinkParamField::label: "Mean
/// delay" for mean_delay_us; the key itself for keys without one); `mnemonic`: with its
/// keyboard accelerator ("&Mean delay").
QString paramLabel(const std::string& key, bool mnemonic = false);

/// How a key's value is shown: the field table's unit for people (LinkParamField::shown: us
/// -> ms, bit/s -> Mbit/s, probability -> %); the JSON key and its unit stay those of the
/// config file and the wire.
struct DisplayUnit {
    QString suffix;  // " ms", " Mbit/s", " %", ""
    double per = 1;  // JSON units per displayed unit (1000 us per ms, 0.01 per %)
    int decimals = 3;
    /// The unit of `key`; for a key this build does not know, the schema's unit as it is.
    static DisplayUnit forKey(const std::string& key, const std::string& schema_unit = {});
};

class ParamControl : public QWidget {
    Q_OBJECT
  public:
    /// `schema` is the key's entry of linkemd's schema (hello); `slider`: false for a spin box
    /// only (the Gilbert-Elliott probabilities).
    ParamControl(const ParamSchema& schema, bool slider, QWidget* parent = nullptr);

    const std::string& key() const { return key_; }
    /// The value in force (JSON units). Shown unless the user is dragging the slider.
    void setApplied(double value);
    double applied() const { return applied_; }
    /// The value the controls show (JSON units).
    double shown() const;
    /// Shows a value (JSON units) without sending it.
    void setShown(double value) { showValue(value); }
    const DisplayUnit& unit() const { return unit_; }
    /// Shows linkemd's error at the field (red frame, message below, tooltip); an empty
    /// message clears it.
    void setError(const QString& message);
    QString error() const { return error_; }
    bool dragging() const;
    /// The value in force of the field this one's working range follows
    /// (LinkParamField::slider.follows: the jitter's follows the mean delay), in JSON units.
    void setFollowed(double value);
    /// Whether the parameter has an effect with the other fields shown (LinkParamField::
    /// applies); when not, the slider and spin box are greyed and say why (`why`).
    void setApplies(bool on, const QString& why = {});
    bool applies() const { return applies_; }
    /// Hides the small "= value applied" beside the spin box (the stage shows its own).
    void setAppliedShown(bool on);

    QSlider* slider() const { return slider_; }
    QDoubleSpinBox* spinBox() const { return spin_; }
    QLabel* label() const { return label_; }
    const SliderScale& scale() const { return scale_; }

  signals:
    /// The user chose a value (JSON units).
    void edited(const std::string& key, double value);

  protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

  private:
    void fromSlider(int position);
    void fromSpin(double shown);
    void showValue(double value);
    /// Fits the slider's scale to its length now, around `value`.
    void refit(double value);
    int sliderPixels() const;
    QString text(double value) const;
    /// The tooltips: why it does not apply, linkemd's refusal, the key's help and range.
    void refreshTips();

    std::string key_;
    DisplayUnit unit_;
    double schema_min_ = 0, schema_max_ = 1;
    WorkingRange range_;
    SliderScale scale_;
    QLabel* label_ = nullptr;
    QSlider* slider_ = nullptr;
    QDoubleSpinBox* spin_ = nullptr;
    QLabel* applied_label_ = nullptr;
    QLabel* error_label_ = nullptr;
    double applied_ = 0;
    QString error_, tooltip_, why_;
    bool updating_ = false;
    bool applies_ = true;
};

}  // namespace linkem::gui
