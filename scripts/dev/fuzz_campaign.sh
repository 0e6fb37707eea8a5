#!/bin/bash
# A fuzzing campaign: every target in turn, each until RUNS executions or SECONDS seconds, on one
# core (run two of these with different TARGETS to use two), logs and final statistics in LOGS.
#
# Usage: bash scripts/dev/fuzz_campaign.sh [LOGS] ; TARGETS="decode open_old" RUNS=10000000 SECONDS_EACH=1200
# Needs: cargo install cargo-fuzz --locked; python3 scripts/data/fuzz_seeds.py (the seed corpora).
#
# SANITIZER (default none): the library has no unsafe code (`#![forbid(unsafe_code)]` in
# src/lib.rs), so AddressSanitizer finds nothing Rust does not already check, and costs 4-6x the
# executions (open_old: 1,515/s with it, 8,841/s without, same corpus). Panics, hangs (-timeout)
# and memory blow-ups (-rss_limit_mb; -malloc_limit_mb needs a sanitizer's malloc hooks) are
# caught either way. SANITIZER=address
# for a run with it (the C decompressors and SQLite are not instrumented by cargo fuzz either way).
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LOGS="${1:-$ROOT/fuzz/logs}"
TARGETS="${TARGETS:-decode decode_cdr parse_idl decode_bz2 open_mcap open_old open_rosbag2 open_iterate}"
RUNS="${RUNS:-10000000}"
SECONDS_EACH="${SECONDS_EACH:-1200}"
mkdir -p "$LOGS"
cd "$ROOT/fuzz"
# open_rosbag2 writes its input to files: keep them in memory.
export TMPDIR=/dev/shm RUSTC_BOOTSTRAP=1
for t in $TARGETS; do
  case "$t" in
    decode|decode_cdr|parse_idl) len=4096 ;;
    decode_bz2) len=262144 ;;
    *) len=16384 ;;
  esac
  mkdir -p "corpus/$t"
  start=$(date +%s)
  nice -n "${NICE:-10}" cargo fuzz run -O -s "${SANITIZER:-none}" "$t" "corpus/$t" -- -runs="$RUNS" -max_total_time="$SECONDS_EACH" \
    -rss_limit_mb=4096 -malloc_limit_mb=2048 -timeout=30 -print_final_stats=1 -max_len="$len" \
    > "$LOGS/$t.log" 2>&1
  rc=$?
  echo "$t rc=$rc seconds=$(( $(date +%s) - start )) $(grep -E '^Done' "$LOGS/$t.log")" | tee -a "$LOGS/summary.txt"
done
