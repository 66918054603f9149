package main

// End-to-end tests of progress notifications, confirmation by elicitation
// and the audit log: the real binary, the demo backend, real clients.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loggedBackend is a demo backend whose request log (one line per call, at
// trace level) the test reads.
type loggedBackend struct {
	cmd *exec.Cmd
	log *syncBuffer
}

func startLoggedBackend(t *testing.T, path string) *loggedBackend {
	t.Helper()
	b := &loggedBackend{cmd: exec.Command(demoBin, "--socket", path, "--log-level", "trace"), log: &syncBuffer{}}
	b.cmd.Stderr = b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = b.cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = b.cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.log.String(), "listening") {
		if time.Now().After(deadline) {
			t.Fatalf("demo backend did not start within 10s:\n%s", b.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return b
}

// calls counts the backend's calls of method.
func (b *loggedBackend) calls(method string) int {
	n := 0
	for _, l := range strings.Split(b.log.String(), "\n") {
		if strings.Contains(l, "call") && strings.Contains(l, "method="+method+" ") {
			n++
		}
	}
	return n
}

// destructiveManifests is manifests.example with demo.echo annotated
// destructiveHint: true, as a tool such as contacts.delete is.
func destructiveManifests(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"server.json", "contacts.json"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "manifests.example", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "manifests.example", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, tool := range m["tools"].([]any) {
		tool := tool.(map[string]any)
		if tool["name"] == "demo.echo" {
			tool["description"] = "Erase everything (a test stand-in for a destructive tool)."
			tool["annotations"] = map[string]any{"destructiveHint": true, "readOnlyHint": false}
		}
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "demo.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestProgressTypeScriptClient: a 3 s call with a 2 s request timeout
// succeeds because the progress sent every second resets it.
func TestProgressTypeScriptClient(t *testing.T) {
	t.Parallel() // it waits out a 3 s call
	nodeModules(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	args := append([]string{"observe-client.mjs", "progress", bridgeBin}, e.args("--progress-interval", "1s")...)
	stdout, stderr, code := runNode(t, 60*time.Second, "node", args...)
	if code != 0 {
		t.Fatalf("observe-client exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var out struct {
		Progress []struct {
			Progress float64
			Message  string
		}
		Result struct {
			IsError           bool
			StructuredContent map[string]any
			Content           []struct{ Text string }
		}
		TookMs int
	}
	if err := json.Unmarshal([]byte(lastLine(stdout)), &out); err != nil {
		t.Fatalf("observe-client output %q: %v", stdout, err)
	}
	if out.Result.IsError || len(out.Result.Content) == 0 || !strings.Contains(out.Result.Content[0].Text, "sleptMs") {
		t.Fatalf("the 3 s call did not succeed: %+v\nstderr:\n%s", out.Result, stderr)
	}
	if len(out.Progress) < 2 {
		t.Fatalf("want at least 2 progress notifications in 3 s at 1 s, got %+v", out.Progress)
	}
	for i, p := range out.Progress {
		if p.Progress != float64(i+1) || !strings.Contains(p.Message, "demo.slow") {
			t.Errorf("progress %d: %+v; want progress %d and a message naming demo.slow", i, p, i+1)
		}
	}
}

// progressRecorder collects the progress notifications a go-sdk client
// receives.
type progressRecorder struct {
	mu   sync.Mutex
	seen []*mcp.ProgressNotificationParams
}

func (r *progressRecorder) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req.Params)
}

func (r *progressRecorder) get() []*mcp.ProgressNotificationParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), r.seen...)
}

// checkProgress calls demo.slow for 1.5 s with and without a progress
// token, at a 300 ms interval.
func checkProgress(t *testing.T, cs *mcp.ClientSession, rec *progressRecorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 1500}})
	if err != nil || res.IsError {
		t.Fatalf("call without a token: %v %+v", err, res)
	}
	if n := len(rec.get()); n != 0 {
		t.Fatalf("%d progress notifications for a call without a progressToken", n)
	}
	// 1650 ms: the last tick (1500 ms) is well before the response.
	p := &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 1650}}
	p.SetProgressToken("tok-1")
	res, err = cs.CallTool(ctx, p)
	if err != nil || res.IsError {
		t.Fatalf("call with a token: %v %+v", err, res)
	}
	got := rec.get()
	if len(got) < 2 {
		t.Fatalf("want at least 2 progress notifications in 1.5 s at 300 ms, got %d", len(got))
	}
	for i, n := range got {
		if n.ProgressToken != "tok-1" || n.Progress != float64(i+1) || !strings.Contains(n.Message, "waiting for demo.slow") {
			t.Errorf("notification %d: %+v", i, n)
		}
	}
	// Nothing after the response. The client dispatches notifications
	// apart from responses, so one sent just before the response may be
	// seen just after it; a reporter still running would add three.
	time.Sleep(time.Second)
	if after := rec.get(); len(after) > len(got)+1 {
		t.Errorf("%d progress notifications after the response", len(after)-len(got))
	}
}

// Each case waits out its calls (about 4 s), on its own backend and bridge,
// so the cases run side by side, and beside the other tests that wait.
func TestProgressGoClient(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		t.Run("stdio-"+protoName(proto), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			startBackend(t, e.socket)
			rec := &progressRecorder{}
			cs := connectWith(t, e, proto, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}, "--progress-interval", "300ms")
			checkProgress(t, cs, rec)
		})
		t.Run("http-"+protoName(proto), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			startBackend(t, e.socket)
			b := startHTTP(t, e, "--progress-interval", "300ms")
			rec := &progressRecorder{}
			cs := connectHTTP(t, b.url, proto, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}, nil)
			checkProgress(t, cs, rec)
		})
	}
}

// TestConfirmGoClient: a destructive tool under --confirm destructive asks
// the user; only an accepted call reaches the backend.
func TestConfirmGoClient(t *testing.T) {
	for _, proto := range protocols {
		for _, tc := range []struct {
			name     string
			answer   *mcp.ElicitResult // nil: the client cannot elicit
			wantSent bool
			wantText string
		}{
			{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, true, `"marker"`},
			{"accept-unticked", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, false, "declined by the user"},
			{"decline", &mcp.ElicitResult{Action: "decline"}, false, "declined by the user"},
			{"cancel", &mcp.ElicitResult{Action: "cancel"}, false, "declined by the user"},
			{"no-elicitation", nil, false, "--confirm none"},
		} {
			t.Run(protoName(proto)+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				e.manifests = destructiveManifests(t)
				be := startLoggedBackend(t, e.socket)
				var mu sync.Mutex
				var asked []*mcp.ElicitParams
				opts := &mcp.ClientOptions{}
				if tc.answer != nil {
					opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						asked = append(asked, req.Params)
						mu.Unlock()
						return tc.answer, nil
					}
				}
				cs := connectWith(t, e, proto, opts, "--confirm", "destructive")
				res := callTool(t, cs, "tairseach_demo_echo", map[string]any{"marker": "m-" + tc.name})
				if res.IsError == tc.wantSent || !strings.Contains(text(res), tc.wantText) {
					t.Fatalf("result: isError=%v %q; want text containing %q", res.IsError, text(res), tc.wantText)
				}
				// A tool that is not destructive is called without asking.
				if r := callTool(t, cs, "tairseach_server_status", nil); r.IsError {
					t.Fatalf("server.status: %s", text(r))
				}
				mu.Lock()
				defer mu.Unlock()
				if tc.answer != nil {
					if len(asked) != 1 {
						t.Fatalf("the user was asked %d times, want once", len(asked))
					}
					for _, want := range []string{"demo.echo", "Erase everything", `"marker": "m-` + tc.name + `"`} {
						if !strings.Contains(asked[0].Message, want) {
							t.Errorf("the confirmation %q does not show %q", asked[0].Message, want)
						}
					}
				}
				waitFor(t, func() bool { return be.calls("server.status") == 1 }, "the confirmed call at the backend")
				if n := be.calls("demo.echo"); n != map[bool]int{true: 1, false: 0}[tc.wantSent] {
					t.Fatalf("the backend received demo.echo %d times; want sent=%v\nbackend log:\n%s", n, tc.wantSent, be.log.String())
				}
			})
		}
	}
}

// TestConfirmTypeScriptClient: the same with the TypeScript SDK.
func TestConfirmTypeScriptClient(t *testing.T) {
	nodeModules(t)
	for _, tc := range []struct {
		scenario string
		wantSent bool
		wantText string
		asked    int
	}{
		{"accept", true, "observe-accept", 1},
		{"decline", false, "declined by the user", 1},
		{"cancel", false, "declined by the user", 1},
		{"noelicit", false, "--confirm none", 0},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			e := newEnv(t)
			e.manifests = destructiveManifests(t)
			be := startLoggedBackend(t, e.socket)
			args := append([]string{"observe-client.mjs", tc.scenario, bridgeBin}, e.args("--confirm", "destructive")...)
			stdout, stderr, code := runNode(t, 60*time.Second, "node", args...)
			if code != 0 {
				t.Fatalf("observe-client exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			var out struct {
				Elicitations []struct {
					Message         string
					RequestedSchema map[string]any
				}
				Result struct {
					IsError bool
					Content []struct{ Text string }
				}
			}
			if err := json.Unmarshal([]byte(lastLine(stdout)), &out); err != nil {
				t.Fatalf("observe-client output %q: %v", stdout, err)
			}
			if len(out.Elicitations) != tc.asked {
				t.Fatalf("asked %d times, want %d", len(out.Elicitations), tc.asked)
			}
			if tc.asked > 0 && !strings.Contains(out.Elicitations[0].Message, "observe-"+tc.scenario) {
				t.Errorf("the confirmation does not show the arguments: %q", out.Elicitations[0].Message)
			}
			if len(out.Result.Content) == 0 || out.Result.IsError == tc.wantSent || !strings.Contains(out.Result.Content[0].Text, tc.wantText) {
				t.Fatalf("result %+v; want text containing %q", out.Result, tc.wantText)
			}
			if n := be.calls("demo.echo"); n != map[bool]int{true: 1, false: 0}[tc.wantSent] {
				t.Fatalf("the backend received demo.echo %d times; want sent=%v", n, tc.wantSent)
			}
		})
	}
}

// auditRecord is one line of the audit log.
type auditRecord struct {
	Time      string
	Transport string
	Session   string
	Client    struct{ Name, Version string }
	Protocol  string
	Tool      string
	Method    string
	Socket    string
	Args      json.RawMessage
	ArgsHash  string `json:"args_sha256"`
	Outcome   string
	Code      *int64
	Duration  float64 `json:"duration_ms"`
	Bytes     int     `json:"result_bytes"`
}

func readAudit(t *testing.T, path string) []auditRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []auditRecord
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r auditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestAuditLogMixedOutcomes: one line per call, for a session whose calls
// end every way a call can. The cases wait out a timeout and a slow call,
// each on its own backend and bridge, side by side.
func TestAuditLogMixedOutcomes(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.manifests = destructiveManifests(t)
			startBackend(t, e.socket)
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			flags := []string{"--audit-log", path, "--confirm", "destructive", "--call-timeout", "2s"}
			opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}}
			var cs *mcp.ClientSession
			if transport == "stdio" {
				cs = connectWith(t, e, "2025-11-25", opts, flags...)
			} else {
				b := startHTTP(t, e, flags...)
				cs = connectHTTP(t, b.url, "2025-11-25", opts, nil)
			}
			callTool(t, cs, "tairseach_server_status", nil)                                        // ok
			callTool(t, cs, "tairseach_contacts_search", map[string]any{"limit": 2, "query": "a"}) // ok, arguments hashed
			callTool(t, cs, "tairseach_demo_fail", nil)                                            // tool_error -32001
			callTool(t, cs, "tairseach_demo_slow", map[string]any{"ms": "soon"})                   // invalid_arguments
			callTool(t, cs, "tairseach_demo_slow", map[string]any{"ms": 5000})                     // timeout
			callTool(t, cs, "tairseach_demo_echo", map[string]any{"secret": "x"})                  // declined
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_demo_slow", Arguments: map[string]any{"ms": 1500}}) // cancelled
			cancel()
			if err == nil {
				t.Fatal("the cancelled call returned a result")
			}
			want := []struct {
				tool, outcome string
			}{
				{"tairseach_server_status", "ok"},
				{"tairseach_contacts_search", "ok"},
				{"tairseach_demo_fail", "tool_error"},
				{"tairseach_demo_slow", "invalid_arguments"},
				{"tairseach_demo_slow", "timeout"},
				{"tairseach_demo_echo", "declined"},
				{"tairseach_demo_slow", "cancelled"},
			}
			var recs []auditRecord
			waitFor(t, func() bool { recs = readAudit(t, path); return len(recs) >= len(want) }, "every audit line")
			if len(recs) != len(want) {
				t.Fatalf("%d audit lines, want %d: %+v", len(recs), len(want), recs)
			}
			for i, w := range want {
				r := recs[i]
				if r.Tool != w.tool || r.Outcome != w.outcome {
					t.Errorf("line %d: %s %s, want %s %s", i, r.Tool, r.Outcome, w.tool, w.outcome)
				}
				if r.Transport != transport || r.Client.Name != map[string]string{"stdio": "e2e", "http": "e2e-http"}[transport] || r.Protocol != "2025-11-25" {
					t.Errorf("line %d: transport %q client %+v protocol %q", i, r.Transport, r.Client, r.Protocol)
				}
				if transport == "http" && r.Session == "" {
					t.Errorf("line %d: no session id over HTTP", i)
				}
				if len(r.Args) != 0 {
					t.Errorf("line %d: arguments stored without --audit-args: %s", i, r.Args)
				}
				if _, err := time.Parse(time.RFC3339Nano, r.Time); err != nil {
					t.Errorf("line %d: time %q: %v", i, r.Time, err)
				}
			}
			sum := sha256.Sum256([]byte(`{"limit":2,"query":"a"}`))
			if recs[1].ArgsHash != hex.EncodeToString(sum[:]) || recs[1].Method != "contacts.search" || recs[1].Socket != e.socket || recs[1].Bytes == 0 {
				t.Errorf("contacts.search line: %+v; want the SHA-256 of the canonical arguments, the method, the socket and a size", recs[1])
			}
			if recs[2].Code == nil || *recs[2].Code != -32001 {
				t.Errorf("demo.fail line: code %v, want -32001", recs[2].Code)
			}
			if recs[5].Method != "" {
				t.Errorf("the declined call names a socket method, as if it were sent: %+v", recs[5])
			}
			if recs[4].Duration < 1500 {
				t.Errorf("the timed-out call lasted %.0f ms, want about 2000", recs[4].Duration)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("audit log mode %04o, want 0600", fi.Mode().Perm())
			}
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), "Threshold Analytics") || strings.Contains(string(b), `"secret"`) {
				t.Errorf("the audit log holds a result or arguments:\n%s", b)
			}
		})
	}
}

// TestAuditLogArgsAndRefusals: --audit-args stores the arguments; a
// symlink or an unwritable path is refused at start with the cause.
func TestAuditLogArgsAndRefusals(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	cs := connect(t, e, "", "--audit-log", path, "--audit-args")
	callTool(t, cs, "tairseach_demo_echo", map[string]any{"b": 1, "a": "x"})
	var recs []auditRecord
	waitFor(t, func() bool { recs = readAudit(t, path); return len(recs) == 1 }, "the audit line")
	if string(recs[0].Args) != `{"a":"x","b":1}` {
		t.Errorf("args %s, want the canonical arguments", recs[0].Args)
	}

	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(dir, "loose.jsonl")
	if err := os.WriteFile(loose, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{link, "symlink"},
		{loose, "chmod 600"},
		{filepath.Join(dir, "missing", "audit.jsonl"), "no such file"},
	} {
		cmd := exec.Command(bridgeBin, e.args("--audit-log", tc.path)...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--audit-log") || !strings.Contains(string(out), tc.want) {
			t.Errorf("--audit-log %s: err %v, output %s; want a refusal naming %q", tc.path, err, out, tc.want)
		}
	}
}
