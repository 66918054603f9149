package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// stdioHarness runs one stdio session of a plain go-sdk server over pipes.
type stdioHarness struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

// testServer has a tool "sleep" that waits {"ms": n} and echoes it.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "sleep", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ MS int }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			select {
			case <-time.After(time.Duration(args.MS) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	return s
}

func startStdio(t *testing.T, tr *stdio.Transport) *stdioHarness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr.In, tr.Out = inR, outW
	tr.Logger = zerolog.Nop()
	h := &stdioHarness{t: t, in: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	ss, err := testServer().Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		h.done <- ss.Wait()
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() { inW.Close(); ss.Close() })
	return h
}

func (h *stdioHarness) send(lines ...string) {
	h.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(h.in, l+"\n"); err != nil {
			h.t.Fatalf("writing %q: %v", l, err)
		}
	}
}

// next returns the next line written, decoded.
func (h *stdioHarness) next() map[string]any {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("stdout closed; want another message")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			h.t.Fatalf("stdout line is not JSON: %q", l)
		}
		return m
	case <-time.After(5 * time.Second):
		h.t.Fatal("no message on stdout within 5s")
	}
	return nil
}

// rest closes stdin and returns every remaining line once the session ends.
func (h *stdioHarness) rest() []map[string]any {
	h.t.Helper()
	h.in.Close()
	var out []map[string]any
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				return out
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				h.t.Fatalf("stdout line is not JSON: %q", l)
			}
			out = append(out, m)
		case <-timeout:
			h.t.Fatal("session did not end within 10s of stdin closing")
		}
	}
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestStdioBadLinesGetErrorsAndSessionGoesOn(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		code   float64
		wantID any
	}{
		{"not json", `hello`, -32700, nil},
		{"truncated", `{"jsonrpc":"2.0","id":5,"method":"ping"`, -32700, nil},
		{"trailing garbage", `{"jsonrpc":"2.0","id":5,"method":"ping"}x`, -32700, nil},
		{"empty batch", `[]`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, -32600, nil},
		{"not an object", `42`, -32600, nil},
		{"no jsonrpc field", `{"foo":1}`, -32600, nil},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, float64(7)},
		{"bad id type", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, nil},
		{"no method", `{"jsonrpc":"2.0","id":"x"}`, -32600, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startStdio(t, &stdio.Transport{})
			h.send(tt.line)
			m := h.next()
			if got := errCode(m); got != tt.code {
				t.Fatalf("error code = %v, want %v; message %v", got, tt.code, m)
			}
			if id, ok := m["id"]; !ok || id != tt.wantID {
				t.Fatalf("id = %#v (present %v), want %#v", id, ok, tt.wantID)
			}
			if msg := m["error"].(map[string]any)["message"].(string); msg == "" {
				t.Fatal("error has no message")
			}
			// The session still serves.
			h.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
			if m := h.next(); m["id"] != float64(9) || m["result"] == nil {
				t.Fatalf("ping after bad line: %v", m)
			}
		})
	}
}

func TestStdioLargeLines(t *testing.T) {
	h := startStdio(t, &stdio.Transport{MaxLineBytes: 2 << 20})
	h.send(initLine)
	h.next()
	// A 1 MiB request is served.
	big := strings.Repeat("a", 1<<20)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"pad":"` + big + `"}}}`)
	m := h.next()
	if m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("1 MiB call: %.200v", m)
	}
	// A line over the limit is refused and the session goes on.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("b", 3<<20) + `"}}`)
	if m := h.next(); errCode(m) != -32600 {
		t.Fatalf("oversized line: %v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := h.next(); m["id"] != float64(3) {
		t.Fatalf("ping after oversized line: %v", m)
	}
}

func TestStdioEOFAnswersEverythingInFlight(t *testing.T) {
	h := startStdio(t, &stdio.Transport{End: shutdown.New(shutdown.Config{Drain: 10 * time.Second})})
	h.send(initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; i <= 3; i++ {
		h.send(`{"jsonrpc":"2.0","id":` + string(rune('0'+i)) + `,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}`)
	}
	got := h.rest()
	ids := map[float64]bool{}
	for _, m := range got {
		if id, ok := m["id"].(float64); ok && m["result"] != nil {
			ids[id] = true
		}
	}
	for _, id := range []float64{0, 1, 2, 3} {
		if !ids[id] {
			t.Errorf("no result for id %v; got %v", id, got)
		}
	}
	if err := <-h.done; err != nil {
		t.Errorf("session ended with %v", err)
	}
}

func TestStdioDrainTimeout(t *testing.T) {
	h := startStdio(t, &stdio.Transport{End: shutdown.New(shutdown.Config{Drain: 200 * time.Millisecond})})
	h.send(initLine)
	h.next()
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	start := time.Now()
	h.rest()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("session took %v to end after stdin closed; drain timeout is 200ms", d)
	}
}

func TestStdioImplicitInitialize(t *testing.T) {
	for _, method := range []string{"tools/list", "tools/call"} {
		t.Run(method, func(t *testing.T) {
			h := startStdio(t, &stdio.Transport{})
			params := `{}`
			if method == "tools/call" {
				params = `{"name":"sleep","arguments":{"ms":1}}`
			}
			h.send(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":` + params + `}`)
			got := h.rest()
			if len(got) != 1 {
				t.Fatalf("want exactly one response, got %v", got)
			}
			if got[0]["id"] != float64(2) || got[0]["result"] == nil {
				t.Fatalf("response: %v", got[0])
			}
		})
	}
}

func TestStdioRealInitializeUntouched(t *testing.T) {
	h := startStdio(t, &stdio.Transport{})
	h.send(initLine)
	m := h.next()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(0) || res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize response: %v", m)
	}
}

func TestStdioPingBeforeInitialize(t *testing.T) {
	h := startStdio(t, &stdio.Transport{})
	h.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, initLine)
	byID := map[any]map[string]any{}
	for range 2 { // answered concurrently, in either order
		m := h.next()
		byID[m["id"]] = m
	}
	if m := byID[float64(1)]; m == nil || m["result"] == nil {
		t.Fatalf("ping: %v", byID)
	}
	if res, _ := byID[float64(0)]["result"].(map[string]any); res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize after ping was not the client's: %v", byID)
	}
}

func TestStdioCancelledRequestGetsNoResponse(t *testing.T) {
	h := startStdio(t, &stdio.Transport{})
	h.send(initLine)
	h.next()
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
	time.Sleep(50 * time.Millisecond)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	got := h.rest()
	for _, m := range got {
		if m["id"] == float64(1) {
			t.Fatalf("cancelled request got a response: %v", m)
		}
	}
	if len(got) != 1 || got[0]["id"] != float64(2) {
		t.Fatalf("want only the ping response, got %v", got)
	}
}

func TestStdioEachMessageIsOneLine(t *testing.T) {
	h := startStdio(t, &stdio.Transport{})
	h.send(initLine)
	h.next()
	const n = 50
	for i := 0; i < n; i++ {
		h.send(`{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1,"pad":"` + strings.Repeat("z", 100_000) + `"}}}`)
	}
	got := h.rest()
	if len(got) != n {
		t.Fatalf("got %d responses, want %d", len(got), n)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// A client's initialize must not wait for the manifests: with a server
// started before its registry, ping is answered at once and initialize
// within a second (it waits that long for the manifests whose toolsets its
// instructions name first), tool requests wait for the first Apply, and
// that first load sends no list_changed (nobody can have seen a list).
func TestInitializeDoesNotWaitForManifests(t *testing.T) {
	srv := New(Config{DefaultSocket: "/nonexistent.sock", Logger: zerolog.Nop()}, nil)
	defer srv.Close()
	inW, outR, done := serveOverPipes(srv)
	lines := make(chan map[string]any, 10)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
		close(lines)
	}()
	next := func(within time.Duration) map[string]any {
		t.Helper()
		select {
		case m := <-lines:
			return m
		case <-time.After(within):
			return nil
		}
	}

	io.WriteString(inW, initLine+"\n")
	if m := next(5 * time.Second); m == nil || m["id"] != 0.0 || m["result"] == nil {
		t.Fatalf("initialize before the manifests loaded: got %v, want its result", m)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
	if m := next(200 * time.Millisecond); m != nil {
		t.Fatalf("got %v before the manifests loaded; tools/list must wait for them", m)
	}

	srv.Apply(registryOf(t, `{"id":"t","tools":[{"name":"a","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"t.a"}}}`))
	m := next(5 * time.Second)
	tools, _ := m["result"].(map[string]any)["tools"].([]any)
	if m["id"] != 1.0 || len(tools) != 2 {
		t.Fatalf("tools/list after the first Apply: got %v, want the one tool and the one that reads a part of a large result", m)
	}
	inW.Close()
	for m := range lines {
		t.Errorf("unexpected message after tools/list: %v", m)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// serveOverPipes serves one stdio session of srv over pipes: the client
// writes to in, reads out, and the session's outcome arrives on done once in
// is closed and every request answered.
func serveOverPipes(srv *Server) (in *io.PipeWriter, out io.Reader, done <-chan error) {
	return serveOverPipesWith(srv, false)
}

// serveOverPipesWith is serveOverPipes with direct serving off or on.
func serveOverPipesWith(srv *Server, noDirect bool) (in *io.PipeWriter, out io.Reader, done <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ch := make(chan error, 1)
	go func() {
		ch <- srv.ServeStdio(context.Background(), &stdio.Transport{In: inR, Out: outW, NoDirect: noDirect, Logger: zerolog.Nop()})
		outW.Close()
	}()
	return inW, outR, ch
}

// A 2026-07-28 client matches the acknowledgement of its subscriptions/listen,
// and the notifications on it, by the id it gave the listen, which need not
// be a number: the go-sdk's own number for the request must not leak out.
func TestStdioListenSubscriptionIDIsTheClients(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	h := startStdio(t, &stdio.Transport{})
	h.send(`{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{` + meta + `}}`)
	if m := h.next(); m["id"] != "probe" || m["result"] == nil {
		t.Fatalf("server/discover: %v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true}}}`)
	ack := h.next()
	params, _ := ack["params"].(map[string]any)
	m, _ := params["_meta"].(map[string]any)
	if ack["method"] != "notifications/subscriptions/acknowledged" || m["io.modelcontextprotocol/subscriptionId"] != "listen:0" {
		t.Fatalf("acknowledgement: %v; want the subscriptionId \"listen:0\"", ack)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen:0"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping","params":{`+meta+`}}`)
	for _, m := range h.rest() {
		if m["id"] == "listen:0" {
			t.Fatalf("the cancelled listen was answered: %v", m)
		}
	}
}

// waitFeature declares one resource and one prompt, as the manifests'
// features do.
type waitFeature struct{}

func (waitFeature) Attach(o *mcp.ServerOptions, _ backend.View) func(*mcp.Server) {
	o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	o.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	return register
}

func (waitFeature) Detach(*mcp.Server)        {}
func (waitFeature) Resync()                   {}
func (waitFeature) Update(*manifest.Registry) {}

func register(m *mcp.Server) {
	m.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://r", Text: "r"}}}, nil
	})
	m.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "p"}}}}, nil
	})
}

// What the manifests declare (resources, templates, prompts) comes with
// them: like tools/list, the requests for it wait for the first registry,
// so that a client asking at once is not told of none.
func TestResourceAndPromptRequestsWaitForManifests(t *testing.T) {
	srv := New(Config{DefaultSocket: "/nonexistent.sock", Logger: zerolog.Nop(), Features: []Feature{waitFeature{}}}, nil)
	defer srv.Close()
	inW, outR, done := serveOverPipes(srv)
	lines := make(chan map[string]any, 10)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
		close(lines)
	}()
	io.WriteString(inW, initLine+"\n")
	select {
	case m := <-lines:
		if m["id"] != 0.0 || m["result"] == nil {
			t.Fatalf("initialize: %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no initialize result before the manifests loaded")
	}
	requests := []string{`"resources/list"`, `"resources/templates/list"`, `"resources/read","params":{"uri":"test://r"}`,
		`"prompts/list"`, `"prompts/get","params":{"name":"p"}`}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i, r := range requests {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":`+itoa(i+1)+`,"method":`+r+`}`+"\n")
	}
	select {
	case m := <-lines:
		t.Fatalf("got %v before the manifests loaded; resource and prompt requests must wait for them", m)
	case <-time.After(200 * time.Millisecond):
	}
	srv.Apply(registryOf(t, `{"id":"t","tools":[{"name":"a","inputSchema":{"type":"object"}}],"implementation":{"methods":{"a":"t.a"}}}`))
	for range requests {
		select {
		case m := <-lines:
			if m["result"] == nil {
				t.Errorf("after the first Apply: %v", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a resource or prompt request still waits after the first Apply")
		}
	}
	inW.Close()
	for range lines {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
