// The window's layouts, named objects the main window switches between (F11):
//   desk  — everything at hand: the Link pane, the four charts, readouts, events, traffic;
//   stage — for an audience: the delay of each direction in its own lane over at least half
//           the window, large sliders for the five parameters a course talks about with
//           large "set → since the change" figures; the rest one key away (F2 .. F6).
// Each layout keeps its own time window and dock arrangement.
#pragma once

#include <QByteArray>
#include <QString>

#include "chart_style.hpp"

namespace linkem::gui {

class MainWindow;

class WindowLayout {
  public:
    virtual ~WindowLayout() = default;
    virtual QString name() const = 0;
    /// Lays the window out for this layout.
    virtual void enter(MainWindow& w) = 0;
    /// Keeps what the user changed while in it (dock arrangement, time window).
    virtual void leave(MainWindow& w);
    /// The window was resized (text sizes that follow the window).
    virtual void resized(MainWindow&) {}
    /// The charts' style for a window of this height.
    virtual ChartStyle chartStyle(int window_height) const = 0;

    int windowSeconds() const { return window_s_; }
    void setWindowSeconds(int s) { window_s_ = s; }
    QByteArray dockState() const { return docks_; }
    void setDockState(const QByteArray& s) { docks_ = s; }

  protected:
    int window_s_ = 30;
    QByteArray docks_;
};

class DeskLayout : public WindowLayout {
  public:
    QString name() const override { return QStringLiteral("desk"); }
    void enter(MainWindow& w) override;
    void leave(MainWindow& w) override;
    /// Until the user's arrangement is kept (the layout left, the window closed), the first
    /// arrangement's sizes follow the window's.
    void resized(MainWindow& w) override;
    ChartStyle chartStyle(int) const override { return ChartStyle::desk(); }

  private:
    void sizeDocks(MainWindow& w);
    /// The readouts' width: as their figures need, at most 3/4 of the window.
    static int readoutsWidth(MainWindow& w);
    /// Gives the bottom-left corner to the Link pane where the window leaves the readouts
    /// their width beside it (true), else to the readouts.
    static bool setCorner(MainWindow& w);
    int sized_for_ = 0, sized_h_ = 0;  // the window size the docks were sized for; 0: the user's
};

class StageLayout : public WindowLayout {
  public:
    StageLayout() { window_s_ = 2; }
    QString name() const override { return QStringLiteral("stage"); }
    void enter(MainWindow& w) override;
    void resized(MainWindow& w) override;
    ChartStyle chartStyle(int window_height) const override;
    /// The strip's text size for a window of this height, points.
    static double stripPoints(int window_height);
};

}  // namespace linkem::gui
