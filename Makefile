# The front door: make demo, make test, make lint, make bench.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
NODE_DEPS := scripts/node_modules/.package-lock.json

.PHONY: all build test test-go lint demo bench fuzz clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/tairseach-mcp ./cmd/tairseach-mcp
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/tairseach-demo ./cmd/tairseach-demo

# The real MCP clients the end-to-end tests drive (MCP Inspector, the
# TypeScript SDK), pinned in scripts/package-lock.json.
$(NODE_DEPS): scripts/package.json scripts/package-lock.json
	cd scripts && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

test: $(NODE_DEPS)
	$(GO) test -race -count=1 -timeout 15m ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: run gofmt -w on the files above'; exit 1; }
	$(GO) vet ./...
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo 'staticcheck not installed (go install honnef.co/go/tools/cmd/staticcheck@latest); skipped'; fi

demo: build
	@bash scripts/demo.sh

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseFile -fuzztime 30s ./manifest/
	$(GO) test -run '^$$' -fuzz FuzzReadReply -fuzztime 30s ./socketrpc/

clean:
	rm -rf $(BIN)
