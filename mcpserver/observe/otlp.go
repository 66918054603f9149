//go:build !notelemetry

package observe

import (
	"encoding/binary"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// spanRecord is what the span of one call is made of, copied from its
// Call as it ends: a value in the queue, no allocation.
type spanRecord struct {
	trace      callTrace
	id         [8]byte
	start, end time.Time
	kind       string // the audit log's kind; "" is "tool"
	target     string
	protocol   string
	transport  string
	session    string
	requestID  string
	outcome    string
	errorType  string
	forwarded  bool
	method     string // the socket call's
	socket     string
	sockErr    string // its error's type; "" when it succeeded
	sockMsg    string // its error
}

func newSpanRecord(o *Call, end time.Time) spanRecord {
	r := spanRecord{
		trace: o.trace, id: o.id, start: o.start, end: end,
		kind: o.info.Kind, target: o.target, protocol: o.info.Protocol, transport: o.info.Transport,
		session: o.info.Session, requestID: strings.Trim(o.info.RequestID, `"`),
		outcome: o.outcome, errorType: o.errorType(),
		forwarded: o.forwarded, method: o.method, socket: o.socket,
	}
	if o.err != nil {
		r.sockErr, r.sockMsg = socketErrorType(o.err), o.err.Error()
	}
	return r
}

// batchEncoder writes queued spans as the OTLP protobuf of one
// ResourceSpans: the resource and its schema as the SDK's types, made
// once; the ScopeSpans written here, by hand, as the bytes of its field 2,
// which protobuf's Marshal writes out as they are (unknown fields are
// kept). Only the exporter's goroutine uses it.
type batchEncoder struct {
	resource  *resourcepb.Resource
	schemaURL string
	scope     []byte // field 1 of ScopeSpans: the instrumentation scope
	body      []byte // a ScopeSpans being written
	span      []byte // a span being written
	out       []byte // the ScopeSpans, as field 2 of a ResourceSpans
}

func newBatchEncoder(res *resource.Resource, version string) *batchEncoder {
	e := &batchEncoder{resource: &resourcepb.Resource{}, schemaURL: res.SchemaURL()}
	for _, kv := range res.Attributes() {
		e.resource.Attributes = append(e.resource.Attributes, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	var scope []byte
	scope = appendString(scope, 1, scopeName)
	scope = appendString(scope, 2, version)
	e.scope = appendBytes(nil, 1, scope)
	return e
}

// anyValue is an attribute's value as OTLP's AnyValue.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		arr := &commonpb.ArrayValue{}
		switch v.Type() {
		case attribute.BOOLSLICE:
			for _, x := range v.AsBoolSlice() {
				arr.Values = append(arr.Values, anyValue(attribute.BoolValue(x)))
			}
		case attribute.INT64SLICE:
			for _, x := range v.AsInt64Slice() {
				arr.Values = append(arr.Values, anyValue(attribute.Int64Value(x)))
			}
		case attribute.FLOAT64SLICE:
			for _, x := range v.AsFloat64Slice() {
				arr.Values = append(arr.Values, anyValue(attribute.Float64Value(x)))
			}
		default:
			for _, x := range v.AsStringSlice() {
				arr.Values = append(arr.Values, anyValue(attribute.StringValue(x)))
			}
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.String()}}
}

// encode returns the ResourceSpans of spans, ready for the OTLP client.
// Its bytes are the encoder's until the next call.
func (e *batchEncoder) encode(spans []spanRecord) *tracepb.ResourceSpans {
	e.body = append(e.body[:0], e.scope...)
	for i := range spans {
		r := &spans[i]
		e.span = r.appendCallSpan(e.span[:0])
		e.body = appendBytes(e.body, 2, e.span)
	}
	e.out = appendBytes(e.out[:0], 2, e.body)
	rs := &tracepb.ResourceSpans{Resource: e.resource, SchemaUrl: e.schemaURL}
	rs.ProtoReflect().SetUnknown(protoreflect.RawFields(e.out))
	return rs
}

// OTLP's span kinds, status codes and span flags.
const (
	spanKindServer     = 2
	statusCodeError    = 2
	flagsHasIsRemote   = 0x100
	flagsParentRemote  = 0x200
	fieldSpanAttribute = 9
)

// appendCallSpan appends the Span message of the call, with the
// attributes the MCP semantic conventions give a server span, and those
// of its socket call: one span a call, where a client span of its own for
// the socket call cost a third of the telemetry's CPU (docs/performance.md).
func (r *spanRecord) appendCallSpan(b []byte) []byte {
	tr := &r.trace
	method := "tools/call"
	if r.target != "" {
		method = resourceMethod(r.kind)
	}
	b = appendBytes(b, 1, tr.traceID[:])
	b = appendBytes(b, 2, r.id[:])
	b = appendString(b, 3, tr.traceState)
	if tr.parent != ([8]byte{}) {
		b = appendBytes(b, 4, tr.parent[:])
	}
	name := validUTF8(tr.name)
	b = appendTag(b, 5, wireLen)
	b = appendVarint(b, uint64(len(method)+1+len(name)))
	b = append(append(append(b, method...), ' '), name...)
	b = appendVarintField(b, 6, spanKindServer)
	b = appendFixed64(b, 7, uint64(r.start.UnixNano()))
	b = appendFixed64(b, 8, uint64(r.end.UnixNano()))
	b = appendAttr(b, "mcp.method.name", method)
	if r.target == "" {
		b = appendAttr(b, "gen_ai.tool.name", tr.name)
		b = appendAttr(b, "gen_ai.operation.name", "execute_tool")
	} else if method == "resources/read" {
		b = appendAttr(b, "mcp.resource.uri", r.target)
	}
	kind := r.kind
	if kind == "" {
		kind = "tool"
	}
	b = appendAttr(b, "tairseach.kind", kind)
	if r.protocol != "" {
		b = appendAttr(b, "mcp.protocol.version", r.protocol)
	}
	if r.transport == "http" {
		b = appendAttr(b, "network.transport", "tcp")
		b = appendAttr(b, "network.protocol.name", "http")
	} else {
		b = appendAttr(b, "network.transport", "pipe")
	}
	if r.session != "" {
		b = appendAttr(b, "mcp.session.id", r.session)
	}
	if r.requestID != "" {
		b = appendAttr(b, "jsonrpc.request.id", r.requestID)
	}
	if r.errorType != "" {
		b = appendAttr(b, "error.type", r.errorType)
	}
	b = appendAttr(b, "tairseach.outcome", r.outcome)
	if r.forwarded {
		b = appendAttr(b, "tairseach.socket.method", r.method)
		b = appendAttr(b, "tairseach.socket", r.socket)
		if r.sockErr != "" {
			b = appendAttr(b, "tairseach.socket.error.type", r.sockErr)
		}
	}
	switch {
	case r.sockErr != "":
		b = appendStatus(b, statusCodeError, r.sockMsg)
	case r.errorType != "":
		b = appendStatus(b, statusCodeError, r.outcome)
	default:
		b = appendStatus(b, 0, "")
	}
	flags := uint32(tr.flags) | flagsHasIsRemote
	if tr.remote {
		flags |= flagsParentRemote
	}
	return appendFixed32(b, 16, flags)
}

// Protobuf's wire format, as much of it as a span needs.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireLen     = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte { return appendVarint(b, uint64(field<<3|wire)) }

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return appendVarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendBytes(b []byte, field int, v []byte) []byte {
	return append(appendVarint(appendTag(b, field, wireLen), uint64(len(v))), v...)
}

// appendString appends a string field; proto3 leaves an empty one out.
func appendString(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	s = validUTF8(s)
	return append(appendVarint(appendTag(b, field, wireLen), uint64(len(s))), s...)
}

// validUTF8 is s with each run of bytes that is not UTF-8 replaced by
// U+FFFD: a protobuf string must be UTF-8, and one that is not makes the
// collector refuse the whole batch. A socket path or a request id may
// hold any bytes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// appendAttr appends a span attribute: a KeyValue whose value is an
// AnyValue string (written even when empty: it is one of a oneof).
func appendAttr(b []byte, key, value string) []byte {
	value = validUTF8(value)
	anyLen := 1 + varintLen(uint64(len(value))) + len(value)
	kvLen := 1 + varintLen(uint64(len(key))) + len(key) + 1 + varintLen(uint64(anyLen)) + anyLen
	b = appendVarint(appendTag(b, fieldSpanAttribute, wireLen), uint64(kvLen))
	b = appendString(b, 1, key)
	b = appendVarint(appendTag(b, 2, wireLen), uint64(anyLen))
	b = appendVarint(appendTag(b, 1, wireLen), uint64(len(value)))
	return append(b, value...)
}

// appendStatus appends a span's Status (field 15), written even when
// empty, as the SDK's exporter writes it.
func appendStatus(b []byte, code uint64, msg string) []byte {
	n := 0
	if msg != "" {
		n += 1 + varintLen(uint64(len(msg))) + len(msg)
	}
	if code != 0 {
		n += 1 + varintLen(code)
	}
	b = appendVarint(appendTag(b, 15, wireLen), uint64(n))
	b = appendString(b, 2, msg)
	if code != 0 {
		b = appendVarintField(b, 3, code)
	}
	return b
}
