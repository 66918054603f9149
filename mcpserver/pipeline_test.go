package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// path is one way a tools/call reaches the server.
type reqPath struct {
	name      string
	transport string // "stdio" or "http"
	noDirect  bool   // stdio: through the go-sdk
	stateless bool   // http
	discover  string // "": tools by name; "name": discover mode, by name; "call_tool": through call_tool
	protocol  string
}

func reqPaths() []reqPath {
	var out []reqPath
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		for _, d := range []string{"", "name", "call_tool"} {
			out = append(out,
				reqPath{transport: "stdio", discover: d, protocol: proto},
				reqPath{transport: "stdio", noDirect: true, discover: d, protocol: proto},
				reqPath{transport: "http", discover: d, protocol: proto},
				reqPath{transport: "http", stateless: true, discover: d, protocol: proto},
			)
		}
	}
	for i := range out {
		r := &out[i]
		r.name = r.transport
		switch {
		case r.noDirect:
			r.name += "-sdk"
		case r.transport == "stdio":
			r.name += "-direct"
		case r.stateless:
			r.name += "-stateless"
		default:
			r.name += "-stateful"
		}
		if r.discover != "" {
			r.name += "/discover-" + r.discover
		}
		r.name += "/" + r.protocol
	}
	return out
}

// pathEnv is a server on one path and a way to open client sessions on it.
type pathEnv struct {
	t     *testing.T
	path  reqPath
	srv   *Server
	audit string
	http  *httptest.Server
}

// newPathEnv starts a server with every rule on: demo.fail hidden,
// demo.echo confirmed, progress every 20 ms, a 4 KiB result limit, the
// audit log.
func newPathEnv(t *testing.T, rd reqPath) *pathEnv {
	sock := startDemo(t)
	e := &pathEnv{t: t, path: rd, audit: filepath.Join(t.TempDir(), "audit.jsonl")}
	a, err := observe.OpenAudit(e.audit, observe.AuditOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	cfg := Config{
		DefaultSocket:    sock,
		Logger:           zerolog.Nop(),
		Policy:           policy.Policy{ExcludeTools: []string{"demo.fail"}, Confirm: []string{"demo.echo"}},
		ProgressInterval: 20 * time.Millisecond,
		MaxResultBytes:   MinMaxResultBytes,
		Prefix:           "tairseach_",
		Audit:            a,
	}
	if rd.discover != "" {
		cfg.ToolMode = ToolModeDiscover
	}
	e.srv = New(cfg, loadExample(t))
	t.Cleanup(func() { e.srv.Close() })
	if rd.transport == "http" {
		e.http = httptest.NewServer(e.srv.NewHTTPHandler(streamable.Config{Stateless: rd.stateless}))
		t.Cleanup(func() {
			e.http.CloseClientConnections() // a client's event stream
			e.http.Close()
		})
	}
	return e
}

// connect opens a client session; elicit answers confirmations (nil: the
// client cannot ask its user); progress counts notifications/progress.
func (e *pathEnv) connect(elicit func() *mcp.ElicitResult, progress *atomic.Int32) *mcp.ClientSession {
	t := e.t
	opts := &mcp.ClientOptions{}
	if elicit != nil {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return elicit(), nil }
	}
	if progress != nil {
		opts.ProgressNotificationHandler = func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "road-client", Version: "1"}, opts)
	var tr mcp.Transport
	if e.path.transport == "http" {
		tr = &mcp.StreamableClientTransport{Endpoint: e.http.URL + streamable.MCPPath}
	} else {
		c2sR, c2sW := io.Pipe()
		s2cR, s2cW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- e.srv.ServeStdio(context.Background(), &stdio.Transport{In: c2sR, Out: s2cW, NoDirect: e.path.noDirect, Logger: zerolog.Nop()})
			s2cW.Close()
		}()
		t.Cleanup(func() {
			c2sW.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("the stdio session did not end after its input did")
			}
		})
		tr = &mcp.IOTransport{Reader: s2cR, Writer: c2sW}
	}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: e.path.protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a manifest tool the path's way.
func (e *pathEnv) call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, meta mcp.Meta) (*mcp.CallToolResult, error) {
	name := "tairseach_" + strings.ReplaceAll(tool, ".", "_")
	p := &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta}
	if e.path.discover == "call_tool" {
		p = &mcp.CallToolParams{Name: "tairseach_call_tool", Arguments: map[string]any{"name": tool, "arguments": args}, Meta: meta}
	}
	return cs.CallTool(ctx, p)
}

func (e *pathEnv) lastAudit() map[string]any {
	e.t.Helper()
	b, err := os.ReadFile(e.audit)
	if err != nil {
		e.t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		e.t.Fatalf("audit line %q: %v", lines[len(lines)-1], err)
	}
	return m
}

// Every path a tools/call can take meets every rule: a tool the policy
// hides is refused; a confirmed tool asks the user (once per call: an
// answer is never reused) and is refused for a client that cannot ask;
// progress is sent when asked for; the audit line names the transport,
// protocol and client; results over the limit become isError; a cancelled
// call leaves the session serving.
func TestEveryPathEveryRule(t *testing.T) {
	for _, rd := range reqPaths() {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			e := newPathEnv(t, rd)
			ctx := context.Background()
			var asked atomic.Int32
			var progress atomic.Int32
			cs := e.connect(func() *mcp.ElicitResult {
				asked.Add(1)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
			}, &progress)

			t.Run("policy", func(t *testing.T) {
				res, err := e.call(ctx, cs, "demo.fail", nil, nil)
				if err != nil || !res.IsError || !strings.Contains(check.ResultText(res), "hidden") {
					t.Errorf("a hidden tool: %v %q", err, check.ResultText(res))
				}
			})

			t.Run("confirmation asked", func(t *testing.T) {
				if rd.stateless && rd.protocol < stdio.NewProtocol {
					t.Skip("a stateless 2025 session cannot ask its client anything")
				}
				for i := range 2 {
					res, err := e.call(ctx, cs, "demo.echo", map[string]any{"n": i}, nil)
					if err != nil || res.IsError {
						t.Fatalf("confirmed call %d: %v %q", i, err, check.ResultText(res))
					}
					if got := asked.Load(); got != int32(i+1) {
						t.Errorf("after call %d the user was asked %d times, want %d", i, got, i+1)
					}
				}
			})

			t.Run("confirmation refused", func(t *testing.T) {
				plain := e.connect(nil, nil)
				res, err := e.call(ctx, plain, "demo.echo", map[string]any{"x": 1}, nil)
				if err != nil || !res.IsError || !strings.Contains(check.ResultText(res), observe.PrefixConfirmRefused) {
					t.Errorf("a client that cannot ask: %v %q", err, check.ResultText(res))
				}
				if a := e.lastAudit(); a["outcome"] != "refused" {
					t.Errorf("audit outcome %v, want refused", a["outcome"])
				}
			})

			t.Run("progress", func(t *testing.T) {
				before := progress.Load()
				res, err := e.call(ctx, cs, "demo.slow", map[string]any{"ms": 200}, mcp.Meta{"progressToken": "p1"})
				if err != nil || res.IsError {
					t.Fatalf("%v %q", err, check.ResultText(res))
				}
				if progress.Load() == before {
					t.Error("no notifications/progress for a call that asked for them")
				}
			})

			t.Run("audit", func(t *testing.T) {
				if _, err := e.call(ctx, cs, "server.status", nil, nil); err != nil {
					t.Fatal(err)
				}
				a := e.lastAudit()
				client, _ := a["client"].(map[string]any)
				if rd.stateless && rd.protocol < stdio.NewProtocol {
					// No session: the request does not say who sent it.
					client = map[string]any{"name": "road-client"}
				}
				if a["transport"] != rd.transport || a["protocol"] != rd.protocol || client["name"] != "road-client" ||
					a["tool"] != "tairseach_server_status" || a["outcome"] != "ok" {
					t.Errorf("audit line %v", a)
				}
				if rd.transport == "http" && !rd.stateless && rd.protocol < stdio.NewProtocol && a["session"] == nil {
					t.Errorf("audit line of a stateful HTTP session names none: %v", a)
				}
			})

			t.Run("client-added arguments", func(t *testing.T) {
				// Gemini CLI adds wait_for_previous to every call; the tool's
				// schema forbids extra arguments.
				res, err := e.call(ctx, cs, "contacts.search", map[string]any{"query": "anna", "limit": 1, "wait_for_previous": true}, nil)
				if err != nil || res.IsError {
					t.Errorf("a call carrying wait_for_previous: %v %q", err, check.ResultText(res))
				}
				res, err = e.call(ctx, cs, "contacts.search", map[string]any{"query": "anna", "limit": 1, "other": true}, nil)
				if err != nil || !res.IsError || !strings.Contains(check.ResultText(res), "other") {
					t.Errorf("a call with an argument nobody declares: %v %q", err, check.ResultText(res))
				}
			})

			t.Run("size limit", func(t *testing.T) {
				res, err := e.call(ctx, cs, "demo.blob", map[string]any{"bytes": 8000}, nil)
				if err != nil || !res.IsError || !strings.Contains(check.ResultText(res), "too large") {
					t.Errorf("%v %q", err, check.ResultText(res))
				}
			})

			t.Run("cancellation", func(t *testing.T) {
				cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
				defer cancel()
				_, err := e.call(cctx, cs, "demo.slow", map[string]any{"ms": 5000}, nil)
				if err == nil || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("cancelled call: %v", err)
				}
				res, err := e.call(ctx, cs, "server.status", nil, nil)
				if err != nil || res.IsError {
					t.Errorf("after a cancellation: %v %q", err, check.ResultText(res))
				}
			})
		})
	}
}

// An accepted 2026-07-28 confirmation authorises one call: sent again, it
// is asked again, and so is an answer given for other arguments.
func TestConfirmationNotReplayable(t *testing.T) {
	var firsts []string // the input request on each path, its state masked
	paths := []struct {
		name     string
		noDirect bool
		discover bool // through call_tool, answered by the go-sdk's middleware
	}{{"go-sdk", true, false}, {"direct", false, false}, {"call_tool", false, true}}
	for _, rd := range paths {
		sock := startDemo(t)
		cfg := Config{DefaultSocket: sock, Logger: zerolog.Nop(), Policy: policy.Policy{Confirm: []string{"demo.echo"}}, Prefix: "tairseach_"}
		if rd.discover {
			cfg.ToolMode = ToolModeDiscover
		}
		srv := New(cfg, loadExample(t))
		defer srv.Close()
		inW, outR, done := serveOverPipesWith(srv, rd.noDirect)
		out := json.NewDecoder(outR)
		const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
		call := `"name":"tairseach_demo_echo","arguments":{"a":1}`
		if rd.discover {
			call = `"name":"tairseach_call_tool","arguments":{"name":"demo.echo","arguments":{"a":1}}`
		}
		send := func(id int, extra string) map[string]any {
			t.Helper()
			if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"method":"tools/call","params":{`+call+extra+`,`+meta+`}}`+"\n"); err != nil {
				t.Fatal(err)
			}
			var m struct {
				Result json.RawMessage `json:"result"`
			}
			if err := out.Decode(&m); err != nil {
				t.Fatal(err)
			}
			var res map[string]any
			if err := json.Unmarshal(m.Result, &res); err != nil {
				t.Fatal(err)
			}
			if id == 1 {
				state, _ := res["requestState"].(string)
				firsts = append(firsts, strings.Replace(string(m.Result), state, "STATE", 1))
			}
			return res
		}
		// The go-sdk answers a session's first 2026-07-28 request; direct
		// serving starts after it.
		if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"tairseach_server_status","arguments":{},`+meta+`}}`+"\n"); err != nil {
			t.Fatal(err)
		}
		var skip json.RawMessage
		if err := out.Decode(&skip); err != nil {
			t.Fatal(err)
		}
		first := send(1, "")
		state, _ := first["requestState"].(string)
		if first["resultType"] != "input_required" || state == "" {
			t.Fatalf("%s: first call: %v", rd.name, first)
		}
		answer := `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`
		if got := send(2, answer); got["resultType"] != "complete" || got["isError"] == true {
			t.Fatalf("%s: answered call: %v", rd.name, got)
		}
		if got := send(3, answer); got["resultType"] != "input_required" {
			t.Errorf("%s: the same answer again ran the call: %v", rd.name, got)
		}
		inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(firsts); i++ {
		if firsts[i] != firsts[0] {
			t.Errorf("the input request differs by path:\n%s: %s\n%s: %s", paths[0].name, firsts[0], paths[i].name, firsts[i])
		}
	}
}

// End of input right after a request that will ask the client something,
// or right after a listen: whatever the go-sdk has got to by then (the
// elicitation not yet sent, the listen not yet acknowledged), the request
// is answered at once, the listen with its result.
func TestEndOfInputRacesAnAsk(t *testing.T) {
	sock := startDemo(t)
	for i := range 20 {
		srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), Policy: policy.Policy{Confirm: []string{"demo.echo"}}}, loadExample(t))
		inW, outR, done := serveOverPipes(srv)
		lines := make(chan string, 8)
		go func() {
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_demo_echo","arguments":{"a":1}}}` + "\n"
		if i%2 == 1 {
			in = `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
		}
		io.WriteString(inW, in)
		inW.Close()
		var last string
		deadline := time.After(5 * time.Second)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				last = l
			case <-deadline:
				t.Fatalf("run %d: still waiting 5 s after end of input; last line %s", i, last)
			}
		}
		<-done
		srv.Close()
		switch {
		case i%2 == 0 && !strings.Contains(last, `"id":1,"result"`) || i%2 == 0 && !strings.Contains(last, "not confirmed"):
			t.Errorf("run %d: the confirmed call ended with %s", i, last)
		case i%2 == 1 && !strings.Contains(last, `"id":"L","result"`):
			t.Errorf("run %d: the listen ended with %s", i, last)
		}
	}
}
