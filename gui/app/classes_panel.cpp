#include "classes_panel.hpp"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace linkem::gui {

namespace {
const char* kHeaders[ClassesPanel::kColumns] = {"Name", "Match", "Action", "Limiter"};
const char* kActions[] = {"emulate", "pass", "drop"};
const QColor kErrorBackground(255, 205, 205);
const QColor kErrorText(120, 0, 0);

std::vector<ClassRow> rowsOf(const std::vector<TrafficClass>& classes) {
    std::vector<ClassRow> rows;
    for (const TrafficClass& c : classes)
        rows.push_back(classRow(c));
    return rows;
}
}  // namespace

ClassesPanel::ClassesPanel(QWidget* parent) : QGroupBox("Classes", parent) {
    setObjectName("classes_panel");
    setToolTip(
        "Traffic classes: the first class whose match holds takes a packet, 'default' "
        "every other one (docs/classes.md). Edit the table, then Apply: one set_link "
        "with the whole list.");
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(6, 4, 6, 4);
    table_ = new QTableWidget(0, kColumns, this);
    table_->setObjectName("classes_table");
    for (int c = 0; c < kColumns; ++c)
        table_->setHorizontalHeaderItem(c, new QTableWidgetItem(kHeaders[c]));
    table_->horizontalHeaderItem(kMatch)->setToolTip(
        "as seen on a packet from A to B: key=value separated by ',' (ethertype, protocol, "
        "a_net, b_net, a_port, b_port, vlan, dscp), e.g. protocol=udp,b_port=5060-5061; several "
        "match objects (any may hold) separated by ';'; '*' matches every packet");
    table_->horizontalHeaderItem(kLimiter)->setToolTip(
        "own: the class's own limiter; link: it shares the default class's limiter (one "
        "bottleneck for every class sharing it)");
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                            QAbstractItemView::AnyKeyPressed);
    // narrower than its columns, the table scrolls sideways itself (never the Link pane)
    table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    table_->setMinimumWidth(120);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideRight);
    QHeaderView* h = table_->horizontalHeader();
    h->setSectionResizeMode(kName, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(kMatch, QHeaderView::Stretch);
    h->setSectionResizeMode(kAction, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(kLimiter, QHeaderView::ResizeToContents);
    h->setMinimumSectionSize(40);
    v->addWidget(table_);
    params_ = new QLabel(this);
    params_->setObjectName("classes_parameters");
    params_->setWordWrap(true);
    params_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    params_->setToolTip(
        "the chosen class's link parameters that differ from the defaults: set "
        "them with the sliders below");
    v->addWidget(params_);

    // two rows of buttons: the pane stays as narrow as a direction's column
    auto* buttons = new QHBoxLayout;
    auto* buttons2 = new QHBoxLayout;
    auto make = [this](QHBoxLayout* row, const char* text, const char* name, const char* tip) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(QString("classes_") + name);
        b->setToolTip(tip);
        b->setAutoDefault(false);
        row->addWidget(b);
        return b;
    };
    add_ = make(buttons, "Add", "add", "a new class after the row chosen");
    remove_ = make(buttons, "Remove", "remove", "removes the class chosen");
    up_ = make(buttons, "Up", "up", "tries the class chosen earlier");
    down_ = make(buttons, "Down", "down", "tries the class chosen later");
    buttons->addStretch(1);
    buttons2->addStretch(1);
    revert_ = make(buttons2, "Revert", "revert", "back to the classes in force");
    apply_ =
        make(buttons2, "Apply classes", "apply", "checks the list and sends it as one set_link");
    v->addLayout(buttons);
    v->addLayout(buttons2);
    error_ = new QLabel(this);
    error_->setObjectName("classes_error");
    error_->setWordWrap(true);
    error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_->setStyleSheet("color: #b00000;");
    error_->hide();
    v->addWidget(error_);

    connect(add_, &QPushButton::clicked, this, [this] {
        std::string name;
        do {
            name = "class" + std::to_string(next_number_++);
        } while (std::any_of(rows_.begin(), rows_.end(),
                             [&name](const ClassRow& r) { return r.name == name; }));
        const int at = std::clamp(table_->currentRow(), 0, static_cast<int>(rows_.size()));
        rows_.insert(rows_.begin() + at, ClassRow{name, "protocol=udp", "emulate", false, {}});
        origin_.insert(origin_.begin() + at, std::string());
        setEdited(true);
        rebuild();
        table_->setCurrentCell(at + 1, kName);
        table_->editItem(table_->item(at + 1, kName));
    });
    connect(remove_, &QPushButton::clicked, this, [this] {
        const int row = table_->currentRow();
        if (row < 1 || row > static_cast<int>(rows_.size())) return;
        rows_.erase(rows_.begin() + (row - 1));
        origin_.erase(origin_.begin() + (row - 1));
        setEdited(true);
        rebuild();
        table_->setCurrentCell(std::min(row, static_cast<int>(rows_.size())), kName);
    });
    connect(up_, &QPushButton::clicked, this, [this] { moveRow(-1); });
    connect(down_, &QPushButton::clicked, this, [this] { moveRow(+1); });
    connect(apply_, &QPushButton::clicked, this, &ClassesPanel::apply);
    connect(revert_, &QPushButton::clicked, this, &ClassesPanel::revert);
    connect(table_, &QTableWidget::cellChanged, this, &ClassesPanel::onItemChanged);
    connect(table_, &QTableWidget::currentCellChanged, this, [this] { onCurrentRow(); });
    rebuild();
}

QPushButton* ClassesPanel::button(const QString& name) const {
    if (name == "add") return add_;
    if (name == "remove") return remove_;
    if (name == "up") return up_;
    if (name == "down") return down_;
    if (name == "apply") return apply_;
    if (name == "revert") return revert_;
    return nullptr;
}

void ClassesPanel::showClasses(const std::vector<TrafficClass>& in_force) {
    const bool same = in_force == in_force_;
    in_force_ = in_force;
    if (!edited_ || (!requested_.empty() && in_force == requested_)) {
        requested_.clear();
        std::vector<ClassRow> rows = rowsOf(in_force);
        if (rows == rows_ && !edited_ && same) return;
        rows_ = std::move(rows);
        origin_.clear();
        for (const TrafficClass& c : in_force)
            origin_.push_back(c.name);
        setEdited(false);
        clearErrors();
        rebuild();
        return;
    }
    // Editing: the classes' link parameters follow those in force (the sliders set them).
    bool changed = false;
    for (std::size_t i = 0; i < rows_.size(); ++i)
        for (const TrafficClass& c : in_force)
            if (c.name == origin_[i] && rows_[i].link != c.link) {
                rows_[i].link = c.link;
                changed = true;
            }
    if (changed) rebuild();
}

std::string ClassesPanel::sliderClass() const {
    return slider_class_;
}

void ClassesPanel::setSliderClass(const std::string& name) {
    if (name == slider_class_) return;
    slider_class_ = name;
    if (name == kDefaultClassName) {
        table_->setCurrentCell(0, table_->currentColumn() < 0 ? 0 : table_->currentColumn());
        return;
    }
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (origin_[i] == name) {
            table_->setCurrentCell(static_cast<int>(i) + 1, std::max(0, table_->currentColumn()));
            return;
        }
}

void ClassesPanel::setEditable(bool on) {
    if (on == editable_) return;
    editable_ = on;
    add_->setEnabled(on);
    setEdited(edited_);
    rebuild();  // the cells' editors follow
}

void ClassesPanel::setEdited(bool on) {
    edited_ = on;
    apply_->setEnabled(editable_ && on);
    revert_->setEnabled(on);
    setTitle(on ? "Classes (edited: Apply classes sends them)" : "Classes");
}

void ClassesPanel::rebuild() {
    building_ = true;
    const int current = table_->currentRow();
    table_->setRowCount(static_cast<int>(rows_.size()) + 1);
    auto fixed = [](const QString& text, const QString& tip = {}) {
        auto* it = new QTableWidgetItem(text);
        it->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
        it->setToolTip(tip.isEmpty() ? text : tip);
        return it;
    };
    table_->setItem(0, kName,
                    fixed("default",
                          "the link's own parameters: every packet no "
                          "class below takes"));
    table_->setItem(0, kMatch, fixed("every other packet"));
    table_->setItem(0, kAction, fixed("emulate"));
    table_->setItem(0, kLimiter, fixed("own"));
    for (int c = 0; c < kColumns; ++c)
        table_->removeCellWidget(0, c);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        const ClassRow& r = rows_[i];
        const int row = static_cast<int>(i) + 1;
        auto* name = new QTableWidgetItem(QString::fromStdString(r.name));
        auto* match = new QTableWidgetItem(QString::fromStdString(r.match));
        match->setToolTip(QString::fromStdString(r.match) + "\n\n" +
                          table_->horizontalHeaderItem(kMatch)->toolTip());
        table_->setItem(row, kName, name);
        table_->setItem(row, kMatch, match);
        table_->setItem(row, kAction, fixed({}));
        table_->setItem(row, kLimiter, fixed({}));
        auto* action = new QComboBox(table_);
        action->setObjectName(QString("classes_action_%1").arg(row));
        for (const char* a : kActions)
            action->addItem(a);
        if (action->findText(QString::fromStdString(r.action)) < 0)
            action->addItem(QString::fromStdString(r.action));
        action->setCurrentText(QString::fromStdString(r.action));
        action->setEnabled(editable_);
        action->setToolTip(
            "emulate: its own link parameters; pass: forwarded at once, "
            "untouched; drop: dropped and counted");
        table_->setCellWidget(row, kAction, action);
        connect(action, &QComboBox::currentTextChanged, this, [this, row](const QString& t) {
            if (building_) return;
            rows_[static_cast<std::size_t>(row - 1)].action = t.toStdString();
            setEdited(true);
            rebuild();
        });
        auto* limiter = new QComboBox(table_);
        limiter->setObjectName(QString("classes_limiter_%1").arg(row));
        limiter->addItem("own");
        limiter->addItem("link");
        limiter->setCurrentIndex(r.shares_link_limiter ? 1 : 0);
        limiter->setEnabled(editable_ && r.action == "emulate");
        limiter->setToolTip(table_->horizontalHeaderItem(kLimiter)->toolTip());
        table_->setCellWidget(row, kLimiter, limiter);
        connect(limiter, &QComboBox::currentIndexChanged, this, [this, row](int index) {
            if (building_) return;
            rows_[static_cast<std::size_t>(row - 1)].shares_link_limiter = index == 1;
            setEdited(true);
        });
        if (!editable_) {
            name->setFlags(name->flags() & ~Qt::ItemIsEditable);
            match->setFlags(match->flags() & ~Qt::ItemIsEditable);
        }
    }
    // as tall as its rows (up to 8, then it scrolls)
    const int shown = std::min(table_->rowCount(), 8);
    int h = table_->horizontalHeader()->sizeHint().height() + 2 * table_->frameWidth();
    for (int r = 0; r < shown; ++r)
        h += table_->verticalHeader()->sectionSize(r);
    table_->setFixedHeight(h);
    if (current >= 0) table_->setCurrentCell(std::min(current, table_->rowCount() - 1), 0);
    building_ = false;
    onCurrentRow();
}

void ClassesPanel::showParameters() {
    const int row = table_->currentRow();
    QString text;
    if (row <= 0) {
        text = "<b>default</b>: the link's own parameters (the sliders below)";
    } else if (row <= static_cast<int>(rows_.size())) {
        const ClassRow& r = rows_[static_cast<std::size_t>(row - 1)];
        QString params;
        if (r.action == "pass")
            params = "none: its packets are forwarded at once, untouched";
        else if (r.action == "drop")
            params = "none: its packets are dropped (drops_class)";
        else {
            TrafficClass t;
            t.link = r.link;
            t.shares_link_limiter = r.shares_link_limiter;
            params = QString::fromStdString(parametersText(t)).toHtmlEscaped();
            if (params.isEmpty()) params = "the defaults";
        }
        text = "<b>" + QString::fromStdString(r.name).toHtmlEscaped() + "</b>: " + params;
        if (params_error_ == std::to_string(row))
            text += "<br><span style='color:#b00000'>" + error_->text().toHtmlEscaped() + "</span>";
    }
    if (params_->text() != text) params_->setText(text);
}

void ClassesPanel::onItemChanged(int row, int column) {
    if (building_ || row < 1) return;
    ClassRow& r = rows_[static_cast<std::size_t>(row - 1)];
    const std::string text = table_->item(row, column)->text().toStdString();
    if (column == kName) r.name = text;
    if (column == kMatch) r.match = text;
    // its error goes with the edit
    if (QTableWidgetItem* it = table_->item(row, column); it && !it->data(Qt::UserRole).isNull()) {
        const QSignalBlocker block(table_);
        it->setData(Qt::UserRole, {});
        it->setBackground({});
        it->setForeground({});
        it->setToolTip(column == kMatch ? table_->horizontalHeaderItem(kMatch)->toolTip() : "");
    }
    setEdited(true);
}

void ClassesPanel::onCurrentRow() {
    const int row = table_->currentRow();
    const int n = static_cast<int>(rows_.size());
    remove_->setEnabled(editable_ && row >= 1);
    up_->setEnabled(editable_ && row >= 2);
    down_->setEnabled(editable_ && row >= 1 && row < n);
    showParameters();
    if (building_) return;
    std::string name = kDefaultClassName;
    if (row >= 1 && row <= n) {
        const std::size_t i = static_cast<std::size_t>(row - 1);
        name = origin_[i].empty() ? rows_[i].name : origin_[i];
    }
    if (name != slider_class_) {
        slider_class_ = name;
        emit sliderClassChanged(name);
    }
}

void ClassesPanel::moveRow(int by) {
    const int row = table_->currentRow();
    const int to = row + by;
    if (row < 1 || to < 1 || to > static_cast<int>(rows_.size())) return;
    std::swap(rows_[static_cast<std::size_t>(row - 1)], rows_[static_cast<std::size_t>(to - 1)]);
    std::swap(origin_[static_cast<std::size_t>(row - 1)],
              origin_[static_cast<std::size_t>(to - 1)]);
    setEdited(true);
    rebuild();
    table_->setCurrentCell(to, std::max(0, table_->currentColumn()));
}

void ClassesPanel::clearErrors() {
    const QSignalBlocker block(table_);
    for (int r = 0; r < table_->rowCount(); ++r)
        for (int c = 0; c < kColumns; ++c) {
            if (QTableWidgetItem* it = table_->item(r, c); it && !it->data(Qt::UserRole).isNull()) {
                it->setData(Qt::UserRole, {});
                it->setBackground({});
                it->setForeground({});
            }
            if (QWidget* w = table_->cellWidget(r, c)) w->setStyleSheet({});
        }
    error_->clear();
    error_->hide();
    params_error_.clear();
    showParameters();
}

void ClassesPanel::showError(std::size_t index, const std::string& column, const QString& text) {
    int c = kParameters;
    if (column == "name") c = kName;
    if (column == "match") c = kMatch;
    if (column == "action") c = kAction;
    if (column == "limiter") c = kLimiter;
    const int row = static_cast<int>(index) + 1;
    error_->setText(text);
    error_->show();
    if (row >= table_->rowCount()) return;
    if (c == kParameters) {
        params_error_ = std::to_string(row);
        showParameters();
    }
    const QSignalBlocker block(table_);
    if (QTableWidgetItem* it = table_->item(row, c)) {
        it->setData(Qt::UserRole, text);
        it->setBackground(kErrorBackground);
        it->setForeground(kErrorText);
        it->setToolTip(text);
    }
    if (QWidget* w = table_->cellWidget(row, c))
        w->setStyleSheet("background: #ffcdcd; color: #780000;");
    // shown, not chosen: the row chosen stays the class the sliders set
    if (QTableWidgetItem* it = table_->item(row, std::min(c, kColumns - 1)))
        table_->scrollToItem(it);
}

QString ClassesPanel::cellError(int row, int column) const {
    if (column == kParameters)
        return params_error_ == std::to_string(row) ? error_->text() : QString();
    const QTableWidgetItem* it = table_->item(row, column);
    return it ? it->data(Qt::UserRole).toString() : QString();
}

void ClassesPanel::apply() {
    clearErrors();
    const CheckedClasses checked = checkClassRows(rows_);
    if (checked.error) {
        showError(checked.error->index, checked.error->column,
                  QString::fromStdString(checked.error->field + ": " + checked.error->message));
        return;
    }
    if (!checked.list_error.empty()) {
        error_->setText(QString::fromStdString(checked.list_error));
        error_->show();
        return;
    }
    requested_ = checked.classes;
    emit applyRequested(checked.classes);
}

void ClassesPanel::revert() {
    setEdited(false);
    requested_.clear();
    showClasses(in_force_);
    clearErrors();
}

void ClassesPanel::showRefusal(const QString& field, const QString& message) {
    requested_.clear();
    const auto e = classCellError(field.toStdString(), message.toStdString());
    if (e)
        showError(e->index, e->column, field + ": " + message);
    else {
        error_->setText((field.isEmpty() ? QString() : field + ": ") + message);
        error_->show();
    }
}

}  // namespace linkem::gui
