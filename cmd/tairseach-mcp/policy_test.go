package main

// The tool policy (--toolsets, --read-only, --tools, --exclude-tools, the
// X-MCP-* headers) and --tool-mode discover, end to end: the real binary,
// real clients (the TypeScript SDK, the go-sdk), and a fault backend whose
// request counter proves that a hidden tool's call never reaches the socket.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
)

// policyManifest is a manifest of toolset id whose tools all call fault.ok
// (which echoes the arguments) on socket; each tool is name plus its
// annotations JSON ("" for none).
func policyManifest(socket, id string, tools ...[2]string) string {
	var ts, methods []string
	for _, t := range tools {
		ann := ""
		if t[1] != "" {
			ann = `,"annotations":` + t[1]
		}
		ts = append(ts, fmt.Sprintf(`{"name":%q,"description":"%s of the %s toolset.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}%s}`, t[0], t[0], id, ann))
		methods = append(methods, fmt.Sprintf(`%q:"fault.ok"`, t[0]))
	}
	return fmt.Sprintf(`{"id":%q,"tools":[%s],"implementation":{"socket":%q,"methods":{%s}}}`,
		id, strings.Join(ts, ","), socket, strings.Join(methods, ","))
}

const (
	annRO      = `{"readOnlyHint":true}`
	annRODestr = `{"readOnlyHint":true,"destructiveHint":true}`
	annWrite   = `{"readOnlyHint":false,"destructiveHint":true}`
)

// policyEnv is a fault backend and a manifests directory of three toolsets:
// notes (read, delete, write), mail (search, send) and secrets (get, an odd
// tool annotated both read-only and destructive).
type policyEnv struct {
	fb        *faultbackend.Server
	manifests string
}

func newPolicyEnv(t *testing.T) policyEnv {
	t.Helper()
	dir := shortDir(t)
	fb, err := faultbackend.Start(filepath.Join(dir, "f.sock"), faultbackend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fb.Stop)
	m := filepath.Join(dir, "manifests")
	if err := os.Mkdir(m, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"notes.json":   policyManifest(fb.Path(), "notes", [2]string{"notes.read", annRO}, [2]string{"notes.delete", annWrite}, [2]string{"notes.write", ""}),
		"mail.json":    policyManifest(fb.Path(), "mail", [2]string{"mail.search", annRO}, [2]string{"mail.send", annWrite}),
		"secrets.json": policyManifest(fb.Path(), "secrets", [2]string{"secrets.get", annRODestr}),
	} {
		if err := os.WriteFile(filepath.Join(m, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return policyEnv{fb: fb, manifests: m}
}

func (e policyEnv) args(extra ...string) []string {
	return append([]string{"--manifests", e.manifests, "--socket", filepath.Join(filepath.Dir(e.manifests), "none.sock"), "--log-level", "debug"}, extra...)
}

// policyResult is what ts-policy.mjs prints.
type policyResult struct {
	Tools []struct {
		Name        string
		InputSchema json.RawMessage
		Annotations map[string]any
	}
	ListBytes int
	Calls     []struct {
		IsError bool
		Content []struct{ Text string }
		Thrown  string
	}
}

func (r policyResult) names() []string {
	var out []string
	for _, t := range r.Tools {
		if strings.HasSuffix(t.Name, "_result_part") {
			continue // the bridge's own, listed whenever a tool is served
		}
		out = append(out, t.Name)
	}
	return out
}

type policyCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// runTSPolicy runs ts-policy.mjs with spec and decodes what it printed.
func runTSPolicy(t *testing.T, spec map[string]any) policyResult {
	t.Helper()
	nodeModules(t)
	b, _ := json.Marshal(spec)
	stdout, stderr, code := runNode(t, 60*time.Second, "node", "ts-policy.mjs", string(b))
	if code != 0 {
		t.Fatalf("ts-policy exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var r policyResult
	if err := json.Unmarshal([]byte(lastLine(stdout)), &r); err != nil {
		t.Fatalf("decoding %q: %v\nstderr:\n%s", stdout, err, stderr)
	}
	return r
}

func tsStdio(e policyEnv, calls []policyCall, flags ...string) map[string]any {
	return map[string]any{"stdio": map[string]any{"command": bridgeBin, "args": e.args(flags...)}, "calls": calls}
}

func callText(t *testing.T, r policyResult, i int) (string, bool) {
	t.Helper()
	c := r.Calls[i]
	if c.Thrown != "" {
		t.Fatalf("call %d threw: %s", i, c.Thrown)
	}
	if len(c.Content) == 0 {
		t.Fatalf("call %d: no content", i)
	}
	return c.Content[0].Text, c.IsError
}

// wantHidden checks that call i failed closed naming the flag.
func wantHidden(t *testing.T, r policyResult, i int, tool, because string) {
	t.Helper()
	text, isErr := callText(t, r, i)
	if !isErr || !strings.Contains(text, "tool "+tool+" is hidden by "+because) {
		t.Errorf("call %d (%s): isError %v, %q; want an error saying it is hidden by %s", i, tool, isErr, text, because)
	}
}

func wantEcho(t *testing.T, r policyResult, i int, id string) {
	t.Helper()
	text, isErr := callText(t, r, i)
	if isErr || !strings.Contains(text, `"id":"`+id+`"`) {
		t.Errorf("call %d: isError %v, %q; want the echo of id %s", i, isErr, text, id)
	}
}

func TestPolicyToolsetsTypeScript(t *testing.T) {
	e := newPolicyEnv(t)
	r := runTSPolicy(t, tsStdio(e, []policyCall{
		{"tairseach_notes_read", map[string]any{"id": "n1"}},
		{"tairseach_mail_search", map[string]any{"id": "m1"}},
		{"tairseach_secrets_get", map[string]any{"id": "s1"}},
	}, "--toolsets", "notes"))
	if got, want := r.names(), []string{"tairseach_notes_delete", "tairseach_notes_read", "tairseach_notes_write"}; !slices.Equal(got, want) {
		t.Errorf("--toolsets notes lists %v, want %v", got, want)
	}
	wantEcho(t, r, 0, "n1")
	wantHidden(t, r, 1, "tairseach_mail_search", `--toolsets (its toolset "mail" is not among notes)`)
	wantHidden(t, r, 2, "tairseach_secrets_get", "--toolsets")
	if n := e.fb.Requests(); n != 1 {
		t.Errorf("the backend got %d requests, want 1: hidden tools' calls must not reach the socket", n)
	}
}

func TestPolicyToolsetsFromEnvAndUnknown(t *testing.T) {
	e := newPolicyEnv(t)
	cleanEnv(t)
	t.Setenv("TAIRSEACH_MCP_TOOLSETS", "mail,secrets")
	stdout, stderr, code := cli("", append(e.args(), "tools", "--json")...)
	if code != 0 {
		t.Fatalf("tools: exit %d: %s", code, stderr)
	}
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(stdout), &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 3 || tools[0].Name != "tairseach_mail_search" {
		t.Errorf("TAIRSEACH_MCP_TOOLSETS=mail,secrets: tools %v, want the 3 of mail and secrets", tools)
	}
	t.Setenv("TAIRSEACH_MCP_TOOLSETS", "")
	for _, cmd := range [][]string{{"tools"}, {"call", "notes.read", "id=1"}, {}} {
		_, stderr, code := cli("", append(e.args("--toolsets", "notes,nope"), cmd...)...)
		if code != 2 || !strings.Contains(stderr, "unknown toolset nope; the manifests have: mail,notes,secrets") {
			t.Errorf("%v --toolsets notes,nope: exit %d, %q; want 2 and the known toolsets", cmd, code, stderr)
		}
	}
	if n := e.fb.Requests(); n != 0 {
		t.Errorf("the backend got %d requests, want none", n)
	}
}

func TestPolicyReadOnlyTypeScript(t *testing.T) {
	e := newPolicyEnv(t)
	r := runTSPolicy(t, tsStdio(e, []policyCall{
		{"tairseach_notes_delete", map[string]any{"id": "n1"}},
		{"tairseach_notes_write", map[string]any{"id": "n1"}},
		{"tairseach_secrets_get", map[string]any{"id": "s1"}},
		{"tairseach_mail_search", map[string]any{"id": "m1"}},
	}, "--read-only"))
	if got, want := r.names(), []string{"tairseach_mail_search", "tairseach_notes_read"}; !slices.Equal(got, want) {
		t.Errorf("--read-only lists %v, want %v", got, want)
	}
	wantHidden(t, r, 0, "tairseach_notes_delete", "--read-only (it is not annotated readOnlyHint); start tairseach-mcp without it to use the tool")
	wantHidden(t, r, 1, "tairseach_notes_write", "--read-only (it is not annotated readOnlyHint)")
	wantHidden(t, r, 2, "tairseach_secrets_get", "--read-only (it is annotated destructiveHint)")
	wantEcho(t, r, 3, "m1")
	if n := e.fb.Requests(); n != 1 {
		t.Errorf("the backend got %d requests, want 1", n)
	}
}

func TestPolicyGlobsTypeScript(t *testing.T) {
	e := newPolicyEnv(t)
	r := runTSPolicy(t, tsStdio(e, []policyCall{
		{"tairseach_notes_delete", map[string]any{"id": "n1"}},
		{"tairseach_secrets_get", map[string]any{"id": "s1"}},
		{"tairseach_mail_send", map[string]any{"id": "m1"}},
	}, "--tools", "notes.*,tairseach_mail_*", "--exclude-tools", "*delete,tairseach_mail_search"))
	if got, want := r.names(), []string{"tairseach_mail_send", "tairseach_notes_read", "tairseach_notes_write"}; !slices.Equal(got, want) {
		t.Errorf("globs list %v, want %v", got, want)
	}
	wantHidden(t, r, 0, "tairseach_notes_delete", `--exclude-tools (it matches "*delete")`)
	wantHidden(t, r, 1, "tairseach_secrets_get", "--tools (neither tairseach_secrets_get nor secrets.get matches notes.*,tairseach_mail_*)")
	wantEcho(t, r, 2, "m1")
	if n := e.fb.Requests(); n != 1 {
		t.Errorf("the backend got %d requests, want 1", n)
	}
	_, stderr, code := cli("", append(e.args("--tools", "[notes"), "tools")...)
	if code != 2 || !strings.Contains(stderr, `--tools "[notes": not a valid glob`) {
		t.Errorf("a bad glob: exit %d, %q; want 2 and the glob named", code, stderr)
	}
}

func TestPolicyDiscoverTypeScript(t *testing.T) {
	e := newPolicyEnv(t)
	r := runTSPolicy(t, tsStdio(e, []policyCall{
		{"tairseach_search_tools", map[string]any{"query": "notes read"}},
		{"tairseach_describe_tool", map[string]any{"name": "notes.read"}},
		{"tairseach_call_tool", map[string]any{"name": "tairseach_notes_read", "arguments": map[string]any{"id": "n1"}}},
		{"tairseach_notes_read", map[string]any{"id": "n1"}}, // a direct call still works
		{"tairseach_call_tool", map[string]any{"name": "notes.read", "arguments": map[string]any{"id": 7}}},
		{"tairseach_notes_read", map[string]any{"id": 7}},
		{"tairseach_call_tool", map[string]any{"name": "tairseach_notes_delete", "arguments": map[string]any{"id": "n1"}}},
		{"tairseach_call_tool", map[string]any{"name": "nope"}},
		{"tairseach_search_tools", map[string]any{"query": ""}},
	}, "--tool-mode", "discover", "--read-only"))
	if got, want := r.names(), []string{"tairseach_call_tool", "tairseach_describe_tool", "tairseach_search_tools"}; !slices.Equal(got, want) {
		t.Errorf("discover lists %v, want %v", got, want)
	}
	if r.ListBytes >= 2048 {
		t.Errorf("discover's tools/list is %d bytes, want under 2 KB", r.ListBytes)
	}
	text, isErr := callText(t, r, 0)
	var search struct {
		Tools []struct{ Name, Description, Toolset string }
		Total int
	}
	if err := json.Unmarshal([]byte(text), &search); isErr || err != nil || len(search.Tools) == 0 || search.Tools[0].Name != "tairseach_notes_read" {
		t.Errorf("search \"notes read\": %v %v %s; want tairseach_notes_read first", isErr, err, text)
	}
	for _, h := range search.Tools {
		if h.Name == "tairseach_notes_delete" {
			t.Errorf("search found %s, which --read-only hides", h.Name)
		}
	}
	text, isErr = callText(t, r, 1)
	if isErr || !strings.Contains(text, `"inputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`) || !strings.Contains(text, `"readOnlyHint":true`) {
		t.Errorf("describe notes.read: %v %s; want its inputSchema and annotations", isErr, text)
	}
	wantEcho(t, r, 2, "n1")
	wantEcho(t, r, 3, "n1")
	// The same argument check and error as a direct call.
	viaCall, e1 := callText(t, r, 4)
	direct, e2 := callText(t, r, 5)
	if !e1 || !e2 || viaCall != direct || !strings.Contains(direct, "invalid arguments for tairseach_notes_read") {
		t.Errorf("bad arguments: via call_tool %v %q, direct %v %q; want the same error", e1, viaCall, e2, direct)
	}
	wantHidden(t, r, 6, "tairseach_notes_delete", "--read-only")
	if text, isErr := callText(t, r, 7); !isErr || !strings.Contains(text, `unknown tool "nope"; tairseach_search_tools lists the tools`) {
		t.Errorf("call_tool of an unknown tool: %v %q", isErr, text)
	}
	text, _ = callText(t, r, 8)
	if err := json.Unmarshal([]byte(text), &search); err != nil || search.Total != 2 {
		t.Errorf("an empty search: %s; want the 2 tools --read-only serves", text)
	}
	if n := e.fb.Requests(); n != 2 {
		t.Errorf("the backend got %d requests, want 2", n)
	}
}

// TestPolicyDiscoverPrefix: the discovery tools' names follow --prefix.
func TestPolicyDiscoverPrefix(t *testing.T) {
	e := newPolicyEnv(t)
	r := runTSPolicy(t, tsStdio(e, []policyCall{
		{"ts_call_tool", map[string]any{"name": "ts_mail_search", "arguments": map[string]any{"id": "m"}}},
	}, "--tool-mode", "discover", "--prefix", "ts_"))
	if got, want := r.names(), []string{"ts_call_tool", "ts_describe_tool", "ts_search_tools"}; !slices.Equal(got, want) {
		t.Errorf("--prefix ts_ lists %v, want %v", got, want)
	}
	wantEcho(t, r, 0, "m")
}

func TestPolicyHTTPHeadersTypeScript(t *testing.T) {
	e := newPolicyEnv(t)
	b := startHTTP(t, env{manifests: e.manifests, socket: filepath.Join(filepath.Dir(e.manifests), "none.sock")}, "--exclude-tools", "secrets.*")
	spec := func(headers map[string]string, calls ...policyCall) map[string]any {
		return map[string]any{"http": map[string]any{"url": b.url, "headers": headers}, "calls": calls}
	}
	// No headers: the server's flags.
	r := runTSPolicy(t, spec(nil))
	if len(r.names()) != 5 {
		t.Errorf("without headers: %v, want the 5 tools not excluded", r.names())
	}
	// Headers narrow.
	r = runTSPolicy(t, spec(map[string]string{"X-MCP-Toolsets": "notes,mail", "X-MCP-Readonly": "true"},
		policyCall{"tairseach_notes_read", map[string]any{"id": "n"}},
		policyCall{"tairseach_notes_delete", map[string]any{"id": "n"}},
		policyCall{"tairseach_secrets_get", map[string]any{"id": "s"}}))
	if got, want := r.names(), []string{"tairseach_mail_search", "tairseach_notes_read"}; !slices.Equal(got, want) {
		t.Errorf("X-MCP-Toolsets notes,mail + X-MCP-Readonly: %v, want %v", got, want)
	}
	wantEcho(t, r, 0, "n")
	wantHidden(t, r, 1, "tairseach_notes_delete", "the X-MCP-Readonly header (it is not annotated readOnlyHint); connect without that header")
	wantHidden(t, r, 2, "tairseach_secrets_get", `--exclude-tools (it matches "secrets.*"); start tairseach-mcp without it`)
	// Headers cannot widen: the server's exclusion stays.
	r = runTSPolicy(t, spec(map[string]string{"X-MCP-Toolsets": "secrets", "X-MCP-Tools": "*"},
		policyCall{"tairseach_secrets_get", map[string]any{"id": "s"}}))
	if len(r.Tools) != 0 {
		t.Errorf("X-MCP-Toolsets secrets under --exclude-tools secrets.*: %v, want none", r.names())
	}
	wantHidden(t, r, 0, "tairseach_secrets_get", "--exclude-tools")
	r = runTSPolicy(t, spec(map[string]string{"X-MCP-Tools": "mail.*", "X-MCP-Exclude-Tools": "*send"}))
	if got := r.names(); !slices.Equal(got, []string{"tairseach_mail_search"}) {
		t.Errorf("X-MCP-Tools mail.* X-MCP-Exclude-Tools *send: %v", got)
	}
	if n := e.fb.Requests(); n != 1 {
		t.Errorf("the backend got %d requests, want 1", n)
	}
	// Bad headers are a 400 that says why.
	for _, h := range []struct{ k, v, want string }{
		{"X-MCP-Toolsets", "nope", "unknown toolset nope; known toolsets: mail,notes,secrets"},
		{"X-MCP-Readonly", "maybe", `X-MCP-Readonly: "maybe": want true or false`},
		{"X-MCP-Tools", "[x", "not a valid glob"},
	} {
		code, _, body := request(t, "POST", b.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`,
			mcpHeader(h.k, h.v))
		if code != http.StatusBadRequest || !strings.Contains(body, h.want) {
			t.Errorf("%s: %s: %d %q; want 400 and %q", h.k, h.v, code, body, h.want)
		}
	}
}

// TestPolicyHTTPHeaderSessionGoSDK: a go-sdk session opened with headers
// keeps its narrowed tools, and follows reloads within them.
func TestPolicyHTTPHeaderSessionGoSDK(t *testing.T) {
	e := newPolicyEnv(t)
	b := startHTTP(t, env{manifests: e.manifests, socket: filepath.Join(filepath.Dir(e.manifests), "none.sock")})
	hc := &http.Client{Transport: headerTransport{"X-Mcp-Toolsets": "mail"}}
	var changed atomic.Int32
	cs := connectHTTP(t, b.url, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	}, hc)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"tairseach_mail_search", "tairseach_mail_send", "tairseach_result_part"}) {
		t.Fatalf("session with X-MCP-Toolsets mail: %v", got)
	}
	writeAtomic(t, filepath.Join(e.manifests, "mail.json"), policyManifest(e.fb.Path(), "mail",
		[2]string{"mail.search", annRO}, [2]string{"mail.send", annWrite}, [2]string{"mail.draft", ""}))
	waitFor(t, func() bool { return changed.Load() > 0 }, "list_changed after a mail tool was added")
	if got := toolNames(t, cs); !slices.Contains(got, "tairseach_mail_draft") || len(got) != 4 {
		t.Errorf("after the reload: %v, want the 3 mail tools", got)
	}
}

type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPolicyReloadOutsideSelection: a reload that adds a tool the policy
// hides adds nothing and sends no list_changed; one inside does.
func TestPolicyReloadOutsideSelection(t *testing.T) {
	e := newPolicyEnv(t)
	var changed atomic.Int32
	cmd := exec_(t, e, &changed, "--toolsets", "notes")
	cs := cmd.cs
	before := toolNames(t, cs)
	writeAtomic(t, filepath.Join(e.manifests, "mail.json"), policyManifest(e.fb.Path(), "mail",
		[2]string{"mail.search", annRO}, [2]string{"mail.send", annWrite}, [2]string{"mail.draft", ""}))
	waitFor(t, func() bool { return strings.Count(cmd.stderr.String(), "manifests reloaded added=") >= 1 }, "reload")
	time.Sleep(300 * time.Millisecond) // a notification would have arrived by now
	if n := changed.Load(); n != 0 {
		t.Errorf("a reload outside --toolsets notes sent %d list_changed", n)
	}
	if got := toolNames(t, cs); !slices.Equal(got, before) {
		t.Errorf("after a reload outside the selection: %v, want %v", got, before)
	}
	res := callTool(t, cs, "tairseach_mail_draft", map[string]any{"id": "x"})
	if !res.IsError || !strings.Contains(text(res), "hidden by --toolsets") {
		t.Errorf("the new hidden tool: %v %q", res.IsError, text(res))
	}
	writeAtomic(t, filepath.Join(e.manifests, "notes.json"), policyManifest(e.fb.Path(), "notes",
		[2]string{"notes.read", annRO}, [2]string{"notes.list", annRO}))
	waitFor(t, func() bool { return changed.Load() > 0 }, "list_changed after a notes tool was added")
	if got := toolNames(t, cs); !slices.Equal(got, []string{"tairseach_notes_list", "tairseach_notes_read", "tairseach_result_part"}) {
		t.Errorf("after the notes reload: %v", got)
	}
	if n := e.fb.Requests(); n != 0 {
		t.Errorf("the backend got %d requests, want none", n)
	}
}

// TestPolicyDiscoverSeesReloads: in discovery mode a new tool is found and
// callable at once, and no list_changed is sent.
func TestPolicyDiscoverSeesReloads(t *testing.T) {
	e := newPolicyEnv(t)
	var changed atomic.Int32
	s := exec_(t, e, &changed, "--tool-mode", "discover")
	writeAtomic(t, filepath.Join(e.manifests, "mail.json"), policyManifest(e.fb.Path(), "mail",
		[2]string{"mail.search", annRO}, [2]string{"mail.draft", ""}))
	// The server's line, after the reload is applied (the watcher logs
	// "manifests reloaded" when it has read the files, before).
	waitFor(t, func() bool { return strings.Count(s.stderr.String(), "manifests reloaded added=") >= 1 }, "reload")
	res := callTool(t, s.cs, "tairseach_search_tools", map[string]any{"query": "draft"})
	if res.IsError || !strings.Contains(text(res), `"name":"tairseach_mail_draft"`) || strings.Contains(text(res), "mail_send") {
		t.Errorf("search after the reload: %q", text(res))
	}
	res = callTool(t, s.cs, "tairseach_call_tool", map[string]any{"name": "mail.draft", "arguments": map[string]any{"id": "d"}})
	if res.IsError || !strings.Contains(text(res), `"id":"d"`) {
		t.Errorf("calling the new tool: %q", text(res))
	}
	res = callTool(t, s.cs, "tairseach_call_tool", map[string]any{"name": "mail.send", "arguments": map[string]any{"id": "d"}})
	if !res.IsError || !strings.Contains(text(res), "unknown tool") {
		t.Errorf("calling the removed tool: %q", text(res))
	}
	time.Sleep(300 * time.Millisecond)
	if n := changed.Load(); n != 0 {
		t.Errorf("discovery mode sent %d list_changed", n)
	}
}

type goSession struct {
	cs     *mcp.ClientSession
	stderr *syncBuffer
}

// exec_ starts the bridge on e under the go-sdk client, counting
// list_changed notifications.
func exec_(t *testing.T, e policyEnv, changed *atomic.Int32, flags ...string) goSession {
	t.Helper()
	cmd := exec.Command(bridgeBin, e.args(flags...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "policy", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	})
	return goSession{cs, stderr}
}

// TestPolicyCLI: call, tools, completion and doctor use the same policy.
func TestPolicyCLI(t *testing.T) {
	e := newPolicyEnv(t)
	cleanEnv(t)
	_, stderr, code := cli("", append(e.args("--read-only"), "call", "notes.delete", "id=1")...)
	if code != 2 || !strings.Contains(stderr, "tool tairseach_notes_delete is hidden by --read-only (it is not annotated readOnlyHint); start tairseach-mcp without it") {
		t.Errorf("call of a hidden tool: exit %d, %q", code, stderr)
	}
	stdout, stderr, code := cli("", append(e.args("--read-only"), "call", "notes.read", "id=n1")...)
	if code != 0 || !strings.Contains(stdout, `"id":"n1"`) {
		t.Errorf("call of a served tool: exit %d, %q %q", code, stdout, stderr)
	}
	if n := e.fb.Requests(); n != 1 {
		t.Errorf("the backend got %d requests, want 1", n)
	}
	stdout, _, _ = cli("", append(e.args("--read-only"), "tools", "--all")...)
	if !strings.Contains(stdout, "tairseach_secrets_get") || !strings.Contains(stdout, "hidden by --read-only (it is annotated destructiveHint)") {
		t.Errorf("tools --all does not say which flag hides each tool:\n%s", stdout)
	}
	stdout, _, _ = cli("", append(e.args("--toolsets", "mail"), "__complete", "call", "")...)
	if !strings.Contains(stdout, "tairseach_mail_send") || strings.Contains(stdout, "notes") {
		t.Errorf("completion under --toolsets mail:\n%s", stdout)
	}
	stdout, _, code = cli("", append(e.args("--toolsets", "notes"), "tools", "--summary")...)
	var rows []string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 5 {
			rows = append(rows, strings.Join(f[:3], " "))
		}
	}
	if want := []string{"TOOLSET TOOLS SERVED", "mail 2 0", "notes 3 3", "secrets 1 0", "(all) 6 3"}; code != 0 || !slices.Equal(rows, want) ||
		!strings.Contains(stdout, "tools/list (--tool-mode all): 4 tools") {
		t.Errorf("tools --summary: rows %q, want %q:\n%s", rows, want, stdout)
	}
	stdout, _, _ = cli("", append(e.args(), "doctor")...)
	if !strings.Contains(stdout, "OK    tools/list (--tool-mode all): 7 tools, ") {
		t.Errorf("doctor does not show the budget:\n%s", stdout)
	}
}

// TestPolicyBudgetCorpus: tools --budget on the real manifests, in each mode.
func TestPolicyBudgetCorpus(t *testing.T) {
	requireCorpus(t)
	cleanEnv(t)
	corpus := corpusDir
	stdout, stderr, code := cli("", "--manifests", corpus, "tools", "--budget")
	if code != 0 || !strings.HasPrefix(stdout, "tools/list (--tool-mode all): 92 tools, ") ||
		!strings.Contains(stdout, "over the tool cap of Cursor (40), Windsurf (50)") || !strings.Contains(stderr, "warning: those clients show the model only the first tools") {
		t.Errorf("tools --budget on the corpus: %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, _ = cli("", "--manifests", corpus, "--tool-mode", "discover", "tools", "--budget")
	var bytes, tokens int
	if _, err := fmt.Sscanf(strings.TrimPrefix(stdout, "tools/list (--tool-mode discover, 91 tools reached through it): "), "4 tools, %d bytes, ~%d tokens", &bytes, &tokens); err != nil || bytes >= 2048 || stderr != "" {
		t.Errorf("discover budget: %v %q %q", err, stdout, stderr)
	}
	stdout, _, _ = cli("", "--manifests", corpus, "--toolsets", "contacts,calendar", "tools", "--budget")
	if !strings.HasPrefix(stdout, "tools/list (--tool-mode all): 13 tools, ") || strings.Contains(stdout, "over") {
		t.Errorf("--toolsets contacts,calendar budget: %q", stdout)
	}
}

// TestPolicyGoSDKProtocols: under each protocol the go-sdk client speaks
// (2025-11-25 and 2026-07-28), hidden tools fail closed and the discovery
// tools work.
func TestPolicyGoSDKProtocols(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			e := newPolicyEnv(t)
			pe := env{manifests: e.manifests, socket: filepath.Join(filepath.Dir(e.manifests), "none.sock")}
			cs := connect(t, pe, proto, "--read-only", "--tool-mode", "discover")
			if got := toolNames(t, cs); !slices.Equal(got, []string{"tairseach_call_tool", "tairseach_describe_tool", "tairseach_result_part", "tairseach_search_tools"}) {
				t.Errorf("tools: %v", got)
			}
			res := callTool(t, cs, "tairseach_notes_write", map[string]any{"id": "x"})
			if !res.IsError || !strings.Contains(text(res), "tool tairseach_notes_write is hidden by --read-only") {
				t.Errorf("hidden tool: %v %q", res.IsError, text(res))
			}
			res = callTool(t, cs, "tairseach_call_tool", map[string]any{"name": "notes.write", "arguments": map[string]any{"id": "x"}})
			if !res.IsError || !strings.Contains(text(res), "tool tairseach_notes_write is hidden by --read-only") {
				t.Errorf("hidden tool through call_tool: %v %q", res.IsError, text(res))
			}
			res = callTool(t, cs, "tairseach_call_tool", map[string]any{"name": "mail.search", "arguments": map[string]any{"id": "m"}})
			if res.IsError || !strings.Contains(text(res), `"id":"m"`) {
				t.Errorf("call_tool: %v %q", res.IsError, text(res))
			}
			res = callTool(t, cs, "tairseach_notes_read", map[string]any{"id": "n"})
			if res.IsError || !strings.Contains(text(res), `"id":"n"`) {
				t.Errorf("a direct call in discover mode: %v %q", res.IsError, text(res))
			}
			if n := e.fb.Requests(); n != 2 {
				t.Errorf("the backend got %d requests, want 2", n)
			}
		})
	}
}
