package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// A wire is one spawned server's stdio, shared by two clients:
//
//   - the go-sdk client session, over an mcp.IOTransport on the wire: the
//     handshake, the checks, tools/list and notifications;
//   - the lean caller, which makes the timed calls: it writes the bytes of a
//     tools/call the go-sdk client sent, with an id of its own, and matches
//     each reply, byte for byte but for the id, against one the driver
//     decoded and checked in full (see learnCall).
//
// So every contender receives exactly what a go-sdk client sends, and the
// client's own cost per call is a write, a read and a compare, not the
// go-sdk client's decoding, which costs more than some of the servers.
//
// One goroutine, route, reads the server's stdout and hands each line to the
// lean call waiting for its id, or else to the go-sdk session. It ends when
// the server's stdout does.
type wire struct {
	stdin io.WriteCloser
	wmu   sync.Mutex         // one whole line at a time on stdin
	grab  func(line []byte)  // sees each line the go-sdk client writes, while set (under wmu)
	sdkR  *io.PipeReader     // the go-sdk session reads the lines not for a lean call here
	sdkW  *io.PipeWriter     // … that route writes here
	ids   atomic.Uint64      // the lean caller's ids, from leanBase up
	mu    sync.Mutex         // guards waiting
	wait  map[uint64]*leanIO // lean calls sent and not yet answered
	stray atomic.Int64       // replies with a lean id that no call waited for
	done  chan struct{}      // closed when route ends
	err   error              // why route ended; read after done
	bufs  [maxCallers][]byte // request scratch, one per caller
}

// leanBase is the first id of the lean caller, far above the go-sdk
// client's, so that a reply's id says whose it is.
const leanBase = 1 << 40

// maxCallers bounds the callers of one wire at a time.
const maxCallers = 64

// leanIO is one lean call in flight.
type leanIO struct {
	want *expect       // the reply it must be; nil: keep the whole line (learnCall)
	line []byte        // the reply, when want is nil
	err  error         // a reply that is not want
	done chan struct{} // closed when answered
}

func newWire(stdin io.WriteCloser, stdout io.Reader) *wire {
	w := &wire{stdin: stdin, wait: map[uint64]*leanIO{}, done: make(chan struct{})}
	w.sdkR, w.sdkW = io.Pipe()
	go w.route(stdout)
	return w
}

// sdkReader and sdkWriter are the go-sdk session's side of the wire.
func (w *wire) sdkReader() io.ReadCloser  { return w.sdkR }
func (w *wire) sdkWriter() io.WriteCloser { return sdkWriter{w} }

type sdkWriter struct{ w *wire }

// Write is called with one whole message and its newline (mcp's ioConn).
func (s sdkWriter) Write(p []byte) (int, error) {
	s.w.wmu.Lock()
	defer s.w.wmu.Unlock()
	if s.w.grab != nil {
		s.w.grab(bytes.Clone(p))
	}
	return s.w.stdin.Write(p)
}

func (s sdkWriter) Close() error { return s.w.stdin.Close() }

// route reads the server's stdout until it ends.
func (w *wire) route(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	var long []byte
	defer func() {
		close(w.done)
		w.sdkW.CloseWithError(io.EOF)
		w.mu.Lock()
		defer w.mu.Unlock()
		for id, c := range w.wait {
			c.err = fmt.Errorf("the server's stdout ended before the reply to %d: %v", id, w.err)
			delete(w.wait, id)
			close(c.done)
		}
	}()
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			w.err = err
			return
		}
		if cap(long) > 4<<20 {
			long = nil
		}
		start, end, ok := idSpan(line)
		if ok {
			if id, _ := strconv.ParseUint(string(line[start:end]), 10, 64); id >= leanBase {
				w.answer(id, line, start, end)
				continue
			}
		}
		// The go-sdk session's: a reply to it, or a notification. Once
		// it has closed its side, dropped.
		_, _ = w.sdkW.Write(line)
	}
}

// answer gives a reply to the lean call waiting for it.
func (w *wire) answer(id uint64, line []byte, start, end int) {
	w.mu.Lock()
	c := w.wait[id]
	delete(w.wait, id)
	w.mu.Unlock()
	if c == nil {
		w.stray.Add(1)
		return
	}
	switch {
	case c.want == nil:
		c.line = bytes.Clone(line)
	case !c.want.match(line, start, end):
		c.err = fmt.Errorf("reply %d differs from the reply checked in full: %.300s", id, line)
	}
	close(c.done)
}

// call writes one request, head + a new id + tail, and waits for its reply.
func (w *wire) call(ctx context.Context, caller int, head, tail []byte, want *expect) (*leanIO, error) {
	id := leanBase + w.ids.Add(1)
	c := &leanIO{want: want, done: make(chan struct{})}
	w.mu.Lock()
	w.wait[id] = c
	w.mu.Unlock()

	buf := append(w.bufs[caller][:0], head...)
	buf = strconv.AppendUint(buf, id, 10)
	buf = append(buf, tail...)
	w.bufs[caller] = buf
	w.wmu.Lock()
	_, err := w.stdin.Write(buf)
	w.wmu.Unlock()
	if err != nil {
		w.forget(id)
		return nil, fmt.Errorf("writing a call: %w", err)
	}
	select {
	case <-c.done:
		return c, c.err
	case <-w.done:
		// route has ended, and may have before this call was waiting.
		select {
		case <-c.done:
			return c, c.err
		default:
		}
		w.forget(id)
		return nil, fmt.Errorf("the server's stdout ended: %v", w.err)
	case <-ctx.Done():
		w.forget(id)
		return nil, ctx.Err()
	}
}

func (w *wire) forget(id uint64) {
	w.mu.Lock()
	delete(w.wait, id)
	w.mu.Unlock()
}

// idSpan finds the top-level numeric id of a JSON-RPC line where the
// servers here write it: first after "jsonrpc" (the go-sdk), or last before
// the closing brace (the TypeScript SDK). A line with its id elsewhere is
// the go-sdk session's; learnCall fails when a call's reply is one.
func idSpan(line []byte) (start, end int, ok bool) {
	const head = `{"jsonrpc":"2.0","id":`
	if bytes.HasPrefix(line, []byte(head)) {
		return digits(line, len(head))
	}
	t := bytes.TrimRight(line, "\r\n")
	if i := bytes.LastIndex(t, []byte(`"id":`)); i >= 0 && len(t)-i <= len(`"id":`)+21 && t[len(t)-1] == '}' {
		if s, e, ok := digits(t, i+len(`"id":`)); ok && e == len(t)-1 {
			return s, e, true
		}
	}
	return 0, 0, false
}

// digits returns the span of the decimal digits at line[i:].
func digits(line []byte, i int) (start, end int, ok bool) {
	end = i
	for end < len(line) && line[end] >= '0' && line[end] <= '9' {
		end++
	}
	return i, end, end > i
}

// expect is the reply a lean call must get: the bytes of a reply checked in
// full, but for its id, which lies between head and tail.
type expect struct {
	head, tail []byte
}

func newExpect(line []byte, start, end int) *expect {
	return &expect{head: bytes.Clone(line[:start]), tail: bytes.Clone(line[end:])}
}

// match reports whether line is the expected reply; its id, at start:end,
// route has already matched to the call.
func (x *expect) match(line []byte, start, end int) bool {
	return start == len(x.head) && len(line)-end == len(x.tail) &&
		bytes.Equal(line[:start], x.head) && bytes.Equal(line[end:], x.tail)
}
