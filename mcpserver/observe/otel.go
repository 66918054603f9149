//go:build !notelemetry

package observe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Telemetry exports a span per tool call, named by the OpenTelemetry
// semantic conventions for MCP, with its socket call's method, socket and
// error as attributes, and a duration measurement, over OTLP/HTTP.
//
// The spans are not made with the SDK's tracer: a call keeps its ids and
// times in its Call, and at its end one value is queued (spanQueue); the
// exporter's goroutine writes the queued spans as OTLP protobuf itself
// (otlp.go) and hands the bytes to the SDK's OTLP/HTTP client, which sends
// them as configured by the OTEL_* environment. The SDK's tracer and its
// exporter cost 20–30 µs of CPU a call in allocations, attribute sets and
// protobuf reflection (docs/performance.md); this costs about 2. The
// duration histogram is kept here too (durations) and exported by the
// SDK's metric reader, unless the exporter asks for an aggregation other
// than explicit buckets: then the SDK's own histogram measures it.
type Telemetry struct {
	spans     *spanQueue
	sampler   sdktrace.Sampler
	metrics   *sdkmetric.MeterProvider // nil: metrics not exported
	durations *durations               // the duration histogram its reader exports; or
	histogram metric.Float64Histogram  // the SDK's, for an exponential aggregation
}

// StartTelemetry starts the OTLP/HTTP exporters configured by the standard
// OTEL_* environment. Call it only when TelemetryWanted; Shutdown flushes.
func StartTelemetry(ctx context.Context, version string) (*Telemetry, error) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := os.Getenv(v); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("%s=%s: tairseach-mcp exports OTLP over HTTP with protobuf only; set it to http/protobuf or unset it", v, p)
		}
	}
	sampler, err := samplerFromEnv()
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "tairseach-mcp"), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	client := otlptracehttp.NewClient()
	if err := client.Start(ctx); err != nil {
		return nil, fmt.Errorf("OpenTelemetry trace exporter: %w", err)
	}
	t := &Telemetry{sampler: sampler, spans: newSpanQueue(client, newBatchEncoder(res, version), bspFromEnv())}
	if metricsWanted() {
		mexp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			_ = t.spans.shutdown(ctx)
			return nil, fmt.Errorf("OpenTelemetry metric exporter: %w", err)
		}
		var opts []sdkmetric.PeriodicReaderOption
		switch mexp.Aggregation(sdkmetric.InstrumentKindHistogram).(type) {
		case sdkmetric.AggregationDefault, sdkmetric.AggregationExplicitBucketHistogram:
			t.durations = newDurations(mexp.Temporality(sdkmetric.InstrumentKindHistogram) == metricdata.DeltaTemporality)
			opts = append(opts, sdkmetric.WithProducer(t.durations))
		}
		t.metrics = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp, opts...)), sdkmetric.WithResource(res))
		if t.durations == nil {
			// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=base2_exponential_bucket_histogram
			t.histogram, err = t.metrics.Meter(scopeName).Float64Histogram(durationName, metric.WithUnit("s"),
				metric.WithDescription(durationDesc), metric.WithExplicitBucketBoundaries(durationBounds[:]...))
			if err != nil {
				_ = t.Shutdown(ctx)
				return nil, fmt.Errorf("OpenTelemetry histogram: %w", err)
			}
		}
	}
	return t, nil
}

// metricsWanted reports whether OTEL_METRICS_EXPORTER, a comma-separated
// list, leaves the metrics to be exported over OTLP: unset, or naming otlp.
func metricsWanted() bool {
	e := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_METRICS_EXPORTER")))
	if e == "" {
		return true
	}
	for v := range strings.SplitSeq(e, ",") {
		if strings.TrimSpace(v) == "otlp" {
			return true
		}
	}
	return false
}

// scopeName is the instrumentation scope of the spans and the metric.
const scopeName = "github.com/geilt/tairseach-mcp/mcpserver"

// Shutdown exports what is queued and stops the exporters.
// The spans and the metrics are exported side by side, each with the
// whole of ctx's time: a trace collector that does not answer must not
// use up the time the last metrics have to reach theirs.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return t.both(ctx, t.spans.shutdown, (*sdkmetric.MeterProvider).Shutdown)
}

// ForceFlush exports the spans queued and the metrics so far, side by side.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	return t.both(ctx, t.spans.flush, (*sdkmetric.MeterProvider).ForceFlush)
}

// both runs spans, and metrics on the meter provider if there is one, at
// the same time, and returns once both have.
func (t *Telemetry) both(ctx context.Context, spans func(context.Context) error, metrics func(*sdkmetric.MeterProvider, context.Context) error) error {
	if t.metrics == nil {
		return spans(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- metrics(t.metrics, ctx) }()
	err := spans(ctx)
	return errors.Join(err, <-done)
}

// samplerFromEnv is the sampler OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name, as the SDK's tracer provider reads them.
func samplerFromEnv() (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := 1.0
	if strings.HasSuffix(name, "traceidratio") && arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%s: the ratio of traceidratio is a number from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%s: tairseach-mcp knows always_on, always_off, traceidratio, parentbased_always_on (the default), parentbased_always_off and parentbased_traceidratio", name)
}

// startCall gives a call its trace: the client's, from the traceparent in
// its _meta, or a new one; and decides whether its spans are exported.
func (t *Telemetry) startCall(o *Call) {
	o.traced = true
	tr := &o.trace
	tr.name = o.tool
	if o.target != "" {
		tr.name = o.target
	}
	pctx := context.Background()
	var psc trace.SpanContext
	if tp, ok := o.info.Meta["traceparent"].(string); ok {
		carrier := propagation.MapCarrier{"traceparent": tp}
		if ts, ok := o.info.Meta["tracestate"].(string); ok {
			carrier["tracestate"] = ts
		}
		pctx = propagation.TraceContext{}.Extract(pctx, carrier)
		psc = trace.SpanContextFromContext(pctx)
	}
	if psc.IsValid() {
		tr.traceID, tr.parent, tr.remote = psc.TraceID(), psc.SpanID(), true
	} else {
		putUint64(tr.traceID[:8], rand.Uint64())
		putUint64(tr.traceID[8:], rand.Uint64())
	}
	r := t.sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: pctx, TraceID: tr.traceID, Kind: trace.SpanKindServer})
	tr.sampled = r.Decision == sdktrace.RecordAndSample
	tr.flags = byte(psc.TraceFlags() &^ trace.FlagsSampled)
	if tr.sampled {
		tr.flags |= byte(trace.FlagsSampled)
		if r.Tracestate.Len() > 0 {
			tr.traceState = r.Tracestate.String()
		}
	}
}

// endCall queues the call's span and measures it.
func (t *Telemetry) endCall(o *Call) {
	if o.trace.sampled {
		t.spans.add(newSpanRecord(o, o.end))
	}
	switch {
	case t.durations != nil:
		t.durations.record(o)
	case t.histogram != nil:
		t.histogram.Record(context.Background(), o.end.Sub(o.start).Seconds(), metric.WithAttributeSet(attribute.NewSet(durationKey(o).attributes()...)))
	}
}

// errorType is the span's error.type: the backend's JSON-RPC code for its
// errors, "tool_error" for other isError results, the outcome for calls
// that never finished; "" on success.
func (o *Call) errorType() string {
	switch o.outcome {
	case "ok":
		return ""
	case "tool_error":
		if o.code != nil {
			return strconv.FormatInt(*o.code, 10)
		}
		return "tool_error"
	case "timeout", "cancelled":
		return o.outcome
	}
	return "tool_error"
}

// socketErrorType is the socket call's error.type.
func socketErrorType(err error) string {
	var rpcErr *socketrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return "jsonrpc_error"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "transport_error"
}

// resourceMethod is the MCP method of a request of another kind than a
// tool call: a completion, or a resource read.
func resourceMethod(kind string) string {
	if kind == "completion" {
		return "completion/complete"
	}
	return "resources/read"
}

// handle reports an export error as the SDK does: to the global handler.
func handle(err error) { otel.Handle(err) }
