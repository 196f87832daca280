// The Link pane: "Same both ways", the preset box (a preset, or "Custom" when the link in
// force is none of them, with Apply and where it goes), and the controls of each direction,
// side by side when the pane is wide enough, one above the other when it is not: never cut
// off, never a sideways scroll bar.
#pragma once

#include <functional>
#include <string>

#include <QScrollArea>

#include "linkem/messages.hpp"

class QBoxLayout;
class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QVBoxLayout;

namespace linkem::gui {

class ClassesPanel;
class DirectionPanel;

/// Puts the direction columns side by side when the pane is wide enough for both, one above
/// the other when it is not.
class ColumnsFit : public QObject {
  public:
    ColumnsFit(QScrollArea* area, QBoxLayout* row);
    bool eventFilter(QObject*, QEvent* e) override;
    void fit();
    /// The pane's width with the columns side by side (0 before there are any).
    int sideBySide() const;
    int oneColumn() const;

  private:
    std::vector<const QWidget*> columns() const;
    int chrome() const;  // margins, the frame and a vertical scroll bar
    QScrollArea* area_;
    QBoxLayout* row_;
};

class LinkControls : public QScrollArea {
    Q_OBJECT
  public:
    explicit LinkControls(QWidget* parent = nullptr);

    /// Builds the direction columns from linkemd's schema (hello).
    void build(const LinkSchema& schema, int directions);
    int directions() const { return directions_; }
    DirectionPanel* panel(int d) const { return panels_[d]; }
    QCheckBox* sameBothWays() const { return same_; }
    QComboBox* presetCombo() const { return preset_combo_; }
    QComboBox* presetTarget() const { return preset_target_; }
    QPushButton* presetApply() const { return preset_apply_; }
    QLabel* presetInfo() const { return preset_info_; }
    ColumnsFit* columnsFit() const { return fit_; }
    /// The link's classes; the row chosen picks the class the sliders set.
    ClassesPanel* classes() const { return classes_; }
    /// "Sliders set: class voip, both ways" over the direction columns.
    QLabel* slidersLabel() const { return sliders_label_; }
    /// The class the direction columns show and set (`default` or a class's name) and why
    /// they are disabled for it, if they are ("a pass class ..."; empty: enabled).
    void setSliderClass(const QString& name, const QString& disabled_why);
    /// The parameters in force; `pending(d, key)`: leave that field as the user has it.
    void showLink(const LinkConfig& applied,
                  const std::function<bool(int, const std::string&)>& pending);
    /// Enables the directions that may be edited now.
    void setEditable(bool connected);
    /// linkemd refused `field` ("a_to_b.jitter_us", "seed", ...).
    void showRefusal(const QString& field, const QString& message);
    /// An update was accepted: its fields' errors go.
    void clearErrors(const proto::LinkUpdate& update);

  signals:
    void edited(int direction, const std::string& key, const linkem::FieldValue& value);

  private:
    QWidget* box_ = nullptr;
    QVBoxLayout* layout_ = nullptr;
    QBoxLayout* row_ = nullptr;
    ColumnsFit* fit_ = nullptr;
    DirectionPanel* panels_[2] = {nullptr, nullptr};
    int directions_ = 2;
    bool editable_ = false;
    QCheckBox* same_ = nullptr;
    QComboBox *preset_combo_ = nullptr, *preset_target_ = nullptr;
    QPushButton* preset_apply_ = nullptr;
    QLabel* preset_info_ = nullptr;
    ClassesPanel* classes_ = nullptr;
    QLabel* sliders_label_ = nullptr;
    QString slider_class_ = "default", disabled_why_;
    void showSlidersLabel();
};

}  // namespace linkem::gui
