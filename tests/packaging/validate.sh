#!/usr/bin/env bash
# The desktop integration files of linkem-gui: the .desktop entry passes
# desktop-file-validate, the AppStream metainfo passes `appstreamcli validate --no-net`,
# they name the app, binary and icon alike, and every hicolor PNG has the size its
# directory says. A validator that is not installed is skipped with a message (exit 77:
# ctest's "skipped"), after the other checks have run.
#   tests/packaging/validate.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: validate.sh SOURCE_DIR}
desktop=$src/packaging/org.linkem.Gui.desktop
metainfo=$src/packaging/org.linkem.Gui.metainfo.xml
failed=0
skipped=()

fail() { echo "FAIL: $*"; failed=1; }

for f in "$desktop" "$metainfo" "$src/icons/org.linkem.Gui.svg"; do
  [[ -f $f ]] || fail "$f is missing"
done

if command -v desktop-file-validate >/dev/null; then
  # Hints (e.g. two main categories: Network and Education) are not errors.
  desktop-file-validate "$desktop" || fail "desktop-file-validate $desktop"
else
  skipped+=("desktop-file-validate (Debian: desktop-file-utils)")
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$metainfo" || fail "appstreamcli validate --no-net $metainfo"
else
  skipped+=("appstreamcli (Debian: appstream)")
fi

grep -qx 'Exec=linkem-gui' "$desktop" || fail "$desktop: Exec is not linkem-gui"
grep -qx 'Icon=org.linkem.Gui' "$desktop" || fail "$desktop: Icon is not org.linkem.Gui"
grep -q '<launchable type="desktop-id">org.linkem.Gui.desktop</launchable>' "$metainfo" ||
  fail "$metainfo: launchable is not org.linkem.Gui.desktop"
grep -q '<id>org.linkem.Gui</id>' "$metainfo" || fail "$metainfo: id is not org.linkem.Gui"

# PNG: width and height are the big-endian words at bytes 16 and 20 (the IHDR chunk).
for n in 16 22 24 32 48 64 128 256; do
  png=$src/icons/hicolor/${n}x${n}/apps/org.linkem.Gui.png
  if [[ ! -f $png ]]; then
    fail "$png is missing (scripts/render-icons.sh renders it)"
    continue
  fi
  read -r w h < <(od -An -tu1 -j16 -N8 "$png" |
                  awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
  [[ $w == "$n" && $h == "$n" ]] || fail "$png is ${w}x${h}, not ${n}x${n}"
done

if ((failed)); then exit 1; fi
if ((${#skipped[@]})); then
  echo "SKIPPED: not installed: ${skipped[*]}"
  exit 77
fi
echo "packaging files OK"
