#!/bin/bash
# A fuzzing campaign: every target in turn, each until RUNS executions or SECONDS seconds, on one
# core (run two of these with different TARGETS to use two), logs and final statistics in LOGS.
#
# Usage: bash scripts/fuzz_campaign.sh [LOGS] ; TARGETS="decode open_old" RUNS=10000000 SECONDS_EACH=1200
# Needs: cargo install cargo-fuzz --locked; python3 scripts/fuzz_seeds.py (the seed corpora).
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOGS="${1:-$ROOT/fuzz/logs}"
TARGETS="${TARGETS:-decode decode_cdr open_mcap open_old open_rosbag2 open_iterate}"
RUNS="${RUNS:-10000000}"
SECONDS_EACH="${SECONDS_EACH:-1200}"
mkdir -p "$LOGS"
cd "$ROOT/fuzz"
# open_rosbag2 writes its input to files: keep them in memory.
export TMPDIR=/dev/shm RUSTC_BOOTSTRAP=1
for t in $TARGETS; do
  case "$t" in
    decode|decode_cdr) len=4096 ;;
    *) len=16384 ;;
  esac
  mkdir -p "corpus/$t"
  start=$(date +%s)
  nice -n "${NICE:-10}" cargo fuzz run -O "$t" "corpus/$t" -- -runs="$RUNS" -max_total_time="$SECONDS_EACH" \
    -rss_limit_mb=4096 -timeout=30 -detect_leaks=0 -print_final_stats=1 -max_len="$len" \
    > "$LOGS/$t.log" 2>&1
  rc=$?
  echo "$t rc=$rc seconds=$(( $(date +%s) - start )) $(grep -E '^Done' "$LOGS/$t.log")" | tee -a "$LOGS/summary.txt"
done
