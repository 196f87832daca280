#!/usr/bin/env bash
# Runs the whole test suite (ctest -V) again and again beside a CPU hog, the way the suite is
# asked to hold up on a busy machine: every run must pass, and a timing bound that its own
# stall and scheduler figures call disturbed skips itself, saying why. Prints a line per run
# (exit code, time, load, tests, timing bounds checked and skipped, what failed) and a total;
# each run's whole output stays in OUT-DIR/runN.log. Exit 0 when every run passed.
#   scripts/loaded-tests.sh [--build-dir DIR] [--runs N] [--jobs LIST] [--out DIR] [--no-hog]
# --build-dir DIR: a configured and built tree (default build-tests, as scripts/run-tests.sh
#   leaves it); --runs N: how many runs (default 20); --jobs LIST: ctest -j per run, taken in
#   turn (default 1,2: serial and -j2 alternated); --out DIR: the logs (default a new
#   directory under /tmp); --no-hog: no CPU hog (the hog is stress-ng --cpu 1 when
#   installed, else a busy shell loop on one CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-tests runs=20 jobs_list=1,2 out= hog=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=${2:?--build-dir needs a directory}; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs_list=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-hog) hog=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "loaded-tests.sh: unknown option '$1'; allowed: --build-dir DIR, --runs N, --jobs LIST, --out DIR, --no-hog" >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "loaded-tests.sh: --runs '$runs' is not a positive integer" >&2; exit 2; }
[[ $jobs_list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
  { echo "loaded-tests.sh: --jobs '$jobs_list' is not a comma-separated list of positive integers (e.g. 1,2)" >&2; exit 2; }
[[ -f $build/CTestTestfile.cmake ]] ||
  { echo "loaded-tests.sh: --build-dir '$build' holds no built test tree (run scripts/run-tests.sh first)" >&2; exit 2; }
IFS=, read -r -a jobs <<<"$jobs_list"
out=${out:-$(mktemp -d /tmp/linkem-loaded.XXXXXX)}
mkdir -p "$out"

hog_pid=
stop_hog() { [[ -n $hog_pid ]] && kill -- "-$hog_pid" 2>/dev/null; hog_pid=; }
trap stop_hog EXIT
trap 'stop_hog; exit 130' INT TERM
if [[ $hog == 1 ]]; then
  if command -v stress-ng >/dev/null; then
    setsid stress-ng --cpu 1 --quiet >/dev/null 2>&1 &
    what="stress-ng --cpu 1"
  else
    setsid bash -c 'while :; do :; done' &
    what="a busy shell loop"
  fi
  hog_pid=$!
  echo "hog: $what (pid $hog_pid)"
fi
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo ?); $(nproc) CPUs; logs in $out"

passed=0 checked_total=0 skipped_total=0
for ((i = 1; i <= runs; i++)); do
  j=${jobs[$(((i - 1) % ${#jobs[@]}))]}
  log=$out/run$i.log
  start=$(date -u +%H:%M:%S) t0=$(date +%s)
  rc=0
  ctest --test-dir "$build" -V -j"$j" --timeout 900 >"$log" 2>&1 || rc=$?
  secs=$(($(date +%s) - t0))
  tests=$(grep -E "tests passed, [0-9]+ tests failed" "$log" | tail -n1 || true)
  checked=$(grep -v "Test command:" "$log" | grep -c "timing bound: checked" || true)
  skipped=$(grep -v "Test command:" "$log" | grep -c "timing bound: skipped" || true)
  failed=$(grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Not Run|Subprocess)" "$log" | sed 's/^[[:space:]]*//' | paste -sd ';' - || true)
  ((rc == 0)) && passed=$((passed + 1))
  checked_total=$((checked_total + checked)) skipped_total=$((skipped_total + skipped))
  printf 'run %d/%d -j%d %s UTC: rc %d in %d s, load %s | %s | timing bounds checked %d, skipped %d%s\n' \
    "$i" "$runs" "$j" "$start" "$rc" "$secs" "$(cut -d' ' -f1-3 /proc/loadavg)" "${tests:-no ctest summary}" \
    "$checked" "$skipped" "${failed:+ | failed: $failed}"
done
echo "loaded-tests: $passed of $runs runs passed; timing bounds checked $checked_total, skipped $skipped_total (each skip's reason: grep 'timing bound: skipped' $out/run*.log)"
((passed == runs))
