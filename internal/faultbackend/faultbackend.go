// Package faultbackend is a JSON-RPC 2.0 server on a Unix socket that
// misbehaves on request, for testing how the bridge copes with a broken or
// hostile Tairseach server.
//
// Like the real server it reads newline-framed requests and answers the
// requests of one connection one after another. Method "fault.<mode>" picks
// the behaviour of one call (see Mode); any other method is answered as
// ModeOK. SetMode forces one behaviour for every call instead, which is the
// only way to get ModeDrop, since it acts before any request is read.
//
// A Server starts one goroutine to accept connections and one per
// connection; Stop closes the listener and every connection and waits for
// them all.
package faultbackend

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how the server answers a call.
type Mode string

// The behaviours. The method of a request selects one as "fault." + mode.
const (
	ModeOK            Mode = "ok"      // reply with the params as the result
	ModeError         Mode = "error"   // reply with error -32001 permission denied, with data
	ModeDrop          Mode = "drop"    // close each new connection as soon as it is accepted, others as ModeClose (SetMode only)
	ModeClose         Mode = "close"   // read the request, then close the connection without a reply
	ModeCloseMidReply Mode = "half"    // write the first half of the reply line, then close
	ModeGarbage       Mode = "garbage" // reply "not json\n"
	ModeWrongID       Mode = "wrongid" // reply with an id other than the request's
	ModeTwice         Mode = "twice"   // write the reply twice, in one write
	ModeTwiceLate     Mode = "late"    // reply; write the same reply again when the next request arrives, before answering it
	ModeSilent        Mode = "silent"  // never reply; keep the connection open until the client closes it
	ModeHuge          Mode = "huge"    // reply with a string result of Options.HugeSize bytes, on one line
	ModeSlow          Mode = "slow"    // wait Options.Delay, then reply as ModeOK

	// Replies a hostile or odd server could send.
	ModeNullID    Mode = "nullid"    // error -32011 with "id": null, as Tairseach answers a failed credential load
	ModeNullLine  Mode = "nullline"  // a literal null line, as Tairseach writes for a notification, and nothing else
	ModeDupKey    Mode = "dupkey"    // the reply with a second "id" member: the request's id, then another
	ModeBoth      Mode = "both"      // a reply with both result and error
	ModeBadError  Mode = "baderror"  // an error object whose code is a string and message a number
	ModeStringID  Mode = "stringid"  // the reply with the id as a string ("1" for 1)
	ModeHugeExp   Mode = "hugeexp"   // result {"n":1e999999}, a number no float64 holds
	ModeDeep      Mode = "deep"      // a result nested 100000 arrays deep
	ModeSplit     Mode = "split"     // the reply written 3 bytes at a time
	ModeTrickle   Mode = "trickle"   // the reply, after 200 spaces, one byte every 50ms
	ModeOverCap   Mode = "overcap"   // a line of Options.HugeSize bytes, then the reply
	ModeCRLF      Mode = "crlf"      // the reply ended by \r\n
	ModeBlank     Mode = "blank"     // blank lines, then the reply
	ModeNoRead    Mode = "noread"    // accept connections and never read from them (SetMode only)
	ModeMultiLine Mode = "multiline" // the reply pretty-printed over several lines
)

// Defaults for Options fields left zero.
const (
	DefaultDelay    = time.Second
	DefaultHugeSize = 100 << 20
)

// Options tune the faults. The zero value gives the defaults.
type Options struct {
	Delay    time.Duration // of ModeSlow
	HugeSize int           // bytes of the ModeHuge result
}

// Tool is a manifest tool whose calls the server answers in Mode: its name
// and method are "fault." + Mode.
type Tool struct {
	Mode        Mode
	Description string
	TimeoutMs   int
}

// Manifest returns a Tairseach manifest, id "fault", with tools on the
// socket at path.
func Manifest(path string, tools ...Tool) []byte {
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema"`
		TimeoutMs   int             `json:"timeoutMs,omitempty"`
	}
	m := struct {
		ID             string `json:"id"`
		Tools          []tool `json:"tools"`
		Implementation struct {
			Socket  string            `json:"socket"`
			Methods map[string]string `json:"methods"`
		} `json:"implementation"`
	}{ID: "fault"}
	m.Implementation.Socket = path
	m.Implementation.Methods = map[string]string{}
	for _, t := range tools {
		name := "fault." + string(t.Mode)
		m.Tools = append(m.Tools, tool{Name: name, Description: t.Description,
			InputSchema: json.RawMessage(`{"type":"object"}`), TimeoutMs: t.TimeoutMs})
		m.Implementation.Methods[name] = name
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err) // only plain values above
	}
	return b
}

// Server is a misbehaving JSON-RPC server.
type Server struct {
	opts     Options
	path     string
	forced   atomic.Value // Mode: if not "", used for every request
	accepted atomic.Int64
	requests atomic.Int64
	pipeline atomic.Int64 // requests that arrived while one was being answered

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	done  chan struct{} // closed by Stop, ends ModeSlow waits
	wg    sync.WaitGroup
}

// Start listens on the Unix socket at path with mode 0600 and serves until
// Stop.
func Start(path string, opts Options) (*Server, error) {
	opts.Delay = cmp.Or(opts.Delay, DefaultDelay)
	opts.HugeSize = cmp.Or(opts.HugeSize, DefaultHugeSize)
	s := &Server{path: path, opts: opts}
	s.forced.Store(Mode(""))
	if err := s.listen(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the socket path.
func (s *Server) Path() string { return s.path }

// SetMode makes every request get mode m, whatever its method; "" restores
// the choice by method.
func (s *Server) SetMode(m Mode) { s.forced.Store(m) }

// Accepted counts connections accepted, over restarts.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

// Requests counts request lines read, over restarts.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Pipelined counts requests that had already arrived on their connection
// while the one before them was being answered, which the real server would
// only answer after it: a client must not send them.
func (s *Server) Pipelined() int64 { return s.pipeline.Load() }

func (s *Server) listen() error {
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		return err
	}
	// The client refuses a socket that group or others may write to.
	if err := os.Chmod(s.path, 0o600); err != nil {
		ln.Close()
		return err
	}
	s.mu.Lock()
	s.ln, s.conns, s.done = ln, make(map[net.Conn]struct{}), make(chan struct{})
	s.mu.Unlock()
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

// Stop closes the listener, which removes the socket file, and every
// connection, and waits for the server's goroutines. It is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
		close(s.done)
		for c := range s.conns {
			c.Close()
		}
		s.ln, s.conns = nil, nil
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Restart stops the server and listens again on the same path, as a server
// restart does: every open connection is closed.
func (s *Server) Restart() error {
	s.Stop()
	return s.listen()
}

func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		mode := s.forced.Load().(Mode)
		if mode == ModeDrop {
			// As Tairseach drops a peer of another uid: before reading.
			c.Close()
			continue
		}
		s.mu.Lock()
		if s.conns == nil { // stopped meanwhile
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		done := s.done
		s.wg.Add(1)
		s.mu.Unlock()
		if mode == ModeNoRead {
			go func() { defer s.wg.Done(); <-done }() // Stop closes c
			continue
		}
		go s.serve(c, done)
	}
}

// request is the part of a request line the server reads.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// serve answers the requests of c one after another until c fails or a
// mode closes it.
func (s *Server) serve(c net.Conn, done <-chan struct{}) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	br := bufio.NewReader(c)
	var pending []byte // ModeTwiceLate: the reply to send again before the next one
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		s.requests.Add(1)
		if pending != nil {
			if _, err := c.Write(pending); err != nil {
				return
			}
			pending = nil
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			io.WriteString(c, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`+"\n")
			continue
		}
		if len(req.Params) == 0 {
			req.Params = json.RawMessage("{}")
		}
		mode := s.forced.Load().(Mode)
		if mode == "" {
			mode = ModeOK
			if m, ok := strings.CutPrefix(req.Method, "fault."); ok {
				mode = Mode(m)
			}
		}
		ok := reply(req.ID, req.Params)
		var werr error
		if br.Buffered() > 0 {
			s.pipeline.Add(1)
		}
		switch mode {
		case ModeOK:
			_, werr = c.Write(ok)
		case ModeError:
			_, werr = fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"permission denied: contacts","data":{"permission":"contacts","status":"denied","remediation":"grant access in System Settings"}}}`+"\n", req.ID)
		case ModeClose, ModeDrop: // ModeDrop on a connection accepted before SetMode
			return
		case ModeCloseMidReply:
			c.Write(ok[:len(ok)/2])
			return
		case ModeGarbage:
			_, werr = io.WriteString(c, "not json\n")
		case ModeWrongID:
			_, werr = c.Write(reply(json.RawMessage("987654321"), req.Params))
		case ModeTwice:
			_, werr = c.Write(append(bytes.Clone(ok), ok...))
		case ModeTwiceLate:
			_, werr = c.Write(ok)
			pending = ok
		case ModeSilent:
			io.Copy(io.Discard, br) // until the client, or Stop, closes c
			return
		case ModeHuge:
			werr = s.writeHuge(c, req.ID)
		case ModeSlow:
			t := time.NewTimer(s.opts.Delay)
			select {
			case <-t.C:
				// A request sent meanwhile would be waiting unread.
				c.SetReadDeadline(time.Now().Add(time.Millisecond))
				if _, err := br.Peek(1); err == nil {
					s.pipeline.Add(1)
				}
				c.SetReadDeadline(time.Time{})
				_, werr = c.Write(ok)
			case <-done:
				t.Stop()
				return
			}
		case ModeNullID:
			_, werr = io.WriteString(c, `{"jsonrpc":"2.0","id":null,"error":{"code":-32011,"message":"token refresh failed: google"}}`+"\n")
		case ModeNullLine:
			_, werr = io.WriteString(c, "null\n")
		case ModeDupKey:
			_, werr = fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"id":987654321,"result":%s}`+"\n", req.ID, req.Params)
		case ModeBoth:
			_, werr = fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"result":%s,"error":{"code":-32003,"message":"failed"}}`+"\n", req.ID, req.Params)
		case ModeBadError:
			_, werr = fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"error":{"code":"-32001","message":7}}`+"\n", req.ID)
		case ModeStringID:
			_, werr = c.Write(reply(json.RawMessage(`"`+string(req.ID)+`"`), req.Params))
		case ModeHugeExp:
			_, werr = c.Write(reply(req.ID, json.RawMessage(`{"n":1e999999}`)))
		case ModeDeep:
			const depth = 100000
			deep := append(bytes.Repeat([]byte("["), depth), bytes.Repeat([]byte("]"), depth)...)
			_, werr = c.Write(reply(req.ID, deep))
		case ModeSplit:
			for b := ok; len(b) > 0 && werr == nil; b = b[min(3, len(b)):] {
				_, werr = c.Write(b[:min(3, len(b))])
			}
		case ModeTrickle:
			werr = trickle(c, append(bytes.Repeat([]byte(" "), 200), ok...), done)
		case ModeOverCap:
			if werr = s.writeHuge(c, json.RawMessage("0")); werr == nil {
				_, werr = c.Write(ok)
			}
		case ModeCRLF:
			_, werr = c.Write(append(ok[:len(ok)-1:len(ok)-1], "\r\n"...))
		case ModeBlank:
			_, werr = c.Write(append([]byte("\n\r\n  \n"), ok...))
		case ModeMultiLine:
			var pretty bytes.Buffer
			json.Indent(&pretty, ok, "", "  ")
			_, werr = c.Write(pretty.Bytes())
		default:
			msg, _ := json.Marshal(fmt.Sprintf("faultbackend: unknown mode %q", mode))
			_, werr = fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`+"\n", req.ID, msg)
		}
		if werr != nil {
			return
		}
	}
}

// reply is the line answering request id with result.
func reply(id, result json.RawMessage) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
}

// trickle writes b one byte every 50ms, until done is closed or a write
// fails.
func trickle(c net.Conn, b []byte, done <-chan struct{}) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for i := range b {
		select {
		case <-t.C:
		case <-done:
			return net.ErrClosed
		}
		if _, err := c.Write(b[i : i+1]); err != nil {
			return err
		}
	}
	return nil
}

// writeHuge writes a reply whose result is a string of about HugeSize bytes,
// in pieces, stopping at the first failed write: a client that gives up
// closes the connection.
func (s *Server) writeHuge(c net.Conn, id json.RawMessage) error {
	if _, err := fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"result":"`, id); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := s.opts.HugeSize; left > 0; left -= len(chunk) {
		if _, err := c.Write(chunk[:min(left, len(chunk))]); err != nil {
			return err
		}
	}
	_, err := io.WriteString(c, "\"}\n")
	return err
}
