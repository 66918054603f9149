// Package mcpserver turns a manifest registry into an MCP server: it
// registers one MCP tool per manifest tool, forwards each tools/call as one
// JSON-RPC call on the tool's Unix socket and maps the answer back, and
// provides the transports the server is reached by.
//
// The manifest package decides which tools exist; socketrpc carries the
// calls. This package is the only one that knows MCP.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/gate"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/parts"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Server is the MCP server for one registry at a time. Apply swaps the
// registry; calls in flight finish against the route they started with.
// It owns what every session shares: the one pipeline, the backend
// connections, the grants and the registry. A session is served by a
// policy server (policyserver.go): the base one, of the flags' policy, or
// a header selection's (selection.go).
type Server struct {
	*core
	info []byte // serverInfo as JSON

	meta metaCache // CallDirect's last _meta decoded

	base     *policyServer               // the flags' policy: every session but a header selection's
	attached map[stdio.Notifier]struct{} // stdio sessions served directly; s.mu guards it
	sel      selections                  // the policy servers of HTTP header selections (selection.go)
}

// New builds a server serving reg. With a nil reg the server starts before
// its manifests are loaded: it answers initialize and ping at once, and
// tool requests wait for the first Apply. This lets a client's first
// response not wait for reading the manifests.
func New(cfg Config, reg *manifest.Registry) *Server {
	cfg.setDefaults()
	s := &Server{
		core: &core{
			cfg:     cfg,
			log:     cfg.Logger,
			impl:    &mcp.Implementation{Name: cfg.Name, Title: "Tairseach", Version: cfg.Version},
			ready:   gate.New(),
			clients: make(map[string]*socketrpc.Client),
		},
		attached: make(map[stdio.Notifier]struct{}),
	}
	s.info, _ = json.Marshal(s.impl)
	s.grants = s.newGrants()
	s.base = newPolicyServer(s.core, cfg.Policy, "", s.log)
	s.sel = selections{core: s.core, base: s.base}
	s.pipe = pipeline.New(pipeline.Options{
		MaxResultBytes:   cfg.MaxResultBytes,
		CallTimeout:      cfg.CallTimeout,
		MaxInFlight:      cfg.MaxInFlight,
		ProgressInterval: cfg.ProgressInterval,
		Policy:           cfg.Policy,
		Prefix:           cfg.Prefix,
		InsecureSocket:   cfg.InsecureSocket,
		Media:            cfg.Media,
		Parts:            s.heldParts(),
		ResultBudget:     max(cfg.ResultBudget, 0),
		Logger:           s.log,
		Observer:         observe.Observer{Audit: cfg.Audit, Telemetry: cfg.Telemetry},
		Routes:           &s.base.routes,
		Ready:            s.ready,
		Grants:           s.grants,
		HideUngranted:    cfg.HideUngranted,
	})
	if reg != nil {
		s.Apply(reg)
	}
	return s
}

// heldParts is the store of results sent in parts; nil when results are
// sent whole.
func (s *Server) heldParts() *parts.Store {
	if s.cfg.ResultBudget < 0 {
		return nil
	}
	return parts.NewStore(s.cfg.HeldBytes, s.cfg.HeldFor)
}

// Ready is closed once the server has a registry: tool requests wait for it.
func (s *Server) Ready() <-chan struct{} { return s.ready.Opened() }

// MCP returns the underlying go-sdk server, with every tool registered, for
// transports that serve it.
func (s *Server) MCP() *mcp.Server { return s.base.sdk() }

// Close closes the backend connections and stops the background checks of
// results.
func (s *Server) Close() error {
	s.pipe.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		_ = c.Close()
	}
	return nil
}

// Apply makes reg the served registry. Only tools whose visible definition
// changed are removed and re-added, so an unchanged registry sends no
// notifications/tools/list_changed; a change of routing alone is silent.
func (s *Server) Apply(reg *manifest.Registry) routes.Change {
	for _, f := range s.cfg.Features {
		f.Update(reg) // first: see Feature.Update
	}
	ch := s.apply(reg)
	s.grants.Refresh() // new manifests may map permissions.list anew
	return ch
}

// apply is Apply, without reading the grants again.
func (s *Server) apply(reg *manifest.Registry) routes.Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(reg)
}

// applyLocked is apply with s.mu held.
func (s *Server) applyLocked(reg *manifest.Registry) routes.Change {
	ch := s.base.apply(reg)
	s.reg = reg
	for _, f := range s.sel.servers {
		f.apply(reg)
	}
	if s.ready.Open() {
		// The first registry: no client can have seen a list yet, as tool
		// requests waited for this.
		return ch
	}
	// Stdio sessions are told here (their transport drops the go-sdk's own
	// notification, which it also sends when it is first given the tools);
	// the go-sdk notifies the other sessions.
	if !ch.Empty() {
		for n := range s.attached {
			n.Notify("notifications/tools/list_changed")
		}
	}
	return ch
}

// Lookup reports the route of an exposed tool.
func (s *Server) Lookup(name string) (manifest.Tool, bool) {
	r, ok := s.base.routes.Load().ByName[name]
	if !ok {
		return manifest.Tool{}, false
	}
	return r.Tool, true
}

// Call calls tool name with args for the CLI (call, doctor): the same
// pipeline as a client's call, with no session to report progress on or to
// ask the user through. It returns nil when ctx was cancelled.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	res, _ := s.CallTool(ctx, name, args)
	return res
}

// CallTool is Call, with the rule that refused the call when one did: nil when
// the call was made (whatever its result). The CLI's exit status tells
// them apart.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, *backend.Refused) {
	c := &pipeline.Request{Kind: backend.Tool, Name: name, Args: args, Info: observe.CallInfo{Transport: "cli"}, Routes: &s.base.routes}
	return s.pipe.Run(ctx, c), c.Refused()
}

// HasTool implements CallHandler.
func (s *Server) HasTool(name string) bool {
	_, ok := s.base.routes.Load().ByName[name]
	return ok
}

// Attach implements CallHandler.
func (s *Server) Attach(n stdio.Notifier) (detach func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attached[n] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.attached, n)
	}
}

// RegisterWithSDK implements CallHandler. Registering costs the SDK tens of
// microseconds a tool, so it is done only when a session or transport needs
// the SDK to answer tool requests itself; from then on Apply keeps the SDK
// in step. It waits for the first registry.
func (s *Server) RegisterWithSDK() { s.base.sync() }

// Grants are the macOS permissions the Tairseach app holds, as last read.
// With Config.HideUngranted, a tool whose permission is denied, restricted
// or not determined is left out as the flags' policy leaves tools out:
// from tools/list, discovery, and the resources, prompts and completions
// that would call its method; a call of it by name is answered with the
// permission and how to grant it. Nothing is left out while the grants are
// unknown (no manifest maps permissions.list, or the app does not answer).

// TrackPermissions reads the macOS permissions now, whenever a call is
// refused for one, after the user asks macOS for one, and every interval
// (0: a minute) until ctx ends, never more often than the settle period,
// and leaves out what cannot work (see Config.HideUngranted). It returns
// when ctx ends.
func (s *Server) TrackPermissions(ctx context.Context) {
	s.grants.Start(ctx)
	select {
	case <-s.grants.FirstRead():
		s.pipe.GrantsRead().Open()
	case <-ctx.Done():
	}
	<-ctx.Done()
	_ = s.grants.Close()
}

// ReadPermissions reads the macOS permissions once, for the commands that
// call or list tools (call, tools, doctor): what they show and call is
// what a client would be offered. A read that fails returns its error and
// the grants read before it, if any.
func (s *Server) ReadPermissions(ctx context.Context) (permissions.Grants, error) {
	defer s.pipe.GrantsRead().Open()
	st := s.grants.Read(ctx)
	return st.Grants, st.Err
}

// regrant applies the registry again after the grants changed: the routes
// read them from the tracker, and clients are told when the lists
// changed. The tracker calls it at most once per settle period
// (Config.PermissionsSettle).
func (s *Server) regrant() {
	s.pipe.ForgetAsks(s.grants.Grants()) // what the user answered holds until the permission changes
	if !s.cfg.HideUngranted {
		return
	}
	// The registry is read and applied again under one lock: a reload
	// between the two would otherwise be undone by the older registry.
	s.mu.Lock()
	var ch routes.Change
	reg := s.reg
	if reg != nil {
		ch = s.applyLocked(reg)
	}
	s.mu.Unlock()
	if reg == nil {
		return
	}
	if !ch.Empty() {
		s.log.Info().Strs("added", ch.Added).Strs("removed", ch.Removed).Msg("tools offered changed with the macOS permissions")
	}
	for _, f := range s.cfg.Features {
		f.Resync()
	}
}

// readGrants reads permissions.list through the one pipeline, as the server's
// own request: the grants are read whatever the flags serve, but only
// where a manifest maps the method. It takes no slot of the calls in
// flight, and its route has a connection of its own (grantsClient): calls
// busy on every connection cannot make it wait.
func (s *Server) readGrants(ctx context.Context) (json.RawMessage, error) {
	// Before the manifests, the pipeline waits for them.
	if s.ready.IsOpen() && s.base.routes.Load().Internal[permissions.MethodList] == nil {
		return nil, errNoGrants
	}
	return s.base.Do(ctx, &backend.Request{Kind: backend.Permissions, Target: "permissions", Method: permissions.MethodList, Params: json.RawMessage("{}")})
}

// errNoGrants is a registry that maps no permissions.list: the grants
// known are forgotten.
var errNoGrants = fmt.Errorf("no manifest maps permissions.list: %w", permissions.ErrNoSource)

// newGrants is the one owner of a server's grants: it reads them
// (readGrants), coalesced and at most once per settle period, and has the
// routes applied again when they change. The servers of header selections
// share their parent's.
func (s *Server) newGrants() *permissions.Tracker {
	return permissions.NewTracker(permissions.Options{
		Read:        s.readGrants,
		Interval:    s.cfg.PermissionsInterval,
		MinInterval: s.cfg.PermissionsSettle,
		OnChange:    func(_, _ permissions.Grants) { s.regrant() },
		Logger:      s.log,
	})
}
