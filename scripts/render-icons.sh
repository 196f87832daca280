#!/usr/bin/env bash
# Renders the app icon icons/org.linkem.Gui.svg to the hicolor PNG sizes the desktop looks
# for, icons/hicolor/<N>x<N>/apps/org.linkem.Gui.png. The PNGs are committed; run this after
# editing the SVG, look at the results (the 16 and 32 px ones especially) and commit both.
# Needs rsvg-convert (Debian: librsvg2-bin).
#   scripts/render-icons.sh
set -euo pipefail
case ${1:-} in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
(($# == 0)) || { echo "render-icons.sh: takes no arguments (allowed: --help), not '$*'" >&2; exit 2; }
cd "$(dirname "$0")/.."

svg=icons/org.linkem.Gui.svg
sizes=(16 22 24 32 48 64 128 256)

command -v rsvg-convert >/dev/null ||
  { echo "render-icons: rsvg-convert not found (apt-get install librsvg2-bin)" >&2; exit 1; }
[[ -f $svg ]] || { echo "render-icons: $svg not found" >&2; exit 1; }

for n in "${sizes[@]}"; do
  out=icons/hicolor/${n}x${n}/apps/org.linkem.Gui.png
  mkdir -p "$(dirname "$out")"
  rsvg-convert --width "$n" --height "$n" --format png --output "$out" "$svg"
  echo "render-icons: $out"
done
