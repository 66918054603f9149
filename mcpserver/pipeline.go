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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// run is the pipeline every tool call goes through, in this order:
// resolve (hidden tools, the discovery tools, call_tool's target) →
// argument check → confirmation → a slot → progress → the socket call →
// result checks and limits. The call is observed (audit log, traces) from
// start to end, whatever ends it. It returns nil when ctx was cancelled by
// the caller: nobody is waiting for a result.
func (p *calls) run(ctx context.Context, c *ToolCall) (res *mcp.CallToolResult) {
	var o *observe.Call
	if p.obs.On() {
		// Deferred first, so that it sees the result of a recovered panic.
		ctx, o = p.obs.Start(ctx, c.Info, c.Name, c.Args)
		defer func() { p.obs.End(o, res, p.cfg.MaxResultBytes+replyMargin) }()
	}
	defer func() {
		if v := recover(); v != nil {
			p.log.Error().Str("tool", c.Name).Interface("panic", v).Bytes("stack", debug.Stack()).Msg("tool call panicked")
			res = check.ErrorResult(fmt.Sprintf("internal error in tairseach-mcp while calling %s: %v; this is a bug, please report it", c.Name, v))
		}
	}()
	if p.waitReady(ctx) != nil {
		return nil
	}
	table := p.routes.Load()
	r, res := p.resolve(table, c)
	if res != nil {
		return res
	}
	if o != nil {
		o.Resolved(c.Name, nil) // call_tool's target
	}
	args, msg, err := check.Args(r.input, c.Args)
	if err != nil {
		p.log.Debug().Str("tool", r.tool.Name).Err(err).Msg("inputSchema does not compile; arguments not checked")
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
		res, outcome := p.confirm(callCtx, c, r, args)
		if res != nil {
			if outcome != "" {
				p.log.Info().Str("tool", c.Name).Str("outcome", outcome).Msg("call not confirmed; not sent")
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
	if !p.acquire(callCtx) {
		if ctx.Err() != nil {
			return nil
		}
		return check.ErrorResult(fmt.Sprintf("busy: %d calls already in flight and none finished within %s; try again shortly", cap(p.slots), r.timeout))
	}
	defer func() { <-p.slots }()
	var stopProgress func()
	if c.Peer != nil && c.ProgressToken != nil && p.cfg.ProgressInterval > 0 {
		stopProgress = observe.StartProgress(callCtx, c.Peer, c.ProgressToken, p.cfg.ProgressInterval, r.tool.Method)
	}
	start := time.Now()
	out, err := p.forward(callCtx, r, o, args)
	if stopProgress != nil {
		stopProgress()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		p.log.Debug().Str("tool", c.Name).Str("method", r.tool.Method).Dur("took", time.Since(start)).Err(err).Msg("call failed")
		if errors.Is(err, socketrpc.ErrTooLarge) {
			return check.ErrorResult(fmt.Sprintf("result too large: %s sent a reply of over %d bytes, which would make a message over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
				r.tool.Method, p.cfg.MaxResultBytes+replyMargin, p.cfg.MaxResultBytes))
		}
		return p.bounded(r, p.callError(r, err))
	}
	p.log.Debug().Str("tool", c.Name).Str("method", r.tool.Method).Dur("took", time.Since(start)).Int("bytes", len(out)).Msg("call")
	return p.bounded(r, p.result(r, out))
}

// resolve finds the route of a call. A hidden tool is refused with the
// reason; a discovery tool's search and describe are answered here; a
// call_tool call becomes a call of its target, which then goes through the
// rest of the pipeline as a call of it by name would.
func (p *calls) resolve(table *routeTable, c *ToolCall) (*route, *mcp.CallToolResult) {
	if why, ok := table.hidden[c.Name]; ok {
		p.log.Debug().Str("tool", c.Name).Str("reason", why).Msg("call of a hidden tool refused")
		return nil, check.ErrorResult(hiddenMessage(c.Name, why))
	}
	if d := table.discover; d != nil {
		switch c.Name {
		case d.search:
			return nil, searchTools(table, c.Args)
		case d.describe:
			return nil, describeTool(table, p.cfg.Prefix, c.Args)
		case d.call:
			var a struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := decodeDiscoveryArgs(c.Args, &a); err != "" {
				return nil, check.ErrorResult(fmt.Sprintf("invalid arguments for %s: %s; pass {\"name\": \"<tool>\", \"arguments\": {…}}", c.Name, err))
			}
			target, res := resolveTool(table, p.cfg.Prefix, a.Name)
			if res != nil {
				return nil, res
			}
			c.Name, c.Args = target, a.Arguments
		}
	}
	r, ok := table.byName[c.Name]
	if !ok {
		return nil, check.ErrorResult(fmt.Sprintf("unknown tool %q; it may have been removed by a manifest reload; list the tools again", c.Name))
	}
	return r, nil
}

// acquire takes a slot for a call in flight, waiting until ctx ends.
func (p *calls) acquire(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case p.slots <- struct{}{}:
		if ctx.Err() != nil {
			// Timed out (or cancelled) while queued, even if a slot freed
			// at the same moment.
			<-p.slots
			return false
		}
		return true
	case <-ctx.Done():
		return false
	}
}

// forward makes the socket call of a route, recording it for the audit log
// and the traces when o is not nil.
func (p *calls) forward(ctx context.Context, r *route, o *observe.Call, args json.RawMessage) (json.RawMessage, error) {
	if o == nil {
		return r.client.Call(ctx, r.tool.Method, args)
	}
	return o.Forward(ctx, r.tool.Method, r.client.Path(), func(ctx context.Context) (json.RawMessage, error) {
		return r.client.Call(ctx, r.tool.Method, args)
	})
}

// waitReady waits for the first registry, or for ctx to end.
func (p *calls) waitReady(ctx context.Context) error {
	select {
	case <-p.ready: // without ctx.Done, which makes a channel
		return nil
	default:
	}
	select {
	case <-p.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
