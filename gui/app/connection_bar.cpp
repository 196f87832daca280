#include "connection_bar.hpp"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace linkem::gui {

ConnectionBar::ConnectionBar(QWidget* parent) : QToolBar("Connection", parent) {
    setObjectName("connection_bar");
    auto* cl = new QLabel(" &Control ", this);
    control_ = new QLineEdit(this);
    control_->setObjectName("control_endpoint");
    control_->setToolTip("linkemd's control endpoint (--control), e.g. tcp://127.0.0.1:7710");
    control_->setMinimumWidth(150);
    cl->setBuddy(control_);
    auto* tl = new QLabel(" &Telemetry ", this);
    telemetry_ = new QLineEdit(this);
    telemetry_->setObjectName("telemetry_endpoint");
    telemetry_->setToolTip("linkemd's telemetry endpoint (--telemetry), e.g. tcp://127.0.0.1:7711");
    telemetry_->setMinimumWidth(150);
    tl->setBuddy(telemetry_);
    connect_ = new QPushButton("Co&nnect", this);
    connect_->setObjectName("connect_button");
    auto* keys = new QPushButton("CURVE &keys…", this);
    keys->setObjectName("curve_button");
    keys->setToolTip(
        "the server's public key file and this client's key pair, for a linkemd started with "
        "--curve-secret/--curve-allow");
    addWidget(cl);
    addWidget(control_);
    addWidget(tl);
    addWidget(telemetry_);
    addWidget(connect_);
    addWidget(keys);
    connect(connect_, &QPushButton::clicked, this, [this] {
        if (connected_)
            emit disconnectRequested();
        else
            emit connectRequested();
    });
    connect(control_, &QLineEdit::returnPressed, this, &ConnectionBar::connectRequested);
    connect(telemetry_, &QLineEdit::returnPressed, this, &ConnectionBar::connectRequested);
    connect(keys, &QPushButton::clicked, this, &ConnectionBar::curveDialog);

    addSeparator();
    auto* wl = new QLabel(" Time &window ", this);
    window_ = new QComboBox(this);
    window_->setObjectName("time_window");
    for (int s : kTimeWindows)
        window_->addItem(s < 60 ? QString("%1 s").arg(s) : QString("%1 min").arg(s / 60), s);
    window_->setCurrentIndex(window_->findData(30));
    window_->setToolTip("the time the charts and the window readouts cover");
    wl->setBuddy(window_);
    addWidget(wl);
    addWidget(window_);
    connect(window_, &QComboBox::currentIndexChanged, this,
            [this](int) { emit windowChosen(window_->currentData().toInt()); });
}

Endpoints ConnectionBar::endpoints() const {
    return Endpoints{control_->text().trimmed(), telemetry_->text().trimmed(), server_key_,
                     client_cert_};
}

void ConnectionBar::setEndpoints(const Endpoints& e) {
    control_->setText(e.control);
    telemetry_->setText(e.telemetry);
    server_key_ = e.server_key_file;
    client_cert_ = e.client_cert_file;
}

void ConnectionBar::showState(Client::State s) {
    connected_ = s != Client::State::disconnected;
    connect_->setText(connected_ ? "Disco&nnect" : "Co&nnect");
}

int ConnectionBar::windowSeconds() const {
    return window_->currentData().toInt();
}

void ConnectionBar::setWindowSeconds(int s) {
    const int i = window_->findData(s);
    if (i >= 0 && i != window_->currentIndex()) window_->setCurrentIndex(i);
}

void ConnectionBar::curveDialog() {
    QDialog dlg(this);
    dlg.setWindowTitle("CURVE keys");
    auto* form = new QFormLayout(&dlg);
    auto* server = new QLineEdit(server_key_, &dlg);
    auto* cert = new QLineEdit(client_cert_, &dlg);
    server->setToolTip("linkemd's public key: NAME.key (the public half of --curve-secret's pair)");
    cert->setToolTip(
        "this client's key pair: NAME.key_secret, whose NAME.key is in linkemd's --curve-allow "
        "directory");
    auto pick = [&](QLineEdit* into, const QString& filter) {
        auto* b = new QPushButton("…", &dlg);
        connect(b, &QPushButton::clicked, &dlg, [&dlg, into, filter] {
            const QString p = QFileDialog::getOpenFileName(&dlg, "Key file", {}, filter);
            if (!p.isEmpty()) into->setText(p);
        });
        auto* w = new QWidget(&dlg);
        auto* h = new QHBoxLayout(w);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(into, 1);
        h->addWidget(b);
        return w;
    };
    form->addRow("&Server public key", pick(server, "Public key (*.key);;All files (*)"));
    form->addRow("&Client key pair", pick(cert, "Key pair (*.key_secret);;All files (*)"));
    form->addRow(
        new QLabel("Leave both empty for a loopback or ipc:// linkemd without CURVE.", &dlg));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dlg);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dlg, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dlg, &QDialog::reject);
    if (dlg.exec() != QDialog::Accepted) return;
    server_key_ = server->text().trimmed();
    client_cert_ = cert->text().trimmed();
    emit connectRequested();
}

}  // namespace linkem::gui
