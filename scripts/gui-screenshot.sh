#!/usr/bin/env bash
# Takes docs/figures/linkem-gui.png: linkem-gui connected to `linkemd --demo` (virtual
# ports, built-in traffic) with data flowing, on a real X server (Xvfb), by the end-to-end
# test (gui/tests/test_gui_e2e.cpp), which grabs the main window after ~15 s of data.
#   scripts/gui-screenshot.sh [build-dir] [output.png]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-docs/figures/linkem-gui.png}
mkdir -p "$(dirname "$out")"
cmake --build "$build" --target test_gui_e2e
LINKEM_GUI_SCREENSHOT="$(realpath -m "$out")" QT_QPA_PLATFORM=xcb \
  xvfb-run -a -s '-screen 0 1600x1000x24' "$build/gui/tests/test_gui_e2e"
echo "wrote $out"
