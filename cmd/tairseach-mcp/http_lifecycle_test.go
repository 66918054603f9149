package main

// HTTP tests of the server's life: shutdown and its drain, /healthz, the
// current revision, the default token and its file, doctor, --no-auth.

// End-to-end tests of --transport http: the real binary on 127.0.0.1, the
// real demo backend, the go-sdk client over streamable HTTP and plain HTTP
// requests for what the client would never send.

import (
	"context"
	"encoding/json"
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
