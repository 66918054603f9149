//go:build !notelemetry

package observe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Telemetry exports a span and a duration measurement per tool call, named
// by the OpenTelemetry semantic conventions for MCP, over OTLP/HTTP.
type Telemetry struct {
	traces   *sdktrace.TracerProvider
	metrics  *sdkmetric.MeterProvider // nil: metrics not exported
	tracer   trace.Tracer
	duration metric.Float64Histogram
	sets     attrSets // the duration's attribute sets, made once each
}

// attrSets keeps the attribute set of each distinct combination of a
// measurement's attributes. A call's are the same as many others' (method,
// tool, kind, protocol, transport, error type), and making a set sorts
// and hashes them: a tenth of a traced call's CPU at 8 callers.
type attrSets struct {
	m sync.Map     // key → metric.MeasurementOption
	n atomic.Int64 // entries, bounded by maxAttrSets
}

// maxAttrSets bounds the sets kept: an error type comes from the backend,
// so the combinations are not bounded by the manifests alone.
const maxAttrSets = 4096

func (a *attrSets) option(attrs []attribute.KeyValue) metric.MeasurementOption {
	var b strings.Builder
	for _, kv := range attrs {
		v := kv.Value.String()
		b.WriteString(string(kv.Key))
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(int(kv.Value.Type())))
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(0)
		b.WriteString(v)
	}
	key := b.String()
	if o, ok := a.m.Load(key); ok {
		return o.(metric.MeasurementOption)
	}
	o := metric.WithAttributeSet(attribute.NewSet(slices.Clone(attrs)...)) // NewSet sorts in place
	if a.n.Load() < maxAttrSets {
		if _, loaded := a.m.LoadOrStore(key, o); !loaded {
			a.n.Add(1)
		}
	}
	return o
}

// spanHandOnDelay is how long an ended span waits to be handed to the
// batch span processor with the others (see spanBuffer); the batch
// processor then waits OTEL_BSP_SCHEDULE_DELAY (5 s) to export.
const spanHandOnDelay = 5 * time.Millisecond

// StartTelemetry starts the OTLP/HTTP exporters configured by the standard
// OTEL_* environment. Call it only when TelemetryWanted; Shutdown flushes.
func StartTelemetry(ctx context.Context, version string) (*Telemetry, error) {
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: tairseach-mcp exports OTLP over HTTP only; set it to http/protobuf or unset it", p)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "tairseach-mcp"), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	texp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry trace exporter: %w", err)
	}
	batcher := newSpanBuffer(sdktrace.NewBatchSpanProcessor(texp), spanHandOnDelay)
	t := &Telemetry{traces: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(batcher), sdktrace.WithResource(res))}
	t.tracer = t.traces.Tracer("github.com/geilt/tairseach-mcp/mcpserver", trace.WithInstrumentationVersion(version))
	var meter metric.Meter
	if e := os.Getenv("OTEL_METRICS_EXPORTER"); e == "" || e == "otlp" {
		mexp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			_ = t.traces.Shutdown(ctx)
			return nil, fmt.Errorf("OpenTelemetry metric exporter: %w", err)
		}
		t.metrics = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)), sdkmetric.WithResource(res))
		meter = t.metrics.Meter("github.com/geilt/tairseach-mcp/mcpserver")
	}
	if meter != nil {
		t.duration, err = meter.Float64Histogram("mcp.server.operation.duration",
			metric.WithUnit("s"),
			metric.WithDescription("Duration of MCP requests handled by the server"),
			metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300))
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, fmt.Errorf("OpenTelemetry histogram: %w", err)
		}
	}
	return t, nil
}

// Shutdown flushes and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	err := t.traces.Shutdown(ctx)
	if t.metrics != nil {
		err = errors.Join(err, t.metrics.Shutdown(ctx))
	}
	return err
}

// callSpan is the span of one tools/call.
type callSpan struct {
	t     *Telemetry
	span  trace.Span
	attrs []attribute.KeyValue // shared by the span and the metric
}

// startCall starts the server span of a call, as a child of the trace
// context the client passed in params._meta, if any.
func (t *Telemetry) startCall(ctx context.Context, o *Call) context.Context {
	transport := "pipe" // stdio
	method, name := "tools/call", o.tool
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", method),
		attribute.String("gen_ai.tool.name", o.tool),
		attribute.String("gen_ai.operation.name", "execute_tool"),
	}
	if o.target != "" {
		// A resource read or a completion: named by its MCP method and
		// target, with the kind the audit log gives it.
		method, name = "resources/read", o.target
		if o.info.Kind == "completion" {
			method = "completion/complete"
		}
		attrs = []attribute.KeyValue{attribute.String("mcp.method.name", method)}
		if method == "resources/read" {
			attrs = append(attrs, attribute.String("mcp.resource.uri", o.target))
		}
	}
	attrs = append(attrs, attribute.String("tairseach.kind", cmp.Or(o.info.Kind, "tool")))
	var extra []attribute.KeyValue
	if ci := o.info; ci != nil {
		if ci.Transport == "http" {
			transport = "tcp"
			extra = append(extra, attribute.String("network.protocol.name", "http"))
		}
		if ci.Protocol != "" {
			attrs = append(attrs, attribute.String("mcp.protocol.version", ci.Protocol))
		}
		if ci.Session != "" {
			extra = append(extra, attribute.String("mcp.session.id", ci.Session))
		}
		if ci.RequestID != "" {
			extra = append(extra, attribute.String("jsonrpc.request.id", strings.Trim(ci.RequestID, `"`)))
		}
		carrier := propagation.MapCarrier{}
		for _, k := range []string{"traceparent", "tracestate"} {
			if v, ok := ci.Meta[k].(string); ok {
				carrier[k] = v
			}
		}
		if len(carrier) > 0 {
			ctx = propagation.TraceContext{}.Extract(ctx, carrier)
		}
	}
	attrs = append(attrs, attribute.String("network.transport", transport))
	ctx, span := t.tracer.Start(ctx, method+" "+name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(o.start), trace.WithAttributes(attrs...), trace.WithAttributes(extra...))
	o.span = &callSpan{t: t, span: span, attrs: attrs}
	return ctx
}

// endCall ends the span and measures the call.
func (t *Telemetry) endCall(o *Call) {
	cs, _ := o.span.(*callSpan)
	if cs == nil {
		return
	}
	attrs := cs.attrs
	if etype := o.errorType(); etype != "" {
		e := attribute.String("error.type", etype)
		attrs = append(slices.Clip(attrs), e)
		cs.span.SetAttributes(e)
		cs.span.SetStatus(codes.Error, o.outcome)
	}
	cs.span.SetAttributes(attribute.String("tairseach.outcome", o.outcome))
	end := time.Now()
	cs.span.End(trace.WithTimestamp(end))
	if t.duration != nil {
		t.duration.Record(context.Background(), end.Sub(o.start).Seconds(), t.sets.option(attrs))
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

// socketSpan starts the client span of the socket call; the returned func
// ends it with the call's error.
func (cs *callSpan) socketSpan(ctx context.Context, method, socket string) (end func(error)) {
	_, span := cs.t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("rpc.system", "jsonrpc"),
			attribute.String("rpc.method", method),
			attribute.String("network.transport", "unix"),
			attribute.String("server.address", socket),
		))
	return func(err error) {
		if err != nil {
			etype := "transport_error"
			var rpcErr *socketrpc.Error
			if errors.As(err, &rpcErr) {
				etype = "jsonrpc_error"
			} else if errors.Is(err, context.DeadlineExceeded) {
				etype = "timeout"
			}
			span.SetAttributes(attribute.String("error.type", etype))
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
