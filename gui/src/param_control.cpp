#include "param_control.hpp"

#include <algorithm>
#include <cmath>

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>

namespace linkem::gui {

using nlohmann::json;

SliderScale SliderScale::make(double min, double max, double low, int steps) {
    SliderScale s;
    s.min = min;
    s.max = max;
    s.steps = steps;
    s.low = std::max(low, min);
    // Log-like when the non-zero part of the range spans at least three decades.
    s.log = s.low > 0 && max / s.low >= 1000;
    return s;
}

double SliderScale::value(int p) const {
    p = std::clamp(p, 0, steps);
    if (!log) return min + (max - min) * p / steps;
    if (min < low) {  // position 0 is min (0), 1..steps log from low to max
        if (p == 0) return min;
        return low * std::pow(max / low, static_cast<double>(p - 1) / (steps - 1));
    }
    return low * std::pow(max / low, static_cast<double>(p) / steps);
}

int SliderScale::position(double v) const {
    if (!log) {
        if (max <= min) return 0;
        return std::clamp(static_cast<int>(std::lround((v - min) / (max - min) * steps)), 0, steps);
    }
    if (min < low) {
        if (v <= min || v < low * 0.5) return 0;
        const double f = std::log(std::max(v, low) / low) / std::log(max / low);
        return std::clamp(1 + static_cast<int>(std::lround(f * (steps - 1))), 1, steps);
    }
    const double f = std::log(std::max(v, low) / low) / std::log(max / low);
    return std::clamp(static_cast<int>(std::lround(f * steps)), 0, steps);
}

DisplayUnit DisplayUnit::for_key(const std::string& key, const std::string& unit) {
    DisplayUnit u;
    if (unit == "us") {
        u.suffix = " ms";
        u.per = 1000;
        u.decimals = 3;
        u.low = 1;  // 1 us: 0.1 ms sits well inside the slider's low end
    } else if (unit == "bit/s") {
        u.suffix = " Mbit/s";
        u.per = 1e6;
        u.decimals = 3;
        u.low = 1e3;
    } else if (unit == "probability") {
        u.suffix = "";
        u.decimals = 6;
        u.low = 1e-6;
    } else {
        u.suffix = unit.empty() ? "" : " " + QString::fromStdString(unit);
        u.decimals = 0;
        u.low = 1;
    }
    (void)key;
    return u;
}

namespace {
QString pretty(const std::string& key) {
    // "mean_delay_us" -> "mean delay" (the key itself is in the tooltip).
    std::string k = key;
    for (const char* suffix : {"_us", "_bps", "_bytes", "_packets"}) {
        const std::string s(suffix);
        if (k.size() > s.size() && k.ends_with(s)) {
            k.resize(k.size() - s.size());
            break;
        }
    }
    if (k == "ge_p") return "GE p (good→bad)";
    if (k == "ge_r") return "GE r (bad→good)";
    if (k == "ge_loss_good") return "GE loss in good";
    if (k == "ge_loss_bad") return "GE loss in bad";
    if (k == "loss_probability") return "loss";
    if (k == "rate") return "rate";
    std::replace(k.begin(), k.end(), '_', ' ');
    return QString::fromStdString(k);
}
}  // namespace

ParamControl::ParamControl(const std::string& key, const json& schema, bool slider, QWidget* parent)
    : QWidget(parent), key_(key) {
    setObjectName(QString::fromStdString(key));
    const std::string unit = schema.value("unit", "");
    unit_ = DisplayUnit::for_key(key, unit);
    const double min = schema.value("min", 0.0), max = schema.value("max", 1.0);
    scale_ = SliderScale::make(min, max, unit_.low);

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(0);
    label_ = new QLabel(pretty(key), this);
    spin_ = new QDoubleSpinBox(this);
    spin_->setObjectName(QString::fromStdString(key) + "_spin");
    spin_->setDecimals(unit_.decimals);
    spin_->setRange(min / unit_.per, max / unit_.per);
    spin_->setSuffix(unit_.suffix);
    spin_->setKeyboardTracking(false);  // typing "20" sends 20, not 2 first
    spin_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    spin_->setAccelerated(true);
    spin_->setMinimumWidth(112);
    label_->setBuddy(spin_);
    const QString help = QString::fromStdString(schema.value("help", ""));
    tooltip_ = QString("<b>%1</b> (%2)<br>%3<br>range %4 .. %5%6, default %7%6")
                   .arg(QString::fromStdString(key),
                        unit.empty() ? QString("count") : QString::fromStdString(unit), help)
                   .arg(text(min), text(max), unit_.suffix, text(schema.value("default", 0.0)));
    setToolTip(tooltip_);
    spin_->setToolTip(tooltip_);
    grid->addWidget(label_, 0, 0);
    int col = 1;
    if (slider) {
        slider_ = new QSlider(Qt::Horizontal, this);
        slider_->setObjectName(QString::fromStdString(key) + "_slider");
        slider_->setRange(0, scale_.steps);
        slider_->setSingleStep(1);
        slider_->setPageStep(scale_.steps / 20);
        slider_->setMinimumWidth(70);
        slider_->setToolTip(
            tooltip_ +
            (scale_.log ? "<br><i>log-like scale: each step multiplies the value</i>" : ""));
        slider_->setFocusPolicy(Qt::StrongFocus);
        grid->addWidget(slider_, 0, col++);
        connect(slider_, &QSlider::valueChanged, this, &ParamControl::fromSlider);
    }
    grid->addWidget(spin_, 0, col++);
    applied_label_ = new QLabel(this);
    applied_label_->setObjectName(QString::fromStdString(key) + "_applied");
    applied_label_->setToolTip("the value linkemd applied (get_link / set_link's answer)");
    applied_label_->setMinimumWidth(72);
    QFont f = applied_label_->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    applied_label_->setFont(f);
    applied_label_->setProperty("linkem_small", true);  // scaled with the projector mode
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
    applied_ = schema.value("default", 0.0);
    showValue(applied_);
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

void ParamControl::showValue(double v) {
    updating_ = true;
    spin_->setValue(v / unit_.per);
    if (slider_) slider_->setValue(scale_.position(v));
    updating_ = false;
}

void ParamControl::setApplied(double v) {
    applied_ = v;
    applied_label_->setText("= " + QString::number(v / unit_.per, 'g', 6) + unit_.suffix);
    if (!dragging()) showValue(v);
}

void ParamControl::fromSlider(int position) {
    if (updating_) return;
    double v = scale_.value(position);
    // Round to what the spin box shows, so that the value sent is the value seen.
    const double q = std::pow(10.0, unit_.decimals);
    v = std::round(v / unit_.per * q) / q * unit_.per;
    v = std::clamp(v, scale_.min, scale_.max);
    updating_ = true;
    spin_->setValue(v / unit_.per);
    updating_ = false;
    emit edited(key_, v);
}

void ParamControl::fromSpin(double shown_value) {
    if (updating_) return;
    const double v = shown_value * unit_.per;
    updating_ = true;
    if (slider_) slider_->setValue(scale_.position(v));
    updating_ = false;
    emit edited(key_, v);
}

void ParamControl::setError(const QString& message) {
    error_ = message;
    if (message.isEmpty()) {
        spin_->setStyleSheet({});
        error_label_->hide();
        error_label_->clear();
        spin_->setToolTip(tooltip_);
        return;
    }
    spin_->setStyleSheet("QDoubleSpinBox { border: 2px solid #d00000; }");
    error_label_->setText("linkemd refused: " + message);
    error_label_->show();
    spin_->setToolTip("<span style='color:#c00000'>linkemd refused: " + message.toHtmlEscaped() +
                      "</span><br>" + tooltip_);
}

}  // namespace linkem::gui
