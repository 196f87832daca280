// What linkem-gui keeps between runs (QSettings, ~/.config/linkem/linkem-gui.conf), read and
// written in one place with its keys and defaults.
#pragma once

#include <QByteArray>
#include <QString>

namespace linkem::gui {

struct GuiSettings {
    QByteArray geometry;
    QString layout = "desk";                     // the layout the window was left in
    QByteArray desk_docks, stage_docks;          // each layout's dock arrangement
    int desk_window_s = 30, stage_window_s = 2;  // each layout's time window
    QString control, telemetry, server_key_file, client_cert_file;

    static GuiSettings load();
    void save() const;
};

}  // namespace linkem::gui
