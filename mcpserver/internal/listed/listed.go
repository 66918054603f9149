// Package listed keeps a go-sdk server from telling a session that a list
// changed before the session has fetched that list. The manifests load
// after a client's initialize, so the prompts and resources they declare
// arrive after the session started; the go-sdk would announce them to
// every session, yet a session that never listed has nothing to refresh.
package listed

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gate drops the notification Notify to sessions that have not yet called
// one of the methods Lists, unless it is sent on a subscription.
type Gate struct {
	Lists  []string // e.g. "prompts/list"
	Notify string   // e.g. "notifications/prompts/list_changed"

	mu   sync.Mutex
	seen map[*mcp.ServerSession]bool
	kept int // len(seen) after the last forgetting
}

// Install adds the gate's middleware to m.
func (g *Gate) Install(m *mcp.Server) {
	m.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			for _, l := range g.Lists {
				if method == l {
					g.mark(m, req)
					break
				}
			}
			return next(ctx, method, req)
		}
	})
	m.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == g.Notify && !subscribed(req) && !g.listed(req) {
				return nil, nil
			}
			return next(ctx, method, req)
		}
	})
}

func (g *Gate) mark(m *mcp.Server, req mcp.Request) {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[*mcp.ServerSession]bool{}
	}
	g.seen[ss] = true
	if len(g.seen) > max(64, 2*g.kept) {
		// Forget the sessions that ended: only once they have doubled
		// since the last time, so that a list costs a constant amortised
		// however many sessions are live.
		live := map[*mcp.ServerSession]bool{}
		for s := range m.Sessions() {
			live[s] = true
		}
		for s := range g.seen {
			if !live[s] {
				delete(g.seen, s)
			}
		}
		g.kept = len(g.seen)
	}
}

// subscribed reports a notification on a 2026-07-28 subscriptions/listen
// stream: the client asked for it, and over stateless HTTP the stream is a
// session of its own that never lists.
func subscribed(req mcp.Request) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // params of a nil pointer
		}
	}()
	p := req.GetParams()
	if p == nil {
		return false
	}
	_, ok = p.GetMeta()[mcp.MetaKeySubscriptionID]
	return ok
}

func (g *Gate) listed(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[ss]
}
