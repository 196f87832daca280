#include "stage_strip.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>

#include <limits>

#include "chart_style.hpp"
#include "param_control.hpp"
#include "param_rules.hpp"
#include "readouts.hpp"

namespace linkem::gui {

namespace {

QString figure(const std::string& key, const DirectionReadout& r) {
    const ScopeDelays& a = r.since_change;
    if (key == "mean_delay_us")
        return a.emulated.count ? QString::number(a.emulated.mean() / 1e6, 'f', 2) + " ms" : "…";
    if (key == "jitter_us")
        return a.emulated.count ? QString::number(a.emulated.jitter() / 1e6, 'f', 2) + " ms" : "…";
    if (key == "half_life_us") {
        // α is the correlated strategy's weight; the others draw without it
        if (r.link.strategy != Strategy::correlated)
            return "no α (" + QString::fromStdString(std::string(to_string(r.link.strategy))) + ")";
        return r.have_stats ? QString("α %1").arg(r.alpha, 0, 'f', 4) : "…";
    }
    if (key == "rate_bps")
        return r.rate ? QString::number(r.rate->out_bps / 1e6, 'f', 1) + " Mbit/s out" : "…";
    if (key == "loss_probability")
        return r.in_since_change ? QString::number(r.loss_since_change * 100, 'f', 2) + " %" : "…";
    return {};
}
}  // namespace

StageStrip::StageStrip(const ReadoutModel& readouts, QWidget* parent)
    : QWidget(parent), readouts_(readouts) {
    setObjectName("stage_strip");
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(6, 2, 6, 2);
    auto* top = top_ = new QHBoxLayout;
    auto* tl = new QLabel("Sliders set", this);
    class_ = new QComboBox(this);
    class_->setObjectName("stage_class");
    class_->setToolTip("the class the sliders set (the Classes table of the Link pane, F2)");
    class_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    class_->addItem("class default", QString(kDefaultClassName));
    class_->hide();
    class_note_ = new QLabel(this);
    class_note_->setObjectName("stage_class_note");
    class_note_->hide();
    target_ = new QComboBox(this);
    target_->setObjectName("stage_target");
    target_->addItem("both ways", -1);
    target_->addItem(directionLabel(0), 0);
    target_->addItem(directionLabel(1), 1);
    tl->setBuddy(target_);
    keys_hint_ = new QLabel(
        "F11 desk · F2 link · F3 readouts · F4 events · F5 traffic · F6 all charts · Ctrl+Z undo",
        this);
    keys_hint_->setObjectName("stage_keys");
    keys_hint_->setStyleSheet("color: gray;");
    top->addWidget(tl);
    top->addWidget(class_);
    top->addWidget(target_);
    top->addWidget(class_note_, 1);
    top->addStretch(1);
    top->addWidget(keys_hint_);
    v->addLayout(top);
    grid_ = new QGridLayout;
    grid_->setHorizontalSpacing(12);
    grid_->setVerticalSpacing(2);
    grid_->setColumnStretch(1, 1);
    v->addLayout(grid_);
    connect(class_, &QComboBox::activated, this, [this](int i) {
        emit sliderClassChosen(class_->itemData(i).toString().toStdString());
    });
    connect(target_, &QComboBox::currentIndexChanged, this, [this](int) {
        if (applied_) showLink(*applied_, [](int, const std::string&) { return false; });
        refresh();
    });
}

int StageStrip::target() const {
    return target_->currentData().toInt();
}

void StageStrip::setTarget(int d) {
    target_->setCurrentIndex(std::max(0, target_->findData(d)));
}

void StageStrip::build(const LinkSchema& schema, int directions) {
    directions_ = directions;
    for (auto& [k, c] : controls_)
        delete c;
    for (auto& [k, l] : names_)
        delete l;
    for (auto& [k, l] : since_change_)
        delete l;
    controls_.clear();
    names_.clear();
    since_change_.clear();
    target_->setVisible(directions > 1);
    int row = 0;
    for (const char* k : kKeys) {
        const std::string key = k;
        const ParamSchema* ps = schema.find(key);
        if (!ps) continue;
        auto* name = new QLabel(paramLabel(key, true), this);  // the desk's, from the field table
        auto* c = new ParamControl(*ps, true, this);
        c->setObjectName(QString::fromStdString("stage_" + key));
        c->label()->hide();
        c->setAppliedShown(false);
        name->setBuddy(c->slider());
        auto* got = new QLabel("…", this);
        got->setObjectName(QString::fromStdString("stage_since_change_" + key));
        got->setToolTip(key == "half_life_us"
                            ? "α, the correlation weight the half-life gives at the packet "
                              "rate measured"
                        : key == "rate_bps" ? "the rate handed to the port"
                                            : "since the last change (emulated delay "
                                              "over every packet; loss: the loss model's drops "
                                              "over the packets in)");
        grid_->addWidget(name, row, 0);
        grid_->addWidget(c, row, 1);
        grid_->addWidget(new QLabel("→", this), row, 2);
        grid_->addWidget(got, row, 3);
        names_[key] = name;
        controls_[key] = c;
        since_change_[key] = got;
        connect(c, &ParamControl::edited, this, [this](const std::string& k, double value) {
            const int t = target();
            emit edited(directions_ > 1 ? t : 0, k, number_value(*link_param_field(k), value));
            applyRules();  // a range may follow it
        });
        ++row;
    }
    setEditable(editable_);
}

void StageStrip::setEditable(bool on) {
    editable_ = on;
    for (auto& [k, c] : controls_)
        c->setEnabled(on && disabled_why_.isEmpty());
}

void StageStrip::setClasses(const std::vector<TrafficClass>& classes) {
    QStringList names{kDefaultClassName};
    for (const TrafficClass& c : classes)
        names << QString::fromStdString(c.name);
    QStringList shown;
    for (int i = 0; i < class_->count(); ++i)
        shown << class_->itemData(i).toString();
    if (shown != names) {
        const QString current = class_->currentData().toString();
        const QSignalBlocker block(class_);
        class_->clear();
        for (std::size_t i = 0; i < static_cast<std::size_t>(names.size()); ++i) {
            QString label = "class " + names[static_cast<qsizetype>(i)];
            if (i > 0 && classes[i - 1].action != ClassAction::emulate)
                label += QString(" (%1)").arg(
                    QString::fromStdString(std::string(to_string(classes[i - 1].action))));
            class_->addItem(label, names[static_cast<qsizetype>(i)]);
        }
        class_->setCurrentIndex(std::max(0, class_->findData(current)));
    }
    class_->setVisible(!classes.empty());
}

void StageStrip::setSliderClass(const QString& name, const QString& disabled_why, int id) {
    disabled_why_ = disabled_why;
    class_id_ = id;
    {
        const QSignalBlocker block(class_);
        const int i = class_->findData(name);
        if (i >= 0) class_->setCurrentIndex(i);
    }
    class_note_->setText(disabled_why);
    class_note_->setVisible(!disabled_why.isEmpty());
    class_note_->setToolTip(disabled_why);
    setEditable(editable_);
}

ParamControl* StageStrip::control(const std::string& key) const {
    const auto it = controls_.find(key);
    return it == controls_.end() ? nullptr : it->second;
}

QLabel* StageStrip::sinceChange(const std::string& key) const {
    const auto it = since_change_.find(key);
    return it == since_change_.end() ? nullptr : it->second;
}

void StageStrip::showLink(const LinkConfig& applied,
                          const std::function<bool(int, const std::string&)>& pending) {
    applied_ = applied;
    const int d = std::max(0, target());
    const LinkParams& p = applied.direction(static_cast<unsigned>(d));
    for (auto& [key, c] : controls_) {
        if (pending(d, key)) continue;
        if (const auto v = as_number(link_param_field(key)->get(p))) c->setApplied(*v);
    }
    applyRules();
}

// The field table's rules (param_rules.hpp), as on the desk: a slider is greyed where its
// parameter applies in no direction it sets (the limiter and models are the desk's: F2).
void StageStrip::applyRules() {
    if (!applied_) return;
    auto in = [this](unsigned d) -> ShownField {
        return [this, d](const std::string& key) -> std::optional<FieldValue> {
            if (const ParamControl* c = control(key)) return FieldValue(c->shown());
            if (const LinkParamField* f = link_param_field(key))
                return f->get(applied_->direction(d));
            return std::nullopt;
        };
    };
    const int t = target();
    std::vector<ShownField> sets{in(static_cast<unsigned>(std::max(t, 0)))};
    if (t < 0 && directions_ > 1) sets.push_back(in(1));
    applyParamRules(controls_, sets);
}

// A class's figure since its parameters last changed (its target in the charts' store):
// its packets' actual delay, its rate out, its loss model's drops over its packets in; α is
// the direction's.
QString StageStrip::classFigure(const std::string& key, int d) const {
    const ChartStore& S = readouts_.store();
    if (class_id_ < 0 || static_cast<std::size_t>(class_id_) > S.classCount())
        return figure(key, readouts_.get(d));
    const ChartStore::Direction& C = S.classDir(d, static_cast<std::size_t>(class_id_));
    const std::int64_t since =
        C.targets.empty() ? std::numeric_limits<std::int64_t>::min() : C.targets.back().since_ns;
    if (key == "mean_delay_us" || key == "jitter_us") {
        const RunningStats a = C.samples.actual(since, std::numeric_limits<std::int64_t>::max());
        if (a.count == 0) return "…";
        return QString::number((key == "jitter_us" ? a.jitter() : a.mean()) / 1e6, 'f', 2) + " ms";
    }
    if (key == "rate_bps")
        return C.rates.empty()
                   ? "…"
                   : QString::number(C.rates.back().out_bps / 1e6, 'f', 1) + " Mbit/s out";
    if (key == "loss_probability") {
        double in = 0, lost = 0;
        for (const RatePoint& r : C.rates)
            if (r.t_ns >= since) {
                in += r.in_pps;
                lost += r.drops_per_s[cause_index(DropCause::loss)];
            }
        return in > 0 ? QString::number(lost / in * 100, 'f', 2) + " %" : "…";
    }
    return figure(key, readouts_.get(d));
}

void StageStrip::refresh() {
    const int t = target();
    for (auto& [key, l] : since_change_) {
        QString text;
        if (t >= 0 || directions_ < 2) {
            text = classFigure(key, std::max(t, 0));
        } else {
            text = classFigure(key, 0) + "  |  " + classFigure(key, 1);
        }
        if (l->text() != text) l->setText(text);
    }
}

void StageStrip::setRecordPanel(QWidget* panel) {
    top_->insertWidget(top_->indexOf(keys_hint_) - 1, panel);  // before the stretch
}

void StageStrip::setTextScale(double pt) {
    QFont f = font();
    f.setPointSizeF(pt);
    for (auto& [k, l] : names_) {
        QFont b = f;
        b.setBold(true);
        l->setFont(b);
    }
    for (auto& [k, l] : since_change_)
        l->setFont(f);
    int spin_w = 0;
    for (auto& [k, c] : controls_) {
        c->spinBox()->setFont(f);
        c->slider()->setMinimumHeight(static_cast<int>(pt * 2));
        spin_w = std::max(spin_w, c->spinBox()->sizeHint().width());
    }
    for (auto& [k, c] : controls_)
        c->spinBox()->setMinimumWidth(spin_w);  // the sliders end in one line
    QFont small = font();
    small.setPointSizeF(pt * 0.6);
    keys_hint_->setFont(small);
}

}  // namespace linkem::gui
