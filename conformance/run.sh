#!/usr/bin/env bash
# The conformance check (check.mjs says what it checks): starts bin/usid on
# a free loopback port with its built-in configuration (the engines Debian
# installs), server.hosts and one API key, puts Stoplight Prism's validating proxy in front
# of it, drives every operation of openapi.yaml through the proxy, and fails
# on any violation. The check drains usid at the end; this script makes sure
# usid and Prism are gone either way.
#
#   make conformance        # builds bin/usid first
#   conformance/run.sh      # with bin/usid already built
#
# Needs: node >= 20 with npm, the engines of usid.yaml.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$here"
[ -x "$root/bin/usid" ] || { echo "conformance: $root/bin/usid is missing: make build" >&2; exit 1; }
[ -x node_modules/.bin/prism ] || npm ci --no-audit --no-fund --loglevel=error

tmp=$(mktemp -d)
usid="" prism=""
stop() { # pid: TERM, up to 10 s of grace, then KILL
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  status=$?
  stop "$prism"
  stop "$usid"
  if [ "$status" -ne 0 ]; then
    for f in usid prism; do
      [ -s "$tmp/$f.log" ] && { echo "--- $f log (last 30 lines) ---" >&2; tail -n 30 "$tmp/$f.log" >&2; }
    done
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

# A free loopback port: bind port 0, read what the kernel gave, let it go.
freeport() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
waitfor() { # url pid what
  for _ in $(seq 600); do # up to 60 s
    kill -0 "$2" 2>/dev/null || { echo "conformance: $3 exited before it was ready" >&2; exit 1; }
    node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$1" && return 0
    sleep 0.1
  done
  echo "conformance: $3 was not ready within 60 s" >&2
  exit 1
}

key=$(node -e 'console.log(require("crypto").randomBytes(18).toString("base64url"))')
uport=$(freeport)
# The built-in configuration, with the one name pages use for the service
# (server.hosts): a request for another Host gets 421.
# A flood guard for keyed clients that, once check.mjs has spent it, gives
# no token back within the run (one per 1000 s), so that the 429 cases hold
# on a machine of any speed (the default, 100 a second, refills one in 10 ms).
printf 'server:\n  hosts: [usid.example]\naccess:\n  keyed: {rate: 0.001, burst: 20}\n' >"$tmp/usid.yaml"
USID_API_KEYS="conformance:$key" "$root/bin/usid" --addr "127.0.0.1:$uport" --config "$tmp/usid.yaml" >"$tmp/usid.log" 2>&1 &
usid=$!
waitfor "http://127.0.0.1:$uport/readyz" "$usid" usid

pport=$(freeport)
node_modules/.bin/prism proxy "$root/openapi.yaml" "http://127.0.0.1:$uport" --host 127.0.0.1 --port "$pport" >"$tmp/prism.log" 2>&1 &
prism=$!
waitfor "http://127.0.0.1:$pport/healthz" "$prism" prism

node --experimental-websocket --no-warnings check.mjs "http://127.0.0.1:$pport" "http://127.0.0.1:$uport" "$usid" "$key"
# check.mjs drained usid: it must have stopped on its own, cleanly.
for _ in $(seq 150); do kill -0 "$usid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$usid" 2>/dev/null; then echo "conformance: usid still runs 15 s after SIGTERM" >&2; exit 1; fi
wait "$usid" || { echo "conformance: usid exited with status $? after the drain" >&2; exit 1; }
usid=""
