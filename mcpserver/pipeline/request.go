package pipeline

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// newProtocol is the revision whose requests carry their client in _meta
// and whose input requests the client answers by calling again.
const newProtocol = stdio.NewProtocol

// Request is one request that reaches the backend, whichever path it came
// by: a tools/call from the go-sdk's tool handler, its receiving
// middleware (tools the go-sdk does not list), the stdio transport's
// direct path or the CLI; or a feature's request (a resource read, a
// completion from a method). Entry points only fill it in; pipeline.run applies
// every rule, in one order, to all of them.
type Request struct {
	Kind backend.Kind // "" is a tool call
	// Name is what was asked for: for a tool call the tool (a manifest
	// tool or a discovery tool), for the other kinds the target (a URI, a
	// completion's reference).
	Name string
	Args json.RawMessage  // the arguments (params) as sent; empty or null: {}
	Info observe.CallInfo // who asked, for the audit log and the traces
	// Method and Manifest are a feature request's socket method and the
	// manifest file that declares its target ("" any).
	Method, Manifest string
	// ProgressToken is the request's _meta.progressToken; nil when the
	// client asked for no progress.
	ProgressToken any
	// Peer is the client's session, to report progress on and to ask the
	// user through; nil when there is none to reach (the CLI).
	Peer Peer
	// Caps are the client's capabilities: can it ask its user?
	Caps *mcp.ClientCapabilities
	// InputResponses and RequestState are a 2026-07-28 client's answers
	// to an input request of an earlier round of this call.
	InputResponses mcp.InputResponseMap
	RequestState   string

	// Routes is the route table of the policy the request is served
	// under: a header selection's; nil is the pipeline's own.
	Routes *atomic.Pointer[routes.Table]
	// Own marks the server's own request of the backend (its read of the
	// grants, with no client's request behind it): nobody asked, so it is
	// not recorded, and it takes no slot of the calls in flight.
	Own bool

	// failure is the socket call's error, kept for a feature request,
	// whose answer is the backend's own error.
	failure error
	// refused is the rule that stopped the request, if one did (refuse).
	refused *backend.Refused
}

// Refused is the rule that stopped the request, if one did: nil when the
// request was made (whatever its result).
func (c *Request) Refused() *backend.Refused { return c.refused }

// Failure is a feature request's failed socket call: its answer is the
// backend's own error.
func (c *Request) Failure() error { return c.failure }

// isTool reports whether r is a tools/call.
func (r *Request) isTool() bool { return r.Kind == "" || r.Kind == backend.Tool }

// canAsk reports whether c's client can ask its user a question (form
// elicitation; a client that declares elicitation without modes takes
// forms).
func (c *Request) canAsk() bool {
	e := c.Caps
	return e != nil && e.Elicitation != nil && (e.Elicitation.Form != nil || e.Elicitation.URL == nil)
}

// Peer is the session a call came from, as the pipeline uses it.
// *mcp.ServerSession is one.
type Peer interface {
	NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error
	Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// SDKCall is the Request of a tools/call request the go-sdk received.
func SDKCall(req *mcp.CallToolRequest) *Request {
	p := req.Params
	c := &Request{
		Kind:           backend.Tool,
		Name:           p.Name,
		Args:           p.Arguments,
		ProgressToken:  p.GetProgressToken(),
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
	}
	From(c, req, p.Meta)
	return c
}

// sdkRequest is what a go-sdk request says of who asked; every
// *mcp.ServerRequest is one.
type sdkRequest interface {
	mcp.Request
	ClientInfo() *mcp.Implementation
	ClientCapabilities() *mcp.ClientCapabilities
	ProtocolVersion() string
}

// From fills in who asked from the go-sdk's request.
func From(c *Request, req mcp.Request, meta mcp.Meta) {
	c.Info.Transport, c.Info.Kind, c.Info.Meta = "stdio", string(c.Kind), meta
	r, ok := req.(sdkRequest)
	if !ok {
		return
	}
	c.Caps, c.Info.Client, c.Info.Protocol = r.ClientCapabilities(), r.ClientInfo(), r.ProtocolVersion()
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		c.Peer = ss
		c.Info.Session = ss.ID()
	}
	if x := req.GetExtra(); x != nil && x.Header != nil {
		c.Info.Transport = "http"
	}
}

// refuse is the answer to c when a rule stopped it: msg is what the
// client reads, and the rule stays on c as a typed value for whoever asked
// (Refused) and the audit log. Whatever words msg holds unquoted (a
// policy's reason, jsonschema-go's message), what could hide in them is
// escaped (quote.Escape).
func (c *Request) refuse(rule backend.Rule, msg string) *mcp.CallToolResult {
	msg = quote.Escape(msg)
	c.refused = &backend.Refused{Rule: rule, Message: msg}
	return check.ErrorResult(msg)
}

// refuseHidden refuses c's call of tool name, which why hides: a rule of
// the policy, or a permission not granted.
func refuseHidden(c *Request, name string, why policy.Reason) *mcp.CallToolResult {
	rule := backend.RuleHidden
	if why.By == policy.ByPermission {
		rule = backend.RulePermission
	}
	return c.refuse(rule, why.Message(name))
}
