// Command soak is the long-run test of `make soak`: it runs the real
// tairseach-mcp binary over stdio under the go-sdk client and sends it many
// tool calls through one session, most of them plain, some of them to a
// backend that misbehaves on purpose, while the manifests change under it
// every second. It then prints what happened and fails unless every call
// got exactly one response with the result its fault calls for.
//
// The backend is internal/faultbackend, run in this process. Each tool of
// the manifest selects one of its behaviours (fault.ok echoes the
// arguments; fault.error, fault.garbage, fault.wrongid, fault.close,
// fault.half and fault.drop fail in their own ways; fault.silent never
// answers and has a timeoutMs of its own). A reloader rewrites the manifest
// with another description of fault.ok, so that the bridge reloads and
// sends notifications/tools/list_changed while calls are in flight.
//
// Usage (from the repository root):
//
//	go run ./scripts/soak [-calls 100000] [-concurrency 16] [-faults 0.1] [-bin bin/tairseach-mcp]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
)

// config is what one soak run needs.
type config struct {
	bin         string        // tairseach-mcp; built into a temp dir when empty
	calls       int           // tool calls in all
	concurrency int           // calls at once
	faults      float64       // share of calls that go to a misbehaving tool
	reload      time.Duration // how often the manifest is rewritten; 0: never
	silentMs    int           // timeoutMs of fault.silent
	callTimeout time.Duration // the bridge's --call-timeout
	wait        time.Duration // how long the driver waits for one response
	seed        uint64
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "", "tairseach-mcp binary (default: build ./cmd/tairseach-mcp into a temp dir)")
	flag.IntVar(&c.calls, "calls", 100_000, "tool calls in all")
	flag.IntVar(&c.concurrency, "concurrency", 16, "tool calls at once")
	flag.Float64Var(&c.faults, "faults", 0.10, "share of calls sent to a misbehaving tool")
	flag.DurationVar(&c.reload, "reload", time.Second, "how often to rewrite the manifest (0: never)")
	flag.IntVar(&c.silentMs, "silent-timeout-ms", 100, "timeoutMs of the tool whose backend never answers")
	flag.DurationVar(&c.callTimeout, "call-timeout", 10*time.Second, "the bridge's --call-timeout")
	flag.DurationVar(&c.wait, "wait", 30*time.Second, "how long to wait for one response before counting it lost")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the choice of tools")
	flag.Parse()
	if c.calls <= 0 || c.concurrency <= 0 || c.faults < 0 || c.faults > 1 {
		fmt.Fprintln(os.Stderr, "soak: -calls and -concurrency must be positive, -faults within 0..1")
		os.Exit(2)
	}
	if c.wait <= c.callTimeout || c.wait <= time.Duration(c.silentMs)*time.Millisecond {
		fmt.Fprintln(os.Stderr, "soak: -wait must be longer than every time limit of the bridge, or a slow answer is counted lost")
		os.Exit(2)
	}
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		os.Exit(1)
	}
}

// A fault is one tool of the soak manifest: the backend behaviour it
// selects, and the outcome a call of it must have.
type fault struct {
	mode faultbackend.Mode
	want string // a cause, see classify
}

// faults are the misbehaving tools, chosen with equal odds. fault.drop,
// selected by method, closes the connection after reading the request, as
// fault.close does.
var faults = []fault{
	{faultbackend.ModeError, "backend error"},
	{faultbackend.ModeGarbage, "malformed"},
	{faultbackend.ModeWrongID, "malformed"},
	{faultbackend.ModeClose, "closed"},
	{faultbackend.ModeCloseMidReply, "closed"},
	{faultbackend.ModeDrop, "closed"},
	{faultbackend.ModeSilent, "timeout"},
}

var okTool = fault{faultbackend.ModeOK, "ok"}

func toolName(m faultbackend.Mode) string { return "tairseach_fault_" + string(m) }

// manifest is the soak manifest; generation only changes the description of
// fault.ok.
func manifest(socket string, silentMs, generation int) []byte {
	var tools []faultbackend.Tool
	for _, f := range append([]fault{okTool}, faults...) {
		t := faultbackend.Tool{Mode: f.mode}
		switch f.mode {
		case faultbackend.ModeOK:
			t.Description = fmt.Sprintf("Echo the arguments (manifest generation %d).", generation)
		case faultbackend.ModeSilent:
			t.TimeoutMs = silentMs
		}
		tools = append(tools, t)
	}
	return faultbackend.Manifest(socket, tools...)
}

// writeAtomic replaces path the way editors do, so the bridge never reads
// half a file.
func writeAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// stats are the outcomes of the calls; every field is updated atomically or
// under mu.
type stats struct {
	mu         sync.Mutex
	causes     map[string]int // by classify
	unexpected map[string]int // "tool: got cause" for outcomes that do not match the tool
	examples   []string       // the first few unexpected outcomes in full
	okLatency  []time.Duration
	notified   atomic.Int64 // notifications/tools/list_changed received
	reloads    atomic.Int64 // manifest rewrites
}

func (s *stats) record(tool fault, cause, detail string, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.causes[cause]++
	if cause == "ok" && tool.want == "ok" {
		s.okLatency = append(s.okLatency, took)
	}
	if cause != tool.want {
		key := fmt.Sprintf("%s: %s", toolName(tool.mode), cause)
		s.unexpected[key]++
		if len(s.examples) < 5 {
			s.examples = append(s.examples, key+": "+detail)
		}
	}
}

// classify names the outcome of one call by the text of its result.
func classify(args string, res *mcp.CallToolResult, err error) (cause, detail string) {
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "lost", err.Error()
		}
		return "json-rpc error", err.Error()
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	t := text.String()
	if !res.IsError {
		if t == args {
			return "ok", t
		}
		return "wrong result", t
	}
	for _, c := range []struct{ cause, marker string }{
		{"backend error", `{"error":{"code":-32001,`},
		{"malformed", "sent a malformed reply"},
		{"closed", "closed the connection"},
		{"timeout", "no reply from the tairseach server"},
		{"busy", "busy: "},
		{"unreachable", "is not reachable"},
		{"unknown tool", "unknown tool"},
	} {
		if strings.Contains(t, c.marker) {
			return c.cause, t
		}
	}
	return "other error", t
}

func run(c config, out io.Writer) error {
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	if c.bin == "" {
		c.bin = filepath.Join(dir, "tairseach-mcp")
		fmt.Fprintln(out, "building tairseach-mcp…")
		build := exec.Command("go", "build", "-o", c.bin, "./cmd/tairseach-mcp")
		build.Dir, err = moduleRoot()
		if err != nil {
			return err
		}
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the bridge: %w", err)
		}
	}

	socket := filepath.Join(dir, "s.sock")
	be, err := faultbackend.Start(socket, faultbackend.Options{})
	if err != nil {
		return fmt.Errorf("starting the fault backend: %w", err)
	}
	defer be.Stop()
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		return err
	}
	manifestPath := filepath.Join(manifests, "fault.json")
	if err := os.WriteFile(manifestPath, manifest(socket, c.silentMs, 0), 0o644); err != nil {
		return err
	}

	logPath := filepath.Join(dir, "bridge.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(c.bin, "--manifests", manifests, "--socket", socket,
		"--call-timeout", c.callTimeout.String(), "--log-level", "warn")
	cmd.Stderr = logFile

	st := &stats{causes: map[string]int{}, unexpected: map[string]int{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { st.notified.Add(1) },
	})
	tr := &countingTransport{inner: &mcp.CommandTransport{Command: cmd}}
	ctx := context.Background()
	connectCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	cs, err := client.Connect(connectCtx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	cancel()
	if err != nil {
		return fmt.Errorf("connecting to the bridge: %w", err)
	}
	pid := cmd.Process.Pid
	list, err := cs.ListTools(ctx, nil)
	// The fault tools, the reloaded one and the bridge's tairseach_result_part.
	if err != nil || len(list.Tools) != len(faults)+2 {
		cs.Close()
		return fmt.Errorf("tools/list: %v, %v; want %d tools", list, err, len(faults)+2)
	}
	before, _ := readProc(pid)

	// The reloader rewrites the manifest until the calls are done.
	stopReload := make(chan struct{})
	var reloader sync.WaitGroup
	if c.reload > 0 {
		reloader.Go(func() {
			tick := time.NewTicker(c.reload)
			defer tick.Stop()
			for gen := 1; ; gen++ {
				select {
				case <-stopReload:
					return
				case <-tick.C:
				}
				if err := writeAtomic(manifestPath, manifest(socket, c.silentMs, gen)); err != nil {
					fmt.Fprintf(os.Stderr, "soak: rewriting the manifest: %v\n", err)
					continue
				}
				st.reloads.Add(1)
			}
		})
	}

	fmt.Fprintf(out, "soak: %d calls, %d at once, %.0f%% to misbehaving tools, manifest rewritten every %v\n",
		c.calls, c.concurrency, 100*c.faults, c.reload)
	start := time.Now()
	var next atomic.Int64
	var workers sync.WaitGroup
	for w := range c.concurrency {
		workers.Go(func() {
			rng := rand.New(rand.NewPCG(c.seed, uint64(w)))
			for {
				i := next.Add(1)
				if i > int64(c.calls) {
					return
				}
				tool := okTool
				if rng.Float64() < c.faults {
					tool = faults[rng.IntN(len(faults))]
				}
				args := `{"i":` + strconv.FormatInt(i, 10) + `}`
				callCtx, cancel := context.WithTimeout(ctx, c.wait)
				t0 := time.Now()
				res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: toolName(tool.mode), Arguments: json.RawMessage(args)})
				took := time.Since(t0)
				cancel()
				cause, detail := classify(args, res, err)
				st.record(tool, cause, detail, took)
				if done := i; done%10_000 == 0 {
					fmt.Fprintf(out, "  %d calls, %v\n", done, time.Since(start).Round(time.Second))
				}
			}
		})
	}
	workers.Wait()
	wall := time.Since(start)
	close(stopReload)
	reloader.Wait()

	// Give the last reload's notification time to arrive, then measure the
	// bridge before it exits.
	time.Sleep(500 * time.Millisecond)
	proc, procErr := readProc(pid)
	closeErr := cs.Close()
	exit := -1
	if cmd.ProcessState != nil {
		exit = cmd.ProcessState.ExitCode()
	}

	// The report.
	fmt.Fprintf(out, "\n%-36s %d\n", "calls", c.calls)
	fmt.Fprintf(out, "%-36s %v\n", "wall time", wall.Round(time.Millisecond))
	fmt.Fprintf(out, "%-36s %.0f\n", "calls/s", float64(c.calls)/wall.Seconds())
	fmt.Fprintln(out, "results by cause:")
	for _, k := range slices.Sorted(maps.Keys(st.causes)) {
		fmt.Fprintf(out, "  %-34s %d\n", k, st.causes[k])
	}
	if p := percentiles(st.okLatency); p != "" {
		fmt.Fprintf(out, "%-36s %s\n", "ok call latency", p)
	}
	fmt.Fprintf(out, "%-36s %d\n", "manifest rewrites", st.reloads.Load())
	fmt.Fprintf(out, "%-36s %d\n", "list_changed notifications", st.notified.Load())
	fmt.Fprintf(out, "%-36s %d\n", "backend connections accepted", be.Accepted())
	fmt.Fprintf(out, "%-36s %d\n", "backend requests read", be.Requests())
	if procErr != nil {
		fmt.Fprintf(out, "%-36s %v\n", "bridge process", procErr)
	} else {
		fmt.Fprintf(out, "%-36s %.1f MiB\n", "bridge max RSS (VmHWM)", float64(proc.hwmKiB)/1024)
		fmt.Fprintf(out, "%-36s %.1f MiB\n", "bridge RSS at the end (VmRSS)", float64(proc.rssKiB)/1024)
		fmt.Fprintf(out, "%-36s %d (%d after connecting)\n", "bridge threads at the end", proc.threads, before.threads)
		fmt.Fprintf(out, "%-36s %d (%d after connecting)\n", "bridge open fds at the end", proc.fds, before.fds)
	}
	requests, answered, problems := tr.check()
	fmt.Fprintf(out, "%-36s %d sent, %d answered once\n", "JSON-RPC requests", requests, answered)
	fmt.Fprintf(out, "%-36s %d\n", "bridge exit status", exit)
	if info, err := os.Stat(logPath); err == nil {
		fmt.Fprintf(out, "%-36s %d bytes\n", "bridge stderr (--log-level warn)", info.Size())
	}

	// The verdict.
	var fails []string
	fails = append(fails, problems...)
	for _, k := range slices.Sorted(maps.Keys(st.unexpected)) {
		fails = append(fails, fmt.Sprintf("%d unexpected outcomes %s", st.unexpected[k], k))
	}
	fails = append(fails, st.examples...)
	if n := st.causes["lost"]; n > 0 {
		fails = append(fails, fmt.Sprintf("%d calls got no response within %v", n, c.wait))
	}
	if c.reload > 0 && wall > 3*c.reload && st.notified.Load() == 0 {
		fails = append(fails, "no notifications/tools/list_changed although the manifest changed")
	}
	if closeErr != nil || exit != 0 {
		fails = append(fails, fmt.Sprintf("the bridge exited with status %d (%v) when stdin closed", exit, closeErr))
	}
	if len(fails) > 0 {
		if log, err := os.ReadFile(logPath); err == nil {
			fmt.Fprintf(out, "\nbridge stderr (last 4 KiB):\n%s\n", tail(log, 4096))
		}
		return fmt.Errorf("FAIL:\n  %s", strings.Join(fails, "\n  "))
	}
	fmt.Fprintln(out, "\nPASS: every request got exactly one response, every call the outcome its tool calls for")
	return nil
}

// countingTransport counts the JSON-RPC requests the client sends and the
// responses it receives, by id, to prove that none is lost or doubled.
type countingTransport struct {
	inner mcp.Transport

	mu        sync.Mutex
	sent      map[jsonrpc.ID]int
	responses map[jsonrpc.ID]int
}

func (t *countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.sent, t.responses = map[jsonrpc.ID]int{}, map[jsonrpc.ID]int{}
	return &countingConn{Connection: conn, t: t}, nil
}

// check reports the number of requests, how many got exactly one response,
// and every discrepancy.
func (t *countingTransport) check() (requests, answered int, problems []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, n := range t.sent {
		requests += n
		switch got := t.responses[id]; {
		case n != 1:
			problems = append(problems, fmt.Sprintf("request id %v sent %d times", id.Raw(), n))
		case got == 1:
			answered++
		default:
			problems = append(problems, fmt.Sprintf("request id %v got %d responses", id.Raw(), got))
		}
	}
	for id, n := range t.responses {
		if t.sent[id] == 0 {
			problems = append(problems, fmt.Sprintf("%d responses to id %v, which was never sent", n, id.Raw()))
		}
	}
	if len(problems) > 10 {
		problems = append(problems[:10], fmt.Sprintf("… and %d more", len(problems)-10))
	}
	return requests, answered, problems
}

type countingConn struct {
	mcp.Connection
	t *countingTransport
}

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.t.mu.Lock()
		c.t.responses[resp.ID]++
		c.t.mu.Unlock()
	}
	return msg, err
}

func (c *countingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.t.mu.Lock()
		c.t.sent[req.ID]++
		c.t.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// procInfo is what /proc says about the bridge.
type procInfo struct {
	hwmKiB, rssKiB int
	threads, fds   int
}

func readProc(pid int) (procInfo, error) {
	var p procInfo
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, fmt.Errorf("reading /proc (Linux only): %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmHWM":
			p.hwmKiB = n
		case "VmRSS":
			p.rssKiB = n
		case "Threads":
			p.threads = n
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return p, err
	}
	p.fds = len(fds)
	return p, nil
}

// percentiles describes the median, 99th percentile and maximum of d.
func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return ""
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	round := func(x time.Duration) time.Duration { return x.Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %v, p99 %v, max %v", round(at(0.5)), round(at(0.99)), round(d[len(d)-1]))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// moduleRoot is the directory of go.mod, where go build must run.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run soak from inside the tairseach-mcp module")
	}
	return filepath.Dir(gomod), nil
}
