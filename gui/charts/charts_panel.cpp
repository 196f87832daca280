#include "charts_panel.hpp"

#include <QIcon>
#include <QPixmap>

#include <algorithm>
#include <cmath>

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QTabWidget>
#include <QVBoxLayout>

#include "chart_export.hpp"
#include "charts_profile.hpp"
#include "delay_chart.hpp"
#include "histogram_chart.hpp"
#include "rate_charts.hpp"
#include "redraw_scheduler.hpp"

namespace linkem::gui {

ChartsPanel::ChartsPanel(ChartStore& store, QWidget* parent)
    : QWidget(parent), store_(store), scheduler_(new RedrawScheduler(this)) {
    setObjectName("charts_panel");
    delay_ = std::make_unique<DelayChart>(-1);
    lane_[0] = std::make_unique<DelayChart>(0);
    lane_[1] = std::make_unique<DelayChart>(1);
    hist_ = std::make_unique<HistogramChart>();
    thr_ = std::make_unique<ThroughputChart>();
    queue_ = std::make_unique<QueueChart>();
    drops_ = std::make_unique<DropsChart>();
    all_ = {delay_.get(), lane_[0].get(), lane_[1].get(), hist_.get(),
            thr_.get(),   queue_.get(),   drops_.get()};

    // The bar: directions and the throughput's unit.
    bar_ = new QWidget(this);
    auto* bar = new QHBoxLayout(bar_);
    bar->setContentsMargins(0, 0, 0, 0);
    show_combo_ = new QComboBox(bar_);
    show_combo_->setObjectName("charts_show");
    show_combo_->addItems({tr("Both directions"), tr("A→B only"), tr("B→A only")});
    show_combo_->setToolTip(tr("Directions drawn in every chart (and the stage's lanes)"));
    unit_combo_ = new QComboBox(bar_);
    unit_combo_->setObjectName("charts_throughput_unit");
    unit_combo_->addItems({tr("bit/s"), tr("packets/s")});
    unit_combo_->setToolTip(
        tr("Unit of the throughput chart (and of the queue chart's backlog: bytes, or packets)"));
    connect(show_combo_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setDirections(i); });
    connect(unit_combo_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setThroughputInPackets(i == 1); });
    auto* show_label = new QLabel(tr("&Show:"), bar_);
    show_label->setBuddy(show_combo_);
    auto* unit_label = new QLabel(tr("&Throughput in:"), bar_);
    unit_label->setBuddy(unit_combo_);
    unit_label->setObjectName("charts_unit_label");
    class_combo_ = new QComboBox(bar_);
    class_combo_->setObjectName("charts_class");
    class_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    class_combo_->setToolTip(
        tr("Traffic classes drawn: all (the directions' totals, and each "
           "class's throughput in its colour) or one class alone"));
    class_label_ = new QLabel(tr("C&lass:"), bar_);
    class_label_->setBuddy(class_combo_);
    connect(class_combo_, &QComboBox::activated, this,
            [this](int i) { setShownClass(class_combo_->itemData(i).toInt()); });
    bar->addWidget(show_label);
    bar->addWidget(show_combo_);
    bar->addSpacing(12);
    class_key_ = new QLabel(bar_);
    class_key_->setObjectName("charts_class_key");
    class_key_->setToolTip(
        tr("Each class's colour: its delay (B→A a darker shade) and, with all "
           "classes, its throughput out (dotted)"));
    bar->addWidget(class_label_);
    bar->addWidget(class_combo_);
    bar->addWidget(class_key_);
    class_label_->hide();
    class_combo_->hide();
    class_key_->hide();
    bar->addSpacing(12);
    bar->addWidget(unit_label);
    bar->addWidget(unit_combo_);
    bar->addStretch(1);

    grid_host_ = new QWidget(this);
    grid_host_->installEventFilter(this);
    tabs_ = new QTabWidget(grid_host_);
    tabs_->setObjectName("charts_tabs");
    tabs_->setDocumentMode(true);
    tabs_->hide();
    pair_tabs_ = new QTabWidget(grid_host_);
    pair_tabs_->setObjectName("charts_throughput_queue_tabs");
    pair_tabs_->setDocumentMode(true);
    pair_tabs_->hide();
    connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) {
        if (i >= 0 && tabs_->count() == 4) tab_ = i;
    });
    for (int d = 0; d < 2; ++d) {
        lane_box_[d] = new QWidget(grid_host_);
        lane_box_[d]->setObjectName(QStringLiteral("lane_") + kDirectionKeys[d]);
        auto* v = new QVBoxLayout(lane_box_[d]);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(2);
        lane_header_[d] = new QLabel(lane_box_[d]);
        lane_header_[d]->setObjectName(QStringLiteral("lane_header_") + kDirectionKeys[d]);
        lane_header_[d]->setTextFormat(Qt::RichText);
        lane_header_[d]->setWordWrap(true);
        v->addWidget(lane_header_[d]);
        v->addWidget(lane_[d]->view(), 1);
    }
    auto* top = new QVBoxLayout(this);
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(bar_);
    top->addWidget(grid_host_, 1);

    for (ChartRenderer* r : all_) {
        r->view()->installEventFilter(this);
        connect(r->chart(), &QChart::plotAreaChanged, this, [this](const QRectF& a) {
            // the columns follow the plot's width; the tick intervals its size
            if (std::abs(static_cast<int>(a.width()) - columns_) * 100 > 3 * columns_)
                markAllDirty();
        });
    }
    connect(scheduler_, &RedrawScheduler::check, this, [this] { redrawIfDue(); });
    setChartStyle(style_);
    arrange();
    redraw();
}

ChartsPanel::~ChartsPanel() = default;

// A chart too small for its captions and long axis titles shows short ones.
bool ChartsPanel::eventFilter(QObject* watched, QEvent* e) {
    if (watched == grid_host_ && e->type() == QEvent::Resize && arrangement_ == Arrangement::desk &&
        across_ != smallAcross(grid_host_->width()))
        arrange();
    if (e->type() == QEvent::Resize)
        for (ChartRenderer* r : all_)
            if (r->view() == watched) {
                const QSize s = r->view()->size();
                r->setCompact(s.width() < 640 || s.height() < 330);
            }
    return QWidget::eventFilter(watched, e);
}

// Showing a view lays the panel out, and the resize may ask for another arrangement (tabs or
// not) while this one is half built: that one waits until this one is done (arranging inside
// arranging deleted the grid being filled).
void ChartsPanel::arrange() {
    if (arranging_) {
        arrange_again_ = true;
        return;
    }
    arranging_ = true;
    for (int pass = 0; pass < 3; ++pass) {
        arrange_again_ = false;
        arrangeOnce();
        if (!arrange_again_) break;
    }
    arranging_ = false;
}

void ChartsPanel::arrangeOnce() {
    // Take every view out of the grid, then put back those of the arrangement.
    delete grid_host_->layout();
    auto* grid = new QGridLayout(grid_host_);
    grid->setContentsMargins(0, 0, 0, 0);
    const bool desk = arrangement_ == Arrangement::desk;
    delay_->view()->setVisible(desk);
    for (int d = 0; d < 2; ++d) {
        const bool on = !desk && (show_ == 0 || show_ == d + 1);
        lane_box_[d]->setVisible(on);
        lane_[d]->view()->setVisible(on);
    }
    unit_combo_->setVisible(desk);
    if (auto* l = bar_->findChild<QLabel*>("charts_unit_label")) l->setVisible(desk);
    for (int d = 0; d < 2; ++d)
        lane_[d]->setTitleShown(desk);  // a lane has its header instead
    // the histogram, throughput, queue and drops: side by side, or in tabs when they would
    // be too narrow for their titles and legends
    const int across = smallAcross(grid_host_->width());
    across_ = across;
    const bool tabs = desk && across == 0;
    const bool pair = desk && across == 3;
    tabs_->clear();
    pair_tabs_->clear();
    // a new parent hides a widget (and a tab page left hidden stays so): each view is shown
    // again unless the tabs take it
    for (ChartRenderer* r :
         {static_cast<ChartRenderer*>(hist_.get()), thr_.get(), queue_.get(), drops_.get()}) {
        r->view()->setParent(grid_host_);
        r->view()->setVisible(desk && !tabs);
        r->view()->setMinimumHeight(tabs ? kSmallInTabsPx : kChartMinPx);
        // four across only from 1340 px: their least width, while the window shrinks to
        // where three go across, no more than three's (3 x 240), or the window could not
        // shrink past it (LayoutTest::windowOpensWithinTheScreen)
        r->view()->setMinimumWidth(across == 4 ? 180 : 240);
    }
    pair_tabs_->setVisible(pair);
    // a teaching view's queue chart under the lanes
    if (!desk && queue_shown_) queue_->view()->setVisible(true);
    // In tabs (a short window), the tab bar's height comes off the small chart shown, not
    // off the delay chart: at their least the delay chart stays the taller.
    delay_->view()->setMinimumHeight(tabs ? kChartMinPx + kChartMinPx - kSmallInTabsPx
                                          : kChartMinPx);
    tabs_->setVisible(tabs);
    if (desk) {
        // the delay across the top, the histogram, throughput, queue and drops below it
        if (tabs) {
            tabs_->addTab(hist_->view(), tr("&Histogram"));
            tabs_->addTab(thr_->view(), tr("Thr&oughput"));
            // no mnemonic: the Link pane's Queue, Queue limit and ECN have q, u and c
            tabs_->addTab(queue_->view(), tr("Queue"));
            tabs_->addTab(drops_->view(), tr("&Drops"));
            tabs_->setCurrentIndex(std::clamp(tab_, 0, 3));
            grid->addWidget(tabs_, 1, 0, 1, 4);
            grid->addWidget(delay_->view(), 0, 0, 1, 4);
        } else if (pair) {
            grid->addWidget(hist_->view(), 1, 0);
            pair_tabs_->addTab(thr_->view(), tr("Thr&oughput"));
            // no mnemonic: the Link pane's Queue, Queue limit and ECN have q, u and c
            pair_tabs_->addTab(queue_->view(), tr("Queue"));
            grid->addWidget(pair_tabs_, 1, 1);
            grid->addWidget(drops_->view(), 1, 2);
            grid->addWidget(delay_->view(), 0, 0, 1, 3);
        } else {
            grid->addWidget(hist_->view(), 1, 0);
            grid->addWidget(thr_->view(), 1, 1);
            grid->addWidget(queue_->view(), 1, 2);
            grid->addWidget(drops_->view(), 1, 3);
            grid->addWidget(delay_->view(), 0, 0, 1, 4);
            for (int c = 0; c < 4; ++c)
                grid->setColumnStretch(c, 1);  // each as wide: the queue's two axes need it
        }
        grid->setRowStretch(0, 3);
        grid->setRowStretch(1, 1);
    } else if (arrangement_ == Arrangement::lanes) {
        grid->addWidget(lane_box_[0], 0, 0);
        grid->addWidget(lane_box_[1], 1, 0);
        if (queue_shown_) grid->addWidget(queue_->view(), 2, 0);
    } else {
        grid->addWidget(lane_box_[0], 0, 0);
        grid->addWidget(lane_box_[1], 0, 1);
        if (queue_shown_) {
            grid->addWidget(queue_->view(), 1, 0, 1, 2);
            grid->setRowStretch(0, 3);
            grid->setRowStretch(1, 2);
        }
    }
    markAllDirty();
}

void ChartsPanel::dataArrived(bool delay, qint64 t_ns) {
    (delay ? delay_new_ : stats_new_) = true;
    if (delay) hist_->samplesArrived();
    if (!paused_) scheduler_->arrived(delay);
    emit taken(delay, t_ns);
}

void ChartsPanel::linkChanged() {
    markAllDirty();
}

void ChartsPanel::setClasses(const std::vector<TrafficClass>& classes) {
    QStringList names{QString(kDefaultClassName)};
    for (const TrafficClass& c : classes)
        names << QString::fromStdString(c.name);
    QStringList had;
    for (int i = 1; i < class_combo_->count(); ++i)
        had << class_combo_->itemData(i, Qt::UserRole + 1).toString();
    if (had != names || classes.empty() != !class_combo_->isVisible()) {
        const QSignalBlocker block(class_combo_);
        class_combo_->clear();
        class_combo_->addItem(tr("all classes"), -1);
        for (int id = 0; id < names.size(); ++id) {
            QPixmap swatch(12, 12);
            swatch.fill(classColor(static_cast<std::size_t>(id)));
            class_combo_->addItem(QIcon(swatch), names[id], id);
            class_combo_->setItemData(id + 1, names[id], Qt::UserRole + 1);
        }
        QString key;
        for (int id = 0; id < names.size(); ++id)
            key += QString("<span style='color:%1'>■</span>&nbsp;%2&nbsp;&nbsp;")
                       .arg(classColor(static_cast<std::size_t>(id)).name(),
                            names[id].toHtmlEscaped());
        class_key_->setText(key);
        class_label_->setVisible(!classes.empty());
        class_combo_->setVisible(!classes.empty());
        class_key_->setVisible(!classes.empty());
    }
    // the store numbers the classes of the list in force; a class shown that is gone: all
    const int i = class_combo_->findData(store_.shownClass());
    const QSignalBlocker block(class_combo_);
    class_combo_->setCurrentIndex(std::max(0, i));
    markAllDirty();
}

void ChartsPanel::setShownClass(int id) {
    store_.setShownClass(id);
    const QSignalBlocker block(class_combo_);
    class_combo_->setCurrentIndex(std::max(0, class_combo_->findData(store_.shownClass())));
    hist_->reset();
    markAllDirty();
    redraw();
}

QString ChartsPanel::shownClassText() const {
    const int id = store_.shownClass();
    return id < 0
               ? QString()
               : "class " + QString::fromStdString(store_.className(static_cast<std::size_t>(id)));
}

void ChartsPanel::cleared() {
    hist_->reset();
    markAllDirty();
    redraw();  // also when paused: the old instance's data must not stay on screen
}

void ChartsPanel::markAllDirty() {
    for (ChartRenderer* r : all_)
        r->markDirty();
}

void ChartsPanel::setWindow(double seconds) {
    if (!std::isfinite(seconds)) return;
    window_s_ = std::clamp(seconds, 1.0, 300.0);
    markAllDirty();
}

void ChartsPanel::setPaused(bool paused) {
    paused_ = paused;
    scheduler_->setPaused(paused);
    if (!paused) markAllDirty();
}

void ChartsPanel::setArrangement(Arrangement a) {
    if (a == arrangement_) return;
    arrangement_ = a;
    arrange();
    emit arrangementChanged(a);
}

void ChartsPanel::setChartStyle(const ChartStyle& style) {
    style_ = style;
    for (ChartRenderer* r : all_)
        r->applyStyle(style);
    QFont f = font();
    f.setPointSizeF(style.label_pt * 1.15);
    for (QLabel* h : lane_header_)
        h->setFont(f);
}

void ChartsPanel::setDirections(int which) {
    show_ = std::clamp(which, 0, 2);
    if (show_combo_->currentIndex() != show_) show_combo_->setCurrentIndex(show_);
    if (arrangement_ != Arrangement::desk)
        arrange();
    else
        markAllDirty();
}

void ChartsPanel::setThroughputInPackets(bool packets) {
    packets_ = packets;
    if (unit_combo_->currentIndex() != (packets ? 1 : 0)) unit_combo_->setCurrentIndex(packets);
    thr_->markDirty();
    queue_->markDirty();
}

void ChartsPanel::setQueueShown(bool on) {
    if (on == queue_shown_) return;
    queue_shown_ = on;
    if (arrangement_ != Arrangement::desk) arrange();
}

void ChartsPanel::setCosts(ChartsCosts* costs) {
    costs_ = costs;
    for (ChartRenderer* r : all_)
        r->setCosts(costs);
}

ChartRenderer* ChartsPanel::renderer(const QString& name) const {
    for (ChartRenderer* r : all_)
        if (r->name() == name) return r;
    return nullptr;
}

QChart* ChartsPanel::chart(const QString& name) const {
    ChartRenderer* r = renderer(name);
    return r ? r->chart() : nullptr;
}

std::vector<ChartRenderer*> ChartsPanel::shownRenderers() const {
    std::vector<ChartRenderer*> v;
    for (ChartRenderer* r : all_)
        if (!r->view()->isHidden()) v.push_back(r);
    return v;
}

bool ChartsPanel::exportPng(const QString& directory, QString* error) {
    if (!linkem::gui::exportPng(shownRenderers(), directory, error)) return false;
    bool ok = true;
    for (QTabWidget* t : {tabs_, pair_tabs_}) {
        if (t->count() == 0) continue;
        const int keep = t->currentIndex();
        for (int i = 0; i < t->count() && ok; ++i) {
            if (i == keep) continue;
            t->setCurrentIndex(i);
            redraw();  // the page now shown draws whole
            for (ChartRenderer* r :
                 {static_cast<ChartRenderer*>(hist_.get()), thr_.get(), queue_.get(), drops_.get()})
                if (r->view() == t->currentWidget())
                    ok = linkem::gui::exportPng({r}, directory, error);
        }
        t->setCurrentIndex(keep);
    }
    return ok;
}

bool ChartsPanel::redrawIfDue() {
    if (paused_) return false;
    bool due = delay_new_ || stats_new_;
    for (ChartRenderer* r : all_)
        due = due || r->due();
    if (!due) {
        // a renderer with a new setting (the window, the style, the plot's size)
        for (ChartRenderer* r : shownRenderers())
            if (r->redrawPending()) due = true;
    }
    if (!due) return false;
    redraw();
    return true;
}

bool ChartsPanel::tabbed() const {
    return tabs_->count() > 0;
}

int ChartsPanel::plotWidthNow() const {
    // the columns follow the widest delay chart shown
    int w = 0;
    for (const auto* d : {delay_.get(), lane_[0].get(), lane_[1].get()})
        if (!d->view()->isHidden()) w = std::max(w, d->plotWidth());
    return w;
}

void ChartsPanel::redraw() {
    const std::int64_t started = threadCpuNs();
    scheduler_->started(delay_new_);  // also the redraw's wall time
    const std::int64_t window_ns = static_cast<std::int64_t>(window_s_ * 1e9);
    // The columns follow the plot's width, but not its wobble of a few pixels as the delay
    // axis' labels change width: a new column width rebuilds the columns from every sample
    // held (up to 6 million a direction), so up to 3% fewer or more pixels keep them.
    const int plot_w = plotWidthNow();
    const int want = plot_w >= 50 ? plot_w : 800;
    if (std::abs(want - columns_) * 100 > 3 * columns_) columns_ = want;
    const std::int64_t q = std::max<std::int64_t>(1, window_ns / columns_);  // column, ns
    store_.setColumns(q, window_ns);
    // The time axis moves in steps of whole columns, about 1% of the window (at a 5-minute
    // window 3 s, at 5 s every message): the view ends at the end of the step that holds the
    // newest data, so its right edge is empty for at most 1% of its width.
    const std::int64_t latest = store_.hasData() ? store_.latestNs() : window_ns;
    const std::int64_t step = q * std::max<std::int64_t>(1, (columns_ + 50) / 100);
    const std::int64_t hi = (ColumnDecimator::floorDiv(latest - 1, step) + 1) * step;
    const std::int64_t lo = hi - window_ns;
    view_lo_ = latest - window_ns;
    view_hi_ = latest;

    // Everything is laid out again when the view moved or new data landed before the split
    // (older than the heads); otherwise only the heads.
    const std::int64_t oldest = store_.takeOldestChange();
    if (oldest != std::numeric_limits<std::int64_t>::max())
        lag_ns_ = std::max(lag_ns_, latest - oldest);
    RedrawFrame f;
    f.store = &store_;
    f.lo = lo;
    f.hi = hi;
    f.column_ns = q;
    f.moved = hi != drawn_hi_ || q != drawn_q_ || oldest < split_;
    if (f.moved && profilingPrints())
        qDebug("moved: step %d q %d old %d (oldest %lld split %lld latest %lld)", hi != drawn_hi_,
               q != drawn_q_, oldest < split_, static_cast<long long>(oldest),
               static_cast<long long>(split_), static_cast<long long>(latest));
    if (f.moved) {
        // The heads span the columns that the next messages' data may land in: from a
        // column before the newest data less 1.5 times the lag seen, to the view's end.
        const std::int64_t back = std::min(lag_ns_ * 3 / 2, window_ns / 4);
        split_ = std::max(lo, (ColumnDecimator::floorDiv(latest - back, q) - 1) * q);
        lag_ns_ = 0;
        drawn_hi_ = hi;
        drawn_q_ = q;
    }
    f.split = split_;
    f.delay_new = delay_new_;
    f.stats_new = stats_new_;
    f.show = show_;
    f.packets = packets_;
    for (ChartRenderer* r : all_)
        r->redraw(f);
    delay_new_ = stats_new_ = false;
    ++redraws_;
    if (costs_) {
        account(*costs_, Cost::redraw, started);
        costs_->last_redraw_ms = static_cast<double>(threadCpuNs() - started) / 1e6;
        costs_->last_redraw_wall_ms = static_cast<double>(scheduler_->sinceStartNs()) / 1e6;
    }
    emit redrawn();
}

}  // namespace linkem::gui
