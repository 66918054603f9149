package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
)

// asker asks the user, on behalf of a call of a tool left out for a
// permission not yet determined, whether Tairseach should ask macOS for it.
// It sends permissions.request through the function it is given (the
// pipeline's Run), as any request of the backend goes.
type asker struct {
	asks    permissionAsks
	send    func(context.Context, *Request) *mcp.CallToolResult
	refresh func() // has the grants read again
}

// ask answers a call of a tool left out for a permission. For
// one not yet determined, a client that can ask its user is asked, once
// per permission (permissionAsks), whether Tairseach should ask macOS for
// it now (permissions.request), and the grants are read again after;
// otherwise the answer says what the user can do. No answer points the
// model at a way around the user.
func (a *asker) ask(ctx context.Context, c *Request, table *routes.Table, b routes.Blocked) *mcp.CallToolResult {
	msg := policy.LeftOut(b.Perm, b.Status).Message(c.Name)
	if b.Status != permissions.NotDetermined || !c.canAsk() || c.Peer == nil || c.Info.Protocol >= newProtocol || table.Internal[permissions.MethodRequest] == nil {
		return c.refuse(backend.RulePermission, msg)
	}
	perm := quote.Line(b.Perm, quote.Name)
	q, first := a.asks.begin(b.Perm, b.Status)
	if !first {
		select {
		case <-q.done:
		case <-ctx.Done():
			return c.refuse(backend.RulePermission, msg)
		}
		switch q.answer {
		case askDeclined:
			return c.refuse(backend.RulePermission, fmt.Sprintf("tool %s is left out: it needs the macOS permission %s, which is %s, and the user declined to have Tairseach ask macOS for it; "+
				"they are not asked again while it stays %s. Tell the user that %s needs it: they can %s. Once it is granted, the tool is offered again.",
				c.Name, perm, b.Status, b.Status, c.Name, permissions.Remediation(b.Perm, b.Status)))
		case askRequested:
			return c.refuse(backend.RulePermission, fmt.Sprintf("tool %s is left out: it needs the macOS permission %s, and macOS was asked for it already, as the user agreed: "+
				"it waits for the user to answer its prompt (or to turn Tairseach on in System Settings › Privacy & Security). Tairseach does not ask again. "+
				"Once it is granted, the tool is offered again: list the tools and call it then.", c.Name, perm))
		}
		return c.refuse(backend.RulePermission, msg)
	}
	answer := askGaveUp
	defer func() { a.asks.end(b.Perm, q, answer) }()
	er, err := c.Peer.Elicit(ctx, &mcp.ElicitParams{
		Mode: "form",
		Message: fmt.Sprintf("The assistant wants to use %s, which needs the macOS permission %s. Tairseach has not asked macOS for it yet. Ask now? macOS shows its own prompt, or opens System Settings. You are asked once: if you decline, the assistant is told so.",
			c.Name, perm),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"ask": map[string]any{"type": "boolean", "title": "Ask macOS for " + perm, "default": true},
			},
			"required": []string{"ask"},
		},
	})
	if err != nil {
		return c.refuse(backend.RulePermission, msg)
	}
	if er.Action != "accept" || er.Content["ask"] != true {
		answer = askDeclined
		return c.refuse(backend.RulePermission, fmt.Sprintf("declined by the user: they chose not to have Tairseach ask macOS for the permission %s now, so %s was not called; "+
			"they are not asked again while it stays %s. If they want it later, they can %s; once it is granted, the tool is offered again.",
			perm, c.Name, b.Status, permissions.Remediation(b.Perm, b.Status)))
	}
	params, _ := json.Marshal(map[string]string{"permission": b.Perm})
	res := a.send(ctx, &Request{Kind: backend.Permissions, Name: "permissions.request " + b.Perm, Method: permissions.MethodRequest,
		Args: params, Info: observe.CallInfo{Transport: c.Info.Transport, Session: c.Info.Session, Client: c.Info.Client, Protocol: c.Info.Protocol}})
	a.refresh()
	if res == nil || res.IsError {
		return c.refuse(backend.RulePermission, fmt.Sprintf("asking macOS for the permission %s failed: %s. %s", perm, quote.Line(check.ResultText(res), quote.Text), msg))
	}
	answer = askRequested
	return c.refuse(backend.RulePermission, fmt.Sprintf("macOS is asking the user to grant %s to Tairseach now (the prompt, or System Settings › Privacy & Security). "+
		"Once it is granted, %s is offered again: list the tools and call it then.", perm, c.Name))
}

// declined refuses a request of permissions.request (the model
// calling the tool itself) for a permission the user declined to have
// macOS asked for: the decline holds on every path until the permission
// changes. It returns nil for any other.
func (a *asker) declined(c *Request, args json.RawMessage) *mcp.CallToolResult {
	var want struct {
		Permission string `json:"permission"`
	}
	if json.Unmarshal(args, &want) != nil || !a.asks.declined(want.Permission) {
		return nil
	}
	st := permissions.NotDetermined
	return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("declined by the user: they chose not to have Tairseach ask macOS for the permission %s, so %s was not called; "+
		"they are not asked again while it stays %s. Tell the user what needs it: they can %s.",
		quote.Line(want.Permission, quote.Name), c.Name, st, permissions.Remediation(want.Permission, st)))
}
