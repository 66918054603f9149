package mcpserver

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// KnownClientCaps are the numbers of tools known clients send to the model
// at most.
var KnownClientCaps = []struct {
	Client string
	Tools  int
}{{"Cursor", 40}, {"Windsurf", 50}, {"VS Code", 128}}

// Budget is the size of a server's tools/list result.
type Budget struct {
	Tools  int // tools listed
	Bytes  int // of the tools/list result's JSON
	Tokens int // estimated: Bytes/4
	// Over names the clients whose tool cap Tools exceeds.
	Over []string
}

// Budget measures the tools/list result the server sends now.
func (s *Server) Budget() Budget {
	<-s.ready.Opened()
	t := s.base.routes.Load()
	b := Budget{Tools: t.Listed, Bytes: len(t.List)}
	b.Tokens = (b.Bytes + 3) / 4
	for _, c := range KnownClientCaps {
		if b.Tools > c.Tools {
			b.Over = append(b.Over, fmt.Sprintf("%s (%d)", c.Client, c.Tools))
		}
	}
	return b
}

// String is the budget as one line, e.g. "91 tools, 46123 bytes, ~11531
// tokens (bytes/4); over the tool cap of Cursor (40), Windsurf (50)".
func (b Budget) String() string {
	s := fmt.Sprintf("%d tools, %d bytes, ~%d tokens (bytes/4)", b.Tools, b.Bytes, b.Tokens)
	if len(b.Over) > 0 {
		s += "; over the tool cap of " + strings.Join(b.Over, ", ")
	}
	return s
}

// Hidden reports why the policy hides tool name, if it does.
func (s *Server) Hidden(name string) (reason string, hidden bool) {
	why, hidden := s.base.routes.Load().Hidden[name]
	return why.Text, hidden
}

// ServedTool is a tool the policy serves and the size of its definition in
// tools/list.
type ServedTool struct {
	Name, Toolset string
	Bytes         int
}

// Served returns the tools the policy serves, in name order, whatever the
// tool mode lists.
func (s *Server) Served() []ServedTool {
	<-s.ready.Opened()
	t := s.base.routes.Load()
	out := make([]ServedTool, 0, len(t.Order))
	for _, n := range t.Order {
		if r, ok := t.ByName[n]; ok {
			out = append(out, ServedTool{n, policy.ToolsetOf(r.Tool), len(t.Tools[n])})
		}
	}
	return out
}

// OutputSchemaUse is what the server does with one tool's outputSchema, for
// `tools` and `doctor`.
type OutputSchemaUse struct {
	// Use is "" when the tool has no outputSchema, else "advertised" (sent
	// to clients and enforced: --output-schemas=strict), "checked" (not
	// sent; results are checked and the first mismatch logged: warn) or
	// "ignored" (off).
	Use string
	// Problem says why the schema is not to be trusted, or is "": it is not
	// valid JSON Schema, or a reply the real Tairseach server is known to
	// send for the tool's method does not match it.
	Problem string
}

// OutputSchemaUse reports what the server does with the outputSchema of the
// exposed tool name.
func (s *Server) OutputSchemaUse(name string) OutputSchemaUse {
	r, ok := s.base.routes.Load().ByName[name]
	if !ok || len(r.Tool.OutputSchema) == 0 {
		return OutputSchemaUse{}
	}
	var u OutputSchemaUse
	o := r.Output
	switch {
	case o != nil:
		u.Use = "advertised"
	case r.Check != nil:
		u.Use, o = "checked", r.Check
	default:
		u.Use, o = "ignored", check.NewOutput(r.Tool.OutputSchema)
	}
	if err := o.Compiles(); err != nil {
		u.Problem = fmt.Sprintf("not valid JSON Schema: %v", err)
		return u
	}
	known, ok := knownReplies[r.Tool.Method]
	if !ok {
		return u
	}
	problem := "type: the result is not a JSON object"
	if known.reply[0] == '{' {
		p, err := o.Check([]byte(known.reply), false)
		if err != nil {
			u.Problem = fmt.Sprintf("not valid JSON Schema: %v", err)
			return u
		}
		problem = p
	}
	if problem != "" {
		u.Problem = fmt.Sprintf("the real Tairseach server's %s returns %s, which does not match: %s", r.Tool.Method, known.shape, problem)
	}
	return u
}

// Health checks the backends the served tools route to (and the default
// socket), each with a connect of at most HealthPingTimeout, at once.
func (s *Server) Health(ctx context.Context) streamable.Health {
	tools, clients := s.backends()
	h := streamable.Health{Status: "ok", Tools: tools, Backends: make([]streamable.BackendHealth, len(clients))}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, HealthPingTimeout)
			defer cancel()
			b := streamable.BackendHealth{Socket: c.Path(), Reachable: true}
			if err := c.Ping(pctx); err != nil {
				b.Reachable, b.Error = false, err.Error()
			}
			h.Backends[i] = b
		})
	}
	wg.Wait()
	for _, b := range h.Backends {
		if !b.Reachable {
			h.Status = "degraded"
		}
	}
	return h
}

// backends returns the number of tools served and the clients of the
// sockets they route to, plus the default socket's, sorted by path.
func (s *Server) backends() (int, []*socketrpc.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	table := s.base.routes.Load()
	seen := map[string]*socketrpc.Client{}
	def := s.client("")
	seen[def.Path()] = def
	for _, r := range table.ByName {
		seen[r.Client.Path()] = r.Client
	}
	out := make([]*socketrpc.Client, 0, len(seen))
	for _, c := range seen {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *socketrpc.Client) int { return strings.Compare(a.Path(), b.Path()) })
	return len(table.ByName), out
}

// knownReplies are replies the real Tairseach server sends (read from its
// source) that do not match the outputSchemas of its own manifests: under
// --output-schemas=strict these successful calls would reach the model as
// failures.
var knownReplies = map[string]struct{ reply, shape string }{
	"calendar.updateEvent": {`{"updated":true,"event":{"id":"E1","title":"Standup","start":"2026-02-16T09:00:00Z","end":"2026-02-16T09:15:00Z"}}`, "{updated, event}"},
	"calendar.deleteEvent": {`{"deleted":true,"id":"E1"}`, "{deleted, id}"},
	"op.vaults.list":       {`[{"id":"v1","name":"Private"}]`, "a JSON array"},
	"op.items.list":        {`[{"id":"i1","title":"Login","vault":{"id":"v1"}}]`, "a JSON array"},
	"jira.projects.list":   {`[{"id":"10000","key":"PROJ","name":"Project"}]`, "a JSON array"},
}

// allSessions are the sessions of s's go-sdk server and of its header
// selections'.
func (s *Server) allSessions() iter.Seq[*mcp.ServerSession] {
	s.mu.Lock()
	servers := []*mcp.Server{s.base.mcp}
	for _, c := range s.sel.servers {
		servers = append(servers, c.mcp)
	}
	s.mu.Unlock()
	return func(yield func(*mcp.ServerSession) bool) {
		for _, m := range servers {
			for ss := range m.Sessions() {
				if !yield(ss) {
					return
				}
			}
		}
	}
}

// HealthPingTimeout bounds each backend check of /healthz.
const HealthPingTimeout = time.Second

// PingDefault reports whether the default socket accepts connections.
func (s *Server) PingDefault(ctx context.Context) error {
	s.mu.Lock()
	c := s.client("")
	s.mu.Unlock()
	return c.Ping(ctx)
}

// SocketPath is the default socket's path now.
func (s *Server) SocketPath() string {
	s.mu.Lock()
	c := s.client("")
	s.mu.Unlock()
	return c.Path()
}

// ListBytes is the size of a tools/list result listing tools of these sizes.
func ListBytes(sizes ...int) int {
	n := len(`{"tools":[]}`)
	for i, b := range sizes {
		n += b
		if i > 0 {
			n++
		}
	}
	return n
}

// Grants returns the macOS permissions as last read; the zero Grants when
// they have not been read yet. A read that failed keeps those before it.
func (s *Server) Grants() permissions.Grants { return s.grants.Grants() }

// Permission is one macOS permission the served tools need.
type Permission struct {
	Name        string
	Status      permissions.Status // unknown when the grants could not be read
	Remediation string             // how to grant it; "" when granted
	Tools       []string           // the tools that need it
}

// Permissions lists the permissions the registry's tools the flags serve
// need, with their status as last read, in name order.
func (s *Server) Permissions() []Permission {
	<-s.ready.Opened()
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	g := s.grants.Grants()
	by := map[string]*Permission{}
	for _, t := range reg.Tools {
		if s.cfg.Policy.Hides(t) != "" {
			continue
		}
		for _, perm := range t.Permissions {
			p := by[perm]
			if p == nil {
				st := g.Status(perm)
				p = &Permission{Name: perm, Status: st, Remediation: permissions.Remediation(perm, st)}
				by[perm] = p
			}
			p.Tools = append(p.Tools, t.Name)
		}
	}
	out := make([]Permission, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Permission) int { return strings.Compare(a.Name, b.Name) })
	return out
}
