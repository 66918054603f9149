// Package pipeline is the one path of every request that reaches the
// backend, whatever its kind and whichever policy it is served under: a
// tool call (from the go-sdk, the stdio transport's direct path, the CLI),
// a feature's request (a resource read, a prompt's or a completion's
// method) and the server's own read of the grants. Run applies every rule,
// in one order, to all of them; a refusal is a typed value on the request
// (backend.Refused), never a text to parse back.
package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/gate"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/parts"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
)

// Options are what the pipeline is built with: the server's flags that
// its rules read, and what it shares with the server.
type Options struct {
	// MaxResultBytes caps the message that carries one result or error,
	// envelope included (--max-result-bytes, defaulted).
	MaxResultBytes int
	// CallTimeout bounds asking the user about a permission; a call's own
	// timeout is its route's.
	CallTimeout      time.Duration
	MaxInFlight      int           // the slots of calls in flight
	ProgressInterval time.Duration // 0: no notifications/progress
	// Policy is the server's own policy, as the flags built it: its
	// Confirm rules are what the confirmation questions name.
	Policy         policy.Policy
	Prefix         string // the tools' prefix, for discovery
	InsecureSocket bool   // the owner checks are off: say so when a socket closes
	// Parts, if set, holds the results sent in parts: a result larger than
	// the client's agent hands its model whole is sent as its first part.
	// ResultBudget, when over 0, is the budget of every client
	// (--result-budget); else each client's own (parts.BudgetFor).
	Parts        *parts.Store
	ResultBudget int
	// Media, if set, adds the picture a picture capability produced.
	Media    func(media.Call) (mcp.Content, string)
	Logger   zerolog.Logger
	Observer observe.Observer // the audit log and the traces

	// Routes is the server's route table, read on every request that
	// names none (Request.Routes).
	Routes *atomic.Pointer[routes.Table]
	// Ready is the server's gate "the manifests are ready": requests wait
	// for it.
	Ready *gate.Gate
	// Grants is the owner of the macOS permissions: a call refused for
	// one has them read again. HideUngranted says whether the lists wait
	// for their first read (WaitGrants).
	Grants        *permissions.Tracker
	HideUngranted bool
}

// Pipeline is the one path of every request. There is one per process: the
// servers of HTTP header selections share their parent's, and a request
// names the route table of its policy (Request.Routes). It owns what only
// requests use: the slots of requests in flight, the observer, the
// confirmations asked (one key), what the user answered about asking macOS,
// the background checks of results.
type Pipeline struct {
	cfg     Options
	log     zerolog.Logger
	routes  *atomic.Pointer[routes.Table]
	ready   *gate.Gate
	slots   chan struct{} // one token per request in flight
	obs     observe.Observer
	confirm *confirmer
	asker   asker
	checks  checker  // checks results against unadvertised outputSchemas
	warned  sync.Map // tool name → struct{}: its result mismatch was logged
	grants  *permissions.Tracker
	// grantsRead is closed once the grants were first read, or a wait for
	// that gave up (WaitGrants); closed at once when they are not needed
	// (Options.HideUngranted off).
	grantsRead *gate.Gate
}

// New returns the pipeline of a server.
func New(o Options) *Pipeline {
	p := &Pipeline{
		cfg:        o,
		log:        o.Logger,
		routes:     o.Routes,
		ready:      o.Ready,
		slots:      make(chan struct{}, max(o.MaxInFlight, 1)),
		obs:        o.Observer,
		grants:     o.Grants,
		grantsRead: gate.New(),
	}
	p.asker = asker{send: p.Run, refresh: p.grants.Refresh}
	p.confirm = newConfirmer(o.Policy.Confirm) // a route may need it whatever the rules given
	if !o.HideUngranted {
		p.grantsRead.Open()
	}
	return p
}

// Close stops the background checks of results, after those queued.
func (p *Pipeline) Close() { p.checks.stop() }

// GrantsRead is opened once the grants were first read (or are not
// needed): the lists stop waiting for them.
func (p *Pipeline) GrantsRead() *gate.Gate { return p.grantsRead }

// ForgetAsks drops what the user answered about asking macOS for the
// permissions whose status in g changed: it holds until then.
func (p *Pipeline) ForgetAsks(g permissions.Grants) { p.asker.asks.forget(g) }

// GrantsWait bounds how long the first requests whose answer depends on
// what is offered (tools/list, the resource and prompt lists) wait for the
// first read of the grants: a Tairseach app that does not answer within it
// leaves every tool offered until it does.
const GrantsWait = 3 * time.Second

// WaitGrants waits until the grants were first read, at most GrantsWait;
// once one wait gives up, none waits again.
func (p *Pipeline) WaitGrants(ctx context.Context) {
	if p.grantsRead.WaitAtMost(ctx, GrantsWait) {
		p.log.Warn().Dur("waited", GrantsWait).Msg("the macOS permissions are not read yet; every tool is offered until they are")
		p.grantsRead.Open()
	}
}

// ReplyMargin is how far past MaxResultBytes a backend's reply line is
// read: compacting may shrink a reply, escaping only grows it.
const ReplyMargin = 64 << 10
