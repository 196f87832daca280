#!/usr/bin/env bash
# The fuzzers (tests/fuzz/, docs/reliability.md "Fuzzers"): builds the libFuzzer targets
# with clang under ASan + UBSan in a build directory of their own (-DLINKEM_FUZZ=ON: only the
# model, capture and protocol libraries and the targets), folds the seed inputs
# (tests/fuzz/seed_corpus.py) into tests/fuzz/corpus/<target>/, runs each target for M
# minutes on its corpus and regressions (one process, no -jobs/-workers), keeps what it finds
# new in the corpus, minimises it (-merge=1, by edges), and prints per target the executions,
# the time and the findings. A finding (crash, failed invariant, leak, time-out, out of
# memory) is left in DIR/fuzz-artifacts/<target>/ with libFuzzer's report in
# DIR/fuzz-logs/<target>.log; keep it under tests/fuzz/regressions/<target>/ once fixed.
#   scripts/fuzz.sh [--minutes M] [--target NAME] [--build-dir DIR] [--no-build]
#     --minutes M     per target (default 5; a fraction is allowed: 0.5)
#     --target NAME   one target: config scenario_json scenario_csv trace request units
#                     classes match_text capture (default: each in turn)
#     --build-dir D   default build-fuzz; CXX (default clang++-14) is its compiler
#     --no-build      use the build directory as it is
# Exit status: 0 no findings, 1 findings, 2 bad usage or build.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
minutes=5
build=build-fuzz
do_build=1
all=(config scenario_json scenario_csv trace request units classes match_text capture)
targets=("${all[@]}")
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    --minutes) minutes=${2:?--minutes needs a number}; shift ;;
    --target)
      t=${2:?--target needs a name}; shift
      [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target '$t'; targets: ${all[*]}" >&2; exit 2; }
      targets=("$t") ;;
    --build-dir) build=${2:?--build-dir needs a directory}; shift ;;
    --no-build) do_build=0 ;;
    -h|--help) usage ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "fuzz.sh: --minutes '$minutes': expected a number of minutes" >&2; exit 2; }
seconds=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60 + 0.5); print s < 1 ? 1 : s }')

if ((do_build)); then
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${CXX:-clang++-14}" -DLINKEM_FUZZ=ON \
      -DLINKEM_WITH_DPDK=OFF -DLINKEM_WITH_GUI=OFF >/dev/null || exit 2
  fi
  cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" || exit 2
fi
seeds=$build/fuzz-seeds
rm -rf "$seeds"
python3 tests/fuzz/seed_corpus.py "$repo" "$seeds"
mkdir -p "$build/fuzz-logs"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

found=0
summary=()
for t in "${targets[@]}"; do
  bin=$build/tests/fuzz/fuzz_$t
  corpus=tests/fuzz/corpus/$t
  artifacts=$build/fuzz-artifacts/$t
  log=$build/fuzz-logs/$t.log
  mkdir -p "$corpus" "$artifacts" "tests/fuzz/regressions/$t"
  # The seeds that add coverage join the corpus.
  "$bin" -merge=1 "$corpus" "$seeds/$t" >"$log.merge" 2>&1 || true
  files() { find "$artifacts" -maxdepth 1 -type f | wc -l; }
  before=$(files)
  echo "fuzz.sh: $t: ${seconds} s on $(ls "$corpus" | wc -l) inputs"
  : >"$log"
  rc=0 left=$seconds execs=0 secs=0
  while ((left > 0)); do
    t0=$(date +%s)
    rc=0
    "$bin" -max_total_time="$left" -max_len=4096 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "tests/fuzz/regressions/$t" >"$log.part" 2>&1 || rc=$?
    cat "$log.part" >>"$log"
    e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.part" | tail -1)
    execs=$((execs + ${e:-0}))
    used=$(($(date +%s) - t0))
    secs=$((secs + used))
    left=$((left - used))
    # A time-out whose input now runs in under 2 s (a fifth of -timeout) was the process
    # starved of CPU (a busy machine, nice 19), not a slow input: set aside, fuzzing goes on.
    if ((rc != 0)) && grep -q 'libFuzzer: timeout' "$log.part"; then
      a=$(ls -t "$artifacts"/timeout-* 2>/dev/null | head -1)
      if [[ -n $a ]] && timeout 2 "$bin" "$a" >/dev/null 2>&1; then
        mkdir -p "$artifacts/unreproduced"
        mv "$a" "$artifacts/unreproduced/"
        echo "fuzz.sh: $t: a time-out that does not reproduce (the input runs in under 2 s now: the process was starved of CPU), set aside in $artifacts/unreproduced/; going on"
        rc=0
        continue
      fi
    fi
    break
  done
  rm -f "$log.part"
  # Minimise: only the inputs that reach edges no other does (-use_counters=0: not every
  # count of a loop's iterations, which keeps a few hundred inputs a target, not thousands).
  tmp=$(mktemp -d)
  "$bin" -merge=1 -use_counters=0 "$tmp" "$corpus" >>"$log.merge" 2>&1 && { rm -f "$corpus"/*; cp "$tmp"/* "$corpus"/ 2>/dev/null || true; }
  rm -rf "$tmp"
  new=$(($(files) - before))
  if ((rc != 0 || new > 0)); then
    found=1
    what="FINDING (exit $rc): $(grep -m1 -E 'ERROR: |invariant does not hold|runtime error' "$log" || echo 'see log') -> $artifacts/ , $log"
  else
    what="no findings"
  fi
  line=$(printf '%-14s %8s execs %6s s  corpus %4s  %s' "$t" "${execs:-?}" "${secs:-?}" "$(ls "$corpus" | wc -l)" "$what")
  echo "fuzz.sh: $line"
  summary+=("$line")
done
echo "fuzz.sh: summary ($(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), ${seconds} s per target)"
printf '  %s\n' "${summary[@]}"
exit $found
