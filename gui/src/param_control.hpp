// One numeric link parameter as a slider and a spin box with its unit, its range and
// default from hello's link_params_schema, the value linkemd applied shown back, and
// linkemd's error at the field when it refused a value.
#pragma once

#include <QLabel>
#include <QSlider>
#include <QString>
#include <QWidget>

#include <nlohmann/json.hpp>

class QDoubleSpinBox;

namespace linkem::gui {

/// Slider positions 0..steps onto [min, max]: linear for a narrow range; log-like where the
/// range spans decades: position 0 is `min` (0 for a delay), positions 1..steps go
/// logarithmically from `low` (the smallest non-zero value worth a position: 1 us for a
/// delay, 1 kbit/s for a rate, 1e-6 for a probability) to `max`.
struct SliderScale {
    double min = 0, max = 1, low = 0;
    int steps = 1000;
    bool log = false;
    static SliderScale make(double min, double max, double low, int steps = 1000);
    double value(int position) const;
    int position(double value) const;
};

/// How a key's value is shown: the schema's unit scaled for people (us -> ms, bit/s ->
/// Mbit/s); the JSON key and its unit stay those of the config file.
struct DisplayUnit {
    QString suffix;  // " ms", " Mbit/s", ""
    double per = 1;  // JSON units per displayed unit (1000 us per ms)
    int decimals = 3;
    double low = 0;  // see SliderScale::low, in JSON units
    static DisplayUnit for_key(const std::string& key, const std::string& unit);
};

class ParamControl : public QWidget {
    Q_OBJECT
  public:
    /// `schema` is the key's entry of link_params_schema(); `slider`: false for a spin box
    /// only (the Gilbert-Elliott probabilities).
    ParamControl(const std::string& key, const nlohmann::json& schema, bool slider,
                 QWidget* parent = nullptr);

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

    QSlider* slider() const { return slider_; }
    QDoubleSpinBox* spinBox() const { return spin_; }
    QLabel* label() const { return label_; }

  signals:
    /// The user chose a value (JSON units).
    void edited(const std::string& key, double value);

  private:
    void fromSlider(int position);
    void fromSpin(double shown);
    void showValue(double value);
    QString text(double value) const;

    std::string key_;
    DisplayUnit unit_;
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
