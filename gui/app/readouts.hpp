// Readouts that teach: per direction, what the link gives against what was asked, since the
// last parameter change and over the charts' time window, each with its sample count
// (ReadoutModel, gui/model/readout_model.hpp).
#pragma once

#include <map>

#include <QGridLayout>
#include <QLabel>
#include <QWidget>

#include "readout_model.hpp"

namespace linkem::gui {

/// "20.102 ms" from ns.
QString formatMs(double ns, int decimals = 3);
/// "+0.5 %": got against want (empty when want is 0).
QString deviation(double got, double want);
/// "12 034": a count with thin spaces between thousands.
QString formatCount(std::uint64_t n);

class Readouts : public QWidget {
    Q_OBJECT
  public:
    enum Scope { since_change = 0, window = 1 };

    explicit Readouts(const ReadoutModel& model, QWidget* parent = nullptr);
    void setDirections(int n);
    void setWindow(double seconds);
    /// The link has traffic classes: the figures are every class together, so they are not
    /// judged against `default`'s set values (no deviation, no colour).
    void setHasClasses(bool on) { classes_ = on; }
    /// Shows the model's figures now (called on a timer; cheap).
    void refresh();
    void clear();
    /// The text of one readout, for tests: row id ("emulated_mean", ...), direction, scope
    /// (rows with one figure per direction: either scope gives it).
    QString text(const QString& row, int direction, Scope scope = since_change) const;

  private:
    void addRow(const QString& id, const QString& name, const QString& tooltip, bool scoped);
    void set(const QString& id, int d, Scope s, const QString& text, const QString& style = {});

    const ReadoutModel& model_;
    std::map<QString, QLabel*> cells_[2][2];  // [direction][scope]
    std::map<QString, bool> scoped_;
    QLabel* scope_head_[2][2] = {};
    QLabel* dir_head_[2] = {};
    QGridLayout* grid_ = nullptr;
    int rows_ = 2;
    int directions_ = 2;
    double window_s_ = 30;
    bool classes_ = false;
};

}  // namespace linkem::gui
