//go:build !notelemetry

package observe

import (
	"context"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanBuffer hands ended spans to the SDK's batch span processor a few
// milliseconds at a time. The batch processor takes each span through a
// channel that its goroutine waits on, so every span woke a thread: about
// a fifth of a traced call's CPU on two cores. Handed on together, the
// spans of a few milliseconds cost one wake-up. Spans keep their order;
// ForceFlush and Shutdown hand on what is held first, after a hand-on under
// way, so that none reaches the batch processor after its shutdown.
type spanBuffer struct {
	next  sdktrace.SpanProcessor
	delay time.Duration

	mu    sync.Mutex
	held  []sdktrace.ReadOnlySpan
	timer *time.Timer

	handing sync.Mutex // held while spans are handed on, one hand-on at a time
}

// spanBufferMax is how many spans are held at most: then they are handed
// on at once, by the goroutine that ended the last one.
const spanBufferMax = 256

func newSpanBuffer(next sdktrace.SpanProcessor, delay time.Duration) *spanBuffer {
	b := &spanBuffer{next: next, delay: delay}
	b.timer = time.AfterFunc(time.Hour, b.handOn)
	b.timer.Stop()
	return b
}

func (b *spanBuffer) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { b.next.OnStart(ctx, s) }

func (b *spanBuffer) OnEnd(s sdktrace.ReadOnlySpan) {
	b.mu.Lock()
	b.held = append(b.held, s)
	n := len(b.held)
	b.mu.Unlock()
	switch {
	case n >= spanBufferMax:
		b.handOn()
	case n == 1:
		b.timer.Reset(b.delay)
	}
}

// handOn gives the held spans to the batch processor.
func (b *spanBuffer) handOn() {
	b.handing.Lock()
	defer b.handing.Unlock()
	b.mu.Lock()
	spans := b.held
	b.held = make([]sdktrace.ReadOnlySpan, 0, cap(spans))
	b.mu.Unlock()
	for _, s := range spans {
		b.next.OnEnd(s)
	}
}

func (b *spanBuffer) ForceFlush(ctx context.Context) error {
	b.handOn()
	return b.next.ForceFlush(ctx)
}

func (b *spanBuffer) Shutdown(ctx context.Context) error {
	b.timer.Stop()
	b.handOn()
	return b.next.Shutdown(ctx)
}
