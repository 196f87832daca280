#include "link_controls.hpp"

#include <algorithm>

#include <QBoxLayout>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>

#include "classes_panel.hpp"
#include "direction_panel.hpp"
#include "linkem/messages.hpp"

namespace linkem::gui {

namespace {
const char* kDirTitle[2] = {"A → B", "B → A"};
}

ColumnsFit::ColumnsFit(QScrollArea* area, QBoxLayout* row) : QObject(area), area_(area), row_(row) {
    area->viewport()->installEventFilter(this);
}

bool ColumnsFit::eventFilter(QObject*, QEvent* e) {
    if (e->type() == QEvent::Resize) fit();
    return false;
}

void ColumnsFit::fit() {
    const int both = sideBySide();
    if (both == 0) return;
    const auto dir = area_->width() >= both ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
    if (row_->direction() != dir) row_->setDirection(dir);
    area_->setMinimumWidth(oneColumn());  // the pane never narrower than one column
}

int ColumnsFit::sideBySide() const {
    int need = 0, n = 0;
    for (const QWidget* w : columns()) {
        need += w->minimumSizeHint().width();
        ++n;
    }
    return n == 0 ? 0 : need + (n - 1) * std::max(0, row_->spacing()) + chrome();
}

int ColumnsFit::oneColumn() const {
    int one = 0;
    for (const QWidget* w : columns())
        one = std::max(one, w->minimumSizeHint().width());
    // The rows above the columns (presets, the classes) have their own minimum.
    for (int i = 0; i < area_->widget()->layout()->count(); ++i) {
        QLayoutItem* item = area_->widget()->layout()->itemAt(i);
        if (QLayout* l = item->layout(); l && l != row_)
            one = std::max(one, l->minimumSize().width());
        if (const QWidget* w = item->widget(); w && !w->isHidden())
            one = std::max(one, w->minimumSizeHint().width());
    }
    return one + chrome();
}

std::vector<const QWidget*> ColumnsFit::columns() const {
    std::vector<const QWidget*> v;
    for (int i = 0; i < row_->count(); ++i)
        if (const QWidget* w = row_->itemAt(i)->widget(); w && !w->isHidden()) v.push_back(w);
    return v;
}

int ColumnsFit::chrome() const {
    const QMargins m = area_->widget()->layout()->contentsMargins();
    return m.left() + m.right() + 2 * area_->frameWidth() +
           area_->verticalScrollBar()->sizeHint().width();
}

LinkControls::LinkControls(QWidget* parent) : QScrollArea(parent) {
    setObjectName("link_controls");
    setWidgetResizable(true);
    box_ = new QWidget(this);
    layout_ = new QVBoxLayout(box_);
    auto* top = new QHBoxLayout;
    same_ = new QCheckBox("&Same both ways", box_);
    same_->setObjectName("same_both_ways");
    same_->setToolTip("A→B's settings apply to both directions (set_link's top-level keys)");
    top->addWidget(same_);
    top->addStretch();
    layout_->addLayout(top);

    auto* presets = new QHBoxLayout;
    auto* pl = new QLabel("&Preset", box_);
    preset_combo_ = new QComboBox(box_);
    preset_combo_->setObjectName("preset_combo");
    preset_combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    preset_combo_->setMinimumContentsLength(14);
    pl->setBuddy(preset_combo_);
    preset_target_ = new QComboBox(box_);
    preset_target_->setObjectName("preset_target");
    preset_target_->addItem("both ways", -1);
    preset_target_->addItem("A→B only", 0);
    preset_target_->addItem("B→A only", 1);
    preset_target_->setToolTip(
        "where the preset goes: an asymmetric preset gives each direction its own figures; "
        "'only' applies that direction's figures");
    preset_apply_ = new QPushButton("&Apply", box_);
    preset_apply_->setObjectName("preset_apply");
    presets->addWidget(pl);
    presets->addWidget(preset_combo_, 1);
    presets->addWidget(preset_target_);
    presets->addWidget(preset_apply_);
    layout_->addLayout(presets);
    preset_info_ = new QLabel(box_);
    preset_info_->setObjectName("preset_info");
    preset_info_->setWordWrap(true);
    preset_info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont f = preset_info_->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    preset_info_->setFont(f);
    preset_info_->setProperty("linkem_small", true);  // follows the layout's font
    layout_->addWidget(preset_info_);

    classes_ = new ClassesPanel(box_);
    layout_->addWidget(classes_);
    sliders_label_ = new QLabel(box_);
    sliders_label_->setObjectName("sliders_label");
    sliders_label_->setWordWrap(true);
    layout_->addWidget(sliders_label_);
    connect(same_, &QCheckBox::toggled, this, [this] { showSlidersLabel(); });

    row_ = new QHBoxLayout;
    row_->setObjectName("direction_row");
    layout_->addLayout(row_);
    layout_->addStretch();
    setWidget(box_);
    fit_ = new ColumnsFit(this, row_);
}

void LinkControls::build(const LinkSchema& schema, int directions) {
    directions_ = std::clamp(directions, 1, 2);
    for (DirectionPanel*& p : panels_) {
        delete p;
        p = nullptr;
    }
    for (int d = 0; d < directions_; ++d) {
        panels_[d] = new DirectionPanel(d, kDirTitle[d], schema, box_);
        row_->addWidget(panels_[d], 1);
        connect(panels_[d], &DirectionPanel::edited, this, &LinkControls::edited);
    }
    same_->setVisible(directions_ > 1);
    preset_target_->setVisible(directions_ > 1);
    setEditable(editable_);
    showSlidersLabel();
    fit_->fit();
}

void LinkControls::setSliderClass(const QString& name, const QString& disabled_why) {
    slider_class_ = name;
    disabled_why_ = disabled_why;
    setEditable(editable_);
    showSlidersLabel();
}

void LinkControls::showSlidersLabel() {
    const QString ways = directions_ < 2      ? QString()
                         : same_->isChecked() ? QStringLiteral(", both ways")
                                              : QStringLiteral(", each way its own");
    QString text = "<b>Sliders set: class " + slider_class_.toHtmlEscaped() + ways + "</b>";
    if (!disabled_why_.isEmpty()) text += "<br>" + disabled_why_.toHtmlEscaped();
    sliders_label_->setText(text);
}

void LinkControls::showLink(const LinkConfig& applied,
                            const std::function<bool(int, const std::string&)>& pending) {
    for (int d = 0; d < directions_; ++d) {
        if (!panels_[d]) continue;
        panels_[d]->showLink(applied.direction(static_cast<unsigned>(d)),
                             [&pending, d](const std::string& key) { return pending(d, key); });
    }
}

void LinkControls::setEditable(bool connected) {
    editable_ = connected;
    classes_->setEditable(connected);
    for (int d = 0; d < directions_; ++d)
        if (panels_[d])
            panels_[d]->setEnabled(connected && disabled_why_.isEmpty() &&
                                   !(d == 1 && same_->isChecked()));
}

void LinkControls::showRefusal(const QString& field, const QString& message) {
    const QString dir = field.section('.', 0, 0);
    const QString key = field.section('.', 1);
    const int d = direction_of_key(dir.toStdString());
    if (d >= 0 && !key.isEmpty() && d < directions_ && panels_[d]) {
        panels_[d]->setError(key.toStdString(), message);
        if (same_->isChecked() && d == 0 && panels_[1])
            panels_[1]->setError(key.toStdString(), message);
    } else if (!field.isEmpty() && panels_[0]) {
        panels_[0]->setError(field.toStdString(), message);
    }
}

void LinkControls::clearErrors(const proto::LinkUpdate& update) {
    for (int d = 0; d < 2; ++d)
        if (panels_[d])
            for (const auto& [key, v] : update.dir[static_cast<std::size_t>(d)])
                panels_[d]->setError(key, {});
    for (const auto& [key, v] : update.both)
        for (DirectionPanel* p : panels_)
            if (p) p->setError(key, {});
}

}  // namespace linkem::gui
