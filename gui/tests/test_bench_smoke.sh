#!/usr/bin/env bash
# linkem-gui-bench against linkemd --demo (scripts/bench-gui.sh), briefly: it prints each of
# its figures, and it matches the messages the client thread received to the charts' intake
# (a bench that timed another message than the one drawn would leave its receipts unmatched).
# Never fails on a timing.
#   test_bench_smoke.sh BUILD_DIR
set -euo pipefail
build=$1
script="$(dirname "$0")/../../scripts/bench-gui.sh"
if ! out=$(QT_QPA_PLATFORM=offscreen "$script" --build "$build" --seconds 3 --prefill 5 2>&1); then
  echo "$out"
  echo "test_bench_smoke: bench-gui.sh failed" >&2
  exit 1
fi
echo "$out"
for want in "UI thread CPU:" "drawing latency (" "from the client thread's receipt" \
  "its timeline" "memory: VmHWM"; do
  grep -qF "$want" <<<"$out" || { echo "test_bench_smoke: no line with '$want'" >&2; exit 1; }
done
taken=$(sed -n 's/.* of \([0-9]*\) over 50 ms; longest UI thread stall.*/\1/p' <<<"$out")
unmatched=$(sed -n 's/.*(\([0-9]*\) receipts not matched).*/\1/p' <<<"$out")
[[ -n $taken && $taken -ge 30 ]] || { echo "test_bench_smoke: '$taken' messages drawn in 3 s, expected >= 30" >&2; exit 1; }
# the receipts still unmatched at the end are the messages not yet taken in
[[ -n $unmatched && $unmatched -le 30 ]] || { echo "test_bench_smoke: '$unmatched' receipts not matched, allowed 0 .. 30" >&2; exit 1; }
echo "test_bench_smoke: $taken messages timed, $unmatched receipts not matched"
