package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"time"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
)

// JSON-RPC error codes, as used by the real Tairseach server.
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeHandlerError     = -32000
	codePermissionDenied = -32001
	codeNotFound         = -32002
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

var errShuttingDown = &rpcError{Code: codeHandlerError, Message: "server is shutting down"}

// request is one decoded JSON-RPC request. Its byte slices are reused from
// one request to the next on a connection.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is what one request produced. id and result may alias the
// connection's buffers, so a response is written before the next request is
// decoded.
type response struct {
	id     []byte // raw id; empty means null
	result []byte
	err    *rpcError
}

// Buffers larger than this are dropped after use so that one huge request
// does not pin its memory for the life of the connection.
const keepBufferCap = 1 << 20

// connState is the state of one connection, owned by its serveConn goroutine.
type connState struct {
	r    *bufio.Reader
	w    *bufio.Writer
	line []byte // accumulates a line longer than r's buffer
	req  request
}

// serveConn reads newline-delimited requests from nc and answers them one
// after another until the peer hangs up or nc is closed.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	s.log.Debug().Msg("connection opened")
	c := &connState{
		r: bufio.NewReaderSize(nc, 64<<10),
		w: bufio.NewWriterSize(nc, 64<<10),
	}
	for {
		line, rerr := c.readLine()
		// A last line without its newline is still served, as the real
		// server does.
		if rerr == nil || len(line) > 0 {
			s.handleLine(ctx, c, line)
			// Flush every response: the next request may be slow.
			if err := c.w.Flush(); err != nil {
				s.log.Debug().Err(err).Msg("writing response")
				return
			}
			c.release()
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && ctx.Err() == nil {
				s.log.Debug().Err(rerr).Msg("reading request")
			}
			s.log.Debug().Msg("connection closed")
			return
		}
	}
}

// readLine returns the next line including its newline. The slice is valid
// until the next call.
func (c *connState) readLine() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return b, err
	}
	c.line = append(c.line[:0], b...)
	for {
		b, err = c.r.ReadSlice('\n')
		c.line = append(c.line, b...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return c.line, err
		}
	}
}

func (c *connState) release() {
	if cap(c.line) > keepBufferCap {
		c.line = nil
	}
	if cap(c.req.Params) > keepBufferCap {
		c.req.Params = nil
	}
}

// handleLine answers one line: a request, a batch, or garbage. It writes
// exactly one line to c.w.
func (s *Server) handleLine(ctx context.Context, c *connState, line []byte) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		writeResponse(c.w, response{err: &rpcError{Code: codeParseError, Message: "Empty request"}})
	case line[0] == '[':
		s.handleBatch(ctx, c, line)
	default:
		if resp, ok := s.call(ctx, c, line); ok {
			writeResponse(c.w, resp)
		} else {
			c.w.WriteString("null")
		}
	}
	c.w.WriteByte('\n')
}

// handleBatch answers a batch like the real server: an array of the
// responses, null when all were notifications, and a bare response (not an
// array) for a batch of one.
func (s *Server) handleBatch(ctx context.Context, c *connState, line []byte) {
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil {
		writeResponse(c.w, response{err: &rpcError{Code: codeParseError, Message: "parse error: " + err.Error()}})
		return
	}
	if len(batch) == 0 {
		writeResponse(c.w, response{err: &rpcError{Code: codeInvalidRequest, Message: "empty batch request"}})
		return
	}
	n := 0
	for _, msg := range batch {
		resp, ok := s.call(ctx, c, msg)
		if !ok {
			continue
		}
		if n == 0 && len(batch) > 1 {
			c.w.WriteByte('[')
		} else if n > 0 {
			c.w.WriteByte(',')
		}
		writeResponse(c.w, resp)
		n++
	}
	switch {
	case n == 0:
		c.w.WriteString("null")
	case len(batch) > 1:
		c.w.WriteByte(']')
	}
}

// call decodes and runs one request. ok is false for a valid notification,
// which gets no response of its own.
func (s *Server) call(ctx context.Context, c *connState, msg []byte) (resp response, ok bool) {
	req := &c.req
	req.JSONRPC, req.Method = "", ""
	req.ID, req.Params = req.ID[:0], req.Params[:0]
	if err := json.Unmarshal(msg, req); err != nil {
		var serr *json.SyntaxError
		if errors.As(err, &serr) {
			return response{err: &rpcError{Code: codeParseError, Message: "parse error: " + err.Error()}}, true
		}
		// Well-formed JSON of the wrong shape; the id may still be known.
		return response{id: req.ID, err: &rpcError{Code: codeInvalidRequest, Message: "invalid request: " + err.Error()}}, true
	}
	// Like the real server (serde's Option<Value>), a null id makes a
	// notification.
	notification := len(req.ID) == 0 || string(req.ID) == "null"
	if req.JSONRPC != "2.0" {
		return response{id: req.ID, err: &rpcError{Code: codeInvalidRequest, Message: `invalid request: jsonrpc must be "2.0"`}}, true
	}
	if req.Method == "" {
		return response{id: req.ID, err: &rpcError{Code: codeInvalidRequest, Message: "invalid request: method is required"}}, true
	}

	start := time.Now()
	result, rerr := s.dispatch(ctx, req.Method, req.Params)
	if e := s.log.Trace(); e.Enabled() {
		e.Str("method", req.Method).RawJSON("id", nullIfEmpty(req.ID)).Dur("took", time.Since(start)).Bool("failed", rerr != nil).Msg("call")
	}
	if notification {
		return response{}, false
	}
	return response{id: req.ID, result: result, err: rerr}, true
}

// dispatch applies the configured delay, checks the method's permission,
// then runs the method's handler, turning a panic into an internal error.
func (s *Server) dispatch(ctx context.Context, method string, params []byte) (result []byte, rerr *rpcError) {
	if s.opts.Delay > 0 {
		t := time.NewTimer(s.opts.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, errShuttingDown
		}
	}
	// Like the real server, the permission comes first, then the method.
	if e := s.grants.checkPermission(method); e != nil {
		return nil, e
	}
	h, ok := s.methods[method]
	if !ok {
		return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Str("method", method).Interface("panic", p).Msg("handler panicked")
			result, rerr = nil, &rpcError{Code: codeInternalError, Message: "internal error"}
		}
	}()
	return h(ctx, params)
}

// writeResponse writes one response object, without a newline. Write errors
// stick in w and surface at Flush.
func writeResponse(w *bufio.Writer, r response) {
	w.WriteString(`{"jsonrpc":"2.0","id":`)
	w.Write(nullIfEmpty(r.id))
	if r.err != nil {
		b, err := jsonenc.Marshal(r.err)
		if err != nil {
			b = []byte(`{"code":-32603,"message":"internal error"}`)
		}
		w.WriteString(`,"error":`)
		w.Write(b)
	} else {
		w.WriteString(`,"result":`)
		w.Write(nullIfEmpty(r.result))
	}
	w.WriteByte('}')
}

var jsonNull = []byte("null")

func nullIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return jsonNull
	}
	return b
}
