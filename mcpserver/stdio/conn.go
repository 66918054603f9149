package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect implements mcp.Transport. It returns at once: reading starts in
// its own goroutine.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	// The calls live as long as the session, not as the context of Connect.
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
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
		more:      make(chan struct{}, 1),
		closed:    make(chan struct{}),
	}
	c.watch = newInlineWatch(c.readLoop)
	if t.Calls != nil {
		c.detach = t.Calls.Attach(c)
	}
	t.connMu.Lock()
	if t.hurry == nil {
		t.hurry = make(chan struct{})
	}
	c.hurry = t.hurry
	if t.drain == nil {
		t.drain = make(chan struct{})
	}
	c.drain = t.drain
	t.conn = c
	t.connMu.Unlock()
	go c.readLoop()
	return c, nil
}

// bind tells the connection its go-sdk session, which the calls it serves
// directly report progress on and ask the user through.
func (t *Transport) Bind(ss *mcp.ServerSession) {
	t.connMu.Lock()
	c := t.conn
	t.connMu.Unlock()
	if c != nil {
		c.session.Store(ss)
	}
}

// Draining is closed when the session has read its last line and waits
// for the requests in flight (--drain-timeout), so that the process can
// end even if a client that no longer reads stdout blocks every answer.
func (t *Transport) Draining() <-chan struct{} {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if t.drain == nil {
		t.drain = make(chan struct{})
	}
	return t.drain
}

// Hurry ends the drain of a stopping session at once: the requests still
// in flight are answered with an error and cancelled. Used on a second stop
// signal.
func (t *Transport) Hurry() {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if t.hurry == nil {
		t.hurry = make(chan struct{})
	}
	select {
	case <-t.hurry:
	default:
		close(t.hurry)
	}
}

// Stop ends the session as end of input does: reading stops, requests in
// flight get DrainTimeout to finish, the rest are answered with an error.
// Used on SIGINT and SIGTERM, when stdin may stay open.
func (t *Transport) Stop() {
	t.connMu.Lock()
	c := t.conn
	t.connMu.Unlock()
	if c != nil {
		c.stop()
	}
}

// Read returns the next message for the go-sdk. At end of input, or once
// stopped, it first ends the requests that could never end on their own
// (see ending), then drains and returns io.EOF.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
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
		return c.finish("stopping", c.grace)
	default:
		return c.finish("stdin closed", c.drainFor)
	}
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

// endListen is the cancellation that ends the listen the go-sdk knows as n.
func endListen(n int64) jsonrpc.Message {
	return &jsonrpc.Request{Method: "notifications/cancelled",
		Params: json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":"the client closed its input"}`, n))}
}

// unanswered is the response that ends a request of the server to a client
// that can no longer answer.
func unanswered(id jsonrpc.ID) jsonrpc.Message {
	return &jsonrpc.Response{ID: id,
		Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client closed its input before answering"}}
}

func (c *conn) stop() {
	c.stopOnce.Do(func() { close(c.stopping) })
}

// finish is called once reading has ended. It waits until every request
// read has been answered, the drain timeout passed, or the connection was
// closed; requests still unanswered then get an error response.
func (c *conn) finish(why string, limit time.Duration) (jsonrpc.Message, error) {
	c.mu.Lock()
	c.eof = true
	n := len(c.reqs)
	if n == 0 {
		c.closeDrained()
	}
	if c.drainStart.IsZero() {
		// The first call: the drain begins. Later ones (after an ending
		// message was handed over) keep its deadline.
		if limit <= 0 {
			limit = c.drainFor
		}
		c.drainWhy, c.drainStart = why, time.Now()
		if limit > 0 {
			c.drainDeadline = c.drainStart.Add(limit)
		}
		if n > 0 {
			c.log.Debug().Int("pending", n).Str("why", why).Msg("answering requests in flight")
		}
		if why != "stopping" {
			c.drainOnce.Do(func() { close(c.drain) })
		}
	}
	c.mu.Unlock()
	stopped := c.stopping
	hurried := false
	for {
		if c.drainWhy == "stopping" {
			stopped = nil
		}
		var timeout <-chan time.Time
		if !c.drainDeadline.IsZero() {
			timer := time.NewTimer(time.Until(c.drainDeadline))
			defer timer.Stop()
			timeout = timer.C
		}
		select {
		case <-c.drained:
			return nil, io.EOF
		case <-c.closed:
			return nil, io.EOF
		case <-c.more:
			if msg := c.ending(); msg != nil {
				return msg, nil
			}
			continue
		case <-stopped:
			// A signal while draining at end of input: the grace applies.
			c.drainWhy = "stopping"
			if d := time.Now().Add(c.grace); c.grace > 0 && (c.drainDeadline.IsZero() || d.Before(c.drainDeadline)) {
				c.drainDeadline = d
			}
			continue
		case <-timeout:
		case <-c.hurry:
			hurried = true
		}
		break
	}
	why = c.drainWhy
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
	waited := c.drainDeadline.Sub(c.drainStart).Round(time.Millisecond)
	wait := "the drain timeout"
	switch {
	case hurried:
		waited = time.Since(c.drainStart).Round(time.Millisecond)
		wait = "the shutdown grace, cut short by a second stop signal,"
	case why == "stopping":
		wait = "the shutdown grace"
	}
	c.log.Warn().Int("unanswered", len(left)).Dur("waited", waited).Str("why", why).
		Msg("requests still running after " + wait + "; answering them with an error")
	for _, r := range left {
		c.writeErrorRawID(r.raw, jsonrpc.CodeInternalError, fmt.Sprintf(
			"tairseach-mcp is shutting down (%s) and %s did not finish within %s (%s); restart the server and retry",
			why, r.method, wait, waited))
	}
	return nil, io.EOF
}

// Close stops the session. It is safe to call more than once. It does not
// wait for the reading goroutine, which may be blocked on stdin.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		if c.detach != nil {
			c.detach()
		}
		c.cancelAll()
		c.watch.stop()
		close(c.closed)
		if cl, ok := c.rawIn.(io.Closer); ok {
			go func() { _ = cl.Close() }()
		}
		c.callWG.Wait() // the calls were cancelled: they end promptly
	})
	return nil
}
