// Package attached keeps the go-sdk servers a feature (the resources, the
// prompts) is served onto, each with the feature's state of it, and brings
// them in step: the attach, resync and detach the features share, and the
// bookkeeping of what each server has registered.
package attached

import (
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/listed"
)

// Servers are the servers a feature is served onto, with its state A of
// each. Its zero value keeps none and can only List.
type Servers[A any] struct {
	mu   *sync.Mutex // the feature's lock, which guards its other state too
	sync func(A)     // brings one server in step; called with mu held
	list []entry[A]
}

type entry[A any] struct {
	m *mcp.Server
	a A
}

// New keeps servers under mu, brought in step by sync.
func New[A any](mu *sync.Mutex, sync func(A)) Servers[A] {
	return Servers[A]{mu: mu, sync: sync}
}

// Attach keeps a, the feature's state of m, installs g on m and brings m
// in step.
func (s *Servers[A]) Attach(m *mcp.Server, a A, g *listed.Gate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g.Install(m)
	s.list = append(s.list, entry[A]{m, a})
	s.sync(a)
}

// Resync brings every server in step, for a policy that changed without a
// reload.
func (s *Servers[A]) Resync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.SyncLocked()
}

// SyncLocked brings every server in step; the feature's lock is held.
func (s *Servers[A]) SyncLocked() {
	for _, e := range s.list {
		s.sync(e.a)
	}
}

// Detach forgets m, a server no longer served: it is no longer kept in
// step with reloads.
func (s *Servers[A]) Detach(m *mcp.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = slices.DeleteFunc(s.list, func(e entry[A]) bool { return e.m == m })
}

// List returns the feature's states, in the order attached; the feature's
// lock is held.
func (s *Servers[A]) List() []A {
	out := make([]A, len(s.list))
	for i, e := range s.list {
		out[i] = e.a
	}
	return out
}

// Register brings the definitions of one kind registered on a server in
// step with want, by name. reg is the key of each as registered: its JSON
// and what its handler depends on. The names no longer wanted are removed,
// in one call of remove when there are any (the go-sdk tells clients the
// list changed once); a name whose key changed is added again. One whose
// add fails is not kept in reg, and is tried again at the next sync.
func Register[V any](reg map[string]string, want map[string]V, key func(V) string,
	remove func(names ...string), add func(name string, v V) error) {
	var gone []string
	for name := range reg {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(reg, name)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for name, v := range want {
		k := key(v)
		if reg[name] == k {
			continue
		}
		if add(name, v) != nil {
			continue
		}
		reg[name] = k
	}
}
