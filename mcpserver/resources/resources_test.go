package resources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

// contactsManifest declares a fixed resource and a template.
const contactsManifest = `{"id": "contacts",
 "tools": [
  {"name": "contacts.get", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "contacts.list", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "permissions.list", "inputSchema": {"type": "object"}}
 ],
 "implementation": {"methods": {"contacts.get": "contacts.get", "contacts.list": "contacts.list", "permissions.list": "permissions.list"}},
 "resources": [
  {"uri": "tairseach://contacts", "name": "contacts", "method": "contacts.list"},
  {"uriTemplate": "tairseach://contacts/{id}", "name": "contact", "method": "contacts.get",
   "complete": {"id": "contacts.list"}, "enum": {}}
 ]}`

func registry(t *testing.T) *manifest.Registry {
	t.Helper()
	f, err := manifest.ParseFile("contacts.json", []byte(contactsManifest), manifest.Options{Prefix: "t_"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Resources) != 2 {
		t.Fatalf("parsed resources %+v; problems %v", f.Resources, f.Problems)
	}
	return manifest.Build([]*manifest.File{f})
}

// fakeBackend records calls and answers with their params.
type fakeBackend struct {
	mu    sync.Mutex
	calls []string
}

// Do stands in for the server's pipeline, which the features' own tests do
// not exercise: it applies no rule.
func (b *fakeBackend) Do(_ context.Context, r *backend.Request) (json.RawMessage, error) {
	method, params := r.Method, r.Params
	b.mu.Lock()
	b.calls = append(b.calls, method+" "+string(params))
	b.mu.Unlock()
	if method == "contacts.list" {
		return json.RawMessage(`{"contacts":[{"id":"c-001"},{"id":"c-002"}]}`), nil
	}
	return json.RawMessage(`{"method":"` + method + `","params":` + string(params) + `}`), nil
}

type harness struct {
	srv     *mcp.Server
	set     *resources.Set
	cs      *mcp.ClientSession
	backend *fakeBackend
	updated chan string
	changed chan struct{}
}

func start(t *testing.T, logs string, hides func(manifest.Tool) string) *harness {
	t.Helper()
	h := &harness{backend: &fakeBackend{}, updated: make(chan string, 64), changed: make(chan struct{}, 64)}
	h.set = resources.New(resources.Config{LogsDir: logs, MaxBytes: 1024, Poll: 20 * time.Millisecond, Version: "test"})
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
	register := h.set.Attach(opts, backend.View{Caller: h.backend, Hides: hides})
	srv := mcp.NewServer(&mcp.Implementation{Name: "t"}, opts)
	register(srv)
	h.srv = srv
	h.set.Update(registry(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.set.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		ResourceUpdatedHandler:     func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { h.updated <- r.Params.URI },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { h.changed <- struct{}{} },
	})
	h.cs, err = client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cs.Close() })
	return h
}

func (h *harness) read(uri string) (*mcp.ReadResourceResult, error) {
	return h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
}

// notFound reports the go-sdk's resource-not-found error.
func notFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && je.Message == "Resource not found"
}

func code(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func TestLogs(t *testing.T) {
	dir := t.TempDir()
	var big bytes.Buffer
	for big.Len() < 10<<20 {
		big.WriteString("a line of the log that repeats\n")
	}
	big.WriteString("the last line\n")
	os.WriteFile(filepath.Join(dir, "proxy.log"), big.Bytes(), 0o600)
	os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2, 0xff, '\n', 3}, 0o600)
	os.WriteFile(filepath.Join(dir, "errors.jsonl.1"), []byte(`{"a":1}`+"\n"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link.log"))
	syscall.Mkfifo(filepath.Join(dir, "fifo.log"), 0o600)
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	h := start(t, dir, nil)

	list, err := h.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	for _, r := range list.Resources {
		if strings.HasPrefix(r.URI, "file://") {
			logs = append(logs, filepath.Base(r.URI)+" "+r.MIMEType)
		}
	}
	if strings.Join(logs, ",") != "blob.bin text/plain,errors.jsonl.1 application/x-ndjson,proxy.log text/plain" {
		t.Fatalf("log resources: %v", logs)
	}

	// 10 MB: the last KiB from a line boundary, saying what was left out.
	res, err := h.read(resources.FileURI(filepath.Join(dir, "proxy.log")))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contents[0]
	head, body, _ := strings.Cut(c.Text, "\n")
	if !strings.HasPrefix(head, "[the first ") || !strings.HasPrefix(body, "a line") || !strings.HasSuffix(body, "the last line\n") || len(body) > 1024 {
		t.Fatalf("tail: %q…", c.Text[:80])
	}
	if c.Meta["truncated"] != true {
		t.Fatalf("meta %v", c.Meta)
	}

	// Binary: a blob.
	res, err = h.read(resources.FileURI(filepath.Join(dir, "blob.bin")))
	if err != nil || !bytes.Equal(res.Contents[0].Blob, []byte{0, 1, 2, 0xff, '\n', 3}) || res.Contents[0].MIMEType != "application/octet-stream" {
		t.Fatalf("binary log: %+v %v", res, err)
	}

	// Not listed: symlink, FIFO, directory.
	for _, name := range []string{"link.log", "fifo.log", "sub"} {
		if _, err := h.read(resources.FileURI(filepath.Join(dir, name))); !notFound(err) {
			t.Errorf("%s: %v, want resource not found", name, err)
		}
	}

	// A listed log swapped for a symlink is refused, not followed.
	swapped := filepath.Join(dir, "errors.jsonl.1")
	os.Remove(swapped)
	os.Symlink("/etc/passwd", swapped)
	if _, err := h.read(resources.FileURI(swapped)); code(err) != jsonrpc.CodeInvalidParams {
		t.Fatalf("swapped for a symlink: %v", err)
	} else if err != nil && strings.Contains(err.Error(), "root:") {
		t.Fatal("followed the symlink")
	}
}

func TestReadTailRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink("/etc/hostname", link)
	for _, p := range []string{fifo, link, dir} {
		done := make(chan error, 1)
		go func() { _, _, _, err := resources.ReadTail(p, 100); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: read", p)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: blocked", p)
		}
	}
}

// A subscription is its session's: another session's unsubscribe of the
// same URI, which it never subscribed to, does not end it.
func TestSubscriptionsAreTheSessions(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "proxy.log")
	os.WriteFile(log, []byte("start\n"), 0o600)
	h := start(t, dir, nil)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	other, err := mcp.NewClient(&mcp.Implementation{Name: "other"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	uri := resources.FileURI(log)
	if err := h.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := other.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("more\n")
	f.Close()
	select {
	case u := <-h.updated:
		if u != uri {
			t.Fatalf("updated %s", u)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("another session's unsubscribe silenced this session's subscription")
	}
}

func TestSubscribeAndListChanged(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "proxy.log")
	os.WriteFile(log, []byte("start\n"), 0o600)
	h := start(t, dir, nil)
	ctx := context.Background()
	if _, err := h.cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: resources.FileURI(log)}); err != nil {
		t.Fatal(err)
	}
	if err := h.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "file:///nowhere"}); !notFound(err) {
		t.Fatalf("subscribing to an unknown URI: %v", err)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("more\n")
	f.Close()
	select {
	case u := <-h.updated:
		if u != resources.FileURI(log) {
			t.Fatalf("updated %s", u)
		}
	case <-time.After(time.Second):
		t.Fatal("no update within a second")
	}
	os.WriteFile(filepath.Join(dir, "errors.jsonl"), nil, 0o600)
	select {
	case <-h.changed:
	case <-time.After(time.Second):
		t.Fatal("no list_changed for a new file")
	}
}

func TestDeclared(t *testing.T) {
	h := start(t, "", nil)
	res, err := h.read("tairseach://contacts/c%2D7")
	if err != nil {
		t.Fatal(err)
	}
	if res.Contents[0].Text != `{"method":"contacts.get","params":{"id":"c-7"}}` || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("template read: %+v", res.Contents[0])
	}
	for _, uri := range []string{"tairseach://contacts/a%2Fb", "tairseach://contacts/..", "tairseach://contacts/a%3Fb", "tairseach://contacts/a%23b", "tairseach://contacts/a%0Ab", "tairseach://contacts/a/b"} {
		if _, err := h.read(uri); code(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v, want refused", uri, err)
		}
	}
	h.backend.mu.Lock()
	n := len(h.backend.calls)
	h.backend.mu.Unlock()
	if n != 1 {
		t.Fatalf("escaping variables reached the backend: %d calls", n)
	}
	if _, err := h.read("tairseach://unknown"); !notFound(err) {
		t.Fatalf("unknown URI: %v", err)
	}
	if res, err := h.read("tairseach://contacts"); err != nil || !strings.Contains(res.Contents[0].Text, "c-001") {
		t.Fatalf("fixed declared resource: %v", err)
	}
	if res, err := h.read(resources.PermissionsURI); err != nil || !strings.Contains(res.Contents[0].Text, "permissions.list") {
		t.Fatalf("permissions: %v", err)
	}
	cr, err := h.cs.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tairseach://contacts/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "c"}})
	if err != nil || strings.Join(cr.Completion.Values, ",") != "c-001,c-002" {
		t.Fatalf("completion: %+v %v", cr, err)
	}
}

func TestPolicyHides(t *testing.T) {
	hides := func(tl manifest.Tool) string {
		if tl.Method == "contacts.get" || tl.Method == "permissions.list" {
			return "hidden by --tools"
		}
		return ""
	}
	h := start(t, "", hides)
	ts, err := h.cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(ts.ResourceTemplates) != 0 {
		t.Fatalf("templates of a hidden method are listed: %+v %v", ts, err)
	}
	for _, uri := range []string{"tairseach://contacts/c-001", resources.PermissionsURI, resources.ManifestPrefix + "contacts"} {
		if _, err := h.read(uri); !notFound(err) {
			t.Errorf("%s: %v, want not found", uri, err)
		}
	}
	res, err := h.read(resources.StatusURI)
	if err != nil {
		t.Fatal(err)
	}
	var st resources.Status
	json.Unmarshal([]byte(res.Contents[0].Text), &st)
	if st.Hidden["t_contacts_get"] != "hidden by --tools" || len(st.Served) != 1 || st.Version != "test" {
		t.Fatalf("status: %s", res.Contents[0].Text)
	}
}

// A declared resource is as visible as the tools of its method in the
// manifest that declares it: listed and read exactly when one of them is
// served, whatever another manifest serves of the same method.
func TestResourceAsVisibleAsItsTools(t *testing.T) {
	parse := func(name, text string) *manifest.File {
		f, err := manifest.ParseFile(name, []byte(text), manifest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	reg := manifest.Build([]*manifest.File{
		parse("a.json", `{"id": "a", "tools": [{"name": "a.list", "inputSchema": {"type": "object"}}],
		 "implementation": {"methods": {"a.list": "x.list"}}}`),
		parse("b.json", `{"id": "b", "tools": [{"name": "b.list", "inputSchema": {"type": "object"}}],
		 "implementation": {"methods": {"b.list": "x.list"}},
		 "resources": [{"uri": "tairseach://b", "name": "b", "method": "x.list"},
		  {"uriTemplate": "tairseach://b/{id}", "name": "b-one", "method": "x.list"}]}`),
	})
	if len(reg.Resources) != 2 {
		t.Fatalf("declared %+v", reg.Resources)
	}
	for _, c := range []struct {
		hidden  string // the manifest whose tools are hidden
		visible bool
	}{{"", true}, {"a.json", true}, {"b.json", false}} {
		t.Run("hidden="+c.hidden, func(t *testing.T) {
			h := start(t, "", func(tl manifest.Tool) string {
				if tl.File == c.hidden {
					return "hidden by --tools"
				}
				return ""
			})
			h.set.Update(reg)
			ctx := context.Background()
			rs, err := h.cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := slices.ContainsFunc(rs.Resources, func(r *mcp.Resource) bool { return r.URI == "tairseach://b" })
			ts, err := h.cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if listed != c.visible || (len(ts.ResourceTemplates) == 1) != c.visible {
				t.Fatalf("listed %v and %d templates, want visible %v", listed, len(ts.ResourceTemplates), c.visible)
			}
			for _, uri := range []string{"tairseach://b", "tairseach://b/1"} {
				_, err := h.read(uri)
				if c.visible && err != nil {
					t.Errorf("%s: %v", uri, err)
				}
				if !c.visible && !notFound(err) {
					t.Errorf("%s: %v, want not found as it is not listed", uri, err)
				}
			}
		})
	}
}

func TestOtherUsersLogRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a file of another user needs root")
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "theirs.log")
	os.WriteFile(theirs, []byte("secret\n"), 0o644)
	if err := os.Chown(theirs, 1, 1); err != nil {
		t.Fatal(err)
	}
	h := start(t, dir, nil)
	if _, err := h.read(resources.FileURI(theirs)); !notFound(err) {
		t.Fatalf("another user's log is served: %v", err)
	}
	if _, _, _, err := resources.ReadTail(theirs, 100); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Fatalf("ReadTail of another user's file: %v", err)
	}
}

func TestReloadReroutesAndNotifies(t *testing.T) {
	h := start(t, "", nil)
	ctx := context.Background()
	if _, err := h.cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Same template, another method: reads follow the reload, silently.
	f, err := manifest.ParseFile("contacts.json", []byte(strings.Replace(contactsManifest,
		`"name": "contact", "method": "contacts.get"`, `"name": "contact", "method": "contacts.list"`, 1)), manifest.Options{Prefix: "t_"})
	if err != nil || len(f.Resources) != 2 {
		t.Fatalf("%v %+v", err, f)
	}
	h.set.Update(manifest.Build([]*manifest.File{f}))
	if res, err := h.read("tairseach://contacts/c-1"); err != nil || !strings.Contains(res.Contents[0].Text, "c-002") {
		t.Fatalf("after the reload the template still calls the old method: %v", err)
	}
	// The resources gone: list_changed.
	h.set.Update(&manifest.Registry{})
	select {
	case <-h.changed:
	case <-time.After(time.Second):
		t.Fatal("no list_changed when the declared resources went away")
	}
	if _, err := h.read("tairseach://contacts/c-1"); !notFound(err) {
		t.Fatalf("a removed template is still served: %v", err)
	}
}

// A log directory of many files gives at most MaxLogFiles resources, the
// most recently written.
func TestManyLogFilesBounded(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range resources.MaxLogFiles + 40 {
		p := filepath.Join(dir, fmt.Sprintf("f%03d.log", i))
		os.WriteFile(p, []byte("x\n"), 0o600)
		if i < 40 {
			os.Chtimes(p, old, old)
		}
	}
	h := start(t, dir, nil)
	res, err := h.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := 0
	for _, r := range res.Resources {
		if strings.HasPrefix(r.URI, "file://") {
			logs++
			if strings.Contains(r.URI, "/f000.log") {
				t.Fatalf("an old file is served over newer ones: %s", r.URI)
			}
		}
	}
	if logs != resources.MaxLogFiles {
		t.Fatalf("%d log resources, want %d", logs, resources.MaxLogFiles)
	}
}

// --resource-max-bytes counts a log's text as it is written: a log of '<'
// (six bytes each, escaped) or of binary (base64) returns no more than the
// limit on the wire.
func TestLogLimitCountsTheWrittenBytes(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "html.log")
	os.WriteFile(text, bytes.Repeat([]byte(strings.Repeat("<", 63)+"\n"), 64), 0o600)
	bin := filepath.Join(dir, "bin.log")
	os.WriteFile(bin, bytes.Repeat([]byte{0, 1, 2, 0xff}, 1024), 0o600)
	h := start(t, dir, nil)
	for _, p := range []string{text, bin} {
		res, err := h.read(resources.FileURI(p))
		if err != nil {
			t.Fatal(err)
		}
		c := res.Contents[0]
		var written []byte
		if c.Blob != nil {
			written, _ = json.Marshal(c.Blob)
		} else {
			_, body, _ := strings.Cut(c.Text, "]\n") // after the note of what is left out
			written, _ = json.Marshal(body)
		}
		if len(written) > 1024 || len(written) < 512 || c.Meta["truncated"] != true {
			t.Fatalf("%s: %d bytes written for a limit of 1024, _meta %v", filepath.Base(p), len(written), c.Meta)
		}
	}
}
