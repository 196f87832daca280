// One numeric link parameter as a slider and a spin box with its unit, its range and
// default from hello's link_params_schema, the value linkemd applied shown back, and
// linkemd's error at the field when it refused a value.
//
// The slider covers the parameter's working range (SliderScale, gui/model/slider_scale.hpp):
// one position a pixel, never more than 3x per 100 pixels; a short slider covers a window of
// the range that follows the value. The arrow keys step by one position (about 1 %), Page
// Up/Down by ten; the spin box takes any value within the schema's limits.
#pragma once

#include <QLabel>
#include <QSlider>
#include <QString>
#include <QWidget>

#include "linkem/link_params_json.hpp"
#include "slider_scale.hpp"

class QDoubleSpinBox;

namespace linkem::gui {

/// A link parameter's label in the GUI ("Mean delay" for mean_delay_us; the key itself for
/// keys without one); `mnemonic`: with its keyboard accelerator ("&Mean delay").
QString paramLabel(const std::string& key, bool mnemonic = false);

/// How a key's value is shown: the schema's unit scaled for people (us -> ms, bit/s ->
/// Mbit/s); the JSON key and its unit stay those of the config file.
struct DisplayUnit {
    QString suffix;  // " ms", " Mbit/s", ""
    double per = 1;  // JSON units per displayed unit (1000 us per ms)
    int decimals = 3;
    static DisplayUnit forUnit(const std::string& unit);
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
    /// Shows linkemd's error at the field (red frame, message below, tooltip); an empty
    /// message clears it.
    void setError(const QString& message);
    QString error() const { return error_; }
    bool dragging() const;
    /// The mean delay in force (us): the jitter's working range follows it.
    void setMeanDelay(double us);
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
    QString error_, tooltip_;
    bool updating_ = false;
};

}  // namespace linkem::gui
