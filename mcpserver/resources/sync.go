package resources

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/completion"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/attached"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/listed"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/sdkadd"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

// Attach adds the resources to a go-sdk server being made: o advertises
// them with subscriptions and completes the variables of declared
// templates; the function returned registers them onto the server. v is
// the server's pipeline and its sessions' tool policy: a resource that would
// show what the policy hides is left out.
func (s *Set) Attach(o *mcp.ServerOptions, v backend.View) func(*mcp.Server) {
	hides := v.Hides
	if hides == nil {
		hides = func(manifest.Tool) string { return "" }
	}
	a := &attachment{caller: v.Caller, hides: hides, fixed: map[string]string{}, tmpls: map[string]string{},
		subs: map[string]map[*mcp.ServerSession]struct{}{}, pruneAt: minPruneAt}
	if o.Capabilities != nil {
		o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
	}
	o.SubscribeHandler = func(ctx context.Context, req *mcp.SubscribeRequest) error { return s.subscribe(a, req) }
	o.UnsubscribeHandler = func(ctx context.Context, req *mcp.UnsubscribeRequest) error { return s.unsubscribe(a, req) }
	completion.Chain(o, func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool) {
		return s.complete(ctx, a, req)
	})
	return func(m *mcp.Server) {
		a.m = m // before any other goroutine can see a
		s.servers.Attach(m, a, &listed.Gate{Lists: []string{"resources/list", "resources/templates/list"}, Notify: "notifications/resources/list_changed"})
	}
}

// Resync brings every server's resources in step with its policy, which
// changed without a reload.
func (s *Set) Resync() { s.servers.Resync() }

// Detach forgets m, a server no longer served: its resources are no
// longer kept in step with reloads.
func (s *Set) Detach(m *mcp.Server) { s.servers.Detach(m) }

// Update follows a manifest reload: declared resources are registered anew
// (clients are told the list changed only if it did), and subscribers of
// the status and manifests are told they changed.
func (s *Set) Update(reg *manifest.Registry) {
	s.mu.Lock()
	s.reg = reg
	s.reloads++
	s.lastErr = ""
	if n := len(reg.FileErrors); n > 0 {
		s.lastErr = reg.FileErrors[n-1].Error()
	}
	servers := s.servers.List()
	s.servers.SyncLocked()
	s.mu.Unlock()
	uris := []string{StatusURI}
	for id := range reg.IDs {
		uris = append(uris, ManifestPrefix+id)
	}
	s.updated(servers, uris...)
}

// updated tells the subscribers of uris on every server.
func (s *Set) updated(servers []*attachment, uris ...string) {
	for _, a := range servers {
		s.mu.Lock()
		followed := slices.DeleteFunc(slices.Clone(uris), func(u string) bool { return len(a.subs[u]) == 0 })
		s.mu.Unlock()
		for _, u := range followed {
			_ = a.m.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u})
		}
	}
}

// sync makes a's registered resources what they should be now. s.mu held.
func (s *Set) sync(a *attachment) {
	ts := toolsOf(s.reg, a)
	fixed := map[string]entry{}
	for path, st := range s.logFiles {
		r := s.logResource(path, st)
		fixed[r.URI] = entry{r, s.readLog, ""}
	}
	fixed[StatusURI] = entry{&mcp.Resource{URI: StatusURI, Name: "status", Title: "Tairseach bridge status",
		Description: "version, socket and whether it answers, tools served and hidden, manifest reloads, and the server's own status",
		MIMEType:    "application/json"}, s.readStatus(a), ""}
	if ts.serves(permissions.MethodList, "") {
		fixed[PermissionsURI] = entry{&mcp.Resource{URI: PermissionsURI, Name: "permissions", Title: "macOS permissions",
			Description: "the Tairseach server's permissions.list reply: which macOS permissions it holds",
			MIMEType:    "application/json"}, s.readMethod(a, permissions.MethodList), ""}
	}
	for id, file := range s.reg.IDs {
		if ts.hiddenFile[file] { // its text would show what the policy hides
			continue
		}
		u := ManifestPrefix + id
		fixed[u] = entry{&mcp.Resource{URI: u, Name: "manifest " + id, Description: "the manifest " + file,
			MIMEType: "application/json"}, s.readManifest(file), file}
	}
	decl := map[string]manifest.Resource{} // URI template → its declaration
	for _, d := range s.reg.Resources {
		if !ts.serves(d.Method, d.File) { // as visible as the tools of its method
			continue
		}
		if d.URI != "" {
			fixed[d.URI] = entry{&mcp.Resource{URI: d.URI, Name: d.Name, Title: d.Title, Description: d.Description, MIMEType: declaredMIME(d)}, s.readDeclared(a, d), d.File + " " + d.Method}
			continue
		}
		decl[d.URITemplate] = d
	}
	a.decl = decl

	attached.Register(a.fixed, fixed, func(e entry) string {
		b, _ := json.Marshal(e.res)
		return string(b) + "\x00" + e.via
	}, a.m.RemoveResources, func(u string, e entry) error {
		err := sdkadd.Add(func() { a.m.AddResource(e.res, e.h) })
		if err != nil {
			s.log.Warn().Str("uri", u).Err(err).Msg("skipping resource")
		}
		return err
	})
	attached.Register(a.tmpls, decl, func(d manifest.Resource) string {
		b, _ := json.Marshal(templateOf(d))
		vars, _ := json.Marshal([]any{d.File, d.Method, d.Complete, d.Enum})
		return string(b) + "\x00" + string(vars)
	}, a.m.RemoveResourceTemplates, func(u string, d manifest.Resource) error {
		h := s.readTemplate(a, d)
		err := sdkadd.Add(func() { a.m.AddResourceTemplate(templateOf(d), h) })
		if err != nil {
			s.log.Warn().Str("uriTemplate", u).Err(err).Msg("skipping resource template")
		}
		return err
	})
}

// templateOf is the template d declares.
func templateOf(d manifest.Resource) *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{URITemplate: d.URITemplate, Name: d.Name, Title: d.Title, Description: d.Description, MIMEType: declaredMIME(d)}
}

// declaredMIME is the type of a declared resource's content.
func declaredMIME(d manifest.Resource) string {
	if d.MIMEType == "" {
		return "application/json"
	}
	return d.MIMEType
}

// subscribe accepts a session's subscription to a fixed resource its
// server serves it (its policy's view); only logs, manifests and the
// status ever report an update.
func (s *Set) subscribe(a *attachment, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := a.fixed[uri]; !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	subs := a.subs[uri]
	if subs == nil {
		subs = map[*mcp.ServerSession]struct{}{}
		a.subs[uri] = subs
	}
	if _, ok := subs[req.Session]; !ok {
		subs[req.Session] = struct{}{}
		a.nsubs++
	}
	if a.nsubs >= a.pruneAt {
		a.pruneSubs()
	}
	return nil
}

// pruneSubs lets go of the subscriptions of sessions that ended without
// unsubscribing. It looks at every subscription, so it is done only once
// they have doubled since the last time: a subscription costs a constant
// amortised, however many sessions there are. s.mu held.
func (a *attachment) pruneSubs() {
	live := map[*mcp.ServerSession]bool{}
	for ss := range a.m.Sessions() {
		live[ss] = true
	}
	a.nsubs = 0
	for uri, subs := range a.subs {
		for ss := range subs {
			if !live[ss] {
				delete(subs, ss)
			}
		}
		if len(subs) == 0 {
			delete(a.subs, uri)
		}
		a.nsubs += len(subs)
	}
	a.pruneAt = max(minPruneAt, 2*a.nsubs)
}

// minPruneAt is the fewest subscriptions of a server looked at for ended
// sessions.
const minPruneAt = 64

// unsubscribe ends the subscription of the session that asks, not
// another's.
func (s *Set) unsubscribe(a *attachment, req *mcp.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if subs := a.subs[req.Params.URI]; subs != nil {
		if _, ok := subs[req.Session]; ok {
			delete(subs, req.Session)
			a.nsubs--
		}
		if len(subs) == 0 {
			delete(a.subs, req.Params.URI)
		}
	}
	return nil
}
