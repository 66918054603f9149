package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
)

// grantsManifest maps the permission methods and a tool of each kind:
// contacts.list needs contacts, screen.capture screen_recording, server.status
// nothing.
const grantsManifest = `{"id": "mac", "tools": [
  {"name": "contacts.list", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}, "requires": {"permissions": [{"name": "contacts"}]}},
  {"name": "screen.capture", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}, "requires": {"permissions": [{"name": "screen_recording"}]}},
  {"name": "server.status", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "permissions.list", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "permissions.request", "inputSchema": {"type": "object", "properties": {"permission": {"type": "string"}}, "required": ["permission"]}}
 ],
 "implementation": {"methods": {"contacts.list": "contacts.list", "screen.capture": "screen.capture", "server.status": "server.status",
   "permissions.list": "permissions.list", "permissions.request": "permissions.request"}}}`

// startGrantsDemo runs the demo backend with grants, in-process.
func startGrantsDemo(t *testing.T, grants map[string]string) (*demo.Server, string) {
	return startDemoWith(t, demo.Options{Grants: grants})
}

// connectAsking connects a 2025-11-25 client to srv in memory whose user
// answers every question with answer.
func connectAsking(t *testing.T, srv *Server, answer func(*mcp.ElicitRequest) *mcp.ElicitResult) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(r), nil },
	}).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// trackGrants runs srv's tracker of the grants; the func it returns stops
// it and waits, before the server is closed.
func trackGrants(srv *Server) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	tracked := make(chan struct{})
	go func() { srv.TrackPermissions(ctx); close(tracked) }()
	return func() { cancel(); <-tracked }
}

// listedNames lists the tools of cs, by name.
func listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// Tools whose macOS permission is not granted are not offered; a grant
// changed in the app is seen at the next read, and the client is told the
// list changed; a call by name says which permission and how to grant it.
func TestUngrantedToolsAreNotOffered(t *testing.T) {
	d, sock := startGrantsDemo(t, map[string]string{"screen_recording": "denied"})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true, PermissionsInterval: 50 * time.Millisecond},
		registryOf(t, grantsManifest))
	defer srv.Close()
	defer trackGrants(srv)()
	ctx := context.Background()

	var changed atomic.Int32
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	listed := func() string { return strings.Join(listedNames(t, cs), ",") }
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("screen.capture to be left out", func() bool { return !strings.Contains(listed(), "screen_capture") })
	if got := listed(); !strings.Contains(got, "tairseach_contacts_list") {
		t.Fatalf("tools listed: %s", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_screen_capture"})
	if err != nil || !res.IsError || !strings.Contains(check.ResultText(res), `"screen_recording", which is denied`) ||
		!strings.Contains(check.ResultText(res), "Screen") {
		t.Fatalf("a call of a tool left out for a permission: %v %q", err, check.ResultText(res))
	}
	if !strings.Contains(unavailable(srv.base.routes.Load()), `"screen_recording" (denied): 1 tool`) {
		t.Fatalf("instructions: %q", unavailable(srv.base.routes.Load()))
	}

	// (A list_changed for leaving it out reached this session only if the
	// grants were read after it connected.)
	before := changed.Load()
	if err := d.SetPermission("screen_recording", "granted"); err != nil {
		t.Fatal(err)
	}
	waitFor("list_changed after the grant", func() bool { return changed.Load() > before })
	waitFor("the tool to be listed once granted", func() bool { return strings.Contains(listed(), "tairseach_screen_capture") })
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_screen_capture"})
	if err != nil || res.IsError {
		t.Fatalf("a call once granted: %v %q", err, check.ResultText(res))
	}
}

// A client that lists the tools as it connects, before the grants were
// first read, is not offered what cannot work: the list waits for the read.
func TestFirstListWaitsForGrants(t *testing.T) {
	// Every answer of the app takes 300 ms, the first permissions.list too.
	_, sock := startDemoWith(t, demo.Options{Grants: map[string]string{"screen_recording": "denied"}, Delay: 300 * time.Millisecond})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true}, registryOf(t, grantsManifest))
	defer srv.Close()
	defer trackGrants(srv)()
	ctx := context.Background()

	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	start := time.Now()
	names := listedNames(t, cs)
	if slices.Contains(names, "tairseach_screen_capture") || !slices.Contains(names, "tairseach_contacts_list") {
		t.Errorf("the first tools/list: %v; want contacts_list and not screen_capture", names)
	}
	if d := time.Since(start); d > pipeline.GrantsWait {
		t.Errorf("the first tools/list took %s, more than the wait's bound %s", d, pipeline.GrantsWait)
	}
}

// A tool whose permission is not determined: a client that can ask its
// user is asked whether Tairseach should ask macOS now; on accept,
// permissions.request reaches the socket and the grants are read again.
func TestNotDeterminedAsksTheUser(t *testing.T) {
	d, sock := startGrantsDemo(t, map[string]string{"contacts": "not_determined"})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true}, registryOf(t, grantsManifest))
	defer srv.Close()
	ctx := context.Background()
	if _, err := srv.ReadPermissions(ctx); err != nil {
		t.Fatal(err)
	}
	var asked string
	cs := connectAsking(t, srv, func(r *mcp.ElicitRequest) *mcp.ElicitResult {
		asked = r.Params.Message
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ask": true}}
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_contacts_list"})
	if err != nil || !strings.Contains(asked, "contacts") || !strings.Contains(check.ResultText(res), "macOS is asking the user") {
		t.Fatalf("asked %q; result %v %q", asked, err, check.ResultText(res))
	}
	if n := d.PermissionRequests("contacts"); n != 1 {
		t.Fatalf("permissions.request reached the socket %d times, want once", n)
	}
}

// In discovery mode the model calls tools through call_tool: a tool left
// out for a permission not determined asks the user there too, by its MCP
// name or its manifest name, and the user's answer holds on that path.
func TestNotDeterminedAsksThroughCallTool(t *testing.T) {
	for _, name := range []string{"tairseach_contacts_list", "contacts.list"} {
		t.Run(name, func(t *testing.T) {
			d, sock := startGrantsDemo(t, map[string]string{"contacts": "not_determined"})
			srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true, ToolMode: ToolModeDiscover, Prefix: "tairseach_"},
				registryOf(t, grantsManifest))
			defer srv.Close()
			ctx := context.Background()
			if _, err := srv.ReadPermissions(ctx); err != nil {
				t.Fatal(err)
			}
			asked := 0
			cs := connectAsking(t, srv, func(*mcp.ElicitRequest) *mcp.ElicitResult {
				asked++
				return &mcp.ElicitResult{Action: "decline"}
			})
			args := map[string]any{"name": name, "arguments": map[string]any{}}
			for i := range 2 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_call_tool", Arguments: args})
				if err != nil || !res.IsError || !strings.Contains(check.ResultText(res), "declined") {
					t.Fatalf("call %d: %v %q", i, err, check.ResultText(res))
				}
			}
			if asked != 1 {
				t.Errorf("the user was asked %d times, want once", asked)
			}
			if n := d.PermissionRequests("contacts"); n != 0 {
				t.Errorf("permissions.request reached the socket %d times after a decline", n)
			}
		})
	}
}

// The server's own reads of the grants are nobody's request: they are not
// in the audit log. The permissions.request the user agreed to is.
func TestGrantsReadsAreNotAudited(t *testing.T) {
	_, sock := startGrantsDemo(t, map[string]string{"contacts": "not_determined"})
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := observe.OpenAudit(path, observe.AuditOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true, Audit: a}, registryOf(t, grantsManifest))
	defer srv.Close()
	ctx := context.Background()
	for range 3 {
		if _, err := srv.ReadPermissions(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cs := connectAsking(t, srv, func(*mcp.ElicitRequest) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ask": true}}
	})
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_contacts_list"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var records []string
	for _, l := range auditLines(t, path) {
		records = append(records, fmt.Sprintf("%v %v", l["kind"], cmp.Or(l["method"], l["tool"])))
	}
	// The call itself reached no method: it was answered with the question.
	if got := strings.Join(records, ","); got != "permissions permissions.request,tool tairseach_contacts_list" {
		t.Errorf("audited: %s; want the request the user agreed to and the call, not the reads", got)
	}
}

// Off, every tool is offered, as before.
func TestHideUngrantedOff(t *testing.T) {
	_, sock := startGrantsDemo(t, map[string]string{"screen_recording": "denied"})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop()}, registryOf(t, grantsManifest))
	defer srv.Close()
	if _, err := srv.ReadPermissions(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, hidden := srv.Hidden("tairseach_screen_capture"); hidden {
		t.Fatal("left out with HideUngranted off")
	}
}

// slowGrantsManifest is grantsManifest with demo.slow, a call that holds
// its connection as long as it is told.
var slowGrantsManifest = strings.Replace(strings.Replace(grantsManifest,
	`{"name": "server.status",`, `{"name": "demo.slow", "inputSchema": {"type": "object"}}, {"name": "server.status",`, 1),
	`"server.status": "server.status",`, `"server.status": "server.status", "demo.slow": "demo.slow",`, 1)

// Reads of the grants are coalesced and bounded: however many refusals
// for a permission and new header selections ask for one, no read starts
// within the settle period of the last, and a flapping permission tells a
// client of no change until then.
func TestGrantsReadsAreBounded(t *testing.T) {
	d, sock := startGrantsDemo(t, nil)
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true,
		PermissionsInterval: time.Hour, PermissionsSettle: time.Hour}, registryOf(t, grantsManifest))
	defer srv.Close()
	defer trackGrants(srv)()
	var changed atomic.Int32
	cs := session(t, srv, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	})
	<-srv.grants.FirstRead()
	if n := d.PermissionLists(); n != 1 {
		t.Fatalf("%d reads at start, want 1", n)
	}
	ctx := context.Background()
	for i := range 200 {
		// The permission flaps in the app: every other call is refused
		// for it (-32001), which asks for a read.
		status := []string{demo.Denied, demo.Granted}[i%2]
		if err := d.SetPermission("contacts", status); err != nil {
			t.Fatal(err)
		}
		// (A grants change may remove the tool from the go-sdk between
		// the checks of a call: an error, not what is counted here.)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_contacts_list"})
		if err == nil && status == demo.Denied && !res.IsError {
			t.Fatalf("call %d with contacts denied: %q", i, check.ResultText(res))
		}
		// A new header selection each time.
		c, err := srv.sel.use(policy.Policy{Tools: []string{"tairseach_contacts_list", fmt.Sprintf("x%d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		c.busy.Add(-1)
	}
	time.Sleep(100 * time.Millisecond) // a read asked for would have started by now
	if n := d.PermissionLists(); n != 1 {
		t.Errorf("%d reads of permissions.list after 200 refusals and 200 selections within the settle period, want 1", n)
	}
	if n := changed.Load(); n != 0 {
		t.Errorf("%d list_changed within the settle period, want 0", n)
	}
}

// With a short settle period, a flapping permission and a refusal at every
// call give at most one read per period, and each read at most one
// list_changed.
func TestGrantsFlappingSettles(t *testing.T) {
	d, sock := startGrantsDemo(t, nil)
	const settle = 50 * time.Millisecond
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true,
		PermissionsInterval: time.Hour, PermissionsSettle: settle}, registryOf(t, grantsManifest))
	defer srv.Close()
	defer trackGrants(srv)()
	var changed atomic.Int32
	cs := session(t, srv, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	})
	<-srv.grants.FirstRead()
	start := time.Now()
	for i := range 300 {
		if err := d.SetPermission("contacts", []string{demo.Denied, demo.Granted}[i%2]); err != nil {
			t.Fatal(err)
		}
		// Called by name, listed or not: a refusal of the app's asks for
		// a read; one left out by the grants reaches no socket.
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_contacts_list"})
	}
	elapsed := time.Since(start)
	time.Sleep(2 * settle) // the read asked for last
	// The first read, then at most one per settle period from it, the
	// last asked for in the wait after the loop.
	reads, most := d.PermissionLists(), 4+int(elapsed/settle)
	if reads > most {
		t.Errorf("%d reads in %s with a settle period of %s, want at most %d", reads, elapsed.Round(time.Millisecond), settle, most)
	}
	if n := int(changed.Load()); n > reads-1 {
		t.Errorf("%d list_changed for %d reads after the first", n, reads-1)
	}
	t.Logf("%d calls, %d reads, %d list_changed in %s", 300, reads, changed.Load(), elapsed.Round(time.Millisecond))
}

// A read of the grants has its own way to the socket: with every
// connection of the pool and every slot of the calls in flight busy, it
// is answered. When it fails, the grants read before are kept: a tool
// denied is not offered again.
func TestGrantsReadNotStarved(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := demo.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	d := demo.New(zerolog.Nop(), demo.Options{Grants: map[string]string{"screen_recording": "denied"}})
	appCtx, quit := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = d.Serve(appCtx, ln); close(served) }()
	defer func() { quit(); <-served }()
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true, PoolSize: 1, MaxInFlight: 1,
		PermissionsInterval: time.Hour, PermissionsSettle: time.Millisecond}, registryOf(t, slowGrantsManifest))
	defer srv.Close()
	ctx := context.Background()
	if _, err := srv.ReadPermissions(ctx); err != nil {
		t.Fatal(err)
	}
	slow := make(chan struct{})
	for range 3 {
		go func() { srv.Call(ctx, "tairseach_demo_slow", json.RawMessage(`{"ms":3000}`)); slow <- struct{}{} }()
	}
	time.Sleep(50 * time.Millisecond) // one holds the connection, two wait for it
	if err := d.SetPermission("contacts", demo.Denied); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	g, err := srv.ReadPermissions(rctx)
	if err != nil || g.Status("contacts") != "denied" {
		t.Fatalf("a read with the pool busy: %v, %v", g, err)
	}
	if _, hidden := srv.Hidden("tairseach_contacts_list"); !hidden {
		t.Error("contacts.list offered once denied")
	}
	select {
	case <-slow:
		t.Fatal("a slow call ended before the read: the pool was not busy")
	default:
	}

	// The app quits: the read fails, what was read is kept.
	quit()
	<-served
	if _, err := srv.ReadPermissions(ctx); err == nil {
		t.Fatal("a read from an app gone did not fail")
	}
	for _, name := range []string{"tairseach_contacts_list", "tairseach_screen_capture"} {
		if _, hidden := srv.Hidden(name); !hidden {
			t.Errorf("%s offered again once a read failed", name)
		}
	}
	if st := srv.grants.State(); st.Err == nil || st.ReadAt.IsZero() {
		t.Errorf("state after a failed read: %+v", st)
	}
}

// The first answer knows the grants: a client that initializes at once is
// told which permissions leave tools out, though the app answers the
// first read slowly; a 2026-07-28 client's server/discover too.
func TestInitializeWaitsForGrants(t *testing.T) {
	_, sock := startDemoWith(t, demo.Options{Grants: map[string]string{"screen_recording": "denied"}, Delay: 300 * time.Millisecond})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true}, registryOf(t, grantsManifest))
	defer srv.Close()
	defer trackGrants(srv)()
	cs := session(t, srv, nil)
	if got := cs.InitializeResult().Instructions; !strings.Contains(got, `"screen_recording" (denied): 1 tool`) {
		t.Errorf("initialize's instructions do not name the permission missing: %q", got)
	}
}

// In discover mode, a search whose words match tools left out for a
// permission names them and the permission, rather than "no tool matches".
func TestDiscoverSearchNamesToolsLeftOut(t *testing.T) {
	_, sock := startGrantsDemo(t, map[string]string{"screen_recording": "denied"})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true, ToolMode: ToolModeDiscover, Prefix: "tairseach_"}, registryOf(t, grantsManifest))
	defer srv.Close()
	if _, err := srv.ReadPermissions(context.Background()); err != nil {
		t.Fatal(err)
	}
	search := func(query string) (out struct {
		Tools   []struct{ Name string }
		LeftOut []struct{ Name, Permission, Status string } `json:"left_out"`
		Next    string
	}) {
		t.Helper()
		res := srv.Call(context.Background(), "tairseach_search_tools", json.RawMessage(`{"query":"`+query+`"}`))
		if res == nil || res.IsError {
			t.Fatalf("search %q: %q", query, check.ResultText(res))
		}
		if err := json.Unmarshal([]byte(check.ResultText(res)), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := search("screen capture")
	if len(got.Tools) != 0 || len(got.LeftOut) != 1 || got.LeftOut[0].Name != "tairseach_screen_capture" ||
		got.LeftOut[0].Permission != "screen_recording" || got.LeftOut[0].Status != "denied" {
		t.Fatalf("search for a tool left out: %+v", got)
	}
	if strings.Contains(got.Next, "no tool matches") || !strings.Contains(got.Next, "left out") {
		t.Errorf("next: %q", got.Next)
	}
	if got := search("contacts"); len(got.Tools) != 1 || len(got.LeftOut) != 0 {
		t.Errorf("search for a tool served: %+v", got)
	}
	if got := search("nothing-like-it"); !strings.Contains(got.Next, "no tool matches") || len(got.LeftOut) != 0 {
		t.Errorf("search for no tool: %+v", got)
	}
}

// hidesFeature records, as it is attached to a go-sdk server, whether the
// view it is given hides the tool named tool.
type hidesFeature struct {
	tool   manifest.Tool
	hidden []string // per Attach: the view's reason, "" when served
}

func (f *hidesFeature) Attach(_ *mcp.ServerOptions, v backend.View) func(*mcp.Server) {
	f.hidden = append(f.hidden, v.Hides(f.tool))
	return func(*mcp.Server) {}
}

func (f *hidesFeature) Detach(*mcp.Server)        {}
func (f *hidesFeature) Resync()                   {}
func (f *hidesFeature) Update(*manifest.Registry) {}

// A header selection's resources and prompts leave out what needs a
// permission not granted from their first sync: the policy server of a new
// selection reads the server's grants as it is attached. (A selection
// made as a second server had grants of its own, never read, at that
// moment: its lists showed a denied tool's resources until the next
// change.)
func TestSelectionSeesTheGrantsFromTheStart(t *testing.T) {
	_, sock := startGrantsDemo(t, map[string]string{"screen_recording": "denied"})
	reg := registryOf(t, grantsManifest)
	capture, ok := reg.Lookup("tairseach_screen_capture")
	if !ok {
		t.Fatal("no tairseach_screen_capture in the manifest")
	}
	f := &hidesFeature{tool: capture}
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), HideUngranted: true, Features: []Feature{f}}, reg)
	defer srv.Close()
	if _, err := srv.ReadPermissions(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := srv.sel.use(policy.Policy{Toolsets: []string{"mac"}})
	if err != nil {
		t.Fatal(err)
	}
	c.busy.Add(-1)
	if len(f.hidden) != 2 {
		t.Fatalf("attached %d times, want the base policy server and the selection's", len(f.hidden))
	}
	if got := f.hidden[1]; !strings.Contains(got, "screen_recording") {
		t.Errorf("the selection's view serves a tool whose permission is denied: reason %q", got)
	}
}
