package observe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// auditLine is one record. Field order is the line's. appendLine writes it
// as json.Marshal would, byte for byte (TestAuditLineBytes), without
// reflection: the audit log is written once a call.
type auditLine struct {
	Time        string              `json:"time"`
	CallID      string              `json:"call_id,omitempty"`
	TraceID     string              `json:"trace_id,omitempty"`
	Transport   string              `json:"transport"`
	Session     string              `json:"session,omitempty"`
	Client      *mcp.Implementation `json:"client,omitempty"`
	Protocol    string              `json:"protocol,omitempty"`
	RequestID   json.RawMessage     `json:"request_id,omitempty"`
	Kind        string              `json:"kind"`
	Tool        string              `json:"tool"`
	Target      string              `json:"target,omitempty"`
	Method      string              `json:"method,omitempty"`
	Socket      string              `json:"socket,omitempty"`
	ArgsSHA256  string              `json:"args_sha256"`
	Args        json.RawMessage     `json:"args,omitempty"`
	Outcome     string              `json:"outcome"`
	Code        *int64              `json:"code,omitempty"`
	DurationMs  float64             `json:"duration_ms"`
	ResultBytes int                 `json:"result_bytes"`

	// What appendLine writes in place of an empty Time, CallID, TraceID
	// and ArgsSHA256, without making their strings.
	at      time.Time
	callID  *[8]byte
	traceID *[16]byte
	sum     *[32]byte
}

// appendLine appends l as json.Marshal writes it, or reports false for
// what it leaves to json.Marshal (a duration it would write with an
// exponent, a request id or arguments that are not valid JSON). client is
// l.Client as json.Marshal writes it (nil leaves it to json.Marshal).
func appendLine(b []byte, l *auditLine, client []byte) ([]byte, bool) {
	// Every member but the first, time, which is never empty.
	str := func(b []byte, name, v string, omitEmpty bool) []byte {
		if omitEmpty && v == "" {
			return b
		}
		b = append(append(append(b, `,"`...), name...), `":`...)
		return jsonenc.AppendString(b, v, true)
	}
	raw := func(b []byte, name string, v json.RawMessage) ([]byte, bool) {
		if len(v) == 0 {
			return b, true
		}
		if plainNumber(v) { // the usual request id: as it is
			return append(append(append(append(b, `,"`...), name...), `":`...), v...), true
		}
		if !jsonscan.Valid(v) {
			return b, false
		}
		b = append(append(append(b, `,"`...), name...), `":`...)
		return appendCompactHTML(b, v), true
	}
	if d := l.DurationMs; d != 0 && (math.Abs(d) < 1e-6 || math.Abs(d) >= 1e21) || math.IsNaN(d) || math.IsInf(d, 0) {
		return b, false
	}
	// hexa writes raw as hexadecimal digits, when s (which it stands
	// for) is empty.
	hexa := func(b []byte, name, s string, raw []byte) []byte {
		if s != "" || raw == nil {
			return str(b, name, s, raw == nil)
		}
		b = append(append(append(b, `,"`...), name...), `":"`...)
		return append(hex.AppendEncode(b, raw), '"')
	}
	if l.Time == "" && !l.at.IsZero() {
		b = append(l.at.UTC().AppendFormat(append(b, `{"time":"`...), time.RFC3339Nano), '"')
	} else {
		b = jsonenc.AppendString(append(b, `{"time":`...), l.Time, true)
	}
	if l.callID != nil {
		b = hexa(b, "call_id", l.CallID, l.callID[:])
	} else {
		b = str(b, "call_id", l.CallID, true)
	}
	if l.traceID != nil {
		b = hexa(b, "trace_id", l.TraceID, l.traceID[:])
	} else {
		b = str(b, "trace_id", l.TraceID, true)
	}
	b = str(b, "transport", l.Transport, false)
	b = str(b, "session", l.Session, true)
	if l.Client != nil { // the go-sdk's type, whose fields are its own
		if client == nil {
			return b, false
		}
		b = append(append(b, `,"client":`...), client...)
	}
	b = str(b, "protocol", l.Protocol, true)
	var ok bool
	if b, ok = raw(b, "request_id", l.RequestID); !ok {
		return b, false
	}
	b = str(b, "kind", l.Kind, false)
	b = str(b, "tool", l.Tool, false)
	b = str(b, "target", l.Target, true)
	b = str(b, "method", l.Method, true)
	b = str(b, "socket", l.Socket, true)
	if l.sum != nil && l.ArgsSHA256 == "" {
		b = hexa(b, "args_sha256", "", l.sum[:])
	} else {
		b = str(b, "args_sha256", l.ArgsSHA256, false)
	}
	if b, ok = raw(b, "args", l.Args); !ok {
		return b, false
	}
	b = str(b, "outcome", l.Outcome, false)
	if l.Code != nil {
		b = strconv.AppendInt(append(b, `,"code":`...), *l.Code, 10)
	}
	b = strconv.AppendFloat(append(b, `,"duration_ms":`...), l.DurationMs, 'f', -1, 64)
	b = strconv.AppendInt(append(b, `,"result_bytes":`...), int64(l.ResultBytes), 10)
	return append(b, '}'), true
}

// plainNumber reports whether v is a JSON integer as compact JSON writes
// it: an optional minus, then digits without a leading zero.
func plainNumber(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 1 && v[0] == '0' {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// appendCompactHTML appends the valid JSON v without white space and with
// '<', '>', '&', U+2028 and U+2029 escaped, as json.Marshal writes a
// json.RawMessage.
func appendCompactHTML(b, v []byte) []byte {
	buf := bytes.NewBuffer(b)
	json.HTMLEscape(buf, jsonscan.Compact(v))
	return buf.Bytes()
}

// canonicalJSON re-encodes a JSON value with object keys sorted and no
// spaces, numbers as written, so that equal arguments hash equally however
// the client spaced or ordered them: what encoding/json writes of the value
// decoded (with UseNumber) into an any, without HTML escaping; b itself
// when it is not JSON.
func canonicalJSON(b json.RawMessage) []byte {
	return appendCanonicalJSON(make([]byte, 0, len(b)), b)
}

// appendCanonicalJSON appends canonicalJSON(b) to dst.
func appendCanonicalJSON(dst []byte, b json.RawMessage) []byte {
	// An object's Members checks it whole, white space around it allowed;
	// other values are checked first.
	v := b[jsonscan.SkipSpace(b, 0):]
	if len(v) > 0 && v[0] == '{' || jsonscan.Valid(v) {
		if out, ok := appendCanonical(dst, bytes.TrimRight(v, " \t\n\r"), 0); ok {
			return out
		}
	}
	return append(dst, canonicalSlow(b)...)
}

// canonicalSlow is canonicalJSON through encoding/json: for what
// appendCanonical leaves to it (a member name twice in one object, which
// the decoder resolves, the last one winning; nesting deeper than
// canonicalDepth; not JSON).
func canonicalSlow(b json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return b
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

type member struct{ key, value []byte }

// canonicalDepth is the deepest nesting appendCanonical walks: each level
// scans its value again (Members, Skip), so its work is the size times the
// depth; deeper arguments go to encoding/json, which reads them once.
const canonicalDepth = 16

// appendCanonical appends the canonical form of v, at nesting depth, or
// reports false. v is one JSON value and nothing else; it has been checked
// (by Members or Skip, as the object or array it is in was walked, or by
// Valid) but for an object, which Members checks as it walks it.
func appendCanonical(b, v []byte, depth int) ([]byte, bool) {
	if depth >= canonicalDepth && (v[0] == '{' || v[0] == '[') {
		return b, false
	}
	switch v[0] {
	case '{':
		var few [8]member // most objects have no more members
		ms := few[:0]
		ok := true
		if err := jsonscan.Members(v, func(key, value []byte) bool {
			if !clean(key) {
				s, err := jsonscan.Key(key)
				if err != nil {
					ok = false
					return false
				}
				key = []byte(s)
			}
			ms = append(ms, member{key, value})
			return true
		}); err != nil || !ok {
			return b, false
		}
		slices.SortFunc(ms, func(x, y member) int { return bytes.Compare(x.key, y.key) })
		b = append(b, '{')
		for i, m := range ms {
			if i > 0 {
				if bytes.Equal(ms[i-1].key, m.key) {
					return b, false // the decoder keeps the last
				}
				b = append(b, ',')
			}
			b = append(jsonenc.AppendString(b, string(m.key), false), ':')
			if b, ok = appendCanonical(b, m.value, depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case '[':
		b = append(b, '[')
		i := jsonscan.SkipSpace(v, 1)
		for n := 0; i < len(v) && v[i] != ']'; n++ {
			end, err := jsonscan.Skip(v, i)
			if err != nil {
				return b, false
			}
			if n > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendCanonical(b, v[i:end], depth+1); !ok {
				return b, false
			}
			i = jsonscan.SkipSpace(v, end)
			if i < len(v) && v[i] == ',' {
				i = jsonscan.SkipSpace(v, i+1)
			}
		}
		return append(b, ']'), true
	case '"':
		s := v[1 : len(v)-1]
		if !clean(s) {
			var t string
			if json.Unmarshal(v, &t) != nil {
				return b, false
			}
			s = []byte(t)
		}
		return jsonenc.AppendString(b, string(s), false), true
	default: // numbers as written (UseNumber), true, false, null
		return append(b, v...), true
	}
}

// clean reports whether the text of a raw JSON string is what it decodes
// to: no escapes, and UTF-8.
func clean(s []byte) bool {
	for _, c := range s {
		if c == '\\' || c >= 0x80 {
			return bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s)
		}
	}
	return true
}
