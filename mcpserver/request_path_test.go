package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
	"github.com/geilt/tairseach-mcp/mcpserver/resources"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// notesManifest declares resources, a template and a prompt whose methods
// are tools with rules of their own: notes.purge is destructive (asked
// under --confirm destructive), notes.get's id has a pattern, notes.secret
// is a read-only method the tests hide with --exclude-tools, notes.big
// replies with more than the size limit.
const notesManifest = `{"id": "notes",
 "tools": [
  {"name": "notes.get", "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^n-[0-9]+$"}}, "required": ["id"], "additionalProperties": false}, "annotations": {"readOnlyHint": true}},
  {"name": "notes.search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}, "annotations": {"readOnlyHint": true}},
  {"name": "notes.secret", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "notes.purge", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}},
  {"name": "notes.big", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
 ],
 "implementation": {"methods": {"notes.get": "notes.get", "notes.search": "notes.search", "notes.secret": "notes.secret", "notes.purge": "notes.purge", "notes.big": "notes.big"}},
 "resources": [
  {"uri": "tairseach://notes/purge", "name": "purge", "method": "notes.purge"},
  {"uri": "tairseach://notes/big", "name": "big", "method": "notes.big"},
  {"uri": "tairseach://notes/secret", "name": "secret", "method": "notes.secret"},
  {"uriTemplate": "tairseach://notes/{id}", "name": "note", "method": "notes.get", "complete": {"id": "notes.search"}},
  {"uriTemplate": "tairseach://secret/{id}", "name": "secret-note", "method": "notes.get", "complete": {"id": "notes.secret"}}
 ],
 "prompts": [
  {"name": "find-note", "template": "find {{id}}", "arguments": [{"name": "id", "complete": "notes.secret"}]}
 ]}`

// recorder is a backend that records the methods called and answers each
// with a small reply (notes.big: 64 KiB).
type recorder struct {
	path  string
	mu    sync.Mutex
	calls []string
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	r.path = fakeBackend(t, r.answer)
	return r
}

func (r *recorder) answer(method string, params json.RawMessage) string {
	r.mu.Lock()
	r.calls = append(r.calls, method+" "+string(params))
	r.mu.Unlock()
	if method == "notes.big" {
		return `"result":{"text":"` + strings.Repeat("x", 64<<10) + `"}`
	}
	return `"result":{"notes":[{"id":"n-1"},{"id":"n-2"}]}`
}

// called returns the methods called so far.
func (r *recorder) called() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		out = append(out, strings.SplitN(c, " ", 2)[0])
	}
	return out
}

// kindEnv is a server with resources and prompts on one path.
type kindEnv struct {
	t       *testing.T
	path    reqPath
	backend *recorder
	srv     *Server
	audit   string
	http    *httptest.Server
	header  http.Header // a header selection, on HTTP paths
}

// newKindEnv starts a server with every rule on: --exclude-tools
// notes.secret, --confirm destructive, a 16 KiB result limit, the audit log.
func newKindEnv(t *testing.T, rd reqPath, header http.Header) *kindEnv {
	e := &kindEnv{t: t, path: rd, backend: startRecorder(t), audit: filepath.Join(t.TempDir(), "audit.jsonl"), header: header}
	a, err := observe.OpenAudit(e.audit, observe.AuditOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f, err := manifest.ParseFile("notes.json", []byte(notesManifest), manifest.Options{Prefix: "t_"})
	if err != nil {
		t.Fatal(err)
	}
	reg := manifest.Build([]*manifest.File{f})
	res := resources.New(resources.Config{Logger: zerolog.Nop()})
	ps := prompts.New(prompts.Config{Logger: zerolog.Nop()})
	cfg := Config{
		DefaultSocket:  e.backend.path,
		Logger:         zerolog.Nop(),
		Policy:         policy.Policy{ExcludeTools: []string{"notes.secret"}, Confirm: []string{"destructive"}},
		MaxResultBytes: 16 << 10,
		Prefix:         "t_",
		Audit:          a,
		Features:       []Feature{res, ps},
	}
	res.Update(reg)
	ps.Update(reg)
	e.srv = New(cfg, reg)
	t.Cleanup(func() { e.srv.Close() })
	if rd.transport == "http" {
		e.http = httptest.NewServer(e.srv.NewHTTPHandler(streamable.Config{Stateless: rd.stateless}))
		t.Cleanup(func() {
			e.http.CloseClientConnections()
			e.http.Close()
		})
	}
	return e
}

// headerTransport adds a header selection to every request.
type headerTransport struct{ h http.Header }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (e *kindEnv) connect(elicit func() *mcp.ElicitResult) *mcp.ClientSession {
	re := &pathEnv{t: e.t, path: e.path, srv: e.srv, http: e.http}
	if e.path.transport != "http" || e.header == nil {
		return re.connect(elicit, nil)
	}
	opts := &mcp.ClientOptions{}
	if elicit != nil {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return elicit(), nil }
	}
	tr := &mcp.StreamableClientTransport{Endpoint: e.http.URL + streamable.MCPPath, HTTPClient: &http.Client{Transport: headerTransport{e.header}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "road-client", Version: "1"}, opts).Connect(context.Background(), tr,
		&mcp.ClientSessionOptions{ProtocolVersion: e.path.protocol})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func (e *kindEnv) auditLines() []map[string]any {
	e.t.Helper()
	return auditLines(e.t, e.audit)
}

// kindPaths are the paths a resource read or a completion takes: the
// go-sdk serves them on every transport (stdio's direct path serves tool
// calls only).
func kindPaths() []reqPath {
	var out []reqPath
	for _, r := range reqPaths() {
		if r.discover == "" && !(r.transport == "stdio" && !r.noDirect) {
			out = append(out, r)
		}
	}
	return out
}

// Every request that reaches the backend meets the rules of a tool call,
// on every path: the policy, the inputSchema, confirmation, the size
// limit, the audit log with its kind. Each subtest failed before resource
// reads and completions took the pipeline.
func TestEveryKindTakesThePipeline(t *testing.T) {
	for _, rd := range kindPaths() {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()

			t.Run("confirmation", func(t *testing.T) {
				e := newKindEnv(t, rd, nil)
				asked := 0
				cs := e.connect(func() *mcp.ElicitResult {
					asked++
					return &mcp.ElicitResult{Action: "decline"}
				})
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/purge"})
				if err == nil || slices.Contains(e.backend.called(), "notes.purge") {
					t.Fatalf("a destructive method read as a resource was not refused: err %v, calls %v", err, e.backend.called())
				}
				if canElicit := rd.protocol < stdio.NewProtocol && !rd.stateless; canElicit && asked != 1 {
					t.Fatalf("the user was asked %d times, want once", asked)
				}
				lines := e.auditLines()
				if len(lines) != 1 || lines[0]["kind"] != "resource" || lines[0]["tool"] != "t_notes_purge" || lines[0]["target"] != "tairseach://notes/purge" {
					t.Fatalf("audit: %v", lines)
				}
			})

			t.Run("policy", func(t *testing.T) {
				e := newKindEnv(t, rd, nil)
				cs := e.connect(nil)
				for _, ref := range []*mcp.CompleteReference{
					{Type: "ref/resource", URI: "tairseach://secret/{id}"},
					{Type: "ref/prompt", Name: "find-note"},
				} {
					res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "n"}})
					if err != nil || len(res.Completion.Values) != 0 {
						t.Fatalf("completion of %v from a hidden method: %v, %v", ref, res, err)
					}
				}
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/secret"}); err == nil {
					t.Fatal("a resource of a hidden method was read")
				}
				if slices.Contains(e.backend.called(), "notes.secret") {
					t.Fatalf("a hidden method reached the socket: %v", e.backend.called())
				}
				// The template a visible method serves still completes.
				res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tairseach://notes/{id}"},
					Argument: mcp.CompleteParamsArgument{Name: "id", Value: "n"}})
				if err != nil || strings.Join(res.Completion.Values, ",") != "n-1,n-2" {
					t.Fatalf("completion from a served method: %v, %v", res, err)
				}
				if lines := e.auditLines(); len(lines) == 0 || lines[len(lines)-1]["kind"] != "completion" {
					t.Fatalf("audit: %v", lines)
				}
			})

			t.Run("arguments", func(t *testing.T) {
				e := newKindEnv(t, rd, nil)
				cs := e.connect(nil)
				if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/bad-id"}); err == nil ||
					!strings.Contains(err.Error(), "pattern") {
					t.Fatalf("a template variable the method's inputSchema refuses: %v", err)
				}
				if len(e.backend.called()) != 0 {
					t.Fatalf("invalid params reached the socket: %v", e.backend.called())
				}
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/n-7"})
				if err != nil || !strings.Contains(res.Contents[0].Text, "n-1") {
					t.Fatalf("a valid template read: %v, %v", res, err)
				}
				if lines := e.auditLines(); len(lines) != 2 || lines[0]["outcome"] != "invalid_arguments" || lines[1]["kind"] != "template" {
					t.Fatalf("audit: %v", lines)
				}
			})

			t.Run("size", func(t *testing.T) {
				e := newKindEnv(t, rd, nil)
				cs := e.connect(nil)
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/big"})
				if err == nil || !strings.Contains(err.Error(), "--max-result-bytes") {
					t.Fatalf("a reply over --max-result-bytes read as a resource: %v", err)
				}
			})
		})
	}
}

// A header selection is the policy of its session's resources,
// subscriptions and completions too.
func TestSelectionHoldsForEveryKind(t *testing.T) {
	for _, rd := range kindPaths() {
		if rd.transport != "http" {
			continue
		}
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newKindEnv(t, rd, http.Header{policy.HeaderTools: {"notes.get"}})
			cs := e.connect(nil)
			res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tairseach://notes/{id}"},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "n"}})
			if err != nil || len(res.Completion.Values) != 0 || slices.Contains(e.backend.called(), "notes.search") {
				t.Fatalf("a session narrowed to notes.get completed from notes.search: %v, %v, calls %v", res, err, e.backend.called())
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://notes/big"}); err == nil {
				t.Fatal("a session narrowed to notes.get read a resource of notes.big")
			}
			if !rd.stateless && rd.protocol < stdio.NewProtocol {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "tairseach://notes/big"}); err == nil {
					t.Fatal("a session subscribed to a resource it cannot read")
				}
			}
		})
	}
}
