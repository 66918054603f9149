package main

// End-to-end tests of --transport http: the real binary on 127.0.0.1, the
// real demo backend, the go-sdk client over streamable HTTP and plain HTTP
// requests for what the client would never send.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpBridge is a running tairseach-mcp --transport http.
type httpBridge struct {
	url    string // http://127.0.0.1:PORT/mcp
	base   string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{} // closed when the process has exited; then err is set
	err    error
	home   string // the bridge's HOME, a fresh directory
	token  string // the bearer token of the default token file, if used
}

var listeningRE = regexp.MustCompile(`listening on (http://\S+)/mcp`)

// startHTTP starts the bridge on a free loopback port with --no-auth (unless
// extra names a token) and waits until it logs its address. Its HOME is a
// fresh directory.
func startHTTP(t *testing.T, e env, extra ...string) *httpBridge {
	t.Helper()
	return startHTTPEnv(t, e, nil, extra...)
}

// startHTTPDefault starts the bridge as a user would, with the default
// token file (made at start in the fresh HOME), which b.token then holds.
func startHTTPDefault(t *testing.T, e env, extra ...string) *httpBridge {
	t.Helper()
	b := startHTTPArgs(t, e, nil, extra)
	raw, err := os.ReadFile(filepath.Join(b.home, ".tairseach", "mcp-token"))
	if err != nil {
		t.Fatalf("the default token file: %v", err)
	}
	b.token = strings.TrimSpace(string(raw))
	return b
}

// startHTTPEnv is startHTTP with extra environment variables.
func startHTTPEnv(t *testing.T, e env, environ []string, extra ...string) *httpBridge {
	t.Helper()
	authed := slices.Contains(extra, "--auth-token-file") || slices.Contains(extra, "--no-auth") ||
		slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, tokenEnv+"=") })
	if !authed {
		extra = append([]string{"--no-auth"}, extra...)
	}
	return startHTTPArgs(t, e, environ, extra)
}

func startHTTPArgs(t *testing.T, e env, environ []string, extra []string) *httpBridge {
	t.Helper()
	args := e.args(append([]string{"--transport", "http", "--listen", "127.0.0.1:0"}, extra...)...)
	b := &httpBridge{cmd: exec.Command(bridgeBin, args...), stderr: &syncBuffer{}, exited: make(chan struct{}), home: shortDir(t)}
	b.cmd.Stderr = b.stderr
	b.cmd.Env = append(append(bridgeEnv(), "HOME="+b.home), environ...)
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.err = b.cmd.Wait(); close(b.exited) }()
	t.Cleanup(func() {
		b.stop(t)
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", b.stderr.String())
		}
	})
	deadline := time.After(20 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(b.stderr.String()); m != nil {
			b.base, b.url = m[1], m[1]+"/mcp"
			return b
		}
		select {
		case <-b.exited:
			t.Fatalf("the bridge exited before listening: %v\nstderr:\n%s", b.err, b.stderr.String())
		case <-deadline:
			t.Fatalf("the bridge did not log its address within 20s\nstderr:\n%s", b.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// bridgeEnv is the test's environment without the bridge's own variables
// and without HOME, which each test gives its own.
func bridgeEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TAIRSEACH_") || strings.HasPrefix(kv, "HOME=")
	})
}

// client is an HTTP client that sends the bridge's token, if it has one.
func (b *httpBridge) client() *http.Client {
	if b.token == "" {
		return http.DefaultClient
	}
	return &http.Client{Transport: bearer{token: b.token}}
}

// do is request with the bridge's token.
func (b *httpBridge) do(t *testing.T, method, path, body string, header http.Header) (int, http.Header, string) {
	t.Helper()
	h := http.Header{}
	for k, v := range header {
		h[k] = v
	}
	if b.token != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+b.token)
	}
	return request(t, method, b.base+path, body, h)
}

// stop sends SIGTERM and waits for the exit, killing after 10 s.
func (b *httpBridge) stop(t *testing.T) {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
		t.Errorf("the bridge did not exit within 10s of SIGTERM")
	}
}

// connectHTTP connects a go-sdk client to the bridge.
func connectHTTP(t *testing.T, url, protocol string, opts *mcp.ClientOptions, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// request sends one HTTP request and returns the status and body.
func request(t *testing.T, method, url, body string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Host") != "" {
		req.Host = req.Header.Get("Host")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`

// mcpHeader is what a streamable HTTP POST needs, plus extra key/value pairs.
func mcpHeader(kv ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestHTTPTwoSessionsListCallAndListChanged(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			e := newEnv(t)
			e.manifests = copyExamples(t)
			startBackend(t, e.socket)
			b := startHTTP(t, e)

			const n = 2
			var sessions [n]*mcp.ClientSession
			var notes [n]chan struct{}
			for i := range n {
				notes[i] = make(chan struct{}, 16)
				sessions[i] = connectHTTP(t, b.url, proto, &mcp.ClientOptions{
					ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes[i] <- struct{}{} },
				}, nil)
			}
			if sessions[0].ID() != "" && sessions[0].ID() == sessions[1].ID() {
				t.Fatalf("both clients got session %q", sessions[0].ID())
			}

			// Both list and call at the same time.
			var wg sync.WaitGroup
			errs := make(chan error, 2*n)
			for i, cs := range sessions {
				wg.Go(func() {
					list, err := cs.ListTools(context.Background(), nil)
					if err != nil {
						errs <- fmt.Errorf("session %d: tools/list: %w", i, err)
						return
					}
					if len(list.Tools) != 13 {
						errs <- fmt.Errorf("session %d: %d tools, want 13", i, len(list.Tools))
					}
					for j := range 5 {
						args := map[string]any{"session": float64(i), "call": float64(j)}
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_echo", Arguments: args})
						if err != nil {
							errs <- fmt.Errorf("session %d: call %d: %w", i, j, err)
							return
						}
						var got map[string]any
						if err := json.Unmarshal([]byte(text(res)), &got); err != nil || res.IsError || !jsonEqual(got, args) {
							errs <- fmt.Errorf("session %d: call %d returned isError %v, %s", i, j, res.IsError, text(res))
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}

			// A new manifest: every session is told.
			writeAtomic(t, filepath.Join(e.manifests, "extra.json"), extraManifest)
			for i := range n {
				select {
				case <-notes[i]:
				case <-time.After(5 * time.Second):
					t.Fatalf("session %d: no notifications/tools/list_changed within 5s of writing a manifest", i)
				}
				if names := toolNames(t, sessions[i]); !slices.Contains(names, "tairseach_extra_echo") {
					t.Fatalf("session %d: after the reload, tools/list = %v", i, names)
				}
				if res := callTool(t, sessions[i], "tairseach_extra_echo", map[string]any{"i": float64(i)}); res.IsError {
					t.Fatalf("session %d: calling the new tool: %s", i, text(res))
				}
			}
		})
	}
}

// A session that has sent nothing since initialize, on a server no client
// has listed tools from yet, is told of a reload too.
func TestHTTPListChangedBeforeAnyRequest(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e)
	notes := make(chan struct{}, 16)
	connectHTTP(t, b.url, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes <- struct{}{} },
	}, nil)
	time.Sleep(100 * time.Millisecond) // let the client open its event stream
	writeAtomic(t, filepath.Join(e.manifests, "extra.json"), extraManifest)
	select {
	case <-notes:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed within 5s of writing a manifest")
	}
}

func TestHTTPStateless(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e, "--stateless")
	cs := connectHTTP(t, b.url, "2025-11-25", nil, nil)
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("stateless call: %s", text(res))
	}
	// No initialize needed, and no session handed out.
	code, header, body := request(t, "POST", b.url, `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`, mcpHeader())
	if code != http.StatusOK || !strings.Contains(body, "tairseach_demo_echo") || header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("stateless tools/list without initialize: %d, session %q, %.200s", code, header.Get("Mcp-Session-Id"), body)
	}
}

func TestHTTPNonLoopbackNeedsToken(t *testing.T) {
	e := newEnv(t)
	for _, listen := range []string{"0.0.0.0:0", ":0"} {
		cmd := exec.Command(bridgeBin, e.args("--transport", "http", "--no-auth", "--listen", listen)...)
		cmd.Env = append(bridgeEnv(), "HOME="+shortDir(t))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("--no-auth --listen %s: err %v, want a non-zero exit\n%s", listen, err, out)
		}
		for _, want := range []string{"--no-auth", "without a token", "127.0.0.1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("--listen %s: message lacks %q:\n%s", listen, want, out)
			}
		}
		if strings.Contains(string(out), "listening on") {
			t.Errorf("--listen %s: listened anyway:\n%s", listen, out)
		}
	}

	// With a token it starts, and the token is required.
	token := strings.Repeat("ab", 16)
	b := startHTTPEnv(t, e, []string{tokenEnv + "=" + token}, "--listen", "0.0.0.0:0")
	loop := strings.Replace(b.base, "0.0.0.0", "127.0.0.1", 1)
	if code, _, _ := request(t, "GET", loop+"/healthz", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("0.0.0.0 with a token, no token sent: status %d, want 401", code)
	}
	if code, _, _ := request(t, "GET", loop+"/healthz", "", http.Header{"Authorization": {"Bearer " + token}}); code != http.StatusOK {
		t.Fatalf("0.0.0.0 with the token: status %d, want 200", code)
	}
}

func TestHTTPTokenIsChecked(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	token := "s3cret-" + strings.Repeat("x", 20)
	file := filepath.Join(shortDir(t), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startHTTP(t, e, "--auth-token-file", file)

	for name, auth := range map[string]string{
		"none":          "",
		"wrong":         "Bearer " + token + "x",
		"prefix":        "Bearer " + token[:len(token)-1],
		"wrong scheme":  "Basic " + token,
		"token alone":   token,
		"empty bearer":  "Bearer ",
		"other token":   "Bearer " + strings.Repeat("y", len(token)),
		"case of token": "Bearer " + strings.ToUpper(token),
	} {
		h := mcpHeader()
		if auth != "" {
			h.Set("Authorization", auth)
		}
		code, header, _ := request(t, "POST", b.url, initializeBody, h)
		if code != http.StatusUnauthorized || !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: status %d, WWW-Authenticate %q; want 401 and a Bearer challenge", name, code, header.Get("WWW-Authenticate"))
		}
		if code, _, _ := request(t, "GET", b.base+"/healthz", "", h); code != http.StatusUnauthorized {
			t.Errorf("%s: /healthz status %d, want 401", name, code)
		}
	}

	// A client that sends the token works.
	hc := &http.Client{Transport: bearer{token: token}}
	cs := connectHTTP(t, b.url, "2025-11-25", nil, hc)
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("with the token: %s", text(res))
	}
	if code, _, body := request(t, "GET", b.base+"/healthz", "", http.Header{"Authorization": {"Bearer " + token}}); code != http.StatusOK {
		t.Fatalf("/healthz with the token: %d %s", code, body)
	}
	// A client without it is refused at connect.
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, nil)
	if cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.url, MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Fatal("a client without the token connected")
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPTokenRules(t *testing.T) {
	e := newEnv(t)
	dir := shortDir(t)
	short := filepath.Join(dir, "short")
	_ = os.WriteFile(short, []byte("abc\n"), 0o600)
	for name, tc := range map[string]struct {
		args []string
		env  []string
		want string
	}{
		"missing file": {args: []string{"--auth-token-file", filepath.Join(dir, "nope")}, want: "--auth-token-file"},
		"short file":   {args: []string{"--auth-token-file", short}, want: "openssl rand -hex 32"},
		"short env":    {env: []string{tokenEnv + "=abc"}, want: tokenEnv},
		"bad listen":   {args: []string{"--listen", "8765"}, want: "host:port"},
		"bad size":     {args: []string{"--max-request-bytes", "0"}, want: "--max-request-bytes"},
	} {
		cmd := exec.Command(bridgeBin, e.args(append([]string{"--transport", "http"}, tc.args...)...)...)
		cmd.Env = append(append(bridgeEnv(), "HOME="+shortDir(t)), tc.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: err %v, output %q; want a failure naming %q", name, err, out, tc.want)
		}
	}
}

func TestHTTPForeignOriginRefused(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e)
	for name, h := range map[string]http.Header{
		"Origin":         mcpHeader("Origin", "http://evil.example.com"),
		"Origin port":    mcpHeader("Origin", strings.Replace(b.base, "127.0.0.1:", "127.0.0.1:1", 1)),
		"Sec-Fetch-Site": mcpHeader("Sec-Fetch-Site", "cross-site"),
	} {
		code, _, body := request(t, "POST", b.url, initializeBody, h)
		if code != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403: %.200s", name, code, body)
		}
	}
	// The server's own origin is fine.
	if code, _, body := request(t, "POST", b.url, initializeBody, mcpHeader("Origin", b.base)); code != http.StatusOK {
		t.Errorf("same origin: status %d: %.200s", code, body)
	}
}

func TestHTTPBadHostRefused(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e)
	for _, host := range []string{"evil.example.com", "evil.example.com:80", "10.0.0.1"} {
		if code, _, body := request(t, "POST", b.url, initializeBody, mcpHeader("Host", host)); code != http.StatusForbidden {
			t.Errorf("POST /mcp with Host %s: status %d, want 403: %.200s", host, code, body)
		}
		if code, _, body := request(t, "GET", b.base+"/healthz", "", http.Header{"Host": {host}}); code != http.StatusForbidden {
			t.Errorf("GET /healthz with Host %s: status %d, want 403: %.200s", host, code, body)
		}
	}
	port := b.base[strings.LastIndex(b.base, ":")+1:]
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port} {
		if code, _, body := request(t, "POST", b.url, initializeBody, mcpHeader("Host", host)); code != http.StatusOK {
			t.Errorf("Host %s: status %d: %.200s", host, code, body)
		}
	}
}

func TestHTTPRequestTooLarge(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e, "--max-request-bytes", "1000")
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	if code, _, body := request(t, "POST", b.url, big, mcpHeader()); code != http.StatusRequestEntityTooLarge && code != http.StatusBadRequest {
		t.Fatalf("2 KB body over a 1000-byte limit: status %d: %.200s", code, body)
	}
	if code, _, body := request(t, "POST", b.url, initializeBody, mcpHeader()); code != http.StatusOK {
		t.Fatalf("a small request after: status %d: %.200s", code, body)
	}
}

// A call in flight at SIGTERM is answered, the session's standalone event
// stream then ends, and the bridge exits 0. The test holds the standalone
// stream itself, with a plain GET, and its client opens none: the bridge ends
// the streams as soon as the last call is answered, and the go-sdk client
// (v1.8.0), without retries as connectHTTP sets it, then fails its whole
// connection, at times before it has handed over the result it already read.
func TestHTTPShutdownDrainsCalls(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			startBackend(t, e.socket)
			var extra []string
			if stateless {
				extra = append(extra, "--stateless")
			}
			b := startHTTP(t, e, extra...)
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, nil)
			cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.url, MaxRetries: -1, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connecting to %s: %v", b.url, err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			var streamEnded chan error
			if !stateless {
				streamEnded = openStandaloneStream(t, b.url, cs.ID())
			}

			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			start := time.Now()
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 1000}})
				done <- outcome{res, err}
			}()
			time.Sleep(200 * time.Millisecond)
			if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			var o outcome
			select {
			case o = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the call in flight did not return within 10s of SIGTERM")
			}
			if o.err != nil || o.res.IsError || !strings.Contains(text(o.res), "sleptMs") {
				t.Fatalf("call in flight at SIGTERM: err %v, result %+v", o.err, o.res)
			}
			if d := time.Since(start); d < time.Second {
				t.Fatalf("the slow call returned after %v, before it could have finished", d)
			}
			select {
			case <-b.exited:
			case <-time.After(10 * time.Second):
				t.Fatal("the bridge did not exit within 10s of SIGTERM")
			}
			if b.err != nil {
				t.Fatalf("the bridge exited with %v after SIGTERM, want 0", b.err)
			}
			if streamEnded != nil {
				select {
				case err := <-streamEnded:
					if err != nil {
						t.Fatalf("the standalone event stream broke off instead of ending: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the standalone event stream did not end after the bridge exited")
				}
			}
			// Nothing new is accepted once it stopped.
			if _, err := http.Get(b.base + "/healthz"); err == nil {
				t.Fatal("the bridge still answers after exiting")
			}
		})
	}
}

// openStandaloneStream opens session sid's standalone event stream with a GET
// and reads it to its end in the background; the channel gets the read's
// error (nil at a clean end).
func openStandaloneStream(t *testing.T, url, sid string) chan error {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s (standalone stream): %v", url, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("GET %s (standalone stream): status %d, Content-Type %q", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ended <- err
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return ended
}

func TestHTTPShutdownDrainTimeout(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e, "--drain-timeout", "300ms")
	cs := connectHTTP(t, b.url, "2025-11-25", nil, nil)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 5000}})
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(4 * time.Second):
		t.Fatal("the bridge did not give up on a 5s call after a 300ms drain timeout")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %v with --drain-timeout 300ms", d)
	}
	if !strings.Contains(b.stderr.String(), "drain timeout") {
		t.Errorf("no warning about cutting off the call:\n%s", b.stderr.String())
	}
}

func TestHTTPHealthz(t *testing.T) {
	e := newEnv(t)
	be := startBackend(t, e.socket)
	b := startHTTP(t, e)
	get := func() (int, healthBody) {
		t.Helper()
		code, header, body := request(t, "GET", b.base+"/healthz", "", nil)
		var h healthBody
		if err := json.Unmarshal([]byte(body), &h); err != nil || header.Get("Content-Type") != "application/json" {
			t.Fatalf("/healthz: %d %q, %q (%v)", code, header.Get("Content-Type"), body, err)
		}
		return code, h
	}

	code, h := get()
	if code != http.StatusOK || h.Status != "ok" || h.Tools != 13 || h.Manifests != e.manifests ||
		len(h.Backends) != 1 || h.Backends[0].Socket != e.socket || !h.Backends[0].Reachable || h.Backends[0].Error != "" {
		t.Fatalf("backend up: %d %+v", code, h)
	}

	be.stop()
	code, h = get()
	if code != http.StatusOK || h.Status != "degraded" || len(h.Backends) != 1 || h.Backends[0].Reachable ||
		!strings.Contains(h.Backends[0].Error, e.socket) {
		t.Fatalf("backend down: %d %+v", code, h)
	}

	be.start()
	if _, h = get(); h.Status != "ok" || !h.Backends[0].Reachable {
		t.Fatalf("backend back up: %+v", h)
	}

	if code, header, _ := request(t, "POST", b.base+"/healthz", "", nil); code != http.StatusMethodNotAllowed || header.Get("Allow") == "" {
		t.Fatalf("POST /healthz: %d, Allow %q", code, header.Get("Allow"))
	}
	if code, _, _ := request(t, "GET", b.base+"/nope", "", nil); code != http.StatusNotFound {
		t.Fatalf("GET /nope: %d", code)
	}
}

type healthBody struct {
	Status    string
	Tools     int
	Manifests string
	Backends  []struct {
		Socket    string
		Reachable bool
		Error     string
	}
}

// A client of the current revision (2026-07-28, the go-sdk client's
// default) and one of 2025-11-25 share the default, stateful /mcp: both
// list, call, and are told of a reload (the 2026 one over
// subscriptions/listen), with the default token.
func TestHTTPCurrentRevisionOnStatefulEndpoint(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	want := map[string]string{"2025-11-25": "2025-11-25", "": "2026-07-28"}
	var notes [2]chan struct{}
	var sessions [2]*mcp.ClientSession
	for i, proto := range protocols {
		notes[i] = make(chan struct{}, 16)
		sessions[i] = connectHTTP(t, b.url, proto, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes[i] <- struct{}{} },
		}, b.client())
		if got := sessions[i].InitializeResult().ProtocolVersion; got != want[proto] {
			t.Fatalf("%s: negotiated %q, want %q", protoName(proto), got, want[proto])
		}
		if names := toolNames(t, sessions[i]); !slices.Contains(names, "tairseach_demo_echo") || !slices.Contains(names, "tairseach_server_status") {
			t.Fatalf("%s: tools/list = %v", protoName(proto), names)
		}
		args := map[string]any{"proto": proto}
		res := callTool(t, sessions[i], "tairseach_demo_echo", args)
		var got map[string]any
		if err := json.Unmarshal([]byte(text(res)), &got); err != nil || res.IsError || !jsonEqual(got, args) {
			t.Fatalf("%s: echo returned isError %v, %s", protoName(proto), res.IsError, text(res))
		}
	}
	if sessions[0].ID() == "" {
		t.Fatal("the 2025-11-25 client got no session")
	}
	if sessions[1].ID() != "" {
		t.Fatalf("the 2026-07-28 client got session %q; that revision has none", sessions[1].ID())
	}
	time.Sleep(200 * time.Millisecond) // let the clients open their streams
	writeAtomic(t, filepath.Join(e.manifests, "extra.json"), extraManifest)
	for i, proto := range protocols {
		select {
		case <-notes[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no notifications/tools/list_changed within 10s of writing a manifest", protoName(proto))
		}
		if res := callTool(t, sessions[i], "tairseach_extra_echo", map[string]any{"i": float64(i)}); res.IsError {
			t.Fatalf("%s: calling the new tool: %s", protoName(proto), text(res))
		}
	}
	// The 2025 session is still the one live session (the 2026 requests
	// left none behind).
	var h struct{ Sessions int }
	code, _, body := b.do(t, "GET", "/healthz", "", nil)
	if err := json.Unmarshal([]byte(body), &h); code != http.StatusOK || err != nil || h.Sessions != 1 {
		t.Fatalf("/healthz: %d %s; want 1 session", code, body)
	}
}

// The exchange of a plain client of 2026-07-28: server/discover, then
// tools/list, each on its own, on the default endpoint.
func TestHTTPCurrentRevisionRaw(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTP(t, e)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`
	for _, m := range []string{"server/discover", "tools/list"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{` + meta + `}}`
		code, header, resp := request(t, "POST", b.url, body, mcpHeader("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", m))
		if code != http.StatusOK || strings.Contains(resp, `"error"`) || header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("%s: %d, session %q, %s", m, code, header.Get("Mcp-Session-Id"), resp)
		}
		if m == "tools/list" && !strings.Contains(resp, "tairseach_demo_echo") {
			t.Fatalf("tools/list: %s", resp)
		}
		// Without the header, the _meta alone routes it, and the go-sdk
		// says the header is missing instead of refusing the revision.
		code, _, resp = request(t, "POST", b.url, body, mcpHeader("Mcp-Method", m))
		if code != http.StatusBadRequest || !strings.Contains(resp, "Mcp-Protocol-Version header is required") {
			t.Fatalf("%s without the header: %d %s", m, code, resp)
		}
	}
}

// By default a token is made at first start, in a file only the user can
// read, and every request needs it, on loopback too; a restart keeps it.
func TestHTTPDefaultToken(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	file := filepath.Join(b.home, ".tairseach", "mcp-token")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(b.token) {
		t.Fatalf("token %q: want 32 random bytes in hex", b.token)
	}
	for path, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Fatalf("%s: %v, mode %v; want %v", path, err, fi.Mode(), want)
		}
	}
	if log := b.stderr.String(); !strings.Contains(log, "made a new bearer token") || !strings.Contains(log, "token_file="+file) {
		t.Fatalf("the log does not name the new token file:\n%s", log)
	}
	for _, path := range []string{"/healthz", "/mcp"} {
		if code, _, _ := request(t, "POST", b.base+path, initializeBody, mcpHeader()); code != http.StatusUnauthorized {
			t.Fatalf("%s without the token: %d, want 401", path, code)
		}
	}
	if code, _, body := b.do(t, "POST", "/mcp", initializeBody, mcpHeader()); code != http.StatusOK {
		t.Fatalf("with the token: %d %s", code, body)
	}
	cs := connectHTTP(t, b.url, "", nil, b.client())
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatalf("with the token: %s", text(res))
	}

	// A second start with the same HOME reads the same token.
	b.stop(t)
	again := startHTTPArgs(t, e, []string{"HOME=" + b.home}, nil)
	if strings.Contains(again.stderr.String(), "made a new bearer token") {
		t.Fatalf("the second start made a new token:\n%s", again.stderr.String())
	}
	if code, _, _ := request(t, "GET", again.base+"/healthz", "", http.Header{"Authorization": {"Bearer " + b.token}}); code != http.StatusOK {
		t.Fatalf("the first token on the second start: %d", code)
	}
}

// Two servers starting at once with no token file agree on one token.
func TestHTTPDefaultTokenRace(t *testing.T) {
	e := newEnv(t)
	for range 5 {
		home := shortDir(t)
		var wg sync.WaitGroup
		var bridges [2]*httpBridge
		for i := range bridges {
			wg.Go(func() { bridges[i] = startHTTPArgs(t, e, []string{"HOME=" + home}, nil) })
		}
		wg.Wait()
		raw, err := os.ReadFile(filepath.Join(home, ".tairseach", "mcp-token"))
		if err != nil {
			t.Fatal(err)
		}
		token := strings.TrimSpace(string(raw))
		made := 0
		for _, b := range bridges {
			if strings.Contains(b.stderr.String(), "made a new bearer token") {
				made++
			}
			if code, _, _ := request(t, "GET", b.base+"/healthz", "", http.Header{"Authorization": {"Bearer " + token}}); code != http.StatusOK {
				t.Fatalf("the token in the file: %d on %s", code, b.base)
			}
			b.stop(t)
		}
		if made != 1 {
			t.Fatalf("%d servers say they made the token, want 1", made)
		}
		if left, _ := filepath.Glob(filepath.Join(home, ".tairseach", ".mcp-token.*")); len(left) != 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	}
}

// A token file others could read or swap is refused, with the fix.
func TestHTTPTokenFileRefused(t *testing.T) {
	e := newEnv(t)
	token := strings.Repeat("c", 64)
	cases := map[string]struct {
		setup func(t *testing.T, file string)
		want  string
	}{
		"readable by others": {func(t *testing.T, file string) {
			must(t, os.WriteFile(file, []byte(token), 0o644))
			must(t, os.Chmod(file, 0o644))
		}, "chmod 600 "},
		"group readable": {func(t *testing.T, file string) {
			must(t, os.WriteFile(file, []byte(token), 0o640))
			must(t, os.Chmod(file, 0o640))
		}, "chmod 600 "},
		"symlink": {func(t *testing.T, file string) {
			real := filepath.Join(filepath.Dir(file), "real")
			must(t, os.WriteFile(real, []byte(token), 0o600))
			must(t, os.Symlink(real, file))
		}, "is a symlink"},
		"directory": {func(t *testing.T, file string) { must(t, os.Mkdir(file, 0o700)) }, "not a regular file"},
		"fifo":      {func(t *testing.T, file string) { must(t, syscall.Mkfifo(file, 0o600)) }, "not a regular file"},
	}
	if os.Geteuid() == 0 {
		cases["another user's"] = struct {
			setup func(t *testing.T, file string)
			want  string
		}{func(t *testing.T, file string) {
			must(t, os.WriteFile(file, []byte(token), 0o600))
			must(t, os.Chown(file, 12345, 12345))
		}, "belongs to uid 12345"}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			home := shortDir(t)
			dir := filepath.Join(home, ".tairseach")
			must(t, os.Mkdir(dir, 0o700))
			file := filepath.Join(dir, "mcp-token")
			tc.setup(t, file)
			for _, args := range [][]string{nil, {"--auth-token-file", file}} {
				cmd := exec.Command(bridgeBin, e.args(append([]string{"--transport", "http", "--listen", "127.0.0.1:0"}, args...)...)...)
				cmd.Env = append(bridgeEnv(), "HOME="+home)
				out, err := runFor(cmd, 20*time.Second)
				if err == nil || !strings.Contains(out, tc.want) || !strings.Contains(out, file) || strings.Contains(out, "listening on") {
					t.Errorf("%v: err %v, output %q; want a refusal naming %s and %q", args, err, out, file, tc.want)
				}
			}
			// doctor --transport http says the same.
			cmd := exec.Command(bridgeBin, e.args("--transport", "http", "doctor")...)
			cmd.Env = append(bridgeEnv(), "HOME="+home)
			out, _ := runFor(cmd, 20*time.Second)
			if !regexp.MustCompile(`FAIL.*HTTP bearer token: .*` + regexp.QuoteMeta(tc.want)).MatchString(out) {
				t.Errorf("doctor: %s", out)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runFor runs cmd and returns its combined output, killing it after d.
func runFor(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("still running after %s", d)
	}
}

// doctor --transport http names the token file, or says it is not made
// yet, or that there is none.
func TestHTTPDoctorToken(t *testing.T) {
	e := newEnv(t)
	home := shortDir(t)
	doctor := func(extra ...string) string {
		cmd := exec.Command(bridgeBin, e.args(append([]string{"--transport", "http"}, append(extra, "doctor")...)...)...)
		cmd.Env = append(bridgeEnv(), "HOME="+home)
		out, _ := runFor(cmd, 20*time.Second)
		return out
	}
	file := filepath.Join(home, ".tairseach", "mcp-token")
	if out := doctor(); !regexp.MustCompile(`WARN +HTTP bearer token file ` + regexp.QuoteMeta(file) + ` does not exist yet; fix: start`).MatchString(out) {
		t.Fatalf("before the first start:\n%s", out)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("doctor made the token file")
	}
	b := startHTTPArgs(t, e, []string{"HOME=" + home}, nil)
	b.stop(t)
	if out := doctor(); !regexp.MustCompile(`OK +HTTP bearer token file ` + regexp.QuoteMeta(file) + `\n`).MatchString(out) {
		t.Fatalf("after the first start:\n%s", out)
	}
	if out := doctor("--no-auth"); !regexp.MustCompile(`WARN +HTTP bearer token: none \(--no-auth\)`).MatchString(out) {
		t.Fatalf("--no-auth:\n%s", out)
	}
}

// --no-auth serves without a token, with a warning, on loopback only.
func TestHTTPNoAuth(t *testing.T) {
	e := newEnv(t)
	b := startHTTP(t, e, "--no-auth")
	if !strings.Contains(b.stderr.String(), "WRN --no-auth: every user and process on this machine can call the tools") {
		t.Fatalf("no warning:\n%s", b.stderr.String())
	}
	if code, _, body := request(t, "POST", b.url, initializeBody, mcpHeader()); code != http.StatusOK {
		t.Fatalf("--no-auth: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(b.home, ".tairseach", "mcp-token")); err == nil {
		t.Fatal("--no-auth made a token file")
	}
}

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
	// The other tests' binary is built with -race, which multiplies memory.
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

// TestTokenHint: a refused client is told the token file as the user
// would type it, or that the token is in the server's environment.
func TestTokenHint(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for path, want := range map[string]string{
		filepath.Join(home, ".tairseach", "mcp-token"): "the token in ~/.tairseach/mcp-token",
		"/etc/tairseach/token":                         "the token in /etc/tairseach/token",
		"":                                             "the token in TAIRSEACH_MCP_TOKEN of the server's environment",
	} {
		if got := tokenHint(path); got != want {
			t.Errorf("tokenHint(%q) = %q, want %q", path, got, want)
		}
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
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after the second signal (the grace is 30 s)")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("exited %v after the second signal", d.Round(time.Millisecond))
	}
	raw, _ := os.ReadFile(audit)
	if !strings.Contains(string(raw), `"tool":"tairseach_demo_slow"`) {
		t.Errorf("no audit line for the call in flight:\n%s", raw)
	}
}
