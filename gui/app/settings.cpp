#include "settings.hpp"

#include <QSettings>

namespace linkem::gui {

GuiSettings GuiSettings::load() {
    QSettings s;
    GuiSettings g;
    g.geometry = s.value("window/geometry").toByteArray();
    g.layout = s.value("window/layout", g.layout).toString();
    g.desk_docks = s.value("window/state").toByteArray();
    g.stage_docks = s.value("window/stage_state").toByteArray();
    g.desk_window_s = s.value("charts/window_s", g.desk_window_s).toInt();
    g.stage_window_s = s.value("charts/stage_window_s", g.stage_window_s).toInt();
    g.control = s.value("endpoints/control").toString();
    g.telemetry = s.value("endpoints/telemetry").toString();
    g.server_key_file = s.value("endpoints/server_key_file").toString();
    g.client_cert_file = s.value("endpoints/client_cert_file").toString();
    return g;
}

void GuiSettings::save() const {
    QSettings s;
    s.setValue("window/geometry", geometry);
    s.setValue("window/layout", layout);
    s.setValue("window/state", desk_docks);
    s.setValue("window/stage_state", stage_docks);
    s.setValue("charts/window_s", desk_window_s);
    s.setValue("charts/stage_window_s", stage_window_s);
    s.setValue("endpoints/control", control);
    s.setValue("endpoints/telemetry", telemetry);
    s.setValue("endpoints/server_key_file", server_key_file);
    s.setValue("endpoints/client_cert_file", client_cert_file);
}

}  // namespace linkem::gui
