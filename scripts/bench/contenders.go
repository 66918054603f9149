package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Contenders, in table order.
const (
	raw    = "raw"
	floor  = "sdk-floor"
	bridge = "bridge"
	peer   = "peer"
)

// The bridge with its observability on, measured beside the plain bridge
// in the sequential and 8-caller call cases.
const (
	bridgeAudit = "bridge+audit" // --audit-log FILE
	bridgeOTel  = "bridge+otel"  // OTLP/HTTP traces and metrics to the driver's collector
)

// variants are the bridge variants, in table order.
var variants = []string{bridgeAudit, bridgeOTel}

// Protocol versions the client asks for; "" is the go-sdk client's default,
// 2026-07-28, the current MCP revision.
const (
	proto2025 = "2025-11-25"
	proto2026 = ""
)

// errNA marks a contender that cannot run a case; its message is the reason.
type errNA string

func (e errNA) Error() string { return string(e) }

// session is one spawned MCP server and the client session driving it.
type session struct {
	who    string
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	wire   *wire         // the server's stdio, shared by cs and the lean caller
	exited chan struct{} // closed when the server has exited
	paused bool          // stopped with SIGSTOP between its turns

	collector *collector    // told when bridge+otel runs
	started   time.Time     // when the server was started
	startup   time.Duration // exec → initialize (or server/discover) result
	proto     string        // the negotiated protocol version
	stderr    *os.File

	terminate time.Duration // how long it may take to exit once its stdin is closed

	calls  atomic.Int64 // tools/call requests answered, by either client
	audit  string       // bridge+audit: its --audit-log file
	otelID int          // bridge+otel: its owner id at the collector
}

// spawn starts contender who serving ts and connects to it at proto. A
// non-nil onListChanged receives notifications/tools/list_changed.
func (e *env) spawn(ctx context.Context, who string, ts toolSet, proto string, onListChanged func()) (*session, error) {
	var (
		cmd    *exec.Cmd
		audit  string
		otelID int
		err    error
	)
	terminate := 2 * time.Second
	switch who {
	case floor:
		cmd = exec.Command(e.floor, "--manifests", ts.dir, "--prefix", prefix)
	case bridge, bridgeAudit, bridgeOTel:
		// strict: outputSchemas advertised and results sent as
		// structuredContent too, as sdk-floor does, so both do the same work.
		// --result-budget off: every result whole, as the others send it
		// (auto sends a result over the client's budget in parts).
		cmd = exec.Command(e.cfg.bridge, "--manifests", ts.dir, "--socket", e.socket, "--log-level", "warn", "--output-schemas=strict", "--result-budget", "off")
		// No OTEL_* or audit settings from the environment: only the
		// variants observe, each only as it says.
		cmd.Env = bridgeEnv(os.Environ())
		switch who {
		case bridgeAudit:
			audit = filepath.Join(e.tmp, fmt.Sprintf("audit-%d.jsonl", e.audits.Add(1)))
			cmd.Args = append(cmd.Args, "--audit-log", audit)
		case bridgeOTel:
			otelID = int(e.otels.Add(1))
			e.collector.setOwner(otelID) // it runs from its start until paused
			cmd.Env = append(cmd.Env, e.collector.env()...)
		}
	case peer:
		if e.cfg.peer == "" {
			return nil, errNA("mcp-host-rpc not installed")
		}
		cmd = exec.Command(e.cfg.peer)
		cmd.Env = append(os.Environ(), "PIPE="+e.socket, "CONTEXT_TOKEN=bench", "TOOLS="+ts.peerTools)
		terminate = 200 * time.Millisecond // it exits when its socket closes, not on stdin EOF
	default:
		return nil, fmt.Errorf("cannot spawn %s", who)
	}
	f, err := e.logFile(who)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = f // a file, so that Wait does not wait for a copying goroutine
	stdin, err := cmd.StdinPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	opts := &mcp.ClientOptions{}
	if onListChanged != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { onListChanged() }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "tairseach-bench", Version: "0"}, opts)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		f.Close()
		if errors.Is(err, syscall.E2BIG) {
			return nil, errNA(fmt.Sprintf("its TOOLS variable (%d KiB) is over Linux's 128 KiB limit for one variable", len(ts.peerTools)>>10))
		}
		return nil, fmt.Errorf("starting %s: %w", who, err)
	}
	s := &session{who: who, cmd: cmd, started: start, stderr: f, terminate: terminate, exited: make(chan struct{}),
		audit: audit, otelID: otelID, collector: e.collector}
	s.wire = newWire(stdin, stdout)
	go func() { _ = cmd.Wait(); close(s.exited) }()
	cs, err := client.Connect(cctx, &mcp.IOTransport{Reader: s.wire.sdkReader(), Writer: s.wire.sdkWriter()}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	s.startup = time.Since(start)
	if err != nil {
		s.stop()
		tail := e.logTail(who)
		if who == bridgeOTel && strings.Contains(tail, "-tags notelemetry") {
			return nil, errNA("this tairseach-mcp was built with -tags notelemetry, without the OTLP exporters")
		}
		return nil, fmt.Errorf("starting %s with %s: %w\n%s", who, ts.name, err, tail)
	}
	s.cs, s.proto = cs, cs.InitializeResult().ProtocolVersion
	return s, nil
}

// close ends the session and the server.
func (s *session) close() {
	if s == nil {
		return
	}
	s.resume() // a paused server cannot exit
	_ = s.cs.Close()
	s.stop()
}

// stop closes the server's stdin and waits for it to exit: terminate, then
// SIGTERM, then SIGKILL after two seconds more.
func (s *session) stop() {
	_ = s.wire.stdin.Close()
	for _, next := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		wait := s.terminate
		if next == syscall.SIGKILL {
			wait = 2 * time.Second
		}
		select {
		case <-s.exited:
			s.stderr.Close()
			return
		case <-time.After(wait):
			_ = s.cmd.Process.Signal(next)
		}
	}
	<-s.exited
	s.stderr.Close()
}

// pause stops the server's process (SIGSTOP) between its turns, so that
// nothing it does in the background (an exporter's timer) falls into
// another contender's; resume lets it run again. Every call server is
// stopped so, not only the variants: a server left to idle between its
// turns ran its next one differently from a stopped copy of itself: the
// plain bridge stopped as a variant was 0.99–1.04× (1.015× on average)
// the calls a second at 8 callers, and 0.95–1.00× (0.97×) the sequential
// p50, of the same bridge left to idle, in three runs of make bench
// (docs/performance.md).
func (s *session) pause() {
	if s != nil && !s.paused {
		_ = s.cmd.Process.Signal(syscall.SIGSTOP)
		s.paused = true
		if s.otelID != 0 {
			s.collector.setOwner(0)
		}
	}
}

func (s *session) resume() {
	if s != nil && s.paused {
		if s.otelID != 0 {
			s.collector.setOwner(s.otelID)
		}
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
		s.paused = false
	}
}

// rssMiB reads the server's VmRSS and RssAnon (its private memory: the
// resident pages that are not the executable's or other files') from /proc.
func (s *session) rssMiB() (rss, anon float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for line := range strings.Lines(string(b)) {
		for _, f := range []struct {
			name string
			v    *float64
		}{{"VmRSS:", &rss}, {"RssAnon:", &anon}} {
			if rest, ok := strings.CutPrefix(line, f.name); ok {
				kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				if err != nil {
					return 0, 0, fmt.Errorf("parsing %s %q: %w", f.name, rest, err)
				}
				*f.v = float64(kb) / 1024
				found++
			}
		}
	}
	if found != 2 {
		return 0, 0, errors.New("no VmRSS or RssAnon in /proc/PID/status")
	}
	return rss, anon, nil
}

// call makes one tools/call and fails on an isError result.
func (s *session) call(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: calling %s: %w", s.who, tool, err)
	}
	s.calls.Add(1)
	if res.IsError {
		return nil, fmt.Errorf("%s: %s returned isError: %s", s.who, tool, resultText(res))
	}
	return res, nil
}

// leanCall is one tool call, with its arguments, that the lean caller of
// a session repeats.
type leanCall struct {
	s          *session
	head, tail []byte  // the request the go-sdk client wrote, around its id
	want       *expect // the reply checked in full
}

// learnCall makes a call once with the go-sdk client, checks its result
// and keeps the request's bytes; then once on the wire, decoding that
// reply in full and checking it again, and keeps it as the reply every
// later call must be; then once more, to see that the reply is the same.
func (s *session) learnCall(ctx context.Context, tool string, args json.RawMessage, check func(*mcp.CallToolResult) error) (*leanCall, error) {
	var sent []byte
	s.wire.wmu.Lock()
	s.wire.grab = func(line []byte) {
		if bytes.Contains(line, []byte(`"method":"tools/call"`)) {
			sent = line
		}
	}
	s.wire.wmu.Unlock()
	res, err := s.call(ctx, tool, args)
	s.wire.wmu.Lock()
	s.wire.grab = nil
	s.wire.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := check(res); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.who, tool, err)
	}
	start, end, ok := idSpan(sent)
	if !ok {
		return nil, fmt.Errorf("%s: the go-sdk client's tools/call has no id where expected: %.300s", s.who, sent)
	}
	lc := &leanCall{s: s, head: sent[:start], tail: sent[end:]}

	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := s.wire.call(cctx, 0, lc.head, lc.tail, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: a call on the wire: %w (a reply whose id is not where idSpan looks goes to the go-sdk session)", s.who, err)
	}
	s.calls.Add(1)
	var rep struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(c.line, &rep); err != nil {
		return nil, fmt.Errorf("%s: decoding a reply: %w", s.who, err)
	}
	if len(rep.Error) > 0 && string(rep.Error) != "null" {
		return nil, fmt.Errorf("%s: %s on the wire: error %s", s.who, tool, rep.Error)
	}
	var wireRes mcp.CallToolResult
	if err := json.Unmarshal(rep.Result, &wireRes); err != nil {
		return nil, fmt.Errorf("%s: decoding a tools/call result: %w", s.who, err)
	}
	if wireRes.IsError {
		return nil, fmt.Errorf("%s: %s on the wire returned isError: %s", s.who, tool, resultText(&wireRes))
	}
	if err := check(&wireRes); err != nil {
		return nil, fmt.Errorf("%s: %s on the wire: %w", s.who, tool, err)
	}
	start, end, _ = idSpan(c.line)
	lc.want = newExpect(c.line, start, end)
	if err := lc.do(cctx, 0); err != nil {
		return nil, fmt.Errorf("%s: %s: the same call twice: %w", s.who, tool, err)
	}
	return lc, nil
}

// do makes the call on the wire for caller w (0 ≤ w < maxCallers) and
// fails unless the reply is the one checked in full.
func (lc *leanCall) do(ctx context.Context, w int) error {
	if _, err := lc.s.wire.call(ctx, w, lc.head, lc.tail, lc.want); err != nil {
		return fmt.Errorf("%s: %w", lc.s.who, err)
	}
	lc.s.calls.Add(1)
	return nil
}

// listAll lists every tool, following cursors.
func (s *session) listAll(ctx context.Context) (int, error) {
	n := 0
	p := &mcp.ListToolsParams{}
	for range 100 {
		res, err := s.cs.ListTools(ctx, p)
		if err != nil {
			return 0, fmt.Errorf("%s: tools/list: %w", s.who, err)
		}
		n += len(res.Tools)
		if res.NextCursor == "" {
			return n, nil
		}
		p = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	return 0, fmt.Errorf("%s: tools/list: more than 100 pages", s.who)
}

func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// rawConn is one persistent connection to the backend socket, used by one
// goroutine at a time.
type rawConn struct {
	c    net.Conn
	r    *bufio.Reader
	w    []byte // request line scratch
	long []byte // reply lines over the reader's buffer
	id   uint64
}

func dialRaw(ctx context.Context, path string) (*rawConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("raw: dialling the demo backend: %w", err)
	}
	return &rawConn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// rawReply is what a minimal client decodes of each reply.
type rawReply struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// call writes one request line and reads, decodes and checks its reply.
func (rc *rawConn) call(method string, params json.RawMessage) (json.RawMessage, error) {
	rc.id++
	rc.w = append(rc.w[:0], `{"jsonrpc":"2.0","id":`...)
	rc.w = strconv.AppendUint(rc.w, rc.id, 10)
	rc.w = append(rc.w, `,"method":`...)
	rc.w = strconv.AppendQuote(rc.w, method)
	rc.w = append(rc.w, `,"params":`...)
	rc.w = append(rc.w, params...)
	rc.w = append(rc.w, "}\n"...)
	if _, err := rc.c.Write(rc.w); err != nil {
		return nil, fmt.Errorf("raw: %w", err)
	}
	line, err := rc.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		rc.long = append(rc.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = rc.r.ReadSlice('\n')
			rc.long = append(rc.long, line...)
		}
		line = rc.long
	}
	if err != nil {
		return nil, fmt.Errorf("raw: reading the reply: %w", err)
	}
	var rep rawReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return nil, fmt.Errorf("raw: decoding the reply: %w", err)
	}
	if rep.ID != rc.id || len(rep.Error) > 0 && !bytes.Equal(rep.Error, []byte("null")) {
		return nil, fmt.Errorf("raw: reply %d to request %d, error %s", rep.ID, rc.id, rep.Error)
	}
	if cap(rc.long) > 4<<20 {
		rc.long = nil
	}
	return rep.Result, nil
}

func (rc *rawConn) close() { rc.c.Close() }
