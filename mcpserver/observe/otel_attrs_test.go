//go:build !notelemetry

package observe

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The duration metric's attribute sets are made once per combination and
// kept: every measurement still carries its own attributes, and what is
// kept is bounded.
func TestAttrSetsKeepEachCombination(t *testing.T) {
	r := sdkmetric.NewManualReader()
	h, err := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)).Meter("t").Float64Histogram("d")
	if err != nil {
		t.Fatal(err)
	}
	var a attrSets
	ctx := context.Background()
	code := int64(1)
	x := &Call{info: CallInfo{Transport: "stdio", Protocol: "2025-11-25"}, outcome: "ok", trace: callTrace{name: "a\x001"}}
	y := &Call{info: CallInfo{Transport: "http", Kind: "tool"}, outcome: "tool_error", code: &code, trace: callTrace{name: "a"}}
	for range 3 {
		h.Record(ctx, 1, a.option(x))
		h.Record(ctx, 2, a.option(y))
	}
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	points := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints
	if len(points) != 2 {
		t.Fatalf("%d data points, want 2 (one per combination)", len(points))
	}
	wantX := attribute.NewSet(
		attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", "a\x001"),
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("tairseach.kind", "tool"),
		attribute.String("mcp.protocol.version", "2025-11-25"), attribute.String("network.transport", "pipe"))
	wantY := attribute.NewSet(
		attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", "a"),
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("tairseach.kind", "tool"),
		attribute.String("network.transport", "tcp"), attribute.String("error.type", "1"))
	for _, p := range points {
		want := wantX
		if p.Sum == 6 {
			want = wantY
		}
		if !p.Attributes.Equals(&want) || p.Count != 3 {
			t.Errorf("a point of %d with sum %v and %v; want 3 with %v", p.Count, p.Sum, p.Attributes.ToSlice(), want.ToSlice())
		}
	}
	if n := len(a.m); n != 2 {
		t.Errorf("%d sets kept, want 2", n)
	}
	for i := range maxAttrSets + 10 {
		a.option(&Call{outcome: "ok", trace: callTrace{name: string(rune(i))}})
	}
	if n := len(a.m); n != maxAttrSets {
		t.Errorf("%d sets kept, want at most %d", n, maxAttrSets)
	}
}
