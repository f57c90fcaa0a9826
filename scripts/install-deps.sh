#!/usr/bin/env bash
# Installs what usid needs on a Debian machine (the engines: fairy-stockfish
# and gpsshogi for shogi, stockfish for chess; othello's is usid's own, in its
# binary), and with --test
# what its tests need too (Debian's chromium, podman and mmdebstrap for the
# image, the npm packages of the web end-to-end tests and of the conformance
# check), only what is missing, so it is cheap to run every time.
set -euo pipefail

tests=""
[ "${1:-}" = "--test" ] && tests=1

need=()
[ -x /usr/games/fairy-stockfish ] || need+=(fairy-stockfish)
[ -x /usr/games/gpsusi ] || need+=(gpsshogi)
[ -x /usr/games/stockfish ] || need+=(stockfish)   # the built-in chess engine (and the chess tests' reference)
if [ -n "$tests" ]; then
  [ -x /usr/bin/chromium ] || need+=(chromium)   # driven by npm playwright-core; never a browser download
  command -v npm >/dev/null || need+=(npm)
  command -v websocketd >/dev/null || need+=(websocketd)   # usid-bench compares usid with it
  command -v haproxy >/dev/null || need+=(haproxy)   # usid-bench's round-robin proxy in front of three usid
  command -v stress-ng >/dev/null || need+=(stress-ng)   # make stress-test loads both cores while the suite runs
  command -v redis-server >/dev/null || need+=(redis-server)   # the evaluation cache's shared tier (tests start their own)
  # make image / image-test: podman with runc (crun fails on these machines'
  # cgroups), its CNI network and iptables for -p, mmdebstrap for the base
  # images, curl and jq for the checks.
  for p in podman runc mmdebstrap curl jq iptables; do command -v $p >/dev/null || need+=($p); done
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
fi

# Another apt (unattended-upgrades on a fresh machine, a second terminal)
# holding its locks is waited for, up to APT_LOCK_WAIT seconds, instead of
# failing at once: apt-get install waits itself (DPkg::Lock::Timeout), but
# apt 2.6's apt-get update does not, so it is retried while the lists' lock
# is held. Measured with the lock held for 8 s (python3 fcntl.lockf): apt-get
# install failed in 0.3 s ("Could not get lock /var/lib/dpkg/lock-frontend"),
# with the timeout it waited and succeeded; apt-get update with the timeout
# still failed in 2.5 s ("Unable to lock directory /var/lib/apt/lists/").
lock_wait=${APT_LOCK_WAIT:-600}
apt_update() {
  local waited=0 out
  until out=$($sudo apt-get -o DPkg::Lock::Timeout="$lock_wait" update -qq 2>&1); do
    if ! grep -q 'Could not get lock' <<<"$out" || [ "$waited" -ge "$lock_wait" ]; then
      echo "$out" >&2
      return 1
    fi
    [ "$waited" -gt 0 ] || echo "install-deps: another apt holds its lock; waiting up to ${lock_wait}s" >&2
    sleep 5
    waited=$((waited + 5))
  done
  [ -z "$out" ] || echo "$out" >&2
}

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: apt-get install ${need[*]}" >&2
  apt_update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout="$lock_wait" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
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
