#!/usr/bin/env bash
# Installs what usid needs on a Debian machine (the engines), and with --test
# what its tests need too (Debian's chromium, podman and mmdebstrap for the
# image, the npm packages of the web end-to-end tests and of the conformance
# check), only what is missing, so it is cheap to run every time.
set -euo pipefail

tests=""
[ "${1:-}" = "--test" ] && tests=1

need=()
[ -x /usr/games/fairy-stockfish ] || need+=(fairy-stockfish)
[ -x /usr/games/gpsusi ] || need+=(gpsshogi)
if [ -n "$tests" ]; then
  [ -x /usr/bin/chromium ] || need+=(chromium)   # driven by npm playwright-core; never a browser download
  command -v npm >/dev/null || need+=(npm)
  command -v websocketd >/dev/null || need+=(websocketd)   # usid-bench compares usid with it
  command -v stress-ng >/dev/null || need+=(stress-ng)   # make stress-test loads both cores while the suite runs
  command -v redis-server >/dev/null || need+=(redis-server)   # the evaluation cache's shared tier (tests start their own)
  [ -x /usr/games/stockfish ] || need+=(stockfish)   # the chess perft benchmark's reference (BenchmarkPerft5VsStockfish)
  # make image / image-test: podman with runc (crun fails on these machines'
  # cgroups), its CNI network and iptables for -p, mmdebstrap for the base
  # images, curl and jq for the checks.
  for p in podman runc mmdebstrap curl jq iptables; do command -v $p >/dev/null || need+=($p); done
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
fi

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: apt-get install ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

go mod download
if [ -n "$tests" ]; then
  # The deploy tests render the manifests with kubectl kustomize, or a
  # standalone kustomize where kubectl is missing.
  if ! command -v kubectl >/dev/null && ! command -v kustomize >/dev/null && [ ! -x "$(go env GOPATH)/bin/kustomize" ]; then
    go install sigs.k8s.io/kustomize/kustomize/v5@v5.5.0
  fi
  # make check keeps THIRD_PARTY.md in step with the binary's Go modules.
  [ -x "$(go env GOPATH)/bin/go-licenses" ] || go install github.com/google/go-licenses@v1.6.0
  cd "$(dirname "$0")/.."
  [ -d web/e2e/node_modules/playwright-core ] && [ -d web/e2e/node_modules/axe-core ] || (cd web/e2e && npm ci --no-audit --no-fund --loglevel=error)
  # The conformance check's validating proxy (Stoplight Prism).
  [ -x conformance/node_modules/.bin/prism ] || (cd conformance && npm ci --no-audit --no-fund --loglevel=error)
fi
