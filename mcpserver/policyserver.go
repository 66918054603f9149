package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/sdkadd"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/sdklog"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// policyServer is one policy served: the policy, the route table built
// under it, and the go-sdk server whose lists show it. The base policy
// server (the flags' policy) serves every session but those of HTTP
// header selections, which have a policy server each (selection.go). A
// policy server holds no connection, slot or grant of its own: its
// requests take the server's one pipeline, naming its route table. The
// go-sdk serves one set of tools, resources and prompts per mcp.Server,
// which is why a policy server has its own (docs/architecture.md,
// "Header selections").
type policyServer struct {
	core   *core
	policy policy.Policy
	log    zerolog.Logger
	routes atomic.Pointer[routes.Table] // read on every call
	mcp    *mcp.Server

	sdkSynced bool // the go-sdk's server has every tool (sync); s.mu guards it

	// A header selection's: its key (policy.Key), its last request in Unix
	// nanoseconds, and its requests being served (selection.go).
	key      string
	lastUsed atomic.Int64
	busy     atomic.Int64
}

// newPolicyServer makes the policy server of s under p: its go-sdk
// server, with the features attached and the middlewares every request of
// it passes. It serves nothing until apply gives it a registry.
func newPolicyServer(s *core, p policy.Policy, key string, log zerolog.Logger) *policyServer {
	f := &policyServer{core: s, policy: p, key: key, log: log}
	f.routes.Store(routes.Empty())
	opts := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(sdklog.New(log)),
		SetCacheable: setCacheFields,
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true},
			// Deprecated by 2026-07-28, still part of 2025-11-25,
			// whose clients (and the conformance suite) use logging/setLevel.
			//lint:ignore SA1019 see above
			Logging: &mcp.LoggingCapabilities{},
		},
	}
	view := backend.View{Caller: f, Hides: func(t manifest.Tool) string { return f.hides(t).Text }}
	register := make([]func(*mcp.Server), 0, len(s.cfg.Features))
	for _, feat := range s.cfg.Features {
		register = append(register, feat.Attach(opts, view))
	}
	f.mcp = mcp.NewServer(s.impl, opts)
	for _, r := range register {
		r(f.mcp)
	}
	f.mcp.AddReceivingMiddleware(f.waits)
	// The key words first in the instructions (instructions.go), before
	// all the one above completes them with.
	f.mcp.AddReceivingMiddleware(keywordsFirst(s.ready, &f.routes, s.cfg.Prefix))
	// Outermost, so that it measures what every other middleware returns.
	f.mcp.AddReceivingMiddleware(boundMessages(s.cfg.MaxResultBytes, log))
	return f
}

// waits is the go-sdk's receiving middleware of what depends on the
// registry and the grants: a tools/call of a tool the go-sdk does not
// list goes the one path here; the lists and the requests of what the
// manifests declare wait for the first registry and the first read of the
// grants; initialize and server/discover say what is not offered for want
// of a permission.
func (f *policyServer) waits(next mcp.MethodHandler) mcp.MethodHandler {
	s := f.core
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// First, as registering with the SDK tells the sessions the
		// tools changed.
		if res := f.notRegistered(ctx, method, req); res != nil {
			return res, nil
		}
		if method == "tools/list" || method == "tools/call" {
			// The wait for the manifests ends with the request: sync's
			// own wait is then over at once.
			if err := s.ready.Wait(ctx); err != nil {
				return nil, err
			}
			f.sync()
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
		return withInstructions(res, func(text string) string { return text + unavailable(f.routes.Load()) }), nil
	}
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

// apply builds the policy server's route table from reg and keeps the go-sdk's
// server in step, once it has the tools: only tools whose visible
// definition changed are removed and re-added. s.mu must be held.
func (f *policyServer) apply(reg *manifest.Registry) routes.Change {
	table, ch := routes.Build(reg, f.core.routeOptions(f.policy, f.log), f.routes.Load())
	// Route first, so a tool is callable as soon as a client can see it.
	f.routes.Store(table)
	if !f.sdkSynced {
		return ch
	}
	if len(ch.Removed) > 0 {
		f.mcp.RemoveTools(ch.Removed...)
	}
	for _, name := range append(ch.Added, ch.Changed...) {
		if err := f.addTool(table.Defs[name]); err != nil {
			f.log.Error().Str("tool", name).Err(err).Msg("registering tool")
		}
	}
	return ch
}

// sync registers every tool with the go-sdk's server, once. Registering
// costs the SDK tens of microseconds a tool, so it is done only when a
// session or transport needs the SDK to answer tool requests itself; from
// then on apply keeps the SDK in step. It waits for the first registry.
func (f *policyServer) sync() {
	<-f.core.ready.Opened()
	f.core.mu.Lock()
	defer f.core.mu.Unlock()
	if f.sdkSynced {
		return
	}
	f.sdkSynced = true
	defs := f.routes.Load().Defs
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if err := f.addTool(defs[name]); err != nil {
			f.log.Error().Str("tool", name).Err(err).Msg("registering tool")
		}
	}
}

// sdk is the policy server's go-sdk server, with every tool registered (sync).
func (f *policyServer) sdk() *mcp.Server {
	f.sync()
	return f.mcp
}

// addTool registers def with the SDK, which panics on schemas it dislikes.
func (f *policyServer) addTool(def *mcp.Tool) error {
	return sdkadd.Add(func() { f.mcp.AddTool(def, f.handle) })
}

// handle is the go-sdk handler of every tool it lists.
func (f *policyServer) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := pipeline.SDKCall(req)
	c.Routes = &f.routes
	if res := f.core.pipe.Run(ctx, c); res != nil {
		return res, nil
	}
	// Cancelled by the client: the transport drops the response.
	return nil, ctx.Err()
}

// notRegistered answers, for the go-sdk, a tools/call of a tool it does not
// list: one the policy hides (with the reason), and in discovery mode a
// discovery tool or a tool served but not listed. They go through the same
// pipeline as every other call; the go-sdk need not register them, which
// would tell the session the tools changed.
func (f *policyServer) notRegistered(ctx context.Context, method string, req mcp.Request) mcp.Result {
	if method != "tools/call" {
		return nil
	}
	call, ok := req.(*mcp.CallToolRequest)
	if !ok || call.Params == nil {
		return nil
	}
	if f.core.ready.Wait(ctx) != nil {
		return nil
	}
	table := f.routes.Load()
	name := call.Params.Name
	_, hidden := table.Hidden[name]
	_, served := table.ByName[name]
	discovery := table.Discover != nil && table.Discover.Defs[name] != nil
	if !hidden && !(table.Discover != nil && served) && !discovery {
		return nil
	}
	c := pipeline.SDKCall(call)
	c.Routes = &f.routes
	res := f.core.pipe.Run(ctx, c)
	if res == nil {
		return nil // cancelled: the go-sdk's own handler answers
	}
	if call.ProtocolVersion() >= stdio.NewProtocol {
		return check.Typed{CallToolResult: res}
	}
	return res
}

// Do implements backend.Caller: a feature's request goes through the
// pipeline of every tool call, under its policy.
func (f *policyServer) Do(ctx context.Context, br *backend.Request) (json.RawMessage, error) {
	c := &pipeline.Request{Kind: br.Kind, Name: br.Target, Args: br.Params, Method: br.Method, Manifest: br.Manifest, Routes: &f.routes}
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
	res := f.core.pipe.Run(ctx, c)
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

// hides says why the policy server leaves t out, by the rule of its route table:
// its policy, else a permission not granted; the zero Reason when t is
// served.
func (f *policyServer) hides(t manifest.Tool) policy.Reason {
	o := routes.Options{Policy: f.policy, HideUngranted: f.core.cfg.HideUngranted, Grants: f.core.grants.Grants()}
	return o.Hides(t)
}
