package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
	"github.com/geilt/tairseach-mcp/mcpserver"
)

// TestFaultHostileReplies checks, through an MCP session, what the model is
// told when the backend replies in a way the real server does (an error with
// a null id, a null line) or a hostile one would.
func TestFaultHostileReplies(t *testing.T) {
	tests := []struct {
		mode    faultbackend.Mode
		isError bool
		want    []string // PATH stands for the socket
		fast    bool     // must not wait for the call timeout
	}{
		// The real server answers a failed credential load with id null:
		// the backend's error, as sent, not a malformed reply.
		{faultbackend.ModeNullID, true, []string{`{"error":{"code":-32011,"message":"token refresh failed: google"}}`}, true},
		{faultbackend.ModeNullLine, true, []string{"server at PATH sent a malformed reply to fault.nullline", "a null line", "took the request for one"}, true},
		{faultbackend.ModeDupKey, true, []string{"malformed reply to fault.dupkey", `duplicate "id" member`}, true},
		{faultbackend.ModeDeep, true, []string{"malformed reply to fault.deep", "nesting deeper than 10000 levels"}, true},
		{faultbackend.ModeTrickle, true, []string{"no reply from the tairseach server at PATH within 500ms (method fault.trickle)"}, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			e := newFaultEnv(t, mcpserver.Config{CallTimeout: 500 * time.Millisecond}, faultbackend.Options{})
			start := time.Now()
			res := e.call(tt.mode, `{"fault":1}`)
			took := time.Since(start)
			text := resultText(t, res)
			if res.IsError != tt.isError {
				t.Fatalf("fault.%s = isError %v, %q", tt.mode, res.IsError, text)
			}
			t.Logf("took %v: %s", took, text)
			for _, want := range tt.want {
				if want = strings.ReplaceAll(want, "PATH", e.path); !strings.Contains(text, want) {
					t.Errorf("text %q\ndoes not contain %q", text, want)
				}
			}
			if tt.fast && took >= 500*time.Millisecond && !strings.Contains(text, "no reply") {
				t.Errorf("took %v: the answer waited for the call timeout", took)
			}
			e.mustOK(1)
		})
	}
}

// TestFaultOtherUser: with the owner checks skipped, a socket served by
// another user's Tairseach closes each connection without a word; the model
// is told that this may be why.
func TestFaultOtherUser(t *testing.T) {
	e := newFaultEnv(t, mcpserver.Config{CallTimeout: 5 * time.Second, InsecureSocket: true}, faultbackend.Options{})
	e.be.SetMode(faultbackend.ModeDrop)
	res := e.call(faultbackend.ModeOK, `{}`)
	text := resultText(t, res)
	if !res.IsError || !strings.Contains(text, e.path) || !strings.Contains(text, "is the socket served by another user?") {
		t.Fatalf("result = isError %v, %q; want the other-user hint", res.IsError, text)
	}
	e.be.SetMode("")
	e.mustOK(1)
}
