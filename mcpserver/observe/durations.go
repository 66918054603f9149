//go:build !notelemetry

package observe

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// durations is the mcp.server.operation.duration histogram, kept here and
// handed to the SDK's periodic reader as an external source (a
// sdkmetric.Producer), which exports it with its own metrics.
//
// A measurement is a map lookup and a few additions under one lock. The
// SDK's Float64Histogram did the same work through its record options,
// attribute filter, exemplar reservoir and aggregation pipeline: about
// 1.7 µs of the server's CPU a call, the largest part of a traced call's
// cost (docs/performance.md). What is exported is what it exported with
// explicit buckets: the same name, unit, description, bucket boundaries
// and attributes, one point per combination of attributes, cumulative
// unless the exporter asks for delta temporality
// (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE). An exporter that
// asks for another aggregation (exponential buckets) gets the SDK's
// histogram instead (StartTelemetry).
type durations struct {
	delta bool // delta temporality: each export holds what was measured since the last

	mu       sync.Mutex
	points   map[attrKey]*durationPoint
	overflow *durationPoint // measurements past maxAttrSets-1 combinations
	start    time.Time      // of every point: when the histogram began, or with delta the last export
}

// durationPoint is one combination of attributes' histogram.
type durationPoint struct {
	attrs         attribute.Set
	counts        [len(durationBounds) + 1]uint64
	count         uint64
	sum, min, max float64
}

// durationBounds are the histogram's explicit bucket boundaries, in
// seconds, as the MCP semantic conventions advise for it.
var durationBounds = [...]float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

const (
	durationName = "mcp.server.operation.duration"
	durationDesc = "Duration of MCP requests handled by the server"
)

// maxAttrSets bounds the points, as the SDK's default cardinality limit
// does: an error type comes from the backend, and a resource's URI from
// the client, so the combinations of attributes are not bounded by the
// manifests alone. The first maxAttrSets-1 combinations have a point each;
// the measurements of the others go to one point with the attribute
// otel.metric.overflow=true, as the specification has it.
const maxAttrSets = 2000

func newDurations(delta bool) *durations {
	return &durations{delta: delta, points: map[attrKey]*durationPoint{}, start: time.Now()}
}

// record measures the call's duration.
func (d *durations) record(o *Call) {
	k := durationKey(o)
	v := o.end.Sub(o.start).Seconds()
	d.mu.Lock()
	p := d.points[k]
	if p == nil {
		p = d.add(k)
	}
	i := 0
	for i < len(durationBounds) && v > durationBounds[i] {
		i++
	}
	p.counts[i]++
	if p.count == 0 || v < p.min {
		p.min = v
	}
	if p.count == 0 || v > p.max {
		p.max = v
	}
	p.count++
	p.sum += v
	d.mu.Unlock()
}

// add makes the point of k, or past maxAttrSets returns the overflow
// point. d.mu is held.
func (d *durations) add(k attrKey) *durationPoint {
	if len(d.points) >= maxAttrSets-1 {
		if d.overflow == nil {
			d.overflow = &durationPoint{attrs: attribute.NewSet(attribute.Bool("otel.metric.overflow", true))}
		}
		return d.overflow
	}
	p := &durationPoint{attrs: attribute.NewSet(k.attributes()...)}
	d.points[k] = p
	return p
}

// Produce returns the histogram's points for the reader's export: every
// point so far (cumulative), or those measured since the last export,
// which begins the next interval (delta).
func (d *durations) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()        // after any measurement recorded before the lock
	bounds := durationBounds // each export its own copy, as the SDK's
	h := metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}
	if d.delta {
		h.Temporality = metricdata.DeltaTemporality
	}
	emit := func(p *durationPoint) {
		if p == nil || p.count == 0 {
			return
		}
		h.DataPoints = append(h.DataPoints, metricdata.HistogramDataPoint[float64]{
			Attributes:   p.attrs,
			StartTime:    d.start,
			Time:         now,
			Count:        p.count,
			Bounds:       bounds[:],
			BucketCounts: append([]uint64(nil), p.counts[:]...),
			Min:          metricdata.NewExtrema(p.min),
			Max:          metricdata.NewExtrema(p.max),
			Sum:          p.sum,
		})
	}
	for _, p := range d.points {
		emit(p)
	}
	emit(d.overflow)
	if d.delta {
		// The next interval starts with no points, as the SDK's delta
		// aggregation does: the bound is on the combinations of one
		// interval, not of the process's life.
		d.points, d.overflow, d.start = make(map[attrKey]*durationPoint, len(d.points)), nil, now
	}
	if len(h.DataPoints) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: scopeName},
		Metrics: []metricdata.Metrics{{Name: durationName, Description: durationDesc, Unit: "s", Data: h}},
	}}, nil
}

// attrKey is what a call's duration attributes are made of.
type attrKey struct {
	method, tool, uri, kind, protocol, transport, errorType string
}

// durationKey is the attributes of the call's duration.
func durationKey(o *Call) attrKey {
	k := attrKey{method: "tools/call", tool: o.trace.name, kind: o.info.Kind, protocol: o.info.Protocol, transport: "pipe", errorType: o.errorType()}
	if k.kind == "" {
		k.kind = "tool"
	}
	if o.target != "" {
		k.method, k.tool = resourceMethod(o.info.Kind), ""
		if k.method == "resources/read" {
			k.uri = o.target
		}
	}
	if o.info.Transport == "http" {
		k.transport = "tcp"
	}
	return k
}

func (k attrKey) attributes() []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", k.method)}
	if k.method == "tools/call" {
		attrs = append(attrs, attribute.String("gen_ai.tool.name", k.tool), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	if k.uri != "" {
		attrs = append(attrs, attribute.String("mcp.resource.uri", k.uri))
	}
	attrs = append(attrs, attribute.String("tairseach.kind", k.kind))
	if k.protocol != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", k.protocol))
	}
	attrs = append(attrs, attribute.String("network.transport", k.transport))
	if k.errorType != "" {
		attrs = append(attrs, attribute.String("error.type", k.errorType))
	}
	return attrs
}
