package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestE2ESocketFoundWhenItAppears starts the bridge, as Claude Desktop does
// at login, before the Tairseach app: HOME has no socket, and no --socket or
// TAIRSEACH_SOCKET is set. The bridge must find the socket as soon as the
// app creates it, and follow it when the app restarts, without a restart of
// its own.
func TestE2ESocketFoundWhenItAppears(t *testing.T) {
	home := shortDir(t)
	primary := filepath.Join(home, ".tairseach", "tairseach.sock")
	if err := os.MkdirAll(filepath.Dir(primary), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bridgeBin, "--manifests", filepath.Join(repoRoot, "manifests.example"), "--log-level", "debug")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
	down := func(path string) {
		t.Helper()
		res := callTool(t, cs, "tairseach_server_status", nil)
		if !res.IsError || !strings.Contains(text(res), "not reachable at "+path+":") {
			t.Fatalf("no server: isError %v, %q; want it not reachable at %s", res.IsError, text(res), path)
		}
	}
	up := func(when string) {
		t.Helper()
		if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
			t.Fatalf("%s: %s", when, text(res))
		}
	}

	down(primary) // the error names the default path
	b := startBackend(t, primary)
	up("once the app created its socket")
	b.stop()
	b.start() // the app restarts: a new socket file at the same path
	up("after the app restarted")
	b.stop()
	down(primary)

	// The /tmp fallback is used when the default socket does not exist, and
	// left when it does (TestResolveLeavesOldPath in socketrpc checks the
	// move with both servers up).
	fallback := fmt.Sprintf("/tmp/tairseach-%d.sock", os.Getuid())
	if _, err := os.Lstat(fallback); err == nil {
		t.Logf("%s exists, not testing the fallback", fallback)
		return
	}
	fb := startBackend(t, fallback)
	up("with a server at the fallback path")
	fb.stop()
	down(primary)
	startBackend(t, primary)
	up("with the server back at the default path")
}
