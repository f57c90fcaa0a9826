# The README's commands live here. `make test` is what CI runs.
GO       ?= go
FUZZTIME ?= 10s

.PHONY: all deps test-deps build run test check vet race stress-test fuzz e2e conformance image image-test bench benchmarks soak

all: build

deps:
	./scripts/install-deps.sh

test-deps:
	./scripts/install-deps.sh --test

build:
	$(GO) build -trimpath -o bin/usid ./cmd/usid

## run: the service on :8080 (every interface) with the engines Debian
## installs (usid.yaml); CONFIG= a file laid over the built-in usid.yaml,
## ADDR= the address: make run CONFIG=my.yaml ADDR=127.0.0.1:8080
ADDR   ?= :8080
CONFIG ?= usid.yaml
run: deps build
	./bin/usid --addr $(ADDR) --config $(CONFIG)

## test: everything CI checks — formatting, vet, race-enabled tests, short
## fuzz runs, the web pages end to end in Debian's chromium, the API
## against openapi.yaml through Stoplight Prism's validating proxy, and the
## container image built and run with podman.
test: test-deps check race fuzz e2e conformance image-test

check:
	./scripts/check-tree.sh
	./scripts/third-party.sh --check
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

race:
	$(GO) test -race -count=1 -timeout 20m ./...

## stress-test: the race suite three times in a row while stress-ng keeps
## both cores busy: no test may depend on how fast the machine is.
STRESS_RUNS ?= 3
stress-test: test-deps
	./scripts/stress-test.sh $(STRESS_RUNS)

fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

e2e:
	node --test web/e2e/unit.test.mjs
	./web/e2e/run.sh

## conformance: a real usid (built-in config) behind Prism's validating proxy;
## every operation and status of openapi.yaml driven, any violation fails (~15 s).
conformance: build
	./conformance/run.sh

## image: the container image from the Dockerfile, built with podman (runc);
## base images made from Debian's archive with mmdebstrap where no registry
## serves them (scripts/image.sh). About 2 minutes the first time.
IMAGE ?= localhost/usid:dev
image:
	./scripts/image.sh $(IMAGE)

## image-test: the image run read-only as uid 10001: ready, one analysis per
## engine, one mate, a clean stop under podman stop (scripts/image-test.sh).
image-test: image
	./scripts/image-test.sh $(IMAGE)

## benchmarks: usid side by side with the engines and websocketd (BENCHMARKS.md); about 2 minutes.
benchmarks: deps build
	@command -v websocketd >/dev/null || { echo "benchmarks need websocketd: apt-get install websocketd"; exit 1; }
	$(GO) run ./cmd/usid-bench -usid bin/usid

## soak: ~100 WebSocket sessions plus REST load for SOAK (default 5m); CI runs 8 s of it.
SOAK ?= 5m
soak:
	USID_SOAK=$(SOAK) $(GO) test -run '^TestSoak$$' -count=1 -v -timeout 60m ./server/

## bench: the benchmarks whose numbers docs/performance.md reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
