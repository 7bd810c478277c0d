#!/usr/bin/env bash
# `compare` spread over worker threads and loopback processes gives the one-process JSON
# (every field but timings): every policy family, both modes, BM25 / TF-IDF / in-links, on
# generated collections of 1, 3 and 6 sites and on a collection of two corpora. One line per
# case (its md5s and seconds), then a summary; exits 1 when any case differs.
#
#   scripts/mesh_identity.sh [--bin PATH] [--pages N] [--weeks T] [--budgets LIST] [--out DIR]
#                            [--intervals]
#
# Defaults: target/release/refresher, 2000 pages, 8 weeks, budgets 0,4,16,64,256, without the
# bootstrap intervals (--no-intervals: they rerun every seeded family at 4 seeds, 4× the time;
# `cargo test`'s sim::spread and tests/mesh_processes.rs check them spread).
set -euo pipefail
BIN=target/release/refresher
PAGES=2000
WEEKS=8
BUDGETS=0,4,16,64,256
OUT=$(mktemp -d)
INTERVALS=--no-intervals
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) BIN=$2; shift 2 ;;
        --pages) PAGES=$2; shift 2 ;;
        --weeks) WEEKS=$2; shift 2 ;;
        --budgets) BUDGETS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --intervals) INTERVALS=; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release, or --bin PATH)" >&2; exit 2; }
mkdir -p "$OUT"
FAMILIES=$("$BIN" policies | grep -E '^[a-z]' | awk '{print $1}' | paste -sd, -)

# md5 of the JSON without any "seconds" field.
digest() {
    python3 -c '
import json, hashlib, sys
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
print(hashlib.md5(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True).encode()).hexdigest())' "$1"
}

free_ports() {
    python3 -c '
import socket
ss = [socket.socket() for _ in range(int(__import__("sys").argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print("\n".join("127.0.0.1:%d" % s.getsockname()[1] for s in ss))' "$1"
}

for sites in 1 3 6; do
    [ -d "$OUT/site$sites" ] || "$BIN" generate --out "$OUT/site$sites" --pages "$PAGES" \
        --weeks "$WEEKS" --queries 3000 --sites "$sites" --seed "$sites" >/dev/null
done
failures=0
cases=0
run_case() { # name, then the compare arguments
    local name=$1; shift
    local args=(compare "$@" --mode oracle,online --json --policies "$FAMILIES" --budgets "$BUDGETS" $INTERVALS)
    local t0 t1 base line
    t0=$(date +%s.%N)
    "$BIN" "${args[@]}" > "$OUT/$name.1.json" 2>/dev/null
    t1=$(date +%s.%N)
    base=$(digest "$OUT/$name.1.json")
    line="$name: one process $base ($(printf '%.0f' "$(echo "$t1 - $t0" | bc)") s)"
    for workers in 2 3 4; do
        "$BIN" "${args[@]}" --workers "$workers" > "$OUT/$name.w$workers.json" 2>/dev/null
        d=$(digest "$OUT/$name.w$workers.json")
        line="$line; $workers workers $([ "$d" = "$base" ] && echo same || echo DIFFERENT)"
        [ "$d" = "$base" ] || failures=$((failures + 1))
    done
    free_ports 3 > "$OUT/peers.txt"
    for i in 1 2; do
        "$BIN" "${args[@]}" --processes 3 --process $i --peers "$OUT/peers.txt" >/dev/null 2>&1 &
    done
    "$BIN" "${args[@]}" --processes 3 --process 0 --peers "$OUT/peers.txt" > "$OUT/$name.p3.json" 2>/dev/null
    wait
    d=$(digest "$OUT/$name.p3.json")
    line="$line; 3 processes $([ "$d" = "$base" ] && echo same || echo DIFFERENT)"
    [ "$d" = "$base" ] || failures=$((failures + 1))
    cases=$((cases + 1))
    echo "$line"
}
for scoring in bm25 tfidf inlinks; do
    for sites in 1 3 6; do
        run_case "sites$sites-$scoring" --corpus "$OUT/site$sites/corpus" \
            --log "$OUT/site$sites/querylog/aol-synthetic.txt" --scoring "$scoring"
    done
    run_case "two-collections-$scoring" --corpus "$OUT/site1/corpus" --corpus "$OUT/site3/corpus" \
        --log "$OUT/site1/querylog/aol-synthetic.txt" --scoring "$scoring"
done
echo "$cases cases, 4 spread runs each: $failures differ from the one-process run (outputs in $OUT)"
[ "$failures" -eq 0 ]
