package demo_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/internal/demo"
)

// TestRealReplyShapes checks that the demo answers as the real Tairseach
// server does where its replies differ from its manifests' outputSchemas,
// and where its wire protocol has quirks a bridge must handle.
func TestRealReplyShapes(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	for _, tt := range []struct {
		method, params, want string
	}{
		{"calendar.updateEvent", `{"id":"E1","title":"Retro"}`, `{"updated":true,"event":{"id":"E1","title":"Retro","start":"2026-02-16T09:00:00Z","end":"2026-02-16T09:15:00Z"}}`},
		{"calendar.deleteEvent", `{"id":"E1"}`, `{"deleted":true,"id":"E1"}`},
		{"op.vaults.list", `{}`, `[{"id":"v-private","name":"Private"},{"id":"v-shared","name":"Shared"}]`},
	} {
		r := c.call(tt.method, tt.params)
		if r.Error != nil || string(r.Result) != tt.want {
			t.Errorf("%s: result %s, error %+v; want %s", tt.method, r.Result, r.Error, tt.want)
		}
	}
	// A blank line: -32700 "Empty request" with id null, as the real server.
	c.send("\n")
	if line := c.recv(); line != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Empty request"}}` {
		t.Errorf("blank line: %s", line)
	}
	// A notification: a literal null line.
	c.send(`{"jsonrpc":"2.0","method":"calendar.deleteEvent","params":{"id":"E2"}}` + "\n")
	if line := c.recv(); line != "null" {
		t.Errorf("notification: %s", line)
	}
}

func TestHuge(t *testing.T) {
	s := startServer(t, demo.Options{})
	c := dial(t, s.path)
	r := c.call("demo.huge", `{"bytes":1000,"char":"<"}`)
	if r.Error != nil || string(r.Result) != `{"data":"`+strings.Repeat("<", 1000)+`"}` {
		t.Errorf("text: %.100s %+v", r.Result, r.Error)
	}
	r = c.call("demo.huge", `{"kind":"object","bytes":5000}`)
	var obj map[string]string
	if err := json.Unmarshal(r.Result, &obj); err != nil || len(r.Result) < 5000 || len(r.Result) > 5100 || len(obj) < 50 {
		t.Errorf("object: %d bytes, %d members, %v", len(r.Result), len(obj), err)
	}
	r = c.call("demo.huge", `{"kind":"error","bytes":3000}`)
	if r.Error == nil || r.Error.Code != -32000 || len(r.Error.Data) != 3002 {
		t.Errorf("error: %+v", r.Error)
	}
	if r = c.call("demo.huge", `{"kind":"other"}`); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("bad kind: %+v", r.Error)
	}
}
