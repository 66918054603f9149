package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
)

func (c *conn) SessionID() string { return "" }

// settle removes the request the go-sdk knows as n and returns it, or nil
// if it was answered already. A request cut off by the hurry is answered
// by the transport once settled: its own answer is not written.
func (c *conn) settle(n int64) *request {
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
func (c *conn) closeDrained() {
	select {
	case <-c.drained:
	default:
		close(c.drained)
	}
}

// Write writes a message of the go-sdk as one line, with the client's id.
// Once the client has closed stdout, a message is dropped without an
// error: the session ends by its drain, as at the end of its input, not
// by the go-sdk tearing it down under the calls in flight.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := c.write(ctx, msg); err != nil && !c.outClosed.Load() {
		return err
	}
	return nil
}

func (c *conn) write(_ context.Context, msg jsonrpc.Message) error {
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
		case r.cancelled, r.implicit, r.cut:
			if r.implicit && m.Error != nil {
				c.log.Error().Err(m.Error).Msg("implicit initialize failed")
			}
			if started != nil {
				started.Store(true)
			}
		case m.Error != nil:
			err = c.writeErrorLine(r.raw, m.Error)
		default:
			result := m.Result
			if r.method == "subscriptions/listen" {
				result = withSubscriptionID(result, func(int64) json.RawMessage { return r.raw })
			}
			err = c.writeResult(r.raw, result, started)
		}
		return err
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			c.mu.Lock()
			if c.endingBuilt {
				// Asked after the client closed its input: it can no
				// longer answer.
				c.addEnding(unanswered(m.ID))
			} else {
				c.outgoing[m.ID] = struct{}{}
			}
			c.mu.Unlock()
		} else if p := withSubscriptionID(m.Params, c.clientID); !bytes.Equal(p, m.Params) {
			m = &jsonrpc.Request{Method: m.Method, Params: p}
			msg = m
		} else if m.Method == "notifications/progress" {
			if p := c.restoreToken(m.Params); len(p) != len(m.Params) {
				m = &jsonrpc.Request{Method: m.Method, Params: p}
				msg = m
			}
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

// writeResult writes a successful response around its result, which is
// already marshalled: re-encoding the message would scan and copy the whole
// result again.
//
// A non-nil started is set once the line is certain to come before any
// other written after it.
func (c *conn) writeResult(id, result []byte, started *atomic.Bool) error {
	if !c.lockOut() {
		return errStopped
	}
	defer c.unlockOut()
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
func (c *conn) writeErrorLine(id []byte, e error) error {
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
func (c *conn) writeLine(data []byte) error {
	if !c.lockOut() {
		return errStopped
	}
	defer c.unlockOut()
	return c.flush(append(append(c.wbuf[:0], data...), '\n'))
}

// errStopped is the error of a write given up when End stopped.
var errStopped = errors.New("writing stdout: given up at shutdown (is the client still reading?)")

// lockOut takes the output's lock, or reports false once End has stopped:
// the writer holding it may be blocked for good.
func (c *conn) lockOut() bool {
	stopped := c.end.Stopped()
	select {
	case c.wlock <- struct{}{}:
	case <-stopped:
		c.givenUp.Add(1)
		return false
	}
	select {
	case <-stopped:
		<-c.wlock
		c.givenUp.Add(1)
		return false
	default:
		return true
	}
}

func (c *conn) unlockOut() { <-c.wlock }

// flush writes buf, a line built in c.wbuf, and keeps the buffer unless a
// huge message grew it. The output's lock must be held.
func (c *conn) flush(buf []byte) error {
	if c.outClosed.Load() {
		return errOutputClosed
	}
	c.blocked.Store(true)
	_, err := c.out.Write(buf)
	c.blocked.Store(false)
	if cap(buf) <= 1<<20 {
		c.wbuf = buf
	}
	if err != nil {
		if c.outClosed.CompareAndSwap(false, true) {
			// The client closed stdout (EPIPE: SIGPIPE is not fatal, see
			// shutdown.Owner.Start): no answer can reach it. The session
			// ends as at the end of its input, bounded as at a signal;
			// each call in flight still ends and is recorded.
			c.log.Warn().Err(err).Msg("stdout closed by the client: ending the session; answers are no longer written")
			c.end.Drain(shutdown.OutputClosed)
		}
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

// errOutputClosed is the error of a write after stdout failed.
var errOutputClosed = errors.New("writing stdout: closed by the client")

// errorLine is the error response to the request of id (null when nil).
func errorLine(id json.RawMessage, code int64, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	return data
}

// writeErrorRawID answers a message the go-sdk never sees.
func (c *conn) writeErrorRawID(id json.RawMessage, code int64, message string) {
	data := errorLine(id, code, message)
	c.log.Warn().Int64("code", code).Msg(message)
	if err := c.writeLine(data); err != nil && !c.outClosed.Load() {
		c.log.Warn().Err(err).Msg("writing error response")
	}
}

// answer writes the result of a request served directly, unless the client
// cancelled it; a nil result writes nothing.
func (c *conn) answer(n int64, result []byte) {
	r := c.settle(n)
	if r == nil || r.cancelled || r.cut || result == nil {
		return
	}
	if err := c.writeResult(r.raw, result, nil); err != nil && !c.outClosed.Load() {
		c.log.Warn().Err(err).Msg("writing a result")
	}
}

// Notify sends a notification to the client once the go-sdk has answered
// its initialize; before that it is dropped, as the client will list anyway.
// A 2026-07-28 client is told of changes only on a subscription, by the
// go-sdk.
func (c *conn) Notify(method string) {
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

// subscriptionIDKey is the _meta key by which the go-sdk names, in a
// notification on a 2026-07-28 subscription and in the listen's result, the
// subscriptions/listen request it belongs to.
const subscriptionIDKey = "io.modelcontextprotocol/subscriptionId"

// clientID returns the client's id of the request the go-sdk knows as n, or
// nil once it is answered.
func (c *conn) clientID(n int64) json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reqs[n]
	if !ok || r.raw == nil {
		return nil
	}
	if !r.acked {
		// The first notification of a listen is its acknowledgement: a
		// listen the client's end of input is waiting for can now end.
		r.acked = true
		if r.endOnAck {
			c.addEnding(endListen(n))
		}
	}
	return r.raw
}

// withSubscriptionID returns obj, a JSON object, with the subscription id in
// its _meta, the go-sdk's number for the listen request, replaced by the
// client's own id: a client matches the acknowledgement and the
// notifications of its listen by the id it gave it ("listen:0"). obj is
// returned unchanged when it names no subscription or the request is gone.
func withSubscriptionID(obj json.RawMessage, clientID func(n int64) json.RawMessage) json.RawMessage {
	if !bytes.Contains(obj, []byte(subscriptionIDKey)) {
		return obj
	}
	var o map[string]json.RawMessage
	var meta map[string]json.RawMessage
	var n int64
	if json.Unmarshal(obj, &o) != nil || json.Unmarshal(o["_meta"], &meta) != nil ||
		json.Unmarshal(meta[subscriptionIDKey], &n) != nil {
		return obj
	}
	id := clientID(n)
	if id == nil {
		return obj
	}
	meta[subscriptionIDKey] = id
	var err error
	if o["_meta"], err = json.Marshal(meta); err != nil {
		return obj
	}
	out, err := json.Marshal(o)
	if err != nil {
		return obj
	}
	return out
}

// ending returns, one per call, the messages that end what would otherwise
// wait for a client that is gone: a cancellation of each open
// subscriptions/listen (the go-sdk then answers it with its result), and
// an error response to each request of the server still unanswered (an
// elicitation: the call waiting for it is then refused). nil when none
// are left.
func (c *conn) ending() jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.endingBuilt {
		c.endingBuilt = true
		for n, r := range c.reqs {
			if r.method == "subscriptions/listen" && !r.cancelled {
				if r.acked {
					c.endingMsgs = append(c.endingMsgs, endListen(n))
				} else {
					r.endOnAck = true
				}
			}
		}
		for id := range c.outgoing {
			c.endingMsgs = append(c.endingMsgs, unanswered(id))
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

// addEnding queues one more ending message once they were built, and
// wakes the drain to hand it to the go-sdk. c.mu must be held.
func (c *conn) addEnding(msg jsonrpc.Message) {
	c.endingMsgs = append(c.endingMsgs, msg)
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// restoreToken returns the params of a progress notification of the go-sdk
// with the client's own token in place of a private one.
func (c *conn) restoreToken(params []byte) []byte {
	i := bytes.Index(params, []byte(privateToken))
	if i < 0 {
		return params
	}
	j := i + len(privateToken)
	end := bytes.IndexByte(params[j:], '"')
	if end < 0 {
		return params
	}
	n, err := strconv.ParseInt(string(params[j:j+end]), 10, 64)
	if err != nil {
		return params
	}
	c.mu.Lock()
	var tok []byte
	if r := c.reqs[n]; r != nil {
		tok = r.token
	}
	c.mu.Unlock()
	if tok == nil {
		return params
	}
	out := make([]byte, 0, len(params)+len(tok))
	return append(append(append(out, params[:i]...), tok...), params[j+end+1:]...)
}
