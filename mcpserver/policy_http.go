package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// MaxSelections bounds the distinct header selections served at once:
// each has a go-sdk server of its own. A new selection past the bound takes
// the place of the one used least recently that has no request running,
// whose sessions are closed (their next request gets 404 and they begin
// again); only when every one has a request running is it refused with
// 503. A session's own requests never take a place: it keeps the
// selection of its initialize. See docs/http.md.
const MaxSelections = 32

type selectionCtxKey struct{}

// selectByHeaders serves a request that carries X-MCP-* headers with a
// server of its own whose tools are the server's, narrowed by them; a
// session keeps the server of its initialize request, whatever the
// headers of its later requests say. Bad headers are a 400 that says why.
func (s *Server) selectByHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := policy.FromHeaders(r.Header)
		if err != nil {
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
		// Counted while served, so that its place is not given away under
		// it; a stream that lasts as long as its session does not count.
		counts := r.Method == http.MethodPost && r.Header.Get("Mcp-Method") != "subscriptions/listen"
		if id := r.Header.Get(streamable.SessionIDHeader); id != "" {
			// A session's request is served by the server that began it;
			// it keeps its selection's place by using it.
			if c := s.useSelectionOf(id, counts); c != nil && counts {
				defer c.busy.Add(-1)
			}
			next.ServeHTTP(w, r)
			if r.Method == http.MethodDelete {
				s.forgetSession(id)
			}
			return
		}
		if h.IsAll() {
			next.ServeHTTP(w, r)
			return
		}
		<-s.ready.Opened()
		s.mu.Lock()
		reg := s.reg
		s.mu.Unlock()
		if unknown, known := policy.UnknownToolsets(reg, h.Toolsets); len(unknown) > 0 {
			http.Error(w, fmt.Sprintf("Bad Request: %s: unknown toolset %s; known toolsets: %s",
				policy.HeaderToolsets, strings.Join(unknown, ","), strings.Join(known, ",")), http.StatusBadRequest)
			return
		}
		sel, err := s.useSelection(h)
		if err != nil {
			s.log.Warn().Err(err).Msg("refused a request")
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Service Unavailable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		defer sel.busy.Add(-1)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), selectionCtxKey{}, sel)))
		// The go-sdk names a session it began in the response.
		if id := w.Header().Get(streamable.SessionIDHeader); id != "" && r.Method == http.MethodPost {
			s.bindSession(id, sel)
		}
	})
}

// serverFor is the go-sdk server of a request: its header selection's, or
// the shared one.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	if c, ok := r.Context().Value(selectionCtxKey{}).(*Server); ok {
		return c.MCP()
	}
	return s.MCP()
}

// useSelection returns the server of s's policy narrowed by h, making it
// on first use, with one more request counted on it (the caller ends it
// with busy.Add(-1)).
func (s *Server) useSelection(h policy.Policy) (*Server, error) {
	c, closing, err := s.selectionServer(h)
	for _, ss := range closing {
		_ = ss.Close()
	}
	return c, err
}

// selectionServer returns the server of s's policy narrowed by h, making it
// on first use, with its use counted (busy). It shares s's backend
// connections and pipeline, and follows s's reloads until it is let go.
// At the bound, the selection used least recently with no request running
// is let go to make room: the sessions it began are returned, for the
// caller to close without s.mu.
func (s *Server) selectionServer(h policy.Policy) (_ *Server, closing []*mcp.ServerSession, _ error) {
	p := s.cfg.Policy.Narrow(h)
	key := p.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if c, ok := s.selections[key]; ok {
		c.lastUsed.Store(now.UnixNano())
		c.busy.Add(1)
		return c, nil, nil
	}
	s.sweepSelections(now)
	if len(s.selections) >= MaxSelections {
		var lru *Server
		for _, c := range s.selections {
			if c.busy.Load() == 0 && (lru == nil || c.lastUsed.Load() < lru.lastUsed.Load()) {
				lru = c
			}
		}
		if lru == nil {
			return nil, nil, fmt.Errorf("all %d X-MCP-* header selections served at once have a request running; retry shortly, or use one of them", MaxSelections)
		}
		closing = s.letGoSelection(lru, "a new selection needs its place")
	}
	cfg := s.cfg
	cfg.Policy = p
	cfg.Logger = s.log.With().Str("selection", key).Logger()
	c := New(cfg, nil)
	// Apply calls c.apply with s.mu held, as here: c's clients are s's.
	// Its requests take s's pipeline under c's policy: one set of slots,
	// one confirmation key, one checker of results, one owner of the
	// grants. A new selection reads nothing: the grants are s's.
	c.pipe.Close()
	c.clients, c.pipe, c.grants = s.clients, s.pipe, s.grants
	c.apply(s.reg)
	c.selectionKey = key
	if s.selections == nil {
		s.selections = map[string]*Server{}
	}
	s.selections[key] = c
	c.lastUsed.Store(now.UnixNano())
	c.busy.Add(1)
	s.log.Info().Str("selection", key).Int("tools", len(c.routes.Load().Order)).Msg("serving a header selection")
	return c, closing, nil
}

// selectionIdle is how long the server of a header selection that no
// session uses is kept after its last request.
const selectionIdle = time.Minute

// sweepSelections lets go the servers of header selections that no session
// uses and no request used for selectionIdle, so that selections do not
// hold memory for the life of the process. s.mu held.
func (s *Server) sweepSelections(now time.Time) {
	for _, c := range s.selections {
		if c.busy.Load() > 0 || now.Sub(time.Unix(0, c.lastUsed.Load())) < selectionIdle {
			continue
		}
		live := false
		for range c.mcp.Sessions() {
			live = true
			break
		}
		if !live {
			s.letGoSelection(c, "no session uses it")
		}
	}
}

// letGoSelection stops serving c, a header selection: its features are
// detached, reloads no longer reach it, and the sessions it began are
// returned, to be closed. A request still being served by it finishes on
// it. s.mu held.
func (s *Server) letGoSelection(c *Server, why string) []*mcp.ServerSession {
	delete(s.selections, c.selectionKey)
	for id, sc := range s.sessionSelections {
		if sc == c {
			delete(s.sessionSelections, id)
		}
	}
	s.sessionsBound.Store(int64(len(s.sessionSelections)))
	for _, f := range s.cfg.Features {
		f.Detach(c.mcp)
	}
	var closing []*mcp.ServerSession
	for ss := range c.mcp.Sessions() {
		closing = append(closing, ss)
	}
	s.log.Info().Str("selection", c.selectionKey).Int("sessions_closed", len(closing)).Msg("no longer serving a header selection: " + why)
	return closing
}

// bindSession records that session id began on c, a header selection's
// server: its requests keep c's place. Entries of sessions that ended
// otherwise than by DELETE are dropped once they outnumber the live ones.
func (s *Server) bindSession(id string, c *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selections[c.selectionKey] != c {
		return // let go meanwhile
	}
	if s.sessionSelections == nil {
		s.sessionSelections = map[string]*Server{}
	}
	s.sessionSelections[id] = c
	defer func() { s.sessionsBound.Store(int64(len(s.sessionSelections))) }()
	if len(s.sessionSelections) <= 2*s.sessionsKept+MaxSelections {
		return
	}
	live := map[string]bool{}
	for _, sc := range s.selections {
		for ss := range sc.mcp.Sessions() {
			live[ss.ID()] = true
		}
	}
	for sid := range s.sessionSelections {
		if !live[sid] {
			delete(s.sessionSelections, sid)
		}
	}
	s.sessionsKept = len(s.sessionSelections)
}

// useSelectionOf marks the use of the header selection whose server began
// session id, counting a request on it with count; nil when it began on
// the shared server, or its selection was let go.
func (s *Server) useSelectionOf(id string, count bool) *Server {
	if s.sessionsBound.Load() == 0 {
		return nil // no lock taken by the sessions of the shared server
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.sessionSelections[id]
	if c == nil {
		return nil
	}
	c.lastUsed.Store(time.Now().UnixNano())
	if count {
		c.busy.Add(1)
	}
	return c
}

// forgetSession drops the record of a session deleted by its client.
func (s *Server) forgetSession(id string) {
	if s.sessionsBound.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessionSelections, id)
	s.sessionsBound.Store(int64(len(s.sessionSelections)))
}
