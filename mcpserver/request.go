package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/gate"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// pipeline is the one road every request that reaches the backend goes
// through, whatever its kind and whichever policy it is served under
// (pipeline.go). There is one per process: the servers of HTTP header
// selections share their parent's, and a request names the route table
// of its policy (Request.routes). It owns what only requests use: the slots
// of requests in flight, the observer, the confirmations asked (one key),
// the background checks of results.
type pipeline struct {
	cfg      *Config
	log      zerolog.Logger
	routes   *atomic.Pointer[routes.Table]
	ready    *gate.Gate    // the server's: the manifests are ready
	slots    chan struct{} // one token per request in flight
	obs      observe.Observer
	confirms *confirmations // the input requests asked of 2026-07-28 clients
	asks     permissionAsks // what the user answered about asking macOS for a permission
	checks   checker        // checks results against unadvertised outputSchemas
	warned   sync.Map       // tool name → struct{}: its result mismatch was logged
	// grants is the owner of the macOS permissions (Server.grants): a call
	// refused for a permission has them read again.
	grants *permissions.Tracker
	// grantsRead is closed once the grants were first read, or a wait for
	// that gave up (grants.go, waitGrants); closed at once when they are
	// not needed (Config.HideUngranted off).
	grantsRead *gate.Gate
}

// own reports whether c is the server's own read of the grants: nobody's
// request, it is not recorded and takes no slot of the calls in flight.
func (c *Request) own() bool { return c.self }

// newProtocol is the revision whose requests carry their client in _meta
// and whose input requests the client answers by calling again.
const newProtocol = stdio.NewProtocol

// Request is one request that reaches the backend, whichever road it came
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

	// routes is the route table of the policy the request is served under:
	// a header selection's; nil is the server's own.
	routes *atomic.Pointer[routes.Table]

	// failure is the socket call's error, kept for a feature request,
	// whose answer is the backend's own error.
	failure error
	// refused is the rule that stopped the request, if one did (refuse).
	refused *backend.Refused
	// self marks the server's own request of the backend (Server.Do with
	// no client's request behind it): nobody asked, so it is not recorded.
	self bool
}

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

// sdkCall is the Request of a tools/call request the go-sdk received.
func sdkCall(req *mcp.CallToolRequest) *Request {
	p := req.Params
	c := &Request{
		Kind:           backend.Tool,
		Name:           p.Name,
		Args:           p.Arguments,
		ProgressToken:  p.GetProgressToken(),
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
	}
	from(c, req, p.Meta)
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

// from fills in who asked from the go-sdk's request.
func from(c *Request, req mcp.Request, meta mcp.Meta) {
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
// (Server.Do, Server.Try) and the audit log.
func (c *Request) refuse(rule backend.Rule, msg string) *mcp.CallToolResult {
	c.refused = &backend.Refused{Rule: rule, Message: msg}
	return check.ErrorResult(msg)
}

// auditOutcome is the audit log's outcome of a request refused by rule,
// where the log names the rule itself; "" leaves it to the log (rejected
// before the socket, result_error after).
func auditOutcome(rule backend.Rule) string {
	switch rule {
	case backend.RuleUnknownTool, backend.RuleInvalidArguments, backend.RuleBusy, backend.RuleInternal:
		return string(rule)
	}
	return ""
}

// ResultText is the text of a result's first block.
func ResultText(res *mcp.CallToolResult) string {
	if res != nil && len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// directMeta is what CallDirect reads of a request's _meta. It is shared
// by the requests whose _meta has the same bytes, and never changed.
type directMeta struct {
	raw      []byte
	ok       bool
	allOnce  sync.Once
	allMeta  map[string]any          // all of it, for OpenTelemetry; read only
	Progress json.RawMessage         `json:"progressToken"` // as it came: a number may not survive a float64
	Client   *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
	Caps     *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
}

// all returns the whole _meta decoded, once.
func (m *directMeta) all() map[string]any {
	m.allOnce.Do(func() { _ = json.Unmarshal(m.raw, &m.allMeta) })
	return m.allMeta
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
