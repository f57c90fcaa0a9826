#!/usr/bin/env bash
# Runs every fuzz target of the module briefly (FUZZTIME each, default 20s).
# `go test -fuzz` accepts one target per package per run, hence the loop.
set -euo pipefail
fuzztime="${FUZZTIME:-20s}"
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
