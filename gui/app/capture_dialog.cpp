#include "capture_dialog.hpp"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace linkem::gui {

CaptureDialog::CaptureDialog(QWidget* parent) : QDialog(parent) {
    setObjectName("capture_dialog");
    setWindowTitle("Record a capture");
    auto* form = new QFormLayout(this);

    file_ = new QLineEdit(this);
    file_->setObjectName("capture_file");
    file_->setMinimumWidth(fontMetrics().averageCharWidth() * 48);
    file_->setToolTip("the pcapng file linkemd writes: a path on linkemd's machine, from / (file)");
    browse_ = new QPushButton("&Browse…", this);
    browse_->setObjectName("capture_browse");
    auto* file_row = new QHBoxLayout;
    file_row->addWidget(file_, 1);
    file_row->addWidget(browse_);
    auto* file_label = new QLabel("&File", this);
    file_label->setBuddy(file_);
    form->addRow(file_label, file_row);

    in_ = new QCheckBox("&in (as it arrived)", this);
    in_->setObjectName("capture_in");
    out_ = new QCheckBox("&out (as it left, with its delay)", this);
    out_->setObjectName("capture_out");
    drop_ = new QCheckBox("&drop (when dropped, with the cause)", this);
    drop_->setObjectName("capture_drop");
    auto* points = new QVBoxLayout;
    points->addWidget(in_);
    points->addWidget(out_);
    points->addWidget(drop_);
    form->addRow("Points", points);

    snaplen_ = new QSpinBox(this);
    snaplen_->setObjectName("capture_snaplen");
    snaplen_->setRange(static_cast<int>(capture::kMinSnaplen),
                       static_cast<int>(capture::kMaxSnaplen));
    snaplen_->setSuffix(" bytes");
    snaplen_->setToolTip("the bytes of each frame kept (snaplen_bytes); the headers fit in 128");
    auto* snap_label = new QLabel("&Snaplen", this);
    snap_label->setBuddy(snaplen_);
    form->addRow(snap_label, snaplen_);

    until_ = new QRadioButton("until &stopped", this);
    until_->setObjectName("capture_until_stopped");
    for_ = new QRadioButton("&for", this);
    for_->setObjectName("capture_for");
    duration_ = new QDoubleSpinBox(this);
    duration_->setObjectName("capture_duration");
    duration_->setRange(0.1, 86400);
    duration_->setDecimals(1);
    duration_->setSuffix(" s");
    duration_->setToolTip("linkemd stops the capture after this long (duration_s)");
    auto* how_long = new QHBoxLayout;
    how_long->addWidget(until_);
    how_long->addSpacing(12);
    how_long->addWidget(for_);
    how_long->addWidget(duration_);
    how_long->addStretch(1);
    form->addRow("How long", how_long);

    error_ = new QLabel(this);
    error_->setObjectName("capture_error");
    error_->setWordWrap(true);
    error_->setStyleSheet("color: #c00000;");
    error_->hide();
    form->addRow(error_);

    auto* buttons = new QDialogButtonBox(this);
    start_ = buttons->addButton("Start &recording", QDialogButtonBox::AcceptRole);
    start_->setObjectName("capture_start");
    start_->setDefault(true);
    buttons->addButton(QDialogButtonBox::Cancel);
    form->addRow(buttons);

    connect(browse_, &QPushButton::clicked, this, &CaptureDialog::browse);
    connect(for_, &QRadioButton::toggled, duration_, &QWidget::setEnabled);
    connect(buttons, &QDialogButtonBox::accepted, this, &CaptureDialog::start);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    setForm(CaptureForm{});
}

QCheckBox* CaptureDialog::point(capture::Point p) const {
    return p == capture::Point::in ? in_ : p == capture::Point::out ? out_ : drop_;
}

CaptureForm CaptureDialog::form() const {
    CaptureForm f;
    f.file = file_->text().trimmed().toStdString();
    f.in = in_->isChecked();
    f.out = out_->isChecked();
    f.drop = drop_->isChecked();
    f.snaplen = static_cast<std::uint32_t>(snaplen_->value());
    f.duration_s = for_->isChecked() ? duration_->value() : 0;
    return f;
}

void CaptureDialog::setForm(const CaptureForm& f) {
    file_->setText(QString::fromStdString(f.file));
    in_->setChecked(f.in);
    out_->setChecked(f.out);
    drop_->setChecked(f.drop);
    snaplen_->setValue(static_cast<int>(f.snaplen));
    (f.duration_s > 0 ? for_ : until_)->setChecked(true);
    duration_->setValue(f.duration_s > 0 ? f.duration_s : 10);
    duration_->setEnabled(f.duration_s > 0);
}

void CaptureDialog::start() {
    const FormCheck c = check_form(form());
    if (!c.settings) {
        showError(QString::fromStdString(c.field),
                  QString::fromStdString(c.field + ": " + c.message));
        return;
    }
    showError({}, {});
    emit startRequested(*c.settings);
}

QWidget* CaptureDialog::fieldWidget(const QString& field) const {
    if (field == "file") return file_;
    if (field == "points") return out_;
    if (field == "snaplen_bytes") return snaplen_;
    if (field == "duration_s") return duration_;
    return nullptr;
}

void CaptureDialog::showError(const QString& field, const QString& text) {
    error_->setText(text);
    error_->setVisible(!text.isEmpty());
    if (QWidget* w = fieldWidget(field); w && !text.isEmpty() && w->isEnabled()) w->setFocus();
    adjustSize();
}

QString CaptureDialog::errorText() const {
    return error_->isVisible() ? error_->text() : QString();
}

void CaptureDialog::setBusy(bool on) {
    start_->setEnabled(!on);
    start_->setText(on ? "Starting…" : "Start &recording");
}

void CaptureDialog::browse() {
    const QString path = QFileDialog::getSaveFileName(this, "Capture file", file_->text(),
                                                      "pcapng (*.pcapng);;All files (*)");
    if (!path.isEmpty()) file_->setText(path);
}

}  // namespace linkem::gui
