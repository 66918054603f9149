package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
)

// TestRefusalsAreTyped: whoever asked learns which rule refused a request
// as a value, the same words the client reads as its message; a call that
// was made is no refusal, whatever its result.
func TestRefusalsAreTyped(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), Policy: policy.Policy{ReadOnly: true}}, loadExample(t))
	defer srv.Close()
	ctx := context.Background()

	for _, c := range []struct {
		tool string
		args string
		want backend.Rule // the zero Rule: the call was made
	}{
		{"tairseach_contacts_search", `{"query":"a"}`, backend.Rule{}},
		{"tairseach_contacts_search", `{"limit":"ten"}`, backend.RuleInvalidArguments},
		{"tairseach_screen_capture", `{}`, backend.RuleHidden},
		{"tairseach_no_such_tool", `{}`, backend.RuleUnknownTool},
	} {
		res, refused := srv.CallTool(ctx, c.tool, json.RawMessage(c.args))
		var got backend.Rule
		if refused != nil {
			got = refused.Rule
			if !res.IsError || refused.Message != check.ResultText(res) {
				t.Errorf("%s %s: the refusal says %q, the client reads %q", c.tool, c.args, refused.Message, check.ResultText(res))
			}
		}
		if got != c.want {
			t.Errorf("%s %s: refused by %q, want %q (%s)", c.tool, c.args, got, c.want, check.ResultText(res))
		}
	}

	for _, c := range []struct {
		name string
		req  backend.Request
		want backend.Rule
	}{
		{"a method only hidden tools call", backend.Request{Kind: backend.Resource, Target: "tairseach://x", Method: "screen.capture"}, backend.RuleHidden},
		{"a method no tool calls", backend.Request{Kind: backend.Resource, Target: "tairseach://x", Method: "nobody.calls"}, backend.RuleUnknownMethod},
		{"a server's own request of a method no manifest maps", backend.Request{Kind: backend.Permissions, Target: "permissions", Method: "nobody.maps"}, backend.RuleUnknownMethod},
	} {
		_, err := srv.base.Do(ctx, &c.req)
		r, ok := backend.IsRefused(err)
		if !ok || r.Rule != c.want {
			t.Errorf("%s: %v, want a refusal by %q", c.name, err, c.want)
		}
	}
}
