// The Classes box of the Link pane (docs/classes.md): the link's traffic classes in a table
// (name, match, action, limiter, parameters), `default` first, then the classes in the order
// they are tried. The list is edited in place (add, remove, move up and down, a match typed
// as "protocol=udp,b_port=5060-5061", several match objects separated by ';') and sent as
// one set_link with `classes` by Apply, after the model's own checks: an error is shown in
// the cell its field path names ("classes[1].match.b_port": class 1's match), as is
// linkemd's refusal. The row chosen picks the class the sliders set.
#pragma once

#include <string>
#include <vector>

#include <QGroupBox>

#include "class_rows.hpp"
#include "linkem/classes.hpp"

class QLabel;
class QPushButton;
class QTableWidget;

namespace linkem::gui {

class ClassesPanel : public QGroupBox {
    Q_OBJECT
  public:
    /// The link parameters are not a column: the row chosen shows them under the table.
    enum Column { kName, kMatch, kAction, kLimiter, kColumns, kParameters = kColumns };

    explicit ClassesPanel(QWidget* parent = nullptr);

    /// The classes in force; the table follows them unless the user is editing it (then the
    /// classes' link parameters follow, the rest stays as the user has it).
    void showClasses(const std::vector<TrafficClass>& in_force);
    /// The class the sliders set: "default" or the name of a class in force.
    std::string sliderClass() const;
    void setSliderClass(const std::string& name);
    void setEditable(bool on);
    /// linkemd refused a class list: the error in the cell its field names.
    void showRefusal(const QString& field, const QString& message);

    /// Whether the table differs from the classes in force.
    bool isEdited() const { return edited_; }
    const std::vector<ClassRow>& rows() const { return rows_; }
    QTableWidget* table() const { return table_; }
    /// "add", "remove", "up", "down", "apply", "revert".
    QPushButton* button(const QString& name) const;
    /// The error shown at a cell (row 0 is `default`; column kParameters: the parameters
    /// line's error for that row), empty if none.
    QString cellError(int row, int column) const;
    QLabel* errorLabel() const { return error_; }
    /// The chosen class's link parameters (those that differ from the defaults).
    QLabel* parametersLabel() const { return params_; }

    /// Checks the table and, when it is right, asks for it to be applied.
    void apply();
    /// Back to the classes in force.
    void revert();

  signals:
    /// A checked list to send as one set_link `classes`.
    void applyRequested(const std::vector<linkem::TrafficClass>& classes);
    /// The row chosen names another class for the sliders.
    void sliderClassChanged(const std::string& name);

  private:
    void rebuild();
    void setEdited(bool on);
    void clearErrors();
    void showError(std::size_t index, const std::string& column, const QString& text);
    void onItemChanged(int row, int column);
    void onCurrentRow();
    void moveRow(int by);

    QTableWidget* table_ = nullptr;
    QPushButton *add_ = nullptr, *remove_ = nullptr, *up_ = nullptr, *down_ = nullptr,
                *apply_ = nullptr, *revert_ = nullptr;
    QLabel* error_ = nullptr;
    QLabel* params_ = nullptr;
    std::string params_error_;  // an error of the parameters: the row's index + 1, or empty
    void showParameters();
    std::vector<TrafficClass> in_force_;
    std::vector<ClassRow> rows_;
    std::vector<std::string> origin_;  // each row's class in force ("" for a new one)
    std::vector<TrafficClass> requested_;
    std::string slider_class_ = kDefaultClassName;
    bool edited_ = false, editable_ = false, building_ = false;
    int next_number_ = 1;
};

}  // namespace linkem::gui
