#!/bin/sh
# Writes OUT (a gzipped man page) from PROGRAM --help with help2man. When --help fails the
# page is left out with a warning (install(FILES ... OPTIONAL) then skips it, and
# tests/packaging/debs.sh reports the missing page) rather than failing the build.
#   packaging/man-page.sh HELP2MAN OUT.1.gz VERSION "one-line description" PROGRAM
set -u
help2man=$1 out=$2 version=$3 name=$4 program=$5
page=${out%.gz}
rm -f "$out" "$page"
# Qt programs parse --help after creating their application object: no display needed.
# help2man runs PROGRAM --help (not --version: --version-string); 60 s at most each.
# help2man does not look at the exit status: check --help first.
export QT_QPA_PLATFORM=offscreen
if ! timeout 60 "$program" --help >"$page.log" 2>&1 || ! [ -s "$page.log" ]; then
  echo "warning: no man page for $(basename "$program"): '$program --help' failed or printed nothing:" >&2
  cat "$page.log" >&2
  rm -f "$page.log"
  touch "$out.stamp"
  exit 0
fi
if timeout 60 "$help2man" --no-info --no-discard-stderr \
     --version-string="$version" --name="$name" --output="$page" "$program" 2>"$page.log"; then
  gzip -9nf "$page"
  rm -f "$page.log"
else
  echo "warning: no man page for $(basename "$program"): help2man failed:" >&2
  cat "$page.log" >&2
  rm -f "$page"
fi
# The output's timestamp is what the build checks; keep a stamp either way.
touch "$out.stamp"
