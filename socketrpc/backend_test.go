package socketrpc_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// request is a request line as the fake backend received it.
type request struct {
	Line   string          // the raw line, without its newline
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// handlerFunc answers one request by writing whatever it likes to w (nothing
// at all leaves the client waiting). Returning true closes the connection.
type handlerFunc func(w io.Writer, req request) (closeConn bool)

// echo replies with the method and params it received.
func echo(w io.Writer, req request) bool {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"method":%q,"params":%s}}`+"\n", req.ID, req.Method, req.Params)
	return false
}

// backend is a small real JSON-RPC server on a Unix socket that serves the
// requests of each connection one after another, as Tairseach does.
type backend struct {
	t        testing.TB
	path     string
	handle   handlerFunc
	accepted atomic.Int64 // connections accepted, over restarts
	requests atomic.Int64 // request lines received, over restarts

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup // the accept loop and one goroutine per connection
}

// socketPath returns a fresh socket path short enough for sun_path.
func socketPath(t testing.TB) string {
	dir, err := os.MkdirTemp("", "srpc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

// newBackend starts a backend on a fresh path; it stops when the test ends.
func newBackend(t testing.TB, handle handlerFunc) *backend {
	b := &backend{t: t, path: socketPath(t), handle: handle}
	b.start()
	t.Cleanup(b.stop)
	return b
}

// start listens on b.path and serves until stop.
func (b *backend) start() {
	b.t.Helper()
	ln, err := net.Listen("unix", b.path)
	if err != nil {
		b.t.Fatal(err)
	}
	// As the Tairseach server does: whatever the umask, the Client refuses
	// a socket that group or others may write to.
	if err := os.Chmod(b.path, 0o600); err != nil {
		b.t.Fatal(err)
	}
	b.mu.Lock()
	b.ln = ln
	b.conns = make(map[net.Conn]struct{})
	b.mu.Unlock()
	b.wg.Add(1)
	go b.serve(ln)
}

func (b *backend) serve(ln net.Listener) {
	defer b.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		if b.conns == nil {
			b.mu.Unlock()
			c.Close()
			return
		}
		b.conns[c] = struct{}{}
		b.accepted.Add(1)
		b.wg.Add(1)
		b.mu.Unlock()
		go b.serveConn(c)
	}
}

func (b *backend) serveConn(c net.Conn) {
	defer b.wg.Done()
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		b.requests.Add(1)
		req := request{Line: string(line[:len(line)-1])}
		if err := json.Unmarshal(line, &req); err != nil {
			fmt.Fprintf(c, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`+"\n")
			continue
		}
		if b.handle(c, req) {
			return
		}
	}
}

// stop closes the listener (removing the socket file) and every connection,
// and waits for the server's goroutines.
func (b *backend) stop() {
	b.mu.Lock()
	if b.ln != nil {
		b.ln.Close()
		b.ln = nil
	}
	for c := range b.conns {
		c.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.wg.Wait()
}
