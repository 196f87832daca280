// The scenario strip under the charts: the scenario loaded in linkemd (docs/scenarios.md),
// its parameters over the timeline with a cursor at the position, and play / pause / stop,
// seek (a click or drag on the timeline), open (a built-in by name, or a JSON / CSV file) and
// save (the loaded scenario as JSON). linkemd plays the scenario on its own clock; the strip
// only sends the scenario methods (docs/protocol.md, "Scenarios") and follows get_scenario,
// the `stats` message's "scenario" object and the `scenario` / `scenario_step` events. While
// a scenario plays it also gives the delay chart the targets in force at each step's time
// (ChartStore::setLinkAt), so that the band moves with the scenario. Hidden while no
// scenario is loaded.
#pragma once

#include <QWidget>

#include "scenario_timeline.hpp"

class QLabel;
class QMenu;
class QToolButton;
class QPushButton;

namespace linkem::gui {

class Client;
class LinkSync;
class TelemetryModel;

/// The timeline: one lane per parameter, the cursor; a click or drag seeks.
class ScenarioTimelineView : public QWidget {
    Q_OBJECT
  public:
    explicit ScenarioTimelineView(const ScenarioTimeline& model, QWidget* parent = nullptr);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    /// The plot's x for a position (s), and back (tests, xdotool).
    int xOf(double position_s) const;
    double positionAt(int x) const;
    /// The position the cursor shows (the one dragged to while dragging).
    double cursorS() const { return dragging_ ? drag_s_ : model_.positionS(); }
    int rowHeight() const;
    /// What a slider moved during a scenario does, shown under the parameters' names (and
    /// at length in the tooltip).
    static const char* const kSliderNote;
    static const char* const kSliderNoteLong;
    /// Rows drawn: one per parameter (both directions in one row).
    int rows() const;
    /// Rows that fit with 12 pixels each (the first ones).
    int rowsShown() const;

  signals:
    void seekRequested(double position_s);

  protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;

  private:
    QRect plotRect() const;
    const ScenarioTimeline& model_;
    bool dragging_ = false;
    double drag_s_ = 0;
};

class ScenarioStrip : public QWidget {
    Q_OBJECT
  public:
    ScenarioStrip(Client& client, LinkSync& sync, TelemetryModel& model, QWidget* parent = nullptr);

    const ScenarioTimeline& timeline() const { return timeline_; }
    ScenarioTimelineView* view() const { return view_; }
    QLabel* title() const { return title_; }
    QPushButton* playButton() const { return play_; }
    QPushButton* pauseButton() const { return pause_; }
    QPushButton* stopButton() const { return stop_; }

    /// The Scenario menu: the built-ins by name, open a file, save, play / pause / stop.
    void fillMenu(QMenu* menu);
    /// Loads a built-in (load_scenario "name"); the names are linkemctl scenario list's.
    void loadBuiltin(const QString& name);
    /// Reads a JSON or CSV scenario file here and loads it inline; an error, empty if sent.
    QString loadFile(const QString& path);
    /// Writes the loaded scenario as JSON; an error, empty if fine.
    QString save(const QString& path) const;
    void play();  // start (from 0) when stopped or finished, resume when paused
    void pause();
    void stop();
    void seek(double position_s);
    /// Asks get_scenario and shows it.
    void refreshStatus();
    /// Shows get_scenario's (or a scenario method's) result.
    void showStatus(const proto::ScenarioStatus& status);
    /// The built-in scenarios' names, as linkemctl scenario list gives them.
    static QStringList builtinNames();

  signals:
    /// The delay targets changed (the charts redraw).
    void targetsChanged();
    void note(const QString& severity, const QString& text);
    /// Each get_scenario answer taken (tests count them).
    void statusChanged();

  private:
    /// A scenario method; its result is shown, `what` (if any) goes to the event log.
    template <proto::Method M>
    void call(const proto::ParamsOf<M>& params, const QString& what);
    void onTelemetry(const proto::Telemetry& t);
    void showState();
    Client& client_;
    LinkSync& sync_;
    TelemetryModel& model_;
    ScenarioTimeline timeline_;
    ScenarioTimelineView* view_ = nullptr;
    QLabel* title_ = nullptr;
    QPushButton *play_ = nullptr, *pause_ = nullptr, *stop_ = nullptr, *save_ = nullptr;
    QToolButton* open_ = nullptr;
    bool asking_ = false;
};

}  // namespace linkem::gui
