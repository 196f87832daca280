// The controls of one direction (A→B or B→A): sliders with spin boxes for the numeric
// parameters, combo boxes with a one-line explanation each for the enums, the
// Gilbert-Elliott loss when that model is chosen (as average loss and mean burst length, and
// as p and r), the seed.
#pragma once

#include <map>
#include <string>

#include <functional>

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>

class QDoubleSpinBox;

#include "linkem/link_params_json.hpp"
#include "param_control.hpp"

namespace linkem::gui {

/// One line per enum value, for the labels and tooltips (teaching).
QString explain(const std::string& key, const std::string& value);
/// The same in one short line (under the combo; explain() is its tooltip).
QString explainShort(const std::string& key, const std::string& value);

class DirectionPanel : public QGroupBox {
    Q_OBJECT
  public:
    /// `schema`: linkemd's (hello).
    DirectionPanel(int direction, const QString& title, const LinkSchema& schema,
                   QWidget* parent = nullptr);

    int direction() const { return direction_; }
    /// Shows the parameters in force; `skip(key)` true: leave that field as the user has it
    /// (a change waits to be sent).
    void showLink(const LinkParams& params, const std::function<bool(const std::string&)>& skip);
    /// Shows linkemd's error at the field `key` (empty message: clears it).
    void setError(const std::string& key, const QString& message);
    void clearErrors();
    QString error(const std::string& key) const;

    ParamControl* control(const std::string& key) const;
    QComboBox* combo(const std::string& key) const;
    QLineEdit* seedEdit() const { return seed_; }
    /// Gilbert-Elliott as users ask for it: average loss (in %, as the loss probabilities) and mean
    /// burst length (packets); editing them sends ge_p and ge_r.
    QDoubleSpinBox* geAverageLoss() const { return ge_loss_; }
    QDoubleSpinBox* geMeanBurst() const { return ge_burst_; }

  signals:
    void edited(int direction, const std::string& key, const linkem::FieldValue& value);

  private:
    void addCombo(QFormLayout* form, const std::string& key, const LinkSchema& schema);
    /// The field table's "depends on" rules with the values shown (param_rules.hpp).
    void updateVisibility();
    void showGeFigures();
    void fromGeFigures();

    int direction_;
    std::map<std::string, ParamControl*> controls_;
    std::map<std::string, QComboBox*> combos_;
    std::map<std::string, QLabel*> combo_help_;
    std::map<std::string, QLabel*> combo_errors_;
    QWidget* ge_box_ = nullptr;
    QDoubleSpinBox *ge_loss_ = nullptr, *ge_burst_ = nullptr;
    QLabel* ge_note_ = nullptr;
    QLineEdit* seed_ = nullptr;
    QLabel* seed_error_ = nullptr;
    bool updating_ = false;
};

}  // namespace linkem::gui
