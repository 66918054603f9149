package streamable

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// chooser is a Server whose Choose is the test's.
type chooser struct {
	choose func(r *http.Request) (Choice, *Refusal)
	mcp    *mcp.Server
}

func (c chooser) Choose(r *http.Request) (Choice, *Refusal) { return c.choose(r) }
func (c chooser) Sessions() iter.Seq[*mcp.ServerSession]    { return c.mcp.Sessions() }
func (chooser) Health(context.Context) Health               { return Health{Status: "ok"} }
func (chooser) CutOff()                                     {}

// The transport asks Choose once per request to /mcp: a refusal is the
// answer as the Server wrote it, the server chosen is the one the go-sdk
// serves, and Done hears of the session the go-sdk began and of the
// DELETE that ended it.
func TestChooseOncePerRequest(t *testing.T) {
	m := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	var (
		mu     sync.Mutex
		asked  int
		served []Served
		refuse bool
	)
	s := chooser{mcp: m, choose: func(r *http.Request) (Choice, *Refusal) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		if refuse {
			return Choice{}, &Refusal{Status: http.StatusServiceUnavailable, Text: "Service Unavailable: no place", RetryAfter: "1"}
		}
		return Choice{Server: m, Done: func(sv Served) {
			mu.Lock()
			defer mu.Unlock()
			served = append(served, sv)
		}}, nil
	}}
	ts := httptest.NewServer(NewHandler(s, Config{}, zerolog.Nop()))
	defer ts.Close()
	post := func(session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(SessionIDHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	id := resp.Header.Get(SessionIDHeader)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+MCPPath, nil)
	req.Header.Set(SessionIDHeader, id)
	del, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	// Done runs as the handler returns, which the client need not wait for.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(served)
		mu.Unlock()
		if n >= 2 {
			break
		}
	}
	mu.Lock()
	if asked != 2 || len(served) != 2 || served[0] != (Served{Began: id}) || served[1] != (Served{Deleted: true}) {
		t.Fatalf("asked %d times, served %+v; want 2, [{Began:%s} {Deleted:true}]", asked, served, id)
	}
	refuse = true
	mu.Unlock()

	req, _ = http.NewRequest(http.MethodPost, ts.URL+MCPPath, strings.NewReader(`{}`))
	refused, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(refused.Body)
	refused.Body.Close()
	if refused.StatusCode != http.StatusServiceUnavailable || refused.Header.Get("Retry-After") != "1" || string(body) != "Service Unavailable: no place\n" {
		t.Fatalf("refused: %s, Retry-After %q, %q", refused.Status, refused.Header.Get("Retry-After"), body)
	}
}
