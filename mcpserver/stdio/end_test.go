package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// What the end of a session asks of the stdio transport, told by its
// shutdown.Owner: stop reading at the drain, answer what is in flight, and
// at the hurry cut off the rest, answering each request with an error only
// once its call has ended (so that each is recorded), whether the go-sdk
// or the CallHandler serves it.

const (
	initialize  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	long        = 10 * time.Second
)

// calls is a CallHandler whose tool "direct" waits {"ms": n}, or until it
// is cancelled and then "linger" ms more, as a call that records its end
// after some work would. It counts the calls that have ended.
type calls struct {
	ready chan struct{}
	ended atomic.Int32
}

func newCalls() *calls {
	c := &calls{ready: make(chan struct{})}
	close(c.ready)
	return c
}

func (c *calls) Ready() <-chan struct{}                { return c.ready }
func (c *calls) HasTool(name string) bool              { return name == "direct" }
func (c *calls) RegisterWithSDK()                      {}
func (c *calls) Attach(stdio.Notifier) (detach func()) { return func() {} }

func (c *calls) CallDirect(ctx context.Context, d stdio.DirectCall) []byte {
	defer c.ended.Add(1)
	var a struct{ MS, Linger int }
	_ = json.Unmarshal(d.Args, &a)
	select {
	case <-time.After(time.Duration(a.MS) * time.Millisecond):
		return []byte(`{"content":[{"type":"text","text":"done"}]}`)
	case <-ctx.Done():
		time.Sleep(time.Duration(a.Linger) * time.Millisecond)
		return nil
	}
}

// session is one stdio session of a go-sdk server with the tool "sleep"
// (served by the go-sdk) and the handler's "direct".
type session struct {
	t       *testing.T
	in      *io.PipeWriter
	lines   chan string
	done    chan error
	tr      *stdio.Transport
	calls   *calls
	sdkDone atomic.Int32 // "sleep" calls ended
}

// start runs a session ended by end. With out set, the session writes
// there and lines stays empty.
func start(t *testing.T, end *shutdown.Owner, out io.Writer) *session {
	t.Helper()
	inR, inW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 100), done: make(chan error, 1), calls: newCalls()}
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "sleep", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer s.sdkDone.Add(1)
			var a struct{ MS, Linger int }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			case <-ctx.Done():
				time.Sleep(time.Duration(a.Linger) * time.Millisecond)
				return nil, ctx.Err()
			}
		})
	var outR *io.PipeReader
	if out == nil {
		var outW *io.PipeWriter
		outR, outW = io.Pipe()
		out = outW
		t.Cleanup(func() { outW.Close() })
	}
	s.tr = &stdio.Transport{In: inR, Out: out, End: end, Calls: s.calls, Logger: zerolog.Nop()}
	ss, err := srv.Connect(context.Background(), s.tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.tr.Bind(ss)
	go func() { s.done <- ss.Wait() }()
	if outR != nil {
		go func() {
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				s.lines <- sc.Text()
			}
			close(s.lines)
		}()
	}
	t.Cleanup(func() { inW.Close(); _ = ss.Close(); end.Close() })
	return s
}

func (s *session) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			s.t.Fatalf("writing %q: %v", l, err)
		}
	}
}

// next returns the next line written, decoded.
func (s *session) next() map[string]any {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("output ended")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			s.t.Fatalf("not JSON: %q", l)
		}
		return m
	case <-time.After(long):
		s.t.Fatal("no line within 10s")
	}
	return nil
}

// ready initialises the session: from then on, "direct" is served by the
// handler.
func (s *session) ready() {
	s.t.Helper()
	s.send(initialize, initialized)
	if m := s.next(); m["id"] != 0.0 {
		s.t.Fatalf("initialize: %v", m)
	}
}

func (s *session) waitEnd() {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(long):
		s.t.Fatal("the session did not end within 10s")
	}
}

func call(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// At end of input the transport tells the owner, which gives the calls in
// flight the drain timeout: they finish and are answered.
func TestEndOfInputDrains(t *testing.T) {
	end := shutdown.New(shutdown.Config{Drain: long})
	s := start(t, end, nil)
	s.ready()
	s.send(call("1", "direct", `{"ms":100}`), call("2", "sleep", `{"ms":100}`))
	s.in.Close()
	got := map[float64]bool{}
	for range 2 {
		m := s.next()
		got[m["id"].(float64)] = m["result"] != nil
	}
	if !got[1] || !got[2] {
		t.Fatalf("results: %v", got)
	}
	s.waitEnd()
	if st := end.Status(); st.Drain != shutdown.EndOfInput || st.Hurry != "" {
		t.Errorf("owner: %+v", st)
	}
}

// At the drain timeout each call is cut off: answered at once with an
// error naming the reason and the limit, and cancelled. The session settles
// and ends only once every call has ended, however long that takes (here
// 300 ms, past the stop): a call records its end as it ends.
func TestHurryWaitsForEachCallToEnd(t *testing.T) {
	end := shutdown.New(shutdown.Config{Drain: 100 * time.Millisecond, StopAfter: 50 * time.Millisecond})
	s := start(t, end, nil)
	s.ready()
	s.send(call("1", "direct", `{"ms":60000,"linger":300}`), call("2", "sleep", `{"ms":60000,"linger":300}`))
	time.Sleep(50 * time.Millisecond) // both in flight
	s.in.Close()
	for range 2 {
		m := s.next()
		want := "tairseach-mcp is shutting down (end of input) and tools/call did not finish within the drain timeout (100ms)"
		if !strings.HasPrefix(errorMessage(m), want) {
			t.Errorf("answer %v, want an error %q", m, want)
		}
	}
	select {
	case <-s.tr.Settled():
	case <-time.After(long):
		t.Fatal("not settled")
	}
	if s.calls.ended.Load() != 1 || s.sdkDone.Load() != 1 {
		t.Fatalf("settled before the calls ended (direct %d, go-sdk %d)", s.calls.ended.Load(), s.sdkDone.Load())
	}
	if !isClosed(end.Stopped()) {
		t.Fatal("settled before the stop: the calls did not outlast it")
	}
	s.waitEnd()
	if end.Reason() != shutdown.DrainTimeout || s.tr.Unwritten() {
		t.Errorf("reason %q, unwritten %v", end.Reason(), s.tr.Unwritten())
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A stop signal with the input open: nothing more is served (a request
// read after it is refused, naming it), the call in flight finishes within
// the grace, and the session ends.
func TestStopSignalStopsReading(t *testing.T) {
	sig := make(chan os.Signal, 2)
	end := shutdown.New(shutdown.Config{Grace: long, Signals: sig})
	end.Start(context.Background())
	s := start(t, end, nil)
	s.ready()
	s.send(call("1", "direct", `{"ms":300}`))
	time.Sleep(50 * time.Millisecond)
	sig <- syscall.SIGTERM
	<-end.Draining()
	s.send(call("2", "direct", `{"ms":1}`))
	got := map[float64]map[string]any{}
	for range 2 {
		m := s.next()
		got[m["id"].(float64)] = m
	}
	if got[1]["result"] == nil {
		t.Errorf("call in flight at the signal: %v", got[1])
	}
	if msg := errorMessage(got[2]); msg != "tairseach-mcp is shutting down (stop signal) and did not serve tools/call; restart the server and retry" {
		t.Errorf("call read after the signal: %v", got[2])
	}
	s.waitEnd()
}

// A second signal cuts off at once, and the answer says so.
func TestSecondSignalCutsOff(t *testing.T) {
	sig := make(chan os.Signal, 2)
	end := shutdown.New(shutdown.Config{Grace: time.Hour, Signals: sig})
	end.Start(context.Background())
	s := start(t, end, nil)
	s.ready()
	s.send(call("1", "direct", `{"ms":60000}`))
	time.Sleep(50 * time.Millisecond)
	sig <- syscall.SIGTERM
	sig <- syscall.SIGINT
	m := s.next()
	if msg := errorMessage(m); !strings.HasPrefix(msg, "tairseach-mcp is shutting down (stop signal) and tools/call was cut off by a second stop signal after ") {
		t.Errorf("answer %v", m)
	}
	s.waitEnd()
}

// blockedWriter is a stdout nobody reads: every write after the first
// blocks until the test ends.
type blockedWriter struct {
	mu      sync.Mutex
	writes  int
	unblock chan struct{}
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	n := w.writes
	w.mu.Unlock()
	if n > 1 {
		<-w.unblock
	}
	return len(p), nil
}

// A client that no longer reads: the answer of a call that finished blocks
// the output. At the hurry the call still running is cut off; once it has
// ended the session settles, and at the stop the answers are given up: the
// transport does not wait for them.
func TestBlockedOutputIsGivenUpAtTheStop(t *testing.T) {
	end := shutdown.New(shutdown.Config{Drain: 100 * time.Millisecond, StopAfter: 100 * time.Millisecond})
	w := &blockedWriter{unblock: make(chan struct{})}
	defer close(w.unblock)
	s := start(t, end, w)
	s.send(initialize, initialized)
	time.Sleep(100 * time.Millisecond) // the initialize response is out
	// 2 first: a call served on the reading goroutine (nothing else in
	// flight) would block reading with its answer.
	s.send(call("2", "direct", `{"ms":60000,"linger":300}`))
	time.Sleep(20 * time.Millisecond)
	s.send(call("1", "direct", `{"ms":1}`))
	time.Sleep(50 * time.Millisecond) // 1 is blocked writing its answer
	s.in.Close()
	select {
	case <-end.Stopped():
	case <-time.After(long):
		t.Fatal("not stopped")
	}
	select {
	case <-s.tr.Settled():
	case <-time.After(long):
		t.Fatal("not settled after the stop")
	}
	if n := s.calls.ended.Load(); n != 2 {
		t.Errorf("settled with %d calls ended, want 2", n)
	}
	s.waitEnd()
	if !s.tr.Unwritten() {
		t.Error("Unwritten false with an answer blocked and an error given up")
	}
}

// With Linger the end of input does not drain: the session stays until a
// stop signal, and answers what was in flight.
func TestLingerWaitsForAStopSignal(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer outW.Close()
	end := shutdown.New(shutdown.Config{Grace: long})
	defer end.Close()
	tr := &stdio.Transport{In: inR, Out: outW, End: end, Linger: true, Logger: zerolog.Nop()}
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	ss, err := srv.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if _, err := io.WriteString(inW, initialize+"\n"); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	select {
	case <-done:
		t.Fatal("the session ended at the end of input with Linger")
	case <-end.Draining():
		t.Fatal("the end of input drained with Linger")
	case <-time.After(200 * time.Millisecond):
	}
	end.Drain(shutdown.StopSignal)
	select {
	case <-done:
	case <-time.After(long):
		t.Fatal("the session did not end at the stop signal")
	}
	if got := end.Reason(); got != shutdown.StopSignal {
		t.Errorf("reason %q", got)
	}
}
