#include "direction_panel.hpp"

#include <map>

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QRegularExpressionValidator>
#include <QVBoxLayout>

#include "linkem/gilbert_elliott.hpp"
#include "linkem/link_params.hpp"
#include "param_rules.hpp"

namespace linkem::gui {

QString explain(const std::string& key, const std::string& v) {
    if (key == "strategy") {
        if (v == "correlated")
            return "each delay leans on the one before with weight α (from the packet rate), "
                   "so order is kept and the jitter you set is the jitter you get";
        if (v == "uncorrelated")
            return "independent delays, order kept: a packet waits behind a later one, so "
                   "the mean delay rises and the jitter shrinks (the naive method)";
        if (v == "reordered")
            return "independent delays, each packet leaves at its own time: the distribution "
                   "is exact, but packets overtake each other (out-of-order)";
        if (v == "smooth")
            return "the delay glides smoothly in time (half-life sets how fast), whatever the "
                   "packet rate: order kept and the mean, jitter and distribution you set";
    }
    if (key == "distribution") {
        if (v == "normal") return "bell curve around the mean; delays below 0 are sent at 0";
        if (v == "uniform") return "flat between mean − √3·jitter and mean + √3·jitter";
        if (v == "gamma") return "skewed right, never below 0: long tail of late packets";
        if (v == "lognormal") return "skewed right with a heavier tail than gamma";
        if (v == "constant") return "every packet gets exactly the mean delay (jitter must be 0)";
    }
    if (key == "limiter") {
        if (v == "none") return "no bandwidth limit";
        if (v == "spacer")
            return "delays packets to the rate (a queue): backlog shows up as extra delay, "
                   "drops beyond the queue limit";
        if (v == "policer") return "drops what exceeds the rate (a token bucket): no extra delay";
    }
    if (key == "queue") {
        if (v == "droptail") return "first in, first out; arrivals beyond the queue limit dropped";
        if (v == "codel")
            return "CoDel (RFC 8289): drops at the head when packets wait longer than its target";
        if (v == "fq_codel")
            return "FQ-CoDel (RFC 8290): a queue per flow served in turn, CoDel in each";
        if (v == "pie")
            return "PIE (RFC 8033): drops arrivals with a probability driven by the queueing delay";
    }
    if (key == "ecn") {
        if (v == "off") return "the queue discipline drops";
        if (v == "on") return "ECN-capable packets are marked CE where the discipline would drop";
    }
    if (key == "loss_model") {
        if (v == "none") return "no loss";
        if (v == "bernoulli") return "each packet lost independently with the loss probability";
        if (v == "gilbert_elliott")
            return "bursty loss: a good and a bad state, moving with p and r per packet";
    }
    return {};
}

QString explainShort(const std::string& key, const std::string& v) {
    static const std::map<std::string, const char*> one_line = {
        {"strategy/correlated", "each delay leans on the last; order kept"},
        {"strategy/uncorrelated", "independent, order kept: the mean rises"},
        {"strategy/reordered", "independent: packets overtake"},
        {"strategy/smooth", "glides in time (half-life); order kept"},
        {"distribution/normal", "bell curve around the mean"},
        {"distribution/uniform", "flat, mean ± √3·jitter"},
        {"distribution/gamma", "skewed right, never below 0"},
        {"distribution/lognormal", "skewed right, heavier tail"},
        {"distribution/constant", "exactly the mean (jitter 0)"},
        {"limiter/none", "no bandwidth limit"},
        {"limiter/spacer", "queues to the rate: delay, then drops"},
        {"limiter/policer", "drops above the rate, no delay"},
        {"limiter/trace", "delivers at a trace's times (a queue)"},
        {"queue/droptail", "FIFO: drops arrivals beyond the limit"},
        {"queue/codel", "drops at the head past its target"},
        {"queue/fq_codel", "a queue per flow, CoDel in each"},
        {"queue/pie", "drops by the queueing delay"},
        {"ecn/off", "the discipline drops"},
        {"ecn/on", "marks ECN-capable packets CE"},
        {"loss_model/none", "no loss"},
        {"loss_model/bernoulli", "each packet lost independently"},
        {"loss_model/gilbert_elliott", "bursty: a good and a bad state"},
    };
    const auto it = one_line.find(key + "/" + v);
    return it == one_line.end() ? explain(key, v) : QString::fromUtf8(it->second);
}

DirectionPanel::DirectionPanel(int direction, const QString& title, const LinkSchema& schema,
                               QWidget* parent)
    : QGroupBox(title, parent), direction_(direction) {
    setObjectName(kDirectionKeys[direction]);
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::DontWrapRows);

    // Labels, units and ranges are the field table's (linkem/link_params.hpp).
    auto add_param = [&](const std::string& key, bool slider, QFormLayout* into) {
        const ParamSchema* ps = schema.find(key);
        if (!ps) return;
        auto* c = new ParamControl(*ps, slider, this);
        c->label()->hide();  // the form's label takes its place
        controls_[key] = c;
        auto* l = new QLabel(paramLabel(key, true), this);
        l->setBuddy(c->spinBox());
        l->setToolTip(c->toolTip());
        into->addRow(l, c);
        connect(c, &ParamControl::edited, this, [this](const std::string& k, double v) {
            if (updating_) return;
            emit edited(direction_, k, number_value(*link_param_field(k), v));
            if (k.starts_with("ge_")) showGeFigures();
            updateVisibility();  // a range may follow it
        });
    };
    addCombo(form, "strategy", schema);
    addCombo(form, "distribution", schema);
    add_param("mean_delay_us", true, form);
    add_param("jitter_us", true, form);
    add_param("half_life_us", true, form);
    addCombo(form, "limiter", schema);
    add_param("rate_bps", true, form);
    // the limiter's queue: its discipline, limit and ECN (spacer, trace); the limit a spin
    // box without a slider (typed, or stepped with the arrows), so that both directions
    // still fit side by side in a 1000-px Link pane
    addCombo(form, "queue", schema);
    add_param("queue_limit_bytes", false, form);
    addCombo(form, "ecn", schema);
    addCombo(form, "loss_model", schema);
    add_param("loss_probability", true, form);

    ge_box_ = new QWidget(this);
    auto* ge_form = new QFormLayout(ge_box_);
    ge_form->setContentsMargins(16, 0, 0, 0);
    // What users ask for: the average loss and how long a burst lasts; p and r follow.
    // the average loss in the unit of the loss probabilities it comes from (%)
    const DisplayUnit loss_unit = DisplayUnit::forKey("ge_loss_bad");
    ge_loss_ = new QDoubleSpinBox(ge_box_);
    ge_loss_->setObjectName("ge_average_loss");
    ge_loss_->setRange(0, 1 / loss_unit.per);
    ge_loss_->setDecimals(loss_unit.decimals);
    ge_loss_->setSuffix(loss_unit.suffix);
    ge_loss_->setKeyboardTracking(false);
    ge_loss_->setToolTip(
        "average loss: the share of packets lost in the long run, "
        "(1 - π_bad)·loss in good + π_bad·loss in bad with π_bad = p / (p + r); with the "
        "mean burst, sets ge_p and ge_r");
    ge_burst_ = new QDoubleSpinBox(ge_box_);
    ge_burst_->setObjectName("ge_mean_burst");
    ge_burst_->setRange(1, 1e6);
    ge_burst_->setDecimals(2);
    ge_burst_->setSuffix(" packets");
    ge_burst_->setKeyboardTracking(false);
    ge_burst_->setToolTip(
        "mean burst length: the mean run of consecutive lost packets; with loss 1 in bad and "
        "0 in good, the mean stay in the bad state (1 / r); with the average loss, sets ge_p "
        "and ge_r");
    ge_form->addRow("average loss", ge_loss_);
    ge_form->addRow("mean burst", ge_burst_);
    ge_note_ = new QLabel(ge_box_);
    ge_note_->setObjectName("ge_note");
    ge_note_->setWordWrap(true);
    ge_note_->setStyleSheet("color: #c00000;");
    ge_note_->hide();
    ge_form->addRow(ge_note_);
    connect(ge_loss_, &QDoubleSpinBox::valueChanged, this, [this](double) { fromGeFigures(); });
    connect(ge_burst_, &QDoubleSpinBox::valueChanged, this, [this](double) { fromGeFigures(); });
    for (const char* key : {"ge_p", "ge_r", "ge_loss_good", "ge_loss_bad"})
        add_param(key, false, ge_form);
    auto* ge_label = new QLabel("Gilbert-Elliott", this);
    form->addRow(ge_label, ge_box_);
    ge_box_->setProperty("ge_label", QVariant::fromValue<QObject*>(ge_label));

    seed_ = new QLineEdit(this);
    seed_->setObjectName("seed");
    seed_->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]{1,20}"), seed_));
    seed_->setToolTip(
        "<b>seed</b>: the random seed in use; enter a new one to restart the random "
        "streams from it (0 = draw a new random seed)");
    auto* seed_label = new QLabel(paramLabel("seed", true), this);
    seed_label->setBuddy(seed_);
    seed_error_ = new QLabel(this);
    seed_error_->setStyleSheet("color: #c00000;");
    seed_error_->hide();
    auto* seed_box = new QWidget(this);
    auto* sv = new QVBoxLayout(seed_box);
    sv->setContentsMargins(0, 0, 0, 0);
    sv->addWidget(seed_);
    sv->addWidget(seed_error_);
    form->addRow(seed_label, seed_box);
    connect(seed_, &QLineEdit::returnPressed, this, [this] {
        bool ok = false;
        const qulonglong s = seed_->text().toULongLong(&ok);
        if (ok && !updating_) emit edited(direction_, "seed", FieldValue(std::uint64_t{s}));
    });
    updateVisibility();
}

void DirectionPanel::addCombo(QFormLayout* form, const std::string& key, const LinkSchema& schema) {
    const ParamSchema* ps = schema.find(key);
    if (!ps) return;
    auto* box = new QWidget(this);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    auto* combo = new QComboBox(box);
    combo->setObjectName(QString::fromStdString(key));
    for (const std::string& s : ps->values) {
        combo->addItem(QString::fromStdString(s), QString::fromStdString(s));
        combo->setItemData(combo->count() - 1, explain(key, s), Qt::ToolTipRole);
    }
    // one line under the combo; the whole explanation in its tooltip
    auto* help = new QLabel(box);
    help->setWordWrap(false);
    QFont f = help->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    f.setItalic(true);
    help->setFont(f);
    help->setProperty("linkem_small", true);  // scaled with the projector mode
    auto* err = new QLabel(box);
    err->setStyleSheet("color: #c00000;");
    err->setWordWrap(true);
    err->hide();
    v->addWidget(combo);
    v->addWidget(help);
    v->addWidget(err);
    auto* l = new QLabel(paramLabel(key, true), this);
    l->setBuddy(combo);
    const QString tip =
        QString("<b>%1</b>: %2").arg(QString::fromStdString(key), QString::fromStdString(ps->help));
    l->setToolTip(tip);
    combo->setToolTip(tip);
    form->addRow(l, box);
    combos_[key] = combo;
    combo_help_[key] = help;
    combo_errors_[key] = err;
    connect(combo, &QComboBox::currentIndexChanged, this, [this, key, combo, help](int) {
        const std::string value = combo->currentData().toString().toStdString();
        help->setText(explainShort(key, value));
        help->setToolTip(explain(key, value));
        updateVisibility();
        if (!updating_) emit edited(direction_, key, FieldValue(value));
    });
    const std::string now = combo->currentData().toString().toStdString();
    help->setText(explainShort(key, now));
    help->setToolTip(explain(key, now));
}

// The field table's rules (param_rules.hpp) with the values this panel shows: the combos'
// names, the controls' numbers (a change not yet in force counts).
void DirectionPanel::updateVisibility() {
    const ShownField shown = [this](const std::string& key) -> std::optional<FieldValue> {
        if (const QComboBox* c = combo(key))
            return FieldValue(c->currentData().toString().toStdString());
        if (const ParamControl* c = control(key)) return FieldValue(c->shown());
        return std::nullopt;
    };
    applyParamRules(controls_, {shown});
    // The combos whose field has a condition (the queue discipline, ECN): greyed, saying why,
    // where it does not hold.
    for (auto& [key, combo] : combos_) {
        QString why;
        const bool on = paramApplies(key, shown, &why);
        combo->setEnabled(on);
        combo_help_[key]->setEnabled(on);
        const QString tip = QString("<b>%1</b>: %2")
                                .arg(QString::fromStdString(key),
                                     QString::fromStdString(link_param_field(key)->help));
        combo->setToolTip(on ? tip : tip + "<br><i>" + why.toHtmlEscaped() + "</i>");
    }
    // The Gilbert-Elliott box: shown only where its fields apply.
    const bool ge = paramApplies("ge_p", shown);
    ge_box_->setVisible(ge);
    if (auto* l = qobject_cast<QWidget*>(ge_box_->property("ge_label").value<QObject*>()))
        l->setVisible(ge);
}

// Average loss and mean burst length from the p, r and loss probabilities shown (the model's
// definitions, linkem/gilbert_elliott.hpp: a burst is a run of consecutive losses).
void DirectionPanel::showGeFigures() {
    auto v = [this](const char* k) { return control(k) ? control(k)->shown() : 0.0; };
    GeLossAndBurst f;
    try {
        f = ge_loss_and_burst({v("ge_p"), v("ge_r"), v("ge_loss_good"), v("ge_loss_bad")});
    } catch (const ParamError&) {
        return;  // a value out of 0..1 being typed: the figures stay as they were
    }
    const bool was = updating_;
    updating_ = true;
    ge_loss_->setValue(f.average_loss / DisplayUnit::forKey("ge_loss_bad").per);
    ge_burst_->setValue(std::max(1.0, f.mean_burst));  // runs forever: the spin box's maximum
    updating_ = was;
}

// p and r for the average loss and mean burst length typed in.
void DirectionPanel::fromGeFigures() {
    if (updating_) return;
    auto v = [this](const char* k) { return control(k) ? control(k)->shown() : 0.0; };
    GeChain c;
    try {
        c = ge_from_loss_and_burst(ge_loss_->value() * DisplayUnit::forKey("ge_loss_bad").per,
                                   ge_burst_->value(), v("ge_loss_good"), v("ge_loss_bad"));
    } catch (const ParamError& e) {
        ge_note_->setText(QString("%1: %2").arg(QString::fromStdString(e.field()),
                                                QString::fromStdString(e.message())));
        ge_note_->show();
        return;
    }
    ge_note_->hide();
    updating_ = true;
    if (auto* p = control("ge_p")) p->setShown(c.p);
    if (auto* r = control("ge_r")) r->setShown(c.r);
    updating_ = false;
    emit edited(direction_, "ge_p", FieldValue(c.p));
    emit edited(direction_, "ge_r", FieldValue(c.r));
}

void DirectionPanel::showLink(const LinkParams& p,
                              const std::function<bool(const std::string&)>& skip) {
    updating_ = true;
    for (auto& [key, c] : controls_)
        if (!skip(key))
            if (const auto v = as_number(link_param_field(key)->get(p))) c->setApplied(*v);
    for (auto& [key, combo] : combos_)
        if (!skip(key)) {
            const FieldValue v = link_param_field(key)->get(p);
            if (const auto* name = std::get_if<std::string>(&v)) {
                const int i = combo->findData(QString::fromStdString(*name));
                if (i >= 0) combo->setCurrentIndex(i);
            }
        }
    if (!skip("seed") && !seed_->hasFocus()) seed_->setText(QString::number(p.seed));
    updating_ = false;
    showGeFigures();
    updateVisibility();
}

ParamControl* DirectionPanel::control(const std::string& key) const {
    const auto it = controls_.find(key);
    return it == controls_.end() ? nullptr : it->second;
}

QComboBox* DirectionPanel::combo(const std::string& key) const {
    const auto it = combos_.find(key);
    return it == combos_.end() ? nullptr : it->second;
}

void DirectionPanel::setError(const std::string& key, const QString& message) {
    if (auto* c = control(key)) {
        c->setError(message);
        return;
    }
    QLabel* err = nullptr;
    QWidget* field = nullptr;
    if (auto it = combo_errors_.find(key); it != combo_errors_.end()) {
        err = it->second;
        field = combos_[key];
    } else if (key == "seed") {
        err = seed_error_;
        field = seed_;
    }
    if (!err) return;
    err->setText(message.isEmpty() ? QString() : "linkemd refused: " + message);
    err->setVisible(!message.isEmpty());
    field->setStyleSheet(message.isEmpty() ? QString() : QString("border: 2px solid #d00000;"));
    field->setProperty("linkem_error", message);
}

QString DirectionPanel::error(const std::string& key) const {
    if (auto* c = control(key)) return c->error();
    if (auto* cb = combo(key)) return cb->property("linkem_error").toString();
    if (key == "seed") return seed_->property("linkem_error").toString();
    return {};
}

void DirectionPanel::clearErrors() {
    for (auto& [k, c] : controls_)
        c->setError({});
    for (auto& [k, cb] : combos_)
        setError(k, {});
    setError("seed", {});
}

}  // namespace linkem::gui
