#!/usr/bin/env bash
# Long fuzz run (issue 13): every target of tests/fuzz.rs with N inputs (default 10^6), in
# the test profile. Prints per-target inputs and the result; a failure prints the minimal input
# proptest shrank it to and records its seed in tests/fuzz.proptest-regressions.
#
#   scripts/fuzz_long.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-1000000}"
for target in warc_reader_random_bytes warc_reader_structured http_payload_decoding \
              every_log_layout aol_per_user_archives search_queries api_requests; do
  start=$(date +%s)
  if PROPTEST_CASES="$cases" cargo test --test fuzz -- --exact "$target" --test-threads 1 >/tmp/fuzz-$target.log 2>&1; then
    echo "$target: $cases inputs, 0 panics ($(( $(date +%s) - start )) s)"
  else
    echo "$target: FAILED after $(( $(date +%s) - start )) s; see /tmp/fuzz-$target.log"
    grep -A3 "minimal failing input" /tmp/fuzz-$target.log || true
  fi
done
