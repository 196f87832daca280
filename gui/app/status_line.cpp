#include "status_line.hpp"

#include <QLabel>
#include <QStatusBar>

namespace linkem::gui {

namespace {
QString uptime(double ns) {
    const qint64 s = static_cast<qint64>(ns / 1e9);
    return QString("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QChar('0'))
        .arg(s % 60, 2, 10, QChar('0'));
}
}  // namespace

StatusLine::StatusLine(QStatusBar* bar) : QObject(bar) {
    for (const char* name :
         {"connection", "version", "instance", "uptime", "generation", "port_a", "port_b"}) {
        auto* l = new QLabel(bar);
        l->setObjectName(QString("status_") + name);
        bar->addPermanentWidget(l);
        labels_[name] = l;
    }
    labels_["connection"]->setToolTip("the control connection to linkemd");
    labels_["version"]->setToolTip("linkemd's version (hello)");
    labels_["instance"]->setToolTip("instance_id: random at every start of linkemd");
    labels_["uptime"]->setToolTip("time since linkemd started (its data-plane clock)");
    labels_["generation"]->setToolTip("params_generation: parameter changes applied since start");
}

QLabel* StatusLine::label(const QString& name) const {
    const auto it = labels_.find(name);
    return it == labels_.end() ? nullptr : it->second;
}

void StatusLine::showState(Client::State s, const QString& detail) {
    QLabel* l = labels_["connection"];
    QString text, style;
    switch (s) {
        case Client::State::disconnected:
            text = "disconnected";
            style = "color: #808080;";
            break;
        case Client::State::connecting:
            text = "connecting…";
            style = "color: #b35900;";
            break;
        case Client::State::connected:
            text = "connected";
            style = "color: #007000; font-weight: bold;";
            break;
        case Client::State::lost:
            text = "connection lost, reconnecting…";
            style = "color: #c00000; font-weight: bold;";
            break;
    }
    l->setText(text);
    l->setStyleSheet(style);
    l->setToolTip(detail);
}

void StatusLine::update(const proto::Hello* hello, bool connected,
                        const std::optional<LinkStats>& stats,
                        std::optional<std::uint64_t> generation) {
    const bool have = hello && connected;
    labels_["version"]->setText(have ? "linkemd " + QString::fromStdString(hello->linkemd_version)
                                     : "");
    labels_["instance"]->setText(have ? "instance " + QString::fromStdString(hello->instance_id)
                                      : "");
    double t = hello ? static_cast<double>(hello->uptime_ns) : 0;
    if (stats) t = std::max(t, static_cast<double>(stats->t_ns));
    labels_["uptime"]->setText(have ? "up " + uptime(t) : "");
    labels_["generation"]->setText(have && generation ? QString("generation %1").arg(*generation)
                                                      : QString());
    for (int p = 0; p < 2; ++p) {
        const char* name = p == 0 ? "a" : "b";
        QLabel* l = labels_[QString("port_") + name];
        std::optional<PortStats> port;
        if (stats && static_cast<unsigned>(p) < stats->ports) {
            port = stats->port[p];
        } else if (have) {
            for (const proto::PortInfo& hp : hello->ports)
                if (hp.port == name) {
                    PortStats ps;
                    ps.name = hp.device;
                    ps.link_up = hp.link_up;
                    ps.speed_mbps = hp.speed_mbps;
                    port = ps;
                }
        }
        if (!have || !port) {
            l->clear();
            continue;
        }
        l->setText(
            QString("port %1 %2 %3")
                .arg(name, QString::fromStdString(port->name), port->link_up ? "up" : "DOWN"));
        l->setStyleSheet(port->link_up ? "color: #007000;" : "color: #c00000; font-weight: bold;");
        l->setToolTip(QString("%1 Mbit/s").arg(port->speed_mbps));
    }
}

}  // namespace linkem::gui
