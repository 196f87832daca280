// The Record dialog: what to capture (docs/gui.md, "Recording a capture"): the file linkemd
// writes (with Browse…), the points (in, out, drop), the snaplen, and how long (until
// stopped, or for a duration). Start checks the fields (capture_model.hpp) and asks for the
// capture; linkemd's refusal (invalid_params naming the field, unavailable while another
// capture runs) is shown in the dialog, which stays open: nothing was started.
#pragma once

#include <QDialog>

#include "capture_model.hpp"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;

namespace linkem::gui {

class CaptureDialog : public QDialog {
    Q_OBJECT
  public:
    explicit CaptureDialog(QWidget* parent = nullptr);

    CaptureForm form() const;
    void setForm(const CaptureForm& f);
    /// Checks the fields and, when they are good, emits startRequested; else shows the error.
    void start();
    /// An error under the fields ("file: no file given; ..."; linkemd's message as it says
    /// it), the widget of `field` (capture_start's param name) focused; empty clears it.
    void showError(const QString& field, const QString& text);
    QString errorText() const;
    /// While capture_start is on its way: Start disabled, "Starting…".
    void setBusy(bool on);

    QLineEdit* file() const { return file_; }
    QPushButton* browseButton() const { return browse_; }
    QCheckBox* point(capture::Point p) const;
    QSpinBox* snaplen() const { return snaplen_; }
    QRadioButton* untilStopped() const { return until_; }
    QRadioButton* forDuration() const { return for_; }
    QDoubleSpinBox* duration() const { return duration_; }
    QPushButton* startButton() const { return start_; }
    QLabel* errorLabel() const { return error_; }

  signals:
    void startRequested(const linkem::capture::Settings& settings);

  private:
    void browse();
    QWidget* fieldWidget(const QString& field) const;

    QLineEdit* file_ = nullptr;
    QPushButton *browse_ = nullptr, *start_ = nullptr;
    QCheckBox *in_ = nullptr, *out_ = nullptr, *drop_ = nullptr;
    QSpinBox* snaplen_ = nullptr;
    QRadioButton *until_ = nullptr, *for_ = nullptr;
    QDoubleSpinBox* duration_ = nullptr;
    QLabel* error_ = nullptr;
};

}  // namespace linkem::gui

Q_DECLARE_METATYPE(linkem::capture::Settings)
