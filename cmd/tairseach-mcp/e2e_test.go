package main

// End-to-end tests: the real tairseach-mcp binary, the real demo backend on
// a Unix socket, and real MCP clients (the go-sdk client here; MCP Inspector
// and the TypeScript SDK in clients_test.go).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Binaries built once by TestMain.
var (
	bridgeBin string
	demoBin   string
	repoRoot  string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tsbin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Join(filepath.Dir(file), "..", "..")
	bridgeBin = filepath.Join(dir, "tairseach-mcp")
	demoBin = filepath.Join(dir, "tairseach-demo")
	// One go build for both, into dir, so that they are built side by side.
	// -buildvcs=false: the binary names itself "dev" however the tree was
	// checked out (a git clone would stamp a pseudo-version, an export
	// nothing), so the wire transcripts compare what the server does, not
	// how it was built. It overrides GOFLAGS. They are built with -race when
	// the tests are (make test): go test -short, without it, then builds
	// them in a third of the time and runs them faster.
	args := []string{"build", "-buildvcs=false", "-o", dir}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/tairseach-mcp", "./cmd/tairseach-demo")...)
	cmd.Dir = repoRoot
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building the bridge and the demo backend: %v\n", err)
		return 1
	}
	// A -race binary sleeps a second before it exits (GORACE atexit_sleep_ms,
	// 1000 by default) in case goroutines still running race; the bridge and
	// the backend stop theirs before they exit, and the tests start and stop
	// hundreds of them. The children inherit this; a race they hit is still
	// reported on their stderr and makes them exit 66.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return m.Run()
}

// demoBackend is a running demo backend process.
type demoBackend struct {
	t    *testing.T
	path string
	args []string // flags besides --socket
	cmd  *exec.Cmd
}

// shortDir returns a temporary directory with a path short enough for a
// Unix socket.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ts")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startBackend starts the demo backend on path, with flags, and waits until
// it listens.
func startBackend(t *testing.T, path string, flags ...string) *demoBackend {
	t.Helper()
	b := &demoBackend{t: t, path: path, args: flags}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *demoBackend) start() {
	b.t.Helper()
	b.cmd = exec.Command(demoBin, append([]string{"--socket", b.path}, b.args...)...)
	stderr, _ := b.cmd.StderrPipe()
	if err := b.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "listening") {
				once = true
				close(ready)
			}
		}
		if !once {
			close(ready)
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		b.t.Fatal("demo backend did not start within 10s")
	}
	if _, err := os.Stat(b.path); err != nil {
		b.t.Fatalf("demo backend socket: %v", err)
	}
}

func (b *demoBackend) stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = b.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
	}
	b.cmd = nil
}

// env is one test setup: a backend socket path and a manifests directory.
type env struct {
	socket    string
	manifests string
}

func newEnv(t *testing.T) env {
	t.Helper()
	dir := shortDir(t)
	return env{socket: filepath.Join(dir, "s.sock"), manifests: filepath.Join(repoRoot, "manifests.example")}
}

func (e env) args(extra ...string) []string {
	return append([]string{"--manifests", e.manifests, "--socket", e.socket, "--log-level", "debug"}, extra...)
}

// connect starts the bridge under the go-sdk client.
func connect(t *testing.T, e env, protocol string, extra ...string) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectCmd(t, e, protocol, nil, extra...)
	return cs
}

// connectWith is connect with client options (notification handlers).
func connectWith(t *testing.T, e env, protocol string, opts *mcp.ClientOptions, extra ...string) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectCmd(t, e, protocol, opts, extra...)
	return cs
}

// connectCmd is connect that also returns the bridge's process.
func connectCmd(t *testing.T, e env, protocol string, opts *mcp.ClientOptions, extra ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bridgeBin, e.args(extra...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
	return cs, cmd
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// protocols are the versions every client-facing test runs under: the
// revision before 2026-07-28 and the go-sdk client's default, 2026-07-28.
var protocols = []string{"2025-11-25", ""}

func protoName(p string) string {
	if p == "" {
		return "default"
	}
	return p
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestE2EListAndCall(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			e := newEnv(t)
			startBackend(t, e.socket)
			cs := connect(t, e, proto)
			ctx := context.Background()

			init := cs.InitializeResult()
			if init.ServerInfo.Name != "tairseach-mcp" || init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
				t.Errorf("initialize: serverInfo %+v, tools capability %+v", init.ServerInfo, init.Capabilities.Tools)
			}
			if init.Instructions == "" {
				t.Error("initialize: no instructions for the model")
			}

			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"tairseach_server_status", "tairseach_contacts_list", "tairseach_contacts_get", "tairseach_contacts_search", "tairseach_demo_echo", "tairseach_demo_fail"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s; got %v", want, names)
				}
			}
			if slices.Contains(names, "tairseach_contacts_delete") {
				t.Error("tools/list shows tairseach_contacts_delete, which its manifest hides with mcp_expose: false")
			}
			if !slices.IsSorted(names) {
				t.Errorf("tools are not sorted by name: %v", names)
			}

			res := callTool(t, cs, "tairseach_server_status", nil)
			if res.IsError {
				t.Fatalf("server.status: isError: %s", text(res))
			}
			var status map[string]any
			if err := json.Unmarshal([]byte(text(res)), &status); err != nil || status["status"] != "ok" {
				t.Fatalf("server.status text = %q (%v)", text(res), err)
			}
			// By default (--output-schemas=warn) outputSchemas are not
			// advertised and results carry no structuredContent.
			if res.StructuredContent != nil {
				t.Error("server.status: structuredContent under the default --output-schemas=warn")
			}
			for _, tool := range list.Tools {
				if tool.OutputSchema != nil {
					t.Errorf("%s advertises an outputSchema under the default --output-schemas=warn", tool.Name)
				}
			}

			res = callTool(t, cs, "tairseach_contacts_list", map[string]any{"limit": 2, "offset": 1})
			var page struct {
				Contacts []map[string]any
				Limit    int
				Offset   int
			}
			if err := json.Unmarshal([]byte(text(res)), &page); err != nil || res.IsError || len(page.Contacts) != 2 || page.Offset != 1 {
				t.Fatalf("contacts.list limit 2 offset 1: isError %v, %s", res.IsError, text(res))
			}

			args := map[string]any{"text": "héllo \"world\"", "n": 42.5, "nested": map[string]any{"a": []any{1.0, true, nil}}}
			res = callTool(t, cs, "tairseach_demo_echo", args)
			var echoed map[string]any
			_ = json.Unmarshal([]byte(text(res)), &echoed)
			if res.IsError || !jsonEqual(echoed, args) {
				t.Fatalf("demo.echo returned %s, want the arguments %v", text(res), args)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestE2EBackendErrorIsToolError(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25")
	res := callTool(t, cs, "tairseach_demo_fail", nil)
	if !res.IsError {
		t.Fatalf("demo.fail: isError false: %s", text(res))
	}
	var body struct {
		Error struct {
			Code    int
			Message string
			Data    map[string]any
		}
	}
	if err := json.Unmarshal([]byte(text(res)), &body); err != nil {
		t.Fatalf("error text is not the backend's error as JSON: %q", text(res))
	}
	if body.Error.Code != -32001 || body.Error.Data["remediation"] == nil {
		t.Fatalf("error = %+v; want code -32001 with data.remediation as the backend sent it", body.Error)
	}
	// The session is still alive.
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("call after a backend error: %s", text(res))
	}
}

func TestE2EBackendDownThenUp(t *testing.T) {
	e := newEnv(t)
	cs := connect(t, e, "2025-11-25")
	res := callTool(t, cs, "tairseach_server_status", nil)
	if !res.IsError || !strings.Contains(text(res), e.socket) || !strings.Contains(text(res), "running") {
		t.Fatalf("backend down: isError %v, %q; want an error naming the socket and asking whether the server is running", res.IsError, text(res))
	}
	b := startBackend(t, e.socket)
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("after the backend started: %s", text(res))
	}
	// Restart: the pooled connection is dead; the next call redials.
	b.stop()
	b.start()
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("after the backend restarted: %s", text(res))
	}
}

func TestE2EUnknownTool(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25")
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_no_such_tool"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown tool: err = %v, want JSON-RPC error %d", err, jsonrpc.CodeInvalidParams)
	}
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("call after an unknown tool: %s", text(res))
	}
}

func TestE2ETimeout(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25", "--call-timeout", "300ms")
	start := time.Now()
	res := callTool(t, cs, "tairseach_demo_slow", map[string]any{"ms": 5000})
	if !res.IsError || !strings.Contains(text(res), "300ms") {
		t.Fatalf("slow call: isError %v, %q; want a timeout error naming the limit", res.IsError, text(res))
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("timed-out call took %v", d)
	}
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("call after a timeout: %s", text(res))
	}
}

func TestE2EResultTooLarge(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25", "--max-result-bytes", "100000", "--result-budget", "off")
	res := callTool(t, cs, "tairseach_demo_blob", map[string]any{"bytes": 200000})
	if !res.IsError || !strings.Contains(text(res), "too large") || !strings.Contains(text(res), "100000") {
		t.Fatalf("oversized result: isError %v, %.300q", res.IsError, text(res))
	}
	res = callTool(t, cs, "tairseach_demo_blob", map[string]any{"bytes": 50000})
	if res.IsError || len(text(res)) < 50000 {
		t.Fatalf("result under the limit: isError %v, %d bytes", res.IsError, len(text(res)))
	}
}

// TestE2EOutputSchemaModes checks each --output-schemas mode: whether
// tools/list advertises outputSchemas and results carry structuredContent.
func TestE2EOutputSchemaModes(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	for _, tt := range []struct {
		flag       string
		advertised bool
	}{
		{"", false}, {"--output-schemas=warn", false}, {"--output-schemas=off", false},
		{"--output-schemas=strict", true}, {"--output-schemas=on", true},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			var extra []string
			if tt.flag != "" {
				extra = append(extra, tt.flag)
			}
			cs := connect(t, e, "2025-11-25", extra...)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Name == "tairseach_result_part" {
					continue // the bridge's own, with no outputSchema
				}
				if (tool.OutputSchema != nil) != tt.advertised {
					t.Fatalf("%s: outputSchema %s, want advertised %v", tool.Name, tool.OutputSchema, tt.advertised)
				}
			}
			res := callTool(t, cs, "tairseach_server_status", nil)
			if res.IsError || (res.StructuredContent != nil) != tt.advertised {
				t.Fatalf("isError %v, structuredContent %v, want structuredContent %v", res.IsError, res.StructuredContent, tt.advertised)
			}
		})
	}
}

func TestE2EMissingManifestsDirIsNotFatal(t *testing.T) {
	e := newEnv(t)
	e.manifests = filepath.Join(shortDir(t), "nope")
	cs := connect(t, e, "2025-11-25")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(list.Tools) != 0 {
		t.Fatalf("missing manifests dir: %v tools, err %v", list, err)
	}
}
