#!/usr/bin/env bash
# Crash test for `crawl --state-dir DIR` (issue 12): kill -9 the crawler at random moments, N
# times, restart it with the same arguments until it finishes, and check that the resumed
# crawl reports, unit for unit, what an uninterrupted crawl reports (the pages refreshed, the
# counts, the judged quality, fresh@10 and MAP@10): the journal replays committed units and
# the crawl goes on from the first unit not committed.
#
#   scripts/crawl_crash_test.sh [--trials N] [--bin PATH] [--pages P] [--weeks W] [--seed S]
#                               [--faults SPEC]...
#
# Defaults: 20 trials, target/debug/refresher, a generated site of 300 pages × 8 weeks served
# by `web-replay --manual-clock` (the crawl advances it; a restarted unit asks for the unit it
# is at, which web-replay accepts), kill delays from an unseeded stream (`--seed S` repeats a
# sequence). A kill that finds units already committed (`state.json` written) and the crawl
# still running has landed mid-crawl: the restart must replay the journal; those are counted
# and reported. `--faults SPEC` (repeatable) is given to web-replay: the faults are drawn per
# (URL, unit, attempt), and a restarted crawl asks web-replay for its unit again, which counts
# the unit's attempts afresh, so the resumed crawl meets the faults the uninterrupted one met
# (the per-unit report compared includes the faults met). Exits non-zero on any difference.
set -euo pipefail

trials=20 bin="target/debug/refresher" pages=300 weeks=8 seed="" faults=()
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --pages) pages="$2"; shift 2 ;;
    --weeks) weeks="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --faults) faults+=(--faults "$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "$bin: not an executable (cargo build first)" >&2; exit 2; }

work=$(mktemp -d)
replay_pid=""
cleanup() { [ -n "$replay_pid" ] && kill "$replay_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$bin" generate --out "$work/site" --pages "$pages" --weeks "$weeks" --queries 3000 >/dev/null
host="wiki.synthetic.example"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts a fresh web-replay (clock at unit 0); sets $port and $replay_pid.
start_replay() {
  [ -n "$replay_pid" ] && { kill "$replay_pid" 2>/dev/null || true; wait "$replay_pid" 2>/dev/null || true; }
  port=$(free_port)
  "$bin" web-replay --corpus "$work/site/corpus" --addr "127.0.0.1:$port" --manual-clock \
    ${faults[@]+"${faults[@]}"} >"$work/replay.out" 2>/dev/null &
  replay_pid=$!
  for _ in $(seq 1 100); do grep -q "replaying on" "$work/replay.out" 2>/dev/null && return; sleep 0.05; done
  echo "web-replay did not start" >&2; exit 1
}

crawl() { # $1 = directory; replaces the (sub)shell it runs in, so `$!` is the crawler's PID
  exec "$bin" crawl --sitemap "https://$host/sitemap.xml" --resolve "$host=127.0.0.1:$port" \
    --advance-clock "http://127.0.0.1:$port/_clock/advance" --min-host-delay-ms 0 \
    --log "$work/site/querylog/aol-synthetic.txt" --policy user-centric --budget 15 \
    --unit-seconds 0.25 --units $((weeks - 1)) --judge-with "$work/site/corpus" \
    --state-dir "$1/index" --warc-out "$1/warc" --json
}

# The per-unit report without wall times, measures to 12 significant digits (the judge's
# parallel sums may differ in the last bit from run to run).
report() { python3 -c '
import json,sys
s=json.load(open(sys.argv[1]))
for u in s["per_unit"]:
    u.pop("seconds",None)
    for k,v in u.items():
        if isinstance(v,float): u[k]=float("%.12g" % v)
print(json.dumps(s["per_unit"],sort_keys=True))' "$1/index/state.json"; }

start_replay
t0=$(date +%s.%N)
(crawl "$work/clean") >/dev/null 2>"$work/clean.err" || { cat "$work/clean.err" >&2; exit 1; }
# Kills fall anywhere in an uninterrupted crawl's own duration.
clean_time=$(python3 -c "print(round($(date +%s.%N) - $t0, 3))")
expected=$(report "$work/clean")

# Every kill delay of the run, drawn up front (seeded when asked): two per trial at most.
delays=($(python3 -c "
import random, sys
r = random.Random(None if '$seed' == '' else int('$seed'))
print(' '.join(str(round(r.uniform(0.05, $clean_time), 3)) for _ in range(2 * $trials)))"))
failures=0 killed=0 killed_mid_crawl=0 next_delay=0
for i in $(seq 1 "$trials"); do
  start_replay
  dir="$work/trial-$i"
  restarts=0
  while true; do
    crawl "$dir" >/dev/null 2>>"$dir.err" &
    pid=$!
    if [ "$restarts" -lt 2 ]; then
      delay=${delays[$next_delay]}
      next_delay=$((next_delay + 1))
      sleep "$delay"
      # Committed units before the kill: the crawl had something to resume from.
      committed=no
      [ -f "$dir/index/state.json" ] && committed=yes
      if kill -9 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null || true
        killed=$((killed + 1)); restarts=$((restarts + 1))
        [ "$committed" = yes ] && killed_mid_crawl=$((killed_mid_crawl + 1))
        continue
      fi
    fi
    if ! wait "$pid"; then
      echo "trial $i: the restarted crawl failed:" >&2; tail -3 "$dir.err" >&2
      restarts=failed
    fi
    break
  done
  if [ "$restarts" == failed ]; then
    failures=$((failures + 1))
  elif [ -f "$dir/index/state.json" ] && [ "$(report "$dir")" == "$expected" ]; then
    echo "trial $i: ok ($restarts kill(s))"
  else
    echo "trial $i: DIFFERENT from the uninterrupted crawl ($restarts kill(s))" >&2
    diff <(echo "$expected" | python3 -m json.tool) <(report "$dir" | python3 -m json.tool) | head -10 >&2 || true
    failures=$((failures + 1))
  fi
done
[ ${#faults[@]} -gt 0 ] && echo "faults met by the uninterrupted crawl: $(python3 -c '
import json,sys
s=json.load(open(sys.argv[1]))
t={}
for u in s["per_unit"]:
    for k,v in u.get("faults",{}).items(): t[k]=t.get(k,0)+v
print(", ".join("%s %d" % kv for kv in sorted(t.items()) if kv[1]) or "none")' "$work/clean/index/state.json")"
echo "crawl crash test: $trials trials, $killed kill -9 ($killed_mid_crawl after a committed unit), $failures failure(s)"
[ "$failures" -eq 0 ]
