# gencode: make run | make test | make bench
GO        ?= go
BIN       ?= bin/gencode
PKGS      ?= ./...

.PHONY: build run test test-short bench bench-session golden deps-check fmt fmt-check vet staticcheck tidy-check ci clean

# build links no C (CGO_ENABLED=0): a static binary, the same wherever it is
# built (go build turns cgo off by itself where no C compiler is found).
# Nothing needs cgo: net and os/user have their pure-Go resolvers, and
# libcap's psx (through go-landlock, used by the sandbox helper only) then
# calls the Go runtime's syscall.AllThreadsSyscall instead of its C library
# and its signal 33. The tests keep cgo (-race needs it); the end-to-end
# tests build the binary as this target does (internal/gencodetest).
# The version and commit --version and /config show (a build outside a
# checkout, `go install`, reads the module version Go records instead).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDVERSION := -X github.com/gencode/gencode/internal/cli.version=$(VERSION) -X github.com/gencode/gencode/internal/cli.commit=$(COMMIT)

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDVERSION)" -o $(BIN) ./cmd/gencode

# run starts the TUI (or pass ARGS, e.g. make run ARGS='-p "hello"').
run: build
	./$(BIN) $(ARGS)

# test is what CI runs: vet, the import-direction rule, every test with -race.
#
# These settings keep -race affordable on two cores without checking less of
# this project's code. GORACE's atexit_sleep_ms=0 skips the race runtime's
# one-second sleep at the exit of every test binary (races are reported when
# they happen; the sleep only waits for goroutines still running after the
# last test): 1 s x 30 binaries. Its clear_shadow_mmap_threshold makes the
# race runtime zero the shadow of an allocation of up to 8 MiB in place; by
# default it maps fresh pages over any above 64 KiB, and every later access
# faults one in again, which on this VM's slow page faults was 40% of the
# TUI tests' time (tui: 22 -> 10 CPU-s; the same shadow, the same checks).
# The test binaries are linked without DWARF (-ldflags=-w), which only a
# debugger reads (race reports and panics use the symbol table): 52 -> 37
# CPU-s to link them all. checkptr, which -race turns on for every
# package, is off for modernc.org's machine-translated SQLite, whose pointer
# arithmetic it re-checks on every call (60% of the store tests' time). And
# that translated C (modernc.org/sqlite/lib, modernc.org/libc/...) is built
# without race instrumentation, as cgo's C code is: a store test ran every
# SQLite instruction through the race runtime (session tests 13 s -> 6 s).
# Our packages and the standard library keep both checks, and the SQLite
# driver keeps race instrumentation (without it the detector reports false
# races in encoding/json's caches).
#
# go test's own vet pass is off (-vet=off): the vet prerequisite has just
# run every vet check, a superset of go test's, on the same packages.
#
# Most tests wait more than they compute (for the binary, a fake server's
# delay, a tmux pane, a debounce), so each package runs 4 tests per core at
# once instead of go test's default of one (the TUI package: 51 s -> 22 s).
RACEFLAGS ?= -race -gcflags='modernc.org/...=-d=checkptr=0' \
	-gcflags='modernc.org/sqlite/lib=-d=checkptr=0 -race=false' \
	-gcflags='modernc.org/libc/...=-d=checkptr=0 -race=false'
PARALLEL  ?= $(shell echo $$(( 4 * $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) )))
#
# The output is go test's without -v (each package's closing ok/FAIL line, a
# failed test's output), then every skipped test with its reason
# (scripts/testreport reads go test -json). SKIPS=FILE fails the run on a
# skip FILE does not list; make ci passes .ci/skips.
SKIPS     ?=
#
# RUN=REGEXP runs only the tests it matches (go test -run; taken as it is
# written, a $ included), e.g. make test RUN=TestMeter PKGS=./internal/view.
RUN       ?=
#
# go test links every test binary again on each run, even when nothing it
# is linked from changed (~0.5 CPU-s a race-built package): scripts/linkcache,
# as -toolexec, keeps the last binary of each package and copies it back
# when the link's action id is the same (LINKCACHE= links every one).
LINKCACHE ?= bin/linkcache
#
# On a CPU with x86-64-v3 the test binaries are built for it
# (scripts/amd64level says whether the CPU runs v3 code): the race
# runtime's v3 object needs nothing from libgcc, whose search is a quarter
# of each test binary's link with the v1 object (37 -> 25 CPU-s for all of
# them), and the tests run ~5% faster. make build, make bench and the
# non-race gencode the end-to-end tests run keep Go's default level
# (TESTAMD64= does the same for the tests).
TESTAMD64 ?= $(shell GOAMD64=v3 $(GO) run ./scripts/amd64level 2>/dev/null)
test: SHELL := /bin/bash
test: vet deps-check
	$(if $(LINKCACHE),$(GO) build -o $(LINKCACHE) ./scripts/linkcache)
	set -o pipefail; GORACE="atexit_sleep_ms=0 clear_shadow_mmap_threshold=8388608 $$GORACE" \
	$(if $(TESTAMD64),GOAMD64=$(TESTAMD64)) $(GO) test -json $(RACEFLAGS) -vet=off -ldflags=-w $(if $(LINKCACHE),-toolexec=$(abspath $(LINKCACHE))) \
	$(if $(value RUN),-run '$(value RUN)') -parallel $(PARALLEL) -count=1 -timeout 20m $(PKGS) 2>&1 | \
	$(GO) run ./scripts/testreport $(if $(SKIPS),-allow $(SKIPS))

test-short:
	$(GO) test -short -parallel $(PARALLEL) -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

# deps-check enforces the one-way imports of DESIGN.md.
deps-check:
	./scripts/check-deps.sh

# bench runs the benchmarks behind the figures in the README and issue notes.
# A failing benchmark fails the target (pipefail: tee alone would hide it).
bench: SHELL := /bin/bash
bench:
	set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem -count 1 ./internal/... | tee bench.out

# bench-session plays long scripted sessions (scenario B: 150 turns in a
# 32k window; a 600-turn one) through the built binary against the fake
# server, prints what a prefix-caching provider would bill against Crush's
# figures and the CPU per turn, and fails when a target of issues 11 and 30
# is missed. ARGS='-scenarios B' runs one; ARGS='-seed 2' a held-out
# variant; ARGS='-turns 40' a quick look.
bench-session: build
	$(GO) run ./internal/sessionbench/cmd/benchsession -bin $(BIN) -check $(ARGS)

# golden rewrites the golden files of every package that has them (the
# packages whose tests import x/exp/golden, which defines -update).
golden:
	$(GO) test $$($(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/charmbracelet\/x\/exp\/golden/ {print $$1}') -update

fmt:
	gofmt -w $$(git ls-files '*.go')

# fmt-check fails on a file of ours gofmt would change (third_party is
# upstream's code, as it came).
fmt-check:
	@out=$$(gofmt -l cmd internal scripts); if [ -n "$$out" ]; then echo "not gofmt-ed (make fmt):"; echo "$$out"; exit 1; fi

# staticcheck runs at a pinned version through the module proxy; checks
# turned off, with their reasons, are in staticcheck.conf.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(GO) run $(STATICCHECK) ./...

# tidy-check fails when go mod tidy would change go.mod or go.sum (it
# prints the diff and changes nothing).
tidy-check:
	$(GO) mod tidy -diff

# ci is what .ci/run runs: the cheap checks first, then every test, with
# an unexpected skip failing the run.
ci: fmt-check tidy-check staticcheck
	$(MAKE) test SKIPS=.ci/skips

clean:
	rm -rf bin bench.out
	$(GO) run ./scripts/linkcache -clean
