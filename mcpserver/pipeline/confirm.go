package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// confirmID names the one input request of a confirmation.
const confirmID = "confirm"

// confirmer asks the user before a call of a tool that needs it (the
// --confirm rules), and redeems a 2026-07-28 client's answers.
type confirmer struct {
	rules  string // the --confirm rules, as the refusals name them
	issued *confirmations
}

func newConfirmer(rules []string) *confirmer {
	return &confirmer{rules: strings.Join(rules, ","), issued: newConfirmations()}
}

// ask asks the user before a call of a tool that needs it, on every
// path a call takes. It returns nil when the call may go ahead; otherwise
// the result to send, and for a refusal its outcome for the audit log.
//
// A client of a revision before 2026-07-28 is asked here, by elicitation
// on its session, for as long as the call's ctx allows (its timeout, the
// client's cancellation, the end of the session). A 2026-07-28 client gets
// an input request (input_required) and answers it when it calls again:
// the answer counts once, for this tool and these exact arguments (the
// request state carries a single-use nonce, bound to both by an HMAC).
func (f *confirmer) ask(ctx context.Context, c *Request, r *routes.Route, args json.RawMessage) (res *mcp.CallToolResult, outcome string) {
	if c.Info.Protocol >= newProtocol && !c.isTool() {
		// Only a tool call can carry an input request back to the client.
		return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("%s %s %s calls %s, which needs the user's confirmation (--confirm %s); this revision asks the user only in a tool call: call the tool %s instead",
			observe.PrefixConfirmRefused, c.Kind, shownName(c), quote.Line(r.Tool.Method, quote.Text), f.rules, r.Tool.Name)), "refused"
	}
	question, why := confirmParams(c, r, args)
	if why != "" {
		// What an accept would send cannot all be shown: the user is not
		// asked to accept what they cannot see.
		return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("%s %s needs the user's confirmation (--confirm %s), and its arguments cannot be shown to the user in full: %s. "+
			"The question shows every argument's name and the start of every value in at most %d bytes; the call was not made and the user was not asked: "+
			"call it again with fewer or shorter arguments (split the work into several calls)",
			observe.PrefixConfirmRefused, shownName(c), f.rules, why, MaxConfirmArgs)), "refused"
	}
	if c.Info.Protocol >= newProtocol {
		if resp, ok := c.InputResponses[confirmID]; ok && c.RequestState != "" {
			er, _ := resp.(*mcp.ElicitResult)
			if er != nil && f.issued.redeem(c.RequestState, c.Name, args) {
				return answered(c, er)
			}
			// Not the answer to our question about these arguments, or an
			// answer used already: ask again.
		}
		if !c.canAsk() {
			return f.cannotAsk(c), "refused"
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{confirmID: question},
			RequestState:  f.issued.issue(c.Name, args),
		}, ""
	}
	if !c.canAsk() || c.Peer == nil {
		return f.cannotAsk(c), "refused"
	}
	er, err := c.Peer.Elicit(ctx, question)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("not confirmed: the user did not answer within %s, so %s was not called; call again to ask again", r.Timeout, shownName(c))), "unanswered"
		}
		return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("not confirmed: asking the user failed (%v), so %s was not called", err, shownName(c))), "unanswered"
	}
	return answered(c, er)
}

// shownName is what c asked for, as the answers name it: a tool by its
// name, anything else (a URI, a reference the client chose) quoted on one
// line.
func shownName(c *Request) string {
	if c.isTool() {
		return c.Name
	}
	return quote.Line(c.Name, quote.Text)
}

// answered turns the user's answer into go-ahead (nil) or a refusal.
func answered(c *Request, er *mcp.ElicitResult) (*mcp.CallToolResult, string) {
	name := shownName(c)
	switch {
	case er.Action == "accept" && er.Content["confirm"] == true:
		return nil, ""
	case er.Action == "cancel":
		return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("declined by the user: %s was not called (the confirmation was cancelled)", name)), "cancelled"
	default:
		return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("declined by the user: %s was not called", name)), "declined"
	}
}

// cannotAsk refuses a call that needs confirmation from a client that
// cannot ask its user.
func (f *confirmer) cannotAsk(c *Request) *mcp.CallToolResult {
	return c.refuse(backend.RuleNotConfirmed, fmt.Sprintf("%s %s needs the user's confirmation (--confirm %s), but this client cannot ask the user (it does not support form elicitation); "+
		"the call was not made: use a client that supports elicitation, or start tairseach-mcp with --confirm none (or a --confirm that does not cover this tool)",
		observe.PrefixConfirmRefused, shownName(c), f.rules))
}

// confirmParams is the question put to the user; why is not "" when the
// arguments cannot all be shown in it.
func confirmParams(c *Request, r *routes.Route, args json.RawMessage) (q *mcp.ElicitParams, why string) {
	msg, why := confirmMessage(c, r, args)
	if why != "" {
		return nil, why
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "boolean",
					"title":       "Run " + quote.Line(r.Tool.ToolName, quote.Name),
					"description": "Allow this call to go ahead",
					"default":     false,
				},
			},
			"required": []string{"confirm"},
		},
	}, ""
}

// confirmMessage shows the user the tool, what it does and the arguments
// (showArgs); for a request of another kind, what was asked for and that
// it runs the tool. The words of the manifest and the model are quoted on
// one line each, so that none can forge a line of the question.
func confirmMessage(c *Request, r *routes.Route, args json.RawMessage) (string, string) {
	root, err := parseArgs(args)
	if err != nil {
		return "", fmt.Sprintf("they are not JSON (%v)", err)
	}
	shown, cut, why := showArgs(root)
	if why != "" {
		return "", why
	}
	var b strings.Builder
	if c.isTool() {
		fmt.Fprintf(&b, "Allow the assistant to call %s (%s)?", quote.Line(r.Tool.ToolName, quote.Text), r.Tool.Name)
	} else {
		fmt.Fprintf(&b, "Allow the assistant's %s %s? It runs %s (%s).", c.Kind, quote.Line(c.Name, quote.Text), quote.Line(r.Tool.ToolName, quote.Text), r.Tool.Name)
	}
	if d := strings.TrimSpace(r.Tool.Description); d != "" {
		b.WriteString("\n\nWhat the tool says it does: ")
		b.WriteString(quote.Line(d, 500))
	}
	switch {
	case root.kind != '{':
		b.WriteString("\n\nArguments:\n")
	case len(root.kids) == 0:
		b.WriteString("\n\nArguments: none")
		shown = ""
	default:
		fmt.Fprintf(&b, "\n\nArguments (%d):\n", len(root.kids))
	}
	b.WriteString(shown)
	if cut {
		b.WriteString("Long values are cut where marked; accepting sends them in full.\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), ""
}
