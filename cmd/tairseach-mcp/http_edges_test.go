package main

// HTTP tests at the edges: hostile inputs, streams open at shutdown, MCP
// Inspector, listen streams, a request cancelled with its POST, the token
// helpers, a second signal.

// End-to-end tests of --transport http: the real binary on 127.0.0.1, the
// real demo backend, the go-sdk client over streamable HTTP and plain HTTP
// requests for what the client would never send.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What an attacker (or a broken client) can put in a request gets a clear
// 4xx, the bridge stays up, and the sessions of others are unharmed. Each
// row is one input of the hostile review in the README.
func TestHTTPHostileInputs(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e, "--max-request-bytes", "65536")
	sid := initSession(t, b)
	other := initSession(t, b)
	gone := initSession(t, b)
	if code, _, _ := b.do(t, "DELETE", "/mcp", "", http.Header{"Mcp-Session-Id": {gone}}); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	in := func(kv ...string) http.Header {
		return mcpHeader(append([]string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"}, kv...)...)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `,"pad":"` + strings.Repeat("x", 70000) + `"}}`
	for _, tc := range []struct {
		name         string
		method, path string
		body         string
		header       http.Header
		code         int
		want         string
	}{
		{"garbage session id", "POST", "/mcp", list, in("Mcp-Session-Id", "garbage"), 404, "session not found"},
		{"session id of a deleted session", "POST", "/mcp", list, in("Mcp-Session-Id", gone), 404, "session not found"},
		{"huge session id", "POST", "/mcp", list, in("Mcp-Session-Id", strings.Repeat("A", 100000)), 431, ""},
		{"GET stream without a session", "GET", "/mcp", "", http.Header{"Accept": {"text/event-stream"}}, 400, "requires an Mcp-Session-Id"},
		{"DELETE without a session", "DELETE", "/mcp", "", nil, 400, "requires an Mcp-Session-Id"},
		{"GET stream without Accept", "GET", "/mcp", "", http.Header{"Mcp-Session-Id": {sid}, "Accept": {"text/html"}}, 400, "text/event-stream"},
		{"garbage Last-Event-ID", "GET", "/mcp", "", http.Header{"Mcp-Session-Id": {sid}, "Accept": {"text/event-stream"}, "Last-Event-Id": {"zzz_99999999999999999999"}}, 400, "Last-Event-ID"},
		{"unknown old protocol version", "POST", "/mcp", initializeBody, mcpHeader("Mcp-Protocol-Version", "1999-01-01"), 400, "Unsupported protocol version"},
		{"future protocol version", "POST", "/mcp", list, mcpHeader("Mcp-Protocol-Version", "9999-99-99"), 400, `"error"`},
		{"2026 version in a 2025 session", "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`, in("Mcp-Protocol-Version", "2026-07-28"), 400, "-32022"},
		{"2026 header and _meta disagree", "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`, mcpHeader("Mcp-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/list"), 400, "does not match"},
		{"wrong Content-Type", "POST", "/mcp", list, in("Content-Type", "text/plain"), 415, "Content-Type"},
		{"no JSON in Accept", "POST", "/mcp", list, in("Accept", "text/event-stream"), 400, "Accept"},
		{"body over --max-request-bytes", "POST", "/mcp", big, in(), 413, ""},
		{"body over the limit, 2026 header", "POST", "/mcp", big, mcpHeader("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"), 413, ""},
		{"body over the limit, 2026 _meta only", "POST", "/mcp", big, mcpHeader(), 413, ""},
		{"batch", "POST", "/mcp", "[" + list + "," + list + "]", in(), 400, "batching is not supported"},
		{"invalid JSON", "POST", "/mcp", `{"jsonrpc":`, in(), 400, "malformed"},
		{"invalid JSON without a session", "POST", "/mcp", `{"jsonrpc":`, mcpHeader(), 400, "malformed"},
		{"object id", "POST", "/mcp", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, in(), 400, "invalid ID"},
		{"null id", "POST", "/mcp", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, in(), 400, "missing id"},
		{"response to nothing", "POST", "/mcp", `{"jsonrpc":"2.0","id":99,"result":{}}`, in(), 202, ""},
		{"PUT", "PUT", "/mcp", list, in(), 405, ""},
		{"PATCH /healthz", "PATCH", "/healthz", "", nil, 405, ""},
		{"path under /mcp", "POST", "/mcp/x", list, in(), 404, ""},
		{"dot-dot path", "GET", "/mcp/../healthz/..", "", nil, 404, ""},
		{"Host of a rebinding name", "POST", "/mcp", list, in("Host", "127.0.0.1.nip.io"), 403, "Host"},
		{"Host localhost.evil", "GET", "/healthz", "", http.Header{"Host": {"localhost.evil.example"}}, 403, "Host"},
		{"lowercase bearer scheme", "GET", "/healthz", "", http.Header{"Authorization": {"bearer " + b.token}}, 200, `"status"`},
		{"token in the query, not the header", "GET", "/healthz?access_token=" + b.token, "", http.Header{"Authorization": {"Basic x"}}, 401, ""},
	} {
		code, _, body := b.do(t, tc.method, tc.path, tc.body, tc.header)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.300q; want %d and %q", tc.name, code, body, tc.code, tc.want)
		}
	}

	// One event stream per session: a second GET is refused while the
	// first is open, and a GET of another's session does not end it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.url, nil)
	req.Header = http.Header{"Mcp-Session-Id": {sid}, "Accept": {"text/event-stream"}, "Authorization": {"Bearer " + b.token}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	if code, _, body := b.do(t, "GET", "/mcp", "", http.Header{"Mcp-Session-Id": {sid}, "Accept": {"text/event-stream"}}); code != http.StatusConflict {
		t.Errorf("a second GET stream: %d %q, want 409", code, body)
	}

	// After all that, both sessions still work, and so does a new client.
	for _, s := range []string{sid, other} {
		if code := b.sessionCode(t, s); code != http.StatusOK {
			t.Fatalf("session %s after the hostile inputs: %d", s, code)
		}
	}
	cs := connectHTTP(t, b.url, "", nil, b.client())
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("a new client after the hostile inputs: %s", text(res))
	}
}

// SIGTERM with event streams open (a 2025 client's GET stream, a 2026
// client's subscriptions/listen, a raw GET) ends them and exits promptly
// and cleanly.
func TestHTTPShutdownWithStreamsOpen(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	for _, proto := range protocols {
		// A list_changed handler makes the 2026 client listen.
		connectHTTP(t, b.url, proto, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}, b.client())
	}
	sid := initSession(t, b)
	req, _ := http.NewRequest("GET", b.url, nil)
	req.Header = http.Header{"Mcp-Session-Id": {sid}, "Accept": {"text/event-stream"}, "Authorization": {"Bearer " + b.token}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, resp.Body); close(ended) }()
	time.Sleep(300 * time.Millisecond) // let the clients open their streams

	start := time.Now()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(8 * time.Second):
		t.Fatalf("still running 8s after SIGTERM with streams open:\n%s", b.stderr.String())
	}
	if b.err != nil {
		t.Fatalf("exit: %v\n%s", b.err, b.stderr.String())
	}
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the raw GET stream did not end at shutdown")
	}
	t.Logf("stopped in %s", time.Since(start).Round(time.Millisecond))
	if strings.Contains(b.stderr.String(), "sessions still closing") {
		t.Errorf("shutdown had to give up on sessions:\n%s", b.stderr.String())
	}
}

// MCP Inspector's CLI over HTTP, with the default token in a header as the
// README says; without it, it is refused.
func TestHTTPMCPInspectorWithToken(t *testing.T) {
	nm := nodeModules(t)
	inspector := filepath.Join(nm, ".bin", "mcp-inspector")
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	stdout, stderr, code := runNode(t, 60*time.Second, inspector, "--cli", b.url, "--transport", "http",
		"--header", "Authorization: Bearer "+b.token, "--method", "tools/call", "--tool-name", "tairseach_contacts_search",
		"--tool-arg", "query=a", "--tool-arg", "limit=2")
	if code != 0 || !strings.Contains(stdout, `query`) || !strings.Contains(stdout, `"content"`) {
		t.Fatalf("inspector tools/call over HTTP with the token: exit %d\nstdout:\n%.2000s\nstderr:\n%.2000s", code, stdout, stderr)
	}
	stdout, stderr, code = runNode(t, 60*time.Second, inspector, "--cli", b.url, "--transport", "http", "--method", "tools/list")
	if code == 0 || strings.Contains(stdout, "tairseach_contacts_search") {
		t.Fatalf("inspector without the token: exit %d\nstdout:\n%.2000s\nstderr:\n%.2000s", code, stdout, stderr)
	}
}

// subscriptions/listen streams of the 2026 revision count against
// --max-sessions: one more is refused with 503, and a closed one frees its
// place.
func TestHTTPMaxListenStreams(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e, "--max-sessions", "2")
	listening := func(want int) {
		t.Helper()
		var h struct{ Listening int }
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, _, body := b.do(t, "GET", "/healthz", "", nil)
			_ = json.Unmarshal([]byte(body), &h)
			if h.Listening == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("listening = %d, want %d", h.Listening, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}
	first := connectHTTP(t, b.url, "", opts, b.client())
	connectHTTP(t, b.url, "", opts, b.client())
	listening(2)
	listen := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}}}`
	h := mcpHeader("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen")
	if code, _, body := b.do(t, "POST", "/mcp", listen, h); code != http.StatusServiceUnavailable || !strings.Contains(body, "--max-sessions") {
		t.Fatalf("a third listen stream: %d %q, want 503", code, body)
	}
	// Calls still work, and a closed client frees its place.
	if res := callTool(t, first, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("a call with the streams open: %s", text(res))
	}
	_ = first.Close()
	listening(1)
}

// A 2026 call whose client goes away is cancelled: its request is the only
// way back, so the backend call stops at once instead of running on.
func TestHTTPCurrentRevisionCallCancelledWithItsRequest(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":8000},` + meta + `}}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", b.url, strings.NewReader(body))
	req.Header = mcpHeader("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "tairseach_demo_slow")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	cancel()
	<-done
	for !strings.Contains(b.stderr.String(), "server session disconnected") {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the call still runs 5s after its client went away:\n%s", b.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, l := range strings.Split(b.stderr.String(), "\n") {
		if strings.Contains(l, "method=demo.slow") && strings.Contains(l, "took=8") {
			t.Fatalf("the call ran to its end:\n%s", b.stderr.String())
		}
	}
}

// clientToken gives a client what the server will check: the default file
// (made if missing, then the same token every time), the environment's
// token, or nothing with --no-auth.
func TestClientToken(t *testing.T) {
	home := shortDir(t)
	t.Setenv("HOME", home)
	t.Setenv(tokenEnv, "")
	o := &options{}
	path, token, err := clientToken(o)
	if err != nil || path != filepath.Join(home, ".tairseach", "mcp-token") || len(token) != 64 {
		t.Fatalf("default: %q %q %v", path, token, err)
	}
	if raw, _ := os.ReadFile(path); strings.TrimSpace(string(raw)) != token {
		t.Fatalf("the file holds %q, clientToken said %q", raw, token)
	}
	if p2, t2, err := clientToken(o); p2 != path || t2 != token || err != nil {
		t.Fatalf("second call: %q %q %v", p2, t2, err)
	}
	o.http.authTokenFile = "~/.tairseach/mcp-token"
	if p2, t2, err := clientToken(o); p2 != path || t2 != token || err != nil {
		t.Fatalf("--auth-token-file with ~: %q %q %v", p2, t2, err)
	}
	o.http.authTokenFile = ""
	t.Setenv(tokenEnv, strings.Repeat("e", 32))
	if p2, t2, err := clientToken(o); p2 != "" || t2 != strings.Repeat("e", 32) || err != nil {
		t.Fatalf("%s: %q %q %v", tokenEnv, p2, t2, err)
	}
	o.http.noAuth = true
	if p2, t2, err := clientToken(o); p2 != "" || t2 != "" || err != nil {
		t.Fatalf("--no-auth: %q %q %v", p2, t2, err)
	}
}

// Over HTTP too, a second stop signal ends the drain at once: the call in
// flight is cut off and still has its audit line.
func TestHTTPSecondSignalExitsAtOnce(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	audit := filepath.Join(shortDir(t), "audit.jsonl")
	b := startHTTP(t, e, "--shutdown-grace", "30s", "--audit-log", audit)
	cs := connectHTTP(t, b.url, "2025-11-25", nil, nil)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 20000}})
	}()
	time.Sleep(300 * time.Millisecond)
	signalTwice(t, b.cmd.Process, b.exited, audit, "tairseach_demo_slow")
}
