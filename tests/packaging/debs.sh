#!/usr/bin/env bash
# The Debian packages as a user gets them: builds them with cpack in BUILD_DIR, then
#  - lintian reports no errors (its warnings and infos are printed, not failed on);
#  - each package has the files it must (programs, man pages, unit, conffile, doc files,
#    desktop integration) and the version of the project;
#  - unpacked into a scratch root (dpkg -x), the programs run from there: linkemd --version,
#    linkemctl --help, linkem-sim --help (and linkem-gui --help offscreen), and linkemd
#    accepts the shipped /etc/linkem/linkemd.json (--print-config);
#  - the unpacked .desktop entry and metainfo pass desktop-file-validate and
#    `appstreamcli validate --no-net`; the unit passes `systemd-analyze verify`.
# A program whose target is not built (linkemctl, linkem-gui) is reported as absent, not
# failed. A checker that is not installed is skipped with a message (exit 77: skipped).
#   tests/packaging/debs.sh BUILD_DIR PROJECT_VERSION [CPACK]
set -uo pipefail
build=${1:?usage: debs.sh BUILD_DIR PROJECT_VERSION [CPACK]}
version=${2:?usage: debs.sh BUILD_DIR PROJECT_VERSION [CPACK]}
cpack=${3:-cpack}
failed=0
skipped=()
fail() { echo "FAIL: $*"; failed=1; }
ok() { echo "ok: $*"; }

for tool in dpkg-deb dpkg-shlibdeps; do
  if ! command -v $tool >/dev/null; then
    echo "SKIPPED: $tool not installed (Debian: dpkg-dev)"
    exit 77
  fi
done

build=$(cd "$build" && pwd)
t0=$SECONDS
rm -rf "$build/packages"
log=$build/packages-cpack.log
if ! (cd "$build" && "$cpack" -G DEB) >"$log" 2>&1; then
  cat "$log"
  echo "FAIL: cpack -G DEB in $build"
  exit 1
fi
deb_main=$(ls "$build"/packages/linkem_*.deb 2>/dev/null | head -1)
deb_gui=$(ls "$build"/packages/linkem-gui_*.deb 2>/dev/null | head -1)
echo "cpack -G DEB: $((SECONDS - t0)) s (log: $log)"
[[ -n $deb_main ]] || { cat "$log"; echo "FAIL: cpack wrote no linkem_*.deb"; exit 1; }
[[ -n $deb_gui ]] || { cat "$log"; echo "FAIL: cpack wrote no linkem-gui_*.deb"; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root

for deb in "$deb_main" "$deb_gui"; do
  name=$(dpkg-deb -f "$deb" Package)
  echo "=== $name: $(basename "$deb")"
  dpkg-deb -f "$deb" Package Version Architecture Section Priority Depends Recommends Suggests
  [[ $(dpkg-deb -f "$deb" Version) == "$version-1" ]] ||
    fail "$name: version $(dpkg-deb -f "$deb" Version), not $version-1 (the project's)"
  dpkg -x "$deb" "$root" || fail "dpkg -x $deb"
  [[ -f $root/usr/share/doc/$name/copyright ]] || fail "$name: no /usr/share/doc/$name/copyright"
  [[ -f $root/usr/share/doc/$name/changelog.Debian.gz ]] ||
    fail "$name: no /usr/share/doc/$name/changelog.Debian.gz"
done

# The linkem package.
has() { dpkg-deb -c "$1" | awk '{print $6}' | grep -qx "./${2#/}"; }
for f in /usr/bin/linkemd /usr/bin/linkem-sim /lib/systemd/system/linkemd.service \
         /etc/linkem/linkemd.json /usr/share/man/man1/linkemd.1.gz \
         /usr/share/man/man1/linkem-sim.1.gz /usr/share/linkem/scenarios/step-response.json \
         /usr/share/linkem/scenarios/train-tunnel.json \
         "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/wireshark/plugins/linkem.lua"; do
  has "$deb_main" "$f" || fail "linkem: $f is missing"
done
[[ $(dpkg-deb -f "$deb_main" Depends) == *librte-eal* ]] ||
  fail "linkem: Depends has no librte-eal (dpkg-shlibdeps did not run?)"
dpkg-deb --ctrl-tarfile "$deb_main" | tar -xO ./conffiles 2>/dev/null | grep -qx /etc/linkem/linkemd.json ||
  fail "linkem: /etc/linkem/linkemd.json is not a conffile"

bin=$root/usr/bin
out=$("$bin/linkemd" --version 2>&1)
if [[ $? -eq 0 && $out == "linkemd $version"* ]]; then ok "unpacked linkemd --version: $out"
else fail "unpacked linkemd --version: '$out'"; fi
out=$("$bin/linkem-sim" --help 2>&1)
if [[ $? -eq 0 && $out == *--mean-delay* ]]; then ok "unpacked linkem-sim --help ($(wc -l <<<"$out") lines)"
else fail "unpacked linkem-sim --help: '$out'"; fi
if has "$deb_main" /usr/bin/linkemctl; then
  has "$deb_main" /usr/share/man/man1/linkemctl.1.gz || fail "linkem: linkemctl.1.gz is missing"
  out=$("$bin/linkemctl" --help 2>&1)
  if [[ $? -eq 0 && -n $out ]]; then ok "unpacked linkemctl --help ($(wc -l <<<"$out") lines)"
  else fail "unpacked linkemctl --help: '$out'"; fi
else
  echo "absent: linkemctl (target not built): not in the linkem package"
fi
# The shipped config: linkemd accepts it as it is (no EAL start).
if out=$("$bin/linkemd" --config "$root/etc/linkem/linkemd.json" --print-config 2>&1); then
  ok "unpacked linkemd accepts /etc/linkem/linkemd.json (--print-config)"
else
  fail "linkemd --config /etc/linkem/linkemd.json --print-config: $out"
fi
for p in linkemd linkem-sim linkemctl; do
  [[ -f $root/usr/share/man/man1/$p.1.gz ]] || continue
  if command -v man >/dev/null; then
    lines=$(MANWIDTH=80 man -l "$root/usr/share/man/man1/$p.1.gz" 2>/dev/null | wc -l)
    ((lines > 10)) && ok "man page $p.1.gz renders ($lines lines)" || fail "man page $p.1.gz: $lines lines"
  fi
done

unit=$root/lib/systemd/system/linkemd.service
grep -q '^ExecStart=/usr/bin/linkemd --config /etc/linkem/linkemd.json$' "$unit" ||
  fail "linkemd.service: ExecStart is not /usr/bin/linkemd --config /etc/linkem/linkemd.json"
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$unit" || fail "linkemd.service: no ExecReload with SIGHUP"
if command -v systemd-analyze >/dev/null; then
  # verify checks that ExecStart's program exists: point it at the unpacked one.
  sed "s|^ExecStart=/usr/bin/linkemd|ExecStart=$bin/linkemd|" "$unit" >"$scratch/linkemd.service"
  if out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$scratch/linkemd.service" 2>&1); then
    ok "systemd-analyze verify linkemd.service${out:+: $out}"
  else
    fail "systemd-analyze verify linkemd.service: $out"
  fi
else
  skipped+=("systemd-analyze (Debian: systemd)")
fi

# The linkem-gui package.
share=$root/usr/share
for f in /usr/share/applications/org.linkem.Gui.desktop /usr/share/metainfo/org.linkem.Gui.metainfo.xml \
         /usr/share/icons/hicolor/scalable/apps/org.linkem.Gui.svg \
         /usr/share/icons/hicolor/48x48/apps/org.linkem.Gui.png /usr/share/linkem/presets.json; do
  has "$deb_gui" "$f" || fail "linkem-gui: $f is missing"
done
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$share/applications/org.linkem.Gui.desktop" &&
    ok "desktop-file-validate (unpacked)" || fail "desktop-file-validate (unpacked)"
else
  skipped+=("desktop-file-validate (Debian: desktop-file-utils)")
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$share/metainfo/org.linkem.Gui.metainfo.xml" &&
    ok "appstreamcli validate --no-net (unpacked)" || fail "appstreamcli validate (unpacked)"
else
  skipped+=("appstreamcli (Debian: appstream)")
fi
if has "$deb_gui" /usr/bin/linkem-gui; then
  has "$deb_gui" /usr/share/man/man1/linkem-gui.1.gz || fail "linkem-gui: linkem-gui.1.gz is missing"
  out=$(QT_QPA_PLATFORM=offscreen timeout 20 "$bin/linkem-gui" --help 2>&1)
  if [[ $? -eq 0 && -n $out ]]; then ok "unpacked linkem-gui --help ($(wc -l <<<"$out") lines)"
  else fail "unpacked linkem-gui --help: '$out'"; fi
else
  echo "absent: linkem-gui (target not built): the linkem-gui package has its desktop files only"
fi

# lintian: no errors. As root it needs --allow-root. Both packages in one run (its start-up
# is most of its time).
if command -v lintian >/dev/null; then
  as_root=()
  [[ $(id -u) -eq 0 ]] && as_root=(--allow-root)
  echo "--- lintian $(basename "$deb_main") $(basename "$deb_gui")"
  t1=$SECONDS
  out=$(lintian "${as_root[@]}" --fail-on error --display-info "$deb_main" "$deb_gui" 2>&1)
  rc=$?
  [[ -n $out ]] && echo "$out"
  if ((rc != 0)) || grep -q '^E: ' <<<"$out"; then
    fail "lintian: errors (exit $rc)"
  else
    ok "lintian: no errors ($(grep -c '^W: ' <<<"$out") warnings; $((SECONDS - t1)) s)"
  fi
else
  skipped+=("lintian (Debian: lintian)")
fi

if ((failed)); then exit 1; fi
if ((${#skipped[@]})); then
  echo "SKIPPED: not installed: ${skipped[*]}"
  exit 77
fi
echo "packages OK: $(basename "$deb_main") $(basename "$deb_gui")"
