// Command bench is the load driver of `make bench`: it measures
// tairseach-mcp against its floors and a peer in one run, with one client,
// and prints one table of medians, ratios and the performance targets.
//
// The contenders, each driven by this program:
//
//   - raw: this program calling the demo backend's Unix socket itself, one
//     persistent connection per caller (at most 8, the bridge's pool size):
//     write a request line, read and decode the reply line. The physical floor.
//   - sdk-floor: scripts/bench/sdkfloor, a go-sdk stdio server with the same
//     tools whose handlers answer at once from memory.
//   - bridge: tairseach-mcp against the demo backend, --log-level warn,
//     --output-schemas=strict, --result-budget off.
//   - peer: mcp-host-rpc (TypeScript SDK) against the same demo backend.
//
// Beside the bridge, in the sequential and 8-caller call cases only, two
// variants of it: bridge+audit (--audit-log FILE in the run's temp dir,
// checked for one line per call) and bridge+otel (traces and metrics over
// OTLP/HTTP to a collector this program runs on 127.0.0.1, checked to have
// received exports while the calls ran). They get a table of their own,
// each against the plain bridge.
//
// The MCP contenders are spawned and driven with the go-sdk client over stdio
// (mcp.CommandTransport), at protocol 2025-11-25 and, for the per-call cases,
// again at the client's default (2026-07-28, the current revision). Every case runs each
// contender in turn, in an order that rotates from round to round, so noise
// on a shared machine hits them all alike; the table shows the median of the
// per-round values.
//
// Usage (from the repository root):
//
//	go run ./scripts/bench [-bridge bin/tairseach-mcp] [-demo bin/tairseach-demo] [-floor BIN] [-peer BIN]
//	    [-corpus DIR] [-rounds 5] [-budget 7m] [-quick] [-o scripts/bench/results.md]
//
// Binaries not given are built into a temp dir. -quick is a smoke test (one
// round, few calls) that writes no file unless -o is given.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"
)

// config is what one benchmark run needs.
type config struct {
	root   string // repository root
	bridge string // tairseach-mcp binary; built into a temp dir when empty
	demo   string // tairseach-demo binary; built when empty
	floor  string // sdkfloor binary; built when empty
	peer   string // mcp-host-rpc; the peer column is n/a when missing
	corpus string // the real manifests
	out    string // results file; "" writes none
	slices string // the call cases' per-slice values as JSON; "" writes none
	rounds int
	budget time.Duration // start no round that would likely end past it; 0: no limit
	quick  bool

	warmBlock int // warm-up calls per block
	warmMin   int // blocks at least (6 at least: the steadiness rule compares two groups of 3)
	warmMax   int // blocks at most
	seqCalls  int // sequential calls per round
	sizeCalls [3]int
	listCalls [2]int // corpus, 1,000 tools
	spawns    int    // spawns per contender and tool set per round
	reloads   int    // reloads per round

	// Calls per throughput case per round, at 8 callers and at 64; and the
	// slices of the 8-caller case, the variants': more than another
	// case's, as how fast a turn runs on this machine varies about as
	// much from turn to turn whether it lasts 75 ms or 150 (±8 % and ±7 %,
	// docs/performance.md), so more turns narrow a ratio's interval more
	// than longer ones. A slice of 1,500 calls still holds several of a
	// variant's periodic writes and exports and of the garbage
	// collector's cycles.
	rate8Calls, rate64Calls int
	rate8Slices             int

	progress io.Writer
}

// defaultRate8Slices is config.rate8Slices.
const defaultRate8Slices = 16

func main() {
	var c config
	flag.StringVar(&c.bridge, "bridge", "", "tairseach-mcp binary (default: go build ./cmd/tairseach-mcp into a temp dir)")
	flag.StringVar(&c.demo, "demo", "", "tairseach-demo binary (default: go build ./cmd/tairseach-demo into a temp dir)")
	flag.StringVar(&c.floor, "floor", "", "sdk-floor binary (default: go build ./scripts/bench/sdkfloor into a temp dir)")
	flag.StringVar(&c.peer, "peer", "scripts/bench/peer/node_modules/.bin/mcp-host-rpc", "mcp-host-rpc binary; n/a when missing (make bench installs it first)")
	flag.StringVar(&c.corpus, "corpus", "manifest/testdata/tairseach-manifests", "directory of the real manifests")
	flag.StringVar(&c.out, "o", "", "write the results here (default scripts/bench/results.md; none with -quick)")
	flag.StringVar(&c.slices, "slices", "", "also write the call cases' per-slice values as JSON to `FILE`: rounds, slicesPerRound (case → slices a round) and values (case → contender → values, in run order)")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each case's value is the median of its rounds")
	flag.DurationVar(&c.budget, "budget", 7*time.Minute, "start no further round that would likely end past this time since the start; 0 means no limit")
	flag.BoolVar(&c.quick, "quick", false, "smoke test: 1 round, few calls, no results file unless -o is given")
	cpuProfile := flag.String("cpuprofile", "", "write this driver's CPU profile (the client's share) to `FILE`")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "bench: unexpected arguments; see -h")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := setup(&c); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: -cpuprofile: %v\n", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, c, os.Stdout); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// setup resolves paths against the repository root and sets the call counts.
func setup(c *config) error {
	root, err := findRoot()
	if err != nil {
		return err
	}
	c.root = root
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(root, p)
	}
	c.bridge, c.demo, c.floor, c.peer, c.corpus, c.slices = abs(c.bridge), abs(c.demo), abs(c.floor), abs(c.peer), abs(c.corpus), abs(c.slices)
	if c.out == "" && !c.quick {
		c.out = "scripts/bench/results.md"
	}
	c.out = abs(c.out)
	if c.rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}
	c.progress = os.Stderr
	c.warmBlock, c.warmMin, c.warmMax = 250, 8, 60
	c.seqCalls, c.rate8Calls, c.rate64Calls = 4000, 24000, 8000
	c.rate8Slices = defaultRate8Slices
	c.sizeCalls = [3]int{400, 200, 24}
	c.listCalls = [2]int{30, 8}
	c.spawns, c.reloads = 3, 5
	if c.quick {
		c.rounds = 1
		c.warmBlock, c.warmMin, c.warmMax = 50, 6, 8
		c.seqCalls, c.rate8Calls, c.rate64Calls = 200, 300, 300
		c.sizeCalls = [3]int{40, 30, 3}
		c.listCalls = [2]int{5, 3}
		c.spawns, c.reloads = 1, 2
	}
	return nil
}

// findRoot returns the directory of the module's go.mod, searching upwards
// from the working directory.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && len(b) > 0 && containsModule(b) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the tairseach-mcp repository (no go.mod of github.com/geilt/tairseach-mcp found)")
		}
		dir = parent
	}
}

func containsModule(gomod []byte) bool {
	const want = "module github.com/geilt/tairseach-mcp\n"
	return len(gomod) >= len(want) && string(gomod[:len(want)]) == want
}

// logf reports progress on stderr.
func (c config) logf(format string, args ...any) {
	fmt.Fprintf(c.progress, "bench: "+format+"\n", args...)
}

// since formats the time since t for progress lines.
func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }
