package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/exact"
)

// readLoop reads lines until end of input or the drain. A read blocked on an
// input that never ends does not keep the session open: Read stops waiting
// for it, and the goroutine ends with the process.
//
// Reading is a role more than a goroutine: a call served inline (see
// serveInline) may hand it to a new goroutine, and readLoop then returns
// without ending the input.
func (c *conn) readLoop() {
	handedOver := false
	defer func() {
		if !handedOver {
			close(c.inputEnd)
		}
	}()
	for {
		line, err := c.readLine()
		select {
		case <-c.end.Draining():
			c.refuse(line)
			return
		case <-c.closed:
			return
		default:
		}
		if len(line) > 0 && !c.dispatch(line) {
			handedOver = true
			return
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

// refuse answers a request read once the drain has begun: it is not
// served, and the client must not wait for it.
func (c *conn) refuse(line []byte) {
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if len(line) == 0 || json.Unmarshal(line, &w) != nil || w.Method == "" {
		return
	}
	if id := validRawID(w.ID); id != nil {
		c.writeErrorRawID(id, jsonrpc.CodeInternalError,
			"tairseach-mcp is shutting down ("+string(c.end.Status().Drain)+") and did not serve "+w.Method+"; restart the server and retry")
	}
}

// readLine returns the next line without its newline, in a buffer that is
// reused by the next call. A final line without a newline is returned with
// io.EOF.
func (c *conn) readLine() ([]byte, error) {
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
func (c *conn) shrink() {
	if cap(c.line) > 1<<20 {
		c.line = nil
	}
}

// dispatch decodes one line and sends it on its way. It reports false when
// another goroutine has taken over reading meanwhile.
func (c *conn) dispatch(line []byte) bool {
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
		c.handleNotification(in)
	default:
		return c.call(in)
	}
	return true
}

// decode parses one line. For a line that is not a JSON-RPC 2.0 message it
// writes the error response and returns ok false; a response to a request
// of the server comes back as resp.
func (c *conn) decode(line []byte) (in incoming, ok bool, resp jsonrpc.Message) {
	if in, ok := quickDecode(line); ok {
		return in, true, nil
	}
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
		err = fmt.Errorf("invalid message version tag %s; expected \"2.0\"", quote.Line(w.JSONRPC, quote.Name))
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

// quickDecode decodes the common request or notification in one scan
// without encoding/json: members jsonrpc "2.0", method a string without
// escapes, id a string or a number, params an object, each at most once
// and nothing else. ok is false for anything else, which decode then
// decodes, and answers, as encoding/json reads it. The id and params alias
// one copy of line.
func quickDecode(line []byte) (in incoming, ok bool) {
	var version, method, id, params []byte
	other := false
	err := jsonscan.Members(line, func(key, value []byte) bool {
		var v *[]byte
		switch {
		case string(key) == "jsonrpc":
			v = &version
		case string(key) == "method":
			v = &method
		case string(key) == "id":
			v = &id
		case string(key) == "params":
			v = &params
		default:
			other = true
			return false
		}
		if *v != nil {
			other = true
			return false
		}
		*v = value
		return true
	})
	if err != nil || other || string(version) != `"2.0"` || len(method) < 3 || !plainString(method) ||
		len(params) > 0 && params[0] != '{' {
		return in, false
	}
	if len(id) > 0 {
		if _, ok := requestKey(id); !ok || id[0] == '"' && bytes.IndexByte(id, '\\') >= 0 {
			return in, false
		}
	}
	switch m := method[1 : len(method)-1]; string(m) {
	case "tools/call": // no allocation for the common one
		in.method = "tools/call"
	default:
		in.method = string(m)
	}
	if len(id)+len(params) > 0 {
		buf := make([]byte, 0, len(id)+len(params))
		buf = append(buf, id...)
		buf = append(buf, params...)
		in.id = buf[:len(id):len(id)]
		if len(params) > 0 {
			in.params = buf[len(id):]
		}
	}
	return in, true
}

// call registers a request under a private id and dispatches it. It
// reports false when another goroutine has taken over reading meanwhile.
func (c *conn) call(in incoming) bool {
	key, ok := requestKey(in.id)
	if !ok {
		c.writeErrorRawID(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			`invalid request: "id" must be a string or a number, not %s; give each request a unique string or number id, or leave "id" out for a notification`,
			idKind(in.id)))
		return true
	}
	// params are scanned once, for the dispatcher and the _meta check.
	params, paramsOK := scanParams(in.params)
	newProto, validNew := c.meta.revision(params.meta)
	c.mu.Lock()
	if _, dup := c.keys[key]; dup {
		c.mu.Unlock()
		c.writeErrorRawID(in.id, jsonrpc.CodeInvalidRequest,
			"invalid request: id "+string(in.id)+" is already in use by a request in flight; give each request a unique id")
		return true
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
	if c.direct && paramsOK && newProto == validNew {
		if served, reading := c.serveDirectly(n, in.method, params, validNew); served {
			return reading
		}
	}
	id, _ := jsonrpc.MakeID(float64(n)) // exact: n stays far below 2^53
	c.send(&jsonrpc.Request{ID: id, Method: in.method, Params: c.exactToken(n, in.params, params.meta)})
	return true
}

// send hands msg to the go-sdk, unless the session is closed.
func (c *conn) send(msg jsonrpc.Message) {
	select {
	case c.toSDK <- msg:
	case <-c.closed:
	}
}

// implicitInitialize makes up the initialize request of a session whose
// client sent none; its response is not sent.
func (c *conn) implicitInitialize() *jsonrpc.Request {
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

// handleNotification handles a message without id. A cancellation is matched to
// the request it names: a call served directly is cancelled here, one the
// go-sdk serves is cancelled by the go-sdk, under its own id.
func (c *conn) handleNotification(in incoming) {
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
		// Which request a cancellation reached, if any, for whoever reads
		// a session's log: one that arrives after its call has ended
		// finds none.
		c.log.Debug().RawJSON("request_id", p["requestId"]).Bool("in_flight", r != nil).Bool("direct", r != nil && r.cancel != nil).Msg("cancellation received")
		if r == nil || r.cancel != nil {
			return
		}
		p["requestId"] = json.RawMessage(fmt.Sprint(n))
		req.Params, _ = json.Marshal(p)
	}
	c.send(req)
}

// serveDirectly is the dispatcher: it hands a request to the handler
// itself when the go-sdk would only have decoded it and passed it on, and
// reports whether it did, and whether the calling goroutine still reads
// the input (see serveInline). The rule:
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
func (c *conn) serveDirectly(n int64, method string, p callParams, newProto bool) (served, reading bool) {
	if method != "tools/call" {
		return false, true
	}
	if newProto && !c.newWritten.Load() || !newProto && !c.initWritten.Load() {
		return false, true
	}
	if p.other || p.hasMeta && !newProto && (len(p.meta) == 0 || p.meta[0] != '{') ||
		p.hasArgs && (len(p.args) == 0 || p.args[0] != '{') {
		return false, true
	}
	name, ok := toolName(p.name)
	if p.hasName && !ok {
		return false, true
	}
	if !c.waitReady() {
		return false, true
	}
	if !c.calls.HasTool(name) {
		return false, true // the go-sdk answers with the right error
	}
	ss := c.session.Load()
	if ss == nil {
		// The go-sdk may answer initialize before Connect has returned and
		// the session was bound: until it is, calls go to the go-sdk, which
		// has it (to ask the user, to report progress).
		return false, true
	}
	ctx, cancel := context.WithCancel(c.callCtx)
	c.mu.Lock()
	r := c.reqs[n]
	r.cancel = cancel
	alone := len(c.reqs) == 1
	c.mu.Unlock()
	dc := DirectCall{ID: r.raw, Name: name, Args: p.args, Meta: p.meta, NewProtocol: newProto, Session: ss}
	c.callWG.Add(1)
	c.running.Add(1)
	if alone && c.in.Buffered() == 0 {
		return true, c.serveInline(ctx, cancel, n, dc)
	}
	go func() {
		defer c.callWG.Done()
		defer cancel()
		res := c.calls.CallDirect(ctx, dc)
		c.running.Done()
		c.answer(n, res) // nil when cancelled: nothing is sent
	}()
	return true, true
}

// serveInline serves a call on the reading goroutine. A client that waits
// for each answer before it sends the next request (nothing else in
// flight, nothing more read) would otherwise have each call handed to a new
// goroutine, on another thread, with a fresh stack to grow: tens of
// microseconds a call. Nothing reads the input meanwhile, so a call that
// outlasts a tick or two of the inline watch hands reading to a new
// goroutine (the watch's timer's), which then sees its cancellation as it
// would for a call in its own goroutine. It reports whether the calling
// goroutine still reads: false once reading was handed over.
func (c *conn) serveInline(ctx context.Context, cancel context.CancelFunc, n int64, dc DirectCall) bool {
	defer c.callWG.Done()
	defer cancel()
	ticket := c.watch.begin()
	res := c.calls.CallDirect(ctx, dc)
	c.running.Done()
	reading := c.watch.end(ticket)
	c.answer(n, res) // nil when cancelled: nothing is sent
	return reading
}

// callParams are the members of a request's params the dispatcher looks
// at, aliasing the params.
type callParams struct {
	name, args, meta          json.RawMessage
	hasName, hasArgs, hasMeta bool
	// other: a member besides these, or one of them twice (encoding/json
	// keeps the last; the go-sdk judges such params)
	other bool
}

// toolName decodes the name of a tools/call, a JSON string; ok is false
// for any other value.
func toolName(v json.RawMessage) (name string, ok bool) {
	if plainString(v) {
		return string(v[1 : len(v)-1]), true
	}
	return slowToolName(v)
}

// plainString reports whether the valid JSON value v is a string of
// printable ASCII without escapes: its text is its bytes, as encoding/json
// would decode it.
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	for _, b := range v[1 : len(v)-1] {
		if b < 0x20 || b >= 0x7f || b == '\\' {
			return false
		}
	}
	return true
}

func slowToolName(v json.RawMessage) (name string, ok bool) {
	return name, json.Unmarshal(v, &name) == nil
}

// scanParams finds the members of params, which must be a valid JSON
// object for ok, without decoding them.
func scanParams(params json.RawMessage) (p callParams, ok bool) {
	if len(params) == 0 || params[0] != '{' {
		return p, false
	}
	err := jsonscan.Members(params, func(key, value []byte) bool {
		var seen *bool
		switch {
		case jsonscan.KeyIs(key, "name"):
			p.name, seen = value, &p.hasName
		case jsonscan.KeyIs(key, "arguments"):
			p.args, seen = value, &p.hasArgs
		case jsonscan.KeyIs(key, "_meta"):
			p.meta, seen = value, &p.hasMeta
		default:
			p.other = true
			return true
		}
		p.other = p.other || *seen
		*seen = true
		return true
	})
	return p, err == nil
}

// waitReady waits until the handler has its tools, which only takes time
// while the manifests are first loaded. Reading waits too, so requests keep
// their order. It reports false if the session closed meanwhile.
func (c *conn) waitReady() bool {
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
	case <-c.end.Draining():
		return false
	}
}

// exactToken returns the params of the request the go-sdk knows as n, with
// a progress token in meta (its _meta, within params) that the go-sdk
// would not write back byte for byte (exact.Token) replaced by a private
// one; the client's is kept on the request, for restoreToken.
func (c *conn) exactToken(n int64, params, meta []byte) []byte {
	if len(meta) == 0 || meta[0] != '{' || !bytes.Contains(meta, []byte(`progressToken`)) {
		return params
	}
	var tok []byte
	_ = jsonscan.Members(meta, func(key, value []byte) bool {
		if jsonscan.KeyIs(key, "progressToken") {
			tok = value // the last, as encoding/json keeps
		}
		return true
	})
	if tok == nil || exact.Token(tok) {
		return params
	}
	// tok is within params: where, from how much of the array is left.
	i := cap(params) - cap(tok)
	if i < 0 || i+len(tok) > len(params) || &params[i] != &tok[0] {
		return params
	}
	private := strconv.AppendInt([]byte(privateToken), n, 10)
	private = append(private, '"')
	out := make([]byte, 0, len(params)+len(private))
	out = append(append(append(out, params[:i]...), private...), params[i+len(tok):]...)
	c.mu.Lock()
	if r := c.reqs[n]; r != nil {
		r.token = bytes.Clone(tok)
	}
	c.mu.Unlock()
	return out
}
