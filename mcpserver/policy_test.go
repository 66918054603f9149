package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// rpc posts one JSON-RPC message to /mcp with header, in session (when
// not ""); it returns the status, the session the response names, and the
// body.
func rpc(t *testing.T, url, session, body string, header map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

const (
	initializeBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsListBody   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	pingBody        = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
)

// TestSelectionsCannotLockOut: each distinct header selection costs a
// go-sdk server, at most MaxSelections. Idle sessions of as many
// selections do not lock anyone out: a new selection, of a session or of
// a 2026-07-28 request, takes the place of the one used least recently,
// whose session is closed (404 at its next request). A session's own
// requests never take a place, whatever their headers. Only when every
// selection has a request running is a new one refused, with 503 and
// Retry-After.
func TestSelectionsCannotLockOut(t *testing.T) {
	srv, ts := httpServer(t, streamable.Config{})
	url := ts.URL + streamable.MCPPath
	sessions := make([]string, MaxSelections)
	for i := range MaxSelections {
		code, id, _ := rpc(t, url, "", initializeBody, map[string]string{policy.HeaderTools: fmt.Sprintf("x%d", i)})
		if code != http.StatusOK || id == "" {
			t.Fatalf("selection %d: %d, session %q", i, code, id)
		}
		sessions[i] = id
	}
	// x0 is used again, so x1 is the least recently used.
	if code, _, _ := rpc(t, url, sessions[0], pingBody, map[string]string{policy.HeaderTools: "x0"}); code != http.StatusOK {
		t.Fatalf("x0's session: %d", code)
	}
	code, fresh, _ := rpc(t, url, "", initializeBody, map[string]string{policy.HeaderTools: "tairseach_server_status"})
	if code != http.StatusOK {
		t.Fatalf("a new selection with %d idle ones: %d, want 200", MaxSelections, code)
	}
	if code, _, _ := rpc(t, url, sessions[1], pingBody, map[string]string{policy.HeaderTools: "x1"}); code != http.StatusNotFound {
		t.Errorf("the session of the selection used least recently: %d, want 404 (closed to make room)", code)
	}
	if code, _, _ := rpc(t, url, sessions[0], pingBody, map[string]string{policy.HeaderTools: "x0"}); code != http.StatusOK {
		t.Errorf("a session of a selection used since: %d", code)
	}
	// A 2026-07-28 request with a selection of its own.
	code, _, body := rpc(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{policy.HeaderTools: "tairseach_contacts_list", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	if code != http.StatusOK || !strings.Contains(body, "tairseach_contacts_list") {
		t.Errorf("a 2026-07-28 request with a new selection: %d %s", code, body)
	}

	// A session's own request with other headers is served by its own
	// selection, and takes no place.
	if code, _, _ := rpc(t, url, fresh, initializedBody, nil); code != http.StatusAccepted {
		t.Fatalf("initialized: %d", code)
	}
	srv.mu.Lock()
	before := len(srv.sel.servers)
	srv.mu.Unlock()
	code, _, body = rpc(t, url, fresh, toolsListBody, map[string]string{policy.HeaderTools: "tairseach_contacts_get"})
	if code != http.StatusOK || !strings.Contains(body, "tairseach_server_status") || strings.Contains(body, "tairseach_contacts_get") {
		t.Errorf("a session's request with other headers: %d %s", code, body)
	}
	srv.mu.Lock()
	after := len(srv.sel.servers)
	srv.mu.Unlock()
	if after != before {
		t.Errorf("a session's own request took a selection's place: %d selections, then %d", before, after)
	}
	if after > MaxSelections {
		t.Errorf("%d selections served, more than %d", after, MaxSelections)
	}

	// Every selection has a request running: a new one is refused.
	srv.mu.Lock()
	for _, c := range srv.sel.servers {
		c.busy.Add(1)
	}
	srv.mu.Unlock()
	req, _ := http.NewRequest("POST", url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(policy.HeaderTools, "one-too-many")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a new selection with every one busy: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, _, _ := rpc(t, url, sessions[0], pingBody, map[string]string{policy.HeaderTools: "x0"}); code != http.StatusOK {
		t.Errorf("a session of a busy selection: %d", code)
	}
	if code := post(t, url, nil); code != http.StatusOK {
		t.Errorf("no headers: %d", code)
	}
}

// TestSelectionsLetGo: the server of a header selection no session uses
// is let go a while after its last request, or at once when a new
// selection needs its place; its features are detached with it.
func TestSelectionsLetGo(t *testing.T) {
	var f countingFeature
	srv := New(Config{DefaultSocket: "/x", Logger: zerolog.Nop(), Features: []Feature{&f}}, registryOf(t, `{"id":"t","tools":[{"name":"q","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"q":"q"}}}`))
	defer srv.Close()
	for i := range MaxSelections + 8 {
		c, err := srv.sel.use(policy.Policy{Tools: []string{fmt.Sprintf("x%d", i)}})
		if err != nil {
			t.Fatalf("selection %d: %v", i, err)
		}
		c.busy.Add(-1)
	}
	if n := len(srv.sel.servers); n > MaxSelections {
		t.Fatalf("%d selections kept, more than %d", n, MaxSelections)
	}
	if f.attached-f.detached != len(srv.sel.servers)+1 {
		t.Fatalf("features attached %d, detached %d, for %d selections and the server", f.attached, f.detached, len(srv.sel.servers))
	}
	// Idle past selectionIdle: let go at the next new selection.
	for _, c := range srv.sel.servers {
		c.lastUsed.Store(time.Now().Add(-2 * selectionIdle).UnixNano())
	}
	if c, err := srv.sel.use(policy.Policy{Tools: []string{"fresh"}}); err != nil {
		t.Fatal(err)
	} else {
		c.busy.Add(-1)
	}
	if n := len(srv.sel.servers); n != 1 {
		t.Fatalf("%d selections kept after they were idle, want the new one", n)
	}
}

// countingFeature counts the servers it is attached to and detached from.
type countingFeature struct{ attached, detached int }

func (f *countingFeature) Attach(*mcp.ServerOptions, backend.View) func(*mcp.Server) {
	f.attached++
	return func(*mcp.Server) {}
}

func (f *countingFeature) Detach(*mcp.Server)        { f.detached++ }
func (f *countingFeature) Resync()                   {}
func (f *countingFeature) Update(*manifest.Registry) {}

// At the bound, a new selection takes the place of one no session holds
// before one a client is still using, even one used less recently: a
// flood of new selections does not close others' sessions while it need
// not.
func TestSelectionsLetGoTheUnheldFirst(t *testing.T) {
	srv := New(Config{DefaultSocket: "/x", Logger: zerolog.Nop()}, registryOf(t, `{"id":"t","tools":[{"name":"q","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"q":"q"}}}`))
	defer srv.Close()
	use := func(name string) *policyServer {
		c, err := srv.sel.use(policy.Policy{Tools: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		c.busy.Add(-1)
		return c
	}
	held := use("held")
	ct, st := mcp.NewInMemoryTransports()
	ss, err := held.mcp.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range MaxSelections + 4 {
		use(fmt.Sprintf("x%d", i))
	}
	if srv.sel.servers[held.key] != held {
		t.Error("the selection a session holds was let go while others no session holds were kept")
	}
}
