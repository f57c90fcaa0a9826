#!/usr/bin/env bash
# Installs what usid and its tests need on a Debian machine, and only what is
# missing, so it is cheap to run before every test run.
set -euo pipefail

need=()
[ -x /usr/games/fairy-stockfish ] || need+=(fairy-stockfish)
[ -x /usr/games/gpsusi ] || need+=(gpsshogi)

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: apt-get install ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

go mod download
