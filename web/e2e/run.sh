#!/usr/bin/env bash
# Runs the web end-to-end tests against a real usid with real engines:
# builds usid, starts it on a free loopback port with testdata/usid.yaml (the
# built-in configuration with lower caps; or $USID_CONFIG, laid over the
# built-in one likewise), waits for /readyz, runs the tests with Debian's
# chromium, and stops usid again. With USID_URL already set it only runs the
# tests against that server.
#
#   web/e2e/run.sh                 # from anywhere
#   USID_URL=http://127.0.0.1:8080 web/e2e/run.sh
#
# Needs: Go, node >= 20 with npm, /usr/bin/chromium (apt-get install -y chromium),
# the engines usid.yaml names, redis-server (pods.test.mjs). Screenshots land in web/e2e/screenshots/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export PATH="/usr/local/go/bin:$PATH"

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "run.sh: ${CHROMIUM:-/usr/bin/chromium} is missing: apt-get install -y chromium" >&2
  exit 1
fi

cd "$here"
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

tmp=$(mktemp -d)
pid=""
cleanup() {
  status=$?
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    # Give usid its graceful shutdown, then make sure it is gone.
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -s "$tmp/usid.log" ]; then
    echo "--- usid log (last 40 lines) ---" >&2
    tail -n 40 "$tmp/usid.log" >&2
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

if [ -z "${USID_URL:-}" ]; then
  config=${USID_CONFIG:-$here/testdata/usid.yaml}
  # The tests check that choices beyond these lowered caps are not offered.
  [ -n "${USID_CONFIG:-}" ] || export USID_E2E_LOWER_CAPS=1
  (cd "$root" && go build -o "$tmp/usid" ./cmd/usid)
  export USID_BIN="$tmp/usid" # pods.test.mjs starts three more, on one Redis
  # The pages use the built-in engines (shogi: fairy and gps; chess:
  # stockfish; othello: usid's own, this build's "usid othello-engine"):
  # testdata/usid.yaml only lowers caps and sets instances, it adds none.
  # Engine profiles of this run only (usid's profile_dir defaults to
  # $XDG_CACHE_HOME/usid/profiles): an earlier run's observations stay out.
  export XDG_CACHE_HOME="$tmp/cache"
  # A free loopback port: bind port 0, read what the kernel gave, let it go.
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  (cd "$root" && exec "$tmp/usid" --addr "127.0.0.1:$port" --config "$config") >"$tmp/usid.log" 2>&1 &
  pid=$!
  export USID_URL="http://127.0.0.1:$port"
  ready=""
  # Up to 240 s (what the deployment's startup probe allows): readiness
  # waits for every engine's probe, and gpsusi's takes long on a busy machine.
  deadline=$(( $(date +%s) + 240 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "run.sh: usid exited before it was ready" >&2
      exit 1
    fi
    if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$USID_URL/readyz"; then
      ready=1
      break
    fi
    sleep 0.1
  done
  [ -n "$ready" ] || { echo "run.sh: usid was not ready within 240 s" >&2; exit 1; }
  echo "run.sh: usid ready at $USID_URL"
fi

# play.test.mjs first, in a run of its own (node orders the files of one
# run itself), so that its clocks meet idle engines. (Its lost human moves,
# once blamed on the tests before it, were the board's: a piece picked
# while a play event's position was still being loaded was dropped when it
# was shown. The board now takes no move until it shows the game's position.)
if [ -z "${E2E_TESTS:-}" ]; then
  node --test --test-concurrency=1 play.test.mjs
  # Every other test file: a new one runs without being listed here.
  node --test --test-concurrency=1 $(ls *.test.mjs | grep -vx play.test.mjs)
else
  node --test --test-concurrency=1 $E2E_TESTS
fi
