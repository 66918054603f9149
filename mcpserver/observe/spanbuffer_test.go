//go:build !notelemetry

package observe

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

type recordingProcessor struct {
	mu    sync.Mutex
	names []string
	flush int
	down  bool
}

func (r *recordingProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (r *recordingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, s.Name())
}
func (r *recordingProcessor) ForceFlush(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush++
	return nil
}
func (r *recordingProcessor) Shutdown(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = true
	return nil
}
func (r *recordingProcessor) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

// Ended spans reach the batch processor, in order: after the hand-on
// delay, at once when a flush or the shutdown asks, and at once when the
// buffer is full; none is lost or handed on twice.
func TestSpanBuffer(t *testing.T) {
	rec := &recordingProcessor{}
	buf := newSpanBuffer(rec, 200*time.Millisecond)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(buf))
	tr := tp.Tracer("t")
	end := func(name string) {
		_, s := tr.Start(context.Background(), name)
		s.End()
	}
	end("a")
	end("b")
	if n := len(rec.got()); n != 0 {
		t.Fatalf("%d spans handed on before the delay", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.got()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := rec.got(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("after the delay the batch processor has %v, want [a b]", got)
	}
	end("c")
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); len(got) != 3 || got[2] != "c" || rec.flush != 1 {
		t.Fatalf("after ForceFlush: %v, %d flushes; want c handed on first, then one flush", got, rec.flush)
	}
	for range spanBufferMax {
		end("full")
	}
	if n := len(rec.got()); n != 3+spanBufferMax {
		t.Fatalf("a full buffer was not handed on at once: %d spans, want %d", n, 3+spanBufferMax)
	}
	end("last")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.got()
	if len(got) != 4+spanBufferMax || got[len(got)-1] != "last" || !rec.down {
		t.Fatalf("after Shutdown: %d spans (last %q), shut down %v; want %d, last, true", len(got), got[len(got)-1], rec.down, 4+spanBufferMax)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rec.got()); n != 4+spanBufferMax {
		t.Fatalf("%d spans after Shutdown, want %d: a span was handed on twice", n, 4+spanBufferMax)
	}
}
