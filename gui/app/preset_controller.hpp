// Presets and link files: the built-in presets (docs/presets.md) and the user's own
// (~/.config/linkem/linkem-gui/presets.json) in the Presets menu and the preset box, which
// names the preset in force or says "Custom" when the link in force is none of them; and
// linkemd --config files opened and saved (File menu). Changes go through LinkSync.
#pragma once

#include <vector>

#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

#include "linkem/messages.hpp"

#include "linkem/presets.hpp"

class QMenu;

namespace linkem::gui {

class LinkControls;
class LinkSync;

class PresetController : public QObject {
    Q_OBJECT
  public:
    /// The preset box's entry for a link in force that is no preset.
    static constexpr int kCustom = -1000000;

    PresetController(LinkSync& sync, LinkControls& controls, QObject* parent = nullptr);

    /// Reads the user presets file and fills the preset box (after connecting `note`).
    void load();
    /// Fills a Presets menu: the built-in presets by category, then "Save current as user
    /// preset…".
    void fillMenu(QMenu* menu, QWidget* dialog_parent);
    void setDirections(int n) { directions_ = n; }
    /// linkemd's version, for the source line of a saved user preset.
    void setServer(const std::string& version) { server_version_ = version; }

    /// Applies a preset: both directions (-1) or one.
    void applyPreset(const Preset& preset, int direction);
    const std::vector<Preset>& userPresets() const { return user_; }
    /// Saves the parameters in force as a user preset; returns an error, empty if fine.
    QString saveUserPreset(const QString& name);
    /// Opens a link file (linkemd --config) and applies its link parameters; returns an
    /// error message, empty on success.
    QString openLinkFile(const QString& path);
    /// Saves the parameters in force as a link file; returns an error, empty if fine.
    QString saveLinkFile(const QString& path);
    static QString userPresetsPath();
    /// The preset box now shows this preset (its index: built-in >= 0, user < 0, kCustom).
    int shownPreset() const;

    /// Whether "Same both ways" must be turned off for the preset (an asymmetric one).
    static bool needsBothColumns(const Preset& p, int direction) {
        return p.asymmetric() && direction < 0;
    }

  signals:
    /// A change of the link is about to be sent (for Ctrl+Z): `what` names it.
    void changing(const QString& what);
    /// A line for the event log.
    void note(const QString& severity, const QString& text);

  private:
    void loadUserPresets();
    void fillCombo();
    void showInfo();
    /// After a change in force: the preset it is, or Custom.
    void matchLink();
    const Preset* presetAt(int index) const;
    proto::LinkUpdate update(const Preset& p, int direction) const;

    LinkSync& sync_;
    LinkControls& controls_;
    std::vector<Preset> user_;
    int directions_ = 2;
    std::string server_version_;
    nlohmann::json link_file_base_ = nlohmann::json::object();
    bool filling_ = false;
};

}  // namespace linkem::gui
