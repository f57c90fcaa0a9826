# syntax=docker/dockerfile:1
#
# usid with an engine for each game: Debian's fairy-stockfish and gpsshogi
# (gpsusi) for shogi, Debian's stockfish for chess, and usid's own othello
# engine (a subcommand of usid's binary: nothing to install).
#
#   docker build -t usid .
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp usid
#
# The image runs as uid 10001, needs nothing writable but /tmp (Kubernetes: an
# emptyDir; docker: --tmpfs /tmp) and reads its configuration from
# /etc/usid/usid.yaml: the repository's usid.yaml by default, the usid-config
# ConfigMap in Kubernetes (deploy/). How to add another engine, for example a
# YaneuraOu build stage: deploy/README.md.

ARG GO_VERSION=1.26
ARG DEBIAN_RELEASE=bookworm

# --- build: a static binary (no cgo), without local paths (-trimpath) ---
FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
# A CA bundle for the module proxy where TLS is intercepted: a path that a
# read-only build volume provides (make image does), never a file copied
# into a layer. Empty: the image's own bundle.
ARG SSL_CERT_FILE=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/usid ./cmd/usid

# --- runtime: Debian with the engines as its packages install them ---
FROM debian:${DEBIAN_RELEASE}-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      fairy-stockfish \
      gpsshogi \
      stockfish \
 && rm -rf /var/lib/apt/lists/*
# (prlimit, which caps gpsusi's memory in deploy/'s configurations, is in
# util-linux: an Essential package of every Debian image.)
RUN groupadd --system --gid 10001 usid \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin usid
COPY --from=build /out/usid /usr/local/bin/usid
COPY usid.yaml /etc/usid/usid.yaml
# Engines that write a file (a log, a learned book) find a writable home.
ENV HOME=/tmp
# Numeric, so that Kubernetes' runAsNonRoot can check it.
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/usid"]
CMD ["--config", "/etc/usid/usid.yaml"]
