// linkem-gui's main window: connection, the controls of both directions, the charts, the
// readouts, the event log, presets and scenario files, the built-in traffic.
#pragma once

#include <vector>

#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "client.hpp"
#include "link_sync.hpp"
#include "linkem/presets.hpp"

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace linkem::gui {

class ChartsPanel;
class DirectionPanel;
class Readouts;

struct Options {
    Endpoints endpoints;
    bool connect = true;       // connect at start
    bool use_settings = true;  // read/write QSettings (tests: false)
};

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    Client& client() { return client_; }
    LinkSync& link() { return sync_; }
    DirectionPanel* panel(int direction) const { return panels_[direction]; }
    Readouts* readouts() const { return readouts_; }
    ChartsPanel* charts() const { return charts_; }
    QCheckBox* sameBothWays() const { return same_; }
    QLabel* statusLabel(const QString& name) const;
    QPlainTextEdit* eventLog() const { return log_; }

    void connectNow();
    /// Applies a preset: both directions (-1) or one.
    void applyPreset(const Preset& preset, int direction);
    const std::vector<Preset>& userPresets() const { return user_presets_; }
    /// Saves the parameters in force as a user preset (in the user presets file).
    QString saveUserPreset(const QString& name);
    /// Opens a scenario (linkemd --config) file and applies its link parameters; returns
    /// an error message, empty on success.
    QString openScenario(const QString& path);
    /// Saves the parameters in force as a scenario file; returns an error, empty if fine.
    QString saveScenario(const QString& path);
    void setProjectorMode(bool on);
    void setPaused(bool on);
    void setWindowSeconds(int seconds);
    static QString userPresetsPath();

  protected:
    void closeEvent(class QCloseEvent* e) override;
    void resizeEvent(class QResizeEvent* e) override;

  private:
    void buildMenus();
    void buildConnectionBar();
    void buildControls(const nlohmann::json& schema);
    void buildDocks();
    void sizeLinkDockOnce();
    void onState(Client::State s, const QString& detail);
    void onHello(const nlohmann::json& hello, bool restarted);
    void onTelemetry(const QString& topic, const nlohmann::json& body);
    void onLink(const nlohmann::json& applied, std::uint64_t generation);
    void onRefused(const QString& field, const QString& message);
    void onAccepted(const nlohmann::json& update);
    void onEdited(int direction, const std::string& key, const nlohmann::json& value);
    void onSameToggled(bool on);
    void logLine(const QString& severity, const QString& text);
    void updateStatus();
    void loadUserPresets();
    void fillPresetCombo();
    void refreshTraffic(const nlohmann::json& t);
    void sendTraffic();
    void curveDialog();
    void readSettings();
    void writeSettings();
    nlohmann::json presetUpdate(const Preset& p, int direction) const;

    Options options_;
    Client client_;
    LinkSync sync_;
    nlohmann::json schema_;
    int directions_ = 2;
    DirectionPanel* panels_[2] = {nullptr, nullptr};
    QWidget* controls_box_ = nullptr;
    QVBoxLayout* controls_layout_ = nullptr;
    class ColumnsFit* columns_fit_ = nullptr;  // the Link pane's columns, side by side or stacked
    bool layout_restored_ = false, link_dock_sized_ = false;
    QCheckBox* same_ = nullptr;
    QComboBox* preset_combo_ = nullptr;
    QComboBox* preset_target_ = nullptr;
    QLabel* preset_info_ = nullptr;
    ChartsPanel* charts_ = nullptr;
    Readouts* readouts_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QLineEdit* control_edit_ = nullptr;
    QLineEdit* telemetry_edit_ = nullptr;
    QPushButton* connect_button_ = nullptr;
    QComboBox* window_combo_ = nullptr;
    QAction* pause_action_ = nullptr;
    QAction* projector_action_ = nullptr;
    QWidget* traffic_box_ = nullptr;
    QCheckBox* traffic_running_ = nullptr;
    QComboBox* traffic_pattern_ = nullptr;
    QDoubleSpinBox* traffic_rate_ = nullptr;
    QSpinBox* traffic_frame_ = nullptr;
    QDoubleSpinBox* traffic_period_ = nullptr;
    QLabel* traffic_status_ = nullptr;
    std::map<QString, QLabel*> status_;
    QTimer refresh_;
    nlohmann::json hello_, last_stats_;
    nlohmann::json scenario_base_ = nlohmann::json::object();
    std::vector<Preset> user_presets_;
    bool reloading_ = false;
    double base_font_pt_ = 0;
};

}  // namespace linkem::gui
