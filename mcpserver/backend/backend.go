// Package backend is what the features of mcpserver (resources, prompts,
// completion) know of the one pipeline to the Tairseach socket. A feature
// says what a client asked for and which socket method answers it; the
// pipeline (mcpserver/pipeline, reached through a Caller) applies every rule
// a tool call meets — the policy of the session that asked, the method's
// inputSchema, confirmation, a slot, the audit log and traces, the size
// limit — and makes the call. A feature never reaches a socket itself and
// decides no policy.
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

// The kinds of request the pipeline carries. Each is named in the audit log
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

// Caller takes a Request to the backend, through the pipeline. It returns
// the backend's reply, or why there is none: a *Refused when a rule
// stopped the request before the socket, else the error of the socket call
// (a *socketrpc.Error for the backend's own JSON-RPC error).
type Caller interface {
	Do(ctx context.Context, r *Request) (json.RawMessage, error)
}

// View is what a go-sdk server's features are given: its Caller, and the
// policy of the sessions the server serves, to ask which tools it hides
// ("" when it serves t; else why not).
type View struct {
	Caller Caller
	Hides  func(t manifest.Tool) string
}

// Refused is a request a rule stopped before the socket, or whose reply
// a rule kept from the client. The rule is decided where the request is
// refused and travels as this value: nobody reads it back from Message.
type Refused struct {
	Rule    Rule
	Message string // why, and what to do about it
}

// Rule is a rule that refuses a request, with everything said of it
// elsewhere: what the audit log records, how the call command exits
// (Input), and its line in docs/policy.md (made from Rules by go test
// ./mcpserver/ -run TestPolicyDocListsEveryRule -update). A rule is made
// by newRule only, so that none is half added.
type Rule struct {
	Name string // as tests and logs name it
	// Outcome is the audit log's outcome of a request it refused, set
	// where it refuses; "" leaves it to the log (Logged says what it is).
	Outcome string
	// Input is what of the caller's request the rule refuses, when the
	// fault is the caller's: the call command exits 2 for it, a usage
	// error, and a feature's request gets invalid params. A refusal for
	// the server's state or the user's choice is a failed call (exit 1).
	Input  Input
	Logged string // what the audit log records, for docs/policy.md
	Doc    string // what it refuses, for docs/policy.md
}

// Input is what of the caller's request a rule refuses, if anything.
type Input int

// What a rule can refuse of the caller's request.
const (
	NotInput       Input = iota // nothing: the request was the caller's to make
	InputName                   // the tool or method it names
	InputArguments              // its arguments
	InputSchema                 // its arguments, for not matching the tool's inputSchema: call says the tool's parameters too
)

func (r Rule) String() string { return r.Name }

var rules []Rule

// newRule makes a rule and adds it to Rules. An outcome of "" leaves the
// audit log's outcome to the log, which records what logged says.
func newRule(name, outcome string, input Input, logged, doc string) Rule {
	if outcome != "" {
		logged = "`" + outcome + "`"
	}
	r := Rule{Name: name, Outcome: outcome, Input: input, Logged: logged, Doc: doc}
	rules = append(rules, r)
	return r
}

// Rules are every rule a request can be refused by, in the order made.
func Rules() []Rule { return rules }

// The rules a request can be refused by.
var (
	RuleHidden           = newRule("hidden", "", InputName, "`rejected`", "the session's policy (the flags, a header selection) serves no tool of that name or method")
	RuleUnknownMethod    = newRule("unknown_method", "", InputName, "`rejected`", "a feature's request names a method no tool served here calls")
	RuleInvalidArguments = newRule("invalid_arguments", "invalid_arguments", InputSchema, "", "the arguments (a feature's params) do not match the tool's inputSchema")
	RuleNotConfirmed     = newRule("not_confirmed", "", NotInput, "`declined`, `unanswered`, or `refused` when the client cannot ask", "the user did not confirm the call (--confirm), or could not be asked")
	RuleBusy             = newRule("busy", "busy", NotInput, "", "no slot of --max-in-flight freed within the call's timeout")
	RuleTooLarge         = newRule("too_large", "", NotInput, "`too_large` (a reply refused as it is read), `result_error` (an answer that would be too large)", "the answer makes a message over --max-result-bytes")
	RuleUnknownTool      = newRule("unknown_tool", "unknown_tool", NotInput, "", "no tool of that name is served (a reload may have removed it)")
	RulePermission       = newRule("permission", "", NotInput, "`rejected`", "the tool needs a macOS permission the app does not hold (--hide-ungranted)")
	RuleInternal         = newRule("internal_error", "internal_error", NotInput, "", "serving the request panicked: a bug of tairseach-mcp")
	RuleOther            = newRule("other", "", NotInput, "`rejected`", "any other refusal: a discovery tool's or the part tool's own arguments, a held result not found")
)

func (e *Refused) Error() string { return e.Message }

// IsRefused reports whether err is a request a rule refused, and which.
func IsRefused(err error) (*Refused, bool) {
	var r *Refused
	ok := errors.As(err, &r)
	return r, ok
}
