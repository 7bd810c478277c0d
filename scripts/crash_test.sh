#!/usr/bin/env bash
# Crash test for `serve --index DIR` (issue 13): kill -9 the server at random moments of its
# index build, N times, and check that every restart serves what a clean build serves (the
# same document count), never an empty or partial index.
#
#   scripts/crash_test.sh --corpus PATH [--trials N] [--bin PATH] [--max-delay SECONDS]
#
# Defaults: 20 trials, the debug binary (target/debug/refresher), kills within 0..max-delay s
# (default: the clean build's own time). Exits non-zero on any wrong restart.
set -euo pipefail

corpus="" trials=20 bin="target/debug/refresher" max_delay=""
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus="$2"; shift 2 ;;
    --trials) trials="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --max-delay) max_delay="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$corpus" ] || { echo "--corpus PATH is required" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin: not an executable (cargo build first)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Starts `serve --index $1` on a free port; prints the served document count once it
# listens (or "FAIL: message" when it exits first), then stops it.
serve_count() {
  local dir=$1 log="$work/serve.log"
  "$bin" serve --corpus "$corpus" --index "$dir" --addr 127.0.0.1:0 >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 1200); do
    if grep -q "listening\|http://" "$log" 2>/dev/null; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local n
  n=$(sed -n 's/^repository: \([0-9]*\) documents.*/\1/p' "$log" | head -1)
  if [ -n "$n" ]; then echo "$n"; else echo "FAIL: $(tail -2 "$log" | tr '\n' ' ')"; fi
}

start=$(date +%s.%N)
clean=$(serve_count "$work/clean")
build_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
case "$clean" in FAIL*) echo "clean build failed: $clean" >&2; exit 1 ;; esac
[ -n "$max_delay" ] || max_delay=$build_s
echo "clean build: $clean documents in ${build_s}s; killing within 0..${max_delay}s"

failures=0 killed_mid_build=0
for t in $(seq 1 "$trials"); do
  dir="$work/idx-$t"
  delay=$(awk -v m="$max_delay" -v r="$RANDOM" 'BEGIN { printf "%.3f", m * r / 32767 }')
  "$bin" serve --corpus "$corpus" --index "$dir" --addr 127.0.0.1:0 >"$work/killed.log" 2>&1 &
  pid=$!
  sleep "$delay"
  grep -q "^repository:" "$work/killed.log" || killed_mid_build=$((killed_mid_build + 1))
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  got=$(serve_count "$dir")
  if [ "$got" = "$clean" ]; then
    echo "trial $t: killed after ${delay}s, restart serves $got documents: ok"
  else
    echo "trial $t: killed after ${delay}s, restart: $got (expected $clean): WRONG"
    failures=$((failures + 1))
  fi
  rm -rf "$dir"
done
echo "$trials trials ($killed_mid_build killed before the index was ready), $failures failures"
[ "$failures" -eq 0 ]
