#include "param_control.hpp"

#include <algorithm>
#include <cmath>

#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QStyle>
#include <QStyleOptionSlider>

namespace linkem::gui {

namespace {
// The spin box shows a value as typed: "94.7 ms", not "94.700 ms".
class ParamSpinBox : public QDoubleSpinBox {
  public:
    using QDoubleSpinBox::QDoubleSpinBox;
    QString textFromValue(double v) const override {
        QString t = QDoubleSpinBox::textFromValue(v);
        const QString point = locale().decimalPoint();
        if (t.contains(point)) {
            while (t.endsWith('0'))
                t.chop(1);
            if (t.endsWith(point)) t.chop(point.size());
        }
        return t;
    }
};
}  // namespace

QString paramLabel(const std::string& key, bool mnemonic) {
    const LinkParamField* f = link_param_field(key);
    if (!f || f->label.empty()) return QString::fromStdString(key);
    return QString::fromStdString(mnemonic ? f->label : f->label_text());
}

DisplayUnit DisplayUnit::forKey(const std::string& key, const std::string& schema_unit) {
    DisplayUnit u;
    if (const LinkParamField* f = link_param_field(key)) {
        u.suffix = f->shown.name.empty() ? QString() : " " + QString::fromStdString(f->shown.name);
        u.per = f->shown.per;
        u.decimals = f->shown.decimals;
    } else {
        u.suffix = schema_unit.empty() ? QString() : " " + QString::fromStdString(schema_unit);
    }
    return u;
}

ParamControl::ParamControl(const ParamSchema& schema, bool slider, QWidget* parent)
    : QWidget(parent), key_(schema.key) {
    const std::string& key = schema.key;
    setObjectName(QString::fromStdString(key));
    const std::string& unit = schema.unit;
    unit_ = DisplayUnit::forKey(key, unit);
    schema_min_ = schema.min;
    schema_max_ = schema.max;
    const double default_value = as_number(schema.default_value).value_or(0.0);
    applied_ = default_value;
    range_ = workingRange(key, schema_min_, schema_max_, 0);

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(0);
    label_ = new QLabel(paramLabel(key, true), this);
    spin_ = new ParamSpinBox(this);
    spin_->setObjectName(QString::fromStdString(key) + "_spin");
    spin_->setDecimals(unit_.decimals);
    spin_->setRange(schema_min_ / unit_.per, schema_max_ / unit_.per);
    spin_->setSuffix(unit_.suffix);
    spin_->setKeyboardTracking(false);  // typing "20" sends 20, not 2 first
    spin_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    spin_->setAccelerated(true);
    label_->setBuddy(spin_);
    const QString help = QString::fromStdString(schema.help);
    tooltip_ = QString("<b>%1</b>: <b>%2</b> (%3)<br>%4<br>range %5 .. %6%7, default %8%7")
                   .arg(paramLabel(key), QString::fromStdString(key),
                        unit.empty() ? QString("count") : QString::fromStdString(unit), help)
                   .arg(text(schema_min_), text(schema_max_), unit_.suffix, text(default_value));
    grid->addWidget(label_, 0, 0);
    int col = 1;
    if (slider) {
        slider_ = new QSlider(Qt::Horizontal, this);
        slider_->setObjectName(QString::fromStdString(key) + "_slider");
        slider_->setSingleStep(1);
        slider_->setPageStep(10);
        slider_->setMinimumWidth(100);
        slider_->setFocusPolicy(Qt::StrongFocus);
        slider_->installEventFilter(this);
        grid->addWidget(slider_, 0, col++);
        connect(slider_, &QSlider::valueChanged, this, &ParamControl::fromSlider);
        connect(slider_, &QSlider::sliderReleased, this, [this] {
            if (!scale_.comfortable(shown())) refit(shown());
        });
    }
    grid->addWidget(spin_, 0, col++);
    applied_label_ = new QLabel(this);
    applied_label_->setObjectName(QString::fromStdString(key) + "_applied");
    applied_label_->setToolTip("the value linkemd applied (get_link / set_link's answer)");
    QFont f = applied_label_->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    applied_label_->setFont(f);
    applied_label_->setProperty("linkem_small", true);  // follows the layout's font
    applied_label_->setStyleSheet("color: palette(mid);");
    grid->addWidget(applied_label_, 0, col++);
    error_label_ = new QLabel(this);
    error_label_->setObjectName(QString::fromStdString(key) + "_error");
    error_label_->setStyleSheet("color: #c00000;");
    error_label_->setWordWrap(true);
    error_label_->hide();
    grid->addWidget(error_label_, 1, 0, 1, col);
    grid->setColumnStretch(1, 1);
    connect(spin_, &QDoubleSpinBox::valueChanged, this, &ParamControl::fromSpin);
    refit(applied_);
    showValue(applied_);
    refreshTips();
}

void ParamControl::refreshTips() {
    QString tip = tooltip_;
    if (!applies_ && !why_.isEmpty()) tip = "<i>" + why_.toHtmlEscaped() + "</i><br>" + tip;
    setToolTip(tip);
    if (slider_)
        slider_->setToolTip(
            tip + QString("<br><i>the slider covers %1 .. %2%3 in round steps (3× per 100 "
                          "pixels at most; type other values)</i>")
                      .arg(text(range_.zero ? 0 : range_.low), text(range_.high), unit_.suffix));
    if (!error_.isEmpty())
        tip = "<span style='color:#c00000'>linkemd refused: " + error_.toHtmlEscaped() +
              "</span><br>" + tip;
    spin_->setToolTip(tip);
}

QString ParamControl::text(double v) const {
    return QString::number(v / unit_.per, 'g', 7);
}

bool ParamControl::dragging() const {
    return slider_ && slider_->isSliderDown();
}

double ParamControl::shown() const {
    return spin_->value() * unit_.per;
}

int ParamControl::sliderPixels() const {
    // The pixels the handle travels: the groove less the handle, as QSlider maps them.
    QStyleOptionSlider opt;
    opt.initFrom(slider_);
    opt.orientation = Qt::Horizontal;
    opt.minimum = slider_->minimum();
    opt.maximum = slider_->maximum();
    opt.sliderPosition = slider_->sliderPosition();
    opt.sliderValue = slider_->value();
    opt.subControls = QStyle::SC_All;
    const QRect groove =
        slider_->style()->subControlRect(QStyle::CC_Slider, &opt, QStyle::SC_SliderGroove, slider_);
    const QRect handle =
        slider_->style()->subControlRect(QStyle::CC_Slider, &opt, QStyle::SC_SliderHandle, slider_);
    return std::max(20, groove.width() - handle.width());
}

void ParamControl::refit(double around) {
    if (!slider_) return;
    scale_ = SliderScale::fit(range_, sliderPixels(), around);
    updating_ = true;
    slider_->setRange(0, scale_.steps);
    slider_->setValue(scale_.position(shown()));
    updating_ = false;
}

bool ParamControl::eventFilter(QObject* watched, QEvent* e) {
    if (watched == slider_ && e->type() == QEvent::Resize && !dragging()) refit(shown());
    return QWidget::eventFilter(watched, e);
}

void ParamControl::setFollowed(double value) {
    const WorkingRange r = workingRange(key_, schema_min_, schema_max_, value);
    if (r.high == range_.high && r.low == range_.low) return;
    range_ = r;
    if (!dragging()) refit(shown());
    refreshTips();
}

void ParamControl::setApplies(bool on, const QString& why) {
    if (on == applies_ && why == why_) return;
    applies_ = on;
    why_ = why;
    if (slider_) slider_->setEnabled(on);
    spin_->setEnabled(on);
    refreshTips();
}

void ParamControl::setAppliedShown(bool on) {
    applied_label_->setVisible(on);
}

void ParamControl::showValue(double v) {
    updating_ = true;
    spin_->setValue(v / unit_.per);
    updating_ = false;
    if (!slider_) return;
    if (!scale_.comfortable(v)) refit(v);
    updating_ = true;
    slider_->setValue(scale_.position(v));
    updating_ = false;
}

void ParamControl::setApplied(double v) {
    applied_ = v;
    // whole numbers whole (a queue limit of 1048576 bytes, not 1.04858e+06)
    const double shown = v / unit_.per;
    const bool whole = unit_.decimals == 0 && std::abs(shown) < 1e15;
    applied_label_->setText("= " +
                            (whole ? QString::number(static_cast<qlonglong>(std::llround(shown)))
                                   : QString::number(shown, 'g', 6)) +
                            unit_.suffix);
    if (!dragging()) showValue(v);
}

void ParamControl::fromSlider(int position) {
    if (updating_) return;
    double v = scale_.value(position);
    // Round to what the spin box shows, so that the value sent is the value seen.
    const double q = std::pow(10.0, unit_.decimals);
    v = std::round(v / unit_.per * q) / q * unit_.per;
    v = std::clamp(v, schema_min_, schema_max_);
    updating_ = true;
    spin_->setValue(v / unit_.per);
    updating_ = false;
    emit edited(key_, v);
}

void ParamControl::fromSpin(double shown_value) {
    if (updating_) return;
    const double v = shown_value * unit_.per;
    if (slider_) {
        if (!scale_.comfortable(v)) refit(v);
        updating_ = true;
        slider_->setValue(scale_.position(v));
        updating_ = false;
    }
    emit edited(key_, v);
}

void ParamControl::setError(const QString& message) {
    error_ = message;
    if (message.isEmpty()) {
        spin_->setStyleSheet({});
        error_label_->hide();
        error_label_->clear();
    } else {
        spin_->setStyleSheet("QDoubleSpinBox { border: 2px solid #d00000; }");
        error_label_->setText("linkemd refused: " + message);
        error_label_->show();
    }
    refreshTips();
}

}  // namespace linkem::gui
