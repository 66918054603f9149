package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// ImplicitProtocolVersion is the protocol version a session is initialised
// with when its first request is not "initialize" (a lone request piped from a
// shell). 2026-07-28 needs per-request _meta that a hand-written line will not
// carry, so it is the revision before it.
const ImplicitProtocolVersion = "2025-11-25"

// DefaultMaxLineBytes caps one incoming stdio message.
const DefaultMaxLineBytes = 16 << 20

// StdioTransport is an MCP transport over newline-delimited JSON on a pair of
// streams (stdin and stdout in serve mode). Unlike the go-sdk's own stdio
// transport it
//   - answers a line that is not JSON-RPC with a -32700/-32600 error and keeps
//     the session going;
//   - echoes every request id exactly as received, and refuses ids a request
//     may not have (null, objects, arrays, booleans) and ids already in use;
//   - on end of input or Stop, waits until every request already received has
//     been answered (bounded by DrainTimeout), answers the rest with an error
//     and then reports EOF, so `printf '…' | tairseach-mcp` prints one
//     response per request;
//   - initialises the session implicitly when the first request is not
//     "initialize", so a single piped request works;
//   - sends no response for a request the client cancelled.
//
// With Calls set (and Direct not off) tools/list and tools/call are served
// without the go-sdk when that gives the same bytes; see dispatcher.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// DrainTimeout bounds the wait for in-flight requests after end of input
	// or Stop; zero waits as long as they take.
	DrainTimeout time.Duration
	// ShutdownGrace bounds the wait for in-flight requests after Stop (a
	// signal): a client's SIGKILL usually follows its SIGTERM within
	// seconds; zero means DrainTimeout.
	ShutdownGrace time.Duration
	// Linger keeps the session open after end of input until the process is
	// told to stop, for clients that close stdin but keep reading stdout.
	Linger bool
	// MaxLineBytes caps one incoming message; zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// Calls, when set, serves tool requests without the SDK where the
	// dispatcher allows, and tells the session when the tools change.
	Calls CallHandler
	// NoDirect sends every request through the go-sdk (--direct=off).
	NoDirect bool
	Logger   zerolog.Logger

	connMu sync.Mutex
	conn   *stdioConn
}

// Connect implements mcp.Transport. It returns at once: reading starts in
// its own goroutine.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	// The calls live as long as the session, not as the context of Connect.
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioConn{
		calls:     t.Calls,
		direct:    t.Calls != nil && !t.NoDirect,
		callCtx:   ctx,
		cancelAll: cancel,
		in:        bufio.NewReaderSize(t.In, 64<<10),
		rawIn:     t.In,
		out:       t.Out,
		drainFor:  t.DrainTimeout,
		grace:     t.ShutdownGrace,
		outgoing:  make(map[jsonrpc.ID]struct{}),
		linger:    t.Linger,
		maxLine:   max,
		log:       t.Logger,
		toSDK:     make(chan jsonrpc.Message),
		inputEnd:  make(chan struct{}),
		stopping:  make(chan struct{}),
		reqs:      make(map[int64]*request),
		keys:      make(map[string]int64),
		drained:   make(chan struct{}),
		closed:    make(chan struct{}),
	}
	if t.Calls != nil {
		c.detach = t.Calls.Attach(c)
	}
	t.connMu.Lock()
	t.conn = c
	t.connMu.Unlock()
	go c.readLoop()
	return c, nil
}

// bind tells the connection its go-sdk session, which the calls it serves
// directly report progress on and ask the user through.
func (t *StdioTransport) bind(ss *mcp.ServerSession) {
	t.connMu.Lock()
	c := t.conn
	t.connMu.Unlock()
	if c != nil {
		c.session.Store(ss)
	}
}

// Stop ends the session as end of input does: reading stops, requests in
// flight get DrainTimeout to finish, the rest are answered with an error.
// Used on SIGINT and SIGTERM, when stdin may stay open.
func (t *StdioTransport) Stop() {
	t.connMu.Lock()
	c := t.conn
	t.connMu.Unlock()
	if c != nil {
		c.stop()
	}
}

// request is a request read from the client and not yet answered. The go-sdk
// knows it by a private int64 id; the client's id is kept as its bytes.
type request struct {
	raw       []byte // the client's id, as received
	key       string // the client's id, for finding duplicates and cancellations
	method    string
	implicit  bool // the made-up initialize: its response is not sent
	newProto  bool // carries a valid 2026-07-28 _meta
	cancelled bool
	cancel    context.CancelFunc // a call served directly
}

// stdioConn is one stdio session.
//
// One goroutine (readLoop) reads and decodes the input and dispatches each
// message: answered at once (malformed), served directly, or handed to the
// go-sdk through toSDK, which Read returns. Write is called from any
// goroutine; wmu serialises the output. mu guards the request bookkeeping.
type stdioConn struct {
	calls     CallHandler
	direct    bool
	callCtx   context.Context // parent of the calls served directly; done on Close
	cancelAll context.CancelFunc
	callWG    sync.WaitGroup // calls served directly, each in its own goroutine
	detach    func()         // stops the server's notifications to this session

	in       *bufio.Reader
	rawIn    io.Reader
	out      io.Writer
	drainFor time.Duration
	linger   bool
	maxLine  int
	log      zerolog.Logger

	// Owned by readLoop.
	line       []byte
	initRead   bool // initialize was read (or made up), or the client speaks 2026-07-28
	registered bool // the go-sdk was given the tools (RegisterWithSDK)

	toSDK    chan jsonrpc.Message
	inputEnd chan struct{} // closed by readLoop at end of input
	stopOnce sync.Once
	stopping chan struct{} // closed by stop

	// initWritten is set once the go-sdk has written a successful response
	// to initialize: only then are legacy tool requests served directly,
	// and notifications sent. newWritten is the same for a 2026-07-28
	// request.
	initWritten atomic.Bool
	newWritten  atomic.Bool
	changed     atomic.Bool // the tools changed since the go-sdk last told a subscription
	session     atomic.Pointer[mcp.ServerSession]

	wmu  sync.Mutex
	wbuf []byte

	grace      time.Duration // the drain after Stop
	lingerOnce sync.Once

	mu          sync.Mutex
	outgoing    map[jsonrpc.ID]struct{} // ids of the go-sdk's requests to the client, unanswered
	endingBuilt bool
	endingMsgs  []jsonrpc.Message
	reqs        map[int64]*request // by the id the go-sdk knows
	keys        map[string]int64   // the same, by the client's id
	nextID      int64
	initID      int64 // the go-sdk's id of the initialize that counts
	eof         bool
	drained     chan struct{} // closed once eof is set and reqs is empty

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message for the go-sdk. At end of input, or once
// stopped, it first ends the requests that could never end on their own
// (see ending), then drains and returns io.EOF.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.toSDK:
		return msg, nil
	case <-c.inputEnd:
		if c.linger {
			select {
			case <-c.stopping:
			case <-c.closed:
				return nil, io.EOF
			default:
				c.lingerOnce.Do(func() { c.log.Info().Msg("stdin closed; lingering until stopped (--linger)") })
				select {
				case <-c.stopping:
				case <-c.closed:
					return nil, io.EOF
				}
			}
		}
	case <-c.stopping:
	case <-c.closed:
		return nil, io.EOF
	}
	if msg := c.ending(); msg != nil {
		return msg, nil
	}
	select {
	case <-c.stopping:
		return nil, c.finish("stopping", c.grace)
	default:
		return nil, c.finish("stdin closed", c.drainFor)
	}
}

// ending returns, one per call, the messages that end what would otherwise
// wait for a client that is gone: a cancellation of each open
// subscriptions/listen (the go-sdk then answers it with its result), and
// an error response to each request of the server still unanswered (an
// elicitation: the call waiting for it is then refused). nil when none
// are left.
func (c *stdioConn) ending() jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.endingBuilt {
		c.endingBuilt = true
		for n, r := range c.reqs {
			if r.method == "subscriptions/listen" && !r.cancelled {
				c.endingMsgs = append(c.endingMsgs, &jsonrpc.Request{Method: "notifications/cancelled",
					Params: json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":"the client closed its input"}`, n))})
			}
		}
		for id := range c.outgoing {
			c.endingMsgs = append(c.endingMsgs, &jsonrpc.Response{ID: id,
				Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client closed its input before answering"}})
		}
		clear(c.outgoing)
	}
	if len(c.endingMsgs) == 0 {
		return nil
	}
	msg := c.endingMsgs[0]
	c.endingMsgs = c.endingMsgs[1:]
	return msg
}

func (c *stdioConn) stop() {
	c.stopOnce.Do(func() { close(c.stopping) })
}

// readLoop reads lines until end of input or stop. A read blocked on an
// input that never ends does not keep the session open: Read stops waiting
// for it, and the goroutine ends with the process.
func (c *stdioConn) readLoop() {
	defer close(c.inputEnd)
	for {
		line, err := c.readLine()
		select {
		case <-c.stopping:
			c.refuse(line)
			return
		case <-c.closed:
			return
		default:
		}
		if len(line) > 0 {
			c.dispatch(line)
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
			return
		}
	}
}

// refuse answers a request read after Stop: it is not served, and the
// client must not wait for it.
func (c *stdioConn) refuse(line []byte) {
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if len(line) == 0 || json.Unmarshal(line, &w) != nil || w.Method == "" {
		return
	}
	if id := validRawID(w.ID); id != nil {
		c.writeErrorRawID(id, jsonrpc.CodeInternalError,
			"tairseach-mcp is shutting down (stopping) and did not serve "+w.Method+"; restart the server and retry")
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

// incoming is one decoded line.
type incoming struct {
	id     json.RawMessage // absent: a notification
	method string
	params json.RawMessage
}

// dispatch decodes one line and sends it on its way.
func (c *stdioConn) dispatch(line []byte) {
	in, ok, resp := c.decode(line)
	switch {
	case resp != nil:
		if r, ok := resp.(*jsonrpc.Response); ok {
			c.mu.Lock()
			delete(c.outgoing, r.ID)
			c.mu.Unlock()
		}
		c.send(resp) // a response to a request of the server
	case !ok:
		// Answered already.
	case len(in.id) == 0:
		c.notification(in)
	default:
		c.call(in)
	}
}

// decode parses one line. For a line that is not a JSON-RPC 2.0 message it
// writes the error response and returns ok false; a response to a request
// of the server comes back as resp.
func (c *stdioConn) decode(line []byte) (in incoming, ok bool, resp jsonrpc.Message) {
	var w struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	err := json.Unmarshal(line, &w)
	if err == nil && w.Method == nil {
		// A response to a request of the server (ping).
		msg, derr := jsonrpc.DecodeMessage(line)
		if resp, ok := msg.(*jsonrpc.Response); ok && derr == nil && (resp.Result != nil || resp.Error != nil) {
			return in, false, resp
		}
		c.writeErrorRawID(validRawID(w.ID), jsonrpc.CodeInvalidRequest,
			`invalid request: no "method"; expected {"jsonrpc":"2.0","id":…,"method":…,"params":…}`)
		return in, false, nil
	}
	if err == nil && w.JSONRPC != "2.0" {
		err = fmt.Errorf("invalid message version tag %q; expected \"2.0\"", w.JSONRPC)
	}
	if err == nil {
		if *w.Method == "" {
			c.writeErrorRawID(validRawID(w.ID), jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
			return in, false, nil
		}
		return incoming{id: w.ID, method: *w.Method, params: w.Params}, true, nil
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
	return in, false, nil
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
	if _, ok := requestKey(raw); ok {
		return raw
	}
	return nil
}

// requestKey returns the key of a request id, telling apart "1" and 1 and
// matching the same string however it is escaped, and whether the id is one
// a request may have: a string or a number. Numbers keep their bytes: 1 and
// 1.0 are different ids, as the client will see them echoed.
func requestKey(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "n" + string(raw), true
	}
	return "", false
}

// call registers a request under a private id and dispatches it.
func (c *stdioConn) call(in incoming) {
	key, ok := requestKey(in.id)
	if !ok {
		c.writeErrorRawID(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			`invalid request: "id" must be a string or a number, not %s; give each request a unique string or number id, or leave "id" out for a notification`,
			idKind(in.id)))
		return
	}
	// params are decoded once, for the dispatcher and the _meta check.
	var params map[string]json.RawMessage
	paramsOK := len(in.params) > 0 && in.params[0] == '{' && json.Unmarshal(in.params, &params) == nil
	var meta map[string]json.RawMessage // params._meta, decoded once too
	if m := params["_meta"]; len(m) > 0 && m[0] == '{' && json.Unmarshal(m, &meta) != nil {
		meta = nil
	}
	newProto, validNew := classify(meta)
	c.mu.Lock()
	if _, dup := c.keys[key]; dup {
		c.mu.Unlock()
		c.writeErrorRawID(in.id, jsonrpc.CodeInvalidRequest,
			"invalid request: id "+string(in.id)+" is already in use by a request in flight; give each request a unique id")
		return
	}
	c.nextID++
	n := c.nextID
	r := &request{raw: in.id, key: key, method: in.method, newProto: validNew}
	c.reqs[n] = r
	c.keys[key] = n
	if in.method == "initialize" && !c.initWritten.Load() {
		c.initID = n
	}
	c.mu.Unlock()

	if (newProto || in.method == "server/discover") && !c.registered && c.calls != nil {
		// The go-sdk answers this revision's tools/list, so it must know
		// the tools; given them before it serves the session's first
		// request of this revision, it sends no spurious list_changed on a
		// subscription.
		c.registered = true
		c.calls.RegisterWithSDK()
	}
	if !c.initRead {
		switch {
		case in.method == "initialize", in.method == "server/discover", newProto:
			c.initRead = true
		case in.method == "ping":
		default:
			c.initRead = true
			c.log.Info().Str("method", in.method).Str("protocolVersion", ImplicitProtocolVersion).
				Msg("first request is not initialize; initialising the session implicitly")
			c.send(c.implicitInitialize())
			c.send(&jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
		}
	}
	// A request that claims 2026-07-28 with a _meta not certainly valid is
	// the go-sdk's to judge.
	if c.direct && paramsOK && newProto == validNew && c.serveDirectly(n, in.method, params, validNew) {
		return
	}
	id, _ := jsonrpc.MakeID(float64(n)) // exact: n stays far below 2^53
	c.send(&jsonrpc.Request{ID: id, Method: in.method, Params: in.params})
}

// send hands msg to the go-sdk, unless the session is closed.
func (c *stdioConn) send(msg jsonrpc.Message) {
	select {
	case c.toSDK <- msg:
	case <-c.closed:
	}
}

// idKind names the JSON type of an id for an error message.
func idKind(raw json.RawMessage) string {
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "that"
}

// implicitInitialize makes up the initialize request of a session whose
// client sent none; its response is not sent.
func (c *stdioConn) implicitInitialize() *jsonrpc.Request {
	c.mu.Lock()
	c.nextID++
	n := c.nextID
	c.reqs[n] = &request{method: "initialize", implicit: true}
	c.initID = n
	c.mu.Unlock()
	id, _ := jsonrpc.MakeID(float64(n)) // exact: n stays far below 2^53
	params := `{"protocolVersion":"` + ImplicitProtocolVersion + `","capabilities":{},"clientInfo":{"name":"implicit","version":"0"}}`
	return &jsonrpc.Request{ID: id, Method: "initialize", Params: json.RawMessage(params)}
}

// notification handles a message without id. A cancellation is matched to
// the request it names: a call served directly is cancelled here, one the
// go-sdk serves is cancelled by the go-sdk, under its own id.
func (c *stdioConn) notification(in incoming) {
	req := &jsonrpc.Request{Method: in.method, Params: in.params}
	if in.method == "notifications/cancelled" {
		var p map[string]json.RawMessage
		if json.Unmarshal(in.params, &p) != nil {
			return
		}
		key, ok := requestKey(p["requestId"])
		if !ok {
			return
		}
		c.mu.Lock()
		n, ok := c.keys[key]
		var r *request
		if ok {
			r = c.reqs[n]
			r.cancelled = true
			if r.cancel != nil {
				r.cancel()
			}
		}
		c.mu.Unlock()
		if r == nil || r.cancel != nil {
			return
		}
		p["requestId"] = json.RawMessage(fmt.Sprint(n))
		req.Params, _ = json.Marshal(p)
	}
	c.send(req)
}

// protocolVersionKey is the _meta key of a 2026-07-28 request.
const protocolVersionKey = "io.modelcontextprotocol/protocolVersion"

// newProtocol is the revision that has no initialize: every request carries
// its protocol version, client info and capabilities in params._meta.
const newProtocol = "2026-07-28"

// classify reports whether a request follows 2026-07-28 by its decoded
// _meta (nil when absent or not an object) (a
// protocolVersion of 2026-07-28 or later, as the go-sdk decides), and
// whether its _meta is, by the spec, certainly valid: protocolVersion
// 2026-07-28, clientCapabilities an object, clientInfo absent or an
// Implementation. Anything else is left to the go-sdk to judge.
func classify(meta map[string]json.RawMessage) (newProto, valid bool) {
	if meta == nil {
		return false, false
	}
	var version string
	if json.Unmarshal(meta[protocolVersionKey], &version) != nil || version < newProtocol {
		return false, false
	}
	if version != newProtocol {
		return true, false
	}
	caps := meta["io.modelcontextprotocol/clientCapabilities"]
	var cv struct {
		mcp.ClientCapabilities
		// Deprecated by 2026-07-28 but still sent by its clients: it must
		// decode as the go-sdk decodes it.
		//lint:ignore SA1019 see above
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if len(caps) == 0 || caps[0] != '{' || json.Unmarshal(caps, &cv) != nil {
		return true, false
	}
	if info, ok := meta["io.modelcontextprotocol/clientInfo"]; ok {
		var impl mcp.Implementation
		if len(info) == 0 || info[0] != '{' || json.Unmarshal(info, &impl) != nil {
			return true, false
		}
	}
	return true, true
}

// serveDirectly is the dispatcher: it hands a request to the handler
// itself when the go-sdk would only have decoded it and passed it on, and
// reports whether it did. The rule:
//   - only tools/call of a tool the handler has, with params that hold
//     nothing but name, arguments (an object) and _meta;
//   - without a 2026-07-28 _meta, only once the go-sdk has written its
//     successful response to initialize;
//   - with a 2026-07-28 _meta, only if it is valid by the spec and once the
//     go-sdk has answered a request of the session with one.
//
// Everything else, tools/list included (its result carries fields the
// go-sdk's options decide), goes to the go-sdk. What the call then goes
// through is the handler's, the same as for a call the go-sdk passes on.
func (c *stdioConn) serveDirectly(n int64, method string, p map[string]json.RawMessage, newProto bool) bool {
	if method != "tools/call" {
		return false
	}
	if newProto && !c.newWritten.Load() || !newProto && !c.initWritten.Load() {
		return false
	}
	var name string
	for k, v := range p {
		switch k {
		case "_meta":
			if !newProto && (len(v) == 0 || v[0] != '{') {
				return false
			}
		case "name":
			if json.Unmarshal(v, &name) != nil {
				return false
			}
		case "arguments":
			if len(v) == 0 || v[0] != '{' {
				return false
			}
		default:
			return false
		}
	}
	if !c.waitReady() {
		return false
	}
	if !c.calls.HasTool(name) {
		return false // the go-sdk answers with the right error
	}
	ctx, cancel := context.WithCancel(c.callCtx)
	c.mu.Lock()
	r := c.reqs[n]
	r.cancel = cancel
	c.mu.Unlock()
	dc := DirectCall{ID: r.raw, Name: name, Args: p["arguments"], Meta: p["_meta"], NewProtocol: newProto, Session: c.session.Load()}
	c.callWG.Add(1)
	go func() {
		defer c.callWG.Done()
		defer cancel()
		c.answer(n, c.calls.CallDirect(ctx, dc)) // nil when cancelled: nothing is sent
	}()
	return true
}

// waitReady waits until the handler has its tools, which only takes time
// while the manifests are first loaded. Reading waits too, so requests keep
// their order. It reports false if the session closed meanwhile.
func (c *stdioConn) waitReady() bool {
	ready := c.calls.Ready()
	select {
	case <-ready:
		return true
	default:
	}
	c.log.Debug().Msg("waiting for the manifests to load")
	select {
	case <-ready:
		return true
	case <-c.closed:
		return false
	case <-c.stopping:
		return false
	}
}

// settle removes the request the go-sdk knows as n and returns it, or nil
// if it was answered already (after the drain timeout).
func (c *stdioConn) settle(n int64) *request {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reqs[n]
	if !ok {
		return nil
	}
	delete(c.reqs, n)
	if r.key != "" {
		delete(c.keys, r.key)
	}
	if c.eof && len(c.reqs) == 0 {
		c.closeDrained()
	}
	return r
}

// closeDrained closes c.drained once. c.mu must be held.
func (c *stdioConn) closeDrained() {
	select {
	case <-c.drained:
	default:
		close(c.drained)
	}
}

// finish is called once reading has ended. It waits until every request
// read has been answered, the drain timeout passed, or the connection was
// closed; requests still unanswered then get an error response.
func (c *stdioConn) finish(why string, limit time.Duration) error {
	c.mu.Lock()
	c.eof = true
	n := len(c.reqs)
	if n == 0 {
		c.closeDrained()
	}
	c.mu.Unlock()
	if n > 0 {
		c.log.Debug().Int("pending", n).Str("why", why).Msg("answering requests in flight")
	}
	if limit <= 0 {
		limit = c.drainFor
	}
	var timeout <-chan time.Time
	var timer *time.Timer
	if limit > 0 {
		timer = time.NewTimer(limit)
		defer timer.Stop()
		timeout = timer.C
	}
	stopped := c.stopping
	if why == "stopping" {
		stopped = nil
	}
	for {
		select {
		case <-c.drained:
			return io.EOF
		case <-c.closed:
			return io.EOF
		case <-stopped:
			// A signal while draining at end of input: the grace applies.
			stopped, why = nil, "stopping"
			if c.grace > 0 && (timer == nil || c.grace < limit) {
				if timer != nil {
					timer.Stop()
				}
				limit = c.grace
				timer = time.NewTimer(limit)
				defer timer.Stop()
				timeout = timer.C
			}
			continue
		case <-timeout:
		}
		break
	}
	c.mu.Lock()
	left := make([]*request, 0, len(c.reqs))
	for id, r := range c.reqs {
		delete(c.reqs, id)
		if !r.implicit && !r.cancelled {
			left = append(left, r)
		}
	}
	clear(c.keys)
	c.mu.Unlock()
	// The calls still running are cancelled: each ends, and is recorded,
	// at once; nobody reads their answers.
	c.cancelAll()
	wait := "the drain timeout"
	if why == "stopping" {
		wait = "the shutdown grace"
	}
	c.log.Warn().Int("unanswered", len(left)).Dur("waited", limit).Str("why", why).
		Msg("requests still running after " + wait + "; answering them with an error")
	for _, r := range left {
		c.writeErrorRawID(r.raw, jsonrpc.CodeInternalError, fmt.Sprintf(
			"tairseach-mcp is shutting down (%s) and %s did not finish within %s (%s); restart the server and retry",
			why, r.method, wait, limit))
	}
	return io.EOF
}

// Write writes a message of the go-sdk as one line, with the client's id.
func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		n, _ := m.ID.Raw().(int64)
		r := c.settle(n)
		if r == nil {
			return nil // answered already, or not a request of the client
		}
		// Direct serving of the session starts with the go-sdk's first
		// success: the flag is set under the write lock, before the line is
		// written, so that a direct answer (written under the same lock)
		// can never come before it, and a call the client sends as soon as
		// it reads it is certain to find it set.
		var started *atomic.Bool
		if m.Error == nil {
			c.mu.Lock()
			isInit := n == c.initID
			c.mu.Unlock()
			if isInit {
				started = &c.initWritten
			} else if r.newProto {
				started = &c.newWritten
			}
		}
		var err error
		switch {
		case r.cancelled, r.implicit:
			if r.implicit && m.Error != nil {
				c.log.Error().Err(m.Error).Msg("implicit initialize failed")
			}
			if started != nil {
				started.Store(true)
			}
		case m.Error != nil:
			err = c.writeErrorLine(r.raw, m.Error)
		default:
			err = c.writeResult(r.raw, m.Result, started)
		}
		return err
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			c.mu.Lock()
			c.outgoing[m.ID] = struct{}{}
			c.mu.Unlock()
		}
		if m.Method == "notifications/tools/list_changed" {
			// A session of an earlier revision is told by Notify; one of
			// 2026-07-28 on its subscription, by the go-sdk, but only of a
			// real change: the go-sdk also tells it when it is first given
			// the tools.
			if !hasMeta(m.Params) || !c.changed.Swap(false) {
				return nil
			}
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

// hasMeta reports whether params has a _meta (a notification on a
// 2026-07-28 subscription).
func hasMeta(params json.RawMessage) bool {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && len(p.Meta) > 0
}

// writeResult writes a successful response around its result, which is
// already marshalled: re-encoding the message would scan and copy the whole
// result again.
//
// A non-nil started is set once the line is certain to come before any
// other written after it.
func (c *stdioConn) writeResult(id, result []byte, started *atomic.Bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if started != nil {
		started.Store(true)
	}
	buf := append(c.wbuf[:0], `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = append(buf, result...)
	buf = append(buf, "}\n"...)
	return c.flush(buf)
}

// writeErrorLine writes an error response of the go-sdk.
func (c *stdioConn) writeErrorLine(id []byte, e error) error {
	var we *jsonrpc.Error
	if !errors.As(e, &we) {
		we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: e.Error()}
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, we})
	if err != nil {
		return err
	}
	return c.writeLine(data)
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

// writeErrorRawID answers a message the go-sdk never sees.
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

// Close stops the session. It is safe to call more than once. It does not
// wait for the reading goroutine, which may be blocked on stdin.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		if c.detach != nil {
			c.detach()
		}
		c.cancelAll()
		close(c.closed)
		if cl, ok := c.rawIn.(io.Closer); ok {
			go func() { _ = cl.Close() }()
		}
		c.callWG.Wait() // the calls were cancelled: they end promptly
	})
	return nil
}

// answer writes the result of a request served directly, unless the client
// cancelled it; a nil result writes nothing.
func (c *stdioConn) answer(n int64, result []byte) {
	r := c.settle(n)
	if r == nil || r.cancelled || result == nil {
		return
	}
	if err := c.writeResult(r.raw, result, nil); err != nil {
		c.log.Warn().Err(err).Msg("writing a result")
	}
}

// Notify sends a notification to the client once the go-sdk has answered
// its initialize; before that it is dropped, as the client will list anyway.
// A 2026-07-28 client is told of changes only on a subscription, by the
// go-sdk.
func (c *stdioConn) Notify(method string) {
	c.changed.Store(true)
	if !c.initWritten.Load() {
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
