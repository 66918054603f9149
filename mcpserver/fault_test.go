package mcpserver_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
	"github.com/geilt/tairseach-mcp/mcpserver"
)

// TestFaults drives the server through a real MCP session against a backend
// that misbehaves in one way per case. Each case checks the isError text
// names the cause and the socket, that the next call succeeds once the
// backend behaves, and (in newFaultEnv) that nothing leaks.
func TestFaults(t *testing.T) {
	tests := []struct {
		name string
		// before runs before the failing call; after restores the backend.
		before, after func(e *faultEnv)
		mode          faultbackend.Mode
		want          []string // in the isError text; PATH stands for the socket
		wantAny       []string // at least one of these, too
	}{
		{
			name:   "backend not running",
			before: func(e *faultEnv) { e.be.Stop() },
			after:  func(e *faultEnv) { restart(e) },
			mode:   faultbackend.ModeOK,
			want:   []string{"not reachable at PATH", "no such file or directory", "is the Tairseach app running?"},
		},
		{
			name: "stale socket refuses connections",
			before: func(e *faultEnv) {
				e.be.Stop()
				ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: e.path, Net: "unix"})
				if err != nil {
					e.t.Fatal(err)
				}
				ln.SetUnlinkOnClose(false)
				ln.Close()
				if err := os.Chmod(e.path, 0o600); err != nil {
					e.t.Fatal(err)
				}
			},
			after: func(e *faultEnv) { os.Remove(e.path); restart(e) },
			mode:  faultbackend.ModeOK,
			want:  []string{"not reachable at PATH", "connection refused"},
		},
		{
			name:   "socket writable by others",
			before: func(e *faultEnv) { restart(e); chmod(e, 0o666) },
			after:  func(e *faultEnv) { chmod(e, 0o600) },
			mode:   faultbackend.ModeOK,
			want:   []string{"refusing socket PATH: it is writable by group and others (mode 0666); run chmod 600 PATH"},
		},
		{
			name:    "connection closed on accept",
			before:  func(e *faultEnv) { e.be.SetMode(faultbackend.ModeDrop) },
			after:   func(e *faultEnv) { e.be.SetMode("") },
			mode:    faultbackend.ModeOK,
			want:    []string{"PATH"},
			wantAny: []string{"broken pipe", "connection reset by peer", "closed without replying"},
		},
		{
			name: "connection closed after reading the request",
			mode: faultbackend.ModeClose,
			want: []string{"PATH", "closed the connection during fault.close", "closed without replying", "may or may not have run"},
		},
		{
			name: "connection closed mid-reply",
			mode: faultbackend.ModeCloseMidReply,
			want: []string{"PATH", "closed the connection during fault.half", "closed mid-reply"},
		},
		{
			name: "garbage",
			mode: faultbackend.ModeGarbage,
			want: []string{"server at PATH sent a malformed reply to fault.garbage", "decoding reply", `"not json"`, "try again"},
		},
		{
			name: "wrong id",
			mode: faultbackend.ModeWrongID,
			want: []string{"server at PATH sent a malformed reply to fault.wrongid", "987654321", "does not match request id"},
		},
		{
			name: "never answers",
			mode: faultbackend.ModeSilent,
			want: []string{"no reply from the tairseach server at PATH within 500ms (method fault.silent)"},
		},
		{
			name: "100 MB reply",
			mode: faultbackend.ModeHuge,
			want: []string{"result too large", "narrow the request"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFaultEnv(t, mcpserver.Config{CallTimeout: 500 * time.Millisecond}, faultbackend.Options{})
			e.mustOK(1) // the failing call may reuse this connection
			if tt.before != nil {
				tt.before(e)
			}
			res := e.call(tt.mode, `{"fault":1}`)
			text := resultText(t, res)
			if !res.IsError {
				t.Fatalf("fault.%s = %q, want isError", tt.mode, text)
			}
			t.Logf("isError: %s", text)
			for _, want := range tt.want {
				if want = strings.ReplaceAll(want, "PATH", e.path); !strings.Contains(text, want) {
					t.Errorf("isError text %q\ndoes not contain %q", text, want)
				}
			}
			if len(tt.wantAny) > 0 && !containsAny(text, tt.wantAny) {
				t.Errorf("isError text %q\ncontains none of %q", text, tt.wantAny)
			}
			if tt.after != nil {
				tt.after(e)
			}
			e.mustOK(2)
			e.mustOK(3)
		})
	}
}

func restart(e *faultEnv) {
	e.t.Helper()
	if err := e.be.Restart(); err != nil {
		e.t.Fatal(err)
	}
}

func chmod(e *faultEnv, mode os.FileMode) {
	e.t.Helper()
	if err := os.Chmod(e.path, mode); err != nil {
		e.t.Fatal(err)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestFaultErrorObject(t *testing.T) {
	e := newFaultEnv(t, mcpserver.Config{CallTimeout: 500 * time.Millisecond}, faultbackend.Options{})
	res := e.call(faultbackend.ModeError, `{}`)
	text := resultText(t, res)
	want := `{"error":{"code":-32001,"message":"permission denied: contacts","data":{"permission":"contacts","status":"denied","remediation":"grant access in System Settings"}}}`
	if !res.IsError || text != want {
		t.Fatalf("result = isError %v, %s; want isError, %s", res.IsError, text, want)
	}
	e.mustOK(1)
	if n := e.be.Accepted(); n != 1 {
		t.Errorf("backend accepted %d connections, want 1: an error reply keeps the connection", n)
	}
}

// TestFaultAnswerTwice checks that a reply sent twice is never taken for the
// reply to the next call.
func TestFaultAnswerTwice(t *testing.T) {
	t.Run("in one write", func(t *testing.T) {
		e := newFaultEnv(t, mcpserver.Config{CallTimeout: 500 * time.Millisecond}, faultbackend.Options{})
		res := e.call(faultbackend.ModeTwice, `{"twice":1}`)
		if text := resultText(t, res); res.IsError || text != `{"twice":1}` {
			t.Fatalf("fault.twice = isError %v, %q; want its params", res.IsError, text)
		}
		// socketrpc saw the bytes after the reply and dropped the connection.
		e.mustOK(2)
		e.mustOK(3)
		if n := e.be.Accepted(); n != 2 {
			t.Errorf("backend accepted %d connections, want 2", n)
		}
	})
	t.Run("second copy arrives with the next request", func(t *testing.T) {
		e := newFaultEnv(t, mcpserver.Config{CallTimeout: 500 * time.Millisecond}, faultbackend.Options{})
		res := e.call(faultbackend.ModeTwiceLate, `{"late":1}`)
		if text := resultText(t, res); res.IsError || text != `{"late":1}` {
			t.Fatalf("fault.late = isError %v, %q; want its params", res.IsError, text)
		}
		// The connection looked clean, so it was reused; the stale copy comes
		// first on it. It must not become this call's result: socketrpc
		// rejects it by its id, and the call fails as malformed.
		res = e.call(faultbackend.ModeOK, `{"ok":2}`)
		text := resultText(t, res)
		t.Logf("call after a late duplicate: isError %v: %s", res.IsError, text)
		switch {
		case !res.IsError && text == `{"ok":2}`:
		case res.IsError && strings.Contains(text, "malformed reply") && strings.Contains(text, "does not match request id"):
		default:
			t.Fatalf("call after a late duplicate = isError %v, %q; want its own result or a malformed-reply error", res.IsError, text)
		}
		e.mustOK(3)
		e.mustOK(4)
	})
}

func TestFaultRestartBetweenCalls(t *testing.T) {
	e := newFaultEnv(t, mcpserver.Config{CallTimeout: 500 * time.Millisecond, PoolSize: 2}, faultbackend.Options{})
	for i := range 3 {
		e.mustOK(10 * i)
		restart(e)
		// The pooled connection was closed by the restart: socketrpc finds
		// out on writing and redials once, invisibly.
		e.mustOK(10*i + 1)
	}
	if n := e.be.Accepted(); n != 4 {
		t.Errorf("backend accepted %d connections, want 4", n)
	}
}

// TestFaultSlowConcurrent sends 64 calls at once to a backend that takes a
// second per call and, like the real server, handles the calls of each
// connection one after another. With the default pool of 4 connections
// that takes 16 s; a pool of 16 keeps it near 4 s and tests the same thing:
// calls queue for a connection within their 30 s timeout, and each gets
// exactly its own result.
func TestFaultSlowConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 4 s")
	}
	const calls, pool = 64, 16
	e := newFaultEnv(t, mcpserver.Config{CallTimeout: 30 * time.Second, PoolSize: pool}, faultbackend.Options{Delay: time.Second})
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, calls)
	for i := range calls {
		wg.Go(func() {
			args := fmt.Sprintf(`{"i":%d}`, i)
			res := e.call(faultbackend.ModeSlow, args)
			if text := resultText(t, res); res.IsError || text != args {
				errs <- fmt.Sprintf("call %d = isError %v, %q", i, res.IsError, text)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if n := e.be.Requests(); n != calls {
		t.Errorf("backend received %d requests, want %d", n, calls)
	}
	if n := e.be.Accepted(); n > pool {
		t.Errorf("backend accepted %d connections, want at most %d", n, pool)
	}
	if n := e.be.Pipelined(); n != 0 {
		t.Errorf("%d requests were sent on a connection with a call in flight; the server answers one at a time", n)
	}
	if min := calls / pool * time.Second; elapsed < min {
		t.Errorf("took %v, want at least %v", elapsed, min)
	}
	t.Logf("%d calls of 1 s on %d connections took %v", calls, pool, elapsed)
}
