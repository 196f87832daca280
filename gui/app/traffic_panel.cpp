#include "traffic_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>

#include "client.hpp"
#include "linkem/traffic.hpp"

namespace linkem::gui {

TrafficPanel::TrafficPanel(Client& client, QWidget* parent) : QWidget(parent), client_(client) {
    setObjectName("traffic_panel");
    auto* tf = new QFormLayout(this);
    running_ = new QCheckBox("&sending", this);
    running_->setObjectName("traffic_running");
    pattern_ = new QComboBox(this);
    pattern_->setObjectName("traffic_pattern");
    pattern_->addItem("cbr", "cbr");
    pattern_->setItemData(0, "constant bit rate: evenly spaced frames", Qt::ToolTipRole);
    pattern_->addItem("poisson", "poisson");
    pattern_->setItemData(1, "random (exponential) gaps with the given mean rate", Qt::ToolTipRole);
    pattern_->addItem("sine", "sine");
    pattern_->setItemData(2, "rate swings from 0 to the given peak and back once per period",
                          Qt::ToolTipRole);
    rate_ = new QDoubleSpinBox(this);
    rate_->setObjectName("traffic_rate");
    rate_->setRange(TrafficLimits::kMinRate / 1e6, TrafficLimits::kMaxRate / 1e6);
    rate_->setDecimals(3);
    rate_->setSuffix(" Mbit/s");
    rate_->setToolTip("rate_bps: mean rate (cbr, poisson) or peak rate (sine), frame bytes × 8");
    frame_ = new QSpinBox(this);
    frame_->setObjectName("traffic_frame");
    frame_->setRange(TrafficLimits::kMinFrame, TrafficLimits::kMaxFrame);
    frame_->setSuffix(" bytes");
    frame_->setToolTip("frame_size_bytes, with the FCS");
    period_ = new QDoubleSpinBox(this);
    period_->setObjectName("traffic_period");
    period_->setRange(TrafficLimits::kMinPeriod / 1e9, TrafficLimits::kMaxPeriod / 1e9);
    period_->setDecimals(3);
    period_->setSuffix(" s");
    period_->setToolTip("period_us: the sine pattern's period");
    auto* apply = new QPushButton("Appl&y traffic", this);
    apply->setObjectName("traffic_apply");
    status_ = new QLabel(this);
    status_->setObjectName("traffic_status");
    status_->setWordWrap(true);
    tf->addRow(running_);
    tf->addRow("Pattern", pattern_);
    tf->addRow("Rate", rate_);
    tf->addRow("Frame size", frame_);
    tf->addRow("Period", period_);
    tf->addRow(apply);
    tf->addRow(status_);
    connect(apply, &QPushButton::clicked, this, &TrafficPanel::send);
    connect(pattern_, &QComboBox::currentIndexChanged, this,
            [this](int) { period_->setEnabled(pattern_->currentData() == "sine"); });
    setEnabled(false);
}

void TrafficPanel::setAvailable(bool available) {
    setEnabled(available);
    status_->setText(available ? QString()
                               : "this linkemd has no built-in traffic (it runs it on virtual "
                                 "ports: linkemd --demo)");
    if (available)
        client_.call<proto::Method::get_traffic>(
            {}, this, [this](const proto::TrafficState& t) { showTraffic(t); });
}

void TrafficPanel::showTraffic(const proto::TrafficState& t) {
    if (!t.available) {
        setEnabled(false);
        return;
    }
    running_->setChecked(t.config.running);
    const int i =
        pattern_->findData(QString::fromStdString(std::string(to_string(t.config.spec.pattern))));
    if (i >= 0) pattern_->setCurrentIndex(i);
    rate_->setValue(t.config.spec.rate_bps / 1e6);
    frame_->setValue(static_cast<int>(t.config.spec.frame_bytes));
    period_->setValue(static_cast<double>(t.config.spec.period) / kNsPerSec);
    status_->setText(QString("%1, %2 frames/s")
                         .arg(t.config.running ? "sending" : "stopped")
                         .arg(t.frames_per_s, 0, 'f', 0));
    status_->setStyleSheet({});
}

void TrafficPanel::send() {
    proto::TrafficUpdate u;
    u.running = running_->isChecked();
    const std::string pattern = pattern_->currentData().toString().toStdString();
    for (TrafficPattern p : {TrafficPattern::cbr, TrafficPattern::poisson, TrafficPattern::sine})
        if (pattern == to_string(p)) u.pattern = p;
    u.rate_bps = rate_->value() * 1e6;
    u.frame_size_bytes = static_cast<std::uint32_t>(frame_->value());
    if (u.pattern == TrafficPattern::sine) u.period_us = period_->value() * 1e6;
    client_.call<proto::Method::set_traffic>(
        u, this,
        [this](const proto::TrafficState& t) {
            showTraffic(t);
            emit applied();
        },
        [this](const Failure& f) {
            status_->setText(
                "linkemd refused: " + (f.field.isEmpty() ? QString() : f.field + ": ") + f.message);
            status_->setStyleSheet("color: #c00000;");
        });
}

}  // namespace linkem::gui
