// linkem-gui's main window. It assembles and wires the parts, and does little itself:
//   - the connection bar (ConnectionBar) and the client thread (Client);
//   - the link controls (LinkControls, in the Link dock) and LinkSync, which sends the changes;
//   - the preset and scenario controller (PresetController) and the teaching views (Teaching);
//   - the telemetry model (TelemetryModel: store, readouts, events) and its views: the charts
//     (central), the Readouts, Events and Built-in traffic docks, the stage's strip;
//   - the layouts (desk, stage) it switches between (F11).
// Under the charts sits the scenario strip (ScenarioStrip), hidden while no scenario is loaded.
#pragma once

#include <memory>
#include <optional>

#include <QMainWindow>
#include <QTimer>

#include "client.hpp"
#include "link_history.hpp"
#include "link_sync.hpp"
#include "telemetry_model.hpp"

class QAction;
class QCheckBox;
class QDockWidget;
class QLabel;

namespace linkem::gui {

class ChartsPanel;
class ConnectionBar;
class DirectionPanel;
class EventsPanel;
class LinkControls;
class PresetController;
class Readouts;
class RecordPanel;
class Recorder;
class ScenarioStrip;
class StageStrip;
class StatusLine;
class Teaching;
class TrafficPanel;
class WindowLayout;
struct ChartsCosts;

struct Options {
    Endpoints endpoints;
    bool connect = true;       // connect at start
    bool use_settings = true;  // read/write QSettings (tests: false)
    QString layout;            // "desk" or "stage" (empty: the one left in, else desk)
};

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The parts.
    Client& client() { return client_; }
    LinkSync& link() { return sync_; }
    TelemetryModel& model() { return model_; }
    ConnectionBar* connectionBar() const { return bar_; }
    LinkControls* linkControls() const { return controls_; }
    DirectionPanel* panel(int direction) const;
    QCheckBox* sameBothWays() const;
    Readouts* readouts() const { return readouts_; }
    ChartsPanel* charts() const { return charts_; }
    EventsPanel* events() const { return events_; }
    TrafficPanel* traffic() const { return traffic_; }
    StageStrip* stageStrip() const { return strip_; }
    PresetController* presets() const { return presets_; }
    Teaching* teaching() const { return teaching_; }
    QLabel* statusLabel(const QString& name) const;
    /// "link", "readouts", "events", "traffic".
    QDockWidget* dock(const QString& name) const;
    /// The scenario strip under the charts (hidden while no scenario is loaded).
    ScenarioStrip* scenarioStrip() const { return scenario_; }
    /// Recording a capture: the Record button's controller, and the Record controls of a
    /// layout ("desk": at the menu bar's end, "stage": in the strip).
    Recorder* recorder() const { return recorder_; }
    RecordPanel* recordPanel(const QString& layout) const;

    void connectNow();
    /// Switches to the layout named "desk" or "stage".
    void setLayoutNamed(const QString& name);
    QString layoutName() const;
    WindowLayout* windowLayout(const QString& name) const;
    void setPaused(bool on);
    void setWindowSeconds(int seconds);
    /// Ends a comparison of strategies (Teaching): the layout's own charts again, and the
    /// time window chosen before it unless the user chose another meanwhile.
    void endComparison();
    bool comparing() const { return compare_.has_value(); }
    /// Ctrl+Z: back to the link before the last change; false when there is none.
    bool undo();
    bool canUndo() const { return history_.canUndo(); }
    /// A line in the event log (the GUI's own).
    void note(const QString& severity, const QString& text, bool needs_action = false);
    /// Profiling: redraw, paint and intake costs go to *costs (null: not counted).
    void setCosts(ChartsCosts* costs);
    /// The charts' visible data as CSV / PNG files; an error, empty if fine.
    QString exportCsv(const QString& path) const;
    QString exportPng(const QString& directory) const;
    /// Lays the window out afresh for its layout (tests; the first show).
    void relayout();

  protected:
    void closeEvent(class QCloseEvent* e) override;
    void resizeEvent(class QResizeEvent* e) override;
    void showEvent(class QShowEvent* e) override;

  private:
    friend class DeskLayout;
    friend class StageLayout;
    void buildCentral();
    void buildDocks();
    void buildMenus();
    void buildControls(const LinkSchema& schema, int directions);
    void wire();
    void fitToScreen();
    void onState(Client::State s, const QString& detail);
    void onHello(const proto::Hello& hello, bool restarted);
    void onTelemetry(const proto::Telemetry& message);
    void onTelemetryTaken(TelemetryModel::Took took);
    void onLink(const LinkConfig& applied, std::uint64_t generation);
    void onEdited(int direction, const std::string& key, const FieldValue& value);
    void onSameToggled(bool on);
    /// The class the sliders set (the Classes table's row, the stage's class box).
    void setSliderClass(const std::string& name);
    /// The link parameters the sliders show: the slider class's (an emulate class), else
    /// the link's own; nullptr for a pass or drop class, or one not in force.
    const LinkConfig* sliderLink() const;
    /// The class for set_link's `class`: "" for default.
    std::string sliderClassKey() const;
    void beforeChange(const QString& what);
    void refresh();
    void readSettings();
    void writeSettings();

    Options options_;
    Client client_;
    LinkSync sync_;
    TelemetryModel model_;
    LinkHistory history_;
    LinkSchema schema_;
    int directions_ = 2;
    bool reloading_ = false;
    std::uint64_t skipped_noted_ = 0;  // the client's telemetrySkipped() last noted
    std::int64_t skipped_noted_ms_ = 0;
    std::string slider_class_ = kDefaultClassName;

    ConnectionBar* bar_ = nullptr;
    LinkControls* controls_ = nullptr;
    ChartsPanel* charts_ = nullptr;
    ScenarioStrip* scenario_ = nullptr;
    StageStrip* strip_ = nullptr;
    Readouts* readouts_ = nullptr;
    EventsPanel* events_ = nullptr;
    TrafficPanel* traffic_ = nullptr;
    StatusLine* status_ = nullptr;
    PresetController* presets_ = nullptr;
    Teaching* teaching_ = nullptr;
    Recorder* recorder_ = nullptr;
    RecordPanel *record_panel_ = nullptr, *stage_record_panel_ = nullptr;
    QDockWidget *link_dock_ = nullptr, *readouts_dock_ = nullptr, *events_dock_ = nullptr,
                *traffic_dock_ = nullptr;
    QAction *pause_action_ = nullptr, *stage_action_ = nullptr, *undo_action_ = nullptr;
    Qt::WindowStates before_stage_;  // the window state when the stage action turned on
    std::unique_ptr<WindowLayout> desk_, stage_;
    WindowLayout* layout_ = nullptr;
    QTimer refresh_;
    ChartsCosts* costs_ = nullptr;
    bool fitted_ = false;
    // While strategies are compared: the window before, and the one the comparison chose.
    struct Comparison {
        int before_s = 30, shown_s = 2;
    };
    std::optional<Comparison> compare_;
};

}  // namespace linkem::gui
