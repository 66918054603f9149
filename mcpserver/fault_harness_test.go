package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
)

// faultModes are the faultbackend modes exposed as tools: the tool
// fault.<mode> (MCP name tairseach_fault_<mode>) calls method fault.<mode>.
var faultModes = []faultbackend.Mode{
	faultbackend.ModeOK, faultbackend.ModeError, faultbackend.ModeClose, faultbackend.ModeCloseMidReply,
	faultbackend.ModeGarbage, faultbackend.ModeWrongID, faultbackend.ModeTwice, faultbackend.ModeTwiceLate,
	faultbackend.ModeSilent, faultbackend.ModeHuge, faultbackend.ModeSlow,
	faultbackend.ModeNullID, faultbackend.ModeNullLine, faultbackend.ModeDupKey, faultbackend.ModeTrickle, faultbackend.ModeDeep,
}

// faultManifest is a manifest with one tool per fault mode on socket path.
// The huge tool has a long timeout of its own, so that reading the first
// MiBs of its reply on a busy machine is not mistaken for a hang.
func faultManifest(path string) []byte {
	var tools []faultbackend.Tool
	for _, mode := range faultModes {
		t := faultbackend.Tool{Mode: mode}
		if mode == faultbackend.ModeHuge {
			t.TimeoutMs = 20000
		}
		tools = append(tools, t)
	}
	return faultbackend.Manifest(path, tools...)
}

// faultEnv is a fault backend, an mcpserver.Server whose tools call it, and
// an MCP client session connected to that server in memory.
type faultEnv struct {
	t    *testing.T
	path string
	be   *faultbackend.Server
	srv  *mcpserver.Server
	cs   *mcp.ClientSession
}

// newFaultEnv starts everything, and arranges for the test to end by
// closing it all and checking that no goroutine or file descriptor is left.
func newFaultEnv(t *testing.T, cfg mcpserver.Config, opts faultbackend.Options) *faultEnv {
	t.Helper()
	checkNoLeaks(t) // registered first, so it runs after every other cleanup

	dir, err := os.MkdirTemp("", "fault")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	e := &faultEnv{t: t, path: filepath.Join(dir, "s.sock")}
	if e.be, err = faultbackend.Start(e.path, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.be.Stop)

	f, err := manifest.ParseFile("fault.json", faultManifest(e.path), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	reg := manifest.Build([]*manifest.File{f})
	if len(reg.Tools) != len(faultModes) {
		t.Fatalf("registry has %d tools, want %d: %v", len(reg.Tools), len(faultModes), reg.Problems)
	}
	cfg.DefaultSocket = e.path
	cfg.Logger = zerolog.Nop()
	e.srv = mcpserver.New(cfg, reg)
	t.Cleanup(func() { e.srv.Close() })

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "fault-test", Version: "0"}, nil)
	if e.cs, err = client.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cs.Close() })
	return e
}

// call calls the tool of mode with args and returns its result, failing the
// test if the call gets no result at all.
func (e *faultEnv) call(mode faultbackend.Mode, args string) *mcp.CallToolResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_fault_" + string(mode), Arguments: json.RawMessage(args)})
	if err != nil {
		e.t.Fatalf("tools/call fault.%s: %v", mode, err)
	}
	return res
}

// mustOK calls the ok tool with a fresh argument and checks that it gets
// exactly that back.
func (e *faultEnv) mustOK(n int) {
	e.t.Helper()
	args := fmt.Sprintf(`{"ok":%d}`, n)
	res := e.call(faultbackend.ModeOK, args)
	if text := resultText(e.t, res); res.IsError || text != args {
		e.t.Fatalf("ok call = isError %v, %q; want %s", res.IsError, text, args)
	}
}

// resultText returns the text of a result's single text content.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d contents, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// checkNoLeaks records the goroutines and open file descriptors now, and
// when the test ends (after the cleanups registered later) waits up to five
// seconds for both to be back to at most that.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	// Open the runtime's network poller now, so that its descriptors are in
	// the baseline when this is the first test to use the network.
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			g, f := runtime.NumGoroutine(), openFDs()
			if g <= goroutines && f <= fds {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("leak: %d goroutines (was %d), %d open files (was %d)\n%s\ngoroutines:\n%s",
					g, goroutines, f, fds, listFDs(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// openFDs counts the open file descriptors of the process, or -1 where
// /proc/self/fd does not exist (then the check passes vacuously).
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// listFDs describes the open file descriptors, for a leak report.
func listFDs() string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range entries {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		fmt.Fprintf(&b, "%s -> %s\n", e.Name(), target)
	}
	return b.String()
}
