#include "preset_controller.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>

#include "chart_style.hpp"
#include "link_controls.hpp"
#include "link_match.hpp"
#include "link_sync.hpp"
#include "linkem/gilbert_elliott.hpp"
#include "param_control.hpp"

namespace linkem::gui {

using nlohmann::json;

namespace {
// A link in one line, each value in the unit people read (the field table's): "20 ms ± 4 ms,
// correlated, spacer 100 Mbit/s, loss 1 %".
QString describe(const LinkParams& p) {
    auto shown = [&](const char* key) {
        const LinkParamField& f = *link_param_field(key);
        return QString::fromStdString(f.shown_text(*as_number(f.get(p))));
    };
    QString text = QString("%1 ± %2, %3")
                       .arg(shown("mean_delay_us"), shown("jitter_us"),
                            QString::fromStdString(std::string(to_string(p.strategy))));
    if (link_param_applies(*link_param_field("rate_bps"), p))
        text += QString(", %1 %2").arg(QString::fromStdString(std::string(to_string(p.limiter))),
                                       shown("rate_bps"));
    if (link_param_applies(*link_param_field("loss_probability"), p))
        text += QString(", %1 %2").arg(paramLabel("loss_probability").toLower(),
                                       shown("loss_probability"));
    if (p.loss_model == LossModel::gilbert_elliott) {
        try {
            const double loss =
                ge_loss_and_burst({p.ge_p, p.ge_r, p.ge_loss_good, p.ge_loss_bad}).average_loss;
            text += QString(", bursty %1 %2")
                        .arg(paramLabel("loss_probability").toLower(),
                             QString::fromStdString(
                                 link_param_field("ge_loss_bad")->shown_text(loss, 3)));
        } catch (const ParamError&) {
        }
    }
    return text;
}
}  // namespace

PresetController::PresetController(LinkSync& sync, LinkControls& controls, QObject* parent)
    : QObject(parent), sync_(sync), controls_(controls) {
    fillCombo();
    connect(controls_.presetCombo(), &QComboBox::currentIndexChanged, this, [this](int) {
        if (!filling_) showInfo();
    });
    connect(controls_.presetApply(), &QPushButton::clicked, this, [this] {
        if (const Preset* p = presetAt(shownPreset()))
            applyPreset(*p, controls_.presetTarget()->currentData().toInt());
    });
    connect(&sync_, &LinkSync::linkChanged, this, [this] { matchLink(); });
}

void PresetController::fillMenu(QMenu* presets, QWidget* dialog_parent) {
    presets->setToolTipsVisible(true);
    std::map<std::string, QMenu*> cats;
    const auto& all = builtin_presets();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const Preset& p = all[i];
        QMenu*& m = cats[p.category];
        if (!m) {
            m = presets->addMenu(QString::fromStdString(p.category));
            m->setToolTipsVisible(true);
        }
        auto* a =
            m->addAction(QString::fromStdString(p.name) + (p.asymmetric() ? "  (asymmetric)" : ""));
        a->setToolTip(QString::fromStdString(p.description + "\nSource: " + p.source));
        connect(a, &QAction::triggered, this, [this, i] { applyPreset(builtin_presets()[i], -1); });
    }
    presets->addSeparator();
    presets->addAction("Save current as &user preset…", this, [this, dialog_parent] {
        bool ok = false;
        const QString name = QInputDialog::getText(dialog_parent, "User preset",
                                                   "Name:", QLineEdit::Normal, {}, &ok);
        if (!ok || name.trimmed().isEmpty()) return;
        const QString err = saveUserPreset(name.trimmed());
        if (!err.isEmpty()) QMessageBox::warning(dialog_parent, "User preset", err);
    });
}

const Preset* PresetController::presetAt(int i) const {
    const auto& all = builtin_presets();
    if (i >= 0 && i < static_cast<int>(all.size())) return &all[i];
    if (i < 0 && i != kCustom && -i - 1 < static_cast<int>(user_.size())) return &user_[-i - 1];
    return nullptr;
}

int PresetController::shownPreset() const {
    return controls_.presetCombo()->currentData().toInt();
}

void PresetController::fillCombo() {
    QComboBox* c = controls_.presetCombo();
    filling_ = true;
    const int was = c->count() > 0 ? shownPreset() : kCustom;
    c->clear();
    c->addItem("Custom", kCustom);
    c->setItemData(0, "the link in force is none of the presets", Qt::ToolTipRole);
    const auto& all = builtin_presets();
    for (std::size_t i = 0; i < all.size(); ++i) {
        c->addItem(QString::fromStdString(all[i].category + ": " + all[i].name),
                   static_cast<int>(i));
        c->setItemData(c->count() - 1,
                       QString::fromStdString(all[i].description + "\nSource: " + all[i].source),
                       Qt::ToolTipRole);
    }
    for (std::size_t i = 0; i < user_.size(); ++i)
        c->addItem("User: " + QString::fromStdString(user_[i].name), -static_cast<int>(i) - 1);
    c->setCurrentIndex(std::max(0, c->findData(was)));
    filling_ = false;
    showInfo();
}

void PresetController::showInfo() {
    QLabel* info = controls_.presetInfo();
    const Preset* p = presetAt(shownPreset());
    if (!p) {
        QString text = "<b>Custom</b>: the link in force is none of the presets";
        if (sync_.valid()) {
            const LinkConfig& link = sync_.applied();
            text += QString(" (A→B %1").arg(describe(link.a_to_b));
            if (directions_ > 1) text += QString("; B→A %1").arg(describe(link.b_to_a));
            text += ")";
        }
        info->setText(text + ". Choose a preset and Apply it to set one.");
        return;
    }
    // the preset's one-line summary; its source in the tooltip (the pane stays short)
    info->setText(QString("<b>%1</b>%2: %3")
                      .arg(QString::fromStdString(p->name).toHtmlEscaped(),
                           p->asymmetric() ? " (asymmetric: A→B is the upload)" : "",
                           QString::fromStdString(p->description).toHtmlEscaped()));
    info->setToolTip("Source: " + QString::fromStdString(p->source));
}

void PresetController::matchLink() {
    if (!sync_.valid()) return;
    const LinkConfig& link = sync_.applied();
    const unsigned dirs = static_cast<unsigned>(directions_);
    int index = kCustom;
    // The preset shown, if it is the link in force; else the first that is.
    if (const Preset* shown = presetAt(shownPreset()); shown && sameLink(shown->link, link, dirs))
        index = shownPreset();
    else if (const int b = matchingPreset(builtin_presets(), link, dirs); b >= 0)
        index = b;
    else if (const int u = matchingPreset(user_, link, dirs); u >= 0)
        index = -u - 1;
    QComboBox* c = controls_.presetCombo();
    filling_ = true;
    c->setCurrentIndex(std::max(0, c->findData(index)));
    filling_ = false;
    showInfo();
}

proto::LinkUpdate PresetController::update(const Preset& p, int direction) const {
    proto::LinkUpdate u;
    for (int d = 0; d < directions_; ++d) {
        if (direction >= 0 && direction != d) continue;
        // One direction only: that direction's figures of the preset go there.
        const LinkParams& src = p.link.direction(static_cast<unsigned>(d));
        for (const LinkParamField& f : link_param_fields())
            if (f.key != "seed" || src.seed != 0)  // no seed: the streams go on
                u.set(d, f.key, f.get(src));
    }
    return u;
}

void PresetController::applyPreset(const Preset& p, int direction) {
    if (needsBothColumns(p, direction)) controls_.sameBothWays()->setChecked(false);
    emit changing("preset");
    sync_.setUpdate(update(p, direction));
    emit note("info",
              QString("preset '%1' applied to %2 (source: %3)")
                  .arg(QString::fromStdString(p.name),
                       direction < 0 ? QString("both directions") : directionLabel(direction),
                       QString::fromStdString(p.source).left(120)));
}

void PresetController::load() {
    loadUserPresets();
    fillCombo();
    matchLink();
}

QString PresetController::userPresetsPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + "/presets.json";
}

void PresetController::loadUserPresets() {
    user_.clear();
    QFile f(userPresetsPath());
    if (!f.exists()) return;
    if (!f.open(QIODevice::ReadOnly)) {
        emit note("warning", "cannot read the user presets " + f.fileName());
        return;
    }
    try {
        user_ = presets_from_json(json::parse(f.readAll().toStdString()));
    } catch (const std::exception& e) {
        emit note("warning", "user presets " + f.fileName() + ": " + e.what());
    }
}

QString PresetController::saveUserPreset(const QString& name) {
    if (!sync_.valid()) return "not connected: there are no parameters in force to save";
    Preset p;
    std::string id;
    for (QChar c : name.toLower())
        id += (c.isLetterOrNumber() && c.unicode() < 128) ? static_cast<char>(c.unicode()) : '_';
    p.id = "user_" + id;
    p.name = name.toStdString();
    p.category = "User";
    p.description = "saved from linkem-gui";
    p.source = "the parameters in force in linkemd " +
               (server_version_.empty() ? std::string("?") : server_version_) + " (generation " +
               std::to_string(sync_.generation()) + ") on " +
               QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    p.link = sync_.applied();
    std::erase_if(user_, [&](const Preset& q) { return q.id == p.id; });
    user_.push_back(p);
    const QString path = userPresetsPath();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return "cannot write " + path + ": " + f.errorString();
    f.write(QByteArray::fromStdString(presets_to_json(user_).dump(2) + "\n"));
    fillCombo();
    matchLink();
    emit note("info", "user preset '" + name + "' saved to " + path);
    return {};
}

QString PresetController::openLinkFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return "cannot open " + path + ": " + f.errorString();
    json file = json::parse(f.readAll().toStdString(), nullptr, false);
    if (file.is_discarded() || !file.is_object())
        return path + ": not a JSON object (a linkemd --config file is expected)";
    LinkConfig link;
    try {
        link = link_file_from_json(file, static_cast<unsigned>(directions_));
    } catch (const ParamError& e) {
        return path + ": " + QString::fromStdString(e.field()) + ": " +
               QString::fromStdString(e.message());
    } catch (const std::exception& e) {
        return path + ": " + e.what();
    }
    link_file_base_ = file;
    Preset p;
    p.name = QFileInfo(path).fileName().toStdString();
    p.link = link;
    emit changing("link file");
    sync_.setUpdate(update(p, -1));
    emit note("info", "link file " + path + " applied");
    return {};
}

QString PresetController::saveLinkFile(const QString& path) {
    if (!sync_.valid()) return "not connected: there are no parameters in force to save";
    const json out =
        link_file_to_json(sync_.applied(), static_cast<unsigned>(directions_), link_file_base_);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return "cannot write " + path + ": " + f.errorString();
    f.write(QByteArray::fromStdString(out.dump(2) + "\n"));
    emit note("info", "link file saved to " + path + " (use it with linkemd --config)");
    return {};
}

}  // namespace linkem::gui
