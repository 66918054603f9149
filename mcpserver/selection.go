package mcpserver

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// MaxSelections bounds the distinct header selections served at once:
// each has a policy server, with a go-sdk server of its own. A new
// selection past the bound takes the place of the one used least recently
// that has no request running, whose sessions are closed (their next
// request gets 404 and they begin again); only when every one has a
// request running is it refused with 503. A session's own requests never
// take a place: it keeps the selection of its initialize. See
// docs/http.md.
const MaxSelections = 32

// selections are the policy servers of HTTP header selections (X-MCP-*
// headers): a request that narrows the flags' policy is served by the
// policy server of its selection, made on first use, shared by every
// request of the same selection and let go when idle or to make room.
// s.mu guards them, but bound.
type selections struct {
	core    *core
	base    *policyServer            // the flags' policy: a request of no selection's
	servers map[string]*policyServer // by Policy.Key
	// bySession are the policy servers by the sessions they began; kept,
	// how many were left at the last pruning.
	bySession map[string]*policyServer
	kept      int
	bound     atomic.Int64 // len(bySession), read without s.mu
}

// choose is the HTTP transport's one question of a request to /mcp
// (streamable.Server.Choose): the go-sdk server that serves it, and what
// to do once it has been served. A request that carries X-MCP-* headers
// is served by the policy server of its selection, whose tools are the
// server's, narrowed by them; a session keeps the policy server of its
// initialize request, whatever the headers of its later requests say.
// Bad headers are a 400 that says why; a selection that finds no place, a
// 503.
func (sl *selections) choose(r *http.Request) (streamable.Choice, *streamable.Refusal) {
	s := sl.core
	h, err := policy.FromHeaders(r.Header)
	if err != nil {
		return streamable.Choice{}, &streamable.Refusal{Status: http.StatusBadRequest, Text: "Bad Request: " + err.Error()}
	}
	// Counted while served, so that its place is not given away under
	// it; a stream that lasts as long as its session does not count.
	counts := r.Method == http.MethodPost && r.Header.Get("Mcp-Method") != "subscriptions/listen"
	if id := r.Header.Get(streamable.SessionIDHeader); id != "" {
		// A session's request is served by the server that began it;
		// it keeps its selection's place by using it.
		c := sl.useOf(id, counts)
		return streamable.Choice{Server: sl.base.sdk(), Done: func(sv streamable.Served) {
			if c != nil && counts {
				c.busy.Add(-1)
			}
			if sv.Deleted {
				sl.forget(id) // not a DELETE the go-sdk refused: the session lives on
			}
		}}, nil
	}
	if h.IsAll() {
		return streamable.Choice{Server: sl.base.sdk()}, nil
	}
	<-s.ready.Opened()
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	if unknown, known := policy.UnknownToolsets(reg, h.Toolsets); len(unknown) > 0 {
		return streamable.Choice{}, &streamable.Refusal{Status: http.StatusBadRequest, Text: fmt.Sprintf("Bad Request: %s: unknown toolset %s; known toolsets: %s",
			policy.HeaderToolsets, quote.Escape(strings.Join(unknown, ",")), strings.Join(known, ","))}
	}
	sel, err := sl.use(h)
	if err != nil {
		s.log.Warn().Err(err).Msg("refused a request")
		return streamable.Choice{}, &streamable.Refusal{Status: http.StatusServiceUnavailable, Text: "Service Unavailable: " + err.Error(), RetryAfter: "1"}
	}
	return streamable.Choice{Server: sel.sdk(), Done: func(sv streamable.Served) {
		if sv.Began != "" {
			sl.bind(sv.Began, sel)
		}
		sel.busy.Add(-1)
	}}, nil
}

// use returns the policy server of the flags' policy narrowed by h,
// making it on first use, with one more request counted on it (the caller
// ends it with busy.Add(-1)).
func (sl *selections) use(h policy.Policy) (*policyServer, error) {
	c, closing, err := sl.find(h)
	for _, ss := range closing {
		_ = ss.Close()
	}
	return c, err
}

// find returns the policy server of the flags' policy narrowed by h, making
// it on first use, with its use counted (busy). It follows the server's
// reloads until it is let go. At the bound, the selection used least
// recently with no request running is let go to make room: the sessions it
// began are returned, for the caller to close without s.mu.
func (sl *selections) find(h policy.Policy) (_ *policyServer, closing []*mcp.ServerSession, _ error) {
	s := sl.core
	p := s.cfg.Policy.Narrow(h)
	key := p.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if c, ok := sl.servers[key]; ok {
		c.lastUsed.Store(now.UnixNano())
		c.busy.Add(1)
		return c, nil, nil
	}
	sl.sweep(now)
	if len(sl.servers) >= MaxSelections {
		// The one used least recently of those no session holds, else of
		// those with no request running: a flood of new selections lets
		// go the sessions of others only when it must.
		var lru *policyServer
		lruLive := false
		for _, c := range sl.servers {
			if c.busy.Load() != 0 {
				continue
			}
			live := c.live()
			if lru == nil || (lruLive && !live) || (live == lruLive && c.lastUsed.Load() < lru.lastUsed.Load()) {
				lru, lruLive = c, live
			}
		}
		if lru == nil {
			return nil, nil, fmt.Errorf("all %d X-MCP-* header selections served at once have a request running; retry shortly, or use one of them", MaxSelections)
		}
		closing = sl.letGo(lru, "a new selection needs its place")
	}
	// Its requests take the server's pipeline under its policy: one set
	// of slots, one confirmation key, one checker of results, one owner of
	// the grants. A new selection reads nothing: the grants are the
	// server's.
	c := newPolicyServer(s, p, key, s.log.With().Str("selection", key).Logger())
	c.apply(s.reg)
	if sl.servers == nil {
		sl.servers = map[string]*policyServer{}
	}
	sl.servers[key] = c
	c.lastUsed.Store(now.UnixNano())
	c.busy.Add(1)
	s.log.Info().Str("selection", key).Int("tools", len(c.routes.Load().Order)).Msg("serving a header selection")
	return c, closing, nil
}

// selectionIdle is how long the policy server of a header selection that no
// session uses is kept after its last request.
const selectionIdle = time.Minute

// sweep lets go the policy servers of header selections that no session uses and
// no request used for selectionIdle, so that selections do not hold
// memory for the life of the process. s.mu held.
func (sl *selections) sweep(now time.Time) {
	for _, c := range sl.servers {
		if c.busy.Load() > 0 || now.Sub(time.Unix(0, c.lastUsed.Load())) < selectionIdle {
			continue
		}
		if !c.live() {
			sl.letGo(c, "no session uses it")
		}
	}
}

// letGo stops serving c, a header selection's policy server: its features are
// detached, reloads no longer reach it, and the sessions it began are
// returned, to be closed. A request still being served by it finishes on
// it. s.mu held.
func (sl *selections) letGo(c *policyServer, why string) []*mcp.ServerSession {
	delete(sl.servers, c.key)
	for id, sc := range sl.bySession {
		if sc == c {
			delete(sl.bySession, id)
		}
	}
	sl.bound.Store(int64(len(sl.bySession)))
	for _, f := range sl.core.cfg.Features {
		f.Detach(c.mcp)
	}
	var closing []*mcp.ServerSession
	for ss := range c.mcp.Sessions() {
		closing = append(closing, ss)
	}
	sl.core.log.Info().Str("selection", c.key).Int("sessions_closed", len(closing)).Msg("no longer serving a header selection: " + why)
	return closing
}

// bind records that session id began on c, a header selection's policy server:
// its requests keep c's place. Entries of sessions that ended otherwise
// than by DELETE are dropped once they outnumber the live ones.
func (sl *selections) bind(id string, c *policyServer) {
	sl.core.mu.Lock()
	defer sl.core.mu.Unlock()
	if sl.servers[c.key] != c {
		return // let go meanwhile
	}
	if sl.bySession == nil {
		sl.bySession = map[string]*policyServer{}
	}
	sl.bySession[id] = c
	defer func() { sl.bound.Store(int64(len(sl.bySession))) }()
	if len(sl.bySession) <= 2*sl.kept+MaxSelections {
		return
	}
	live := map[string]bool{}
	for _, sc := range sl.servers {
		for ss := range sc.mcp.Sessions() {
			live[ss.ID()] = true
		}
	}
	for sid := range sl.bySession {
		if !live[sid] {
			delete(sl.bySession, sid)
		}
	}
	sl.kept = len(sl.bySession)
}

// useOf marks the use of the header selection whose policy server began session
// id, counting a request on it with count; nil when it began on the
// base policy server, or its selection was let go.
func (sl *selections) useOf(id string, count bool) *policyServer {
	if sl.bound.Load() == 0 {
		return nil // no lock taken by the sessions of the base policy server
	}
	sl.core.mu.Lock()
	defer sl.core.mu.Unlock()
	c := sl.bySession[id]
	if c == nil {
		return nil
	}
	c.lastUsed.Store(time.Now().UnixNano())
	if count {
		c.busy.Add(1)
	}
	return c
}

// forget drops the record of a session deleted by its client.
func (sl *selections) forget(id string) {
	if sl.bound.Load() == 0 {
		return
	}
	sl.core.mu.Lock()
	defer sl.core.mu.Unlock()
	delete(sl.bySession, id)
	sl.bound.Store(int64(len(sl.bySession)))
}

// live reports whether a session of c's go-sdk server is open.
func (c *policyServer) live() bool {
	for range c.mcp.Sessions() {
		return true
	}
	return false
}
