// Package socketrpc is a JSON-RPC 2.0 client for the Tairseach server's Unix
// domain socket.
//
// The server reads newline-framed requests and answers the requests of one
// connection one after another, writing a literal null line for
// notifications. A Client therefore keeps a small pool of persistent
// connections with one request in flight on each, dials lazily, and redials
// once when a reused connection turns out to have been closed by a server
// restart. Each new connection is first checked to lead to a socket and a
// server of the current user's own (see CheckSocketFile and CheckPeer), as the
// server checks its callers. Results are returned as raw JSON; the package
// knows nothing of what the methods mean.
package socketrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero fields of Options.
const (
	DefaultPoolSize         = 8 // the server answers one request at a time per connection
	DefaultMaxResponseBytes = 16 << 20
	DefaultDialTimeout      = 2 * time.Second
)

const (
	readBufSize = 32 << 10 // per connection; longer lines spill into conn.long
	keepScratch = 1 << 20  // scratch buffers larger than this are dropped after use
	// resolveEvery is how stale the path an idle connection is checked
	// against may be: Resolve costs a stat or two, too much for every call.
	resolveEvery = time.Second
)

// reqBufs holds buffers for request lines, each used by one call at a time.
var reqBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// aLongTimeAgo is a deadline in the past, set to interrupt blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// Options configures a Client. Zero fields take the defaults.
type Options struct {
	PoolSize         int           // max concurrent connections; default DefaultPoolSize
	MaxResponseBytes int           // cap on one reply line; default 16 MiB
	DialTimeout      time.Duration // default 2s
	// Insecure skips the checks made on every new connection: that the
	// socket file is owned by the current user and not writable by group or
	// others (CheckSocketFile), and that the server runs as the current user
	// (CheckPeer). A failed check is an error wrapping ErrUntrusted.
	Insecure bool
	// Resolve, if set, chooses the socket path anew for every connection
	// the Client opens, instead of the path given to New: a server that
	// creates its socket after the Client was made, or moves it when it
	// restarts, is found on the next call. The checks above apply to the
	// path it returns.
	Resolve func() string
	Logger  zerolog.Logger
}

// Client calls methods on a Tairseach server over its Unix socket. It is safe
// for concurrent use.
//
// A Client starts no goroutines: every call runs on its caller's goroutine,
// and idle connections are just kept in a list. (A call whose context ends
// while it waits on the socket has a short-lived goroutine from
// context.AfterFunc interrupt the I/O.)
type Client struct {
	path     string        // as given to New
	resolve  func() string // nil: always path
	resolved atomic.Pointer[resolvedPath]
	maxResp  int
	dialer   net.Dialer
	insecure bool
	log      zerolog.Logger
	nextID   atomic.Uint64
	slots    chan struct{} // a token per call holding or dialling a connection; cap PoolSize
	done     chan struct{} // closed by Close, wakes callers waiting for a slot
	isClosed atomic.Bool   // set by Close, under mu

	mu    sync.Mutex
	idle  []*conn            // connections free for the next call, most recent last
	conns map[*conn]struct{} // every open connection, idle or in use; nil after Close
}

// resolvedPath is what Options.Resolve returned, and when.
type resolvedPath struct {
	path string
	at   time.Time
}

// conn is one connection. The fields are owned by whichever call holds the
// conn (taken from the idle list or dialled); Close may close nc under it,
// which makes that call's I/O fail.
type conn struct {
	nc     net.Conn
	path   string // the socket path it was dialled on
	br     *bufio.Reader
	long   []byte // reply lines longer than br's buffer
	reply  wireReply
	reused bool // a call has completed on it, so the server may since have closed it
}

// New returns a Client for the socket at path. It does not connect: the first
// call does.
func New(path string, opts Options) *Client {
	if opts.PoolSize <= 0 {
		opts.PoolSize = DefaultPoolSize
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	log := opts.Logger
	if opts.Resolve == nil {
		log = log.With().Str("socket", path).Logger()
	}
	return &Client{
		path:     path,
		resolve:  opts.Resolve,
		maxResp:  opts.MaxResponseBytes,
		dialer:   net.Dialer{Timeout: opts.DialTimeout},
		insecure: opts.Insecure,
		log:      log,
		slots:    make(chan struct{}, opts.PoolSize),
		done:     make(chan struct{}),
		conns:    make(map[*conn]struct{}),
	}
}

// Path returns the socket path the Client connects to: the path given to
// New, or where Options.Resolve points now.
func (c *Client) Path() string { return c.pathNow(true) }

// pathNow returns the socket path: with Options.Resolve, what it returns
// now if fresh, else what it returned within resolveEvery.
func (c *Client) pathNow(fresh bool) string {
	if c.resolve == nil {
		return c.path
	}
	if r := c.resolved.Load(); !fresh && r != nil && time.Since(r.at) < resolveEvery {
		return r.path
	}
	p := c.resolve()
	c.resolved.Store(&resolvedPath{path: p, at: time.Now()})
	return p
}

// Call sends one request and waits for its reply. Nil params are sent as {}.
// It returns the raw result (a copy the caller owns), or a *Error if the
// server answered with an error object, or a *CallError that names the
// socket path and wraps ErrUnavailable, ErrUntrusted, ErrClosed, ErrProtocol,
// ErrTooLarge, a *ClosedError or the context's error.
//
// ctx bounds every step: waiting for a connection, dialling, writing and
// reading. A call interrupted after its request was written closes its
// connection, since the reply may still arrive on it.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := c.call(ctx, method, params)
	if err != nil {
		switch e := err.(type) {
		case *Error:
			return nil, err
		case *CallError:
			e.Method = method
			return nil, e
		}
		return nil, &CallError{Method: method, Path: c.Path(), Err: err}
	}
	return res, nil
}

func (c *Client) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, &CallError{Path: c.Path(), Err: err}
	}
	id := c.nextID.Add(1)
	w := reqBufs.Get().(*bytes.Buffer)
	defer func() {
		if w.Cap() <= keepScratch {
			reqBufs.Put(w)
		}
	}()
	if err := appendRequest(w, id, method, params); err != nil {
		return nil, &CallError{Path: c.Path(), Op: "encoding request", Err: err}
	}
	req := w.Bytes()

	if err := c.acquire(ctx); err != nil {
		return nil, &CallError{Path: c.Path(), Op: "waiting for a free connection", Err: err}
	}
	defer c.release()
	cn, err := c.take(ctx)
	if err != nil {
		return nil, err
	}
	res, retry, err := c.roundTrip(ctx, cn, req, id)
	if !retry {
		return res, err
	}
	c.log.Debug().Err(err).Str("method", method).Msg("reused connection broken, retrying on a new one")
	cn, err = c.dial(ctx)
	if err != nil {
		return nil, err
	}
	res, _, err = c.roundTrip(ctx, cn, req, id)
	return res, err
}

// roundTrip writes req on cn and reads the reply, then returns cn to the idle
// list or closes it. The error is a *Error for an error object. retry reports
// that cn was a reused connection that failed before any byte of a reply was
// read, the sign of a server that closed it while idle.
func (c *Client) roundTrip(ctx context.Context, cn *conn, req []byte, id uint64) (res json.RawMessage, retry bool, err error) {
	var stop func() bool
	if ctx.Done() != nil {
		nc := cn.nc
		stop = context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	}
	stage, n := "writing request", 0 // n counts the bytes of reply read
	_, err = cn.nc.Write(req)
	wrote := err == nil
	if wrote {
		stage = "reading reply"
		res, n, err = readReply(cn.br, c.maxResp, &cn.long, &cn.reply, id)
	}
	interrupted := stop != nil && !stop()
	if cap(cn.long) > keepScratch {
		cn.long = nil
	}

	if _, isRPC := err.(*Error); err == nil || isRPC {
		// A whole reply was read, so the connection is in step, unless the
		// server sent more than the reply: whatever follows would be taken
		// for the next call's reply. If ctx fired meanwhile the deadline may
		// be poisoned; drop the connection rather than reset it.
		if interrupted || cn.br.Buffered() > 0 {
			c.discard(cn)
		} else {
			cn.reused = true
			c.put(cn)
		}
		return res, false, err
	}

	c.discard(cn)
	fail := &CallError{Path: cn.path, Op: stage, Err: err}
	switch {
	case interrupted:
		fail.Err = ctx.Err()
		return nil, false, fail
	case c.isClosed.Load():
		fail.Err = ErrClosed
		return nil, false, fail
	}
	if errors.Is(err, ErrProtocol) || errors.Is(err, ErrTooLarge) {
		return nil, false, fail
	}
	// Like net/http with a reused connection: a server that closed it while
	// idle shows as EPIPE on write or ECONNRESET (our request unread). EOF
	// after a write means the server read the request and may have run it:
	// not retried, as the method may not be idempotent.
	retry = cn.reused && n == 0 &&
		(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET))
	if err == io.EOF || err == io.ErrUnexpectedEOF || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		fail.Err = &ClosedError{MidReply: n > 0, Fresh: !cn.reused, Err: err}
	}
	return nil, retry, fail
}

// acquire waits for a slot, which entitles the caller to one connection.
func (c *Client) acquire(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return ErrClosed
	}
}

func (c *Client) release() { <-c.slots }

// take returns an idle connection, or dials one. Dialling only when none is
// idle keeps the number of connections within the number of slots. With
// Options.Resolve, an idle connection to a path no longer chosen is closed
// instead: the server has moved.
func (c *Client) take(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	if c.conns == nil {
		c.mu.Unlock()
		return nil, &CallError{Path: c.path, Err: ErrClosed}
	}
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		if c.resolve == nil || cn.path == c.pathNow(false) {
			return cn, nil
		}
		c.log.Debug().Str("path", cn.path).Msg("the socket path has changed: closing an idle connection to the old one")
		c.discard(cn)
		return c.dial(ctx)
	}
	c.mu.Unlock()
	return c.dial(ctx)
}

// dial opens a new connection and registers it so that Close can close it.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	path := c.Path()
	nc, err := c.connect(ctx, path)
	if err != nil {
		return nil, &CallError{Path: path, Op: "connecting", Err: err}
	}
	cn := &conn{nc: nc, path: path, br: bufio.NewReaderSize(nc, readBufSize)}
	c.mu.Lock()
	if c.conns == nil {
		c.mu.Unlock()
		nc.Close()
		return nil, &CallError{Path: path, Err: ErrClosed}
	}
	c.conns[cn] = struct{}{}
	open := len(c.conns)
	c.mu.Unlock()
	c.log.Debug().Str("path", path).Int("open", open).Msg("connected")
	return cn, nil
}

// connect opens a connection to the socket, checking first, unless
// c.insecure, that the socket file and then the server are the current
// user's: one stat and one getsockopt per connection, not per call.
func (c *Client) connect(ctx context.Context, path string) (net.Conn, error) {
	if !c.insecure {
		if err := CheckSocketFile(path); err != nil {
			return nil, err
		}
	}
	nc, err := c.dialer.DialContext(ctx, "unix", path)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, &UnavailableError{Path: path, Err: err, Hint: "is the Tairseach server running?"}
	}
	if !c.insecure {
		if err := CheckPeer(nc, path); err != nil {
			nc.Close()
			return nil, err
		}
	}
	return nc, nil
}

// put returns cn to the idle list, or closes it if the Client is closed.
func (c *Client) put(cn *conn) {
	c.mu.Lock()
	if c.conns == nil {
		c.mu.Unlock()
		cn.nc.Close()
		return
	}
	c.idle = append(c.idle, cn)
	c.mu.Unlock()
}

// discard closes cn, which is not on the idle list, and forgets it.
func (c *Client) discard(cn *conn) {
	cn.nc.Close()
	c.mu.Lock()
	delete(c.conns, cn)
	c.mu.Unlock()
	c.log.Debug().Msg("connection closed")
}

// Ping checks that the server accepts connections, by connecting and
// closing. It does not use the pool.
func (c *Client) Ping(ctx context.Context) error {
	path := c.Path()
	if c.isClosed.Load() {
		return fmt.Errorf("pinging %s: %w", path, ErrClosed)
	}
	nc, err := c.connect(ctx, path)
	if err != nil {
		return fmt.Errorf("pinging %s: %w", path, err)
	}
	return nc.Close()
}

// Close closes every connection. Calls in progress either complete or fail
// with ErrClosed; later calls fail with ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	conns := c.conns
	if conns == nil {
		c.mu.Unlock()
		return nil
	}
	c.conns, c.idle = nil, nil
	c.isClosed.Store(true)
	close(c.done)
	c.mu.Unlock()
	// Closing a connection in use interrupts its call's blocked I/O.
	for cn := range conns {
		cn.nc.Close()
	}
	return nil
}
