// Package backend is what the features of mcpserver (resources, prompts,
// completion) know of the one road to the Tairseach socket. A feature says
// what a client asked for and which socket method answers it; the road
// (mcpserver's pipeline) applies every rule a tool call meets — the
// policy of the session that asked, the method's inputSchema,
// confirmation, a slot, the audit log and traces, the size limit — and
// makes the call. A feature never reaches a socket itself and decides no
// policy.
package backend

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

// Kind is the kind of request that reaches the backend.
type Kind string

// The kinds of request the road carries. Each is named in the audit log
// and the traces.
const (
	Tool       Kind = "tool"       // tools/call
	Resource   Kind = "resource"   // resources/read of a fixed resource
	Template   Kind = "template"   // resources/read of a URI of a declared template
	Completion Kind = "completion" // completion/complete from a method
	// Permissions is the server's own: reading the macOS permissions, and
	// asking macOS for one the user agreed to be asked about. It is not
	// a client's request of a tool, so no session's policy applies, but
	// only the methods a manifest maps are called.
	Permissions Kind = "permissions"
)

// Request is one request of a feature for the backend.
type Request struct {
	Kind Kind
	// Target is what the client asked for: the resource's URI, or for a
	// completion the reference and the argument ("ref/prompt find-contact
	// name").
	Target string
	// Method is the socket method that answers it, and Params its params.
	Method string
	Params json.RawMessage
	// Manifest is the file of the manifest that declares the target: the
	// method is called as that manifest's tool of it is. "" takes any
	// served tool that calls Method (a prompt file's completion).
	Manifest string
	// From is the client's request, which says who asked: its session,
	// client, protocol, request id and _meta. nil when nobody did (a
	// subscription's own read).
	From mcp.Request
}

// Road takes a Request to the backend. It returns the backend's reply, or
// why there is none: a *Refused when a rule stopped the request before the
// socket, else the error of the socket call (a *socketrpc.Error for the
// backend's own JSON-RPC error).
type Road interface {
	Do(ctx context.Context, r *Request) (json.RawMessage, error)
}

// View is what a go-sdk server's features are given: the road, and the
// policy of the sessions the server serves, to ask which tools it hides
// ("" when it serves t; else why not).
type View struct {
	Road  Road
	Hides func(t manifest.Tool) string
}

// Refused is a request a rule stopped before the socket, or whose reply
// a rule kept from the client. The rule is decided where the request is
// refused and travels as this value: nobody reads it back from Message.
type Refused struct {
	Rule    Rule
	Message string // why, and what to do about it
}

// Rule names the rule that refused a request.
type Rule string

// The rules a request can be refused by.
const (
	RuleHidden           Rule = "hidden"            // the session's policy serves no tool of the method
	RuleUnknownMethod    Rule = "unknown_method"    // no tool served here calls the method
	RuleInvalidArguments Rule = "invalid_arguments" // the params do not match the method's inputSchema
	RuleNotConfirmed     Rule = "not_confirmed"     // the user did not confirm, or could not be asked
	RuleBusy             Rule = "busy"              // no slot within the timeout
	RuleTooLarge         Rule = "too_large"         // the reply makes a message over the size limit
	RuleUnknownTool      Rule = "unknown_tool"      // no tool of that name is served
	RulePermission       Rule = "permission"        // the tool needs a macOS permission that is not granted
	RuleInternal         Rule = "internal_error"    // serving it panicked: a bug of tairseach-mcp
	RuleOther            Rule = "other"
)

func (e *Refused) Error() string { return e.Message }

// IsRefused reports whether err is a request a rule refused, and which.
func IsRefused(err error) (*Refused, bool) {
	var r *Refused
	ok := errors.As(err, &r)
	return r, ok
}
