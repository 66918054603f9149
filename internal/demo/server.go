// Package demo is a stand-in for the Tairseach server: a small JSON-RPC 2.0
// backend on a Unix domain socket that serves in-memory data. It backs
// `make demo`, the bridge's end-to-end tests and its benchmarks.
//
// It reproduces the real server's wire behaviour: newline-delimited JSON, one
// goroutine per connection that handles its requests strictly one after
// another, one response line per request, and a literal null line for a
// notification (a request without an id, or with a null id).
//
// It also reproduces the server's macOS privacy permissions: the
// permissions.list, permissions.check and permissions.request methods, and
// the -32001 error of a method whose permission is not granted. Every
// permission is granted unless Options.Grants, Options.GrantsFile,
// SetPermission or the demo.setPermission method says otherwise.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Version is reported by server.status; empty means "dev".
	Version string
	// Delay is added before every call, notifications included, to let
	// tests exercise timeouts and cancellation.
	Delay time.Duration
	// CaptureDir is where screen.capture writes its pictures when the call
	// names no path; empty means /tmp, where the real server writes.
	CaptureDir string
	// Grants sets the status of permissions, as ParseGrants returns them;
	// a permission not named is granted.
	Grants map[string]string
	// GrantsFile, when set, is a file of statuses in ParseGrants' form,
	// applied over Grants. It is read again whenever it has changed, checked
	// at each call that consults a status; a missing file counts as empty,
	// and one that cannot be parsed is logged and left unapplied.
	GrantsFile string
	// AddressBook, when over 0, is the number of contacts contacts.list
	// serves, made up from the demo's own; asked for with no limit it
	// answers them whole, as the real server answers every list (about
	// 180 bytes a contact: 2,000 make an address book of 350 KB).
	AddressBook int
}

// Server answers Tairseach-style JSON-RPC calls on the connections of a
// listener. One Server may serve several listeners at once.
type Server struct {
	log     zerolog.Logger
	opts    Options
	started time.Time
	methods map[string]handler
	names   []string // sorted keys of methods, reported by server.status

	blob     blobCache
	book     contactBook
	grants   *grantTable
	captures captures // screen.capture's files, removed when Serve returns
}

// handler answers one call. params is the raw "params" member (empty when
// absent) and is only valid until the handler returns; a handler may return
// it as the result, which is written before params is reused.
type handler func(ctx context.Context, params []byte) (result []byte, err *rpcError)

// New returns a Server that logs to logger.
func New(logger zerolog.Logger, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{log: logger, opts: opts, started: time.Now()}
	s.book.size = opts.AddressBook
	s.captures.dir = opts.CaptureDir
	s.grants = newGrantTable(logger, opts.Grants, opts.GrantsFile)
	s.methods = map[string]handler{
		"server.status":   s.serverStatus,
		"contacts.list":   s.book.contactsList, // contacts.go
		"contacts.get":    contactsGet,
		"contacts.search": contactsSearch,
		"demo.echo":       demoEcho, // methods.go
		"demo.slow":       demoSlow,
		"demo.fail":       demoFail,
		"demo.blob":       s.blob.demoBlob,
		"word_count":      wordCount, // a script tool, served under its name (script.go)
		// Replies shaped like the real server's (realshapes.go).
		"calendar.updateEvent": calendarUpdateEvent,
		"calendar.deleteEvent": calendarDeleteEvent,
		"op.vaults.list":       opVaultsList,
		"demo.huge":            demoHuge,
		"screen.capture":       s.captures.screenCapture, // a real PNG (screen.go)
		// The macOS permissions (permissions.go).
		"permissions.list":    s.grants.permissionsList,
		"permissions.check":   s.grants.permissionsCheck,
		"permissions.request": s.grants.permissionsRequest,
		"demo.setPermission":  s.grants.demoSetPermission,
	}
	for name := range s.methods {
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	return s
}

type statusResult struct {
	Status        string   `json:"status"`
	Version       string   `json:"version"`
	UptimeSeconds int64    `json:"uptimeSeconds"`
	Methods       []string `json:"methods"`
}

// serverStatus answers server.status: the server's version, uptime and
// methods.
func (s *Server) serverStatus(context.Context, []byte) ([]byte, *rpcError) {
	return marshalResult(statusResult{
		Status:        "ok",
		Version:       s.opts.Version,
		UptimeSeconds: int64(time.Since(s.started) / time.Second),
		Methods:       s.names,
	})
}

// Serve accepts connections on ln and serves each in its own goroutine until
// ctx is cancelled or ln is closed. It then closes ln and every connection,
// waits for their goroutines and returns nil; any other accept error is
// returned after the same cleanup.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer s.captures.removeAll()

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex // guards conns and closed
		conns  = make(map[net.Conn]struct{})
		closed bool
	)

	// The closer goroutine owns shutdown: closing the listener unblocks
	// Accept, closing the connections unblocks their readers and writers.
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()

	s.log.Debug().Str("addr", ln.Addr().String()).Msg("serving")
	var err error
	for {
		conn, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil && !errors.Is(aerr, net.ErrClosed) {
				err = fmt.Errorf("accepting connection: %w", aerr)
			}
			break
		}
		mu.Lock()
		if closed {
			mu.Unlock()
			conn.Close()
			break
		}
		conns[conn] = struct{}{}
		mu.Unlock()

		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(ctx, conn)
			mu.Lock()
			delete(conns, conn)
			mu.Unlock()
			conn.Close()
		}()
	}
	cancel()
	wg.Wait()
	s.log.Debug().Str("addr", ln.Addr().String()).Msg("stopped")
	return err
}

// Listen listens on the Unix socket at path with mode 0600. A stale socket
// file left by a dead server is removed first; a socket that still accepts
// connections, or a path that is not a socket, is an error. Closing the
// listener removes the socket file.
func Listen(path string) (net.Listener, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("checking socket path: %w", err)
	case fi.Mode().Type() != fs.ModeSocket:
		return nil, fmt.Errorf("%s exists and is not a socket", path)
	default:
		if c, derr := net.DialTimeout("unix", path, time.Second); derr == nil {
			c.Close()
			return nil, fmt.Errorf("%s is in use by a running server", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket: %w", err)
		}
	}

	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	// The umask already keeps other users from connecting (they lack write
	// permission), so tightening the mode after bind leaves no usable gap.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("setting socket mode: %w", err)
	}
	return ln, nil
}
