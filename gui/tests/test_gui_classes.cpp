// linkem-gui's traffic classes (docs/classes.md, docs/gui.md): the Classes table edited in
// place with its errors in the cell they name, one set_link `classes` for the list, the
// sliders on the class chosen (set_link `class`), a pass or drop class's sliders disabled
// with the reason, the charts' class box. The table alone first; then the real window
// against the fake linkemd (real ZeroMQ sockets, the real protocol) where the protocol's
// codec carries classes.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include "charts_panel.hpp"
#include "classes_panel.hpp"
#include "direction_panel.hpp"
#include "fake_linkemd.hpp"
#include "link_controls.hpp"
#include "linkem/classes_json.hpp"
#include "linkem/messages.hpp"
#include "main_window.hpp"
#include "param_control.hpp"
#include "readouts.hpp"
#include "stage_strip.hpp"

using namespace linkem;
using namespace linkem::gui;
using nlohmann::json;

Q_DECLARE_METATYPE(std::vector<linkem::TrafficClass>)

namespace {
constexpr int kTimeout = 20000;

// voip emulate, ssh pass, bulk emulate sharing the link's limiter
std::vector<TrafficClass> threeClasses() {
    return classes_from_json(json::parse(R"([
        {"name": "voip", "match": {"protocol": "udp", "b_port": "5060-5061"},
         "mean_delay_us": 80000, "jitter_us": 4000, "b_to_a": {"loss_probability": 0.02}},
        {"name": "ssh", "match": {"protocol": "tcp", "b_port": 22}, "action": "pass"},
        {"name": "bulk", "match": [{"protocol": "tcp", "b_port": "5201"}, {"b_net": "10.9.0.0/16"}],
         "limiter": "link", "mean_delay_us": 20000, "jitter_us": 2000}])"));
}

// Whether the protocol's codec carries a link's classes (LinkState `classes`).
bool codecHasClasses() {
    proto::LinkState s;
    s.directions = 2;
    s.link.classes = threeClasses();
    return proto::to_json(s).contains("classes");
}

void setCell(QTableWidget* t, int row, int column, const QString& text) {
    t->item(row, column)->setText(text);  // as the editor commits it
}
}  // namespace

class ClassesTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void cleanupTestCase();

    void tableShowsTheClasses();
    void errorsShownInTheirCell();
    void editsSentAsOneList();
    void refusalShownInItsCell();

    void windowListsTheClasses();
    void slidersSetTheClassChosen();
    void passClassDisablesTheSliders();
    void tableAppliedAsOneSetLink();
    void chartsShowOneClassOrAll();
    void screenshots();

  private:
    bool waitFor(const std::function<bool()>& ok);
    std::unique_ptr<MainWindow> window();
    QTemporaryDir dir_;
    QString control_, telemetry_;
    std::unique_ptr<test::FakeLinkemd> fake_;
};

void ClassesTest::initTestCase() {
    qRegisterMetaType<std::vector<linkem::TrafficClass>>();
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
    control_ = "ipc://" + dir_.path() + "/control";
    telemetry_ = "ipc://" + dir_.path() + "/telemetry";
}

void ClassesTest::cleanupTestCase() {
    fake_.reset();
}

bool ClassesTest::waitFor(const std::function<bool()>& ok) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < kTimeout) {
        if (ok()) return true;
        QTest::qWait(20);
    }
    return ok();
}

// ------------------------------------------------------------------------ the table alone

void ClassesTest::tableShowsTheClasses() {
    ClassesPanel p;
    p.setEditable(true);
    p.showClasses(threeClasses());
    QTableWidget* t = p.table();
    QCOMPARE(t->rowCount(), 4);
    QCOMPARE(t->item(0, ClassesPanel::kName)->text(), QString("default"));
    QCOMPARE(t->item(1, ClassesPanel::kName)->text(), QString("voip"));
    QCOMPARE(t->item(1, ClassesPanel::kMatch)->text(), QString("protocol=udp,b_port=5060-5061"));
    QCOMPARE(t->item(3, ClassesPanel::kMatch)->text(),
             QString("protocol=tcp,b_port=5201; b_net=10.9.0.0/16"));
    auto* action = qobject_cast<QComboBox*>(t->cellWidget(2, ClassesPanel::kAction));
    QVERIFY(action);
    QCOMPARE(action->currentText(), QString("pass"));
    auto* limiter = qobject_cast<QComboBox*>(t->cellWidget(3, ClassesPanel::kLimiter));
    QCOMPARE(limiter->currentText(), QString("link"));
    t->setCurrentCell(1, 0);
    QVERIFY(p.parametersLabel()->text().contains("mean_delay_us=80000"));
    t->setCurrentCell(3, 0);
    QVERIFY(p.parametersLabel()->text().contains("limiter=link"));
    QVERIFY(qobject_cast<QComboBox*>(t->cellWidget(3, ClassesPanel::kAction))->isEnabled());
    QVERIFY(!p.isEdited());
    QVERIFY(!p.button("apply")->isEnabled());
    // the default row is not edited
    QVERIFY(!(t->item(0, ClassesPanel::kName)->flags() & Qt::ItemIsEditable));
    QVERIFY(!p.button("remove")->isEnabled() || t->currentRow() >= 1);
}

void ClassesTest::errorsShownInTheirCell() {
    ClassesPanel p;
    p.setEditable(true);
    p.showClasses(threeClasses());
    QSignalSpy applied(&p, &ClassesPanel::applyRequested);
    QTableWidget* t = p.table();
    setCell(t, 2, ClassesPanel::kMatch, "protocol=tcp,b_port=70000");
    QVERIFY(p.isEdited());
    QVERIFY(p.button("apply")->isEnabled());
    p.button("apply")->click();
    QCOMPARE(applied.count(), 0);  // nothing sent
    QVERIFY2(p.cellError(2, ClassesPanel::kMatch).contains("classes[1].match.b_port"),
             qPrintable(p.cellError(2, ClassesPanel::kMatch)));
    QVERIFY(p.errorLabel()->isVisibleTo(&p));
    QVERIFY(p.errorLabel()->text().contains("70000"));
    // the edit clears it
    setCell(t, 2, ClassesPanel::kMatch, "protocol=tcp,b_port=22");
    QVERIFY(p.cellError(2, ClassesPanel::kMatch).isEmpty());
    // a duplicate name: at the name
    setCell(t, 3, ClassesPanel::kName, "voip");
    p.apply();
    QCOMPARE(applied.count(), 0);
    QVERIFY(!p.cellError(3, ClassesPanel::kName).isEmpty());
    setCell(t, 3, ClassesPanel::kName, "bulk");
    // match text that is not key=value
    setCell(t, 1, ClassesPanel::kMatch, "udp");
    p.apply();
    QVERIFY(p.cellError(1, ClassesPanel::kMatch).contains("key=value"));
    setCell(t, 1, ClassesPanel::kMatch, "protocol=udp,b_port=5060-5061");
    p.apply();
    QCOMPARE(applied.count(), 1);
    QCOMPARE(applied[0][0].value<std::vector<TrafficClass>>(), threeClasses());
}

void ClassesTest::editsSentAsOneList() {
    ClassesPanel p;
    p.setEditable(true);
    p.showClasses(threeClasses());
    QSignalSpy applied(&p, &ClassesPanel::applyRequested);
    QTableWidget* t = p.table();
    // move bulk up, before ssh
    t->setCurrentCell(3, 0);
    p.button("up")->click();
    QCOMPARE(t->item(2, ClassesPanel::kName)->text(), QString("bulk"));
    // ssh drops instead of passing
    qobject_cast<QComboBox*>(t->cellWidget(3, ClassesPanel::kAction))->setCurrentText("drop");
    // remove voip
    t->setCurrentCell(1, 0);
    p.button("remove")->click();
    QCOMPARE(t->rowCount(), 3);
    // add one at the end
    t->setCurrentCell(2, 0);
    p.button("add")->click();
    QCOMPARE(t->rowCount(), 4);
    setCell(t, 3, ClassesPanel::kName, "dns");
    setCell(t, 3, ClassesPanel::kMatch, "protocol=udp,b_port=53");
    p.apply();
    QCOMPARE(applied.count(), 1);
    const auto list = applied[0][0].value<std::vector<TrafficClass>>();
    QCOMPARE(list.size(), std::size_t{3});
    QCOMPARE(list[0].name, std::string("bulk"));
    QVERIFY(list[0].shares_link_limiter);
    QCOMPARE(list[0].link, threeClasses()[2].link);  // its parameters travel with it
    QCOMPARE(list[1].name, std::string("ssh"));
    QCOMPARE(list[1].action, ClassAction::drop);
    QCOMPARE(list[2].name, std::string("dns"));
    // the list in force comes back: the table is no longer edited
    p.showClasses(list);
    QVERIFY(!p.isEdited());
    // revert after an edit
    setCell(t, 1, ClassesPanel::kName, "other");
    p.revert();
    QCOMPARE(t->item(1, ClassesPanel::kName)->text(), QString("bulk"));
}

void ClassesTest::refusalShownInItsCell() {
    ClassesPanel p;
    p.setEditable(true);
    p.showClasses(threeClasses());
    p.showRefusal("classes[2].limiter", "class 'bulk': no link limiter");
    QVERIFY(p.errorLabel()->text().contains("classes[2].limiter"));
    QVERIFY(p.table()->cellWidget(3, ClassesPanel::kLimiter)->styleSheet().contains("background"));
    p.showRefusal("classes[0].b_to_a.loss_probability", "2 is out of range");
    QVERIFY(p.cellError(1, ClassesPanel::kParameters).contains("loss_probability"));
}

// --------------------------------------------------------------- the window, the fake linkemd

std::unique_ptr<MainWindow> ClassesTest::window() {
    if (!fake_) {
        fake_ =
            std::make_unique<test::FakeLinkemd>(control_.toStdString(), telemetry_.toStdString());
        LinkConfig link;
        link.a_to_b.mean_delay = link.b_to_a.mean_delay = 10'000'000;
        link.a_to_b.jitter = link.b_to_a.jitter = 1'000'000;
        link.classes = threeClasses();
        fake_->start(link);
    }
    Options o;
    o.endpoints.control = control_;
    o.endpoints.telemetry = telemetry_;
    o.use_settings = false;
    auto w = std::make_unique<MainWindow>(o);
    w->show();
    [&] {
        QVERIFY(waitFor([&] {
            return w->client().state() == Client::State::connected && w->link().valid() &&
                   w->link().classes().size() == 3;
        }));
    }();
    fake_->clear_requests();
    return w;
}

void ClassesTest::windowListsTheClasses() {
    if (!codecHasClasses()) QSKIP("the protocol codec carries no classes yet (LinkState classes)");
    auto w = window();
    ClassesPanel* p = w->linkControls()->classes();
    QCOMPARE(p->table()->rowCount(), 4);
    QCOMPARE(p->table()->item(3, ClassesPanel::kName)->text(), QString("bulk"));
    QVERIFY(w->linkControls()->slidersLabel()->text().contains("Sliders set: class default"));
    // the readouts are every class together: not judged against default's set values
    QVERIFY(waitFor([&] {
        return w->readouts()->text("target", 0).startsWith("default: ") &&
               w->readouts()->text("emulated_mean", 0).contains("ms") &&
               !w->readouts()->text("emulated_mean", 0).contains("%");
    }));
}

void ClassesTest::slidersSetTheClassChosen() {
    if (!codecHasClasses()) QSKIP("the protocol codec carries no classes yet (LinkState classes)");
    auto w = window();
    w->sameBothWays()->setChecked(true);
    QVERIFY(waitFor([&] { return fake_->requests("set_link").size() >= 1; }));
    QTest::qWait(200);
    fake_->clear_requests();
    ClassesPanel* p = w->linkControls()->classes();
    p->table()->setCurrentCell(1, 0);  // voip
    const QString label = w->linkControls()->slidersLabel()->text();
    QVERIFY2(label.contains("Sliders set: class voip, both ways"), qPrintable(label));
    // the sliders show voip's parameters
    ParamControl* mean = w->panel(0)->control("mean_delay_us");
    QVERIFY(std::abs(mean->shown() - 80000) < 1);
    mean->spinBox()->setValue(90.0);  // ms
    QVERIFY(waitFor([&] { return !fake_->requests("set_link").empty(); }));
    const json params = fake_->requests("set_link").back().params;
    QCOMPARE(QString::fromStdString(params.value("class", "")), QString("voip"));
    QVERIFY(waitFor([&] {
        return fake_->link().classes[0].link.a_to_b.mean_delay == 90'000'000 &&
               fake_->link().a_to_b.mean_delay == 10'000'000;  // default's untouched
    }));
    // the stage's box names it too
    QCOMPARE(w->stageStrip()->classBox()->currentData().toString(), QString("voip"));
}

void ClassesTest::passClassDisablesTheSliders() {
    if (!codecHasClasses()) QSKIP("the protocol codec carries no classes yet (LinkState classes)");
    auto w = window();
    w->linkControls()->classes()->table()->setCurrentCell(2, 0);  // ssh: pass
    QVERIFY(!w->panel(0)->isEnabled());
    QVERIFY(w->linkControls()->slidersLabel()->text().contains("pass class"));
    QVERIFY(w->stageStrip()->classNote()->text().contains("pass class"));
    QVERIFY(!w->stageStrip()->control("mean_delay_us")->isEnabled());
    w->linkControls()->classes()->table()->setCurrentCell(0, 0);  // default
    QVERIFY(w->panel(0)->isEnabled());
}

void ClassesTest::tableAppliedAsOneSetLink() {
    if (!codecHasClasses()) QSKIP("the protocol codec carries no classes yet (LinkState classes)");
    auto w = window();
    ClassesPanel* p = w->linkControls()->classes();
    // a bad match is refused in place, nothing sent
    setCell(p->table(), 2, ClassesPanel::kMatch, "protocol=tcp,b_port=99999");
    p->button("apply")->click();
    QTest::qWait(200);
    QVERIFY(fake_->requests("set_link").empty());
    QVERIFY(!p->cellError(2, ClassesPanel::kMatch).isEmpty());
    setCell(p->table(), 2, ClassesPanel::kMatch, "protocol=tcp,b_port=2222");
    p->button("apply")->click();
    QVERIFY(waitFor([&] { return fake_->requests("set_link").size() == 1; }));
    const json params = fake_->requests("set_link")[0].params;
    QVERIFY(params.contains("classes"));
    QCOMPARE(params["classes"].size(), std::size_t{3});
    QVERIFY(waitFor([&] { return !p->isEdited(); }));
    QCOMPARE(fake_->link().classes[1].match[0].b_port->lo, std::uint16_t{2222});
    QCOMPARE(p->table()->item(2, ClassesPanel::kMatch)->text(),
             QString("protocol=tcp,b_port=2222"));
}

void ClassesTest::chartsShowOneClassOrAll() {
    if (!codecHasClasses()) QSKIP("the protocol codec carries no classes yet (LinkState classes)");
    auto w = window();
    ChartsPanel* c = w->charts();
    QCOMPARE(c->classCombo()->count(), 5);  // all, default, voip, ssh, bulk
    QVERIFY(c->classCombo()->isVisibleTo(c));
    QVERIFY(waitFor([&] { return w->model().store().classDir(0, 1).samples.size() > 0; }));
    c->setShownClass(1);
    QCOMPARE(c->shownClassText(), QString("class voip"));
    QVERIFY(waitFor([&] {
        const auto& s = w->model().store().shown(0).samples;
        return s.size() > 0 && s.actual(0, INT64_MAX).mean() > 60e6;  // voip's 80 ms
    }));
    w->setLayoutNamed("stage");
    QVERIFY(waitFor([&] { return c->laneHeader(0)->text().contains("class voip"); }));
    c->setShownClass(-1);
}

// With LINKEM_GUI_CLASSES_SHOTS=DIR (run under Xvfb, a screen of the size wanted): the window
// filling the screen with three classes, desk (the sliders on voip, every class charted, then
// an error in place) and stage (the charts on voip), saved as DIR/{desk,desk-error,stage}-WxH.png.
void ClassesTest::screenshots() {
    const QString out = qEnvironmentVariable("LINKEM_GUI_CLASSES_SHOTS");
    if (out.isEmpty()) QSKIP("LINKEM_GUI_CLASSES_SHOTS names no directory");
    auto w = window();
    const QRect screen = w->screen()->geometry();
    w->setGeometry(screen);
    w->relayout();
    const QString size = QString("%1x%2").arg(screen.width()).arg(screen.height());
    ClassesPanel* p = w->linkControls()->classes();
    w->sameBothWays()->setChecked(true);
    p->table()->setCurrentCell(1, 0);  // voip
    QTest::qWait(8000);                // 8 s of data
    QVERIFY(w->grab().save(out + "/desk-" + size + ".png"));
    setCell(p->table(), 3, ClassesPanel::kMatch, "protocol=tcp,b_port=70000");
    p->apply();
    QTest::qWait(500);
    QVERIFY(w->grab().save(out + "/desk-error-" + size + ".png"));
    p->revert();
    w->setLayoutNamed("stage");
    w->setGeometry(screen);
    w->charts()->setShownClass(1);
    QTest::qWait(4000);
    QVERIFY(w->grab().save(out + "/stage-" + size + ".png"));
    w->setLayoutNamed("desk");
}

QTEST_MAIN(ClassesTest)
#include "test_gui_classes.moc"
