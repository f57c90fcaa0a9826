#!/usr/bin/env bash
# Runs every fuzz target of the module briefly (FUZZTIME each, default 10s).
# `go test -fuzz` accepts one target per package per run, hence the loop.
#
# Go 1.26's fuzz coordinator can end a run that found nothing with a bare
# "context deadline exceeded" at the -fuzztime boundary (go.dev/issue/75804,
# fixed in Go 1.27). Such a run wrote no failing input; it is reported and
# not counted as a failure. Any run that writes a reproducer under
# testdata/fuzz/ fails, as does every other error.
set -uo pipefail
fuzztime="${FUZZTIME:-10s}"
status=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz: $pkg $target ($fuzztime)"
    corpus="$dir/testdata/fuzz/$target"
    before=$(ls "$corpus" 2>/dev/null | sort)
    out=$(mktemp)
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    after=$(ls "$corpus" 2>/dev/null | sort)
    if [ "$rc" -ne 0 ]; then
      if [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$out" && ! grep -q 'Failing input written' "$out"; then
        echo "fuzz: $target: Go's fuzztime shutdown race (go.dev/issue/75804), no failing input: not a failure"
      else
        status=1
      fi
    fi
    rm -f "$out"
  done
done
exit $status
