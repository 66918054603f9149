package faultbackend_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"

	"github.com/geilt/tairseach-mcp/manifest"
)

func start(t *testing.T, opts faultbackend.Options) *faultbackend.Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "fault")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s, err := faultbackend.Start(filepath.Join(dir, "s.sock"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// rawConn is a hand-driven client connection.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, s *faultbackend.Server) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t, nc, bufio.NewReaderSize(nc, 1<<20)}
}

func (c *rawConn) send(id int, method string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.nc, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"n":%d}}`+"\n", id, method, id); err != nil {
		c.t.Fatal(err)
	}
}

// line reads a line, "" and the error at its end if there is none.
func (c *rawConn) line() (string, error) {
	l, err := c.br.ReadString('\n')
	return l, err
}

func (c *rawConn) want(want string) {
	c.t.Helper()
	got, err := c.line()
	if err != nil || got != want {
		c.t.Fatalf("read %q, %v; want %q", got, err, want)
	}
}

func (c *rawConn) wantEOF(partial string) {
	c.t.Helper()
	got, err := c.line()
	if err != io.EOF || got != partial {
		c.t.Fatalf("read %q, %v; want %q and EOF", got, err, partial)
	}
}

func ok(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"n":%d}}`+"\n", id, id)
}

func TestModes(t *testing.T) {
	s := start(t, faultbackend.Options{Delay: 100 * time.Millisecond, HugeSize: 300 << 10})
	tests := []struct {
		name string
		run  func(c *rawConn)
	}{
		{"ok", func(c *rawConn) { c.send(1, "contacts.list"); c.want(ok(1)); c.send(2, "fault.ok"); c.want(ok(2)) }},
		{"error", func(c *rawConn) {
			c.send(1, "fault.error")
			if l, _ := c.line(); !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,`) {
				t.Errorf("got %q", l)
			}
		}},
		{"close", func(c *rawConn) { c.send(1, "fault.close"); c.wantEOF("") }},
		{"half", func(c *rawConn) { c.send(1, "fault.half"); c.wantEOF(ok(1)[:len(ok(1))/2]) }},
		{"garbage", func(c *rawConn) { c.send(1, "fault.garbage"); c.want("not json\n"); c.send(2, "x"); c.want(ok(2)) }},
		{"wrongid", func(c *rawConn) {
			c.send(1, "fault.wrongid")
			c.want(`{"jsonrpc":"2.0","id":987654321,"result":{"n":1}}` + "\n")
		}},
		{"twice", func(c *rawConn) {
			c.send(1, "fault.twice")
			c.want(ok(1))
			c.want(ok(1))
			c.send(2, "x")
			c.want(ok(2))
		}},
		{"late", func(c *rawConn) {
			c.send(1, "fault.late")
			c.want(ok(1))
			if c.br.Buffered() != 0 {
				t.Error("the second reply came at once")
			}
			c.send(2, "x")
			c.want(ok(1))
			c.want(ok(2))
		}},
		{"silent", func(c *rawConn) {
			c.send(1, "fault.silent")
			c.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if l, err := c.line(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("read %q, %v; want a timeout", l, err)
			}
		}},
		{"huge", func(c *rawConn) {
			c.send(1, "fault.huge")
			l, err := c.line()
			want := `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 300<<10) + "\"}\n"
			if err != nil || l != want {
				t.Errorf("read %d bytes, %v; want %d", len(l), err, len(want))
			}
		}},
		{"slow", func(c *rawConn) {
			begin := time.Now()
			c.send(1, "fault.slow")
			c.want(ok(1))
			if d := time.Since(begin); d < 100*time.Millisecond {
				t.Errorf("slow reply after %v, want at least 100ms", d)
			}
		}},
		{"unknown mode", func(c *rawConn) {
			c.send(1, "fault.nope")
			if l, _ := c.line(); !strings.Contains(l, `unknown mode \"nope\"`) {
				t.Errorf("got %q", l)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(dial(t, s)) })
	}
}

func TestSetModeAndRestart(t *testing.T) {
	s := start(t, faultbackend.Options{})
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v, %v; want mode 0600", fi, err)
	}
	old := dial(t, s)
	old.send(1, "x")
	old.want(ok(1))

	s.SetMode(faultbackend.ModeGarbage)
	c := dial(t, s)
	c.send(1, "contacts.list")
	c.want("not json\n")

	s.SetMode(faultbackend.ModeDrop)
	dial(t, s).wantEOF("")
	s.SetMode("")

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	old.wantEOF("") // closed by the restart
	c = dial(t, s)
	c.send(2, "x")
	c.want(ok(2))

	s.Stop()
	if _, err := net.Dial("unix", s.Path()); err == nil {
		t.Fatal("dial after Stop succeeded")
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file after Stop: %v, want it removed", err)
	}
	if a, r := s.Accepted(), s.Requests(); a != 4 || r != 3 {
		t.Errorf("Accepted, Requests = %d, %d; want 4, 3", a, r)
	}
	s.Stop() // idempotent
}

func TestStopEndsHangingCalls(t *testing.T) {
	s := start(t, faultbackend.Options{Delay: time.Hour})
	for _, m := range []string{"fault.silent", "fault.slow"} {
		dial(t, s).send(1, m)
	}
	for s.Requests() < 2 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop blocked by hanging calls")
	}
}

// The manifest loads as Tairseach manifests do, one tool per fault on its
// method, routed to the fault socket.
func TestManifest(t *testing.T) {
	b := faultbackend.Manifest("/tmp/f.sock",
		faultbackend.Tool{Mode: faultbackend.ModeOK, Description: "Echo."},
		faultbackend.Tool{Mode: faultbackend.ModeSilent, TimeoutMs: 100})
	f, err := manifest.ParseFile("fault.json", b, manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tools) != 2 {
		t.Fatalf("got %d tools, want 2", len(f.Tools))
	}
	ok, silent := f.Tools[0], f.Tools[1]
	if ok.Name != "tairseach_fault_ok" || ok.Method != "fault.ok" || ok.Socket != "/tmp/f.sock" || ok.Description != "Echo." {
		t.Errorf("ok tool: %+v", ok)
	}
	if silent.Method != "fault.silent" || silent.TimeoutMs != 100 {
		t.Errorf("silent tool: %+v", silent)
	}
}
