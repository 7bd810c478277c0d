#!/usr/bin/env bash
# Crash test for `serve --index DIR` (issue 13): kill -9 the server at random moments of its
# index build, N times, and check that every restart serves what a clean build serves (the
# same document count), never an empty or partial index.
#
#   scripts/crash_test.sh --corpus PATH [--trials N] [--bin PATH] [--max-delay SECONDS] [--seed S]
#
# Each trial waits until the build has started (its temporary directory `.NAME.building-PID`
# is on disk, polled every 10 ms), then kills within 0..max-delay s. Defaults: 20 trials, the
# debug binary (target/debug/refresher), max-delay the clean build's own time (from its
# temporary directory's appearance to the index in place), delays drawn from an unseeded
# stream (`--seed S` repeats a sequence). A kill has landed mid-build when it leaves the
# temporary directory behind: those kills are counted and reported. Exits non-zero on any
# wrong restart.
set -euo pipefail

corpus="" trials=20 bin="target/debug/refresher" max_delay="" seed=""
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus="$2"; shift 2 ;;
    --trials) trials="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --max-delay) max_delay="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$corpus" ] || { echo "--corpus PATH is required" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin: not an executable (cargo build first)" >&2; exit 2; }
# Assigning RANDOM seeds bash's generator: the same seed, the same delays.
[ -z "$seed" ] || RANDOM=$seed

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

# Whether the build of index directory $1 has its temporary directory on disk now.
building() { compgen -G "$(dirname "$1")/.$(basename "$1").building-*" >/dev/null; }

# Waits (polling every 10 ms, up to 2 min) until server $2's build of index directory $1 has
# started (its temporary directory exists), or is over (the index is in place), or the server
# has exited.
await_build() {
  for _ in $(seq 1 12000); do
    building "$1" && return
    [ -d "$1" ] && return
    kill -0 "$2" 2>/dev/null || return
    sleep 0.01
  done
}

clean=$(serve_count "$work/clean")
case "$clean" in FAIL*) echo "clean build failed: $clean" >&2; exit 1 ;; esac
# A second clean build (caches warm, as for the trials), timed from its temporary directory's
# appearance to the index in place (polled every 10 ms): the window the kills aim at.
"$bin" serve --corpus "$corpus" --index "$work/timed" --addr 127.0.0.1:0 >"$work/timed.log" 2>&1 &
pid=$!
await_build "$work/timed" "$pid"
began=$(date +%s.%N)
for _ in $(seq 1 12000); do
  [ -d "$work/timed" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
build_s=$(awk -v a="$began" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[ -n "$max_delay" ] || max_delay=$build_s
echo "clean build: $clean documents, built in ${build_s}s; killing within 0..${max_delay}s of a build's start"

failures=0 killed_before_ready=0 killed_mid_build=0
for t in $(seq 1 "$trials"); do
  dir="$work/idx-$t"
  delay=$(awk -v m="$max_delay" -v r="$RANDOM" 'BEGIN { printf "%.3f", m * r / 32767 }')
  "$bin" serve --corpus "$corpus" --index "$dir" --addr 127.0.0.1:0 >"$work/killed.log" 2>&1 &
  pid=$!
  await_build "$dir" "$pid"
  sleep "$delay"
  grep -q "^repository:" "$work/killed.log" || killed_before_ready=$((killed_before_ready + 1))
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The build's temporary directory left behind: the kill interrupted the build itself
  # (before it, nothing is on disk; after it, the index has been renamed into place).
  when="before or after the build"
  if building "$dir"; then
    killed_mid_build=$((killed_mid_build + 1))
    when="mid-build"
  fi
  got=$(serve_count "$dir")
  if [ "$got" = "$clean" ]; then
    echo "trial $t: killed ${delay}s into the build ($when), restart serves $got documents: ok"
  else
    echo "trial $t: killed ${delay}s into the build ($when), restart: $got (expected $clean): WRONG"
    failures=$((failures + 1))
  fi
  rm -rf "$dir"
done
echo "$trials trials ($killed_before_ready killed before the index was ready, $killed_mid_build killed mid-build), $failures failures"
[ "$failures" -eq 0 ]
