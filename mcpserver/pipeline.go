package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// newProtocol is the revision whose requests carry their client in _meta
// and whose input requests the client answers by calling again.
const newProtocol = stdio.NewProtocol

// ToolCall is one tools/call, whichever road it came by: the go-sdk's tool
// handler, its receiving middleware (tools the go-sdk does not list), the
// stdio transport's direct path, or the CLI. Entry points only fill it in;
// Server.run applies every rule, in one order, to all of them.
type ToolCall struct {
	Name string           // the tool asked for: a manifest tool or a discovery tool
	Args json.RawMessage  // the arguments as the client sent them; empty or null: {}
	Info observe.CallInfo // who asked, for the audit log and the traces
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
}

// Peer is the session a call came from, as the pipeline uses it.
// *mcp.ServerSession is one.
type Peer interface {
	NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error
	Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// sdkCall is the ToolCall of a tools/call request the go-sdk received.
func sdkCall(req *mcp.CallToolRequest) *ToolCall {
	p := req.Params
	c := &ToolCall{
		Name:           p.Name,
		Args:           p.Arguments,
		ProgressToken:  p.GetProgressToken(),
		Caps:           req.ClientCapabilities(),
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
		Info: observe.CallInfo{
			Transport: "stdio",
			Client:    req.ClientInfo(),
			Protocol:  req.ProtocolVersion(),
			Meta:      p.Meta,
		},
	}
	if req.Session != nil {
		c.Peer = req.Session
		c.Info.Session = req.Session.ID()
	}
	if req.Extra != nil && req.Extra.Header != nil {
		c.Info.Transport = "http"
	}
	return c
}

// handle is the go-sdk handler of every tool it lists.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if res := s.run(ctx, sdkCall(req)); res != nil {
		return res, nil
	}
	// Cancelled by the client: the transport drops the response.
	return nil, ctx.Err()
}

// Call calls tool name with args for the CLI (call, doctor): the same
// pipeline as a client's call, with no session to report progress on or to
// ask the user through. It returns nil when ctx was cancelled.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
	return s.run(ctx, &ToolCall{Name: name, Args: args, Info: observe.CallInfo{Transport: "cli"}})
}

// run is the pipeline every tool call goes through, in this order:
// resolve (hidden tools, the discovery tools, call_tool's target) →
// argument check → confirmation → a slot → progress → the socket call →
// result checks and limits. The call is observed (audit log, traces) from
// start to end, whatever ends it. It returns nil when ctx was cancelled by
// the caller: nobody is waiting for a result.
func (s *Server) run(ctx context.Context, c *ToolCall) (res *mcp.CallToolResult) {
	var o *observe.Call
	if s.obs.On() {
		// Deferred first, so that it sees the result of a recovered panic.
		ctx, o = s.obs.Start(ctx, c.Info, c.Name, c.Args)
		defer func() { s.obs.End(o, res, s.cfg.MaxResultBytes+replyMargin) }()
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Str("tool", c.Name).Interface("panic", p).Bytes("stack", debug.Stack()).Msg("tool call panicked")
			res = check.ErrorResult(fmt.Sprintf("internal error in tairseach-mcp while calling %s: %v; this is a bug, please report it", c.Name, p))
		}
	}()
	if s.waitReady(ctx) != nil {
		return nil
	}
	table := s.routes.Load()
	r, res := s.resolve(table, c)
	if res != nil {
		return res
	}
	if o != nil {
		o.Resolved(c.Name, nil) // call_tool's target
	}
	args, msg, err := check.Args(r.input, c.Args)
	if err != nil {
		s.log.Debug().Str("tool", r.tool.Name).Err(err).Msg("inputSchema does not compile; arguments not checked")
	}
	if msg != "" {
		return check.ErrorResult(fmt.Sprintf("invalid arguments for %s: %s; fix the arguments to match the tool's inputSchema and call again", c.Name, msg))
	}
	if o != nil {
		o.Resolved(c.Name, args)
	}
	callCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if r.confirm {
		res, outcome := s.confirm(callCtx, c, r, args)
		if res != nil {
			if outcome != "" {
				s.log.Info().Str("tool", c.Name).Str("outcome", outcome).Msg("call not confirmed; not sent")
				if o != nil {
					o.Refused(outcome)
				}
			}
			if ctx.Err() != nil {
				return nil
			}
			return res
		}
	}
	if !s.acquire(callCtx) {
		if ctx.Err() != nil {
			return nil
		}
		return check.ErrorResult(fmt.Sprintf("busy: %d calls already in flight and none finished within %s; try again shortly", cap(s.slots), r.timeout))
	}
	defer func() { <-s.slots }()
	var stopProgress func()
	if c.Peer != nil && c.ProgressToken != nil && s.cfg.ProgressInterval > 0 {
		stopProgress = observe.StartProgress(callCtx, c.Peer, c.ProgressToken, s.cfg.ProgressInterval, r.tool.Method)
	}
	start := time.Now()
	out, err := s.forward(callCtx, r, o, args)
	if stopProgress != nil {
		stopProgress()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.log.Debug().Str("tool", c.Name).Str("method", r.tool.Method).Dur("took", time.Since(start)).Err(err).Msg("call failed")
		if errors.Is(err, socketrpc.ErrTooLarge) {
			return check.ErrorResult(fmt.Sprintf("result too large: %s sent a reply of over %d bytes, which would make a message over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
				r.tool.Method, s.cfg.MaxResultBytes+replyMargin, s.cfg.MaxResultBytes))
		}
		return s.bounded(r, s.callError(r, err))
	}
	s.log.Debug().Str("tool", c.Name).Str("method", r.tool.Method).Dur("took", time.Since(start)).Int("bytes", len(out)).Msg("call")
	return s.bounded(r, s.result(r, out))
}

// resolve finds the route of a call. A hidden tool is refused with the
// reason; a discovery tool's search and describe are answered here; a
// call_tool call becomes a call of its target, which then goes through the
// rest of the pipeline as a call of it by name would.
func (s *Server) resolve(table *routeTable, c *ToolCall) (*route, *mcp.CallToolResult) {
	if why, ok := table.hidden[c.Name]; ok {
		s.log.Debug().Str("tool", c.Name).Str("reason", why).Msg("call of a hidden tool refused")
		return nil, check.ErrorResult(hiddenMessage(c.Name, why))
	}
	if d := table.discover; d != nil {
		switch c.Name {
		case d.search:
			return nil, s.searchTools(table, c.Args)
		case d.describe:
			return nil, s.describeTool(table, c.Args)
		case d.call:
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := decodeDiscoveryArgs(c.Args, &p); err != "" {
				return nil, check.ErrorResult(fmt.Sprintf("invalid arguments for %s: %s; pass {\"name\": \"<tool>\", \"arguments\": {…}}", c.Name, err))
			}
			target, res := s.resolveTool(table, p.Name)
			if res != nil {
				return nil, res
			}
			c.Name, c.Args = target, p.Arguments
		}
	}
	r, ok := table.byName[c.Name]
	if !ok {
		return nil, check.ErrorResult(fmt.Sprintf("unknown tool %q; it may have been removed by a manifest reload; list the tools again", c.Name))
	}
	return r, nil
}

// acquire takes a slot for a call in flight, waiting until ctx ends.
func (s *Server) acquire(ctx context.Context) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case s.slots <- struct{}{}:
		if ctx.Err() != nil {
			// Timed out (or cancelled) while queued, even if a slot freed
			// at the same moment.
			<-s.slots
			return false
		}
		return true
	case <-ctx.Done():
		return false
	}
}

// forward makes the socket call of a route, recording it for the audit log
// and the traces when o is not nil.
func (s *Server) forward(ctx context.Context, r *route, o *observe.Call, args json.RawMessage) (json.RawMessage, error) {
	if o == nil {
		return r.client.Call(ctx, r.tool.Method, args)
	}
	return o.Forward(ctx, r.tool.Method, r.client.Path(), func(ctx context.Context) (json.RawMessage, error) {
		return r.client.Call(ctx, r.tool.Method, args)
	})
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
	if s.waitReady(ctx) != nil {
		return nil
	}
	table := s.routes.Load()
	name := call.Params.Name
	_, hidden := table.hidden[name]
	_, served := table.byName[name]
	discovery := table.discover != nil && table.discover.defs[name] != nil
	if !hidden && !(table.discover != nil && served) && !discovery {
		return nil
	}
	res := s.run(ctx, sdkCall(call))
	if res == nil {
		return nil // cancelled: the go-sdk's own handler answers
	}
	return res
}
