package socketrpc_test

// Tests of a client whose server is unavailable, slow or goes away (errors,
// contexts, closing, goroutines left), and the benchmarks.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string)
		wantErr error // besides ErrUnavailable; nil for none
	}{
		{"socket missing", func(t *testing.T, path string) {}, syscall.ENOENT},
		{"stale socket refuses", func(t *testing.T, path string) {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close()
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, syscall.ECONNREFUSED},
		// Found by CheckSocketFile before dialling.
		{"not a socket", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := socketPath(t)
			tt.setup(t, path)
			c := newClient(t, path, socketrpc.Options{})
			for _, err := range []error{
				func() error { _, err := c.Call(context.Background(), "m", nil); return err }(),
				c.Ping(context.Background()),
			} {
				if !errors.Is(err, socketrpc.ErrUnavailable) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("error = %v, want ErrUnavailable wrapping %v", err, tt.wantErr)
				}
				for _, want := range []string{path, "is the Tairseach server running?"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
			}

			// Recovery once the server is up.
			os.Remove(path)
			b := &backend{t: t, path: path, handle: echo}
			b.start()
			t.Cleanup(b.stop)
			if err := c.Ping(context.Background()); err != nil {
				t.Fatal(err)
			}
			mustEcho(t, c, `{}`)
		})
	}
}

// silent is a handler that never answers method "silent", and counts them.
func silent(n *atomic.Int64) handlerFunc {
	return func(w io.Writer, req request) bool {
		if req.Method == "silent" {
			n.Add(1)
			return false
		}
		return echo(w, req)
	}
}

func TestContext(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
		min     time.Duration
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded, 100 * time.Millisecond},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, 100 * time.Millisecond},
		{"already cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			b := newBackend(t, silent(&n))
			c := newClient(t, b.path, socketrpc.Options{})
			mustEcho(t, c, `{}`)
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			_, err := c.Call(ctx, "silent", nil)
			elapsed := time.Since(start)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Call error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), b.path) {
				t.Errorf("error %q does not name the socket", err)
			}
			if elapsed < tt.min || elapsed > tt.min+500*time.Millisecond {
				t.Errorf("Call returned after %v, want about %v", elapsed, tt.min)
			}
			mustEcho(t, c, `{"after":1}`)
		})
	}
}

func TestContextWhileWaitingForConnection(t *testing.T) {
	var n atomic.Int64
	b := newBackend(t, silent(&n))
	c := newClient(t, b.path, socketrpc.Options{PoolSize: 1})

	holdCtx, release := context.WithCancel(context.Background())
	held := make(chan error, 1)
	go func() {
		_, err := c.Call(holdCtx, "silent", nil)
		held <- err
	}()
	waitFor(t, func() bool { return n.Load() == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "echo", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a free connection") {
		t.Fatalf("Call error = %v, want deadline while waiting", err)
	}
	release()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Fatalf("held call error = %v, want context.Canceled", err)
	}
	mustEcho(t, c, `{}`)
}

func TestCloseWithCallsInFlight(t *testing.T) {
	base := runtime.NumGoroutine()
	var n atomic.Int64
	b := newBackend(t, silent(&n))
	c := socketrpc.New(b.path, socketrpc.Options{PoolSize: 2, Logger: zerolog.Nop()})
	mustEcho(t, c, `{}`)

	// Two calls hang on the server; two more wait for a connection.
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := c.Call(context.Background(), "silent", nil)
			errs <- err
		}()
	}
	waitFor(t, func() bool { return n.Load() == 2 })
	time.Sleep(10 * time.Millisecond) // let the other two block waiting
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		select {
		case err := <-errs:
			if !errors.Is(err, socketrpc.ErrClosed) {
				t.Errorf("in-flight call error = %v, want ErrClosed", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("call still blocked after Close")
		}
	}
	if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, socketrpc.ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, socketrpc.ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	b.stop()
	waitFor(t, func() bool { return runtime.NumGoroutine() <= base })
}

func TestNoGoroutinesLeft(t *testing.T) {
	base := runtime.NumGoroutine()
	var n atomic.Int64
	b := newBackend(t, silent(&n))
	c := socketrpc.New(b.path, socketrpc.Options{Logger: zerolog.Nop()})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			mustEcho(t, c, fmt.Sprintf(`{"i":%d}`, i))
			ctx2, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel2()
			if _, err := c.Call(ctx2, "silent", nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("silent call = %v, want deadline", err)
			}
		})
	}
	wg.Wait()
	c.Close()
	b.stop()
	waitFor(t, func() bool { return runtime.NumGoroutine() <= base })
}

// waitFor polls cond for up to two seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("condition not met in 2s; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fixed replies {"ok":true} to everything, echoing the id without decoding
// the request, so that benchmarks measure the client.
func fixed(w io.Writer, req request) bool {
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"ok":true}}`+"\n")
	return false
}

var benchParams = json.RawMessage(`{"query":"Ada","limit":10}`)

func BenchmarkCallSequential(b *testing.B) {
	be := newBackend(b, fixed)
	for _, bc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"timeout", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := newClient(b, be.path, socketrpc.Options{})
			ctx, cancel := bc.ctx()
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(ctx, "contacts.search", benchParams); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCallParallel(b *testing.B) {
	be := newBackend(b, fixed)
	c := newClient(b, be.path, socketrpc.Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Call(context.Background(), "contacts.search", benchParams); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRawRoundTrip is the floor: the same exchange with the same
// server, written and read by hand on one connection.
func BenchmarkRawRoundTrip(b *testing.B) {
	be := newBackend(b, fixed)
	nc, err := net.Dial("unix", be.path)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"contacts.search","params":{"query":"Ada","limit":10}}` + "\n")
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		n := 0
		for n == 0 || buf[n-1] != '\n' {
			m, err := nc.Read(buf[n:])
			if err != nil {
				b.Fatal(err)
			}
			n += m
		}
	}
}

func TestTrailingBytesDiscardConnection(t *testing.T) {
	b := newBackend(t, replies(map[string]string{
		"extra": `{"jsonrpc":"2.0","id":ID,"result":1}` + "\n" + `{"jsonrpc":"2.0","id":99999,"result":2}` + "\n",
	}))
	c := newClient(t, b.path, socketrpc.Options{})
	res, err := c.Call(context.Background(), "extra", nil)
	if err != nil || string(res) != "1" {
		t.Fatalf("Call = %s, %v; want 1", res, err)
	}
	// The stray line is not taken for the next reply: that connection is gone.
	mustEcho(t, c, `{}`)
	if n := b.accepted.Load(); n != 2 {
		t.Errorf("used %d connections, want 2", n)
	}
}
