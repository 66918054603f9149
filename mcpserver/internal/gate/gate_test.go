package gate

import (
	"context"
	"testing"
	"time"
)

// TestGate: a wait ends when the gate opens, or when its context ends or
// its bound passes, saying which; an open gate stays open and is opened
// once.
func TestGate(t *testing.T) {
	g := New()
	if g.IsOpen() {
		t.Fatal("a new gate is open")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx); err == nil {
		t.Error("a wait on a closed gate with an ended context returned nil")
	}
	if g.WaitAtMost(ctx, time.Hour) {
		t.Error("a wait whose context ended reports its bound passed")
	}
	if !g.WaitAtMost(context.Background(), time.Millisecond) {
		t.Error("a wait whose bound passed does not say so")
	}
	done := make(chan error)
	go func() { done <- g.Wait(context.Background()) }()
	if !g.Open() || g.Open() {
		t.Error("Open does not report the one call that opened it")
	}
	if err := <-done; err != nil || !g.IsOpen() {
		t.Errorf("after Open: wait %v, open %v", err, g.IsOpen())
	}
	if g.Wait(ctx) != nil || g.WaitAtMost(ctx, 0) {
		t.Error("an open gate makes a wait wait")
	}
	<-g.Opened()
}
