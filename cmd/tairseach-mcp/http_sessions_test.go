package main

// HTTP tests of sessions: cross-origin refusal on every method, limits and
// timeouts, sessionless requests, abandoned sessions, slow clients.

// End-to-end tests of --transport http: the real binary on 127.0.0.1, the
// real demo backend, the go-sdk client over streamable HTTP and plain HTTP
// requests for what the client would never send.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A browser's cross-origin request is refused whatever its method and path
// (GET /mcp would open an event stream, GET /healthz tells the socket
// paths), before the token is even looked at; the server's own origin and
// requests without Origin pass.
func TestHTTPCrossOriginEveryMethod(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	sid := initSession(t, b)
	foreign := map[string][]string{
		"Origin other host":        {"Origin", "http://evil.example.com"},
		"Origin other port":        {"Origin", strings.Replace(b.base, "127.0.0.1:", "127.0.0.1:1", 1)},
		"Origin other scheme":      {"Origin", strings.Replace(b.base, "http:", "ftp:", 1)},
		"Origin null":              {"Origin", "null"},
		"Origin garbage":           {"Origin", "::::"},
		"Sec-Fetch-Site cross":     {"Sec-Fetch-Site", "cross-site"},
		"Sec-Fetch-Site same-site": {"Sec-Fetch-Site", "same-site"},
		"own Origin, cross fetch":  {"Origin", b.base, "Sec-Fetch-Site", "cross-site"},
	}
	for _, method := range []string{"GET", "HEAD", "OPTIONS", "DELETE", "POST", "PUT"} {
		for _, path := range []string{"/mcp", "/healthz", "/nope"} {
			for name, kv := range foreign {
				h := mcpHeader(append([]string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"}, kv...)...)
				for _, auth := range []bool{true, false} {
					if !auth {
						h.Set("Authorization", "Bearer wrong-token-wrong-token")
					}
					body := ""
					if method == "POST" {
						body = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
					}
					if code, _, resp := b.do(t, method, path, body, h); code != http.StatusForbidden {
						t.Errorf("%s %s, %s, token %v: %d, want 403: %.200s", method, path, name, auth, code, resp)
					}
				}
			}
		}
	}
	// Two Origin headers, one of them ours, are refused too.
	h := mcpHeader()
	h["Origin"] = []string{b.base, "http://evil.example.com"}
	if code, _, _ := b.do(t, "GET", "/healthz", "", h); code != http.StatusForbidden {
		t.Errorf("two Origins: %d, want 403", code)
	}
	// The session still works: the refused DELETEs did nothing.
	for name, kv := range map[string][]string{
		"no Origin":         nil,
		"own Origin":        {"Origin", b.base},
		"same-origin fetch": {"Origin", b.base, "Sec-Fetch-Site", "same-origin"},
		"direct fetch":      {"Sec-Fetch-Site", "none"},
	} {
		h := mcpHeader(append([]string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"}, kv...)...)
		if code, _, resp := b.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h); code != http.StatusOK || !strings.Contains(resp, "tairseach_demo_echo") {
			t.Errorf("%s: POST /mcp: %d %.200s", name, code, resp)
		}
		if code, _, resp := b.do(t, "GET", "/healthz", "", h); code != http.StatusOK {
			t.Errorf("%s: GET /healthz: %d %.200s", name, code, resp)
		}
	}
}

// initSession initializes a 2025-11-25 session with a plain POST and
// returns its id.
func initSession(t *testing.T, b *httpBridge) string {
	t.Helper()
	code, header, body := b.do(t, "POST", "/mcp", initializeBody, mcpHeader())
	sid := header.Get("Mcp-Session-Id")
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q, %.300s", code, sid, body)
	}
	return sid
}

// liveSessions is the session count /healthz reports.
func (b *httpBridge) liveSessions(t *testing.T) int {
	t.Helper()
	var h struct{ Sessions *int }
	code, _, body := b.do(t, "GET", "/healthz", "", nil)
	if err := json.Unmarshal([]byte(body), &h); code != http.StatusOK || err != nil || h.Sessions == nil {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	return *h.Sessions
}

// sessionCode is the status of a tools/list in session sid.
func (b *httpBridge) sessionCode(t *testing.T, sid string) int {
	t.Helper()
	code, _, _ := b.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		mcpHeader("Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"))
	return code
}

// Over --max-sessions, the session idle the longest is closed: the others,
// and one used lately, keep working.
func TestHTTPMaxSessions(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e, "--max-sessions", "5")
	var sids []string
	for range 5 {
		sids = append(sids, initSession(t, b))
	}
	// The oldest is used now, so sids[1] is the idlest.
	if code := b.sessionCode(t, sids[0]); code != http.StatusOK {
		t.Fatalf("session 0: %d", code)
	}
	sids = append(sids, initSession(t, b))
	if code := b.sessionCode(t, sids[1]); code != http.StatusNotFound {
		t.Fatalf("the idlest session after the cap: %d, want 404", code)
	}
	for _, i := range []int{0, 2, 3, 4, 5} {
		if code := b.sessionCode(t, sids[i]); code != http.StatusOK {
			t.Fatalf("session %d after the cap: %d, want 200", i, code)
		}
	}
	if !strings.Contains(b.stderr.String(), "closing the session idle the longest") {
		t.Fatalf("the eviction is not logged:\n%s", b.stderr.String())
	}
	// Many more, abandoned: the count stays at the cap.
	for range 50 {
		initSession(t, b)
	}
	if n := b.liveSessions(t); n != 5 {
		t.Fatalf("%d live sessions, want 5", n)
	}
	// A deleted session no longer counts.
	last := initSession(t, b)
	if code, _, _ := b.do(t, "DELETE", "/mcp", "", http.Header{"Mcp-Session-Id": {last}}); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	if n := b.liveSessions(t); n != 4 {
		t.Fatalf("after DELETE: %d live sessions, want 4", n)
	}
	if code := b.sessionCode(t, last); code != http.StatusNotFound {
		t.Fatalf("a deleted session: %d, want 404", code)
	}
}

// A session idle for --session-timeout is closed; one in use is not, nor
// one whose event stream is open (a client waiting for list_changed), until
// the stream ends.
func TestHTTPSessionTimeout(t *testing.T) {
	t.Parallel() // it waits out the timeout twice
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e, "--session-timeout", "1s")
	idle, busy, streaming := initSession(t, b), initSession(t, b), initSession(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.url, nil)
	req.Header = http.Header{"Mcp-Session-Id": {streaming}, "Accept": {"text/event-stream"}, "Authorization": {"Bearer " + b.token}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	streamEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, resp.Body); close(streamEnded) }()

	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if code := b.sessionCode(t, busy); code != http.StatusOK {
			t.Fatalf("a session in use: %d", code)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := b.sessionCode(t, idle); code != http.StatusNotFound {
		t.Fatalf("a session idle for 3s with --session-timeout 1s: %d, want 404", code)
	}
	select {
	case <-streamEnded:
		t.Fatal("the event stream of a session was closed as idle")
	default:
	}
	if code := b.sessionCode(t, streaming); code != http.StatusOK {
		t.Fatalf("a session with its event stream open: %d, want 200", code)
	}
	if n := b.liveSessions(t); n != 2 {
		t.Fatalf("%d live sessions, want 2", n)
	}
	// Once the stream ends, the session expires like the others, within 3 s;
	// busy, no longer used, expires too. /healthz touches no session.
	cancel()
	<-streamEnded
	ended := time.Now()
	for n := b.liveSessions(t); n > 0; n = b.liveSessions(t) {
		if time.Since(ended) > 3*time.Second {
			t.Fatalf("%d live sessions 3s after the stream ended, want 0", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := b.sessionCode(t, streaming); code != http.StatusNotFound {
		t.Fatalf("after its stream ended and the session expired: %d, want 404", code)
	}
}

// The defaults: sessions expire after 30m and at most 1000 live.
func TestHTTPSessionDefaults(t *testing.T) {
	e := newEnv(t)
	b := startHTTPDefault(t, e)
	if log := b.stderr.String(); !strings.Contains(log, "max_sessions=1000") || !strings.Contains(log, "session_timeout=30m0s") {
		t.Fatalf("the start log does not show the session defaults:\n%s", log)
	}
}

// Requests without a session leave none behind: plain calls of the 2025
// revisions, calls of 2026-07-28, and broken requests.
func TestHTTPSessionlessRequestsLeaveNoSession(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`
	for range 20 {
		b.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, mcpHeader())
		b.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`,
			mcpHeader("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"))
		b.do(t, "POST", "/mcp", `{"jsonrpc":`, mcpHeader())
		b.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mcpHeader())
	}
	if n := b.liveSessions(t); n != 0 {
		t.Fatalf("%d live sessions after requests without one, want 0", n)
	}
}

// TestHTTPAbandonedSessionsMemory measures the bridge's RSS after 10,000
// sessions opened and abandoned, with the default cap and without one. It
// takes a while, so it runs only with TAIRSEACH_MEASURE=1:
//
//	TAIRSEACH_MEASURE=1 go test -run TestHTTPAbandonedSessionsMemory -v ./cmd/tairseach-mcp
func TestHTTPAbandonedSessionsMemory(t *testing.T) {
	if os.Getenv("TAIRSEACH_MEASURE") != "1" {
		t.Skip("set TAIRSEACH_MEASURE=1 to measure")
	}
	// Under go test -race the other tests' binary is built with -race,
	// which multiplies memory.
	bin := filepath.Join(t.TempDir(), "tairseach-mcp")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./cmd/tairseach-mcp")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	raceBin := bridgeBin
	bridgeBin = bin
	defer func() { bridgeBin = raceBin }()
	e := newEnv(t)
	startBackend(t, e.socket)
	for _, extra := range [][]string{nil, {"--max-sessions", "0", "--session-timeout", "0"}} {
		b := startHTTPDefault(t, e, append([]string{"--log-level", "info"}, extra...)...)
		before := rss(t, b)
		for round := 1; round <= 2; round++ {
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					hc := b.client()
					for i := w; i < 10000; i += 8 {
						req, _ := http.NewRequest("POST", b.url, strings.NewReader(initializeBody))
						req.Header = mcpHeader()
						resp, err := hc.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			t.Logf("%v: after %d×10,000 abandoned sessions: %d live, RSS %d MB (at start %d MB)",
				extra, round, b.liveSessions(t), rss(t, b)>>20, before>>20)
		}
		b.stop(t)
	}
}

// rss is the bridge's resident set size in bytes.
func rss(t *testing.T, b *httpBridge) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("no VmRSS in %s", raw)
	}
	var kb int64
	fmt.Sscan(string(m[1]), &kb)
	return kb << 10
}

// A client that sends its headers or its body a little at a time is cut
// off after --read-timeout; a response that streams for longer (a slow
// call, a subscriptions/listen stream) is not.
func TestHTTPSlowClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.manifests = copyExamples(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e, "--read-timeout", "1s")
	host := strings.TrimPrefix(b.base, "http://")

	// The cases wait on timers, so they run side by side on the one bridge.
	//
	// cutOff sends head, then one byte of more every 200 ms, and returns when
	// the server closes the connection.
	cutOff := func(t *testing.T, head, more string) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		closed := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, conn)
			close(closed)
		}()
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			select {
			case <-closed:
				t.Logf("cut off after %s", time.Since(start).Round(time.Millisecond))
				return
			case <-time.After(200 * time.Millisecond):
			}
			if time.Since(start) > 20*time.Second {
				t.Fatal("the connection is still open after 20s with --read-timeout 1s")
			}
			_, _ = conn.Write([]byte{more[i%len(more)]})
		}
	}
	t.Run("slow headers", func(t *testing.T) {
		t.Parallel()
		cutOff(t, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\n", "X-a: b\r\n")
	})
	t.Run("slow body", func(t *testing.T) {
		t.Parallel()
		cutOff(t, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n", " ")
	})

	// A call slower than the read timeout gets its answer, at both
	// revisions (a 2026 call is cancelled when its request is).
	for _, proto := range protocols {
		t.Run("slow call "+protoName(proto), func(t *testing.T) {
			t.Parallel()
			cs := connectHTTP(t, b.url, proto, nil, nil)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 2500}})
			if err != nil || res.IsError {
				t.Fatalf("a 2.5 s call with --read-timeout 1s: %v %v", err, res)
			}
		})
	}
	// A 2026-07-28 client's subscriptions/listen stream (a POST) outlives
	// the read timeout and still delivers list_changed.
	t.Run("listen stream", func(t *testing.T) {
		t.Parallel()
		notes := make(chan struct{}, 4)
		connectHTTP(t, b.url, "", &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes <- struct{}{} },
		}, nil)
		time.Sleep(2500 * time.Millisecond)
		writeAtomic(t, filepath.Join(e.manifests, "extra.json"), extraManifest)
		select {
		case <-notes:
		case <-time.After(10 * time.Second):
			t.Fatal("no list_changed on a listen stream older than the read timeout")
		}
	})
}
