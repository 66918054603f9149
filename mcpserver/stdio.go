package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// ImplicitProtocolVersion is the protocol version a session is initialised
// with when its first request is not "initialize" (a lone request piped from a
// shell). It is the newest stable version: the 2026-07-28 draft needs
// per-request _meta that a hand-written line will not carry.
const ImplicitProtocolVersion = "2025-11-25"

// DefaultMaxLineBytes caps one incoming stdio message.
const DefaultMaxLineBytes = 16 << 20

// implicitInitID is the id of the initialize request the transport makes up
// for a session whose client never sent one. Its response is swallowed.
const implicitInitID = "tairseach-mcp/implicit-initialize"

// newProtocolMetaKey marks a request of the sessionless 2026-07-28 draft,
// which needs no initialize.
var newProtocolMetaKey = []byte(`"io.modelcontextprotocol/protocolVersion"`)

// StdioTransport is an MCP transport over newline-delimited JSON on a pair of
// streams (stdin and stdout in serve mode). Unlike the go-sdk's own stdio
// transport it
//   - answers a line that is not JSON-RPC with a -32700/-32600 error and keeps
//     the session going;
//   - on end of input, waits until every request already received has been
//     answered (bounded by DrainTimeout) before it reports EOF, so
//     `printf '…' | tairseach-mcp` prints every response;
//   - initialises the session implicitly when the first request is not
//     "initialize", so a single piped request works;
//   - sends no response for a request the client cancelled.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// DrainTimeout bounds the wait for in-flight requests after end of input;
	// zero waits as long as they take.
	DrainTimeout time.Duration
	// Linger keeps the session open after end of input until the process is
	// told to stop, for clients that close stdin but keep reading stdout.
	Linger bool
	// MaxLineBytes caps one incoming message; zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// Calls, when set, serves tools/call for its tools without the SDK once
	// the session is initialised (stable protocol versions only).
	Calls  CallHandler
	Logger zerolog.Logger
}

// Connect implements mcp.Transport. With Calls set, it waits for the first
// message: a client of the 2026-07-28 draft needs the SDK to know every tool,
// and registering them before the SDK counts the session as connected sends
// the session no spurious tools/list_changed.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	// The calls live as long as the session, not as the context of Connect.
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioConn{
		calls:     t.Calls,
		callCtx:   ctx,
		cancelAll: cancel,
		inflight:  make(map[jsonrpc.ID]context.CancelFunc),
		in:        bufio.NewReaderSize(t.In, 64<<10),
		rawIn:     t.In,
		out:       t.Out,
		drainFor:  t.DrainTimeout,
		linger:    t.Linger,
		maxLine:   max,
		log:       t.Logger,
		pending:   make(map[jsonrpc.ID]struct{}),
		cancelled: make(map[jsonrpc.ID]struct{}),
		metaOK:    make(map[string]bool),
		metaProbe: make(map[jsonrpc.ID]string),
		drained:   make(chan struct{}),
		closed:    make(chan struct{}),
	}
	if t.Calls != nil {
		type peeked struct {
			line []byte
			err  error
		}
		first := make(chan peeked, 1)
		go func() {
			line, err := c.readLine()
			first <- peeked{bytes.Clone(line), err}
		}()
		select {
		case p := <-first:
			c.first, c.firstErr, c.hasFirst = p.line, p.err, true
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if bytes.Contains(c.first, []byte(`"server/discover"`)) || bytes.Contains(c.first, newProtocolMetaKey) {
			t.Calls.RegisterWithSDK()
		}
		c.detach = t.Calls.Attach(c)
	}
	return c, nil
}

// stdioConn is one stdio session.
//
// The goroutine that calls Read (the go-sdk's reader) owns in, line, queue
// and initDone. Write is called from any goroutine; wmu serialises the
// output. mu guards the request bookkeeping shared by both sides.
type stdioConn struct {
	calls     CallHandler
	callCtx   context.Context // parent of the calls served directly; done on Close
	cancelAll context.CancelFunc
	callWG    sync.WaitGroup // calls served directly, each in its own goroutine
	// initialized is set once initialize was received (or made up): from
	// then on the server's notifications may be sent to this session.
	initialized atomic.Bool
	detach      func() // stops the server's notifications to this session

	in       *bufio.Reader
	rawIn    io.Reader
	out      io.Writer
	drainFor time.Duration
	linger   bool
	maxLine  int
	log      zerolog.Logger

	// Owned by the reading goroutine.
	first    []byte // the line Connect read, until Read takes it
	firstErr error
	hasFirst bool
	line     []byte
	queue    []jsonrpc.Message
	initDone bool // initialize was received, made up, or not needed (draft)
	draft    bool // the client speaks the sessionless 2026-07-28 draft

	wmu  sync.Mutex
	wbuf []byte

	mu         sync.Mutex
	pending    map[jsonrpc.ID]struct{}           // requests read and not yet answered
	cancelled  map[jsonrpc.ID]struct{}           // pending requests the client cancelled
	inflight   map[jsonrpc.ID]context.CancelFunc // calls served directly
	metaOK     map[string]bool                   // draft _meta values the SDK accepted for tools/call
	metaProbe  map[jsonrpc.ID]string             // draft tools/calls sent to the SDK, by their _meta
	resultMeta json.RawMessage                   // the _meta of the SDK's draft results
	eof        bool
	drained    chan struct{} // closed once eof is set and pending is empty

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message from the input. It answers malformed lines
// itself and never returns an error for them.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		c.track(msg)
		if !c.serveDirectly(msg) {
			return msg, nil
		}
	}
	for {
		select {
		case <-c.closed:
			return nil, io.EOF
		default:
		}
		var line []byte
		var err error
		if c.hasFirst {
			line, err, c.hasFirst = c.first, c.firstErr, false
			c.first = nil
		} else {
			line, err = c.readLine()
		}
		if len(line) > 0 {
			if msg := c.decode(line); msg != nil {
				msg = c.accept(msg)
				if c.serveDirectly(msg) {
					continue
				}
				return msg, nil
			}
		}
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				c.writeErrorRawID(nil, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("message too large: over %d bytes; send smaller requests", c.maxLine))
				continue
			}
			if !errors.Is(err, io.EOF) {
				c.log.Warn().Err(err).Msg("reading stdin")
			}
			return nil, c.waitDrained(ctx)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline, in a buffer that is
// reused by the next call. A final line without a newline is returned with
// io.EOF.
func (c *stdioConn) readLine() ([]byte, error) {
	frag, err := c.in.ReadSlice('\n')
	if err == nil {
		return bytes.TrimSpace(frag), nil
	}
	c.line = append(c.line[:0], frag...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(c.line) > c.maxLine {
			// Skip the rest of the line so the next one parses cleanly.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.in.ReadSlice('\n')
			}
			c.shrink()
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		frag, err = c.in.ReadSlice('\n')
		c.line = append(c.line, frag...)
	}
	line := bytes.TrimSpace(c.line)
	if len(line) > c.maxLine {
		c.shrink()
		return nil, errLineTooLong
	}
	return line, err
}

// shrink drops a line buffer that grew for one huge message.
func (c *stdioConn) shrink() {
	if cap(c.line) > 1<<20 {
		c.line = nil
	}
}

// decode parses one line. For a line that is not a JSON-RPC 2.0 message it
// writes the error response and returns nil.
func (c *stdioConn) decode(line []byte) jsonrpc.Message {
	msg, err := decodeMessage(line)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "" {
			c.writeError(req.ID, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
			return nil
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.Result == nil && resp.Error == nil {
			c.writeError(resp.ID, jsonrpc.CodeInvalidRequest, `invalid request: no "method"; expected {"jsonrpc":"2.0","id":…,"method":…,"params":…}`)
			return nil
		}
		return msg
	}
	switch {
	case !json.Valid(line):
		c.writeErrorRawID(nil, jsonrpc.CodeParseError,
			fmt.Sprintf("parse error: %s; each line must be one complete JSON-RPC 2.0 message", jsonSyntaxError(line)))
	case line[0] == '[':
		if bytes.Equal(bytes.Join(bytes.Fields(line), nil), []byte("[]")) {
			c.writeErrorRawID(nil, jsonrpc.CodeInvalidRequest, "invalid request: empty batch")
		} else {
			c.writeErrorRawID(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported by MCP; send one message per line")
		}
	case line[0] != '{':
		c.writeErrorRawID(nil, jsonrpc.CodeInvalidRequest, "invalid request: a JSON-RPC message must be a JSON object")
	default:
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		c.writeErrorRawID(validRawID(probe.ID), jsonrpc.CodeInvalidRequest,
			"invalid request: "+err.Error()+`; expected {"jsonrpc":"2.0","id":…,"method":…,"params":…}`)
	}
	return nil
}

// decodeMessage decodes one line. It decodes requests itself: the SDK's
// decoder allocates a large buffer per message and ignores bytes after the
// first value, while a line with trailing bytes is not one message.
func decodeMessage(line []byte) (jsonrpc.Message, error) {
	var w struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	if w.Method == nil {
		return jsonrpc.DecodeMessage(line) // a response (to a server ping)
	}
	if w.JSONRPC != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected \"2.0\"", w.JSONRPC)
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
}

// jsonSyntaxError describes why line is not JSON.
func jsonSyntaxError(line []byte) string {
	var v any
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

// validRawID returns raw if it is a usable JSON-RPC id (a number or string).
func validRawID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return raw
	}
	return nil
}

// accept records msg and applies the implicit initialisation.
func (c *stdioConn) accept(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return msg
	}
	if !c.initDone && req.IsCall() {
		switch {
		case req.Method == "initialize":
			c.initDone = true
			c.initialized.Store(true)
		case req.Method == "server/discover",
			bytes.Contains(req.Params, newProtocolMetaKey):
			c.initDone = true
			c.draft = true
			if c.calls != nil {
				// The SDK answers this session's tool requests itself.
				c.calls.RegisterWithSDK()
			}
		case req.Method == "ping":
		default:
			c.initDone = true
			c.initialized.Store(true)
			c.log.Info().Str("method", req.Method).Str("protocolVersion", ImplicitProtocolVersion).
				Msg("first request is not initialize; initialising the session implicitly")
			c.queue = append(c.queue, implicitInitialized(), req)
			msg = implicitInitialize()
		}
	}
	c.track(msg)
	return msg
}

func implicitInitialize() *jsonrpc.Request {
	id, _ := jsonrpc.MakeID(implicitInitID)
	params := `{"protocolVersion":"` + ImplicitProtocolVersion + `","capabilities":{},"clientInfo":{"name":"implicit","version":"0"}}`
	return &jsonrpc.Request{ID: id, Method: "initialize", Params: json.RawMessage(params)}
}

func implicitInitialized() *jsonrpc.Request {
	return &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}
}

// track records a call as pending, and a cancellation of a pending call so
// that its response is not sent.
func (c *stdioConn) track(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = struct{}{}
		c.mu.Unlock()
		return
	}
	if req.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		id, err := jsonrpc.MakeID(p.RequestID)
		if err != nil {
			return
		}
		c.mu.Lock()
		if _, ok := c.pending[id]; ok {
			c.cancelled[id] = struct{}{}
		}
		if cancel, ok := c.inflight[id]; ok {
			cancel()
		}
		c.mu.Unlock()
	}
}

// settle marks a response as sent and reports whether it must be dropped
// instead: the made-up initialize, or a request the client cancelled.
func (c *stdioConn) settle(id jsonrpc.ID, written bool) (drop bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cancelled[id]; ok {
		delete(c.cancelled, id)
		drop = true
	}
	if id.Raw() == implicitInitID {
		drop = true
	}
	if written || drop {
		delete(c.pending, id)
		if c.eof && len(c.pending) == 0 {
			c.closeDrained()
		}
	}
	return drop
}

// closeDrained closes c.drained once. c.mu must be held.
func (c *stdioConn) closeDrained() {
	select {
	case <-c.drained:
	default:
		close(c.drained)
	}
}

// waitDrained is called at end of input. It returns io.EOF once every
// pending request has been answered, the drain timeout passed, or the
// connection was closed; with linger it waits for the connection to close.
func (c *stdioConn) waitDrained(ctx context.Context) error {
	c.mu.Lock()
	c.eof = true
	n := len(c.pending)
	if n == 0 {
		c.closeDrained()
	}
	c.mu.Unlock()

	if c.linger {
		c.log.Info().Msg("stdin closed; lingering until stopped (--linger)")
		select {
		case <-c.closed:
		case <-ctx.Done():
		}
		return io.EOF
	}
	if n > 0 {
		c.log.Debug().Int("pending", n).Msg("stdin closed; answering requests in flight")
	}
	var timeout <-chan time.Time
	if c.drainFor > 0 {
		timer := time.NewTimer(c.drainFor)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-c.drained:
	case <-timeout:
		c.mu.Lock()
		n = len(c.pending)
		c.mu.Unlock()
		c.log.Warn().Int("unanswered", n).Dur("drainTimeout", c.drainFor).
			Msg("stdin closed and requests still running after the drain timeout; giving up on them")
	case <-c.closed:
	case <-ctx.Done():
	}
	return io.EOF
}

// Write writes msg as one line.
func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		c.mu.Lock()
		c.learnMeta(resp)
		c.mu.Unlock()
	}
	if isResp && c.settle(resp.ID, false) {
		if resp.ID.Raw() == implicitInitID && resp.Error != nil {
			c.log.Error().Err(resp.Error).Msg("implicit initialize failed")
		}
		return nil
	}
	var err error
	if isResp && resp.Error == nil && len(resp.Result) > 0 {
		err = c.writeResult(resp.ID, resp.Result)
	} else {
		var data []byte
		if data, err = jsonrpc.EncodeMessage(msg); err == nil {
			err = c.writeLine(data)
		}
	}
	if isResp {
		c.settle(resp.ID, true)
	}
	return err
}

// writeResult writes a successful response around its result, which the
// SDK has already marshalled: re-encoding the message would scan and copy
// the whole result again.
func (c *stdioConn) writeResult(id jsonrpc.ID, result json.RawMessage) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := append(c.wbuf[:0], `{"jsonrpc":"2.0","id":`...)
	switch v := id.Raw().(type) {
	case int64:
		buf = strconv.AppendInt(buf, v, 10)
	case string:
		q, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf = append(buf, q...)
	default:
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"result":`...)
	buf = append(buf, result...)
	buf = append(buf, "}\n"...)
	return c.flush(buf)
}

// writeLine writes data and a newline in a single write.
func (c *stdioConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.flush(append(append(c.wbuf[:0], data...), '\n'))
}

// flush writes buf, a line built in c.wbuf, and keeps the buffer unless a
// huge message grew it. c.wmu must be held.
func (c *stdioConn) flush(buf []byte) error {
	_, err := c.out.Write(buf)
	if cap(buf) <= 1<<20 {
		c.wbuf = buf
	}
	if err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

// writeError answers a message the SDK never sees.
func (c *stdioConn) writeError(id jsonrpc.ID, code int64, message string) {
	var raw json.RawMessage
	if id.IsValid() {
		raw, _ = json.Marshal(id.Raw())
	}
	c.writeErrorRawID(raw, code, message)
}

func (c *stdioConn) writeErrorRawID(id json.RawMessage, code int64, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	c.log.Warn().Int64("code", code).Msg(message)
	if err := c.writeLine(data); err != nil {
		c.log.Warn().Err(err).Msg("writing error response")
	}
}

// Close stops the session. It is safe to call more than once.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		if c.detach != nil {
			c.detach()
		}
		c.cancelAll()
		close(c.closed)
		if cl, ok := c.rawIn.(io.Closer); ok {
			_ = cl.Close()
		}
		c.callWG.Wait() // the calls were cancelled: they end promptly
	})
	return nil
}

// serveDirectly serves tools/list and tools/call requests itself when it
// can, and reports whether it did. The request is already tracked as
// pending.
//
// In a session of the 2026-07-28 draft every request carries its own _meta,
// which the SDK validates; there only tools/call is served directly, and only
// with a _meta the SDK has already accepted for a tools/call of this session
// (the validation depends on nothing else), with the draft's "resultType".
func (c *stdioConn) serveDirectly(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || c.calls == nil || !c.initDone || !req.IsCall() ||
		(req.Method != "tools/call" && req.Method != "tools/list") ||
		c.draft && req.Method != "tools/call" {
		return false
	}
	if !c.waitReady(req) {
		return true
	}
	if req.Method == "tools/list" {
		c.answer(req.ID, c.calls.ListJSON())
		return true
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil || !c.calls.HasTool(p.Name) {
		return false // the SDK answers with the right error
	}
	if ns, ok := c.calls.(interface {
		needsSession(string, json.RawMessage) bool
	}); ok && ns.needsSession(p.Name, p.Meta) {
		return false // progress or confirmation: the SDK has the session
	}
	var resultMeta json.RawMessage // the draft's result _meta, as the SDK sends it
	if c.draft {
		if resultMeta = c.metaAccepted(req.ID, p.Meta); resultMeta == nil {
			return false
		}
	}
	ctx, cancel := context.WithCancel(c.callCtx)
	c.mu.Lock()
	c.inflight[req.ID] = cancel
	c.mu.Unlock()
	c.callWG.Add(1)
	go func() {
		defer c.callWG.Done()
		result := c.calls.CallJSON(ctx, p.Name, p.Arguments)
		c.mu.Lock()
		delete(c.inflight, req.ID)
		c.mu.Unlock()
		cancel()
		if result == nil { // cancelled: nothing is sent
			c.settle(req.ID, true)
			return
		}
		if resultMeta != nil {
			result = draftResult(resultMeta, result)
		}
		c.answer(req.ID, result)
	}()
	return true
}

// maxMetas bounds the _meta values remembered per session; a client sends
// the same one with every request.
const maxMetas = 8

// metaAccepted returns the _meta of the SDK's results if the SDK accepted
// meta for a tools/call of this session, else nil. If not, the request id is
// noted so that the SDK's answer, if a success, teaches it.
func (c *stdioConn) metaAccepted(id jsonrpc.ID, meta json.RawMessage) json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.metaOK[string(meta)] {
		return c.resultMeta
	}
	if len(c.metaOK) < maxMetas {
		c.metaProbe[id] = string(meta)
	}
	return nil
}

// learnMeta records the SDK's verdict on a tools/call sent to it for its
// _meta, and the _meta of its result. c.mu must be held.
func (c *stdioConn) learnMeta(resp *jsonrpc.Response) {
	meta, ok := c.metaProbe[resp.ID]
	if !ok {
		return
	}
	delete(c.metaProbe, resp.ID)
	var res struct {
		Meta       json.RawMessage `json:"_meta"`
		ResultType string          `json:"resultType"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || res.ResultType != "complete" ||
		len(res.Meta) == 0 || res.Meta[0] != '{' || len(c.metaOK) >= maxMetas {
		return
	}
	if c.resultMeta == nil {
		c.resultMeta = res.Meta
	} else if !bytes.Equal(c.resultMeta, res.Meta) {
		return
	}
	c.metaOK[meta] = true
}

// draftResult turns a CallToolResult encoded by encodeResult into the
// draft's: the SDK's _meta first, "resultType" last.
func draftResult(meta, result json.RawMessage) []byte {
	out := make([]byte, 0, len(meta)+len(result)+40)
	out = append(out, `{"_meta":`...)
	out = append(out, meta...)
	out = append(out, ',')
	out = append(out, result[1:len(result)-1]...)
	return append(out, `,"resultType":"complete"}`...)
}

// waitReady waits until the handler has its tools, which only takes time
// while the manifests are first loaded. Reading waits too, so requests keep
// their order. It reports false if the session closed meanwhile; req then
// gets no response.
func (c *stdioConn) waitReady(req *jsonrpc.Request) bool {
	ready := c.calls.Ready()
	select {
	case <-ready:
		return true
	default:
	}
	c.log.Debug().Str("method", req.Method).Msg("waiting for the manifests to load")
	select {
	case <-ready:
		return true
	case <-c.closed:
		c.settle(req.ID, true)
		return false
	}
}

// answer writes the result of a request served directly, unless the client
// cancelled it.
func (c *stdioConn) answer(id jsonrpc.ID, result []byte) {
	if c.settle(id, false) {
		return
	}
	if err := c.writeResult(id, result); err != nil {
		c.log.Warn().Err(err).Msg("writing a result")
	}
	c.settle(id, true)
}

// Notify sends a notification to the client, once the session is
// initialised; before that it is dropped, as the client will list anyway.
func (c *stdioConn) Notify(method string) {
	if !c.initialized.Load() {
		return
	}
	select {
	case <-c.closed:
		return
	default:
	}
	if err := c.writeLine([]byte(`{"jsonrpc":"2.0","method":"` + method + `","params":{}}`)); err != nil {
		c.log.Debug().Err(err).Str("method", method).Msg("sending a notification")
	}
}
