#!/usr/bin/env bash
# make image-test: runs the image that make image built, the way Kubernetes
# runs it (deploy/base: read-only root, uid 10001, /tmp the only writable
# place), and checks it serves and stops as it should:
#
#   - it runs as uid 10001 with a read-only root file system;
#   - /readyz turns 200 (the time from start to ready is reported);
#   - every engine of its usid.yaml answers one analysis of its game's
#     position (shogi, chess, othello: one engine at least of each), and
#     one engine that solves mates answers a tsume with a verified mate;
#   - the othello engine (usid's own, in the image's usid binary) plays a
#     game against itself to its end, every move checked by /v1/validate;
#   - podman stop (SIGTERM) while a search runs: the search is answered,
#     usid exits 0 within the grace period, and every engine was told to
#     quit (usid's log says each exited with status 0, none was killed);
#   - the image size is reported.
#
#   scripts/image-test.sh [IMAGE]   # default localhost/usid:dev
#
# Needs podman, runc, curl and jq (make test-deps installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

image=${1:-localhost/usid:dev}
podman=(podman --runtime runc)
name=usid-image-test-$$
grace=30
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
url=http://127.0.0.1:$port
tmp=$(mktemp -d)
fail() { echo "image-test: FAIL: $*" >&2; "${podman[@]}" logs "$name" 2>&1 | tail -n 40 >&2 || true; exit 1; }
cleanup() {
  "${podman[@]}" rm --force --time 0 "$name" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
for tool in podman runc curl jq; do
  command -v $tool >/dev/null || { echo "image-test: $tool is missing: make test-deps" >&2; exit 1; }
done
"${podman[@]}" image exists "$image" || { echo "image-test: no image $image: make image" >&2; exit 1; }

# post PATH JSON: the answer's body on stdout, its status in $tmp/status.
post() { curl -sS -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' -d "$2" "$url$1" >"$tmp/status"; cat "$tmp/body"; }

now() { date +%s%3N; } # milliseconds
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
start=$(now)
"${podman[@]}" run --detach --name "$name" \
  --read-only --tmpfs /tmp:rw,size=64m,mode=1777 \
  --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
  --memory 2g --stop-timeout "$grace" \
  --publish "127.0.0.1:$port:8080" "$image" >/dev/null
for _ in $(seq 600); do
  [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$name")" = true ] || fail "the container exited before it was ready"
  curl -fsS -o /dev/null "$url/readyz" 2>/dev/null && break
  sleep 0.1
done
curl -fsS -o /dev/null "$url/readyz" || fail "/readyz not 200 within 60 s"
ready=$(secs $(($(now) - start)))
# Every engine's profile learned (the first start of a container probes
# each engine; gpsusi's probe takes about 10 s) and an engine warm.
for _ in $(seq 1200); do
  engines=$(curl -fsS "$url/v1/engines")
  [ "$(jq '[.engines[] | select(.profile == null or .available != true)] | length' <<<"$engines")" = 0 ] && break
  sleep 0.1
done
[ "$(jq '[.engines[] | select(.profile == null or .available != true)] | length' <<<"$engines")" = 0 ] ||
  fail "engines not all probed and available within 120 s: $(jq -c '[.engines[] | {name, available, error}]' <<<"$engines")"
allready=$(secs $(($(now) - start)))
echo "image-test: ok   /readyz 200 after ${ready}s, every engine probed and warm after ${allready}s (from podman run)"

# Non-root, read-only.
uid=$("${podman[@]}" exec "$name" id -u)
[ "$uid" = 10001 ] || fail "runs as uid $uid, want 10001"
[ "$("${podman[@]}" inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$name")" = true ] || fail "the root file system is not read-only"
if "${podman[@]}" exec "$name" sh -c 'echo x >/etc/usid/x' 2>/dev/null; then fail "wrote to /etc/usid"; fi
"${podman[@]}" exec "$name" sh -c 'echo x >/tmp/x' || fail "/tmp is not writable"
echo "image-test: ok   uid 10001, read-only root, writable /tmp"

# One analysis on every engine, of a position of its game.
names=$(jq -r '.engines[].name' <<<"$engines")
[ -n "$names" ] || fail "no engines: $engines"
for game in usi uci usix; do
  [ "$(jq --arg p $game '[.engines[] | select(.profile.protocol == $p)] | length' <<<"$engines")" -gt 0 ] ||
    fail "no $game engine (shogi usi, chess uci, othello usix): $(jq -c '[.engines[] | {name, protocol: .profile.protocol}]' <<<"$engines")"
done
for e in $names; do
  case $(jq -r --arg e "$e" '.engines[] | select(.name == $e) | .profile.protocol' <<<"$engines") in
    uci) field=fen start=startpos first=e2e4 ;;
    usix|uoi) field=othello start=startpos first=f5 ;;
    *) field=sfen start=startpos first=7g7f ;;
  esac
  out=$(post /v1/analyze "{\"engine\":\"$e\",\"position\":{\"$field\":\"$start\",\"moves\":[\"$first\"]},\"limits\":{\"depth\":3,\"movetime_ms\":5000}}")
  [ "$(cat "$tmp/status")" = 200 ] || fail "analysis on $e: $(cat "$tmp/status") $out"
  move=$(jq -r .bestmove <<<"$out")
  verdict=$(post /v1/validate "{\"position\":{\"$field\":\"$start\",\"moves\":[\"$first\",\"$move\"]}}")
  [ "$(jq -r .valid <<<"$verdict")" = true ] || fail "$e answered $move, not a legal move: $verdict"
  echo "image-test: ok   $e analysed ($field): bestmove $move, depth $(jq -r '.lines[0].depth' <<<"$out")$(jq -r 'if .emulated then " (emulated: " + (.emulated|join(",")) + ")" else "" end' <<<"$out")"
done

# An othello game to its end: the othello engine against itself, 100 ms a
# move, each move checked by the rules (/v1/validate); a forced pass is
# played without asking (the position has one move).
oth=$(jq -r '[.engines[] | select(.profile.protocol == "usix")][0].name' <<<"$engines")
moves=()
for _ in $(seq 130); do
  list=""
  [ ${#moves[@]} = 0 ] || list=$(printf '"%s",' "${moves[@]}")
  verdict=$(post /v1/validate "{\"position\":{\"othello\":\"startpos\",\"moves\":[${list%,}]}}")
  [ "$(jq -r .valid <<<"$verdict")" = true ] || fail "othello game: ${moves[*]}: $verdict"
  [ "$(jq -r .game_over <<<"$verdict")" = true ] && break
  if [ "$(jq -c .legal_moves <<<"$verdict")" = '["pass"]' ]; then
    moves+=(pass)
    continue
  fi
  out=$(post /v1/analyze "{\"engine\":\"$oth\",\"position\":{\"othello\":\"startpos\",\"moves\":[${list%,}]},\"limits\":{\"movetime_ms\":100}}")
  [ "$(cat "$tmp/status")" = 200 ] || fail "othello game, move $((${#moves[@]} + 1)): $(cat "$tmp/status") $out"
  moves+=("$(jq -r .bestmove <<<"$out")")
done
[ "$(jq -r .game_over <<<"$verdict")" = true ] || fail "othello game not over after ${#moves[@]} moves: $verdict"
echo "image-test: ok   $oth played othello against itself to the end: ${#moves[@]} moves, $(jq -r '.result | "\(.black)-\(.white)"' <<<"$verdict") ($(jq -c .result <<<"$verdict"))"

# One mate, on an engine that solves them.
mater=$(jq -r '[.engines[] | select(.capabilities.checkmate)][0].name // empty' <<<"$engines")
[ -n "$mater" ] || fail "no engine solves mates: $(jq -c '[.engines[] | {name, capabilities}]' <<<"$engines")"
out=$(post /v1/mate "{\"engine\":\"$mater\",\"position\":{\"sfen\":\"9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1\"},\"timeout_ms\":10000}")
[ "$(cat "$tmp/status")" = 200 ] && [ "$(jq -r .result <<<"$out")" = mate ] || fail "mate on $mater: $(cat "$tmp/status") $out"
echo "image-test: ok   $mater solved a tsume: $(jq -r '.moves|join(" ")' <<<"$out") (verified $(jq -r '.verified // "-"' <<<"$out"))"

# Stop while a search runs: it is answered, usid exits 0, engines quit.
first=$(head -n1 <<<"$names")
post /v1/analyze "{\"engine\":\"$first\",\"limits\":{\"movetime_ms\":3000}}" >"$tmp/inflight" &
search=$!
sleep 1
stop_start=$(now)
"${podman[@]}" stop --time "$grace" "$name" >/dev/null
drain=$(secs $(($(now) - stop_start)))
wait $search || true
[ "$(cat "$tmp/status")" = 200 ] || fail "the search in flight at SIGTERM: $(cat "$tmp/status") $(cat "$tmp/inflight")"
code=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || fail "usid exited with $code after podman stop (137: killed after the grace period)"
logs=$("${podman[@]}" logs "$name" 2>&1)
grep -q 'msg=stopped' <<<"$logs" || fail "usid did not log its clean stop"
# Serving engines only: the probe's (logged as NAME/probe) end as probing
# makes them, some on purpose. The pool says "engine ready" once for each
# engine it serves with, the probe's handed-over engine included (whose
# "engine started" was the probe's).
serving=$(grep 'msg="engine ' <<<"$logs" | grep -v 'engine=[^ ]*/probe' || true)
started=$(grep -c 'msg="engine ready"' <<<"$serving" || true)
quit=$(grep 'msg="engine exited"' <<<"$serving" | grep -c 'exited (status 0)' || true)
killed=$(grep 'msg="engine exited"' <<<"$serving" | grep -vc 'exited (status 0)' || true)
[ "$started" -gt 0 ] && [ "$quit" -ge "$started" ] && [ "$killed" = 0 ] ||
  fail "engines: $started served, $quit quit on request, $killed ended otherwise"
echo "image-test: ok   podman stop: the search in flight answered, usid exited 0 after ${drain}s (grace ${grace}s), $quit of $started serving engines quit"

size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "image-test: ok   image $image: $((size / 1000000)) MB"
