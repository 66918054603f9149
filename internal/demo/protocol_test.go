package demo_test

// Tests of the demo server as a JSON-RPC 2.0 peer: errors, notifications,
// batches, framing, connections, shutdown and its socket.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
)

func TestErrors(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	tests := []struct {
		name   string
		line   string
		code   int
		wantID string
	}{
		{"syntax", `{"jsonrpc":"2.0","id":1,`, -32700, "null"},
		{"blank line", ``, -32700, "null"},
		{"bad batch", `[{"jsonrpc":"2.0"`, -32700, "null"},
		{"version", `{"jsonrpc":"1.0","id":1,"method":"server.status"}`, -32600, "1"},
		{"no method", `{"jsonrpc":"2.0","id":"a"}`, -32600, `"a"`},
		{"method type", `{"jsonrpc":"2.0","id":3,"method":7}`, -32600, "3"},
		{"not an object", `42`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"contacts.delete","params":{"id":"c-001"}}`, -32601, "4"},
		{"limit type", `{"jsonrpc":"2.0","id":5,"method":"contacts.list","params":{"limit":"x"}}`, -32602, "5"},
		{"limit zero", `{"jsonrpc":"2.0","id":5,"method":"contacts.list","params":{"limit":0}}`, -32602, "5"},
		{"offset negative", `{"jsonrpc":"2.0","id":5,"method":"contacts.list","params":{"offset":-1}}`, -32602, "5"},
		{"params string", `{"jsonrpc":"2.0","id":5,"method":"contacts.list","params":"x"}`, -32602, "5"},
		{"get no id", `{"jsonrpc":"2.0","id":6,"method":"contacts.get","params":{}}`, -32602, "6"},
		{"search no query", `{"jsonrpc":"2.0","id":6,"method":"contacts.search"}`, -32602, "6"},
		{"slow negative", `{"jsonrpc":"2.0","id":7,"method":"demo.slow","params":{"ms":-1}}`, -32602, "7"},
		{"slow float", `{"jsonrpc":"2.0","id":7,"method":"demo.slow","params":{"ms":1.5}}`, -32602, "7"},
		{"blob negative", `{"jsonrpc":"2.0","id":8,"method":"demo.blob","params":{"bytes":-1}}`, -32602, "8"},
		{"not found", `{"jsonrpc":"2.0","id":9,"method":"contacts.get","params":{"id":"zz"}}`, -32002, "9"},
		{"invalid notification", `{"jsonrpc":"1.0","method":"server.status"}`, -32600, "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.send(tt.line + "\n")
			r := parseResponse(t, c.recv())
			if r.Error == nil || r.Error.Code != tt.code || r.Error.Message == "" {
				t.Errorf("got result %s, error %+v; want code %d", r.Result, r.Error, tt.code)
			}
			if r.Result != nil {
				t.Errorf("error response also has a result: %s", r.Result)
			}
			if string(r.ID) != tt.wantID {
				t.Errorf("id = %s, want %s", r.ID, tt.wantID)
			}
		})
	}
	// The connection survives all of that.
	c.t = t
	var st struct{ Status string }
	c.result("server.status", "", &st)
}

func TestNotifications(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"server.status"}`,
		`{"jsonrpc":"2.0","id":null,"method":"demo.echo","params":{"a":1}}`,
		`{"jsonrpc":"2.0","method":"no.such.method"}`,
		`{"jsonrpc":"2.0","method":"demo.fail"}`,
		`[{"jsonrpc":"2.0","method":"server.status"},{"jsonrpc":"2.0","method":"demo.echo"}]`,
	} {
		c.send(line + "\n")
		if got := c.recv(); got != "null" {
			t.Errorf("%s: got %s, want null", line, got)
		}
	}
	var st struct{ Status string }
	c.result("server.status", "", &st)
}

func TestBatch(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)

	c.send(`[{"jsonrpc":"2.0","id":1,"method":"demo.echo","params":{"n":1}},` +
		`{"jsonrpc":"2.0","method":"server.status"},` +
		`{"jsonrpc":"2.0","id":2,"method":"nope"},` +
		`{"jsonrpc":"2.0","id":3,"method":"demo.echo","params":{"n":3}}]` + "\n")
	var rs []wireResponse
	if err := json.Unmarshal([]byte(c.recv()), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || string(rs[0].Result) != `{"n":1}` || rs[1].Error == nil || rs[1].Error.Code != -32601 ||
		string(rs[2].ID) != "3" || string(rs[2].Result) != `{"n":3}` {
		t.Errorf("batch responses = %+v", rs)
	}

	// Like the real server, a batch of one is answered with a bare response.
	c.send(`[{"jsonrpc":"2.0","id":7,"method":"demo.echo","params":{"x":1}}]` + "\n")
	r := parseResponse(t, c.recv())
	if string(r.ID) != "7" || string(r.Result) != `{"x":1}` {
		t.Errorf("batch of one = %+v", r)
	}
}

func TestPositionalParams(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	var got contact
	c.result("contacts.get", `["context-token",{"id":"c-002"}]`, &got)
	if got.ID != "c-002" {
		t.Errorf("got %+v, want c-002", got)
	}
	r := c.call("demo.echo", `["context-token",{"a":1}]`)
	if string(r.Result) != `{"a":1}` {
		t.Errorf("positional echo = %s, want the args object", r.Result)
	}
	r = c.call("demo.echo", `[1,2,3]`)
	if string(r.Result) != `[1,2,3]` {
		t.Errorf("echo of an array that is not [token, args] = %s, want it unchanged", r.Result)
	}
	r = c.call("contacts.get", `["only-one"]`)
	if r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("one positional param: got %s / %+v, want -32602", r.Result, r.Error)
	}
}

func TestFraming(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)

	// Several requests in one write, one of them with CRLF, are answered in order.
	c.send(`{"jsonrpc":"2.0","id":1,"method":"demo.echo","params":{"i":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"demo.echo","params":{"i":2}}` + "\r\n" +
		`{"jsonrpc":"2.0","method":"demo.echo"}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"demo.echo","params":{"i":3}}` + "\n")
	for i, want := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"i":1}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"i":2}}`,
		`null`,
		`{"jsonrpc":"2.0","id":3,"result":{"i":3}}`,
	} {
		if got := c.recv(); got != want {
			t.Errorf("line %d = %s, want %s", i, got, want)
		}
	}

	// A request far larger than the server's read buffer.
	big := `{"s":"` + strings.Repeat("y", 300_000) + `"}`
	r := c.call("demo.echo", big)
	if string(r.Result) != big {
		t.Errorf("large echo: got %d bytes, want %d", len(r.Result), len(big))
	}

	// A last request without its newline is still answered before EOF.
	c.send(`{"jsonrpc":"2.0","id":9,"method":"demo.echo","params":{"last":true}}`)
	if err := c.conn.(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":9,"result":{"last":true}}`; got != want {
		t.Errorf("unterminated line: got %s, want %s", got, want)
	}
	if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after last response: %v, want EOF", err)
	}
}

func TestSequentialWithinConnection(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"demo.slow","params":{"ms":300}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"server.status"}` + "\n")
	first := parseResponse(t, c.recv())
	second := parseResponse(t, c.recv())
	if string(first.ID) != "1" || string(second.ID) != "2" {
		t.Errorf("responses came as ids %s, %s; want 1, 2", first.ID, second.ID)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("status answered after %v, before the slow call ahead of it finished", d)
	}
}

func TestConnectionsAreIndependent(t *testing.T) {
	s := startServer(t, demo.Options{})
	slow := dial(t, s.path)
	slow.send(`{"jsonrpc":"2.0","id":1,"method":"demo.slow","params":{"ms":60000}}` + "\n")

	fast := dial(t, s.path)
	start := time.Now()
	var st struct{ Status string }
	fast.result("server.status", "", &st)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("status on a second connection took %v", d)
	}

	// Shutdown interrupts the sleeping call and closes its connection.
	s.stop()
	slow.waitClosed()
}

func TestDelay(t *testing.T) {
	s := startServer(t, demo.Options{Delay: 100 * time.Millisecond})
	c := dial(t, s.path)
	start := time.Now()
	var st struct{ Status string }
	c.result("server.status", "", &st)
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("answered after %v, want at least the 100ms delay", d)
	}
}

func TestShutdown(t *testing.T) {
	before := runtime.NumGoroutine()

	s := startServer(t, demo.Options{})
	var st struct{ Status string }
	idle := dial(t, s.path)
	busy := dial(t, s.path)
	busy.result("server.status", "", &st) // its goroutine is running
	busy.send(`{"jsonrpc":"2.0","id":1,"method":"demo.slow","params":{"ms":60000}}` + "\n")
	dial(t, s.path).result("server.status", "", &st)
	time.Sleep(50 * time.Millisecond) // let busy's server goroutine start sleeping

	s.stop() // fails the test if Serve does not return
	idle.waitClosed()
	busy.waitClosed()
	if _, err := os.Lstat(s.path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket file still there after shutdown: %v", err)
	}
	if _, err := net.Dial("unix", s.path); err == nil {
		t.Errorf("dial succeeded after shutdown")
	}

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after shutdown:\n%s",
				before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeReturnsWhenListenerClosed(t *testing.T) {
	dir, err := os.MkdirTemp("", "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := demo.Listen(filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- demo.New(zerolog.Nop(), demo.Options{}).Serve(context.Background(), ln) }()
	ln.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the listener was closed")
	}
}

func TestListen(t *testing.T) {
	dir, err := os.MkdirTemp("", "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.sock")

	// A socket file left behind by a dead server.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	ln, err := demo.Listen(path)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("socket mode %v, want 0600", mode)
	}

	if _, err := demo.Listen(path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("over a live socket: %v, want an in-use error", err)
	}
	ln.Close()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket file still there after Close: %v", err)
	}

	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Listen(regular); err == nil {
		t.Errorf("over a regular file: no error")
	}
	if b, _ := os.ReadFile(regular); string(b) != "keep me" {
		t.Errorf("regular file was clobbered")
	}
}

func BenchmarkEcho(b *testing.B) {
	dir, err := os.MkdirTemp("", "demo")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := demo.Listen(filepath.Join(dir, "s.sock"))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- demo.New(zerolog.Nop(), demo.Options{}).Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"demo.echo","params":{"name":"tairseach","n":42,"tags":["a","b"]}}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
