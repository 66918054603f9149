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
					if len(list.Tools) != 13+1 {
						errs <- fmt.Errorf("session %d: %d tools, want 13 and tairseach_result_part", i, len(list.Tools))
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
