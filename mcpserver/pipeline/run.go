package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/served"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Run is the path every request that reaches the backend goes
// through, whatever its kind, in this order: resolve (the policy: hidden
// tools, the discovery tools, call_tool's target; a feature request's
// method among the tools served) → argument check against the tool's
// inputSchema → confirmation → a slot → progress → the socket call →
// result checks and limits. The request is observed (audit log, traces)
// from start to end, whatever ends it. It returns nil when ctx was
// cancelled by the caller: nobody is waiting for a result.
//
// A feature request's answer is its reply as the text of the result
// (the server hands it on); a refusal is an isError result as a tool call's.
func (p *Pipeline) Run(ctx context.Context, c *Request) (res *mcp.CallToolResult) {
	if c.Info.Kind == "" {
		c.Info.Kind = string(cmp.Or(c.Kind, backend.Tool))
	}
	var o *observe.Call
	// The server's own reads of the grants, every minute, are not a
	// request of anybody's: they are not recorded.
	if p.obs.On() && !c.Own {
		// Deferred first, so that it sees the result of a recovered panic.
		ctx, o = p.obs.Start(ctx, c.Info, c.Name, c.Args)
		defer func() {
			if c.refused != nil {
				if out := c.refused.Rule.Outcome; out != "" {
					o.Refused(out)
				}
			}
			p.obs.End(o, res, p.cfg.MaxResultBytes+ReplyMargin)
		}()
	}
	defer func() { res = fitClient(c, res, p.cfg.MaxResultBytes) }()
	defer func() {
		if v := recover(); v != nil {
			p.log.Error().Str("request", c.Name).Interface("panic", v).Bytes("stack", debug.Stack()).Msg("request panicked")
			res = c.refuse(backend.RuleInternal, fmt.Sprintf("internal error in tairseach-mcp while serving %s: %v; this is a bug, please report it", c.Name, v))
		}
	}()
	if p.ready.Wait(ctx) != nil {
		return nil
	}
	table := p.routes.Load()
	if c.Routes != nil {
		table = c.Routes.Load()
	}
	var (
		r       *routes.Route
		others  []*routes.Route // a feature request's other routes of its method
		confirm bool
	)
	if c.isTool() {
		r, res = p.resolve(ctx, table, c)
	} else {
		var routes []*routes.Route
		routes, res = p.resolveMethod(table, c)
		if res == nil {
			r, others = routes[0], routes[1:]
		}
	}
	if res != nil {
		return res
	}
	confirm = r.Confirm
	args, msg, err := check.Args(r.Input, c.Args)
	// Several tools may call a feature's method: the params go as the
	// first whose inputSchema takes them; any of them asking first makes
	// the request ask.
	for _, alt := range others {
		confirm = confirm || alt.Confirm
		if msg == "" {
			continue
		}
		if a, m, e := check.Args(alt.Input, c.Args); m == "" {
			r, args, msg, err = alt, a, m, e
		}
	}
	if o != nil {
		o.Resolved(r.Tool.Name, nil) // call_tool's target; a feature request's tool
	}
	if err != nil {
		p.log.Debug().Str("tool", r.Tool.Name).Err(err).Msg("inputSchema does not compile; arguments not checked")
	}
	if msg != "" {
		if c.isTool() {
			return c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("invalid arguments for %s: %s; fix the arguments to match the tool's inputSchema and call again", c.Name, msg))
		}
		return c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("invalid arguments for %s: %s %s (the params of %s, checked against the inputSchema of %s): %s",
			quote.Line(r.Tool.Method, quote.Text), c.Kind, shownName(c), quote.Line(r.Tool.Method, quote.Text), r.Tool.Name, msg))
	}
	if o != nil {
		o.Resolved(r.Tool.Name, args)
	}
	if r.Tool.Method == permissions.MethodRequest {
		if res := p.asker.declined(c, args); res != nil {
			return res // the user said no to asking macOS for it (ask.go)
		}
	}
	callCtx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	if confirm {
		res, outcome := p.confirm.ask(callCtx, c, r, args)
		if res != nil {
			if outcome != "" {
				p.log.Info().Str("tool", r.Tool.Name).Str("kind", c.Info.Kind).Str("outcome", outcome).Msg("request not confirmed; not sent")
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
	// The server's own read of the grants has a slot and a connection of
	// its own (grants.go): calls busy on all of them cannot starve it.
	if !c.Own {
		if !p.acquire(callCtx) {
			if ctx.Err() != nil {
				return nil
			}
			return c.refuse(backend.RuleBusy, fmt.Sprintf("busy: %d calls already in flight and none finished within %s; try again shortly", cap(p.slots), r.Timeout))
		}
		defer func() { <-p.slots }()
	}
	var stopProgress func()
	if c.Peer != nil && c.ProgressToken != nil && p.cfg.ProgressInterval > 0 {
		stopProgress = observe.StartProgress(callCtx, c.Peer, c.ProgressToken, p.cfg.ProgressInterval, r.Tool.Method)
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
		p.log.Debug().Str("request", c.Name).Str("method", r.Tool.Method).Dur("took", time.Since(start)).Err(err).Msg("call failed")
		if errors.Is(err, socketrpc.ErrTooLarge) {
			return c.refuse(backend.RuleTooLarge, fmt.Sprintf("result too large: %s sent a reply of over %d bytes, which would make a message over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
				r.Tool.Method, p.cfg.MaxResultBytes+ReplyMargin, p.cfg.MaxResultBytes))
		}
		if _, denied := permissions.FromError(err); denied {
			p.grants.Refresh() // the app refused for a permission: read them again
		}
		if !c.isTool() {
			c.failure = err
		}
		return p.bounded(r, p.callError(r, err))
	}
	p.log.Debug().Str("request", c.Name).Str("method", r.Tool.Method).Dur("took", time.Since(start)).Int("bytes", len(out)).Msg("call")
	if !c.isTool() {
		return p.reply(c, r, out)
	}
	res, text := p.result(r, out)
	if budget, agent := p.budget(c); budget > 0 && len(text) > budget && !res.IsError {
		if in := p.inParts(c, r, table, text, budget, agent); in != nil {
			res = in
		}
	}
	return p.withMedia(r, args, text, start, p.bounded(r, res))
}

// reply is a feature request's answer: the backend's reply, compact, as
// the result's text, if the message it makes is within the limit. The
// reply is sent as a JSON string (a resource's text), so it counts as
// that string is written: quotes and backslashes twice, '<', '>' and '&'
// six times. What the feature adds around it is measured as it is written
// (boundMessages). A completion's answer is not its reply but values taken
// from it, measured as they are written alone.
func (p *Pipeline) reply(c *Request, r *routes.Route, out json.RawMessage) *mcp.CallToolResult {
	if !utf8.Valid(out) {
		out = check.ValidUTF8(out)
	}
	text := jsonscan.Compact(out)
	if c.Kind == backend.Completion {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	}
	size := check.QuotedLen(text)
	if size > p.cfg.MaxResultBytes-EnvelopeReserve {
		return c.refuse(backend.RuleTooLarge, fmt.Sprintf("result too large: %s sent a reply that makes a message of over %d bytes, over the limit of %d (--max-result-bytes); call its tool %s with a narrower request (a smaller limit, a filter, a page)",
			r.Tool.Method, size, p.cfg.MaxResultBytes, r.Tool.Name))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// resolve finds the route of a call. A discovery tool's search and
// describe are answered here; a call_tool call becomes a call of its
// target, which then goes through the rest of the pipeline as a call of it
// by name would: a tool left out for a permission offers to ask macOS for
// it, then is refused with how to grant it; another hidden tool is refused
// with the reason.
func (p *Pipeline) resolve(ctx context.Context, table *routes.Table, c *Request) (*routes.Route, *mcp.CallToolResult) {
	if c.Name == table.Parts && c.Name != "" {
		return nil, p.readPart(c, table)
	}
	if d := table.Discover; d != nil {
		switch c.Name {
		case d.Search:
			return nil, searchTools(c, table)
		case d.Describe:
			return nil, describeTool(c, table, p.cfg.Prefix)
		case d.Call:
			var a struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := decodeDiscoveryArgs(c.Args, &a); err != "" {
				return nil, c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("invalid arguments for %s: %s; pass {\"name\": \"<tool>\", \"arguments\": {…}}", c.Name, err))
			}
			target, res := resolveTool(c, table, p.cfg.Prefix, a.Name)
			if res != nil {
				return nil, res
			}
			c.Name, c.Args = target, a.Arguments
		}
	}
	if b, ok := table.Blocked[c.Name]; ok {
		p.log.Debug().Str("tool", c.Name).Str("permission", b.Perm).Msg("call of a tool left out for a permission")
		ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
		defer cancel()
		return nil, p.asker.ask(ctx, c, table, b)
	}
	if why, ok := table.Hidden[c.Name]; ok {
		p.log.Debug().Str("tool", c.Name).Str("reason", why.Text).Msg("call of a hidden tool refused")
		return nil, refuseHidden(c, c.Name, why)
	}
	r, ok := table.ByName[c.Name]
	if !ok {
		return nil, c.refuse(backend.RuleUnknownTool, fmt.Sprintf("unknown tool %s; it may have been removed by a manifest reload; list the tools again", quote.IdentLine(c.Name, quote.Name)))
	}
	return r, nil
}

// acquire takes a slot for a call in flight, waiting until ctx ends.
func (p *Pipeline) acquire(ctx context.Context) bool {
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
func (p *Pipeline) forward(ctx context.Context, r *routes.Route, o *observe.Call, args json.RawMessage) (json.RawMessage, error) {
	if o == nil {
		return r.Client.Call(ctx, r.Tool.Method, args)
	}
	return o.Forward(ctx, r.Tool.Method, r.Client.Path(), func(ctx context.Context) (json.RawMessage, error) {
		return r.Client.Call(ctx, r.Tool.Method, args)
	})
}

// resolveMethod finds the route of a feature request: a tool served to
// the request's session that calls its method, of the manifest that
// declares the target. Nothing else reaches a socket: a method only hidden
// tools call is refused with their reason, one no tool calls as unknown.
// A completion runs while the user types: it takes only a tool annotated
// readOnlyHint whose calls need no confirmation.
func (p *Pipeline) resolveMethod(table *routes.Table, c *Request) ([]*routes.Route, *mcp.CallToolResult) {
	if c.Kind == backend.Permissions {
		if r := table.Internal[c.Method]; r != nil {
			return []*routes.Route{r}, nil
		}
		return nil, c.refuse(backend.RuleUnknownMethod, fmt.Sprintf("unknown method: no manifest maps %s", quote.Line(c.Method, quote.Text)))
	}
	var found []*routes.Route
	for _, r := range table.ByMethod[c.Method] {
		if !served.By(r.Tool, c.Method, c.Manifest) { // as the lists decide
			continue
		}
		if c.Kind == backend.Completion && (!policy.ReadOnly(r.Tool) || r.Confirm) {
			continue
		}
		found = append(found, r)
	}
	if len(found) > 0 {
		return found, nil
	}
	// The target and the method are words of the client and the manifest.
	what, method := fmt.Sprintf("%s %s", c.Kind, shownName(c)), quote.Line(c.Method, quote.Text)
	for _, h := range table.HiddenByMethod[c.Method] {
		if served.By(manifest.Tool{Method: c.Method, File: h.File}, c.Method, c.Manifest) {
			return nil, c.refuse(backend.RuleHidden, fmt.Sprintf("refused: %s calls %s, whose tool %s is %s", what, method, h.Name, h.Why.Text))
		}
	}
	if c.Kind == backend.Completion {
		return nil, c.refuse(backend.RuleHidden, fmt.Sprintf("refused: %s calls %s, which no tool served here calls as read-only without confirmation", what, method))
	}
	return nil, c.refuse(backend.RuleUnknownMethod, fmt.Sprintf("unknown method: %s calls %s, which no tool served here calls", what, method))
}
