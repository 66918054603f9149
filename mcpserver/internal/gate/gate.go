// Package gate is a gate that opens once and stays open: what mcpserver
// waits on for "the manifests are ready" and "the grants were first read".
// Waiting on an open gate costs a channel receive and nothing else.
package gate

import (
	"context"
	"sync"
	"time"
)

// Gate is closed until Open; its zero value is not usable (New).
type Gate struct {
	ch   chan struct{}
	once sync.Once
}

// New returns a closed gate.
func New() *Gate { return &Gate{ch: make(chan struct{})} }

// Open opens g, and reports whether this call did (false: it was open).
func (g *Gate) Open() (opened bool) {
	g.once.Do(func() { close(g.ch); opened = true })
	return opened
}

// Opened is closed once g opens, for a select of the caller's own.
func (g *Gate) Opened() <-chan struct{} { return g.ch }

// IsOpen reports whether g is open, without waiting.
func (g *Gate) IsOpen() bool {
	select {
	case <-g.ch:
		return true
	default:
		return false
	}
}

// Wait waits until g opens or ctx ends, and returns ctx's error then.
func (g *Gate) Wait(ctx context.Context) error {
	if g.IsOpen() { // without ctx.Done, which makes a channel
		return nil
	}
	select {
	case <-g.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitAtMost waits until g opens, d passes or ctx ends, and reports
// whether d passed with g still closed (and ctx not ended).
func (g *Gate) WaitAtMost(ctx context.Context, d time.Duration) (timedOut bool) {
	if g.IsOpen() { // without a timer
		return false
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-g.ch:
		return false
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
