//go:build !notelemetry

package observe

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// durationCalls are calls of two tools, a resource read and a failure, with
// durations on and between the buckets' boundaries.
func durationCalls() []*Call {
	t0 := time.Unix(1_700_000_000, 0)
	code := int64(-32001)
	at := func(d time.Duration, o *Call) *Call { o.start, o.end = t0, t0.Add(d); return o }
	var calls []*Call
	for i, d := range []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond, 400 * time.Millisecond, 7 * time.Second, 20 * time.Minute} {
		calls = append(calls,
			at(d, &Call{info: CallInfo{Transport: "stdio", Protocol: "2025-11-25"}, outcome: "ok", trace: callTrace{name: "tairseach_contacts_list"}}),
			at(d/2, &Call{info: CallInfo{Transport: "http", Kind: "tool"}, outcome: "tool_error", code: &code, trace: callTrace{name: "tairseach_demo_fail"}}))
		if i%2 == 0 {
			calls = append(calls, at(d, &Call{info: CallInfo{Transport: "stdio", Kind: "resource", Protocol: "2026-07-28"}, outcome: "ok", target: "tairseach://contacts", trace: callTrace{name: "tairseach://contacts"}}))
		}
	}
	return calls
}

// collect is what a reader exports of the histogram: its points, sorted by
// their attributes, without their times, and the temporality.
func collect(t *testing.T, r sdkmetric.Reader) ([]metricdata.HistogramDataPoint[float64], metricdata.Temporality) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		return nil, 0
	}
	if len(rm.ScopeMetrics) != 1 || len(rm.ScopeMetrics[0].Metrics) != 1 {
		t.Fatalf("exported %+v; want one metric", rm.ScopeMetrics)
	}
	m := rm.ScopeMetrics[0].Metrics[0]
	if m.Name != durationName || m.Unit != "s" || m.Description != durationDesc || rm.ScopeMetrics[0].Scope.Name != scopeName {
		t.Errorf("exported %q (%s, %q) in scope %q", m.Name, m.Unit, m.Description, rm.ScopeMetrics[0].Scope.Name)
	}
	h := m.Data.(metricdata.Histogram[float64])
	points := h.DataPoints
	for i := range points {
		points[i].StartTime, points[i].Time = time.Time{}, time.Time{}
	}
	slices.SortFunc(points, func(a, b metricdata.HistogramDataPoint[float64]) int {
		return compareStrings(a.Attributes.Encoded(attribute.DefaultEncoder()), b.Attributes.Encoded(attribute.DefaultEncoder()))
	})
	return points, h.Temporality
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// The duration histogram exports what the SDK's Float64Histogram, given
// the same boundaries and attributes, exported for the same calls: the
// points, counts, buckets, sums and extremes, cumulative by default.
func TestDurationsExportAsTheSDKDid(t *testing.T) {
	sdkReader := sdkmetric.NewManualReader()
	h, err := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkReader)).Meter(scopeName).Float64Histogram(durationName,
		metric.WithUnit("s"), metric.WithDescription(durationDesc), metric.WithExplicitBucketBoundaries(durationBounds[:]...))
	if err != nil {
		t.Fatal(err)
	}
	d := newDurations(false)
	ours := sdkmetric.NewManualReader(sdkmetric.WithProducer(d))
	sdkmetric.NewMeterProvider(sdkmetric.WithReader(ours))
	if got, _ := collect(t, ours); got != nil {
		t.Fatalf("exported %d points before any call", len(got))
	}
	for round := range 2 {
		for _, o := range durationCalls() {
			d.record(o)
			h.Record(context.Background(), o.end.Sub(o.start).Seconds(), metric.WithAttributeSet(attribute.NewSet(durationKey(o).attributes()...)))
		}
		want, _ := collect(t, sdkReader)
		got, temporality := collect(t, ours)
		if temporality != metricdata.CumulativeTemporality {
			t.Errorf("temporality %v, want cumulative", temporality)
		}
		if len(got) != 3 || len(got) != len(want) {
			t.Fatalf("round %d: %d points, the SDK's %d; want 3, one per tool and the read", round, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if !g.Attributes.Equals(&w.Attributes) || g.Count != w.Count || g.Sum != w.Sum || !slices.Equal(g.Bounds, w.Bounds) || !slices.Equal(g.BucketCounts, w.BucketCounts) || g.Min != w.Min || g.Max != w.Max {
				t.Errorf("round %d: point\n%+v\nthe SDK's\n%+v", round, g, w)
			}
		}
	}
}

// With delta temporality each export holds what was measured since the
// one before.
func TestDurationsDelta(t *testing.T) {
	d := newDurations(true)
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(d))
	sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	calls := durationCalls()
	for _, o := range calls {
		d.record(o)
	}
	count := func() (n uint64) {
		points, temporality := collect(t, r)
		if points != nil && temporality != metricdata.DeltaTemporality {
			t.Errorf("temporality %v, want delta", temporality)
		}
		for _, p := range points {
			n += p.Count
		}
		return n
	}
	if n := count(); n != uint64(len(calls)) {
		t.Errorf("first export: %d measurements, want %d", n, len(calls))
	}
	if n := count(); n != 0 {
		t.Errorf("an export with no call between: %d measurements, want 0", n)
	}
	d.record(calls[0])
	if n := count(); n != 1 {
		t.Errorf("after one call: %d measurements, want 1", n)
	}
}

// The points are bounded, overflow point included, as the SDK's
// cardinality limit bounds them: past maxAttrSets-1 combinations,
// measurements go to one point marked otel.metric.overflow, and none is
// lost.
func TestDurationsOverflow(t *testing.T) {
	d := newDurations(false)
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(d))
	sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	now := time.Now()
	for i := range maxAttrSets + 10 {
		d.record(&Call{start: now, end: now, outcome: "ok", trace: callTrace{name: string(rune('a' + i))}})
	}
	d.record(&Call{start: now, end: now, outcome: "ok", trace: callTrace{name: "a"}})
	points, _ := collect(t, r)
	if len(points) != maxAttrSets {
		t.Fatalf("%d points, want %d, the overflow's included", len(points), maxAttrSets)
	}
	var total uint64
	for _, p := range points {
		total += p.Count
		if v, ok := p.Attributes.Value("otel.metric.overflow"); ok {
			if !v.AsBool() || p.Count != 11 || p.Attributes.Len() != 1 {
				t.Errorf("overflow point %v with %d measurements; want only otel.metric.overflow=true, with 11", p.Attributes.ToSlice(), p.Count)
			}
		}
	}
	if total != maxAttrSets+11 {
		t.Errorf("%d measurements exported, want %d", total, maxAttrSets+11)
	}

	// With delta temporality the bound is on one interval's combinations:
	// after an export, a combination not seen before has its own point.
	d = newDurations(true)
	r = sdkmetric.NewManualReader(sdkmetric.WithProducer(d))
	sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	for i := range maxAttrSets + 1 {
		d.record(&Call{start: now, end: now, outcome: "ok", trace: callTrace{name: string(rune('a' + i))}})
	}
	if points, _ := collect(t, r); len(points) != maxAttrSets {
		t.Fatalf("delta: %d points, want %d, the overflow's included", len(points), maxAttrSets)
	}
	d.record(&Call{start: now, end: now, outcome: "ok", trace: callTrace{name: "new"}})
	points, _ = collect(t, r)
	if len(points) != 1 || points[0].Attributes.HasValue("otel.metric.overflow") {
		t.Errorf("delta, the next interval: %d points; want one, of the new tool", len(points))
	}
}

// metricSink is an OTLP/HTTP endpoint that keeps the duration histogram of
// the metric exports it receives.
type metricSink struct {
	mu     sync.Mutex
	points []*metricspb.Metric
}

func (s *metricSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/metrics" {
		return
	}
	var req collmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == durationName {
					s.points = append(s.points, m)
				}
			}
		}
	}
}

// Through StartTelemetry and the OTLP exporter, the duration is exported
// as the OTEL_* environment asks: explicit buckets, cumulative, by
// default; delta when the temporality preference says so; and an
// exponential histogram, made by the SDK, when the default aggregation
// says so. OTEL_METRICS_EXPORTER is a list; naming otlp anywhere in it
// exports, none does not.
func TestDurationExportFollowsTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name, exporter, temporality, aggregation string
		want                                     string // "histogram", "delta", "exponential" or "" (none)
	}{
		{"default", "", "", "", "histogram"},
		{"delta", "", "delta", "", "delta"},
		{"exponential", "", "", "base2_exponential_bucket_histogram", "exponential"},
		{"a list naming otlp", " console, OTLP ", "", "", "histogram"},
		{"none", "none", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &metricSink{}
			srv := httptest.NewServer(sink)
			defer srv.Close()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
			t.Setenv("OTEL_METRICS_EXPORTER", tc.exporter)
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", tc.temporality)
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION", tc.aggregation)
			tel := startAndCall(t, 3)
			if err := tel.Shutdown(context.Background()); err != nil { // exports what is measured
				t.Fatal(err)
			}
			sink.mu.Lock()
			defer sink.mu.Unlock()
			if tc.want == "" {
				if len(sink.points) != 0 {
					t.Fatalf("OTEL_METRICS_EXPORTER=%q exported %d durations", tc.exporter, len(sink.points))
				}
				return
			}
			if len(sink.points) == 0 {
				t.Fatal("no duration exported")
			}
			m := sink.points[len(sink.points)-1]
			var got string
			var count uint64
			switch d := m.Data.(type) {
			case *metricspb.Metric_Histogram:
				got = "histogram"
				if d.Histogram.AggregationTemporality == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA {
					got = "delta"
				}
				for _, p := range d.Histogram.DataPoints {
					count += p.Count
					if !slices.Equal(p.ExplicitBounds, durationBounds[:]) {
						t.Errorf("bounds %v, want %v", p.ExplicitBounds, durationBounds)
					}
				}
			case *metricspb.Metric_ExponentialHistogram:
				got = "exponential"
				for _, p := range d.ExponentialHistogram.DataPoints {
					count += p.Count
				}
			}
			if got != tc.want || count != 3 || m.Unit != "s" {
				t.Errorf("exported a %s of %d calls in %q (%T); want a %s of 3 in s", got, count, m.Unit, m.Data, tc.want)
			}
		})
	}
}

// startAndCall starts the telemetry the OTEL_* environment asks for and
// records n calls of the echo tool, as the call pipeline records them.
func startAndCall(t *testing.T, n int) *Telemetry {
	t.Helper()
	tel, err := StartTelemetry(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	ob := Observer{Telemetry: tel}
	for range n {
		_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "tairseach_demo_echo", nil)
		ob.End(c, &mcp.CallToolResult{}, 1<<20)
	}
	return tel
}
