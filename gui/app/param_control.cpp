#include "param_control.hpp"

#include <algorithm>
#include <cmath>

#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QStyle>
#include <QStyleOptionSlider>

namespace linkem::gui {

QString paramLabel(const std::string& key, bool mnemonic) {
    static const std::pair<const char*, const char*> kLabels[] = {
        {"mean_delay_us", "&Mean delay"}, {"jitter_us", "&Jitter"},
        {"half_life_us", "&Half-life"},   {"rate_bps", "&Rate"},
        {"loss_probability", "&Loss"},    {"ge_p", "p: good→bad"},
        {"ge_r", "r: bad→good"},          {"ge_loss_good", "loss in good"},
        {"ge_loss_bad", "loss in bad"}};
    for (const auto& [k, l] : kLabels)
        if (key == k) return mnemonic ? QString::fromUtf8(l) : QString::fromUtf8(l).remove('&');
    return QString::fromStdString(key);
}

DisplayUnit DisplayUnit::forUnit(const std::string& unit) {
    DisplayUnit u;
    if (unit == "us") {
        u.suffix = " ms";
        u.per = 1000;
        u.decimals = 3;
    } else if (unit == "bit/s") {
        u.suffix = " Mbit/s";
        u.per = 1e6;
        u.decimals = 3;
    } else if (unit == "probability") {
        u.suffix = "";
        u.decimals = 6;
    } else {
        u.suffix = unit.empty() ? "" : " " + QString::fromStdString(unit);
        u.decimals = 0;
    }
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
    std::replace(k.begin(), k.end(), '_', ' ');
    return QString::fromStdString(k);
}
}  // namespace

ParamControl::ParamControl(const ParamSchema& schema, bool slider, QWidget* parent)
    : QWidget(parent), key_(schema.key) {
    const std::string& key = schema.key;
    setObjectName(QString::fromStdString(key));
    const std::string& unit = schema.unit;
    unit_ = DisplayUnit::forUnit(unit);
    schema_min_ = schema.min;
    schema_max_ = schema.max;
    const double default_value = as_number(schema.default_value).value_or(0.0);
    applied_ = default_value;
    range_ = workingRange(key, schema_min_, schema_max_, 0);

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(0);
    label_ = new QLabel(pretty(key), this);
    spin_ = new QDoubleSpinBox(this);
    spin_->setObjectName(QString::fromStdString(key) + "_spin");
    spin_->setDecimals(unit_.decimals);
    spin_->setRange(schema_min_ / unit_.per, schema_max_ / unit_.per);
    spin_->setSuffix(unit_.suffix);
    spin_->setKeyboardTracking(false);  // typing "20" sends 20, not 2 first
    spin_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    spin_->setAccelerated(true);
    label_->setBuddy(spin_);
    const QString help = QString::fromStdString(schema.help);
    tooltip_ = QString("<b>%1</b> (%2)<br>%3<br>range %4 .. %5%6, default %7%6")
                   .arg(QString::fromStdString(key),
                        unit.empty() ? QString("count") : QString::fromStdString(unit), help)
                   .arg(text(schema_min_), text(schema_max_), unit_.suffix, text(default_value));
    setToolTip(tooltip_);
    spin_->setToolTip(tooltip_);
    grid->addWidget(label_, 0, 0);
    int col = 1;
    if (slider) {
        slider_ = new QSlider(Qt::Horizontal, this);
        slider_->setObjectName(QString::fromStdString(key) + "_slider");
        slider_->setSingleStep(1);
        slider_->setPageStep(10);
        slider_->setMinimumWidth(100);
        slider_->setToolTip(
            tooltip_ +
            QString("<br><i>the slider covers %1 .. %2%3 (3× per 100 pixels at "
                    "most; type other values)</i>")
                .arg(text(range_.zero ? 0 : range_.low), text(range_.high), unit_.suffix));
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

void ParamControl::setMeanDelay(double us) {
    if (key_ != "jitter_us") return;
    const WorkingRange r = workingRange(key_, schema_min_, schema_max_, us);
    if (r.high == range_.high && r.low == range_.low) return;
    range_ = r;
    if (!dragging()) refit(shown());
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
    applied_label_->setText("= " + QString::number(v / unit_.per, 'g', 6) + unit_.suffix);
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
