package observe

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// PrefixConfirmRefused starts the result of a call that could not be
// confirmed because the client cannot ask the user.
const PrefixConfirmRefused = "confirmation required:"

// CallInfo says who made a request of the backend, for the audit log and
// the traces.
type CallInfo struct {
	Transport string              // "stdio", "http" or "cli"
	Kind      string              // "tool", "resource", "template" or "completion"; "" is "tool"
	Session   string              // the MCP session id, if the transport has one
	Client    *mcp.Implementation // the client's clientInfo
	Protocol  string              // the negotiated protocol version
	RequestID string              // the JSON-RPC id of the tools/call, as JSON
	Meta      map[string]any      // the request's params._meta (traceparent, tracestate)
}

// Call follows one call for the audit log and the traces.
type Call struct {
	start       time.Time
	info        *CallInfo
	tool        string // the tool whose route the request took
	target      string // what a request of another kind asked for (a URI)
	args        json.RawMessage
	method      string // set once routed
	socket      string
	forwarded   bool  // the call reached the socket client
	err         error // the socket client's error
	outcome     string
	code        *int64
	resultBytes int
	span        spanner // nil without telemetry
}

// Resolved names the tool the call reached (call_tool's target) and the
// arguments it is sent with.
func (o *Call) Resolved(tool string, args json.RawMessage) {
	o.tool = tool
	if args != nil {
		o.args = args
	}
}

// Refused records why the call was not made, as its outcome.
func (o *Call) Refused(outcome string) { o.outcome = outcome }

// Forward records the socket call that do makes of method on socket, with
// its span.
func (o *Call) Forward(ctx context.Context, method, socket string, do func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	o.method, o.socket, o.forwarded = method, socket, true
	var endSpan func(error)
	if o.span != nil {
		endSpan = o.span.socketSpan(ctx, method, socket)
	}
	out, err := do(ctx)
	o.err = err
	if endSpan != nil {
		endSpan(err)
	}
	return out, err
}

// classify names the outcome of a call from its result and the socket
// client's error.
func (o *Call) classify(res *mcp.CallToolResult, limit int) {
	if res != nil {
		o.resultBytes, _ = check.Size(res, limit)
	}
	if o.outcome != "" { // set by whoever refused the call
		return
	}
	var (
		rpcErr  *socketrpc.Error
		unavail *socketrpc.UnavailableError
	)
	switch {
	case res == nil:
		o.outcome = "cancelled"
	case o.err != nil && errors.As(o.err, &rpcErr):
		o.outcome = "tool_error"
		var e struct {
			Code int64 `json:"code"`
		}
		if json.Unmarshal(rpcErr.Raw, &e) == nil {
			o.code = &e.Code
		}
	case o.err != nil && errors.Is(o.err, context.DeadlineExceeded):
		o.outcome = "timeout"
	case o.err != nil && errors.Is(o.err, socketrpc.ErrUntrusted):
		o.outcome = "refused"
	case o.err != nil && errors.As(o.err, &unavail):
		o.outcome = "unavailable"
	case o.err != nil && errors.Is(o.err, socketrpc.ErrTooLarge):
		o.outcome = "too_large"
	case o.err != nil:
		o.outcome = "failed"
	case !res.IsError:
		o.outcome = "ok"
	default:
		// Refused before the socket, or a reply that became an error here
		// (too large, not matching its outputSchema). Whoever refused it for
		// a rule the log names said so (Refused).
		o.outcome = "result_error"
		if !o.forwarded {
			o.outcome = "rejected"
		}
	}
}

// spanner is the trace span of a call, as the socket call sees it.
type spanner interface {
	socketSpan(ctx context.Context, method, socket string) (end func(error))
}
