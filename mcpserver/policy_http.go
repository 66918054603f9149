package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The request headers that narrow the tools of an HTTP request or session.
const (
	HeaderToolsets     = "X-MCP-Toolsets"
	HeaderReadonly     = "X-MCP-Readonly"
	HeaderTools        = "X-MCP-Tools"
	HeaderExcludeTools = "X-MCP-Exclude-Tools"
)

// MaxNarrowedServers bounds the distinct header selections served at once:
// each has a go-sdk server of its own, kept while a session uses it (and a
// minute after its last request).
const MaxNarrowedServers = 32

type narrowedServerKey struct{}

// PolicyFromHeaders is the selection the X-MCP-* headers of a request make.
func PolicyFromHeaders(h http.Header) (Policy, error) {
	list := func(name string) []string { return SplitList(strings.Join(h.Values(name), ",")) }
	p := Policy{Toolsets: list(HeaderToolsets), Tools: list(HeaderTools), ExcludeTools: list(HeaderExcludeTools), header: true}
	if slices.Contains(p.Toolsets, "all") {
		p.Toolsets = nil
	}
	switch v := strings.ToLower(strings.TrimSpace(strings.Join(h.Values(HeaderReadonly), ","))); v {
	case "", "0", "false", "no", "off":
	case "1", "true", "yes", "on":
		p.ReadOnly = true
	default:
		return p, fmt.Errorf("%s: %q: want true or false", HeaderReadonly, v)
	}
	return p, p.Validate()
}

// narrowByHeaders serves a request that carries X-MCP-* headers with a
// server of its own whose tools are the server's, narrowed by them; a
// session keeps the server of its initialize request. Bad headers are a
// 400 that says why.
func (s *Server) narrowByHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := PolicyFromHeaders(r.Header)
		if err != nil {
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if h.IsAll() {
			next.ServeHTTP(w, r)
			return
		}
		<-s.ready
		if known := s.routes.Load().toolsets; len(h.Toolsets) > 0 {
			var unknown []string
			for _, ts := range h.Toolsets {
				if !known[ts] {
					unknown = append(unknown, ts)
				}
			}
			if len(unknown) > 0 {
				http.Error(w, fmt.Sprintf("Bad Request: %s: unknown toolset %s; known toolsets: %s",
					HeaderToolsets, strings.Join(unknown, ","), strings.Join(slices.Sorted(maps.Keys(known)), ",")), http.StatusBadRequest)
				return
			}
		}
		child, err := s.narrowedServer(h)
		if err != nil {
			s.log.Warn().Err(err).Msg("refused a request")
			http.Error(w, "Service Unavailable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), narrowedServerKey{}, child)))
	})
}

// serverFor is the go-sdk server of a request: its header selection's, or
// the shared one.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	if c, ok := r.Context().Value(narrowedServerKey{}).(*Server); ok {
		return c.MCP()
	}
	return s.MCP()
}

// narrowedServer returns the server of s's policy narrowed by h, making it
// on first use. It shares s's backend connections and pipeline, and
// follows s's reloads until it is let go (sweepSelections).
func (s *Server) narrowedServer(h Policy) (*Server, error) {
	p := s.cfg.Policy.Narrow(h)
	key := p.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if c, ok := s.narrowed[key]; ok {
		c.lastUsed.Store(now.UnixNano())
		return c, nil
	}
	s.sweepSelections(now, len(s.narrowed) >= MaxNarrowedServers)
	if len(s.narrowed) >= MaxNarrowedServers {
		return nil, fmt.Errorf("%d different X-MCP-* header selections are in use already by live sessions, the most served; use one of them", MaxNarrowedServers)
	}
	cfg := s.cfg
	cfg.Policy = p
	cfg.Logger = s.log.With().Str("selection", key).Logger()
	c := New(cfg, nil)
	// Apply calls c.apply with s.mu held, as here: c's clients are s's.
	// Its requests take s's pipeline under c's policy: one set of slots,
	// one confirmation key, one checker of results, one owner of the
	// grants. A new selection reads nothing: the grants are s's.
	c.pipe.checks.stop()
	c.clients, c.pipe, c.grants = s.clients, s.pipe, s.grants
	c.apply(s.reg)
	if s.narrowed == nil {
		s.narrowed = map[string]*Server{}
	}
	s.narrowed[key] = c
	c.lastUsed.Store(now.UnixNano())
	s.log.Info().Str("selection", key).Int("tools", len(c.routes.Load().order)).Msg("serving a header selection")
	return c, nil
}

// selectionIdle is how long the server of a header selection that no
// session uses is kept after its last request.
const selectionIdle = time.Minute

// sweepSelections lets go the servers of header selections that no session
// uses and no request used for selectionIdle (with full, whatever their
// last use), so that selections do not hold memory for the life of the
// process: their features are detached and reloads no longer reach them.
// A request still being served by one finishes on it. s.mu held.
func (s *Server) sweepSelections(now time.Time, full bool) {
	for key, c := range s.narrowed {
		if !full && now.Sub(time.Unix(0, c.lastUsed.Load())) < selectionIdle {
			continue
		}
		live := false
		for range c.mcp.Sessions() {
			live = true
			break
		}
		if live {
			continue
		}
		delete(s.narrowed, key)
		for _, f := range s.cfg.Features {
			f.Detach(c.mcp)
		}
		s.log.Info().Str("selection", key).Msg("no longer serving a header selection: no session uses it")
	}
}
