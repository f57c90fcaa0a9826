#!/usr/bin/env bash
# make image: builds the repository's Dockerfile, unchanged, with podman.
#
#   scripts/image.sh [IMAGE]      # default localhost/usid:dev
#
# The Dockerfile starts FROM golang:1.26-bookworm and debian:bookworm-slim.
# Where no registry serves them (the project's machines reach Debian's
# archive, the Go module proxy and npm, not Docker Hub), this script makes
# both locally, once, from Debian's archive with mmdebstrap: a minimal
# bookworm for debian:bookworm-slim, the same plus ca-certificates and this
# machine's Go toolchain (/usr/local/go, which must be Go 1.26) for golang.
# Images already present are used as they are.
#
# Two facts of such machines are handled here, not in the Dockerfile:
#  - runc, not crun (crun fails on their cgroup setup), and lowered ulimits
#    (rlimits cannot be raised above the machine's);
#  - the Go module proxy is reached over TLS with the CA bundle named by
#    $SSL_CERT_FILE: the build stage gets it through a read-only build
#    volume and the SSL_CERT_FILE build argument, never in a layer.
#  The machine's apt and registry configuration is never copied in: the
#  images' apt reads only the sources mmdebstrap wrote (deb.debian.org).
set -euo pipefail
cd "$(dirname "$0")/.."

image=${1:-localhost/usid:dev}
release=bookworm
go_version=1.26
podman=(podman --runtime runc)
ulimits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
mirror=http://deb.debian.org
sources=("deb $mirror/debian $release main" "deb $mirror/debian $release-updates main" "deb $mirror/debian-security $release-security main")

for tool in podman runc mmdebstrap; do
  command -v $tool >/dev/null || { echo "image: $tool is missing: apt-get install podman runc mmdebstrap (or make test-deps)" >&2; exit 1; }
done

# base NAME [mmdebstrap options...]: a local image NAME from Debian's archive.
base() {
  local name=$1; shift
  "${podman[@]}" image exists "$name" && return 0
  echo "image: making $name from Debian's archive with mmdebstrap" >&2
  local tmp; tmp=$(mktemp -d)
  # Like the official slim images: no manual pages, documentation or
  # translations (copyright files stay); no apt lists.
  mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$@" "$release" "$tmp/rootfs.tar" "${sources[@]}"
  local changes=(--change 'CMD ["bash"]')
  if [[ $name == *golang* ]]; then
    changes=(--change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
      --change 'ENV GOPATH=/go' --change 'ENV GOTOOLCHAIN=local' --change 'WORKDIR /go' --change 'CMD ["bash"]')
  fi
  "${podman[@]}" import --quiet "${changes[@]}" "$tmp/rootfs.tar" "$name" >/dev/null
  rm -rf "$tmp"
}

start=$(date +%s)
base docker.io/library/debian:$release-slim
if ! "${podman[@]}" image exists docker.io/library/golang:$go_version-$release; then
  [ -x /usr/local/go/bin/go ] || { echo "image: no golang:$go_version-$release image and no Go at /usr/local/go to make one" >&2; exit 1; }
  have=$(/usr/local/go/bin/go env GOVERSION)
  [[ $have == go$go_version* ]] || { echo "image: /usr/local/go is $have, the Dockerfile wants Go $go_version" >&2; exit 1; }
  base docker.io/library/golang:$go_version-$release --include=ca-certificates \
    --customize-hook='mkdir -p "$1/go"' --customize-hook='copy-in /usr/local/go /usr/local'
fi
bases=$(($(date +%s) - start))

ca=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  ca=(--volume "$SSL_CERT_FILE:/run/build-ca.crt:ro" --build-arg SSL_CERT_FILE=/run/build-ca.crt)
fi
start=$(date +%s)
"${podman[@]}" build --pull=never "${ulimits[@]}" "${ca[@]}" \
  --tag "$image" .
built=$(($(date +%s) - start))
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "image: $image built in ${built}s (base images: ${bases}s), $((size / 1000000)) MB"
