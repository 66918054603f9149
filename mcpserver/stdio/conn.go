package stdio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
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
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if t.End == nil {
		t.End = shutdown.New(shutdown.Config{})
	}
	c := &conn{
		calls:     t.Calls,
		direct:    t.Calls != nil && !t.NoDirect,
		callCtx:   ctx,
		cancelAll: cancel,
		in:        bufio.NewReaderSize(t.In, 64<<10),
		rawIn:     t.In,
		out:       t.Out,
		end:       t.End,
		outgoing:  make(map[jsonrpc.ID]struct{}),
		linger:    t.Linger,
		maxLine:   max,
		log:       t.Logger,
		toSDK:     make(chan jsonrpc.Message),
		inputEnd:  make(chan struct{}),
		wlock:     make(chan struct{}, 1),
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
	t.conn = c
	go c.readLoop()
	return c, nil
}

// Bind tells the connection its go-sdk session, which the calls it serves
// directly report progress on and ask the user through.
func (t *Transport) Bind(ss *mcp.ServerSession) {
	t.connMu.Lock()
	c := t.conn
	t.connMu.Unlock()
	if c != nil {
		c.session.Store(ss)
	}
}

// Settled is closed once the session has stopped reading and every request
// it read has been answered, or cut off and ended: every call has been
// recorded. Answers may still be on their way to a client that reads
// slowly, or none at all. Nil before Connect.
func (t *Transport) Settled() <-chan struct{} {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if t.conn == nil {
		return nil
	}
	return t.conn.drained
}

// Unwritten reports whether End stopped with messages unwritten: given up,
// or one blocked for good. A client that no longer reads stdout never got
// them.
func (t *Transport) Unwritten() bool {
	t.connMu.Lock()
	c := t.conn
	t.connMu.Unlock()
	if c == nil {
		return false
	}
	select {
	case <-c.end.Stopped():
		return c.givenUp.Load() > 0 || c.blocked.Load()
	default:
		return false
	}
}

// Read returns the next message for the go-sdk. At end of input, or once
// End drains, it first ends the requests that could never end on their own
// (see ending), then drains (see finish) and returns io.EOF.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if !c.finishing {
		select {
		case msg := <-c.toSDK:
			return msg, nil
		case <-c.inputEnd:
			if c.linger {
				c.lingerOnce.Do(func() { c.log.Info().Msg("stdin closed; lingering until stopped (--linger)") })
				select {
				case <-c.end.Draining():
				case <-c.closed:
					return nil, io.EOF
				}
			}
			c.end.Drain(shutdown.EndOfInput)
		case <-c.end.Draining():
		case <-c.closed:
			return nil, io.EOF
		}
	}
	if msg := c.ending(); msg != nil {
		return msg, nil
	}
	return c.finish()
}

// finish is called once reading has ended, on every later Read. It returns
// io.EOF once every request read has been answered. Meanwhile it hands the
// go-sdk the messages read before the drain began, and the ending messages.
//
// When End hurries, what is left is cut off (see cutOff), and io.EOF waits
// until every call cut off has ended, so that each is recorded before the
// session may end. That wait has no time limit of its own: a cancelled call
// ends at once, as every wait of the pipeline takes its context; End's
// Abandoned is the last resort of whoever waits for the session.
func (c *conn) finish() (jsonrpc.Message, error) {
	if !c.finishing {
		c.finishing = true
		c.mu.Lock()
		c.eof = true
		n := len(c.reqs)
		if n == 0 {
			c.closeDrained()
		}
		c.mu.Unlock()
		if n > 0 {
			c.log.Debug().Int("pending", n).Str("why", string(c.end.Reason())).Msg("answering requests in flight")
		}
	}
	hurried := c.end.Hurried()
	for {
		if c.cutDone {
			hurried = nil
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
		case msg := <-c.toSDK:
			// Read before the drain began (a signal came while the line
			// was dispatched): the go-sdk serves it, unless it was cut off.
			if msg = c.stillWanted(msg); msg != nil {
				return msg, nil
			}
		case <-hurried:
			c.cutOff()
			if msg := c.ending(); msg != nil {
				return msg, nil
			}
		}
	}
}

// stillWanted returns msg, a message for the go-sdk, or nil once the
// session was cut off: a request cut off before the go-sdk had it is
// settled here, as nothing else will.
func (c *conn) stillWanted(msg jsonrpc.Message) jsonrpc.Message {
	if !c.cutDone {
		return msg
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		n, _ := req.ID.Raw().(int64)
		c.settle(n)
	}
	return nil
}

// cutOff cuts off, once, every request still unanswered: each is answered
// with an error naming why, and cancelled, a call served directly through
// its context, a request of the go-sdk's through the go-sdk. Each stays in
// c.reqs until it has ended; what it answers then is dropped.
func (c *conn) cutOff() {
	c.cutDone = true
	st := c.end.Status()
	var left []*request
	c.mu.Lock()
	for n, r := range c.reqs {
		r.cut = true
		if !r.implicit && !r.cancelled {
			left = append(left, r)
		}
		if r.cancel == nil && !r.cancelled {
			// The go-sdk's, or one the dispatcher has not yet handed
			// over: the go-sdk ignores the cancellation of an id it does
			// not know, and such a request, once handed over, is dropped
			// (stillWanted).
			c.endingMsgs = append(c.endingMsgs, cancelRequest(n, st.Drain))
		}
	}
	c.mu.Unlock()
	// The calls served directly, and any the dispatcher is about to start.
	c.cancelAll()
	if len(left) == 0 {
		return
	}
	limit := st.Limit.Round(time.Millisecond)
	c.log.Warn().Int("unanswered", len(left)).Dur("limit", limit).Str("why", string(st.Drain)).
		Msg("requests still running at the " + string(st.Hurry) + "; answering them with an error")
	// Written by a goroutine of its own: a client that no longer reads
	// stdout must not hold the cancellations back.
	c.callWG.Add(1)
	go func() {
		defer c.callWG.Done()
		for i, r := range left {
			msg := fmt.Sprintf("tairseach-mcp is shutting down (%s) and %s did not finish within the %s (%s); restart the server and retry",
				st.Drain, quote.Word(r.method, quote.Name), st.Hurry, limit)
			if st.Hurry == shutdown.SecondSignal {
				msg = fmt.Sprintf("tairseach-mcp is shutting down (%s) and %s was cut off by a %s after %s; restart the server and retry",
					st.Drain, quote.Word(r.method, quote.Name), st.Hurry, limit)
			}
			if err := c.writeLine(errorLine(r.raw, jsonrpc.CodeInternalError, msg)); err != nil {
				if !c.outClosed.Load() { // said once, as it closed
					c.log.Warn().Err(err).Int("unanswered", len(left)-i).Msg("answering the requests cut off")
				}
				return
			}
		}
	}()
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
		// The calls were cancelled: they end at once, each recorded as it
		// ends; End abandons one that does not. Their answers are waited
		// for until End stops: one may be stuck writing to a client that
		// no longer reads stdout.
		waitFor(&c.running, c.end.Abandoned())
		waitFor(&c.callWG, c.end.Stopped())
	})
	return nil
}

// waitFor waits for wg, or until stop is closed, leaving the waiting
// goroutine to the process's exit.
func waitFor(wg *sync.WaitGroup, stop <-chan struct{}) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-stop:
	}
}
