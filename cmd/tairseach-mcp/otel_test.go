package main

import (
	"encoding/hex"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSink is a local OTLP/HTTP endpoint that keeps what it receives.
type otlpSink struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []string // metric names
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				s.spans = append(s.spans, ss.Spans...)
			}
		}
		out, _ := proto.Marshal(&colltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					s.metrics = append(s.metrics, m.Name)
				}
			}
		}
		out, _ := proto.Marshal(&collmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	default:
		http.NotFound(w, r)
	}
}

func (s *otlpSink) snapshot() ([]*tracepb.Span, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*tracepb.Span(nil), s.spans...), append([]string(nil), s.metrics...)
}

func attrs(span *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range span.Attributes {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	default:
		return v.String()
	}
}

// TestOpenTelemetrySpans: with OTEL_EXPORTER_OTLP_ENDPOINT set, the real
// binary exports a SERVER span per tools/call named and attributed by the
// MCP semantic conventions, under the client's traceparent, with a child
// span for the socket call, and the duration metric.
func TestOpenTelemetrySpans(t *testing.T) {
	sink := &otlpSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPEnv(t, e, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL,
		"OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
	})
	cs := connectHTTP(t, b.url, "2025-11-25", nil, nil)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	p := &mcp.CallToolParams{Name: "tairseach_server_status", Arguments: map[string]any{}}
	p.Meta = mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01", "tracestate": "vendor=x"}
	if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
		t.Fatalf("server.status: %v %+v", err, res)
	}
	if res := callTool(t, cs, "tairseach_demo_fail", nil); !res.IsError {
		t.Fatal("demo.fail succeeded")
	}

	var spans []*tracepb.Span
	var metrics []string
	waitFor(t, func() bool {
		spans, metrics = sink.snapshot()
		return len(spans) >= 2 && strings.Contains(strings.Join(metrics, ","), "mcp.server.operation.duration")
	}, "the spans and the duration metric")
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	status, fail := byName["tools/call tairseach_server_status"], byName["tools/call tairseach_demo_fail"]
	if status == nil || fail == nil || len(spans) != 2 {
		names := []string{}
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("spans %q; want one tools/call span a call", names)
	}
	if status.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("kind %v, want SERVER", status.Kind)
	}
	if hex.EncodeToString(status.TraceId) != traceID || hex.EncodeToString(status.ParentSpanId) != "00f067aa0ba902b7" || status.TraceState != "vendor=x" {
		t.Errorf("the span is not under the client's traceparent: trace %x parent %x state %q", status.TraceId, status.ParentSpanId, status.TraceState)
	}
	a := attrs(status)
	for k, want := range map[string]string{
		"mcp.method.name":         "tools/call",
		"gen_ai.tool.name":        "tairseach_server_status",
		"gen_ai.operation.name":   "execute_tool",
		"mcp.protocol.version":    "2025-11-25",
		"network.transport":       "tcp",
		"tairseach.socket.method": "server.status",
		"tairseach.socket":        e.socket,
	} {
		if a[k] != want {
			t.Errorf("%s = %q, want %q", k, a[k], want)
		}
	}
	if a["mcp.session.id"] == "" {
		t.Error("no mcp.session.id")
	}
	if _, ok := a["error.type"]; ok {
		t.Errorf("error.type on a successful call: %q", a["error.type"])
	}
	if got := attrs(fail)["error.type"]; got != "-32001" {
		t.Errorf("demo.fail error.type = %q, want the JSON-RPC code -32001", got)
	}
	if fail.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("demo.fail span status %v", fail.Status)
	}
}

// TestOpenTelemetryOffByDefault: without the environment, nothing is
// exported (the bridge starts no exporter) and calls work.
func TestOpenTelemetryOffByDefault(t *testing.T) {
	got := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got <- r.URL.Path }))
	defer srv.Close()
	e := newEnv(t)
	startBackend(t, e.socket)
	// The endpoint is named only in a variable the bridge must not read
	// alone: OTEL_TRACES_EXPORTER=none turns export off.
	b := startHTTPEnv(t, e, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL, "OTEL_TRACES_EXPORTER=none"})
	cs := connectHTTP(t, b.url, "2025-11-25", nil, nil)
	callTool(t, cs, "tairseach_server_status", nil)
	b.stop(t)
	select {
	case p := <-got:
		t.Fatalf("exported to %s with OTEL_TRACES_EXPORTER=none", p)
	case <-time.After(500 * time.Millisecond):
	}
	if strings.Contains(b.stderr.String(), "OpenTelemetry") {
		t.Errorf("the bridge started telemetry:\n%s", b.stderr.String())
	}
}

// TestOpenTelemetryStdio: calls served by the stdio direct path are traced
// too, with the stdio transport's attributes; the spans are flushed when
// the session ends.
func TestOpenTelemetryStdio(t *testing.T) {
	sink := &otlpSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	e := newEnv(t)
	startBackend(t, e.socket)
	for _, proto := range []string{"2025-11-25", ""} { // "": the client's default, 2026-07-28
		cs := connect(t, e, proto)
		callTool(t, cs, "tairseach_server_status", nil)
		// Calls served directly take the client's traceparent from their
		// _meta, each its own, the same _meta twice or not.
		for _, parent := range []string{"00f067aa0ba902b7", "00f067aa0ba902b7", "1111111111111111"} {
			p := &mcp.CallToolParams{Name: "tairseach_demo_echo", Arguments: map[string]any{"q": parent}}
			p.Meta = mcp.Meta{"traceparent": "00-" + stdioTraceID + "-" + parent + "-01"}
			if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
				t.Fatalf("demo.echo: %v %+v", err, res)
			}
		}
		_ = cs.Close() // the bridge exits and flushes
	}
	var spans []*tracepb.Span
	waitFor(t, func() bool { spans, _ = sink.snapshot(); return len(spans) >= 8 }, "the spans flushed at exit")
	status, parents := 0, map[string]int{}
	for _, s := range spans {
		switch s.Name {
		case "tools/call tairseach_server_status":
			status++
			a := attrs(s)
			if a["network.transport"] != "pipe" || a["gen_ai.tool.name"] != "tairseach_server_status" {
				t.Errorf("stdio span attributes %v", a)
			}
			// The call was served directly: the dispatcher passes its id on.
			if id := a["jsonrpc.request.id"]; id == "" || id == "0" {
				t.Errorf("stdio span without the call's jsonrpc.request.id: %v", a)
			}
		case "tools/call tairseach_demo_echo":
			if hex.EncodeToString(s.TraceId) != stdioTraceID {
				t.Errorf("an echo span is not in the client's trace: trace %x", s.TraceId)
			}
			parents[hex.EncodeToString(s.ParentSpanId)]++
		}
	}
	if status != 2 {
		t.Errorf("%d tools/call spans of server.status among %d, want 2", status, len(spans))
	}
	if want := map[string]int{"00f067aa0ba902b7": 4, "1111111111111111": 2}; !maps.Equal(parents, want) {
		t.Errorf("the echo spans' parents %v, want %v (each call's own traceparent, at both revisions)", parents, want)
	}
}

const stdioTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
