#!/usr/bin/env bash
# Runs the race-enabled test suite N times in a row (default 3) while
# stress-ng keeps every core busy, and fails on the first failing run. The
# suite must pass on a machine that is busy with something else: tests wait
# for the state they need, never for a guessed time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
command -v stress-ng >/dev/null || { echo "stress-test: stress-ng is missing: apt-get install stress-ng" >&2; exit 1; }
stress-ng --cpu "$(nproc)" --timeout 0 --quiet &
stress=$!
trap 'kill $stress 2>/dev/null; wait $stress 2>/dev/null || true' EXIT
start=$(date +%s)
for i in $(seq "$runs"); do
  t0=$(date +%s)
  echo "stress-test: run $i of $runs (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  if ! go test -race -count=1 -timeout 30m ./...; then
    echo "stress-test: run $i failed after $(($(date +%s) - t0)) s" >&2
    exit 1
  fi
  echo "stress-test: run $i passed in $(($(date +%s) - t0)) s"
done
echo "stress-test: $runs runs passed under stress-ng --cpu $(nproc) in $(($(date +%s) - start)) s"
