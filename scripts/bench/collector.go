package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is the OTLP/HTTP receiver the bridge+otel variant exports to,
// run by this driver on 127.0.0.1: it accepts POST /v1/traces and
// /v1/metrics, reads each body whole, counts requests and bytes, and
// answers 200 with an empty body, which the otlptracehttp and
// otlpmetrichttp exporters take as a full success (they read a response
// body only when it is not empty). Trace bodies are kept and decoded only
// when the spans are counted, between the timed calls.
//
// What arrives is counted for its owner: the bridge+otel server that is
// running when it arrives (the driver says which; the variants run only in
// their own turns and are stopped between them), or owner 0, none.
type collector struct {
	srv  *http.Server
	addr string // host:port
	done chan struct{}

	mu      sync.Mutex
	timing  bool              // calls of bridge+otel are being timed now
	owner   int               // the bridge+otel server running now; 0: none
	stats   map[int]otlpStats // by owner
	pending []traceBody       // not yet decoded
	last    time.Time         // when the last trace request arrived
	bad     []string          // requests this collector did not expect
}

type traceBody struct {
	owner int
	data  []byte
	gzip  bool
	timed bool // arrived while calls of bridge+otel were being timed
}

// otlpStats counts what the collector received.
type otlpStats struct {
	traceReqs, metricReqs int
	bytes                 int64 // request bodies, as sent
	timedReqs             int   // trace requests that arrived while calls were timed
	spans, timedSpans     int
}

func (s otlpStats) sub(t otlpStats) otlpStats {
	return otlpStats{
		traceReqs: s.traceReqs - t.traceReqs, metricReqs: s.metricReqs - t.metricReqs,
		bytes: s.bytes - t.bytes, timedReqs: s.timedReqs - t.timedReqs,
		spans: s.spans - t.spans, timedSpans: s.timedSpans - t.timedSpans,
	}
}

func (s otlpStats) add(t otlpStats) otlpStats {
	return otlpStats{
		traceReqs: s.traceReqs + t.traceReqs, metricReqs: s.metricReqs + t.metricReqs,
		bytes: s.bytes + t.bytes, timedReqs: s.timedReqs + t.timedReqs,
		spans: s.spans + t.spans, timedSpans: s.timedSpans + t.timedSpans,
	}
}

// startCollector listens on a free loopback port and serves.
func startCollector() (*collector, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("OTLP collector: %w", err)
	}
	c := &collector{addr: ln.Addr().String(), done: make(chan struct{}), stats: map[int]otlpStats{}}
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(c.done)
		_ = c.srv.Serve(ln)
	}()
	return c, nil
}

func (c *collector) close() {
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
	<-c.done
}

// env is the OTEL_* environment of bridge+otel: traces and metrics over
// OTLP/HTTP to this collector, so that exports happen while the calls run,
// not only at exit. The default batch delay of 5 s would hold a slice's
// spans past its end, to be exported in another contender's turn; under the
// load of the call cases a batch of 512 spans (the default size) fills
// every 30–70 ms, so a 50 ms delay exports about as often as the defaults
// do under steady load, and leaves at most 50 ms of a slice's spans to be
// sent after it.
func (c *collector) env() []string {
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + c.addr,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=" + fmt.Sprint(bspDelay.Milliseconds()),
		"OTEL_METRIC_EXPORT_INTERVAL=" + fmt.Sprint(metricInterval.Milliseconds()),
	}
}

// The export intervals of bridge+otel.
const (
	bspDelay       = 50 * time.Millisecond
	metricInterval = time.Second
)

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if r.Method != http.MethodPost || path != "/v1/traces" && path != "/v1/metrics" {
		c.mu.Lock()
		c.bad = append(c.bad, r.Method+" "+path)
		c.mu.Unlock()
		http.Error(w, "not an OTLP/HTTP export", http.StatusNotFound)
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		c.mu.Lock()
		c.bad = append(c.bad, fmt.Sprintf("%s: reading the body: %v", path, err))
		c.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	st := c.stats[c.owner]
	st.bytes += int64(len(data))
	if path == "/v1/traces" {
		st.traceReqs++
		if c.timing {
			st.timedReqs++
		}
		c.pending = append(c.pending, traceBody{owner: c.owner, data: data, gzip: r.Header.Get("Content-Encoding") == "gzip", timed: c.timing})
		c.last = time.Now()
	} else {
		st.metricReqs++
	}
	c.stats[c.owner] = st
	c.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// setTiming says whether calls of bridge+otel are being timed now.
func (c *collector) setTiming(on bool) {
	c.mu.Lock()
	c.timing = on
	c.mu.Unlock()
}

// setOwner says which bridge+otel server runs now (0: none).
func (c *collector) setOwner(id int) {
	c.mu.Lock()
	c.owner = id
	c.mu.Unlock()
}

// snapshot decodes the trace bodies received so far and returns the counts
// of owner.
func (c *collector) snapshot(owner int) (otlpStats, error) {
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	var errs []error
	counted := map[int]otlpStats{}
	for _, b := range pending {
		n, err := countSpans(b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st := counted[b.owner]
		st.spans += n
		if b.timed {
			st.timedSpans += n
		}
		counted[b.owner] = st
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for o, n := range counted {
		c.stats[o] = c.stats[o].add(n)
	}
	if len(c.bad) > 0 {
		errs = append(errs, fmt.Errorf("unexpected requests: %v", c.bad))
	}
	return c.stats[owner], errors.Join(errs...)
}

func countSpans(b traceBody) (int, error) {
	data := b.data
	if b.gzip {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return 0, fmt.Errorf("OTLP collector: %w", err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return 0, fmt.Errorf("OTLP collector: %w", err)
		}
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		return 0, fmt.Errorf("OTLP collector: decoding a trace export: %w", err)
	}
	n := 0
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	return n, nil
}

// drain waits, untimed, until owner's spans received since base reach want, or
// until no trace export has arrived for two batch delays (the batch
// processor has sent what it holds: the rest was dropped), or 3 s, so that
// an export of bridge+otel's spans does not fall into the next
// contender's turn.
func (c *collector) drain(ctx context.Context, owner int, base otlpStats, want int) (otlpStats, error) {
	start := time.Now()
	for {
		st, err := c.snapshot(owner)
		if err != nil {
			return st, err
		}
		c.mu.Lock()
		quietSince := start
		if c.last.After(start) {
			quietSince = c.last
		}
		c.mu.Unlock()
		if st.spans-base.spans >= want || time.Since(quietSince) > 2*bspDelay+50*time.Millisecond || time.Since(start) > 3*time.Second {
			return st, nil
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}
