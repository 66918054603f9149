package observe

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
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
	start, end  time.Time
	info        CallInfo
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

	// id names the call in its audit line (call_id) and is the span id of
	// its span, so that one leads to the other.
	id     [8]byte
	traced bool      // telemetry is on: trace is the call's
	trace  callTrace // its span's trace

	own []byte // args copied, when the line waits for a later write (keep)
}

// calls holds the Calls ended and recorded, for the next ones: a Call is
// 400 bytes a call to the garbage collector otherwise, and, with the
// audit log's Delay, lives until the write after its end.
var calls = sync.Pool{New: func() any { return new(Call) }}

// newCall returns an empty Call.
func newCall() *Call { return calls.Get().(*Call) }

// maxOwn is the largest copy of arguments a freed Call keeps for the next.
const maxOwn = 4 << 10

// free empties o and gives it back to calls, with the buffer of its copy
// of arguments, cleared: arguments may hold secrets, which a Call waiting
// in the pool must not keep; nothing may hold o after.
func (o *Call) free() {
	clear(o.own)
	own := o.own[:0]
	if cap(own) > maxOwn {
		own = nil
	}
	*o = Call{own: own}
	calls.Put(o)
}

// keep copies o's arguments into o, for a line made after the call has
// returned: they may lie in a buffer its transport reads the next request
// into.
func (o *Call) keep() {
	o.own = append(o.own[:0], o.args...)
	o.args = o.own
}

// callTrace is what a traced call keeps for its span, made at its end.
type callTrace struct {
	name       string // the tool (or target) as the request named it
	traceID    [16]byte
	parent     [8]byte // the client's span, from its traceparent; zero: none
	remote     bool    // parent came from the client
	sampled    bool    // the spans are exported
	flags      byte    // W3C trace flags
	traceState string
}

// newSpanID returns 8 random bytes, not all zero (a valid span id).
func newSpanID() (id [8]byte) {
	for id == ([8]byte{}) {
		putUint64(id[:], rand.Uint64())
	}
	return id
}

func putUint64(b []byte, v uint64) {
	_ = b[7]
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}

// ID is the call's id as its audit line gives it: 16 hexadecimal digits,
// the span id of its span when it is traced.
func (o *Call) ID() string { return hex.EncodeToString(o.id[:]) }

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

// Forward records the socket call that do makes of method on socket.
func (o *Call) Forward(ctx context.Context, method, socket string, do func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	o.method, o.socket, o.forwarded = method, socket, true
	out, err := do(ctx)
	o.err = err
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
	switch {
	case res == nil:
		o.outcome = "cancelled"
	case o.err != nil:
		o.outcome = o.failed()
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

// failed names the outcome of a call its socket client failed, and keeps
// the backend's JSON-RPC error code. A function of its own: the errors
// errors.As fills escape to the heap, which the usual call should not pay.
func (o *Call) failed() string {
	var (
		rpcErr  *socketrpc.Error
		unavail *socketrpc.UnavailableError
	)
	switch {
	case errors.As(o.err, &rpcErr):
		var e struct {
			Code int64 `json:"code"`
		}
		if json.Unmarshal(rpcErr.Raw, &e) == nil {
			o.code = &e.Code
		}
		return "tool_error"
	case errors.Is(o.err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(o.err, socketrpc.ErrUntrusted):
		return "refused"
	case errors.As(o.err, &unavail):
		return "unavailable"
	case errors.Is(o.err, socketrpc.ErrTooLarge):
		return "too_large"
	}
	return "failed"
}
