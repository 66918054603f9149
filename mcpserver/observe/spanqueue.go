//go:build !notelemetry

package observe

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// spanQueue holds the spans of ended calls and exports them, as the SDK's
// batch span processor would: when a batch is full, or a delay after the
// first span queued; a full queue drops spans. A call only appends its
// span's record under a lock (and, for the first of a batch, arms the
// timer); one goroutine, started by newSpanQueue and stopped by shutdown,
// encodes and sends them. Handing each span to the SDK's processor woke
// its goroutine through a channel every time.
type spanQueue struct {
	client otlptrace.Client
	enc    *batchEncoder // the exporter goroutine's
	cfg    bspConfig

	mu      sync.Mutex
	held    []spanRecord // a span each
	spare   []spanRecord // the exporter goroutine's, between exports
	dropped int          // spans that did not fit
	stopped bool

	timer   *time.Timer   // the delay after the first span queued
	kick    chan struct{} // export what is held (capacity 1)
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{} // closed when the exporter goroutine has returned
}

// bspConfig is the batch span processor's configuration; the sizes count
// spans, as the SDK's do.
type bspConfig struct {
	delay, timeout     time.Duration
	maxQueue, maxBatch int
}

// bspFromEnv reads OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT (ms),
// OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE, with the
// SDK's defaults for those unset or not positive integers.
func bspFromEnv() bspConfig {
	num := func(name string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
			return n
		}
		return def
	}
	c := bspConfig{
		delay:    time.Duration(num("OTEL_BSP_SCHEDULE_DELAY", 5000)) * time.Millisecond,
		timeout:  time.Duration(num("OTEL_BSP_EXPORT_TIMEOUT", 30000)) * time.Millisecond,
		maxQueue: num("OTEL_BSP_MAX_QUEUE_SIZE", 2048),
		maxBatch: num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
	}
	c.maxBatch = min(c.maxBatch, c.maxQueue)
	return c
}

func newSpanQueue(client otlptrace.Client, enc *batchEncoder, cfg bspConfig) *spanQueue {
	q := &spanQueue{client: client, enc: enc, cfg: cfg, kick: make(chan struct{}, 1),
		flushes: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	q.timer = time.AfterFunc(time.Hour, q.signal)
	q.timer.Stop()
	go q.run()
	return q
}

// add queues the span of one call.
func (q *spanQueue) add(r spanRecord) {
	q.mu.Lock()
	if q.stopped || len(q.held) >= q.cfg.maxQueue {
		q.dropped++
		q.mu.Unlock()
		return
	}
	q.held = append(q.held, r)
	n := len(q.held)
	q.mu.Unlock()
	if n == 1 {
		q.timer.Reset(q.cfg.delay)
	}
	if n == q.cfg.maxBatch {
		q.signal()
	}
}

// signal wakes the exporter goroutine.
func (q *spanQueue) signal() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// run is the exporter goroutine.
func (q *spanQueue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.kick:
			q.export()
		case done := <-q.flushes:
			q.export()
			close(done)
		case <-q.stop:
			q.export()
			return
		}
	}
}

// export sends what is held, at most maxBatch spans a request.
func (q *spanQueue) export() {
	q.mu.Lock()
	spans, dropped := q.held, q.dropped
	q.held, q.spare, q.dropped = q.spare, nil, 0
	q.mu.Unlock()
	if dropped > 0 {
		handle(fmt.Errorf("OpenTelemetry: %d spans dropped: the export queue (OTEL_BSP_MAX_QUEUE_SIZE, %d spans) was full", dropped, q.cfg.maxQueue))
	}
	for rest := spans; len(rest) > 0; {
		n := min(len(rest), q.cfg.maxBatch)
		ctx, cancel := context.WithTimeout(context.Background(), q.cfg.timeout)
		if err := q.client.UploadTraces(ctx, []*tracepb.ResourceSpans{q.enc.encode(rest[:n])}); err != nil {
			handle(err)
		}
		cancel()
		rest = rest[n:]
	}
	clear(spans) // the strings they hold
	q.mu.Lock()
	q.spare = spans[:0]
	q.mu.Unlock()
}

// flush exports what is held and returns when it has been sent.
func (q *spanQueue) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case q.flushes <- done:
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown exports what is held, stops the exporter goroutine and the
// client; spans queued after it are dropped.
func (q *spanQueue) shutdown(ctx context.Context) error {
	q.mu.Lock()
	already := q.stopped
	q.stopped = true
	q.mu.Unlock()
	if already {
		return nil
	}
	q.timer.Stop()
	close(q.stop)
	select {
	case <-q.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return q.client.Stop(ctx)
}
