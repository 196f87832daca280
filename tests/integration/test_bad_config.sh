#!/usr/bin/env bash
# Bad flags and config files are rejected before anything starts: exit code 2 and a
# message on stderr naming the field. Needs no root: every case uses --print-config, which
# prints the effective config and exits without starting EAL when the input is valid.
# Usage: test_bad_config.sh LINKEMD
set -u
TEST_NAME=bad_config
LINKEMD=${1:-}
log() { printf '[%s] %s\n' "$TEST_NAME" "$*"; }
[[ -n "$LINKEMD" && -x "$LINKEMD" ]] || { log "SKIP: linkemd binary not found ('$LINKEMD')"; exit 77; }
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/linkem-badcfg.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILS=0
PORTS=(--port-a net_null0 --port-b net_null1)

# expect_reject PATTERN ARGS...: linkemd ARGS must exit 2 and stderr must match PATTERN
# (extended regex, case-insensitive) naming the field.
expect_reject() {
    local pat=$1; shift
    local rc
    timeout 20 "$LINKEMD" "${PORTS[@]}" --print-config "$@" >"$WORK/out" 2>"$WORK/err"
    rc=$?
    local msg
    msg=$(tr '\n' ' ' <"$WORK/err" | cut -c1-200)
    if [[ $rc -ne 2 ]]; then
        log "FAIL: '$*' -> exit $rc (expected 2); stderr: $msg"; FAILS=$((FAILS + 1))
    elif ! grep -qiE -- "$pat" "$WORK/err"; then
        log "FAIL: '$*' -> exit 2 but stderr does not name the field /$pat/: $msg"; FAILS=$((FAILS + 1))
    elif grep -qE 'terminate called|Aborted|Segmentation' "$WORK/err"; then
        log "FAIL: '$*' -> crashed: $msg"; FAILS=$((FAILS + 1))
    else
        log "ok: '$*' -> exit 2: $msg"
    fi
}

# expect_config JSON_EXPR ARGS...: linkemd ARGS --print-config exits 0 and JSON_EXPR (Python,
# the printed document is `j`) is true.
expect_config() {
    local expr=$1; shift
    local rc
    timeout 20 "$LINKEMD" "${PORTS[@]}" --print-config "$@" >"$WORK/out" 2>"$WORK/err"
    rc=$?
    if [[ $rc -ne 0 ]]; then
        log "FAIL: '$*' -> exit $rc (expected 0): $(tr '\n' ' ' <"$WORK/err" | cut -c1-200)"
        FAILS=$((FAILS + 1)); return
    fi
    if $PY -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
        "$WORK/out" "$expr" 2>"$WORK/pyerr"; then
        log "ok: '$*' -> $expr"
    else
        log "FAIL: '$*' printed config fails: $expr ($(head -c 300 "$WORK/pyerr"))"
        log "      printed: $(head -c 400 "$WORK/out")"
        FAILS=$((FAILS + 1))
    fi
}

# Valid input is accepted (so the rejections below are about the values, not the harness).
expect_config 'j["a_to_b"]["mean_delay_us"] == 10000 and j["b_to_a"]["mean_delay_us"] == 10000' \
    --mean-delay 10ms
expect_config 'j["a_to_b"]["mean_delay_us"] == 5000 and j["b_to_a"]["mean_delay_us"] == 20000' \
    --a-to-b-mean-delay 5ms --b-to-a-mean-delay 20ms
cat >"$WORK/good.json" <<'J'
{"a_to_b": {"mean_delay_us": 2500, "jitter_us": 500, "strategy": "reordered"},
 "b_to_a": {"limiter": "spacer", "rate_bps": 1e8}}
J
expect_config 'j["a_to_b"]["jitter_us"] == 500 and j["a_to_b"]["strategy"] == "reordered" and j["b_to_a"]["rate_bps"] == 1e8' \
    --config "$WORK/good.json"
expect_config 'j["a_to_b"]["jitter_us"] == 700 and j["a_to_b"]["mean_delay_us"] == 2500' \
    --config "$WORK/good.json" --jitter 0.7ms

# Flags.
expect_reject 'mean[-_]delay' --mean-delay -3ms
expect_reject 'jitter' --jitter 20s
expect_reject 'strategy' --strategy sideways
expect_reject 'burst' --burst 0
expect_reject 'burst' --burst 513
expect_reject 'loss[-_]probability' --loss-probability 1.5
expect_reject 'rate' --rate fast
expect_reject 'lcores' --lcores 7
expect_reject 'workers' --workers 0
expect_reject 'workers' --workers many
expect_reject 'b[-_]to[-_]a.*jitter|jitter.*b[-_]to[-_]a' --b-to-a-jitter 20s
expect_reject 'frobnicate' --frobnicate 3

# Single-port mode has no b_to_a direction.
PORTS=(--port-a net_null0)
expect_reject 'port[-_ ]b' --b-to-a-mean-delay 5ms
PORTS=(--port-a net_null0 --port-b net_null1)

# Config files.
echo '{"a_to_b": {"mean_delay_us": 1000, "colour": "blue"}}' >"$WORK/unknown.json"
expect_reject 'colour' --config "$WORK/unknown.json"
echo '{"a_to_b": {}, "warp_factor": 9}' >"$WORK/unknown-top.json"
expect_reject 'warp_factor' --config "$WORK/unknown-top.json"
echo '{"a_to_b": {"jitter_us": "x"}}' >"$WORK/jitter-x.json"
expect_reject 'jitter_us' --config "$WORK/jitter-x.json"
echo '{"b_to_a": {"mean_delay_us": -3000}}' >"$WORK/negative.json"
expect_reject 'mean_delay_us' --config "$WORK/negative.json"
echo '{"a_to_b": {"mean_delay_us": 1000' >"$WORK/truncated.json"
expect_reject 'json|parse|syntax' --config "$WORK/truncated.json"
expect_reject 'config|no such file|not found|cannot' --config "$WORK/does-not-exist.json"

if (( FAILS > 0 )); then log "FAIL: $FAILS case(s) failed"; exit 1; fi
log "PASS"
