// Readouts that teach: per direction, what the link achieves against what was asked, over
// the charts' time window (from `delay` telemetry) and from the newest `stats`.
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include <QGridLayout>
#include <QLabel>
#include <QWidget>

#include <nlohmann/json.hpp>

namespace linkem::gui {

/// count/mean/sd/min/max of a set of values, mergeable (Chan et al.), as the protocol's
/// {"count","min_ns","max_ns","mean_ns","sd_ns"} objects.
struct SummaryStats {
    double n = 0, mean = 0, m2 = 0, min = 0, max = 0;
    void merge(const SummaryStats& o);
    void add(double x);
    double sd() const;
    static SummaryStats from_json(const nlohmann::json& j);  // a RunningStats object
};

/// The window's figures of one direction.
struct DirectionWindow {
    SummaryStats emulated;  // delay_ns over every packet queued (the `delay` block)
    SummaryStats lateness;  // over every packet that left (the `lateness` block)
    SummaryStats actual;    // actual_ns of the sampled packets
    SummaryStats queueing;  // scheduled_ns - delay_ns of the sampled packets
    SummaryStats measured;  // the built-in traffic's one-way delay (measured_delay), if any
};

/// Keeps the `delay` messages' aggregates of the last `window` seconds.
class DelayWindow {
  public:
    void setWindow(double seconds) { window_ns_ = seconds * 1e9; }
    void add(const nlohmann::json& delay_message);
    void clear() { entries_.clear(); }
    DirectionWindow get(int direction) const;

  private:
    struct Entry {
        double t_ns;
        DirectionWindow d[2];
    };
    std::deque<Entry> entries_;
    double window_ns_ = 30e9;
};

class Readouts : public QWidget {
    Q_OBJECT
  public:
    explicit Readouts(QWidget* parent = nullptr);
    void setDirections(int n);
    void setLink(const nlohmann::json& applied);
    void addStats(const nlohmann::json& stats);
    void addDelay(const nlohmann::json& delay);
    void setWindow(double seconds);
    void clear();
    /// Refreshes the labels (called on a timer; cheap).
    void refresh();
    /// The text of one readout, for tests: row id ("emulated_mean", ...), direction.
    QString text(const QString& row, int direction) const;

  private:
    void addRow(const QString& id, const QString& name, const QString& tooltip);
    void set(const QString& id, int d, const QString& text, const QString& style = {});

    std::map<QString, QLabel*> cells_[2];
    std::map<QString, QLabel*> names_;
    QGridLayout* grid_ = nullptr;
    int rows_ = 1;
    int directions_ = 2;
    nlohmann::json link_, stats_, prev_stats_;
    DelayWindow window_;
    double window_s_ = 30;
};

}  // namespace linkem::gui
