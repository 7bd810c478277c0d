#!/usr/bin/env bash
# Crash test for `crawl --state-dir DIR` (issue 12): kill -9 the crawler at random moments, N
# times, restart it with the same arguments until it finishes, and check that the resumed
# crawl reports, unit for unit, what an uninterrupted crawl reports (the pages refreshed, the
# counts, the judged quality, fresh@10 and MAP@10): the journal replays committed units and
# the crawl goes on from the first unit not committed.
#
#   scripts/crawl_crash_test.sh [--trials N] [--bin PATH] [--pages P] [--weeks W] [--seed S]
#                               [--faults SPEC]... [--sites K] [--processes N]
#
# Defaults: 20 trials, target/debug/refresher, a generated site of 300 pages × 8 weeks served
# by `web-replay --manual-clock` (the crawl advances it; a restarted unit asks for the unit it
# is at, which web-replay accepts), kill delays from an unseeded stream (`--seed S` repeats a
# sequence). A kill that finds units already committed (`state.json` written) and the crawl
# still running has landed mid-crawl: the restart must replay the journal; those are counted
# and reported. `--faults SPEC` (repeatable) is given to web-replay: the faults are drawn per
# (URL, unit, attempt), and a restarted crawl asks web-replay for its unit again, which counts
# the unit's attempts afresh, so the resumed crawl meets the faults the uninterrupted one met
# (the per-unit report compared includes the faults met). `--sites K` generates K hosts
# (`siteI.example`, a sitemap index on web-replay's own address). `--processes N` runs every
# crawl as N processes on loopback (`--processes N --process I --peers FILE`, the page fetches
# spread by host; fresh ports at each start): each kill hits one of them, drawn from the same
# stream, the others must then exit on their own (they find the peer lost), and all N are
# restarted. Exits non-zero on any difference.
set -euo pipefail

trials=20 bin="target/debug/refresher" pages=300 weeks=8 seed="" faults=() sites=1 processes=1
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --pages) pages="$2"; shift 2 ;;
    --weeks) weeks="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --faults) faults+=(--faults "$2"); shift 2 ;;
    --sites) sites="$2"; shift 2 ;;
    --processes) processes="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "$bin: not an executable (cargo build first)" >&2; exit 2; }

work=$(mktemp -d)
replay_pid=""
cleanup() { [ -n "$replay_pid" ] && kill "$replay_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Units of 0.25 s; 0.5 s over several processes, whose exchanges add to each unit, so that a
# loaded machine still finishes every unit's fetches before its deadline (a deadline cuts runs
# differently).
unit_seconds=0.25
[ "$processes" -gt 1 ] && unit_seconds=0.5
site_flags=()
[ "$sites" -gt 1 ] && site_flags=(--sites "$sites")
"$bin" generate --out "$work/site" --pages "$pages" --weeks "$weeks" --queries 3000 \
  ${site_flags[@]+"${site_flags[@]}"} >/dev/null
if [ "$sites" -gt 1 ]; then hosts=$(seq -f "site%g.example" 1 "$sites"); else hosts="wiki.synthetic.example"; fi

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

crawl() { # $1 = directory, then mesh flags; replaces the (sub)shell it runs in, so `$!` is the crawler's PID
  local dir=$1 resolve=() sitemap
  shift
  for h in $hosts; do resolve+=(--resolve "$h=127.0.0.1:$port"); done
  if [ "$sites" -gt 1 ]; then sitemap="http://127.0.0.1:$port/sitemap.xml"; else sitemap="https://$hosts/sitemap.xml"; fi
  exec "$bin" crawl --sitemap "$sitemap" "${resolve[@]}" "$@" \
    --advance-clock "http://127.0.0.1:$port/_clock/advance" --min-host-delay-ms 0 \
    --log "$work/site/querylog/aol-synthetic.txt" --policy user-centric --budget 15 \
    --unit-seconds "$unit_seconds" --units $((weeks - 1)) --judge-with "$work/site/corpus" \
    --state-dir "$dir/index" --warc-out "$dir/warc" --json
}

# Starts the crawl of directory $1 as $processes processes (fresh loopback ports in the host
# file); sets $pids, process 0's PID first.
start_crawl() {
  pids=()
  if [ "$processes" -eq 1 ]; then
    (crawl "$1") >/dev/null 2>>"$1.err" &
    pids=($!)
    return
  fi
  python3 -c "
import socket
ss = [socket.socket() for _ in range($processes)]
for s in ss: s.bind(('127.0.0.1', 0))
print('\n'.join('127.0.0.1:%d' % s.getsockname()[1] for s in ss))" >"$work/peers.txt"
  local mesh=(--processes "$processes" --peers "$work/peers.txt" --connect-timeout 10)
  (crawl "$1" "${mesh[@]}" --process 0) >/dev/null 2>>"$1.err" &
  pids=($!)
  local process
  for process in $(seq 1 $((processes - 1))); do
    (crawl "$1" "${mesh[@]}" --process "$process") >/dev/null 2>>"$1.err-$process" &
    pids+=($!)
  done
}

# Waits for every process of the crawl; fails unless process 0 succeeded.
finish_crawl() {
  local ok=0 p
  wait "${pids[0]}" || ok=1
  for p in "${pids[@]:1}"; do wait "$p" 2>/dev/null || true; done
  return $ok
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
start_crawl "$work/clean"
finish_crawl || { cat "$work/clean.err" >&2; exit 1; }
# Kills fall anywhere in an uninterrupted crawl's own duration.
clean_time=$(python3 -c "print(round($(date +%s.%N) - $t0, 3))")
expected=$(report "$work/clean")

# Every kill delay of the run, drawn up front (seeded when asked): two per trial at most.
delays=($(python3 -c "
import random, sys
r = random.Random(None if '$seed' == '' else int('$seed'))
print(' '.join(str(round(r.uniform(0.05, $clean_time), 3)) for _ in range(2 * $trials)))"))
# Which process each kill hits (always 0 for one process).
victims=($(python3 -c "
import random
r = random.Random(None if '$seed' == '' else int('$seed') + 1)
print(' '.join(str(r.randrange($processes)) for _ in range(2 * $trials)))"))
failures=0 killed=0 killed_mid_crawl=0 next_delay=0
for i in $(seq 1 "$trials"); do
  start_replay
  dir="$work/trial-$i"
  restarts=0 hit=""
  while true; do
    start_crawl "$dir"
    if [ "$restarts" -lt 2 ]; then
      delay=${delays[$next_delay]}
      victim_index=${victims[$next_delay]}
      victim=${pids[$victim_index]}
      next_delay=$((next_delay + 1))
      sleep "$delay"
      # Committed units before the kill: the crawl had something to resume from.
      committed=no
      [ -f "$dir/index/state.json" ] && committed=yes
      if kill -9 "$victim" 2>/dev/null; then
        # The other processes find the peer lost and exit by themselves.
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
        killed=$((killed + 1)); restarts=$((restarts + 1)); hit+=" $victim_index"
        [ "$committed" = yes ] && killed_mid_crawl=$((killed_mid_crawl + 1))
        continue
      fi
    fi
    if ! finish_crawl; then
      echo "trial $i: the restarted crawl failed:" >&2; tail -3 "$dir.err" >&2
      restarts=failed
    fi
    break
  done
  if [ "$restarts" == failed ]; then
    failures=$((failures + 1))
  elif [ -f "$dir/index/state.json" ] && [ "$(report "$dir")" == "$expected" ]; then
    if [ "$processes" -gt 1 ]; then
      echo "trial $i: ok ($restarts kill(s), of process(es)$hit)"
    else
      echo "trial $i: ok ($restarts kill(s))"
    fi
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
