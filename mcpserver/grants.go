package mcpserver

import (
	"context"
	"slices"
	"strings"

	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

// Grants are the macOS permissions the Tairseach app holds, as last read.
// With Config.HideUngranted, a tool whose permission is denied, restricted
// or not determined is left out as the flags' policy leaves tools out:
// from tools/list, discovery, and the resources, prompts and completions
// that would call its method; a call of it by name is answered with the
// permission and how to grant it. Nothing is left out while the grants are
// unknown (no manifest maps permissions.list, or the app does not answer).

// TrackPermissions reads the macOS permissions now, whenever a call is
// refused for one, after the user asks macOS for one, and every interval
// (0: a minute) until ctx ends, never more often than the settle period,
// and leaves out what cannot work (see Config.HideUngranted). It returns
// when ctx ends.
func (s *Server) TrackPermissions(ctx context.Context) {
	s.grants.Start(ctx)
	select {
	case <-s.grants.FirstRead():
		s.pipe.GrantsRead().Open()
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
	defer s.pipe.GrantsRead().Open()
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
