package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// httpServer serves the example registry over HTTP through httptest, on a
// loopback address.
func httpServer(t *testing.T, cfg streamable.Config) (*Server, *httptest.Server) {
	t.Helper()
	srv := New(Config{DefaultSocket: startDemo(t), Logger: zerolog.Nop()}, loadExample(t))
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.NewHTTPHandler(cfg))
	t.Cleanup(ts.Close)
	return srv, ts
}

func post(t *testing.T, url string, header map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h := header["Host"]; h != "" {
		req.Host = h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPRefusalSaysWhereTheTokenIs: every path refuses a request without
// the token with a 401 whose body says where the token is, the OAuth
// discovery and registration paths too. mcp-remote shows the body of its
// failed registration and gives up, unless the text has "Unauthorized" in
// it, which sends it to wait for a browser sign-in.
func TestHTTPRefusalSaysWhereTheTokenIs(t *testing.T) {
	const hint = "the token in ~/.tairseach/mcp-token"
	_, ts := httpServer(t, streamable.Config{Token: "0123456789abcdef0123", TokenHint: hint})
	for _, tc := range []struct{ method, path string }{
		{"POST", streamable.MCPPath},
		{"GET", streamable.MCPPath},
		{"GET", "/.well-known/oauth-protected-resource/mcp"},
		{"GET", "/.well-known/oauth-authorization-server"},
		{"POST", "/register"},
	} {
		req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal(body, &e) != nil || e.Error != "invalid_token" ||
			!strings.Contains(e.Description, hint) || strings.Contains(string(body), "Unauthorized") ||
			!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s %s: %d %s\n%s", tc.method, tc.path, resp.StatusCode, resp.Header, body)
		}
	}
}

func TestHTTPHandlerProtections(t *testing.T) {
	const token = "0123456789abcdef0123"
	for _, tc := range []struct {
		name   string
		token  string
		header map[string]string
		want   int
	}{
		{"plain", "", nil, http.StatusOK},
		// The go-sdk's DNS-rebinding check, left on.
		{"foreign Host", "", map[string]string{"Host": "evil.example.com"}, http.StatusForbidden},
		{"foreign Origin", "", map[string]string{"Origin": "http://evil.example.com"}, http.StatusForbidden},
		{"cross-site fetch", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"token missing", token, nil, http.StatusUnauthorized},
		{"token wrong", token, map[string]string{"Authorization": "Bearer " + token + "0"}, http.StatusUnauthorized},
		{"token right", token, map[string]string{"Authorization": "Bearer " + token}, http.StatusOK},
		{"token right, scheme in lower case", token, map[string]string{"Authorization": "bearer " + token}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := httpServer(t, streamable.Config{Token: tc.token})
			if got := post(t, ts.URL+streamable.MCPPath, tc.header); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	srv, ts := httpServer(t, streamable.Config{Manifests: "/some/dir"})
	get := func() streamable.Health {
		t.Helper()
		resp, err := http.Get(ts.URL + streamable.HealthPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h streamable.Health
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz: %d, %v", resp.StatusCode, err)
		}
		return h
	}
	h := get()
	if h.Status != "ok" || h.Tools != 13 || h.Manifests != "/some/dir" || len(h.Backends) != 1 || !h.Backends[0].Reachable {
		t.Fatalf("backend up: %+v", h)
	}

	// A manifest naming another socket, where nothing listens.
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone.sock")
	srv.Apply(registryOf(t, `{"id":"x","tools":[{"name":"x.y","inputSchema":{"type":"object"}}],
		"implementation":{"socket":`+jsonString(gone)+`,"methods":{"x.y":"x.y"}}}`))
	h = get()
	if h.Status != "degraded" || h.Tools != 1 || len(h.Backends) != 2 {
		t.Fatalf("one backend gone: %+v", h)
	}
	for _, b := range h.Backends {
		if b.Socket == gone && (b.Reachable || !strings.Contains(b.Error, gone)) {
			t.Errorf("missing socket reported as %+v", b)
		}
		if b.Socket != gone && !b.Reachable {
			t.Errorf("the default socket reported as %+v", b)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestServeHTTPListenerStopsOnCancel(t *testing.T) {
	srv := New(Config{DefaultSocket: startDemo(t), Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeHTTPListener(ctx, ln, streamable.Config{End: shutdown.New(shutdown.Config{Drain: 5 * time.Second})})
	}()

	// A session with an open event stream must not hold the shutdown up.
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + streamable.MCPPath, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeHTTPListener: %v", err)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("ServeHTTPListener did not return within 4s of cancellation")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown with an idle session took %v", d)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts connections")
	}
	for range srv.MCP().Sessions() {
		t.Fatal("a session is still open")
	}
}

// TestHTTPCallBeforeInitialize: a request of the 2025 revisions sent
// without a session, before initialize, gets 400 and a JSON-RPC Invalid
// Request error (-32600) with its id, saying to initialize first, not the
// go-sdk's error code 0. initialize, ping and notifications pass as before,
// and a stateless server serves the call.
func TestHTTPCallBeforeInitialize(t *testing.T) {
	send := func(t *testing.T, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	call := `{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"tairseach_contacts_list","arguments":{}}}`

	_, ts := httpServer(t, streamable.Config{})
	for _, body := range []string{call, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`} {
		code, got := send(t, ts.URL+streamable.MCPPath, body)
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if code != http.StatusBadRequest || json.Unmarshal([]byte(got), &resp) != nil || resp.Error == nil {
			t.Fatalf("%s: %d %s, want 400 and a JSON-RPC error", body, code, got)
		}
		var sent struct{ ID json.RawMessage }
		_ = json.Unmarshal([]byte(body), &sent)
		if string(resp.ID) != string(sent.ID) || resp.Error.Code != -32600 ||
			!strings.Contains(resp.Error.Message, "send initialize first") || !strings.Contains(resp.Error.Message, "Mcp-Session-Id") {
			t.Errorf("%s: %s, want id %s, code -32600 and how to get a session", body, got, sent.ID)
		}
	}
	if code := post(t, ts.URL+streamable.MCPPath, nil); code != http.StatusOK {
		t.Errorf("initialize: %d, want 200", code)
	}
	if code, got := send(t, ts.URL+streamable.MCPPath, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusOK || !strings.Contains(got, `"result":{}`) {
		t.Errorf("ping: %d %s, want 200 and a result", code, got)
	}
	if code, got := send(t, ts.URL+streamable.MCPPath, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code == http.StatusBadRequest && strings.Contains(got, "-32600") {
		t.Errorf("a notification: %d %s, refused as a request", code, got)
	}

	_, stateless := httpServer(t, streamable.Config{Stateless: true})
	if code, got := send(t, stateless.URL+streamable.MCPPath, call); code != http.StatusOK || !strings.Contains(got, `"id":"c-1","result":{`) {
		t.Errorf("stateless tools/call: %d %s, want 200 and a result", code, got)
	}
}

// A DELETE the go-sdk refuses (here for a protocol version it does not
// know) leaves its session open, so the session stays under
// --max-sessions: a client repeating initialize and a bad DELETE cannot
// pile up sessions past the cap, whether or not it selects tools by
// header.
func TestRefusedDeleteKeepsTheSessionCounted(t *testing.T) {
	for _, header := range []map[string]string{nil, {policy.HeaderTools: "tairseach_contacts_list"}} {
		srv, ts := httpServer(t, streamable.Config{MaxSessions: 2})
		url := ts.URL + streamable.MCPPath
		for i := range 10 {
			code, id, _ := rpc(t, url, "", initializeBody, header)
			if code != http.StatusOK || id == "" {
				t.Fatalf("initialize %d: %d %q", i, code, id)
			}
			req, _ := http.NewRequest(http.MethodDelete, url, nil)
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Fatalf("a DELETE with a bad protocol version was taken: %d", resp.StatusCode)
			}
		}
		live := 0
		for range srv.allSessions() {
			live++
		}
		if live > 2 {
			t.Errorf("headers %v: %d sessions live, over --max-sessions 2", header, live)
		}
	}
}
