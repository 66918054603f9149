// Package mcpserver turns a manifest registry into an MCP server: it
// registers one MCP tool per manifest tool, forwards each tools/call as one
// JSON-RPC call on the tool's Unix socket and maps the answer back, and
// provides the transports the server is reached by.
//
// The manifest package decides which tools exist; socketrpc carries the
// calls. This package is the only one that knows MCP.
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/gate"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/sdkadd"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Server is the MCP server for one registry at a time. Apply swaps the
// registry; calls in flight finish against the route they started with.
type Server struct {
	cfg  Config
	log  zerolog.Logger
	mcp  *mcp.Server
	info []byte // serverInfo as JSON

	lastMeta atomic.Pointer[directMeta] // CallDirect's last _meta decoded (serve.go)

	routes atomic.Pointer[routes.Table] // read on every call
	// grants owns the macOS permissions as last read (grants.go); the
	// servers of header selections share their parent's.
	grants *permissions.Tracker
	ready  *gate.Gate         // "the manifests are ready": opened by the first Apply
	pipe   *pipeline.Pipeline // the one road of every request that reaches the backend

	mu         sync.Mutex // serialises Apply; guards the fields below
	clients    map[string]*socketrpc.Client
	sdkSynced  bool                        // the SDK's server has every tool (RegisterWithSDK)
	attached   map[stdio.Notifier]struct{} // stdio sessions served directly
	reg        *manifest.Registry          // the registry applied last
	selections map[string]*Server          // by Policy.Key: servers of HTTP header selections (policy_http.go)
	// sessionSelections are the header selections' servers by the
	// sessions they began; sessionsKept, how many were left at the last
	// pruning (policy_http.go).
	sessionSelections map[string]*Server
	sessionsKept      int
	sessionsBound     atomic.Int64 // len(sessionSelections), read without mu

	// A header selection's server: its key, its last request in Unix
	// nanoseconds, and its requests being served (policy_http.go).
	selectionKey string
	lastUsed     atomic.Int64
	busy         atomic.Int64
}

// New builds a server serving reg. With a nil reg the server starts before
// its manifests are loaded: it answers initialize and ping at once, and
// tool requests wait for the first Apply. This lets a client's first
// response not wait for reading the manifests.
func New(cfg Config, reg *manifest.Registry) *Server {
	cfg.setDefaults()
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		ready:    gate.New(),
		clients:  make(map[string]*socketrpc.Client),
		attached: make(map[stdio.Notifier]struct{}),
	}
	s.grants = s.newGrants()
	s.pipe = pipeline.New(pipeline.Options{
		MaxResultBytes:   cfg.MaxResultBytes,
		CallTimeout:      cfg.CallTimeout,
		MaxInFlight:      cfg.MaxInFlight,
		ProgressInterval: cfg.ProgressInterval,
		Confirm:          cfg.Confirm,
		Prefix:           cfg.Prefix,
		InsecureSocket:   cfg.InsecureSocket,
		Media:            cfg.Media,
		Logger:           s.log,
		Observer:         observe.Observer{Audit: cfg.Audit, Telemetry: cfg.Telemetry},
		Routes:           &s.routes,
		Ready:            s.ready,
		Grants:           s.grants,
		HideUngranted:    cfg.HideUngranted,
	})
	s.routes.Store(routes.Empty())
	impl := &mcp.Implementation{Name: cfg.Name, Title: "Tairseach", Version: cfg.Version}
	s.info, _ = json.Marshal(impl)
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(newSlogHandler(cfg.Logger)),
		SetCacheable: setCacheFields,
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true},
			// Deprecated by 2026-07-28, still part of 2025-11-25,
			// whose clients (and the conformance suite) use logging/setLevel.
			//lint:ignore SA1019 see above
			Logging: &mcp.LoggingCapabilities{},
		},
	}
	view := backend.View{Road: s, Hides: func(t manifest.Tool) string { return s.hides(t).Text }}
	register := make([]func(*mcp.Server), 0, len(cfg.Features))
	for _, f := range cfg.Features {
		register = append(register, f.Attach(opts, view))
	}
	s.mcp = mcp.NewServer(impl, opts)
	for _, r := range register {
		r(s.mcp)
	}
	// Tool requests reach the SDK only from sessions whose tools were
	// registered with it; this guards any path that was missed.
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			// First, as registering with the SDK tells the sessions the
			// tools changed.
			if res := s.notRegistered(ctx, method, req); res != nil {
				return res, nil
			}
			if method == "tools/list" || method == "tools/call" {
				s.RegisterWithSDK()
			}
			if waitsForManifests[method] || method == "tools/list" {
				if err := s.ready.Wait(ctx); err != nil {
					return nil, err
				}
				// What is offered depends on the grants too: a client
				// that lists as it starts, and ignores list_changed, would
				// otherwise keep offering what cannot work.
				s.pipe.WaitGrants(ctx)
			}
			if (method == "initialize" || method == "server/discover") && s.cfg.HideUngranted {
				// The first answer tells the model what is not offered for
				// want of a permission: it waits for the first read of the
				// grants, with tools/list's bound.
				s.pipe.WaitGrants(ctx)
			}
			res, err := next(ctx, method, req)
			if err != nil || !s.cfg.HideUngranted {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				if line := s.unavailable(); line != "" {
					cp := *r
					cp.Instructions += line
					res = &cp
				}
			case *mcp.DiscoverResult:
				if line := s.unavailable(); line != "" {
					cp := *r
					cp.Instructions += line
					res = &cp
				}
			}
			return res, err
		}
	})
	// The key words first in the instructions (instructions.go), before
	// all the one above completes them with.
	s.mcp.AddReceivingMiddleware(s.keywordsFirst)
	// Outermost, so that it measures what every other middleware returns.
	s.mcp.AddReceivingMiddleware(s.boundMessages)
	if reg != nil {
		s.Apply(reg)
	}
	return s
}

// waitsForManifests are the requests, besides the tools', whose answer
// depends on what the manifests declare (resources, templates, prompts and
// their completions): like tools/list they wait for the first registry, so
// that a client asking at once is not told of none and a read of a declared
// resource is not "not found". Apply gives each registry to the features
// before the server, so they have it when the wait ends.
var waitsForManifests = map[string]bool{
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true,
}

// Ready is closed once the server has a registry: tool requests wait for it.
func (s *Server) Ready() <-chan struct{} { return s.ready.Opened() }

// MCP returns the underlying go-sdk server, with every tool registered, for
// transports that serve it.
func (s *Server) MCP() *mcp.Server {
	s.RegisterWithSDK()
	return s.mcp
}

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
	table, ch := routes.Build(reg, s.routeOptions(), s.routes.Load())

	// Route first, so a tool is callable as soon as a client can see it.
	s.routes.Store(table)
	s.reg = reg
	for _, n := range s.selections {
		n.apply(reg)
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
	if !s.sdkSynced {
		return ch
	}
	if len(ch.Removed) > 0 {
		s.mcp.RemoveTools(ch.Removed...)
	}
	for _, name := range append(ch.Added, ch.Changed...) {
		if err := s.addTool(table.Defs[name]); err != nil {
			s.log.Error().Str("tool", name).Err(err).Msg("registering tool")
		}
	}
	return ch
}

// addTool registers def with the SDK, which panics on schemas it dislikes.
func (s *Server) addTool(def *mcp.Tool) error {
	return sdkadd.Add(func() { s.mcp.AddTool(def, s.handle) })
}

// routeOptions are what the server's route table is built under besides
// the registry: its policy, the grants as last read, its sockets' clients
// and its flags. s.mu must be held.
func (s *Server) routeOptions() routes.Options {
	return routes.Options{
		Policy:        s.cfg.Policy,
		HideUngranted: s.cfg.HideUngranted,
		Grants:        s.grants.Grants(),
		Client:        s.client,
		GrantsClient:  s.grantsClient,
		CallTimeout:   s.cfg.CallTimeout,
		OutputSchemas: s.cfg.OutputSchemas,
		CheckOutputs:  s.cfg.CheckOutputs,
		Confirm:       s.cfg.Confirm,
		Discover:      s.cfg.ToolMode == ToolModeDiscover,
		Prefix:        s.cfg.Prefix,
		Log:           s.log,
	}
}

// client returns the pooled client of a backend socket. s.mu must be held.
func (s *Server) client(path string) *socketrpc.Client { return s.pooled("", path, s.cfg.PoolSize) }

// pooled returns the client of a backend socket for use, with a pool of
// size connections of its own. s.mu must be held.
func (s *Server) pooled(use, path string, size int) *socketrpc.Client {
	key, resolve := use+path, (func() string)(nil)
	if path == "" {
		path, resolve = s.cfg.DefaultSocket, s.cfg.ResolveSocket
	}
	c, ok := s.clients[key] // use+"" is the default socket's, however it resolves
	if !ok {
		c = socketrpc.New(path, socketrpc.Options{
			Resolve:  resolve,
			PoolSize: size,
			// A reply's result or error cannot make a message smaller than
			// itself, so a reply over the message limit is refused as it is
			// read; the margin is the reply's own envelope.
			MaxResponseBytes: s.cfg.MaxResultBytes + pipeline.ReplyMargin,
			Insecure:         s.cfg.InsecureSocket,
			Logger:           s.log,
		})
		s.clients[key] = c
	}
	return c
}

// Lookup reports the route of an exposed tool.
func (s *Server) Lookup(name string) (manifest.Tool, bool) {
	r, ok := s.routes.Load().ByName[name]
	if !ok {
		return manifest.Tool{}, false
	}
	return r.Tool, true
}

// handle is the go-sdk handler of every tool it lists.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := pipeline.SDKCall(req)
	c.Routes = &s.routes
	if res := s.pipe.Run(ctx, c); res != nil {
		return res, nil
	}
	// Cancelled by the client: the transport drops the response.
	return nil, ctx.Err()
}

// Call calls tool name with args for the CLI (call, doctor): the same
// pipeline as a client's call, with no session to report progress on or to
// ask the user through. It returns nil when ctx was cancelled.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	res, _ := s.Try(ctx, name, args)
	return res
}

// Try is Call, with the rule that refused the call when one did: nil when
// the call was made (whatever its result). The CLI's exit status tells
// them apart.
func (s *Server) Try(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, *backend.Refused) {
	c := &pipeline.Request{Kind: backend.Tool, Name: name, Args: args, Info: observe.CallInfo{Transport: "cli"}, Routes: &s.routes}
	return s.pipe.Run(ctx, c), c.Refused()
}

// notRegistered answers, for the go-sdk, a tools/call of a tool it does not
// list: one the policy hides (with the reason), and in discovery mode a
// discovery tool or a tool served but not listed. They go through the same
// pipeline as every other call; the go-sdk need not register them, which
// would tell the session the tools changed.
func (s *Server) notRegistered(ctx context.Context, method string, req mcp.Request) mcp.Result {
	if method != "tools/call" {
		return nil
	}
	call, ok := req.(*mcp.CallToolRequest)
	if !ok || call.Params == nil {
		return nil
	}
	if s.ready.Wait(ctx) != nil {
		return nil
	}
	table := s.routes.Load()
	name := call.Params.Name
	_, hidden := table.Hidden[name]
	_, served := table.ByName[name]
	discovery := table.Discover != nil && table.Discover.Defs[name] != nil
	if !hidden && !(table.Discover != nil && served) && !discovery {
		return nil
	}
	c := pipeline.SDKCall(call)
	c.Routes = &s.routes
	res := s.pipe.Run(ctx, c)
	if res == nil {
		return nil // cancelled: the go-sdk's own handler answers
	}
	if call.ProtocolVersion() >= stdio.NewProtocol {
		return check.Typed{CallToolResult: res}
	}
	return res
}

// HasTool implements CallHandler.
func (s *Server) HasTool(name string) bool {
	_, ok := s.routes.Load().ByName[name]
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
func (s *Server) RegisterWithSDK() {
	<-s.ready.Opened()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sdkSynced {
		return
	}
	s.sdkSynced = true
	defs := s.routes.Load().Defs
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if err := s.addTool(defs[name]); err != nil {
			s.log.Error().Str("tool", name).Err(err).Msg("registering tool")
		}
	}
}

// Do implements backend.Road: a feature's request goes through the
// pipeline of every tool call, under this server's policy (a header
// selection's, for the sessions of its selection).
func (s *Server) Do(ctx context.Context, br *backend.Request) (json.RawMessage, error) {
	c := &pipeline.Request{Kind: br.Kind, Name: br.Target, Args: br.Params, Method: br.Method, Manifest: br.Manifest, Routes: &s.routes}
	if br.From != nil {
		var meta map[string]any
		if p := br.From.GetParams(); p != nil {
			meta = p.GetMeta()
		}
		pipeline.From(c, br.From, meta)
	} else {
		c.Own = br.Kind == backend.Permissions
		c.Info.Transport, c.Info.Kind = "internal", string(br.Kind)
	}
	res := s.pipe.Run(ctx, c)
	switch {
	case res == nil:
		return nil, cmp.Or(ctx.Err(), context.Canceled)
	case c.Failure() != nil:
		return nil, c.Failure()
	case c.Refused() != nil:
		return nil, c.Refused()
	case res.IsError:
		return nil, &backend.Refused{Rule: backend.RuleOther, Message: check.ResultText(res)}
	}
	return json.RawMessage(check.ResultText(res)), nil
}

// hides says why s leaves t out, by the rule of its route table: the
// flags' (or a header selection's) policy, else a permission not granted;
// the zero Reason when t is served.
func (s *Server) hides(t manifest.Tool) policy.Reason {
	o := routes.Options{Policy: s.cfg.Policy, HideUngranted: s.cfg.HideUngranted, Grants: s.grants.Grants()}
	return o.Hides(t)
}

// regrant applies the registry again after the grants changed: the routes
// read them from the tracker, and clients are told when the lists
// changed. The tracker calls it at most once per settle period
// (Config.PermissionsSettle).
func (s *Server) regrant() {
	s.pipe.ForgetAsks(s.grants.Grants()) // what the user answered holds until the permission changes
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	if reg == nil || !s.cfg.HideUngranted {
		return
	}
	if ch := s.apply(reg); !ch.Empty() {
		s.log.Info().Strs("added", ch.Added).Strs("removed", ch.Removed).Msg("tools offered changed with the macOS permissions")
	}
	for _, f := range s.cfg.Features {
		f.Resync()
	}
}

// readGrants reads permissions.list through the one road, as the server's
// own request: the grants are read whatever the flags serve, but only
// where a manifest maps the method. It takes no slot of the calls in
// flight, and its route has a connection of its own (grantsClient): calls
// busy on every connection cannot make it wait.
func (s *Server) readGrants(ctx context.Context) (json.RawMessage, error) {
	// Before the manifests, the road waits for them.
	if s.ready.IsOpen() && s.routes.Load().Internal[permissions.MethodList] == nil {
		return nil, errNoGrants
	}
	return s.Do(ctx, &backend.Request{Kind: backend.Permissions, Target: "permissions", Method: permissions.MethodList, Params: json.RawMessage("{}")})
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

// unavailable is the line the instructions of initialize add when tools
// are left out for permissions, or "".
func (s *Server) unavailable() string {
	t := s.routes.Load()
	by := map[string][]string{}
	for _, h := range t.Blocked {
		k := quote.Line(h.Perm, quote.Name) + " (" + string(h.Status) + ")"
		by[k] = append(by[k], h.Name)
	}
	if len(by) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		tools := "tools"
		if len(by[k]) == 1 {
			tools = "tool"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s", k, len(by[k]), tools))
	}
	return " Some capabilities are unavailable because macOS has not granted Tairseach the permission they need, so their tools are not offered: " +
		strings.Join(parts, "; ") + ". If the user asks for one, tell them which permission it needs: they can give it in the Tairseach app's Permissions view, or in System Settings › Privacy & Security."
}

// grantsClient is the client of the server's own reads of the grants on a
// backend socket: one connection of its own, apart from the pool of the
// calls. s.mu must be held.
func (s *Server) grantsClient(path string) *socketrpc.Client { return s.pooled("grants:", path, 1) }
