package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Grants are the macOS permissions the Tairseach app holds, as last read.
// With Config.HideUngranted, a tool whose permission is denied, restricted
// or not determined is left out as the flags' policy leaves tools out:
// from tools/list, discovery, and the resources, prompts and completions
// that would call its method; a call of it by name is answered with the
// permission and how to grant it. Nothing is left out while the grants are
// unknown (no manifest maps permissions.list, or the app does not answer).

// hides says why s leaves t out, by the rule of its route table: the
// flags' (or a header selection's) policy, else a permission not granted;
// the zero Reason when t is served.
func (s *Server) hides(t manifest.Tool) policy.Reason {
	o := routes.Options{Policy: s.cfg.Policy, HideUngranted: s.cfg.HideUngranted, Grants: s.grants.Grants()}
	return o.Hides(t)
}

// regrant applies the registry again after the grants changed: the routes
// read them from the tracker, and clients are told when the lists
// changed. The tracker calls it at most once per settle period
// (Config.PermissionsSettle).
func (s *Server) regrant() {
	s.pipe.asks.forget(s.grants.Grants()) // what the user answered holds until the permission changes
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	if reg == nil || !s.cfg.HideUngranted {
		return
	}
	if ch := s.apply(reg); !ch.Empty() {
		s.log.Info().Strs("added", ch.Added).Strs("removed", ch.Removed).Msg("tools offered changed with the macOS permissions")
	}
	for _, f := range s.cfg.Features {
		f.Resync()
	}
}

// readGrants reads permissions.list through the one road, as the server's
// own request: the grants are read whatever the flags serve, but only
// where a manifest maps the method. It takes no slot of the calls in
// flight, and its route has a connection of its own (grantsClient): calls
// busy on every connection cannot make it wait.
func (s *Server) readGrants(ctx context.Context) (json.RawMessage, error) {
	// Before the manifests, the road waits for them.
	if s.ready.IsOpen() && s.routes.Load().Internal[permissions.MethodList] == nil {
		return nil, errNoGrants
	}
	return s.Do(ctx, &backend.Request{Kind: backend.Permissions, Target: "permissions", Method: permissions.MethodList, Params: json.RawMessage("{}")})
}

// errNoGrants is a registry that maps no permissions.list: the grants
// known are forgotten.
var errNoGrants = fmt.Errorf("no manifest maps permissions.list: %w", permissions.ErrNoSource)

// newGrants is the one owner of a server's grants: it reads them
// (readGrants), coalesced and at most once per settle period, and has the
// routes applied again when they change. The servers of header selections
// share their parent's.
func (s *Server) newGrants() *permissions.Tracker {
	return permissions.NewTracker(permissions.Options{
		Read:        s.readGrants,
		Interval:    s.cfg.PermissionsInterval,
		MinInterval: s.cfg.PermissionsSettle,
		OnChange:    func(_, _ permissions.Grants) { s.regrant() },
		Logger:      s.log,
	})
}

// TrackPermissions reads the macOS permissions now, whenever a call is
// refused for one, after the user asks macOS for one, and every interval
// (0: a minute) until ctx ends, never more often than the settle period,
// and leaves out what cannot work (see Config.HideUngranted). It returns
// when ctx ends.
func (s *Server) TrackPermissions(ctx context.Context) {
	s.grants.Start(ctx)
	select {
	case <-s.grants.FirstRead():
		s.pipe.grantsRead.Open()
	case <-ctx.Done():
	}
	<-ctx.Done()
	_ = s.grants.Close()
}

// ReadPermissions reads the macOS permissions once, for the commands that
// call or list tools (call, tools, doctor): what they show and call is
// what a client would be offered. A read that fails returns its error and
// the grants read before it, if any.
func (s *Server) ReadPermissions(ctx context.Context) (permissions.Grants, error) {
	defer s.pipe.grantsRead.Open()
	st := s.grants.Read(ctx)
	return st.Grants, st.Err
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

// unavailable is the line the instructions of initialize add when tools
// are left out for permissions, or "".
func (s *Server) unavailable() string {
	t := s.routes.Load()
	by := map[string][]string{}
	for _, h := range t.Blocked {
		k := quote.Line(h.Perm, quote.Name) + " (" + string(h.Status) + ")"
		by[k] = append(by[k], h.Name)
	}
	if len(by) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		tools := "tools"
		if len(by[k]) == 1 {
			tools = "tool"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s", k, len(by[k]), tools))
	}
	return " Some capabilities are unavailable because macOS has not granted Tairseach the permission they need, so their tools are not offered: " +
		strings.Join(parts, "; ") + ". If the user asks for one, tell them which permission it needs: they can give it in the Tairseach app's Permissions view, or in System Settings › Privacy & Security."
}

// grantsWait bounds how long the first requests whose answer depends on
// what is offered (tools/list, the resource and prompt lists) wait for the
// first read of the grants: a Tairseach app that does not answer within it
// leaves every tool offered until it does.
const grantsWait = 3 * time.Second

// waitGrants waits until the grants were first read, at most grantsWait;
// once one wait gives up, none waits again.
func (p *pipeline) waitGrants(ctx context.Context) {
	if p.grantsRead.WaitAtMost(ctx, grantsWait) {
		p.log.Warn().Dur("waited", grantsWait).Msg("the macOS permissions are not read yet; every tool is offered until they are")
		p.grantsRead.Open()
	}
}

// nudgeGrants has the grants read again soon, when they are tracked: at
// once, or at the end of the settle period of the last read.
func (p *pipeline) nudgeGrants() { p.grants.Refresh() }

// grantsClient is the client of the server's own reads of the grants on a
// backend socket: one connection of its own, apart from the pool of the
// calls. s.mu must be held.
func (s *Server) grantsClient(path string) *socketrpc.Client { return s.pooled("grants:", path, 1) }
