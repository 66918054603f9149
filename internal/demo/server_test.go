package demo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
)

// testServer is a demo server on a real Unix socket in a short temp dir.
type testServer struct {
	path string
	srv  *demo.Server
	stop func() // cancels Serve and waits for it; safe to call twice
}

func startServer(t *testing.T, opts demo.Options) *testServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := demo.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := demo.New(zerolog.Nop(), opts)
	go func() { done <- srv.Serve(ctx, ln) }()

	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("Serve did not return 5s after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return &testServer{path: path, srv: srv, stop: stop}
}

type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, path string) *client {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// send writes s as is; callers add the newline.
func (c *client) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv reads one line and returns it without its newline.
func (c *client) recv() string {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read: %v (got %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

// waitClosed reads until the server closes the connection. A reset counts
// as closed: the server may close a connection before reading all of it.
func (c *client) waitClosed() {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c.r); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		c.t.Errorf("connection not closed: %v", err)
	}
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

func parseResponse(t *testing.T, line string) wireResponse {
	t.Helper()
	var r wireResponse
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("response %q: %v", line, err)
	}
	if r.JSONRPC != "2.0" {
		t.Fatalf("response %q: jsonrpc is %q", line, r.JSONRPC)
	}
	return r
}

// call sends one request with id 1 and returns its response.
func (c *client) call(method, params string) wireResponse {
	c.t.Helper()
	line := `{"jsonrpc":"2.0","id":1,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	c.send(line + "}\n")
	r := parseResponse(c.t, c.recv())
	if string(r.ID) != "1" {
		c.t.Fatalf("response id %s, want 1", r.ID)
	}
	return r
}

// result calls method and decodes its result into v, failing on an error.
func (c *client) result(method, params string, v any) {
	c.t.Helper()
	r := c.call(method, params)
	if r.Error != nil {
		c.t.Fatalf("%s %s: error %+v", method, params, *r.Error)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		c.t.Fatalf("%s result %s: %v", method, r.Result, err)
	}
}

type contact struct {
	ID           string   `json:"id"`
	FirstName    string   `json:"firstName"`
	LastName     string   `json:"lastName"`
	Organization string   `json:"organization"`
	Emails       []string `json:"emails"`
	Phones       []string `json:"phones"`
}

func ids(cs []contact) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestServerStatus(t *testing.T) {
	s := startServer(t, demo.Options{Version: "1.2.3"})
	c := dial(t, s.path)
	var got struct {
		Status        string   `json:"status"`
		Version       string   `json:"version"`
		UptimeSeconds *int     `json:"uptimeSeconds"`
		Methods       []string `json:"methods"`
	}
	c.result("server.status", "", &got)
	if got.Status != "ok" || got.Version != "1.2.3" || got.UptimeSeconds == nil || *got.UptimeSeconds < 0 {
		t.Errorf("status = %+v", got)
	}
	want := []string{"calendar.deleteEvent", "calendar.updateEvent", "contacts.get", "contacts.list", "contacts.search",
		"demo.blob", "demo.echo", "demo.fail", "demo.huge", "demo.setPermission", "demo.slow", "op.vaults.list",
		"permissions.check", "permissions.list", "permissions.request", "screen.capture", "server.status", "word_count"}
	if !slices.Equal(got.Methods, want) {
		t.Errorf("methods = %v, want %v", got.Methods, want)
	}
}

func TestContactsList(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	tests := []struct {
		params                 string
		wantLen, limit, offset int
		first                  string
	}{
		{"", 25, 100, 0, "c-001"},
		{`{}`, 25, 100, 0, "c-001"},
		{`{"limit":10}`, 10, 10, 0, "c-001"},
		{`{"limit":10,"offset":20}`, 5, 10, 20, "c-021"},
		{`{"offset":25}`, 0, 100, 25, ""},
		{`{"offset":1000}`, 0, 100, 1000, ""},
	}
	for _, tt := range tests {
		r := c.call("contacts.list", tt.params)
		if r.Error != nil {
			t.Fatalf("params %s: error %+v", tt.params, *r.Error)
		}
		if !strings.Contains(string(r.Result), `"contacts":[`) {
			t.Errorf("params %s: contacts is not an array: %s", tt.params, r.Result)
		}
		var got struct {
			Contacts []contact `json:"contacts"`
			Count    int       `json:"count"`
			Limit    int       `json:"limit"`
			Offset   int       `json:"offset"`
		}
		if err := json.Unmarshal(r.Result, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Contacts) != tt.wantLen || got.Count != 25 || got.Limit != tt.limit || got.Offset != tt.offset {
			t.Errorf("params %s: got %d contacts, count %d, limit %d, offset %d; want %d, 25, %d, %d",
				tt.params, len(got.Contacts), got.Count, got.Limit, got.Offset, tt.wantLen, tt.limit, tt.offset)
		}
		if tt.first != "" && len(got.Contacts) > 0 && got.Contacts[0].ID != tt.first {
			t.Errorf("params %s: first contact %s, want %s", tt.params, got.Contacts[0].ID, tt.first)
		}
	}
}

func TestContactsGet(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)

	var got contact
	c.result("contacts.get", `{"id":"c-005"}`, &got)
	want := contact{ID: "c-005", FirstName: "Niamh", LastName: "O'Connor", Organization: "Threshold Analytics",
		Emails: []string{"niamh.oconnor@example.com"}, Phones: []string{"+1 555-0105"}}
	if !equalContact(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}

	// A contact without email addresses has an empty list, not null.
	r := c.call("contacts.get", `{"id":"c-008"}`)
	if !strings.Contains(string(r.Result), `"emails":[]`) {
		t.Errorf("c-008 = %s, want emails []", r.Result)
	}

	r = c.call("contacts.get", `{"id":"nobody"}`)
	if r.Error == nil || r.Error.Code != -32002 || !strings.Contains(r.Error.Message, "nobody") {
		t.Errorf("unknown id: got %s / %+v, want error -32002", r.Result, r.Error)
	}
}

func equalContact(a, b contact) bool {
	return a.ID == b.ID && a.FirstName == b.FirstName && a.LastName == b.LastName &&
		a.Organization == b.Organization && slices.Equal(a.Emails, b.Emails) && slices.Equal(a.Phones, b.Phones)
}

func TestContactsSearch(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	tests := []struct {
		params string
		want   []string
	}{
		{`{"query":"threshold"}`, []string{"c-001", "c-005", "c-015", "c-023"}},
		{`{"query":"THRESHOLD","limit":2}`, []string{"c-001", "c-005"}},
		{`{"query":"SIOBHÁN"}`, []string{"c-003"}},
		{`{"query":"o'connor"}`, []string{"c-005"}},
		{`{"query":"s.power@"}`, []string{"c-023"}},
		{`{"query":"anna"}`, []string{"c-007"}}, // the README's example
		{`{"query":"zzz"}`, nil},
	}
	for _, tt := range tests {
		var got struct {
			Query    string    `json:"query"`
			Contacts []contact `json:"contacts"`
			Count    int       `json:"count"`
		}
		r := c.call("contacts.search", tt.params)
		if r.Error != nil {
			t.Fatalf("params %s: error %+v", tt.params, *r.Error)
		}
		if !strings.Contains(string(r.Result), `"contacts":[`) {
			t.Errorf("params %s: contacts is not an array: %s", tt.params, r.Result)
		}
		if err := json.Unmarshal(r.Result, &got); err != nil {
			t.Fatal(err)
		}
		var p struct{ Query string }
		json.Unmarshal([]byte(tt.params), &p)
		if got.Query != p.Query || got.Count != len(tt.want) || !slices.Equal(ids(got.Contacts), tt.want) {
			t.Errorf("params %s: got query %q, count %d, ids %v; want %q, %d, %v",
				tt.params, got.Query, got.Count, ids(got.Contacts), p.Query, len(tt.want), tt.want)
		}
	}
}

func TestEcho(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	for params, want := range map[string]string{
		`{"a":1,"b":[true,null,"x\n"],"c":{"d":"é"}}`: `{"a":1,"b":[true,null,"x\n"],"c":{"d":"é"}}`,
		`{ "spaced" : 1 }`: `{ "spaced" : 1 }`,
		`{}`:               `{}`,
		`null`:             `{}`,
		``:                 `{}`,
	} {
		r := c.call("demo.echo", params)
		if r.Error != nil || string(r.Result) != want {
			t.Errorf("echo %s = %s / %+v, want %s", params, r.Result, r.Error, want)
		}
	}
}

func TestSlow(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	start := time.Now()
	var got struct {
		SleptMs int `json:"sleptMs"`
	}
	c.result("demo.slow", `{"ms":50}`, &got)
	if got.SleptMs != 50 {
		t.Errorf("sleptMs = %d, want 50", got.SleptMs)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("returned after %v, want at least 50ms", d)
	}
}

func TestFail(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"demo.fail","params":{}}` + "\n")
	line := c.recv()
	if !strings.Contains(line, "Privacy & Security") {
		t.Errorf("response %s: want the remediation text without HTML escapes", line)
	}
	r := parseResponse(t, line)
	if r.Result != nil || r.Error == nil {
		t.Fatalf("got result %s, error %v; want only an error", r.Result, r.Error)
	}
	if r.Error.Code != -32001 || r.Error.Message != "permission denied: contacts" {
		t.Errorf("error = %d %q", r.Error.Code, r.Error.Message)
	}
	var data map[string]string
	if err := json.Unmarshal(r.Error.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"permission":  "contacts",
		"status":      "denied",
		"remediation": "Open System Settings → Privacy & Security → Contacts and allow Tairseach",
	}
	if len(data) != len(want) {
		t.Errorf("data = %v, want %v", data, want)
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, data[k], v)
		}
	}
}

func TestBlob(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	for _, tt := range []struct {
		params string
		n      int
	}{
		{``, 1024},
		{`{"bytes":0}`, 0},
		{`{"bytes":300000}`, 300000},
		{`{"bytes":300000}`, 300000}, // from the cache
		{`{"bytes":7}`, 7},
	} {
		var got struct {
			Data *string `json:"data"`
		}
		c.result("demo.blob", tt.params, &got)
		if got.Data == nil || len(*got.Data) != tt.n || strings.Trim(*got.Data, "x") != "" {
			t.Errorf("blob %s: got %d bytes, want %d x's", tt.params, len(*got.Data), tt.n)
		}
	}
}
