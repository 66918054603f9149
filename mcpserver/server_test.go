package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
)

// startDemo runs the demo backend in-process on a real Unix socket.
func startDemo(t testing.TB) string {
	_, path := startDemoWith(t, demo.Options{})
	return path
}

// startDemoWith runs the demo backend with opts, and returns it and its
// socket's path.
func startDemoWith(t testing.TB, opts demo.Options) (*demo.Server, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcps")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.sock")
	ln, err := demo.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	d := demo.New(zerolog.Nop(), opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = d.Serve(ctx, ln)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done; os.RemoveAll(dir) })
	return d, path
}

func loadExample(t testing.TB) *manifest.Registry {
	t.Helper()
	reg, err := manifest.Load(filepath.Join("..", "manifests.example"), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// registryOf builds a registry from one inline manifest.
func registryOf(t *testing.T, manifestJSON string) *manifest.Registry {
	t.Helper()
	f, err := manifest.ParseFile("test.json", []byte(manifestJSON), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	return manifest.Build([]*manifest.File{f})
}

// session connects an in-memory go-sdk client to srv.
func session(t *testing.T, srv *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

func TestCorpusRegistersEveryTool(t *testing.T) {
	dir := filepath.Join("..", "manifest", "testdata", "tairseach-manifests")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the reference corpus is missing (%v): it lives in manifest/testdata/tairseach-manifests", err)
	}
	reg, err := manifest.Load(dir, manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{DefaultSocket: "/nonexistent.sock", OutputSchemas: true, Logger: zerolog.Nop()}, reg)
	defer srv.Close()
	list, err := session(t, srv, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 91+1 {
		t.Fatalf("tools/list has %d tools, want the corpus's 91 and the one that reads a part of a large result", len(list.Tools))
	}
	for _, tool := range list.Tools {
		if tool.Name == srv.base.routes.Load().Parts {
			continue
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s lost its outputSchema", tool.Name)
		}
		r, ok := srv.base.routes.Load().ByName[tool.Name]
		if !ok {
			t.Fatalf("%s listed but not routed", tool.Name)
		}
		if _, err := r.Input.Check(json.RawMessage(`{}`)); err != nil {
			t.Errorf("%s: inputSchema does not compile: %v", tool.Name, err)
		}
		if _, err := r.Output.Check([]byte(`{}`), false); err != nil {
			t.Errorf("%s: outputSchema does not compile: %v", tool.Name, err)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	srv := New(Config{DefaultSocket: "/x", Logger: zerolog.Nop()}, registryOf(t, `{"id":"t","tools":[{"name":"q",
		"inputSchema":{"type":"object","required":["query"],"properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1},
		"filter":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}},"additionalProperties":false}}],
		"implementation":{"methods":{"q":"q"}}}`))
	defer srv.Close()
	in := srv.base.routes.Load().ByName["tairseach_q"].Input
	tests := []struct {
		args string
		want []string // substrings of the message; none means valid
	}{
		{`{"query":"a"}`, nil},
		{`{"query":"a","limit":3,"filter":{"tags":["x"]}}`, nil},
		{`{}`, []string{`missing required argument "query"`}},
		{`{"query":1}`, []string{`query must be a string; got 1`}},
		{`{"query":"a","limit":0}`, []string{`limit must be an integer ≥ 1; got 0`}},
		{`{"query":"a","limit":2.5}`, []string{`limit must be an integer; got 2.5`}},
		{`{"query":"a","bogus":1}`, []string{`unexpected argument "bogus"`}},
		{`{"query":"a","filter":{"tags":[1]}}`, []string{`filter.tags[0] must be a string; got 1`}},
		{`[1]`, []string{"JSON object"}},
	}
	for _, tt := range tests {
		got, err := in.Check(json.RawMessage(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		if len(tt.want) == 0 && got != "" {
			t.Errorf("checkArgs(%s) = %q, want valid", tt.args, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("checkArgs(%s) = %q, want it to mention %q", tt.args, got, w)
			}
		}
	}
}

func TestInvalidArgumentsNeverReachTheSocket(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	res := srv.Call(context.Background(), "tairseach_contacts_search", json.RawMessage(`{"limit":"ten"}`))
	if !res.IsError || !strings.Contains(textOf(res), `limit must be an integer`) {
		t.Fatalf("invalid arguments: isError %v, %q", res.IsError, textOf(res))
	}
	res = srv.Call(context.Background(), "tairseach_contacts_search", json.RawMessage(`{"query":"a"}`))
	if res.IsError {
		t.Fatalf("valid arguments: %s", textOf(res))
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func TestApplyNotifiesOnlyVisibleChanges(t *testing.T) {
	const base = `{"id":"t","tools":[
		{"name":"a","description":"A","inputSchema":{"type":"object"}},
		{"name":"b","description":"B","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"a":"m.a","b":"m.b"}}}`
	srv := New(Config{DefaultSocket: "/x", Logger: zerolog.Nop()}, registryOf(t, base))
	defer srv.Close()
	var notes atomic.Int32
	cs := session(t, srv, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes.Add(1) }})
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		manifest string
		want     func(routes.Change) bool
		notify   bool
	}{
		{"unchanged", base, func(c routes.Change) bool { return c.Empty() && c.Rerouted == 0 }, false},
		{"method only", strings.Replace(base, `"b":"m.b"`, `"b":"m.b2"`, 1), func(c routes.Change) bool { return c.Empty() && c.Rerouted == 1 }, false},
		{"description", strings.Replace(base, `"B"`, `"B2"`, 1), func(c routes.Change) bool { return len(c.Changed) == 1 && c.Changed[0] == "tairseach_b" }, true},
		{"removed", strings.Replace(base, `,
		{"name":"b","description":"B","inputSchema":{"type":"object"}}`, ``, 1), func(c routes.Change) bool { return len(c.Removed) == 1 }, true},
		{"added back", base, func(c routes.Change) bool { return len(c.Added) == 1 && c.Added[0] == "tairseach_b" }, true},
	}
	for _, tt := range tests {
		before := notes.Load()
		ch := srv.Apply(registryOf(t, tt.manifest))
		if !tt.want(ch) {
			t.Errorf("%s: change %+v", tt.name, ch)
		}
		// The SDK debounces notifications by 10 ms.
		deadline := time.Now().Add(2 * time.Second)
		for tt.notify && notes.Load() == before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if !tt.notify {
			time.Sleep(100 * time.Millisecond)
		}
		if got := notes.Load() > before; got != tt.notify {
			t.Errorf("%s: notified %v, want %v", tt.name, got, tt.notify)
		}
	}
	if tool, ok := srv.Lookup("tairseach_b"); !ok || tool.Method != "m.b" {
		t.Errorf("after re-adding, tairseach_b routes to %+v", tool)
	}
}

func TestBusyBeyondMaxInFlight(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, MaxInFlight: 2, Logger: zerolog.Nop()}, registryOf(t, `{"id":"t","tools":[
		{"name":"slow","inputSchema":{"type":"object"},"timeoutMs":10000},
		{"name":"quick","inputSchema":{"type":"object"},"timeoutMs":200}],
		"implementation":{"methods":{"slow":"demo.slow","quick":"server.status"}}}`))
	defer srv.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := srv.Call(context.Background(), "tairseach_slow", json.RawMessage(`{"ms":1500}`)); res.IsError {
				t.Errorf("slow call: %s", textOf(res))
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // both slots taken
	res := srv.Call(context.Background(), "tairseach_quick", nil)
	if !res.IsError || !strings.HasPrefix(textOf(res), "busy:") {
		t.Errorf("third call with 2 slots taken: isError %v, %q; want busy", res.IsError, textOf(res))
	}
	wg.Wait()
	if res := srv.Call(context.Background(), "tairseach_quick", nil); res.IsError {
		t.Errorf("call once the slots are free: %s", textOf(res))
	}
}

func TestCancelledCallReturnsNil(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if res := srv.Call(ctx, "tairseach_demo_slow", json.RawMessage(`{"ms":5000}`)); res != nil {
		t.Fatalf("cancelled call returned %v", textOf(res))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancellation took %v to abort the socket call", d)
	}
	if res := srv.Call(context.Background(), "tairseach_server_status", nil); res.IsError {
		t.Fatalf("call after a cancellation: %s", textOf(res))
	}
}

func TestOutputSchemaMismatchIsError(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, OutputSchemas: true, Logger: zerolog.Nop()}, registryOf(t, `{"id":"t","tools":[
		{"name":"echo","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["count"],"properties":{"count":{"type":"integer"}}}}],
		"implementation":{"methods":{"echo":"demo.echo"}}}`))
	defer srv.Close()
	res := srv.Call(context.Background(), "tairseach_echo", json.RawMessage(`{"count":"many"}`))
	if !res.IsError || !strings.Contains(textOf(res), "outputSchema") || !strings.Contains(textOf(res), `"many"`) {
		t.Fatalf("mismatching result: isError %v, %q", res.IsError, textOf(res))
	}
	res = srv.Call(context.Background(), "tairseach_echo", json.RawMessage(`{"count":3}`))
	if res.IsError || res.StructuredContent == nil {
		t.Fatalf("conforming result: isError %v, structuredContent %v", res.IsError, res.StructuredContent)
	}
}

func TestEncodeResultMatchesSDK(t *testing.T) {
	texts := []string{"", `{"a":"b"}`, "line\nbreak\ttab\r\"quote\\ \b\f\x01\x1f", "é ü 日本 \u2028 \u2029 <>&", "bad \xff utf8"}
	for _, text := range texts {
		for _, res := range []*mcp.CallToolResult{
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}},
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true},
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(`{"x":[1,"y"]}`)},
			{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage("{\"<a&b>\":\"\u2028x\u2029 \u2027 é\"}")},
		} {
			// The SDK marshals the message without HTML escaping, but
			// TextContent and CallToolResult escape their own.
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(res); err != nil {
				t.Fatal(err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if got := check.Encode(res); string(got) != string(want) {
				t.Errorf("check.Encode(%q):\n got %s\nwant %s", text, got, want)
			}
		}
	}
}
