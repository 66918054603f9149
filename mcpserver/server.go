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
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Defaults for Config fields left zero.
const (
	// DefaultCallTimeout covers the real server's slowest methods: its
	// script runner allows a script 60 s, and location.get waits for a
	// timeout the user sets.
	DefaultCallTimeout    = 90 * time.Second
	DefaultMaxResultBytes = 8 << 20
	// MinMaxResultBytes is the least MaxResultBytes that leaves room for a
	// result besides the envelope.
	MinMaxResultBytes  = 4 << 10
	DefaultPoolSize    = socketrpc.DefaultPoolSize
	DefaultMaxInFlight = 64
)

// instructions tell the model how to read what the tools return.
const instructions = `These tools reach the user's own machine through the local Tairseach server (contacts, calendar, mail, files, credentials and more). ` +
	`A successful call returns the server's JSON result. A failed call returns isError with the server's JSON-RPC error as {"error":{"code","message","data"}}: ` +
	`-32001 means the user must grant a permission (follow data.remediation), -32002 not found, -32602 bad arguments (fix them and retry). ` +
	`If the server is unreachable or times out, tell the user; retrying at once rarely helps.`

// Config is what the server needs to know; every field has a usable zero
// value except DefaultSocket.
type Config struct {
	Name          string // serverInfo.name; "tairseach-mcp" when empty
	Version       string // serverInfo.version
	DefaultSocket string // socket of tools whose manifest names none
	// ResolveSocket, if set, chooses the default socket's path anew for
	// each new connection (DefaultSocket is then where it pointed at
	// start): a server that creates its socket later, or elsewhere, is
	// found without a restart.
	ResolveSocket func() string
	CallTimeout   time.Duration
	// MaxResultBytes caps the JSON-RPC message that carries one tool
	// result or backend error to the client, envelope included: a larger
	// one becomes an isError result naming its size, instead of a message
	// the client would reject (the TypeScript SDK drops the whole stdio
	// session over 10 MiB).
	MaxResultBytes int
	// OutputSchemas publishes each tool's outputSchema and returns the
	// result as structuredContent, validated against it: a result that does
	// not match becomes isError (--output-schemas=strict).
	OutputSchemas bool
	// CheckOutputs, when OutputSchemas is false, checks each result against
	// its manifest's outputSchema anyway, without changing the result, and
	// logs one warning per tool on its first mismatch
	// (--output-schemas=warn).
	CheckOutputs bool
	PoolSize     int // socket connections per backend
	// InsecureSocket skips the checks that a socket and the process behind
	// it belong to this user.
	InsecureSocket bool
	// MaxInFlight caps concurrent tool calls; a call over it waits for a
	// slot until its timeout, then fails as busy.
	MaxInFlight int
	Logger      zerolog.Logger
	// Policy chooses the tools served; the zero value serves all.
	Policy Policy
	// ToolMode is "all" (or empty): every tool served is listed; or
	// "discover": tools/list lists three tools that search, describe and
	// call the tools served (see discover.go).
	ToolMode string
	// Prefix names the discovery tools, like the manifests' tools.
	Prefix string

	// ProgressInterval is how often a call whose request carries a
	// progressToken sends notifications/progress; 0 sends none.
	ProgressInterval time.Duration
	// Confirm lists the tools whose calls the user must confirm first,
	// from ParseConfirm; empty: none.
	Confirm []string
	// Audit, if set, records every call.
	Audit *Audit
	// Telemetry, if set, traces and measures every call.
	Telemetry *Telemetry

	// Features add resources, prompts and completion (features.go).
	Features []Feature
	// Media, if set, adds an image block to results that point to one.
	Media Media
}

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = "tairseach-mcp"
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = DefaultMaxResultBytes
	}
	c.MaxResultBytes = max(c.MaxResultBytes, MinMaxResultBytes)
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
}

// Server is the MCP server for one registry at a time. Apply swaps the
// registry; calls in flight finish against the route they started with.
type Server struct {
	cfg  Config
	log  zerolog.Logger
	mcp  *mcp.Server
	info []byte // serverInfo as JSON

	routes atomic.Pointer[routeTable] // read on every call
	slots  chan struct{}              // one token per call in flight
	ready  chan struct{}              // closed by the first Apply

	mu        sync.Mutex // serialises Apply; guards the fields below
	clients   map[string]*socketrpc.Client
	visible   map[string][]byte       // MCP name → the tool as clients see it
	defs      map[string]*mcp.Tool    // the same, for the SDK
	inputs    map[string]*inputSchema // by their JSON, kept across reloads
	outputs   map[string]*outputSchema
	sdkSynced bool                  // the SDK's server has every tool (RegisterWithSDK)
	attached  map[Notifier]struct{} // stdio sessions served directly
	reg       *manifest.Registry    // the registry applied last
	narrowed  map[string]*Server    // by Policy.Key: servers of HTTP header selections (policy_http.go)

	warned sync.Map // tool name → struct{}: its result mismatch was logged
	checks checker  // checks results against unadvertised outputSchemas

	extras     bool                              // progress, audit or telemetry: forward does more than call
	confirmKey [32]byte                          // binds confirmations to their arguments
	stdio      atomic.Pointer[mcp.ServerSession] // the stdio session, for the audit log of calls served directly
}

// route is everything a call of one tool needs, prepared once per reload.
type route struct {
	tool    manifest.Tool
	client  *socketrpc.Client
	timeout time.Duration
	input   *inputSchema  // arguments are checked against it
	output  *outputSchema // advertised and enforced; nil: no structuredContent
	check   *outputSchema // not advertised, results checked to warn the operator
	confirm bool          // the user must confirm each call (--confirm)
}

type routeTable struct {
	byName map[string]*route
	list   []byte // the tools/list result
	listed int    // tools in list

	hidden   map[string]string // MCP name → why the policy hides it
	tools    map[string][]byte // tools served → their definition as clients see it
	order    []string          // the tools served, in name order
	toolsets map[string]bool   // every toolset of the registry, hidden or not
	discover *discovery        // the discovery tools, in --tool-mode discover
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
		slots:    make(chan struct{}, cfg.MaxInFlight),
		ready:    make(chan struct{}),
		clients:  make(map[string]*socketrpc.Client),
		visible:  make(map[string][]byte),
		defs:     make(map[string]*mcp.Tool),
		attached: make(map[Notifier]struct{}),
	}
	s.extras = cfg.ProgressInterval > 0 || s.observing()
	if len(cfg.Confirm) > 0 {
		s.confirmKey = newConfirmKey()
	}
	s.routes.Store(&routeTable{byName: map[string]*route{}})
	impl := &mcp.Implementation{Name: cfg.Name, Title: "Tairseach", Version: cfg.Version}
	s.info, _ = json.Marshal(impl)
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(newSlogHandler(cfg.Logger)),
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true},
			// Deprecated by 2026-07-28, still part of 2025-11-25,
			// whose clients (and the conformance suite) use logging/setLevel.
			//lint:ignore SA1019 see above
			Logging: &mcp.LoggingCapabilities{},
		},
	}
	for _, f := range cfg.Features {
		f.ServerOptions(opts)
	}
	s.mcp = mcp.NewServer(impl, opts)
	for _, f := range cfg.Features {
		f.Attach(s.mcp, cfg.Policy.Hides)
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
			return next(ctx, method, req)
		}
	})
	if reg != nil {
		s.Apply(reg)
	}
	return s
}

// Ready is closed once the server has a registry: tool requests wait for it.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// waitReady waits for the first registry, or for ctx to end.
func (s *Server) waitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	default:
	}
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MCP returns the underlying go-sdk server, with every tool registered, for
// transports that serve it.
func (s *Server) MCP() *mcp.Server {
	s.RegisterWithSDK()
	return s.mcp
}

// Close closes the backend connections and stops the background checks of
// results.
func (s *Server) Close() error {
	s.checks.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		_ = c.Close()
	}
	return nil
}

// Change counts what Apply did to the visible tool list.
type Change struct {
	Added, Removed, Changed []string
	Rerouted                int // tools whose socket method or backend alone changed
}

// Empty reports whether clients saw no change.
func (c Change) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Changed) == 0 }

// Apply makes reg the served registry. Only tools whose visible definition
// changed are removed and re-added, so an unchanged registry sends no
// notifications/tools/list_changed; a change of routing alone is silent.
func (s *Server) Apply(reg *manifest.Registry) Change {
	s.mu.Lock()
	defer s.mu.Unlock()

	old := s.routes.Load()
	oldIn, oldOut := s.inputs, s.outputs
	s.inputs = make(map[string]*inputSchema, len(oldIn))
	s.outputs = make(map[string]*outputSchema, len(oldOut))
	table := &routeTable{byName: make(map[string]*route, len(reg.Tools)), hidden: map[string]string{}, toolsets: map[string]bool{}}
	defs := make(map[string]*mcp.Tool, len(reg.Tools))
	visible := make(map[string][]byte, len(reg.Tools))
	var ch Change
	for _, t := range reg.Tools {
		table.toolsets[ToolsetOf(t)] = true
		if why := s.cfg.Policy.Hides(t); why != "" {
			table.hidden[t.Name] = why
			continue
		}
		def, r, err := s.prepare(t)
		if err == nil {
			r.input = cachedSchema(s.inputs, oldIn, t.InputSchema, func(b json.RawMessage) *inputSchema { return &inputSchema{raw: b} })
			out := func() *outputSchema {
				return cachedSchema(s.outputs, oldOut, t.OutputSchema, func(b json.RawMessage) *outputSchema { return &outputSchema{raw: b} })
			}
			switch {
			case def.OutputSchema != nil:
				// Checked now, not on first use: a client that lists a schema
				// it cannot compile may refuse the whole list.
				r.output = out()
				if err = r.output.compiles(); err != nil {
					err = fmt.Errorf("outputSchema is not valid JSON Schema: %w", err)
				}
			case s.cfg.CheckOutputs && len(t.OutputSchema) > 0:
				r.check = out()
			}
		}
		if err != nil {
			s.log.Error().Str("tool", t.Name).Str("file", t.File).Err(err).Msg("skipping tool")
			continue
		}
		b, err := json.Marshal(def)
		if err != nil {
			s.log.Error().Str("tool", t.Name).Str("file", t.File).Err(err).Msg("skipping tool")
			continue
		}
		table.byName[t.Name] = r
		table.order = append(table.order, t.Name)
		defs[t.Name] = def
		visible[t.Name] = b
		if o, ok := old.byName[t.Name]; ok && string(s.visible[t.Name]) == string(b) &&
			(o.tool.Method != t.Method || o.client != r.client) {
			ch.Rerouted++
		}
	}

	table.tools = visible
	table.list, table.listed = listJSON(table.order, visible), len(table.order)
	if s.cfg.ToolMode == ToolModeDiscover {
		// The discovery tools are all that is listed; the tools served are
		// reached through them and seen at once after a reload.
		table.discover = s.discoveryTools()
		for name := range table.discover.defs {
			if _, ok := table.byName[name]; ok {
				s.log.Warn().Str("tool", name).Msg("a manifest tool has the name of a discovery tool; it is not callable in --tool-mode discover")
				delete(table.byName, name)
			}
		}
		defs, visible = table.discover.defs, table.discover.visible
		table.list, table.listed = listJSON(table.discover.names, visible), len(table.discover.names)
	}

	for name := range s.visible {
		if _, ok := visible[name]; !ok {
			ch.Removed = append(ch.Removed, name)
		}
	}
	for name, b := range visible {
		prev, ok := s.visible[name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, name)
		case string(prev) != string(b):
			ch.Changed = append(ch.Changed, name)
		}
	}
	slices.Sort(ch.Added)
	slices.Sort(ch.Removed)
	slices.Sort(ch.Changed)

	// Route first, so a tool is callable as soon as a client can see it.
	s.routes.Store(table)
	s.visible, s.defs = visible, defs
	s.reg = reg
	for _, n := range s.narrowed {
		n.Apply(reg)
	}
	select {
	case <-s.ready:
	default:
		// The first registry: no client can have seen a list yet, as tool
		// requests waited for this.
		close(s.ready)
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
		if err := s.addTool(defs[name]); err != nil {
			s.log.Error().Str("tool", name).Err(err).Msg("registering tool")
		}
	}
	return ch
}

// cachedSchema returns the schema value of b from m, else from old (the
// previous registry's), else a new one.
func cachedSchema[T any](m, old map[string]*T, b json.RawMessage, mk func(json.RawMessage) *T) *T {
	if l, ok := m[string(b)]; ok {
		return l
	}
	l, ok := old[string(b)]
	if !ok {
		l = mk(b)
	}
	m[string(b)] = l
	return l
}

// listJSON is the tools/list result: the tools in the order of names.
func listJSON(names []string, visible map[string][]byte) []byte {
	n := len(`{"tools":[]}`)
	for _, b := range visible {
		n += len(b) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, `{"tools":[`...)
	first := true
	for _, name := range names {
		b, ok := visible[name]
		if !ok {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, b...)
	}
	return append(buf, "]}"...)
}

// addTool registers def with the SDK, which panics on schemas it dislikes.
func (s *Server) addTool(def *mcp.Tool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-sdk refused the tool: %v", p)
		}
	}()
	s.mcp.AddTool(def, s.handle)
	return nil
}

// prepare builds the MCP definition and the route of one tool.
func (s *Server) prepare(t manifest.Tool) (*mcp.Tool, *route, error) {
	def := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
	}
	if a := t.Annotations; a != (manifest.Annotations{}) {
		ann := &mcp.ToolAnnotations{
			Title:           a.Title,
			DestructiveHint: a.DestructiveHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
		if a.ReadOnlyHint != nil {
			ann.ReadOnlyHint = *a.ReadOnlyHint
		}
		if a.IdempotentHint != nil {
			ann.IdempotentHint = *a.IdempotentHint
		}
		def.Annotations = ann
	}
	r := &route{tool: t, client: s.client(t.Socket), timeout: s.cfg.CallTimeout, confirm: s.confirms(t)}
	if t.TimeoutMs > 0 {
		r.timeout = time.Duration(t.TimeoutMs) * time.Millisecond
	}
	if s.cfg.OutputSchemas && len(t.OutputSchema) > 0 {
		def.OutputSchema = t.OutputSchema
	}
	return def, r, nil
}

// replyMargin is how far past MaxResultBytes a backend's reply line is
// read: compacting may shrink a reply, escaping only grows it.
const replyMargin = 64 << 10

// client returns the pooled client of a backend socket. s.mu must be held.
func (s *Server) client(path string) *socketrpc.Client {
	key, resolve := path, (func() string)(nil)
	if path == "" {
		path, resolve = s.cfg.DefaultSocket, s.cfg.ResolveSocket
	}
	c, ok := s.clients[key] // "" is the default socket's, however it resolves
	if !ok {
		c = socketrpc.New(path, socketrpc.Options{
			Resolve:  resolve,
			PoolSize: s.cfg.PoolSize,
			// A reply's result or error cannot make a message smaller than
			// itself, so a reply over the message limit is refused as it is
			// read; the margin is the reply's own envelope.
			MaxResponseBytes: s.cfg.MaxResultBytes + replyMargin,
			Insecure:         s.cfg.InsecureSocket,
			Logger:           s.log,
		})
		s.clients[key] = c
	}
	return c
}

// handle is the go-sdk handler of every tool.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = s.sessionContext(ctx, req)
	if res := s.handleConfirm(ctx, req); res != nil {
		return res, nil
	}
	res := s.Call(ctx, req.Params.Name, req.Params.Arguments)
	if res == nil {
		// Cancelled by the client: the transport drops the response.
		return nil, ctx.Err()
	}
	return res, nil
}

// Lookup reports the route of an exposed tool.
func (s *Server) Lookup(name string) (manifest.Tool, bool) {
	r, ok := s.routes.Load().byName[name]
	if !ok {
		return manifest.Tool{}, false
	}
	return r.tool, true
}

// CheckArgs reports what is wrong with args for tool name, or "" when they
// match its inputSchema (or the tool is unknown, or its schema could not be
// compiled). Call checks the same before calling.
func (s *Server) CheckArgs(name string, args json.RawMessage) string {
	r, ok := s.routes.Load().byName[name]
	if !ok {
		return ""
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return s.checkArgs(r, args)
}

// checkArgs checks args against the tool's inputSchema; a schema that does
// not compile leaves the arguments unchecked (validate reports it).
func (s *Server) checkArgs(r *route, args json.RawMessage) string {
	v, msg := decodeArgs(args)
	if msg != "" {
		return msg
	}
	if q := r.input.quickCheck(); q != nil && q.accepts(v) {
		return ""
	}
	in, err := r.input.inputCheck()
	if err != nil {
		s.log.Debug().Str("tool", r.tool.Name).Err(err).Msg("inputSchema does not compile; arguments not checked")
		return ""
	}
	return validateArgs(in, v)
}

// Call calls tool name with args (a JSON object, or empty) and returns the
// MCP result. Every failure is an isError result, except that it returns
// nil when ctx was cancelled by the caller.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage) (res *mcp.CallToolResult) {
	if s.observing() {
		// Deferred first, so that it sees the result of a recovered panic.
		var o *callObs
		ctx, o = s.startObs(ctx, name, args)
		defer func() { s.endObs(o, res) }()
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Str("tool", name).Interface("panic", p).Bytes("stack", debug.Stack()).Msg("tool call panicked")
			res = errorResult(fmt.Sprintf("internal error in tairseach-mcp while calling %s: %v; this is a bug, please report it", name, p))
		}
	}()
	if s.waitReady(ctx) != nil {
		return nil
	}
	if res, done := s.beforeCall(ctx, name, args); done {
		return res // a discovery tool, or one the policy hides
	}
	r, ok := s.routes.Load().byName[name]
	if !ok {
		return errorResult(fmt.Sprintf("unknown tool %q; it may have been removed by a manifest reload; list the tools again", name))
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if msg := s.checkArgs(r, args); msg != "" {
		return errorResult(fmt.Sprintf("invalid arguments for %s: %s; fix the arguments to match the tool's inputSchema and call again", name, msg))
	}
	callCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	select {
	case s.slots <- struct{}{}:
	default:
		acquired := false
		select {
		case s.slots <- struct{}{}:
			acquired = true
		case <-callCtx.Done():
		}
		if callCtx.Err() != nil {
			// Timed out (or cancelled) while queued, even if a slot freed at
			// the same moment.
			if acquired {
				<-s.slots
			}
			if ctx.Err() != nil {
				return nil
			}
			return errorResult(fmt.Sprintf("busy: %d calls already in flight and none finished within %s; try again shortly", cap(s.slots), r.timeout))
		}
	}
	defer func() { <-s.slots }()
	start := time.Now()
	out, err := s.forward(callCtx, r, args)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.log.Debug().Str("tool", name).Str("method", r.tool.Method).Dur("took", time.Since(start)).Err(err).Msg("call failed")
		if errors.Is(err, socketrpc.ErrTooLarge) {
			return errorResult(fmt.Sprintf("result too large: %s sent a reply of over %d bytes, which would make a message over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
				r.tool.Method, s.cfg.MaxResultBytes+replyMargin, s.cfg.MaxResultBytes))
		}
		return s.bounded(r, s.callError(r, err))
	}
	s.log.Debug().Str("tool", name).Str("method", r.tool.Method).Dur("took", time.Since(start)).Int("bytes", len(out)).Msg("call")
	return s.bounded(r, s.result(r, out))
}

// ServeStdio serves one MCP session over t until its input ends and the
// requests already received are answered. When ctx is cancelled (SIGINT,
// SIGTERM) it ends the session as end of input does, even if the input
// stays open: no more reading, calls in flight get the drain timeout.
func (s *Server) ServeStdio(ctx context.Context, t *StdioTransport) error {
	if t.Calls == nil {
		t.Calls = s
	}
	// The session ends through t.Stop, never by the go-sdk seeing ctx done.
	ss, err := s.mcp.Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		return fmt.Errorf("starting the stdio session: %w", err)
	}
	s.stdio.Store(ss)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Stop()
		err = <-done
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) && ctx.Err() == nil {
		return fmt.Errorf("stdio session: %w", err)
	}
	return nil
}
