package socketrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// startFault starts a faultbackend on a fresh socket path.
func startFault(t *testing.T, opts faultbackend.Options) *faultbackend.Server {
	t.Helper()
	s, err := faultbackend.Start(socketPath(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestHostileReplies calls a backend that answers in one odd or hostile
// way, and checks what the Client makes of it, and that the next call on the
// same Client works.
func TestHostileReplies(t *testing.T) {
	tests := []struct {
		mode    faultbackend.Mode
		timeout time.Duration
		check   func(t *testing.T, res json.RawMessage, err error)
	}{
		{faultbackend.ModeNullID, 0, func(t *testing.T, _ json.RawMessage, err error) {
			// The real server's answer to a failed credential load: the
			// only request in flight on the connection is ours.
			var rpcErr *socketrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32011 || rpcErr.Message != "token refresh failed: google" || rpcErr.Data != nil {
				t.Fatalf("err = %v, want the backend's error -32011 as sent", err)
			}
		}},
		{faultbackend.ModeNullLine, 0, wantProtocol("a null line")},
		{faultbackend.ModeDupKey, 0, wantProtocol(`duplicate "id" member`)},
		{faultbackend.ModeBoth, 0, wantProtocol("both result and error")},
		{faultbackend.ModeBadError, 0, wantProtocol("decoding error object")},
		{faultbackend.ModeStringID, 0, wantProtocol("does not match request id")},
		{faultbackend.ModeDeep, 0, wantProtocol("nesting deeper than 10000 levels")},
		{faultbackend.ModeMultiLine, 0, wantProtocol("decoding reply")},
		{faultbackend.ModeHugeExp, 0, wantResult(`{"n":1e999999}`)},
		{faultbackend.ModeSplit, 0, wantResult(`{"x":1}`)},
		{faultbackend.ModeCRLF, 0, wantResult(`{"x":1}`)},
		{faultbackend.ModeBlank, 0, wantResult(`{"x":1}`)},
		{faultbackend.ModeTrickle, 300 * time.Millisecond, func(t *testing.T, _ json.RawMessage, err error) {
			var ce *socketrpc.CallError
			if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) || ce.Op != "reading reply" {
				t.Fatalf("err = %v, want the deadline while reading the reply", err)
			}
		}},
		{faultbackend.ModeOverCap, 0, func(t *testing.T, _ json.RawMessage, err error) {
			var tl *socketrpc.TooLargeError
			if !errors.As(err, &tl) || tl.Limit != 1<<20 {
				t.Fatalf("err = %v, want a TooLargeError at the 1 MiB limit", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			be := startFault(t, faultbackend.Options{HugeSize: 4 << 20})
			c := newClient(t, be.Path(), socketrpc.Options{MaxResponseBytes: 1 << 20})
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			res, err := c.Call(ctx, "fault."+string(tt.mode), json.RawMessage(`{"x":1}`))
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the call took %v", d)
			}
			tt.check(t, res, err)
			res, err = c.Call(context.Background(), "fault.ok", json.RawMessage(`{"next":1}`))
			if err != nil || string(res) != `{"next":1}` {
				t.Fatalf("next call = %s, %v; want its params", res, err)
			}
		})
	}
}

func wantProtocol(detail string) func(*testing.T, json.RawMessage, error) {
	return func(t *testing.T, res json.RawMessage, err error) {
		t.Helper()
		var pe *socketrpc.ProtocolError
		if !errors.As(err, &pe) || !errors.Is(err, socketrpc.ErrProtocol) || !strings.Contains(pe.Detail, detail) {
			t.Fatalf("Call = %.80s, %v; want a ProtocolError saying %q", res, err, detail)
		}
	}
}

func wantResult(want string) func(*testing.T, json.RawMessage, error) {
	return func(t *testing.T, res json.RawMessage, err error) {
		t.Helper()
		if err != nil || string(res) != want {
			t.Fatalf("Call = %s, %v; want %s", res, err, want)
		}
	}
}

// TestEndlessBlankLines checks that blank lines before a reply count toward
// the reply's size limit, so a server streaming them cannot hold a call.
func TestEndlessBlankLines(t *testing.T) {
	b := newBackend(t, func(w io.Writer, req request) bool {
		if req.Method == "blanks" {
			nl := bytes.Repeat([]byte("\n"), 64<<10)
			for range 64 { // 4 MiB
				if _, err := w.Write(nl); err != nil {
					return true
				}
			}
			return true
		}
		return echo(w, req)
	})
	c := newClient(t, b.path, socketrpc.Options{MaxResponseBytes: 1 << 20})
	_, err := c.Call(context.Background(), "blanks", nil)
	var tl *socketrpc.TooLargeError
	if !errors.As(err, &tl) || tl.Size <= 1<<20 {
		t.Fatalf("err = %v, want a TooLargeError past 1 MiB", err)
	}
	mustEcho(t, c, `{"after":1}`)
}

// TestBackendNeverReads checks that a request too big for the socket's
// buffers, sent to a server that accepts but never reads, fails at the
// call's deadline instead of blocking the write for ever.
func TestBackendNeverReads(t *testing.T) {
	be := startFault(t, faultbackend.Options{})
	be.SetMode(faultbackend.ModeNoRead)
	c := newClient(t, be.Path(), socketrpc.Options{})
	// Far more than a Unix socket buffers (about 200 KiB on Linux).
	params := json.RawMessage(`{"big":"` + strings.Repeat("x", 2<<20) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Call(ctx, "fault.ok", params)
	var ce *socketrpc.CallError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) || ce.Op != "writing request" {
		t.Fatalf("err = %v, want the deadline while writing the request", err)
	}
}

// TestPeerDropsConnection is the real server's answer to a client of
// another uid: it closes the connection before reading anything. The error
// says the connection was fresh and closed without a reply.
func TestPeerDropsConnection(t *testing.T) {
	be := startFault(t, faultbackend.Options{})
	be.SetMode(faultbackend.ModeDrop)
	c := newClient(t, be.Path(), socketrpc.Options{Insecure: true})
	_, err := c.Call(context.Background(), "fault.ok", nil)
	var ce *socketrpc.ClosedError
	if !errors.As(err, &ce) || !ce.Fresh || ce.MidReply {
		t.Fatalf("err = %v, want a ClosedError on a fresh connection, before any reply", err)
	}
	if r := ce.Reason(); r != "closed without replying" && r != "connection reset by peer" && r != "broken pipe" {
		t.Errorf("Reason() = %q", r)
	}
}

// TestNeverPipelines runs more concurrent calls than connections against a
// server that, like Tairseach, answers one request at a time per connection,
// and checks no request was sent on a connection before the previous reply.
func TestNeverPipelines(t *testing.T) {
	be := startFault(t, faultbackend.Options{Delay: 20 * time.Millisecond})
	c := newClient(t, be.Path(), socketrpc.Options{PoolSize: 2})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			p := json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
			res, err := c.Call(context.Background(), "fault.slow", p)
			if err != nil || !bytes.Equal(res, p) {
				t.Errorf("call %d = %s, %v; want %s", i, res, err, p)
			}
		})
	}
	wg.Wait()
	if n := be.Pipelined(); n != 0 {
		t.Errorf("%d requests were sent while another was in flight on the same connection", n)
	}
	if n := be.Accepted(); n > 2 {
		t.Errorf("%d connections, want at most 2", n)
	}
}

// TestResolveAtEachConnection checks that Options.Resolve picks the path of
// every new connection, that errors name the path resolved, and that the
// trust checks apply to it.
func TestResolveAtEachConnection(t *testing.T) {
	var (
		mu   sync.Mutex
		path = socketPath(t) // nothing there yet
	)
	first := path
	c := newClient(t, "unused", socketrpc.Options{Resolve: func() string { mu.Lock(); defer mu.Unlock(); return path }})
	_, err := c.Call(context.Background(), "fault.ok", nil)
	var ue *socketrpc.UnavailableError
	var ce *socketrpc.CallError
	if !errors.As(err, &ue) || !errors.As(err, &ce) || ue.Path != first || ce.Path != first || ue.Reason() != "no such file or directory" {
		t.Fatalf("err = %v, want unavailable at %s", err, first)
	}
	be := startFault(t, faultbackend.Options{})
	mu.Lock()
	path = be.Path()
	mu.Unlock()
	if c.Path() != be.Path() {
		t.Errorf("Path() = %s, want %s", c.Path(), be.Path())
	}
	if res, err := c.Call(context.Background(), "fault.ok", json.RawMessage(`{"a":1}`)); err != nil || string(res) != `{"a":1}` {
		t.Fatalf("after the socket appeared: %s, %v", res, err)
	}
	// The server moves: its old connection dies, the next one goes to the new path.
	be.Stop()
	be2 := startFault(t, faultbackend.Options{})
	if err := os.Chmod(be2.Path(), 0o666); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	path = be2.Path()
	mu.Unlock()
	_, err = c.Call(context.Background(), "fault.ok", nil)
	if !errors.Is(err, socketrpc.ErrUntrusted) || !strings.Contains(err.Error(), be2.Path()) {
		t.Fatalf("err = %v, want the resolved socket refused as writable by others", err)
	}
	os.Chmod(be2.Path(), 0o600)
	if _, err := c.Call(context.Background(), "fault.ok", nil); err != nil {
		t.Fatalf("at the new path: %v", err)
	}
}

// TestResolveLeavesOldPath checks that when Options.Resolve points
// elsewhere while the old server still runs (a fallback socket, then the
// default one appears), calls move to the new path within about a second,
// idle connections to the old one notwithstanding.
func TestResolveLeavesOldPath(t *testing.T) {
	oldBe, newBe := startFault(t, faultbackend.Options{}), startFault(t, faultbackend.Options{})
	var mu sync.Mutex
	path := oldBe.Path()
	c := newClient(t, "unused", socketrpc.Options{Resolve: func() string { mu.Lock(); defer mu.Unlock(); return path }})
	for range 3 {
		if _, err := c.Call(context.Background(), "fault.ok", nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	path = newBe.Path()
	mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for newBe.Requests() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("calls still go to the old path after 10s (old server got %d requests)", oldBe.Requests())
		}
		if _, err := c.Call(context.Background(), "fault.ok", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := oldBe.Requests()
	for range 3 {
		if _, err := c.Call(context.Background(), "fault.ok", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := oldBe.Requests(); n != before {
		t.Errorf("the old server got %d more requests after the move", n-before)
	}
}
