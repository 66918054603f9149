//go:build !notelemetry

package observe

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// traceSink is an OTLP/HTTP endpoint that keeps the requests it receives.
type traceSink struct {
	mu   sync.Mutex
	reqs []*colltrace.ExportTraceServiceRequest
}

func (s *traceSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req colltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, &req)
	s.mu.Unlock()
}

func (s *traceSink) spans() []*tracepb.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*tracepb.Span
	for _, r := range s.reqs {
		for _, rs := range r.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

func startSink(t *testing.T) *traceSink {
	t.Helper()
	sink := &traceSink{}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_SERVICE_NAME", "svc")
	return sink
}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// The span a call makes is, once exported and decoded by protobuf, the
// one the SDK's tracer and exporter made: name, kind, ids under the
// client's traceparent, times, attributes (the socket call's among them),
// status and flags; the resource and the scope are the SDK's. The audit
// line names the call's span and trace.
func TestSpansAsOTLP(t *testing.T) {
	sink := startSink(t)
	tel, err := StartTelemetry(context.Background(), "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ob := Observer{Audit: a, Telemetry: tel}
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}

	// A call under the client's trace.
	meta := map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "vendor=x"}
	_, c1 := ob.Start(context.Background(), CallInfo{Transport: "stdio", Protocol: "2025-11-25", RequestID: "7", Meta: meta}, "t_echo", json.RawMessage(`{}`))
	_, _ = c1.Forward(context.Background(), "demo.echo", "/s.sock", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
	k1 := *c1 // its ids, for the spans: the Call is observe's once ended
	ob.End(c1, ok, 1<<20)
	// A call over HTTP the backend answers with an error.
	_, c2 := ob.Start(context.Background(), CallInfo{Transport: "http", Session: "S1", RequestID: `"r-2"`}, "t_fail", nil)
	_, _ = c2.Forward(context.Background(), "demo.fail", "/s.sock", func(context.Context) (json.RawMessage, error) {
		return nil, &socketrpc.Error{Code: -32001, Message: "no", Raw: json.RawMessage(`{"code":-32001,"message":"no"}`)}
	})
	k2 := *c2 // its ids, for the spans: the Call is observe's once ended
	ob.End(c2, &mcp.CallToolResult{IsError: true}, 1<<20)
	// A resource read refused before the socket.
	_, c3 := ob.Start(context.Background(), CallInfo{Transport: "stdio", Kind: "resource"}, "tairseach://x/1", nil)
	c3.Refused("invalid_arguments")
	k3 := *c3 // its ids, for the spans: the Call is observe's once ended
	ob.End(c3, &mcp.CallToolResult{IsError: true}, 1<<20)

	if err := tel.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.spans()
	span := func(o *Call, parent []byte, name string, kind tracepb.Span_SpanKind, flags uint32, state string, status *tracepb.Status, attrs ...*commonpb.KeyValue) *tracepb.Span {
		return &tracepb.Span{TraceId: o.trace.traceID[:], SpanId: o.id[:], ParentSpanId: parent, TraceState: state, Name: name, Kind: kind,
			Attributes: attrs, Status: status, Flags: flags}
	}
	parent, _ := hex.DecodeString("00f067aa0ba902b7")
	want := []*tracepb.Span{
		span(&k1, parent, "tools/call t_echo", tracepb.Span_SPAN_KIND_SERVER, 0x301, "vendor=x", &tracepb.Status{},
			str("mcp.method.name", "tools/call"), str("gen_ai.tool.name", "t_echo"), str("gen_ai.operation.name", "execute_tool"),
			str("tairseach.kind", "tool"), str("mcp.protocol.version", "2025-11-25"), str("network.transport", "pipe"),
			str("jsonrpc.request.id", "7"), str("tairseach.outcome", "ok"),
			str("tairseach.socket.method", "demo.echo"), str("tairseach.socket", "/s.sock")),
		span(&k2, nil, "tools/call t_fail", tracepb.Span_SPAN_KIND_SERVER, 0x101, "", &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "server error -32001: no"},
			str("mcp.method.name", "tools/call"), str("gen_ai.tool.name", "t_fail"), str("gen_ai.operation.name", "execute_tool"),
			str("tairseach.kind", "tool"), str("network.transport", "tcp"), str("network.protocol.name", "http"),
			str("mcp.session.id", "S1"), str("jsonrpc.request.id", "r-2"), str("error.type", "-32001"), str("tairseach.outcome", "tool_error"),
			str("tairseach.socket.method", "demo.fail"), str("tairseach.socket", "/s.sock"), str("tairseach.socket.error.type", "jsonrpc_error")),
		span(&k3, nil, "resources/read tairseach://x/1", tracepb.Span_SPAN_KIND_SERVER, 0x101, "", &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "invalid_arguments"},
			str("mcp.method.name", "resources/read"), str("mcp.resource.uri", "tairseach://x/1"), str("tairseach.kind", "resource"),
			str("network.transport", "pipe"), str("error.type", "tool_error"), str("tairseach.outcome", "invalid_arguments")),
	}
	if len(got) != len(want) {
		t.Fatalf("%d spans exported, want %d", len(got), len(want))
	}
	for i, g := range got {
		if g.StartTimeUnixNano == 0 || g.EndTimeUnixNano < g.StartTimeUnixNano {
			t.Errorf("span %q: start %d, end %d", g.Name, g.StartTimeUnixNano, g.EndTimeUnixNano)
		}
		g.StartTimeUnixNano, g.EndTimeUnixNano = 0, 0
		if !proto.Equal(want[i], g) {
			t.Errorf("span %d:\n%s\nwant\n%s", i, prototext.Format(g), prototext.Format(want[i]))
		}
	}
	if hex.EncodeToString(k1.trace.traceID[:]) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the call is not in the client's trace: %x", k1.trace.traceID)
	}
	rs := sink.reqs[0].ResourceSpans[0]
	res := map[string]string{}
	for _, kv := range rs.Resource.Attributes {
		res[kv.Key] = kv.Value.GetStringValue()
	}
	if res["service.name"] != "svc" || res["service.version"] != "v1.2.3" || res["telemetry.sdk.name"] != "opentelemetry" {
		t.Errorf("resource %v", res)
	}
	if sc := rs.ScopeSpans[0].Scope; sc.Name != scopeName || sc.Version != "v1.2.3" {
		t.Errorf("scope %v", sc)
	}

	// The audit lines lead to the spans, and back.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for i, l := range readLines(t, path) {
		if s := got[i]; l.CallID != hex.EncodeToString(s.SpanId) || l.TraceID != hex.EncodeToString(s.TraceId) {
			t.Errorf("audit line %d: call_id %s trace_id %s; its span: %x in %x", i, l.CallID, l.TraceID, s.SpanId, s.TraceId)
		}
	}
}

// A span's strings are UTF-8 whatever the socket path, the request id or
// the tool name hold (a protobuf string must be, and a collector refuses
// the whole batch of one that is not), and a socket call the client
// cancelled says so.
func TestSpanStrings(t *testing.T) {
	o := &Call{start: time.Now(), id: newSpanID(), forwarded: true, outcome: "cancelled", method: "m\xff", socket: "/tmp/\xfe\xfds.sock",
		info: CallInfo{RequestID: "\"id\xc3\""}, err: &socketrpc.CallError{Path: "/tmp/\xfe.sock", Err: context.Canceled}}
	o.trace = callTrace{name: "t\xff", sampled: true}
	rs := newBatchEncoder(emptyResource(t), "v").encode([]spanRecord{newSpanRecord(o, time.Now())})
	b, err := proto.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	var got tracepb.ResourceSpans
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatalf("the span does not decode: %v", err)
	}
	s := got.ScopeSpans[0].Spans[0]
	a := attrs(s)
	if s.Name != "tools/call t\uFFFD" || a["tairseach.socket"] != "/tmp/\uFFFDs.sock" || a["jsonrpc.request.id"] != "id\uFFFD" {
		t.Errorf("name %q, attributes %q", s.Name, a)
	}
	if a["tairseach.socket.error.type"] != "cancelled" || !strings.Contains(s.Status.GetMessage(), "context canceled") {
		t.Errorf("a cancelled socket call: error type %q, status %v", a["tairseach.socket.error.type"], s.Status)
	}
}

// The sampler is the one OTEL_TRACES_SAMPLER names, as the SDK reads it;
// a call not sampled is not exported, and its line has no trace.
func TestSamplerFromEnv(t *testing.T) {
	sampled := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	unsampled := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
	for _, tc := range []struct {
		sampler, arg         string
		root, sampled, unsam bool
	}{
		{"", "", true, true, false},
		{"parentbased_always_on", "", true, true, false},
		{"parentbased_always_off", "", false, true, false},
		{"always_on", "", true, true, true},
		{"always_off", "", false, false, false},
		{"traceidratio", "0", false, false, false},
		{"parentbased_traceidratio", "0", false, true, false},
		{"parentbased_traceidratio", "1", true, true, false},
	} {
		t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.arg)
		s, err := samplerFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		tel := &Telemetry{sampler: s}
		for _, c := range []struct {
			parent string
			want   bool
		}{{"", tc.root}, {sampled, tc.sampled}, {unsampled, tc.unsam}} {
			o := &Call{info: CallInfo{Meta: map[string]any{}}}
			if c.parent != "" {
				o.info.Meta["traceparent"] = c.parent
			}
			tel.startCall(o)
			if o.trace.sampled != c.want {
				t.Errorf("%s %s, parent %q: sampled %v, want %v", tc.sampler, tc.arg, c.parent, o.trace.sampled, c.want)
			}
		}
	}
	for _, bad := range [][2]string{{"jaeger_remote", ""}, {"traceidratio", "2"}, {"traceidratio", "x"}} {
		t.Setenv("OTEL_TRACES_SAMPLER", bad[0])
		t.Setenv("OTEL_TRACES_SAMPLER_ARG", bad[1])
		if _, err := samplerFromEnv(); err == nil {
			t.Errorf("OTEL_TRACES_SAMPLER=%s OTEL_TRACES_SAMPLER_ARG=%s accepted", bad[0], bad[1])
		}
	}
}

// fakeClient records what the span queue uploads.
type fakeClient struct {
	mu      sync.Mutex
	uploads [][]string // span names per request
	stopped bool
	gate    chan struct{} // if set, an upload waits for it to close
	entered chan struct{} // told when an upload waits
}

func (f *fakeClient) Start(context.Context) error { return nil }
func (f *fakeClient) Stop(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	return nil
}
func (f *fakeClient) UploadTraces(_ context.Context, rss []*tracepb.ResourceSpans) error {
	if f.gate != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
		<-f.gate
	}
	b, err := proto.Marshal(&colltrace.ExportTraceServiceRequest{ResourceSpans: rss})
	if err != nil {
		return err
	}
	var req colltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		return err
	}
	var names []string
	for _, ss := range req.ResourceSpans[0].ScopeSpans {
		for _, s := range ss.Spans {
			names = append(names, s.Name)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads = append(f.uploads, names)
	return nil
}
func (f *fakeClient) got() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.uploads...)
}

// The queue exports a call's spans after the delay, at once when a batch
// is full, on a flush and at shutdown; in order, none twice; and drops
// what does not fit, saying so.
func TestSpanQueue(t *testing.T) {
	fc := &fakeClient{}
	var errs []error
	var errMu sync.Mutex
	otelHandler(t, func(err error) { errMu.Lock(); errs = append(errs, err); errMu.Unlock() })
	q := newSpanQueue(fc, newBatchEncoder(emptyResource(t), "v"), bspConfig{delay: 200 * time.Millisecond, timeout: time.Second, maxQueue: 8, maxBatch: 4})
	rec := func(name string) spanRecord {
		return spanRecord{trace: callTrace{name: name, sampled: true}, id: newSpanID(), start: time.Now(), end: time.Now(), outcome: "ok"}
	}
	q.add(rec("a"))
	q.add(rec("b"))
	if n := len(fc.got()); n != 0 {
		t.Fatalf("%d uploads before the delay", n)
	}
	waitUntil(t, func() bool { return len(fc.got()) == 1 })
	if got := fc.got()[0]; len(got) != 2 || got[0] != "tools/call a" || got[1] != "tools/call b" {
		t.Fatalf("after the delay: %v", got)
	}
	for _, n := range []string{"c", "d", "e", "f"} { // a full batch
		q.add(rec(n))
	}
	waitUntil(t, func() bool { return len(fc.got()) == 2 })
	q.add(rec("g"))
	if err := q.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fc.got(); len(got) != 3 || len(got[1]) != 4 || got[2][0] != "tools/call g" {
		t.Fatalf("a full batch, then a flush: %v", got)
	}
	// While an export is under way, what does not fit in the queue is
	// dropped.
	fc.gate, fc.entered = make(chan struct{}), make(chan struct{}, 1)
	for _, n := range []string{"h", "i", "j", "k"} {
		q.add(rec(n))
	}
	<-fc.entered
	for i := range 12 {
		q.add(rec(string(rune('A' + i))))
	}
	close(fc.gate)
	if err := q.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	q.add(rec("late"))
	total := 0
	for _, u := range fc.got() {
		total += len(u)
	}
	if total != 7+4+8 || !fc.stopped {
		t.Fatalf("%d spans exported in all (want 19: 8 of the 12 kept), client stopped %v: %v", total, fc.stopped, fc.got())
	}
	errMu.Lock()
	defer errMu.Unlock()
	if len(errs) != 1 {
		t.Errorf("the drops were reported %d times: %v", len(errs), errs)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// otelHandler sends OpenTelemetry's errors to f for the test.
func otelHandler(t *testing.T, f func(error)) {
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(f))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
}

func emptyResource(t *testing.T) *resource.Resource {
	t.Helper()
	return resource.Empty()
}

// The queue's sizes count spans, as the SDK's do: a batch is sent when
// full, and a span past the queue's size is dropped.
func TestSpanQueueCountsSpans(t *testing.T) {
	fc := &fakeClient{}
	otelHandler(t, func(error) {})
	q := newSpanQueue(fc, newBatchEncoder(emptyResource(t), "v"), bspConfig{delay: time.Hour, timeout: time.Second, maxQueue: 3, maxBatch: 2})
	rec := func(name string) spanRecord {
		return spanRecord{trace: callTrace{name: name, sampled: true}, id: newSpanID(), start: time.Now(), end: time.Now(), outcome: "ok", forwarded: true, method: name}
	}
	q.add(rec("a"))
	q.add(rec("b")) // 2 spans: a batch
	waitUntil(t, func() bool { return len(fc.got()) == 1 })
	if got := fc.got()[0]; len(got) != 2 || got[0] != "tools/call a" || got[1] != "tools/call b" {
		t.Fatalf("a batch of two calls: %v", got)
	}
	fc.gate, fc.entered = make(chan struct{}), make(chan struct{}, 1)
	q.add(rec("c"))
	q.add(rec("d"))
	<-fc.entered // c and d are being sent
	for _, n := range []string{"e", "f", "g", "h"} {
		q.add(rec(n)) // e, f and g fit in 3 spans; h does not
	}
	close(fc.gate)
	if err := q.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := fc.got()
	if len(got) != 4 || len(got[2]) != 2 || len(got[3]) != 1 || got[3][0] != "tools/call g" {
		t.Fatalf("uploads %v; want c and d, then e and f (a batch), then g", got)
	}
}

// Every call's duration is measured, whether its spans are exported, not
// sampled, or do not fit the queue.
func TestDurationMeasured(t *testing.T) {
	otelHandler(t, func(error) {})
	d := newDurations(false)
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(d))
	sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	count := func() (n uint64) {
		points, _ := collect(t, r)
		for _, p := range points {
			n += p.Count
		}
		return n
	}
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
		queue   int
	}{{"exported", sdktrace.AlwaysSample(), 100}, {"not sampled", sdktrace.NeverSample(), 100}, {"dropped", sdktrace.AlwaysSample(), 1}} {
		t.Run(tc.name, func(t *testing.T) {
			before := count()
			tel := &Telemetry{sampler: tc.sampler, durations: d,
				spans: newSpanQueue(&fakeClient{}, newBatchEncoder(emptyResource(t), "v"), bspConfig{delay: time.Hour, timeout: time.Second, maxQueue: tc.queue, maxBatch: tc.queue})}
			ob := Observer{Telemetry: tel}
			for range 5 {
				_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "t", nil)
				_, _ = c.Forward(context.Background(), "m", "/s", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
				ob.End(c, &mcp.CallToolResult{}, 1<<20)
			}
			if err := tel.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := count() - before; n != 5 {
				t.Errorf("%d calls measured, want 5", n)
			}
		})
	}
}

// attrs are a span's string attributes by key.
func attrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value.GetStringValue()
	}
	return m
}

// A trace collector that does not answer does not cost the metrics their
// last export: Shutdown exports the spans and the metrics side by side,
// each with the whole of its time.
func TestShutdownExportsMetricsPastAHungTraceCollector(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-release
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) }) // before hung.Close, which waits for its handlers
	sink := &metricSink{}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", hung.URL+"/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", srv.URL+"/v1/metrics")
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	tel := startAndCall(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := tel.Shutdown(ctx); err == nil {
		t.Error("Shutdown reported no error with the trace collector hung")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Shutdown took %v with a 1 s deadline", took)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.points) == 0 {
		t.Fatal("the metrics were not exported: the hung trace export used up their time")
	}
}
