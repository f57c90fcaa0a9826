# The README's commands live here. `make test` is what CI runs.
GO       ?= go
FUZZTIME ?= 20s

.PHONY: all deps build run test check vet race fuzz bench

all: build

deps:
	./scripts/install-deps.sh

build:
	$(GO) build -trimpath -o bin/usid ./cmd/usid

## run: the service on :8080 with the engines Debian installs (usid.yaml).
ADDR ?= :8080
run: deps build
	./bin/usid --addr $(ADDR) --config usid.yaml

## test: everything CI checks — formatting, vet, race-enabled tests, short fuzz runs.
test: deps check race fuzz

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

race:
	$(GO) test -race -count=1 -timeout 20m ./...

fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

## bench: the benchmarks whose numbers README reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
